import BLECore

/// Facts about the link an ATT PDU travelled on.
struct ATTLinkContext: Sendable {
  var frameNumber: Int
  var timestamp: Int64
  var direction: Direction
}

/// ATT PDUs: fields, request/response pairing, MTU, long values, and the GATT meaning of
/// every handle (learned from discovery into the server's `GATTDatabase`).
///
/// The corresponding specification is Core Vol 3, Part F (ATT) and Part G (GATT).
enum ATTLayer {
  static func opName(_ opcode: UInt8) -> StaticString {
    AssignedNumbers.attOpcodeName(opcode) ?? "Unknown PDU"
  }

  /// Whether the GATT server of a PDU is the capturing host: servers receive client PDUs
  /// (requests, commands, confirmations) and send the others.
  static func serverIsLocal(opcode: UInt8, direction: Direction) -> Bool {
    (direction == .hostToController) != ATTMethodKind(opcode: opcode).isClientToServer
  }

  static func decode(
    _ r: inout ByteReader, bearer: inout ATTBearer, database: inout GATTDatabase,
    link: ATTLinkContext, frame: inout DissectedFrame
  ) throws(DecodeError) {
    r.layer = .att
    let size = r.remaining
    let opcode = try r.readUInt8()
    let kind = ATTMethodKind(opcode: opcode)
    frame.layerLabel = "ATT"
    frame.title = opName(opcode)
    frame.deepestLayer = .att

    frame.fields.beginObject("att", "ATT", inline: true)
    let attDepth = frame.fields.depth
    // A PDU about one attribute gets its `gatt` and `decoded` groups at the top level, after `att`.
    var single: (handle: UInt16, value: ByteView?, operation: GATTOperation)?
    // A reassembled long value (owned: it is not in the record's bytes).
    var longValue: [UInt8]?
    frame.fields.addVerbose("opcode", "Opcode", .unsigned(UInt64(opcode), .hex(2)))
    frame.fields.addVerbose("op", "PDU", .staticText(frame.title))
    if size > bearer.mtu {
      frame.diagnostics.append(Diagnostic(.warning, .att, "PDU of \(size) bytes exceeds ATT_MTU \(bearer.mtu)"))
    }

    // Pairing: responses and confirmations answer the PDU pending in the other direction.
    var request: PendingRequest?
    switch kind {
    case .response:
      request = bearer.pending[link.direction.opposite]
      bearer.pending[link.direction.opposite] = nil
      if let pending = request {
        let answers = opcode == 0x01 || opcode == pending.opcode &+ 1
        if !answers {
          frame.diagnostics.append(Diagnostic(.warning, .att, "\(opName(opcode)) does not answer the pending \(opName(pending.opcode)) (#\(pending.frame))"))
        }
        frame.fields.uint("request_frame", "Answers frame", pending.frame)
        latency(from: pending, link, &frame)
      } else {
        frame.diagnostics.append(Diagnostic(.warning, .att, "\(opName(opcode)) without a pending request"))
      }
    case .confirmation:
      request = bearer.pendingIndication[link.direction.opposite]
      bearer.pendingIndication[link.direction.opposite] = nil
      if let pending = request {
        frame.fields.uint("request_frame", "Confirms frame", pending.frame)
        latency(from: pending, link, &frame)
        if let handle = pending.handle { frame.fields.addVerbose("handle", "Handle", .unsigned(UInt64(handle), .hex(4))) }
      } else {
        frame.diagnostics.append(Diagnostic(.warning, .att, "Handle Value Confirmation without a pending indication"))
      }
    case .request:
      if let pending = bearer.pending[link.direction] {
        frame.diagnostics.append(Diagnostic(.warning, .att, "request sent while \(opName(pending.opcode)) (#\(pending.frame)) is still pending"))
      }
    default:
      break
    }

    var newRequest = PendingRequest(opcode: opcode, frame: link.frameNumber, timestamp: link.timestamp)

    switch opcode {
    case 0x01:  // Error Response
      let requestOpcode = try r.readUInt8()
      let handle = try r.readUInt16LE()
      let error = try r.readUInt8()
      frame.fields.code("request_opcode", "Request", requestOpcode, width: 2, name: AssignedNumbers.attOpcodeName(requestOpcode))
      frame.fields.addVerbose("handle", "Handle", .unsigned(UInt64(handle), .hex(4)))
      frame.fields.code("error", "Error", error, width: 2, name: AssignedNumbers.attErrorName(error))
      if let pending = request, pending.opcode != requestOpcode {
        frame.diagnostics.append(Diagnostic(.warning, .att, "error names \(opName(requestOpcode)) but the pending request is \(opName(pending.opcode))"))
      }
      frame.attributeHandles.append(handle)
      frame.summaryParts.append(.text(opName(requestOpcode)))
      frame.summaryParts.append(.text(" "))
      frame.summaryParts.append(.hex(UInt64(handle), width: 4))
      frame.summaryParts.append(.text(": "))
      frame.summaryParts.append(.text(AssignedNumbers.attErrorName(error) ?? "error"))
      // A long read ends with Attribute Not Long / Invalid Offset: the value is complete.
      if let pending = request, pending.opcode == 0x0C, let long = bearer.longRead[link.direction.opposite], long.handle == pending.handle {
        bearer.longRead[link.direction.opposite] = nil
        longValue = completeLongRead(long, &frame)
        single = (long.handle, nil, .read)
      }
    case 0x02, 0x03:  // Exchange MTU
      let mtu = try r.readUInt16LE()
      frame.fields.uint(opcode == 0x02 ? "client_mtu" : "server_mtu", opcode == 0x02 ? "Client RX MTU" : "Server RX MTU", mtu)
      frame.summaryParts.append(.text(opcode == 0x02 ? "client MTU " : "server MTU "))
      frame.summaryParts.append(.number(Int(mtu)))
      if opcode == 0x02 {
        bearer.clientMTU = mtu
      } else {
        let client = bearer.clientMTU ?? 23
        bearer.mtu = Int(max(23, min(client, mtu)))
        frame.fields.uint("mtu", "ATT_MTU", bearer.mtu)
        frame.summaryParts.append(.text(", ATT_MTU "))
        frame.summaryParts.append(.number(bearer.mtu))
      }
    case 0x04:  // Find Information Request
      try range(&r, &frame, &newRequest)
    case 0x05:  // Find Information Response
      let format = try r.readUInt8()
      frame.fields.code("format", "Format", format, width: 2, name: format == 1 ? "16-bit UUIDs" : (format == 2 ? "128-bit UUIDs" : nil))
      guard format == 1 || format == 2 else {
        throw DecodeError(.invalidValue(field: "format", value: UInt64(format)), layer: .att, offset: r.offset - 1)
      }
      frame.fields.beginArray("information", "Information")
      var count = 0
      while !r.isAtEnd {
        let handle = try r.readUInt16LE()
        let uuid = format == 1 ? try r.readUUID16() : try r.readUUID128()
        frame.fields.beginObject("", "Attribute")
        frame.fields.hex("handle", "Handle", handle, width: 4)
        frame.fields.add("uuid", "Type", .uuid(uuid, name: GATTDatabase.name(uuid)))
        frame.fields.end()
        database.setType(uuid, of: handle)
        count += 1
      }
      frame.fields.end()
      frame.summaryParts.append(.number(count))
      frame.summaryParts.append(.text(count == 1 ? " attribute" : " attributes"))
    case 0x06:  // Find By Type Value Request
      try range(&r, &frame, &newRequest)
      let type = try r.readUUID16()
      newRequest.type = type
      frame.fields.add("type", "Type", .uuid(type, name: GATTDatabase.name(type)))
      let value = r.readRemaining()
      newRequest.findValue = Array(value)
      if let uuid = uuidValue(value) {
        frame.fields.add("value", "Value", .uuid(uuid, name: GATTDatabase.name(uuid)))
        frame.summaryParts.append(.text(", "))
        frame.summaryParts.append(.text(GATTDatabase.name(uuid) ?? "service"))
      } else {
        frame.fields.bytes("value", "Value", value)
      }
    case 0x07:  // Find By Type Value Response
      frame.fields.beginArray("handles", "Found")
      let serviceUUID = request.flatMap { [0x2800, 0x2801].contains($0.type?.uuid16 ?? 0) ? ByteView.pinning($0.findValue) { uuidValue($0) } : nil }
      while !r.isAtEnd {
        let found = try r.readUInt16LE()
        let end = try r.readUInt16LE()
        frame.fields.beginObject("", "Range")
        frame.fields.hex("handle", "Found", found, width: 4)
        frame.fields.hex("end_handle", "Group end", end, width: 4)
        frame.fields.end()
        if let serviceUUID { database.addService(start: found, end: end, uuid: serviceUUID, primary: request?.type?.uuid16 == 0x2800) }
      }
      frame.fields.end()
    case 0x08, 0x10:  // Read By Type / Read By Group Type Request
      try range(&r, &frame, &newRequest)
      let type = r.remaining == 16 ? try r.readUUID128() : try r.readUUID16()
      newRequest.type = type
      frame.fields.add("type", "Type", .uuid(type, name: GATTDatabase.name(type)))
      frame.summaryParts.append(.text(" "))
      frame.summaryParts.append(.text(GATTDatabase.name(type) ?? "type"))
    case 0x09:  // Read By Type Response
      try readByTypeResponse(&r, type: request?.type, &database, &frame)
    case 0x11:  // Read By Group Type Response
      let length = Int(try r.readUInt8())
      frame.fields.addVerbose("length", "Length", .unsigned(UInt64(length), .decimal))
      guard length == 6 || length == 20 else {
        throw DecodeError(.invalidValue(field: "attribute data length", value: UInt64(length)), layer: .att, offset: r.offset - 1)
      }
      let primary = request?.type?.uuid16 != 0x2801
      frame.fields.beginArray("services", "Services")
      var count = 0
      while !r.isAtEnd {
        var item = try r.readReader(count: length)
        let start = try item.readUInt16LE()
        let end = try item.readUInt16LE()
        let uuid = length == 6 ? try item.readUUID16() : try item.readUUID128()
        frame.fields.beginObject("", "Service")
        frame.fields.hex("handle", "Start", start, width: 4)
        frame.fields.hex("end_handle", "End", end, width: 4)
        frame.fields.add("uuid", "UUID", .uuid(uuid, name: GATTDatabase.name(uuid)))
        frame.fields.end()
        if request?.type?.uuid16 == 0x2800 || request?.type?.uuid16 == 0x2801 || request == nil {
          database.addService(start: start, end: end, uuid: uuid, primary: primary)
        }
        count += 1
      }
      frame.fields.end()
      frame.summaryParts.append(.number(count))
      frame.summaryParts.append(.text(count == 1 ? " service" : " services"))
    case 0x0A, 0x0C:  // Read Request, Read Blob Request
      let handle = try r.readUInt16LE()
      newRequest.handle = handle
      frame.fields.addVerbose("handle", "Handle", .unsigned(UInt64(handle), .hex(4)))
      if opcode == 0x0C {
        newRequest.offset = try r.readUInt16LE()
        frame.fields.uint("offset", "Offset", newRequest.offset)
      }
      if opcode == 0x0C {
        // Named here, so the offset follows the name in the summary.
        describeHandle(handle, &database, &frame)
        frame.summaryParts.append(.text(" at offset "))
        frame.summaryParts.append(.number(Int(newRequest.offset)))
      } else {
        single = (handle, nil, .read)
      }
    case 0x0B:  // Read Response
      let value = r.readRemaining()
      guard let handle = request?.handle else {
        frame.fields.verboseBytes("value", "Value", value)
        summaryBytes(value, &frame)
        break
      }
      frame.fields.addVerbose("handle", "Handle", .unsigned(UInt64(handle), .hex(4)))
      frame.fields.verboseBytes("value", "Value", value)
      if value.count == bearer.mtu - 1 {
        // The value fills the PDU: Read Blob requests may follow; decode once it is whole.
        frame.fields.verboseBytes("part", "Part", value)
        bearer.longRead[link.direction.opposite] = LongRead(handle: handle, value: Array(value), firstFrame: link.frameNumber)
        describeHandle(handle, &database, &frame)
        frame.summaryParts.append(.text(": first "))
        frame.summaryParts.append(.number(value.count))
        frame.summaryParts.append(.text(" bytes of a long value"))
      } else {
        single = (handle, value, .read)
      }
    case 0x0D:  // Read Blob Response
      let part = r.readRemaining()
      guard let pending = request, let handle = pending.handle else {
        frame.fields.verboseBytes("value", "Value", part)
        frame.fields.verboseBytes("part", "Part", part)
        summaryBytes(part, &frame)
        break
      }
      frame.fields.addVerbose("handle", "Handle", .unsigned(UInt64(handle), .hex(4)))
      frame.fields.uint("offset", "Offset", pending.offset)
      var long = bearer.longRead[link.direction.opposite] ?? LongRead(handle: handle, value: [], firstFrame: link.frameNumber)
      if long.handle != handle || long.value.count != Int(pending.offset) {
        frame.diagnostics.append(Diagnostic(.note, .att, "Read Blob at offset \(pending.offset) does not continue a read of this value"))
        long = LongRead(handle: handle, value: [UInt8](repeating: 0, count: Int(pending.offset)), firstFrame: link.frameNumber)
      }
      long.value.append(contentsOf: part)
      if part.count == bearer.mtu - 1 {
        frame.fields.verboseBytes("value", "Value", part)
        frame.fields.verboseBytes("part", "Part", part)
        bearer.longRead[link.direction.opposite] = long
        describeHandle(handle, &database, &frame)
        frame.summaryParts.append(.text(": "))
        frame.summaryParts.append(.number(long.value.count))
        frame.summaryParts.append(.text(" bytes so far"))
      } else {
        bearer.longRead[link.direction.opposite] = nil
        frame.fields.verboseBytes("part", "Part", part)
        longValue = completeLongRead(long, &frame)
        single = (long.handle, nil, .read)
      }
    case 0x0E, 0x20:  // Read Multiple (Variable) Request
      frame.fields.beginArray("handles", "Handles")
      while !r.isAtEnd {
        let handle = try r.readUInt16LE()
        newRequest.handles.append(handle)
        frame.fields.add("handle", "Handle", .unsigned(UInt64(handle), .hex(4)))
        frame.attributeHandles.append(handle)
      }
      frame.fields.end()
      frame.summaryParts.append(.number(newRequest.handles.count))
      frame.summaryParts.append(.text(" handles"))
    case 0x0F:  // Read Multiple Response: values back to back, lengths only known for fixed formats
      let values = r.readRemaining()
      frame.fields.verboseBytes("value", "Values", values)
      readMultiple(values, handles: request?.handles ?? [], &database, &frame)
    case 0x21:  // Read Multiple Variable Response: length + value per handle
      frame.fields.beginArray("values", "Values")
      var index = 0
      let handles = request?.handles ?? []
      while !r.isAtEnd {
        let length = Int(try r.readUInt16LE())
        let value = try r.readBytes(count: min(length, r.remaining))
        frame.fields.beginObject("", "Value")
        if index < handles.count {
          frame.fields.hex("handle", "Handle", handles[index], width: 4)
          if index > 0 { frame.summaryParts.append(.text("; ")) }
          describeValue(handle: handles[index], value: value, operation: .read, &database, &frame)
        }
        frame.fields.verboseBytes("value", "Value", value)
        frame.fields.end()
        index += 1
      }
      frame.fields.end()
    case 0x12, 0x52, 0xD2:  // Write Request, Write Command, Signed Write Command
      let handle = try r.readUInt16LE()
      newRequest.handle = handle
      frame.fields.addVerbose("handle", "Handle", .unsigned(UInt64(handle), .hex(4)))
      var value = r.readRemaining()
      if opcode == 0xD2 {
        guard value.count >= 12 else {
          throw DecodeError(.truncated(needed: 12, available: value.count), layer: .att, offset: r.offset)
        }
        frame.fields.bytes("signature", "Signature", value.suffix(12))
        value = value.dropLast(12)
      }
      frame.fields.verboseBytes("value", "Value", value)
      single = (handle, value, opcode == 0x12 ? .write : .writeWithoutResponse)
    case 0x13:  // Write Response
      if let handle = request?.handle {
        frame.fields.addVerbose("handle", "Handle", .unsigned(UInt64(handle), .hex(4)))
        single = (handle, nil, .write)
      }
    case 0x16, 0x17:  // Prepare Write Request / Response
      let handle = try r.readUInt16LE()
      let offset = try r.readUInt16LE()
      let part = r.readRemaining()
      frame.fields.addVerbose("handle", "Handle", .unsigned(UInt64(handle), .hex(4)))
      frame.fields.uint("offset", "Offset", offset)
      frame.fields.verboseBytes("value", "Part", part)
      describeHandle(handle, &database, &frame)
      frame.summaryParts.append(.text(", "))
      frame.summaryParts.append(.number(part.count))
      frame.summaryParts.append(.text(" bytes at offset "))
      frame.summaryParts.append(.number(Int(offset)))
      if opcode == 0x16 {
        newRequest.handle = handle
        newRequest.offset = offset
        let queued = bearer.prepared[link.direction].append(PreparedWrite(handle: handle, offset: offset, part: Array(part), frame: link.frameNumber))
        if !queued, bearer.prepared[link.direction].dropped == 1 {
          frame.diagnostics.append(Diagnostic(.warning, .att, "prepare queue holds \(PrepareQueue.maximumParts) parts or \(PrepareQueue.maximumBytes) bytes: this part and later ones are counted, not kept"))
        }
      } else if let queued = bearer.prepared[link.direction.opposite].latest, queued.handle != handle || queued.offset != offset || !queued.part.elementsEqual(part) {
        frame.diagnostics.append(Diagnostic(.warning, .att, "Prepare Write Response differs from the request (#\(queued.frame))"))
      }
    case 0x18:  // Execute Write Request
      let flags = try r.readUInt8()
      frame.fields.code("flags", "Flags", flags, width: 2, name: flags == 0 ? "cancel all prepared writes" : (flags == 1 ? "write all prepared values" : nil))
      let queue = bearer.prepared[link.direction]
      bearer.prepared[link.direction] = PrepareQueue()
      if flags == 0 {
        frame.summaryParts.append(.text("cancel "))
        frame.summaryParts.append(.number(queue.count))
        frame.summaryParts.append(.text(queue.count == 1 ? " prepared write" : " prepared writes"))
        if let first = queue.parts.first {
          frame.diagnostics.append(Diagnostic(.note, .att, "prepared write queue of \(queue.count) part\(queue.count == 1 ? "" : "s") cancelled (from #\(first.frame))"))
        }
      } else {
        if queue.dropped > 0 {
          frame.diagnostics.append(Diagnostic(.warning, .att, "\(queue.dropped) prepared part\(queue.dropped == 1 ? "" : "s") beyond the queue's limit not included in the written values"))
        }
        executePreparedWrites(queue.parts, &database, &frame)
      }
    case 0x19:  // Execute Write Response
      break
    case 0x1B, 0x1D:  // Handle Value Notification / Indication
      let handle = try r.readUInt16LE()
      let value = r.readRemaining()
      frame.fields.addVerbose("handle", "Handle", .unsigned(UInt64(handle), .hex(4)))
      frame.fields.verboseBytes("value", "Value", value)
      if opcode == 0x1D {
        if let earlier = bearer.pendingIndication[link.direction] {
          frame.diagnostics.append(Diagnostic(.warning, .att, "indication sent while #\(earlier.frame) is not confirmed"))
        }
        newRequest.handle = handle
        bearer.pendingIndication[link.direction] = newRequest
      }
      single = (handle, value, opcode == 0x1B ? .notification : .indication)
    case 0x1E:  // Handle Value Confirmation
      if let handle = request?.handle { single = (handle, nil, .indication) }
    case 0x23:  // Multiple Handle Value Notification
      frame.fields.beginArray("values", "Values")
      var first = true
      while !r.isAtEnd {
        let handle = try r.readUInt16LE()
        let length = Int(try r.readUInt16LE())
        let value = try r.readBytes(count: length)
        frame.fields.beginObject("", "Value")
        frame.fields.hex("handle", "Handle", handle, width: 4)
        frame.fields.verboseBytes("value", "Value", value)
        if !first { frame.summaryParts.append(.text("; ")) }
        describeValue(handle: handle, value: value, operation: .notification, &database, &frame)
        frame.fields.end()
        first = false
      }
      frame.fields.end()
    default:
      frame.fields.bytes("data", "Data", r.readRemaining())
    }

    if kind == .request {
      bearer.pending[link.direction] = newRequest
    }
    frame.fields.close(toDepth: attDepth - 1)
    if let single {
      if let longValue {
        ByteView.pinning(longValue) { value in
          describeSingle(handle: single.handle, value: value, operation: single.operation, &database, &frame)
        }
      } else if let value = single.value {
        describeSingle(handle: single.handle, value: value, operation: single.operation, &database, &frame)
      } else {
        describeHandle(single.handle, &database, &frame)
      }
    }
  }

  /// The value of the one attribute a PDU is about, described after `att`.
  static func describeSingle(handle: UInt16, value: ByteView, operation: GATTOperation, _ database: inout GATTDatabase, _ frame: inout DissectedFrame) {
    let characteristic = describeValue(handle: handle, value: value, operation: operation, &database, &frame)
    // Service Changed: the server's attributes in the range are no longer known.
    if operation == .indication, characteristic == 0x2A05, value.count == 4 {
      let start = UInt16(value[value.startIndex]) | UInt16(value[value.startIndex + 1]) << 8
      let end = UInt16(value[value.startIndex + 2]) | UInt16(value[value.startIndex + 3]) << 8
      database.invalidate(start, end)
      frame.diagnostics.append(Diagnostic(.note, .gatt, "Service Changed: handles \(Hex.prefixed(UInt64(start), width: 4))–\(Hex.prefixed(UInt64(end), width: 4)) forgotten until rediscovered"))
    }
  }

  /// The time from a request (or indication) to what answers it. Timestamps come from the file:
  /// their difference is clamped, and one that runs backwards is said, not shown as a latency.
  static func latency(from pending: PendingRequest, _ link: ATTLinkContext, _ frame: inout DissectedFrame) {
    let elapsed = Timestamp.elapsed(from: pending.timestamp, to: link.timestamp)
    if elapsed < 0 {
      frame.diagnostics.append(Diagnostic(.warning, .att, "timestamp precedes that of frame #\(pending.frame): no latency"))
      return
    }
    frame.fields.real("latency_ms", "Latency", Double(elapsed) / 1000, places: 3, unit: "ms")
  }

  /// Start and end handle of a range request.
  static func range(_ r: inout ByteReader, _ frame: inout DissectedFrame, _ request: inout PendingRequest) throws(DecodeError) {
    request.startHandle = try r.readUInt16LE()
    request.endHandle = try r.readUInt16LE()
    frame.fields.hex("start_handle", "Start", request.startHandle, width: 4)
    frame.fields.hex("end_handle", "End", request.endHandle, width: 4)
    if frame.summaryParts.isEmpty { frame.summarySeparator = " " }
    frame.summaryParts.append(.hex(UInt64(request.startHandle), width: 4))
    frame.summaryParts.append(.text("–"))
    frame.summaryParts.append(.hex(UInt64(request.endHandle), width: 4))
  }

  /// A UUID spelled as an attribute value (2 or 16 bytes, little-endian).
  static func uuidValue(_ bytes: ByteView) -> BluetoothUUID? {
    var reader = ByteReader(bytes, layer: .att)
    switch bytes.count {
    case 2: return try? reader.readUUID16()
    case 16: return try? reader.readUUID128()
    default: return nil
    }
  }

  static func readByTypeResponse(_ r: inout ByteReader, type: BluetoothUUID?, _ database: inout GATTDatabase, _ frame: inout DissectedFrame) throws(DecodeError) {
    let length = Int(try r.readUInt8())
    frame.fields.addVerbose("length", "Length", .unsigned(UInt64(length), .decimal))
    guard length >= 2 else {
      throw DecodeError(.invalidValue(field: "attribute data length", value: UInt64(length)), layer: .att, offset: r.offset - 1)
    }
    var kind = type?.uuid16
    if type == nil, (length == 7 || length == 21), looksLikeCharacteristicDeclarations(r, length: length) {
      // The request was not captured (the capture starts mid-discovery, or lost it), but every
      // entry is a characteristic declaration whose value handle follows it: learn them.
      kind = 0x2803
      frame.diagnostics.append(Diagnostic(.note, .att, "no request for this response; its entries read as characteristic declarations"))
    }
    frame.fields.beginArray("attributes", kind == 0x2803 ? "Characteristics" : (kind == 0x2802 ? "Includes" : "Attributes"))
    var count = 0
    while !r.isAtEnd {
      var item = try r.readReader(count: length)
      let handle = try item.readUInt16LE()
      frame.fields.beginObject("", kind == 0x2803 ? "Characteristic" : "Attribute")
      frame.fields.addVerbose("handle", "Handle", .unsigned(UInt64(handle), .hex(4)))
      switch kind {
      case 0x2803:
        let properties = try item.readUInt8()
        let valueHandle = try item.readUInt16LE()
        let uuid = item.remaining == 16 ? try item.readUUID128() : try item.readUUID16()
        frame.fields.add("properties", "Properties", .codeText(UInt64(properties), width: 2, name: propertiesText(properties)))
        frame.fields.hex("value_handle", "Value handle", valueHandle, width: 4)
        frame.fields.add("uuid", "UUID", .uuid(uuid, name: GATTDatabase.name(uuid)))
        database.addCharacteristic(declaration: handle, valueHandle: valueHandle, uuid: uuid, properties: properties)
      case 0x2802:
        let start = try item.readUInt16LE()
        let end = try item.readUInt16LE()
        frame.fields.hex("included_start", "Included start", start, width: 4)
        frame.fields.hex("included_end", "Included end", end, width: 4)
        if item.remaining == 2 {
          let uuid = try item.readUUID16()
          frame.fields.add("uuid", "UUID", .uuid(uuid, name: GATTDatabase.name(uuid)))
          database.addService(start: start, end: end, uuid: uuid, primary: false)
        } else {
          // A 128-bit included service: the client reads its UUID at `start` next.
          database.awaitIncludedService(start: start, end: end)
        }
        database.setType(BluetoothUUID(uuid16: 0x2802), of: handle)
      default:
        let value = item.readRemaining()
        frame.fields.verboseBytes("value", "Value", value)
        if let type, let decoder = ProfileRegistry.index(for: type) {
          database.setType(type, of: handle)
          decodeWith(decoder, value: value, context: ValueContext(operation: .read, uuid: type), name: GATTDatabase.name(type), &frame, summary: count == 0)
        }
      }
      frame.fields.end()
      count += 1
    }
    frame.fields.end()
    if kind == 0x2803 || kind == 0x2802 || type == nil {
      frame.summaryParts.append(.number(count))
      frame.summaryParts.append(.text(kind == 0x2803 ? (count == 1 ? " characteristic" : " characteristics") : (count == 1 ? " attribute" : " attributes")))
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

  static func propertiesText(_ properties: UInt8) -> String {
    let names = ["broadcast", "read", "write without response", "write", "notify", "indicate", "signed write", "extended properties"]
    return (0..<8).filter { properties & (1 << $0) != 0 }.map { names[$0] }.joined(separator: ", ")
  }

  /// Names the handle in the summary and the `gatt` group, without a value.
  @discardableResult
  static func describeHandle(_ handle: UInt16, _ database: inout GATTDatabase, _ frame: inout DissectedFrame) -> Int? {
    frame.attributeHandles.append(handle)
    // "Read Request 0x0010 Heart Rate Measurement": the handle continues the title.
    if frame.summaryParts.isEmpty { frame.summarySeparator = " " }
    frame.summaryParts.append(.hex(UInt64(handle), width: 4))
    guard let index = database.locate(handle) else { return nil }
    describeResolved(database.resolved[index], &frame)
    return index
  }

  /// The summary words, filter UUIDs and `gatt` group of a resolved handle.
  static func describeResolved(_ resolved: ResolvedHandle, _ frame: inout DissectedFrame) {
    frame.deepestLayer = .gatt
    if let name = resolved.name {
      frame.summaryParts.append(.text(" "))
      frame.summaryParts.append(.text(name))
    } else if let uuid = resolved.characteristic ?? resolved.descriptor ?? resolved.service {
      frame.summaryParts.append(.text(" "))
      frame.summaryParts.append(.string(uuid.description))
    }
    if let service = resolved.service { frame.gattUUIDs.append(service) }
    if let characteristic = resolved.characteristic { frame.gattUUIDs.append(characteristic) }
    if let descriptor = resolved.descriptor, resolved.role == .descriptor { frame.gattUUIDs.append(descriptor) }
    // JSON always has the GATT meaning; plain text shows it in the header line instead.
    do {
      frame.fields.beginObject("gatt", "GATT", verbose: true)
      if let service = resolved.service { frame.fields.add("service", "Service", .uuid(service, name: GATTDatabase.name(service))) }
      if let characteristic = resolved.characteristic {
        frame.fields.add("characteristic", "Characteristic", .uuid(characteristic, name: resolved.characteristicName))
      }
      if let descriptor = resolved.descriptor { frame.fields.add("descriptor", "Descriptor", .uuid(descriptor, name: GATTDatabase.name(descriptor))) }
      if let name = resolved.name { frame.fields.add("name", "Name", .staticText(name)) }
      frame.fields.end()
    }
  }

  /// Names the handle and decodes its value with the characteristic's (or descriptor's) decoder.
  @discardableResult
  /// Returns the characteristic's 16-bit UUID, when it has one.
  static func describeValue(handle: UInt16, value: ByteView, operation: GATTOperation, _ database: inout GATTDatabase, _ frame: inout DissectedFrame) -> UInt16? {
    let index = describeHandle(handle, &database, &frame)
    var decoder = -1
    var context = ValueContext(operation: operation, uuid: BluetoothUUID(uuid16: 0))
    var name: StaticString?
    var characteristic16: UInt16?
    var role: ResolvedHandle.Role?
    if let index {
      // Read in place: the table entry is not copied.
      role = database.resolved[index].role
      name = database.resolved[index].name
      characteristic16 = database.resolved[index].characteristic?.uuid16
      decoder = Int(database.decoders[index])
      if decoder >= 0 {
        if role == .descriptor {
          context = ValueContext(operation: operation, uuid: database.resolved[index].descriptor ?? context.uuid,
            characteristic: database.resolved[index].characteristic, characteristicName: database.resolved[index].characteristicName)
        } else {
          context.uuid = database.resolved[index].characteristic ?? database.resolved[index].descriptor ?? context.uuid
        }
      }
    }
    // Learning may change the table (and its indices): everything needed was read above.
    if operation == .read { learnDeclaration(handle: handle, value: value, role: role, &database, &frame) }
    if decoder >= 0 {
      decodeWith(decoder, value: value, context: context, name: name, &frame, summary: true)
    } else if !value.isEmpty {
      summaryBytes(value, &frame)
    }
    return characteristic16
  }

  /// Read Responses on declaration handles teach the database too: a characteristic
  /// declaration's properties, value handle and UUID; an included service's 128-bit UUID.
  static func learnDeclaration(handle: UInt16, value: ByteView, role: ResolvedHandle.Role?, _ database: inout GATTDatabase, _ frame: inout DissectedFrame) {
    if let end = database.includedServiceEnd(start: handle), let uuid = uuidValue(value) {
      database.addService(start: handle, end: end, uuid: uuid, primary: false)
      frame.summaryParts.append(.text(": included service "))
      frame.summaryParts.append(.string(uuid.description))
      return
    }
    guard role == .characteristicDeclaration, value.count == 5 || value.count == 19 else { return }
    var reader = ByteReader(value, layer: .gatt)
    guard let properties = try? reader.readUInt8(), let valueHandle = try? reader.readUInt16LE(),
      let uuid = reader.remaining == 16 ? try? reader.readUUID128() : try? reader.readUUID16()
    else { return }
    database.addCharacteristic(declaration: handle, valueHandle: valueHandle, uuid: uuid, properties: properties)
  }

  /// A value nothing decodes: its first bytes in the summary (all of them in `att.value`).
  static func summaryBytes(_ value: ByteView, _ frame: inout DissectedFrame) {
    if !frame.summaryParts.isEmpty { frame.summaryParts.append(.text(": ")) }
    frame.summaryParts.appendBytes(value)
  }

  /// Runs a profile decoder inside `decoded.<key>`; a value that does not fit is flagged and its
  /// raw bytes stay in `att.value`.
  static func decodeWith(_ decoder: Int, value: ByteView, context: ValueContext, name: StaticString?, _ frame: inout DissectedFrame, summary: Bool) {
    // A lone value at the top level may be decoded later, on the rendering thread (pure work).
    if frame.defersValueDecoding && summary && frame.fields.depth == 0 {
      frame.deferDecoding(decoder, value: value, context: context, name: name)
      return
    }
    decodeNow(ProfileRegistry.all[decoder], value: value, context: context, name: name, &frame, summary: summary)
  }

  /// Runs the decoder now, inside `decoded.<key>`.
  static func decodeNow(_ decoder: CharacteristicDecoder, value: ByteView, context: ValueContext, name: StaticString?, _ frame: inout DissectedFrame, summary: Bool) {
    let depth = frame.fields.depth
    if summary { frame.summaryParts.append(.text(": ")) }
    let summaryStart = frame.summaryParts.count
    frame.fields.beginObject("decoded", "Decoded", inline: true, verbose: decoder.summarySaysItAll && summary)
    frame.fields.beginObject(decoder.key, name ?? "Value", inline: true)
    var reader = ByteReader(value, layer: .profile)
    let decoded = decoder.decode(&reader)
    if let typed = decoded.value {
      typed.writeFields(to: &frame.fields, context: context)
      typed.summarize(into: &frame.summaryParts, context: context)
      typed.diagnose(into: &frame.diagnostics, context: context)
    }
    if decoded.error == nil, !reader.isAtEnd {
      frame.diagnostics.append(Diagnostic(.warning, .profile, "\(reader.remaining) bytes after the \(name ?? "value") value"))
    }
    if let error = decoded.error {
      if frame.malformed == nil { frame.malformed = error }
      if frame.summaryParts.count > summaryStart { frame.summaryParts.removeSubrange(summaryStart...) }
      frame.summaryParts.append(.text("malformed value "))
      frame.summaryParts.appendBytes(value)
    }
    if !summary, frame.summaryParts.count > summaryStart { frame.summaryParts.removeSubrange(summaryStart...) }
    frame.fields.close(toDepth: depth)
  }

  /// The whole value of a long read: `att.value`, with where it started; described after `att`.
  static func completeLongRead(_ long: LongRead, _ frame: inout DissectedFrame) -> [UInt8] {
    frame.fields.addVerbose("value", "Value", .bytes(long.value[...]))
    frame.fields.uint("long_value_first_frame", "Long value from frame", long.firstFrame)
    frame.fields.uint("long_value_length", "Long value length", long.value.count)
    return long.value
  }

  static func executePreparedWrites(_ queue: [PreparedWrite], _ database: inout GATTDatabase, _ frame: inout DissectedFrame) {
    // The written value of each handle: its parts placed at their offsets, in queue order.
    var order: [UInt16] = []
    var values: [UInt16: [UInt8]] = [:]
    for part in queue {
      if values[part.handle] == nil { order.append(part.handle) }
      // Moved out of the dictionary (not copied), grown in place, put back.
      var value = values.removeValue(forKey: part.handle) ?? []
      let end = Int(part.offset) + part.part.count
      if value.count < end { value.append(contentsOf: repeatElement(0, count: end - value.count)) }
      value.replaceSubrange(Int(part.offset)..<end, with: part.part)
      values[part.handle] = value
    }
    frame.fields.beginArray("written", "Written values")
    for (index, handle) in order.enumerated() {
      let value = values[handle]!
      frame.fields.beginObject("", "Value")
      frame.fields.addVerbose("handle", "Handle", .unsigned(UInt64(handle), .hex(4)))
      frame.fields.uint("length", "Length", value.count)
      frame.fields.addVerbose("value", "Value", .bytes(value[...]))
      if index > 0 { frame.summaryParts.append(.text("; ")) }
      ByteView.pinning(value) { view in
        _ = describeValue(handle: handle, value: view, operation: .write, &database, &frame)
      }
      frame.fields.end()
    }
    frame.fields.end()
    if queue.isEmpty { frame.summaryParts.append(.text("nothing prepared")) }
  }

  /// Read Multiple Response: splits the values where the lengths are known (fixed-size
  /// characteristics); the last value takes what remains.
  static func readMultiple(_ values: ByteView, handles: [UInt16], _ database: inout GATTDatabase, _ frame: inout DissectedFrame) {
    var rest = values
    var split: [(UInt16, ByteView)] = []
    for (index, handle) in handles.enumerated() {
      if index == handles.count - 1 {
        split.append((handle, rest))
        break
      }
      guard let uuid = database.resolve(handle)?.characteristic?.uuid16, let size = fixedSize(uuid), size <= rest.count else {
        frame.diagnostics.append(Diagnostic(.note, .att, "Read Multiple values cannot be split: the length of \(Hex.prefixed(UInt64(handle), width: 4))'s value is not fixed"))
        split = []
        break
      }
      split.append((handle, rest.prefix(size)))
      rest = rest.dropFirst(size)
    }
    guard !split.isEmpty else {
      summaryBytes(values, &frame)
      return
    }
    frame.fields.beginArray("values", "Values")
    for (index, (handle, value)) in split.enumerated() {
      frame.fields.beginObject("", "Value")
      frame.fields.addVerbose("handle", "Handle", .unsigned(UInt64(handle), .hex(4)))
      frame.fields.verboseBytes("value", "Value", value)
      if index > 0 { frame.summaryParts.append(.text("; ")) }
      describeValue(handle: handle, value: value, operation: .read, &database, &frame)
      frame.fields.end()
    }
    frame.fields.end()
  }

  /// Value sizes of fixed-format characteristics (GATT Specification Supplement).
  static func fixedSize(_ uuid: UInt16) -> Int? {
    switch uuid {
    case 0x2A19, 0x2A38, 0x2A39, 0x2A5D, 0x2AA6: return 1
    case 0x2A01, 0x2A5C, 0x2A54, 0x2A6E, 0x2A6F, 0x2902, 0x2900: return 2
    case 0x2A05: return 4
    case 0x2A50: return 7
    case 0x2A04, 0x2A23: return 8
    case 0x2A2B: return 10
    case 0x2B2A: return 16
    default: return nil
    }
  }
}
