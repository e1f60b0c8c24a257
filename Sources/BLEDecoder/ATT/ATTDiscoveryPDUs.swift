import BLECore

/// The discovery PDUs: Find Information, Find By Type Value, Read By Type and Read By Group
/// Type, requests and responses. Responses list declarations, which the learning step adds to
/// the server's attribute table.
enum ATTDiscoveryPDUs {
  /// Start and end handle of a range request (Find Information, and the start of the others).
  static func rangeRequest(_ r: inout ByteReader, _ pdu: inout ATTPDU, _ frame: inout DissectedFrame) throws(DecodeError) {
    let start = try r.readUInt16LE()
    let end = try r.readUInt16LE()
    pdu.opened.startHandle = start
    pdu.opened.endHandle = end
    frame.fields.hex("start_handle", "Start", start, width: 4)
    frame.fields.hex("end_handle", "End", end, width: 4)
    frame.att?.operation = .range(start: start, end: end, type: nil, value: nil)
  }

  static func findInformationResponse(_ r: inout ByteReader, _ pdu: inout ATTPDU, _ frame: inout DissectedFrame) throws(DecodeError) {
    let format = try r.readUInt8()
    frame.fields.code("format", "Format", format, width: 2, name: format == 1 ? "16-bit UUIDs" : (format == 2 ? "128-bit UUIDs" : nil))
    guard format == 1 || format == 2 else {
      throw DecodeError(.invalidValue(field: "format", value: UInt64(format)), layer: .att, offset: r.offset - 1)
    }
    frame.fields.beginArray("information", "Information")
    var count = 0
    var listed = ListedHandles(pdu.answered)
    defer { listed.diagnose(&frame) }
    while !r.isAtEnd {
      let handle = try r.readUInt16LE()
      listed.add(handle)
      let uuid = format == 1 ? try r.readUUID16() : try r.readUUID128()
      frame.fields.beginObject("", "Attribute")
      frame.fields.hex("handle", "Handle", handle, width: 4)
      frame.fields.add("uuid", "Type", .uuid(uuid, name: GATTDatabase.name(uuid)))
      frame.fields.end()
      pdu.learned.append(.type(uuid, handle: handle))
      count += 1
    }
    frame.fields.end()
    frame.att?.operation = .found(count: count, noun: .attributes)
  }

  static func findByTypeValueRequest(_ r: inout ByteReader, _ pdu: inout ATTPDU, _ frame: inout DissectedFrame) throws(DecodeError) {
    try rangeRequest(&r, &pdu, &frame)
    let type = try r.readUUID16()
    pdu.opened.type = type
    frame.fields.add("type", "Type", .uuid(type, name: GATTDatabase.name(type)))
    let value = r.readRemaining()
    pdu.opened.findValue = Array(value)
    if let uuid = ATTLayer.uuidValue(value) {
      frame.fields.add("value", "Value", .uuid(uuid, name: GATTDatabase.name(uuid)))
      frame.att?.operation = .range(start: pdu.opened.startHandle, end: pdu.opened.endHandle, type: type, value: uuid)
    } else {
      frame.fields.bytes("value", "Value", value)
      frame.att?.operation = .range(start: pdu.opened.startHandle, end: pdu.opened.endHandle, type: type, value: nil)
    }
  }

  /// Found handle ranges; in primary service discovery by UUID, each is a service of that UUID.
  static func findByTypeValueResponse(_ r: inout ByteReader, _ pdu: inout ATTPDU, _ frame: inout DissectedFrame) throws(DecodeError) {
    frame.fields.beginArray("handles", "Found")
    let request = pdu.answered
    let serviceUUID = request.flatMap { [0x2800, 0x2801].contains($0.type?.uuid16 ?? 0) ? ByteView.pinning($0.findValue) { ATTLayer.uuidValue($0) } : nil }
    var listed = ListedHandles(request)
    defer { listed.diagnose(&frame) }
    while !r.isAtEnd {
      let found = try r.readUInt16LE()
      let end = try r.readUInt16LE()
      listed.add(found)
      frame.fields.beginObject("", "Range")
      frame.fields.hex("handle", "Found", found, width: 4)
      frame.fields.hex("end_handle", "Group end", end, width: 4)
      frame.fields.end()
      if let serviceUUID { pdu.learned.append(.service(start: found, end: end, uuid: serviceUUID, primary: request?.type?.uuid16 == 0x2800)) }
    }
    frame.fields.end()
  }

  /// Read By Type and Read By Group Type Requests: a range and an attribute type.
  static func readByTypeRequest(_ r: inout ByteReader, _ pdu: inout ATTPDU, _ frame: inout DissectedFrame) throws(DecodeError) {
    try rangeRequest(&r, &pdu, &frame)
    let type = r.remaining == 16 ? try r.readUUID128() : try r.readUUID16()
    pdu.opened.type = type
    frame.fields.add("type", "Type", .uuid(type, name: GATTDatabase.name(type)))
    frame.att?.operation = .range(start: pdu.opened.startHandle, end: pdu.opened.endHandle, type: type, value: nil)
  }

  static func readByGroupTypeResponse(_ r: inout ByteReader, _ pdu: inout ATTPDU, _ frame: inout DissectedFrame) throws(DecodeError) {
    let length = Int(try r.readUInt8())
    frame.fields.addVerbose("length", "Length", .unsigned(UInt64(length), .decimal))
    guard length == 6 || length == 20 else {
      throw DecodeError(.invalidValue(field: "attribute data length", value: UInt64(length)), layer: .att, offset: r.offset - 1)
    }
    let requestType = pdu.answered?.type?.uuid16
    let isServiceDiscovery = requestType == 0x2800 || requestType == 0x2801 || pdu.answered == nil
    frame.fields.beginArray("services", "Services")
    var count = 0
    var listed = ListedHandles(pdu.answered)
    defer { listed.diagnose(&frame) }
    while !r.isAtEnd {
      var item = try r.readReader(count: length)
      let start = try item.readUInt16LE()
      listed.add(start)
      let end = try item.readUInt16LE()
      let uuid = length == 6 ? try item.readUUID16() : try item.readUUID128()
      frame.fields.beginObject("", "Service")
      frame.fields.hex("handle", "Start", start, width: 4)
      frame.fields.hex("end_handle", "End", end, width: 4)
      frame.fields.add("uuid", "UUID", .uuid(uuid, name: GATTDatabase.name(uuid)))
      frame.fields.end()
      if isServiceDiscovery { pdu.learned.append(.service(start: start, end: end, uuid: uuid, primary: requestType != 0x2801)) }
      count += 1
    }
    frame.fields.end()
    frame.att?.operation = .found(count: count, noun: .services)
  }

  /// Read By Type Response: characteristic declarations, include declarations, or values of
  /// the requested type (decoded when the type has a decoder).
  static func readByTypeResponse(_ r: inout ByteReader, _ pdu: inout ATTPDU, _ registry: DecoderRegistry, _ frame: inout DissectedFrame) throws(DecodeError) {
    let length = Int(try r.readUInt8())
    frame.fields.addVerbose("length", "Length", .unsigned(UInt64(length), .decimal))
    guard length >= 2 else {
      throw DecodeError(.invalidValue(field: "attribute data length", value: UInt64(length)), layer: .att, offset: r.offset - 1)
    }
    let type = pdu.answered?.type
    var kind = type?.uuid16
    if type == nil, (length == 7 || length == 21), looksLikeCharacteristicDeclarations(r, length: length) {
      // The request was not captured (the capture starts mid-discovery, or lost it), but every
      // entry is a characteristic declaration whose value handle follows it: learn them.
      kind = 0x2803
      frame.diagnostics.append(Diagnostic(.attUnrequestedDiscoveryResponse, "no request for this response; its entries read as characteristic declarations"))
    }
    frame.fields.beginArray("attributes", kind == 0x2803 ? "Characteristics" : (kind == 0x2802 ? "Includes" : "Attributes"))
    var count = 0
    var listed = ListedHandles(pdu.answered)
    defer { listed.diagnose(&frame) }
    while !r.isAtEnd {
      var item = try r.readReader(count: length)
      let handle = try item.readUInt16LE()
      listed.add(handle)
      frame.fields.beginObject("", kind == 0x2803 ? "Characteristic" : "Attribute")
      frame.fields.addVerbose("handle", "Handle", .unsigned(UInt64(handle), .hex(4)))
      switch kind {
      case 0x2803:
        let properties = try item.readUInt8()
        let valueHandle = try item.readUInt16LE()
        let uuid = item.remaining == 16 ? try item.readUUID128() : try item.readUUID16()
        frame.fields.add("properties", "Properties", .codeText(UInt64(properties), width: 2, name: ATTLayer.propertiesText(properties)))
        frame.fields.hex("value_handle", "Value handle", valueHandle, width: 4)
        frame.fields.add("uuid", "UUID", .uuid(uuid, name: GATTDatabase.name(uuid)))
        pdu.learned.append(.characteristic(declaration: handle, valueHandle: valueHandle, uuid: uuid, properties: properties))
      case 0x2802:
        let start = try item.readUInt16LE()
        let end = try item.readUInt16LE()
        frame.fields.hex("included_start", "Included start", start, width: 4)
        frame.fields.hex("included_end", "Included end", end, width: 4)
        if item.remaining == 2 {
          let uuid = try item.readUUID16()
          frame.fields.add("uuid", "UUID", .uuid(uuid, name: GATTDatabase.name(uuid)))
          pdu.learned.append(.service(start: start, end: end, uuid: uuid, primary: false))
        } else {
          // A 128-bit included service: the client reads its UUID at `start` next.
          pdu.learned.append(.includedServiceAwaited(start: start, end: end))
        }
        pdu.learned.append(.type(BluetoothUUID(uuid16: 0x2802), handle: handle))
      default:
        let value = item.readRemaining()
        frame.fields.verboseBytes("value", "Value", value)
        if let type, let decoder = registry.index(for: type) {
          pdu.learned.append(.type(type, handle: handle))
          GATTDescription.describeTyped(handle, value: value, type: type, decoder: decoder, registry, &frame)
        }
      }
      frame.fields.end()
      count += 1
    }
    frame.fields.end()
    if kind == 0x2803 || kind == 0x2802 || type == nil {
      frame.att?.operation = .found(count: count, noun: kind == 0x2803 ? .characteristics : .attributes)
    }
  }

  /// Whether every `length`-byte entry left in `reader` is `handle, properties, handle + 1, UUID`.
  static func looksLikeCharacteristicDeclarations(_ reader: ByteReader, length: Int) -> Bool {
    guard reader.remaining > 0, reader.remaining % length == 0 else { return false }
    var copy = reader
    while !copy.isAtEnd {
      guard var entry = try? copy.readReader(count: length), let handle = try? entry.readUInt16LE(),
        (try? entry.readUInt8()) != nil, let valueHandle = try? entry.readUInt16LE(), valueHandle == handle &+ 1
      else { return false }
    }
    return true
  }
}

/// The handles a discovery response lists, against its request's range and each other: a
/// server lists them ascending, inside the range asked for (Core v5.4 Vol 3 Part F §3.4.3.2,
/// §3.4.3.4, §3.4.4.2, §3.4.4.10). Said once per response, with the first offender.
struct ListedHandles {
  var range: ClosedRange<UInt16>?
  var previous: UInt16?
  var outside: UInt16?
  var outOfOrder: (previous: UInt16, next: UInt16)?

  init(_ request: PendingRequest?) {
    if let request, request.startHandle <= request.endHandle { range = request.startHandle...request.endHandle }
  }

  mutating func add(_ handle: UInt16) {
    if outside == nil, let range, !range.contains(handle) { outside = handle }
    if outOfOrder == nil, let previous, handle <= previous { outOfOrder = (previous, handle) }
    previous = handle
  }

  func diagnose(_ frame: inout DissectedFrame) {
    if let outside, let range {
      frame.diagnostics.append(Diagnostic(.attDiscoveryOutsideRange,
        "handle \(Hex.prefixed(UInt64(outside), width: 4)) is outside the requested range \(Hex.prefixed(UInt64(range.lowerBound), width: 4))–\(Hex.prefixed(UInt64(range.upperBound), width: 4))"))
    }
    if let outOfOrder {
      frame.diagnostics.append(Diagnostic(.attDiscoveryOutOfOrder,
        "handle \(Hex.prefixed(UInt64(outOfOrder.next), width: 4)) follows \(Hex.prefixed(UInt64(outOfOrder.previous), width: 4)): not ascending"))
    }
  }
}
