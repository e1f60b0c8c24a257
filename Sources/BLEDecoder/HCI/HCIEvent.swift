import BLECore

/// HCI event packets: `event_code(1) parameter_length(1) parameters`.
///
/// The corresponding specification is Core Vol 4, Part E, §5.4.4 and §7.7.
public enum HCIEvent {
  /// Facts an event decoder hands back to the dissector.
  struct Context: Sendable {
    var handle: UInt16?
    var change: ConnectionChange?
    var adapter: UInt16 = 0
    var frameNumber = 0
    /// What the event did to links (and the devices advertising), for `frame.linkEvents`.
    var events: [LinkEvent] = []
    /// The LE subevent, for `frame.hci`.
    var subevent: UInt8?
    /// Where vendor events and manufacturer data find their decoders.
    var registry: DecoderRegistry?
  }

  public static func name(_ code: UInt8) -> Name {
    AssignedNumbers.hciEventName(code) ?? (code == 0xFF ? "Vendor Event" : "Unknown Event")
  }

  static func decode(_ reader: inout ByteReader, into frame: inout DissectedFrame, context: inout Context) throws(DecodeError) {
    let code = try reader.readUInt8()
    frame.hci = .event(code: code, subevent: nil)
    frame.fields.addVerbose("event", "Event", .code(UInt64(code), width: 2, name: AssignedNumbers.hciEventName(code)))
    let length = Int(try reader.readUInt8())
    frame.fields.addVerbose("plen", "Parameter length", .unsigned(UInt64(length), .decimal))
    guard length <= reader.remaining else {
      throw DecodeError(.lengthMismatch(field: "parameter length", declared: length, actual: reader.remaining), layer: .hci, offset: reader.offset - 1)
    }
    var p = try reader.readReader(count: length)
    frame.fields.beginObject("params", "Parameters", inline: true)
    defer { frame.fields.end() }
    context.frameNumber = frame.number
    defer {
      if let subevent = context.subevent { frame.hci = .event(code: code, subevent: subevent) }
    }
    let known = try decodeParameters(code: code, &p, into: &frame.fields, header: &frame.header, context: &context)
    if !known {
      if AssignedNumbers.hciEventName(code) == nil { frame.header = .unknownEvent(code: code) }
      if code == 0xFF, let decoder = context.registry?.vendorEvent {
        if let error = decoder.run(&p, into: &frame.fields), frame.malformed == nil { frame.malformed = error }
      }
      if !p.isAtEnd { frame.fields.bytes("raw", "Data", p.readRemaining()) }
    } else if !p.isAtEnd {
      frame.fields.bytes("extra", "Unexpected bytes", p.readRemaining())
    }
    if !reader.isAtEnd {
      frame.diagnostics.append(Diagnostic(.hciEventTrailingBytes, "\(reader.remaining) bytes after the event parameters"))
    }
  }

  static func status(_ fields: inout FieldList, _ p: inout ByteReader, key: Name = "status", label: Name = "Status") throws(DecodeError) -> UInt8 {
    let value = try p.readUInt8()
    fields.code(key, label, value, width: 2, name: AssignedNumbers.hciErrorName(value))
    return value
  }

  static func handle(_ fields: inout FieldList, _ p: inout ByteReader, _ context: inout Context) throws(DecodeError) -> UInt16 {
    let value = try p.readUInt16LE() & 0x0FFF
    fields.uint("handle", "Handle", value)
    context.handle = value
    return value
  }

  static func decodeParameters(code: UInt8, _ p: inout ByteReader, into fields: inout FieldList, header: inout HeaderFact, context: inout Context) throws(DecodeError) -> Bool {
    switch code {
    case 0x03:  // Connection Complete (BR/EDR)
      let result = try status(&fields, &p)
      let h = try handle(&fields, &p, &context)
      let peer = try p.readBDAddr()
      fields.add("address", "Address", .address(peer, nil))
      let linkType = try p.readUInt8()
      fields.code("link_type", "Link type", linkType, width: 2, name: linkType == 1 ? "ACL" : (linkType == 0 ? "SCO" : (linkType == 2 ? "eSCO" : nil)))
      let encryption = try p.readUInt8()
      fields.code("encryption", "Encryption", encryption, width: 2, name: encryption == 0 ? "off" : (encryption == 1 ? "on" : nil))
      if linkType == 1 {
        context.events.append(.connected(status: result, handle: h, peer: peer, peerType: .publicDevice, role: nil, parameters: nil))
      }
      if result == 0 && linkType == 1 {
        context.change = .opened(Connection(
          adapter: context.adapter, handle: h, generation: 0, peer: peer, peerType: .publicDevice, role: nil,
          interval: nil, latency: nil, supervisionTimeout: nil, openedInFrame: context.frameNumber, isLE: false))
      }
      header = .addressOutcome(peer, status: result)
    case 0x05:  // Disconnection Complete
      let result = try status(&fields, &p)
      let h = try handle(&fields, &p, &context)
      let reason = try status(&fields, &p, key: "reason", label: "Reason")
      context.events.append(.disconnected(status: result, handle: h, reason: reason))
      if result == 0 { context.change = .closed(handle: h) }
      header = .disconnectionComplete(status: result, reason: reason)
    case 0x08, 0x59:  // Encryption Change v1, v2
      let result = try status(&fields, &p)
      let h = try handle(&fields, &p, &context)
      let enabled = try p.readUInt8()
      context.events.append(.encryptionChanged(status: result, handle: h, enabled: enabled != 0))
      let name: Name? = enabled == 0 ? "off" : (enabled == 1 ? "on (E0 or AES-CCM on LE)" : (enabled == 2 ? "on (AES-CCM)" : nil))
      fields.code("encryption", "Encryption", enabled, width: 2, name: name)
      if code == 0x59 { fields.uint("key_size", "Key size", try p.readUInt8()) }
      header = .encryptionChange(status: result, enabled: enabled != 0)
    case 0x30:  // Encryption Key Refresh Complete
      let result = try status(&fields, &p)
      _ = try handle(&fields, &p, &context)
      header = .status(result)
    case 0x0C:  // Read Remote Version Information Complete
      let result = try status(&fields, &p)
      let h = try handle(&fields, &p, &context)
      let version = try p.readUInt8()
      fields.hex("version", "Version", version, width: 2)
      let company = try p.readUInt16LE()
      fields.code("manufacturer", "Manufacturer", company, width: 4, name: AssignedNumbers.companyName(company))
      let subversion = try p.readUInt16LE()
      fields.hex("subversion", "Subversion", subversion, width: 4)
      context.events.append(.remoteVersion(status: result, handle: h, version: version, manufacturer: company, subversion: subversion))
    case 0x0E:  // Command Complete
      fields.addVerbose("ncmd", "Command packets allowed", .unsigned(UInt64(try p.readUInt8()), .decimal))
      let opcode = try p.readUInt16LE()
      fields.code("command", "Command", opcode, width: 4, name: AssignedNumbers.hciCommandName(opcode))
      var error: UInt8?
      if !p.isAtEnd {
        fields.beginObject("return", "Return parameters", inline: true)
        let result = try status(&fields, &p)
        var returnHandle: UInt16? = nil
        let decoded = try HCICommand.decodeReturnParameters(opcode: opcode, &p, into: &fields, handle: &returnHandle)
        if !decoded && !p.isAtEnd { fields.bytes("raw", "Data", p.readRemaining()) }
        fields.end()
        if let returnHandle { context.handle = returnHandle }
        if result != 0 { error = result }
      }
      header = .commandComplete(opcode: opcode, error: error)
    case 0x0F:  // Command Status
      let result = try status(&fields, &p)
      fields.addVerbose("ncmd", "Command packets allowed", .unsigned(UInt64(try p.readUInt8()), .decimal))
      let opcode = try p.readUInt16LE()
      fields.code("command", "Command", opcode, width: 4, name: AssignedNumbers.hciCommandName(opcode))
      header = .commandStatus(opcode: opcode, status: result)
      if result != 0, [0x0405, 0x200D, 0x2043, 0x2085].contains(opcode) { context.events.append(.connectRejected(status: result)) }
    case 0x10:  // Hardware Error
      fields.hex("hardware_code", "Hardware code", try p.readUInt8(), width: 2)
    case 0x13:  // Number Of Completed Packets
      let count = Int(try p.readUInt8())
      fields.addVerbose("num_handles", "Number of handles", .unsigned(UInt64(count), .decimal))
      try p.require(count * 4)
      fields.beginArray("handles", "Handles")
      var total = 0
      for _ in 0..<count {
        fields.beginObject("", "Handle")
        let h = try p.readUInt16LE() & 0x0FFF
        let completed = try p.readUInt16LE()
        fields.uint("handle", "Handle", h)
        fields.uint("count", "Count", completed)
        fields.end()
        total += Int(completed)
        if count == 1 { context.handle = h }
      }
      fields.end()
      header = .completedPackets(packets: total, handles: count)
    case 0x1A:  // Data Buffer Overflow
      fields.code("link_type", "Link type", try p.readUInt8(), width: 2, name: nil)
    case 0x3E:
      return try LEMetaEvent.decode(&p, into: &fields, header: &header, context: &context)
    default:
      return try classicParameters(code: code, &p, into: &fields, header: &header, context: &context)
    }
    return true
  }
}
