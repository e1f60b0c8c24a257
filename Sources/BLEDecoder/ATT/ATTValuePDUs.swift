import BLECore

/// The PDUs that read, write, notify or indicate attribute values, and Error Response.
///
/// A step returns the one attribute its PDU is about, which the GATT step then describes after
/// the `att` group; PDUs about several attributes describe each inside their own array.
enum ATTValuePDUs {
  static func errorResponse(
    _ r: inout ByteReader, _ pdu: inout ATTPDU, _ registry: DecoderRegistry, _ bearer: inout ATTBearer, _ database: inout GATTDatabase,
    _ frame: inout DissectedFrame
  ) throws(DecodeError) -> AttributeAbout? {
    let requestOpcode = try r.readUInt8()
    let handle = try r.readUInt16LE()
    let error = try r.readUInt8()
    frame.att?.operation = .error(request: requestOpcode, handle: handle, code: error)
    // An application error (0x80–0x9F) is named by the profile of the characteristic it is about.
    if (0x80...0x9F).contains(error), let characteristic = characteristic(of: handle, &pdu, registry, &database),
      ProfileRegistry.applicationErrorName(error, characteristic: characteristic) != nil
    {
      frame.att?.errorCharacteristic = characteristic
    }
    frame.fields.code("request_opcode", "Request", requestOpcode, width: 2, name: AssignedNumbers.attOpcodeName(requestOpcode))
    frame.fields.addVerbose("handle", "Handle", .unsigned(UInt64(handle), .hex(4)))
    frame.fields.code("error", "Error", error, width: 2, name: frame.att?.errorName)
    guard let pending = pdu.answered else { return nil }
    if pending.opcode != requestOpcode {
      frame.diagnostics.append(Diagnostic(.attErrorNamesOtherRequest, "error names \(ATTLayer.opName(requestOpcode)) but the pending request is \(ATTLayer.opName(pending.opcode))"))
    }
    // A long read ends with Attribute Not Long / Invalid Offset: the value is complete.
    let direction = pdu.link.direction.opposite
    if pending.opcode == 0x0C, let long = bearer.longRead[direction], long.handle == pending.handle {
      bearer.longRead[direction] = nil
      pdu.longValue = completeLongRead(long, &frame)
      return (long.handle, nil, .read)
    }
    return nil
  }

  /// The characteristic whose value `handle` is (a handle override first, then the database).
  static func characteristic(of handle: UInt16, _ pdu: inout ATTPDU, _ registry: DecoderRegistry, _ database: inout GATTDatabase) -> BluetoothUUID? {
    if let uuid = registry.handleOverride(handle, peer: pdu.link.peer) { return uuid }
    guard let index = database.locate(handle, registry: registry), database.resolved[index].role == .characteristicValue else { return nil }
    return database.resolved[index].characteristic
  }

  /// Read Request, Read Blob Request.
  static func readRequest(_ r: inout ByteReader, _ pdu: inout ATTPDU, _ database: inout GATTDatabase, _ frame: inout DissectedFrame) throws(DecodeError) -> AttributeAbout? {
    let handle = try r.readUInt16LE()
    pdu.opened.handle = handle
    frame.fields.addVerbose("handle", "Handle", .unsigned(UInt64(handle), .hex(4)))
    guard pdu.opcode == 0x0C else { return (handle, nil, .read) }
    pdu.opened.offset = try r.readUInt16LE()
    frame.fields.uint("offset", "Offset", pdu.opened.offset)
    frame.att?.operation = .readBlobRequest(offset: pdu.opened.offset)
    return (handle, nil, .read)
  }

  static func readResponse(_ r: inout ByteReader, _ pdu: inout ATTPDU, _ bearer: inout ATTBearer, _ database: inout GATTDatabase, _ frame: inout DissectedFrame) -> AttributeAbout? {
    let value = r.readRemaining()
    guard let handle = pdu.answered?.handle else {
      frame.fields.verboseBytes("value", "Value", value)
      let kept = frame.keepValue(value)
      frame.att?.operation = .unattributedValue(kept)
      return nil
    }
    frame.fields.addVerbose("handle", "Handle", .unsigned(UInt64(handle), .hex(4)))
    frame.fields.verboseBytes("value", "Value", value)
    guard value.count == bearer.mtu - 1 else { return (handle, value, .read) }
    // The value fills the PDU: Read Blob requests may follow; decode once it is whole.
    frame.fields.verboseBytes("part", "Part", value)
    bearer.longRead[pdu.link.direction.opposite] = LongRead(handle: handle, value: Array(value), firstFrame: pdu.link.frameNumber)
    frame.att?.operation = .longReadPart(total: value.count, first: true)
    return (handle, nil, .read)
  }

  static func readBlobResponse(_ r: inout ByteReader, _ pdu: inout ATTPDU, _ bearer: inout ATTBearer, _ database: inout GATTDatabase, _ frame: inout DissectedFrame) -> AttributeAbout? {
    let part = r.readRemaining()
    guard let pending = pdu.answered, let handle = pending.handle else {
      frame.fields.verboseBytes("value", "Value", part)
      frame.fields.verboseBytes("part", "Part", part)
      let kept = frame.keepValue(part)
      frame.att?.operation = .unattributedValue(kept)
      return nil
    }
    frame.fields.addVerbose("handle", "Handle", .unsigned(UInt64(handle), .hex(4)))
    frame.fields.uint("offset", "Offset", pending.offset)
    let direction = pdu.link.direction.opposite
    var long = bearer.longRead[direction] ?? LongRead(handle: handle, value: [], firstFrame: pdu.link.frameNumber)
    if long.handle != handle || long.value.count != Int(pending.offset) {
      frame.diagnostics.append(Diagnostic(.attReadBlobNotContinuing, "Read Blob at offset \(pending.offset) does not continue a read of this value"))
      long = LongRead(handle: handle, value: [UInt8](repeating: 0, count: Int(pending.offset)), firstFrame: pdu.link.frameNumber)
    }
    long.value.append(contentsOf: part)
    if part.count == bearer.mtu - 1 {
      frame.fields.verboseBytes("value", "Value", part)
      frame.fields.verboseBytes("part", "Part", part)
      frame.att?.operation = .longReadPart(total: long.value.count, first: false)
      bearer.longRead[direction] = long
      return (handle, nil, .read)
    }
    bearer.longRead[direction] = nil
    frame.fields.verboseBytes("part", "Part", part)
    pdu.longValue = completeLongRead(long, &frame)
    return (long.handle, nil, .read)
  }

  /// The whole value of a long read: `att.value`, with where it started.
  static func completeLongRead(_ long: LongRead, _ frame: inout DissectedFrame) -> [UInt8] {
    frame.fields.addVerbose("value", "Value", .bytes(long.value[...]))
    frame.fields.uint("long_value_first_frame", "Long value from frame", long.firstFrame)
    frame.fields.uint("long_value_length", "Long value length", long.value.count)
    return long.value
  }

  /// Read Multiple (Variable) Request: the handles asked for.
  static func readMultipleRequest(_ r: inout ByteReader, _ pdu: inout ATTPDU, _ frame: inout DissectedFrame) throws(DecodeError) {
    frame.fields.beginArray("handle_list", "Handles")
    while !r.isAtEnd {
      let handle = try r.readUInt16LE()
      pdu.opened.handles.append(handle)
      frame.fields.add("handle", "Handle", .unsigned(UInt64(handle), .hex(4)))
      frame.attributes.append(AttributeFact(handle: handle, operation: .read))
    }
    frame.fields.end()
    frame.att?.operation = .handles(count: pdu.opened.handles.count)
  }

  /// Read Multiple Response: values back to back. They are split where the lengths are known
  /// (fixed-size characteristics); the last value takes what remains.
  static func readMultipleResponse(_ r: inout ByteReader, _ pdu: inout ATTPDU, _ registry: DecoderRegistry, _ database: inout GATTDatabase, _ frame: inout DissectedFrame) {
    let values = r.readRemaining()
    frame.fields.verboseBytes("value", "Values", values)
    let handles = pdu.answered?.handles ?? []
    var rest = values
    var split: [(UInt16, ByteView)] = []
    for (index, handle) in handles.enumerated() {
      if index == handles.count - 1 {
        split.append((handle, rest))
        break
      }
      guard let uuid = database.resolve(handle, registry: registry)?.characteristic?.uuid16, let size = fixedSize(uuid), size <= rest.count else {
        frame.diagnostics.append(Diagnostic(.attReadMultipleUnsplittable, "Read Multiple values cannot be split: the length of \(Hex.prefixed(UInt64(handle), width: 4))'s value is not fixed"))
        split = []
        break
      }
      split.append((handle, rest.prefix(size)))
      rest = rest.dropFirst(size)
    }
    guard !split.isEmpty else {
      let kept = frame.keepValue(values)
      frame.att?.operation = .unattributedValue(kept)
      return
    }
    frame.fields.beginArray("values", "Values")
    for (handle, value) in split {
      frame.fields.beginObject("", "Value")
      frame.fields.addVerbose("handle", "Handle", .unsigned(UInt64(handle), .hex(4)))
      frame.fields.verboseBytes("value", "Value", value)
      GATTDescription.describe(handle, value: value, operation: .read, &pdu, registry, &database, &frame)
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

  /// Read Multiple Variable Response: length + value per handle asked for.
  static func readMultipleVariableResponse(_ r: inout ByteReader, _ pdu: inout ATTPDU, _ registry: DecoderRegistry, _ database: inout GATTDatabase, _ frame: inout DissectedFrame) throws(DecodeError) {
    frame.fields.beginArray("values", "Values")
    let handles = pdu.answered?.handles ?? []
    var index = 0
    while !r.isAtEnd {
      let length = Int(try r.readUInt16LE())
      let value = try r.readBytes(count: min(length, r.remaining))
      frame.fields.beginObject("", "Value")
      if index < handles.count {
        frame.fields.hex("handle", "Handle", handles[index], width: 4)
        GATTDescription.describe(handles[index], value: value, operation: .read, &pdu, registry, &database, &frame)
      }
      frame.fields.verboseBytes("value", "Value", value)
      frame.fields.end()
      index += 1
    }
    frame.fields.end()
  }

  /// Write Request, Write Command, Signed Write Command (12 bytes of signature at the end).
  static func write(_ r: inout ByteReader, _ pdu: inout ATTPDU, _ frame: inout DissectedFrame) throws(DecodeError) -> AttributeAbout? {
    let handle = try r.readUInt16LE()
    pdu.opened.handle = handle
    frame.fields.addVerbose("handle", "Handle", .unsigned(UInt64(handle), .hex(4)))
    var value = r.readRemaining()
    if pdu.opcode == 0xD2 {
      guard value.count >= 12 else {
        throw DecodeError(.truncated(needed: 12, available: value.count), layer: .att, offset: r.offset)
      }
      frame.fields.bytes("signature", "Signature", value.suffix(12))
      value = value.dropLast(12)
    }
    frame.fields.verboseBytes("value", "Value", value)
    return (handle, value, pdu.opcode == 0x12 ? .write : .writeWithoutResponse)
  }

  static func writeResponse(_ pdu: ATTPDU, _ frame: inout DissectedFrame) -> AttributeAbout? {
    guard let handle = pdu.answered?.handle else { return nil }
    frame.fields.addVerbose("handle", "Handle", .unsigned(UInt64(handle), .hex(4)))
    return (handle, nil, .write)
  }

  /// Prepare Write Request and Response: a part of a value, queued by the client until Execute Write.
  static func prepareWrite(_ r: inout ByteReader, _ pdu: inout ATTPDU, _ bearer: inout ATTBearer, _ frame: inout DissectedFrame) throws(DecodeError) -> AttributeAbout? {
    let handle = try r.readUInt16LE()
    let offset = try r.readUInt16LE()
    let part = r.readRemaining()
    frame.fields.addVerbose("handle", "Handle", .unsigned(UInt64(handle), .hex(4)))
    frame.fields.uint("offset", "Offset", offset)
    frame.fields.verboseBytes("value", "Part", part)
    frame.att?.operation = .prepareWrite(offset: offset, length: part.count)
    let direction = pdu.link.direction
    if pdu.opcode == 0x16 {
      pdu.opened.handle = handle
      pdu.opened.offset = offset
      let queued = bearer.prepared[direction].append(PreparedWrite(handle: handle, offset: offset, part: Array(part), frame: pdu.link.frameNumber))
      if !queued, bearer.prepared[direction].dropped == 1 {
        frame.diagnostics.append(Diagnostic(.attPrepareQueueFull, "prepare queue holds \(PrepareQueue.maximumParts) parts or \(PrepareQueue.maximumBytes) bytes: this part and later ones are counted, not kept"))
      }
    } else if let queued = bearer.prepared[direction.opposite].latest, queued.handle != handle || queued.offset != offset || !queued.part.elementsEqual(part) {
      frame.diagnostics.append(Diagnostic(.attPrepareResponseDiffers, "Prepare Write Response differs from the request (#\(queued.frame))"))
    }
    return (handle, nil, .write)
  }

  /// Execute Write Request: writes (flags 1) or cancels (flags 0) the queued parts.
  static func executeWrite(_ r: inout ByteReader, _ pdu: inout ATTPDU, _ registry: DecoderRegistry, _ bearer: inout ATTBearer, _ database: inout GATTDatabase, _ frame: inout DissectedFrame) throws(DecodeError) {
    let flags = try r.readUInt8()
    frame.fields.code("flags", "Flags", flags, width: 2, name: flags == 0 ? "cancel all prepared writes" : (flags == 1 ? "write all prepared values" : nil))
    let direction = pdu.link.direction
    let queue = bearer.prepared[direction]
    bearer.prepared[direction] = PrepareQueue()
    if flags == 0 {
      frame.att?.operation = .executeWrite(cancelled: queue.count)
      if let first = queue.parts.first {
        frame.diagnostics.append(Diagnostic(.attPrepareQueueCancelled, "prepared write queue of \(queue.count) part\(queue.count == 1 ? "" : "s") cancelled (from #\(first.frame))"))
      }
      return
    }
    frame.att?.operation = .executeWrite(cancelled: nil)
    if queue.dropped > 0 {
      frame.diagnostics.append(Diagnostic(.attPreparedPartsDropped, "\(queue.dropped) prepared part\(queue.dropped == 1 ? "" : "s") beyond the queue's limit not included in the written values"))
    }
    // The written value of each handle: its parts placed at their offsets, in queue order.
    var order: [UInt16] = []
    var values: [UInt16: [UInt8]] = [:]
    for part in queue.parts {
      if values[part.handle] == nil { order.append(part.handle) }
      // Moved out of the dictionary (not copied), grown in place, put back.
      var value = values.removeValue(forKey: part.handle) ?? []
      let end = Int(part.offset) + part.part.count
      if value.count < end { value.append(contentsOf: repeatElement(0, count: end - value.count)) }
      value.replaceSubrange(Int(part.offset)..<end, with: part.part)
      values[part.handle] = value
    }
    frame.fields.beginArray("written", "Written values")
    for handle in order {
      let value = values[handle] ?? []
      frame.fields.beginObject("", "Value")
      frame.fields.addVerbose("handle", "Handle", .unsigned(UInt64(handle), .hex(4)))
      frame.fields.uint("length", "Length", value.count)
      frame.fields.addVerbose("value", "Value", .bytes(value[...]))
      ByteView.pinning(value) { view in
        GATTDescription.describe(handle, value: view, operation: .write, &pdu, registry, &database, &frame)
      }
      frame.fields.end()
    }
    frame.fields.end()
  }

  /// Handle Value Notification and Indication (an indication waits for its confirmation).
  static func handleValue(_ r: inout ByteReader, _ pdu: inout ATTPDU, _ bearer: inout ATTBearer, _ frame: inout DissectedFrame) throws(DecodeError) -> AttributeAbout? {
    let handle = try r.readUInt16LE()
    let value = r.readRemaining()
    frame.fields.addVerbose("handle", "Handle", .unsigned(UInt64(handle), .hex(4)))
    frame.fields.verboseBytes("value", "Value", value)
    guard pdu.opcode == 0x1D else { return (handle, value, .notification) }
    let direction = pdu.link.direction
    if let earlier = bearer.pendingIndication[direction] {
      frame.diagnostics.append(Diagnostic(.attIndicationWhileUnconfirmed, "indication sent while #\(earlier.frame) is not confirmed"))
    }
    pdu.opened.handle = handle
    bearer.pendingIndication[direction] = pdu.opened
    return (handle, value, .indication)
  }

  /// Multiple Handle Value Notification: handle, length, value, repeated.
  static func multipleHandleValueNotification(_ r: inout ByteReader, _ pdu: inout ATTPDU, _ registry: DecoderRegistry, _ database: inout GATTDatabase, _ frame: inout DissectedFrame) throws(DecodeError) {
    frame.fields.beginArray("values", "Values")
    while !r.isAtEnd {
      let handle = try r.readUInt16LE()
      let length = Int(try r.readUInt16LE())
      let value = try r.readBytes(count: length)
      frame.fields.beginObject("", "Value")
      frame.fields.hex("handle", "Handle", handle, width: 4)
      frame.fields.verboseBytes("value", "Value", value)
      GATTDescription.describe(handle, value: value, operation: .notification, &pdu, registry, &database, &frame)
      frame.fields.end()
    }
    frame.fields.end()
  }
}
