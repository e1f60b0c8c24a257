import BLECore

/// A signaling command the channel layer acts on (dynamic channels); others are `.other`.
public enum SignalingCommand: Sendable, Equatable {
  case leCreditConnectionRequest(identifier: UInt8, psm: UInt16, sourceCID: UInt16, mtu: UInt16, mps: UInt16, credits: UInt16)
  case leCreditConnectionResponse(identifier: UInt8, destinationCID: UInt16, mtu: UInt16, mps: UInt16, credits: UInt16, result: UInt16)
  case creditBasedConnectionRequest(identifier: UInt8, psm: UInt16, mtu: UInt16, mps: UInt16, credits: UInt16, sourceCIDs: [UInt16])
  case creditBasedConnectionResponse(identifier: UInt8, mtu: UInt16, mps: UInt16, credits: UInt16, result: UInt16, destinationCIDs: [UInt16])
  case creditBasedReconfigureRequest(identifier: UInt8, mtu: UInt16, mps: UInt16, destinationCIDs: [UInt16])
  case disconnectionRequest(identifier: UInt8, destinationCID: UInt16, sourceCID: UInt16)
  case disconnectionResponse(identifier: UInt8, destinationCID: UInt16, sourceCID: UInt16)
  /// BR/EDR.
  case connectionRequest(identifier: UInt8, psm: UInt16, sourceCID: UInt16)
  /// BR/EDR.
  case connectionResponse(identifier: UInt8, destinationCID: UInt16, sourceCID: UInt16, result: UInt16)
  /// LE: the peripheral asks for other connection parameters (Core Vol 3 Part A §4.20); units
  /// as in `ConnectionParameters` (1.25 ms, 10 ms).
  case connectionParameterUpdateRequest(identifier: UInt8, intervalMinimum: UInt16, intervalMaximum: UInt16, latency: UInt16, timeout: UInt16)
  case connectionParameterUpdateResponse(identifier: UInt8, result: UInt16)
  /// Command Reject: why, with the signaling MTU (reason 1) or the channel IDs (reason 2) it gives.
  case commandReject(identifier: UInt8, reason: UInt16, actualMTU: UInt16?, localCID: UInt16?, remoteCID: UInt16?)
  /// BR/EDR: a configuration request and the options a header line tells.
  case configurationRequest(identifier: UInt8, destinationCID: UInt16, options: [ConfigurationOption])
  case configurationResponse(identifier: UInt8, sourceCID: UInt16, result: UInt16, options: [ConfigurationOption])
  /// Echo Request (`isRequest`) or Response, with the length of its data.
  case echo(identifier: UInt8, isRequest: Bool, length: Int)
  case informationRequest(identifier: UInt8, type: UInt16)
  /// Information Response, with the connectionless MTU when that is what it tells.
  case informationResponse(identifier: UInt8, type: UInt16, result: UInt16, connectionlessMTU: UInt16?)
  case flowControlCredit(identifier: UInt8, cid: UInt16, credits: UInt16)
  case creditBasedReconfigureResponse(identifier: UInt8, result: UInt16)
  case other(code: UInt8, identifier: UInt8)

  /// Configuration options a header line tells (Core Vol 3 Part A §5), in their order.
  public enum ConfigurationOption: Sendable, Equatable {
    case mtu(UInt16)
    /// Retransmission and Flow Control's mode.
    case mode(UInt8)
  }

  /// The command's code (Core Vol 3 Part A §4).
  public var code: UInt8 {
    switch self {
    case .commandReject: return 0x01
    case .connectionRequest: return 0x02
    case .connectionResponse: return 0x03
    case .configurationRequest: return 0x04
    case .configurationResponse: return 0x05
    case .disconnectionRequest: return 0x06
    case .disconnectionResponse: return 0x07
    case .echo(_, let isRequest, _): return isRequest ? 0x08 : 0x09
    case .informationRequest: return 0x0A
    case .informationResponse: return 0x0B
    case .connectionParameterUpdateRequest: return 0x12
    case .connectionParameterUpdateResponse: return 0x13
    case .leCreditConnectionRequest: return 0x14
    case .leCreditConnectionResponse: return 0x15
    case .flowControlCredit: return 0x16
    case .creditBasedConnectionRequest: return 0x17
    case .creditBasedConnectionResponse: return 0x18
    case .creditBasedReconfigureRequest: return 0x19
    case .creditBasedReconfigureResponse: return 0x1A
    case .other(let code, _): return code
    }
  }
}

/// L2CAP signaling PDUs: `code(1) identifier(1) length(2) data(length)`, on CID 0x0005 (LE-U,
/// exactly one command per PDU) and CID 0x0001 (ACL-U, one or more commands per PDU).
///
/// The corresponding specification is Core Vol 3, Part A, §4 (command layouts), §5
/// (configuration options) and §4.10–4.11 (information types).
public enum L2CAPSignaling {
  /// Decodes the signaling PDU in `reader` (one command on LE CID 5; one or more on BR/EDR CID 1),
  /// writing fields into `fields` (the caller has opened the object "signaling"; for several commands
  /// an array "commands" of objects; for one command its fields directly: `code`, `code_name`,
  /// `identifier`, `length`, then the command's fields); returns the commands as facts.
  ///
  /// Throws `.lengthMismatch` when a command's length field is longer than the bytes left, and
  /// (after writing the command's fields and the extra bytes as `extra`) when an LE PDU has bytes
  /// after its one command. Bytes inside a command's data beyond its parameters show as `extra`.
  public static func decode(_ reader: inout ByteReader, isLE: Bool, into fields: inout FieldList) throws(DecodeError) -> [SignalingCommand] {
    var commands: [SignalingCommand] = []
    var unfinished: UInt8?
    try decode(&reader, isLE: isLE, into: &fields, commands: &commands, unfinished: &unfinished)
    return commands
  }

  /// The same, appending each command to `commands` as soon as it is decoded, so a caller that
  /// catches the error still has the commands before it (channel tracking on a flagged PDU);
  /// `unfinished` is the code of the command being decoded when the error came.
  public static func decode(
    _ reader: inout ByteReader, isLE: Bool, into fields: inout FieldList, commands: inout [SignalingCommand], unfinished: inout UInt8?
  ) throws(DecodeError) {
    reader.layer = .l2cap
    if isLE || commandCount(reader) <= 1 {
      let start = reader.offset
      unfinished = try? reader.peekUInt8()
      commands.append(try decodeCommand(&reader, into: &fields))
      unfinished = nil
      // LE carries exactly one command (on BR/EDR a single-command PDU ends with it).
      if !reader.isAtEnd {
        let length = reader.offset - start - 4
        let extraOffset = reader.offset
        let extra = reader.readRemaining()
        fields.bytes("extra", "Unexpected bytes", extra)
        throw DecodeError(.lengthMismatch(field: "signaling length", declared: length, actual: length + extra.count), layer: .l2cap, offset: extraOffset)
      }
      return
    }
    fields.beginArray("commands", "Commands")
    defer { fields.end() }
    while !reader.isAtEnd {
      fields.beginObject("", "Command")
      defer { fields.end() }
      unfinished = try? reader.peekUInt8()
      commands.append(try decodeCommand(&reader, into: &fields))
      unfinished = nil
    }
  }

  /// The command's name ("Connection Parameter Update Request"), for header lines.
  public static func name(_ code: UInt8) -> Name {
    knownName(code) ?? "Unknown Signaling Command"
  }

  /// The spec name of a command code (Core 5.2+ names for the credit-based commands), or nil.
  public static func knownName(_ code: UInt8) -> Name? {
    switch code {
    case 0x16: return "Flow Control Credit Indication"
    case 0x17: return "Credit Based Connection Request"
    case 0x18: return "Credit Based Connection Response"
    default: return AssignedNumbers.l2capSignalingName(code)
    }
  }

  /// How many commands the PDU holds, counting a final incomplete one.
  static func commandCount(_ reader: ByteReader) -> Int {
    var scan = reader
    var count = 0
    while !scan.isAtEnd {
      count += 1
      guard (try? scan.skip(2)) != nil, let length = try? scan.readUInt16LE(), (try? scan.skip(Int(length))) != nil else { break }
    }
    return count
  }

  // MARK: - One command

  static func decodeCommand(_ reader: inout ByteReader, into fields: inout FieldList) throws(DecodeError) -> SignalingCommand {
    let code = try reader.readUInt8()
    fields.code("code", "Code", code, width: 2, name: knownName(code))
    let identifier = try reader.readUInt8()
    fields.uint("identifier", "Identifier", identifier)
    let lengthOffset = reader.offset
    let length = Int(try reader.readUInt16LE())
    fields.addVerbose("length", "Length", .unsigned(UInt64(length), .decimal))
    guard length <= reader.remaining else {
      throw DecodeError(.lengthMismatch(field: "signaling length", declared: length, actual: reader.remaining), layer: .l2cap, offset: lengthOffset)
    }
    var data = try reader.readReader(count: length, layer: .l2cap)
    let command = try decodeData(code: code, identifier: identifier, &data, into: &fields)
    if !data.isAtEnd { fields.bytes("extra", "Unexpected bytes", data.readRemaining()) }
    return command
  }

  static func decodeData(code: UInt8, identifier: UInt8, _ d: inout ByteReader, into fields: inout FieldList) throws(DecodeError) -> SignalingCommand {
    switch code {
    case 0x01:  // Command Reject §4.1: reason(2) data(0, 2 or 4)
      let reason = try d.readUInt16LE()
      fields.code("reason", "Reason", reason, width: 4, name: rejectReasonName(reason))
      switch reason {
      case 0x0001:
        let mtu = try d.readUInt16LE()
        fields.uint("actual_mtu", "Actual signaling MTU", mtu)
        return .commandReject(identifier: identifier, reason: reason, actualMTU: mtu, localCID: nil, remoteCID: nil)
      case 0x0002:
        let local = try d.readUInt16LE()
        let remote = try d.readUInt16LE()
        fields.hex("local_cid", "Local CID", local, width: 4)
        fields.hex("remote_cid", "Remote CID", remote, width: 4)
        return .commandReject(identifier: identifier, reason: reason, actualMTU: nil, localCID: local, remoteCID: remote)
      default:
        if !d.isAtEnd { fields.bytes("reason_data", "Reason data", d.readRemaining()) }
        return .commandReject(identifier: identifier, reason: reason, actualMTU: nil, localCID: nil, remoteCID: nil)
      }

    case 0x02:  // Connection Request §4.2: PSM(2) source CID(2)
      let psm = try d.readUInt16LE()
      let source = try d.readUInt16LE()
      fields.code("psm", "PSM", psm, width: 4, name: psmName(psm))
      fields.hex("source_cid", "Source CID", source, width: 4)
      return .connectionRequest(identifier: identifier, psm: psm, sourceCID: source)

    case 0x03:  // Connection Response §4.3: DCID(2) SCID(2) result(2) status(2)
      let destination = try d.readUInt16LE()
      let source = try d.readUInt16LE()
      let result = try d.readUInt16LE()
      let status = try d.readUInt16LE()
      fields.hex("destination_cid", "Destination CID", destination, width: 4)
      fields.hex("source_cid", "Source CID", source, width: 4)
      fields.code("result", "Result", result, width: 4, name: connectionResultName(result))
      fields.code("status", "Status", status, width: 4, name: connectionStatusName(status))
      return .connectionResponse(identifier: identifier, destinationCID: destination, sourceCID: source, result: result)

    case 0x04:  // Configuration Request §4.4: DCID(2) flags(2) options
      let destination = try d.readUInt16LE()
      let flags = try d.readUInt16LE()
      fields.hex("destination_cid", "Destination CID", destination, width: 4)
      fields.hex("flags", "Flags", flags, width: 4)
      fields.flag("continuation", "Continuation", flags & 1 != 0)
      let options = try configurationOptions(&d, into: &fields)
      return .configurationRequest(identifier: identifier, destinationCID: destination, options: options)

    case 0x05:  // Configuration Response §4.5: SCID(2) flags(2) result(2) options
      let source = try d.readUInt16LE()
      let flags = try d.readUInt16LE()
      let result = try d.readUInt16LE()
      fields.hex("source_cid", "Source CID", source, width: 4)
      fields.hex("flags", "Flags", flags, width: 4)
      fields.flag("continuation", "Continuation", flags & 1 != 0)
      fields.code("result", "Result", result, width: 4, name: configurationResultName(result))
      let options = try configurationOptions(&d, into: &fields)
      return .configurationResponse(identifier: identifier, sourceCID: source, result: result, options: options)

    case 0x06, 0x07:  // Disconnection Request / Response §4.6-4.7: DCID(2) SCID(2)
      let destination = try d.readUInt16LE()
      let source = try d.readUInt16LE()
      fields.hex("destination_cid", "Destination CID", destination, width: 4)
      fields.hex("source_cid", "Source CID", source, width: 4)
      return code == 0x06
        ? .disconnectionRequest(identifier: identifier, destinationCID: destination, sourceCID: source)
        : .disconnectionResponse(identifier: identifier, destinationCID: destination, sourceCID: source)

    case 0x08, 0x09:  // Echo Request / Response §4.8-4.9: optional data
      let data = d.readRemaining()
      if !data.isEmpty { fields.bytes("data", "Data", data) }
      return .echo(identifier: identifier, isRequest: code == 0x08, length: data.count)

    case 0x0A:  // Information Request §4.10: info type(2)
      let type = try d.readUInt16LE()
      fields.code("info_type", "Info type", type, width: 4, name: infoTypeName(type))
      return .informationRequest(identifier: identifier, type: type)

    case 0x0B:  // Information Response §4.11: info type(2) result(2) data
      let type = try d.readUInt16LE()
      let result = try d.readUInt16LE()
      fields.code("info_type", "Info type", type, width: 4, name: infoTypeName(type))
      fields.code("result", "Result", result, width: 4, name: result == 0 ? "Success" : (result == 1 ? "Not supported" : nil))
      var mtu: UInt16?
      if result == 0, infoTypeName(type) != nil {
        mtu = try informationData(type: type, &d, into: &fields)
      } else if !d.isAtEnd {
        fields.bytes("data", "Data", d.readRemaining())
      }
      return .informationResponse(identifier: identifier, type: type, result: result, connectionlessMTU: mtu)

    case 0x0C:  // Create Channel Request (AMP) §4.14: PSM(2) SCID(2) controller ID(1)
      let psm = try d.readUInt16LE()
      fields.code("psm", "PSM", psm, width: 4, name: psmName(psm))
      fields.hex("source_cid", "Source CID", try d.readUInt16LE(), width: 4)
      fields.uint("controller_id", "Controller ID", try d.readUInt8())
    case 0x0D:  // Create Channel Response (AMP) §4.15: DCID(2) SCID(2) result(2) status(2)
      fields.hex("destination_cid", "Destination CID", try d.readUInt16LE(), width: 4)
      fields.hex("source_cid", "Source CID", try d.readUInt16LE(), width: 4)
      fields.hex("result", "Result", try d.readUInt16LE(), width: 4)
      fields.hex("status", "Status", try d.readUInt16LE(), width: 4)
    case 0x0E:  // Move Channel Request (AMP) §4.16: ICID(2) destination controller ID(1)
      fields.hex("initiator_cid", "Initiator CID", try d.readUInt16LE(), width: 4)
      fields.uint("controller_id", "Destination controller ID", try d.readUInt8())
    case 0x0F, 0x10:  // Move Channel Response / Confirmation (AMP) §4.17-4.18: ICID(2) result(2)
      fields.hex("initiator_cid", "Initiator CID", try d.readUInt16LE(), width: 4)
      fields.hex("result", "Result", try d.readUInt16LE(), width: 4)
    case 0x11:  // Move Channel Confirmation Response (AMP) §4.19: ICID(2)
      fields.hex("initiator_cid", "Initiator CID", try d.readUInt16LE(), width: 4)

    case 0x12:  // Connection Parameter Update Request §4.20
      let minimum = try d.readUInt16LE()
      let maximum = try d.readUInt16LE()
      let latency = try d.readUInt16LE()
      let timeout = try d.readUInt16LE()
      fields.measure("conn_interval_min", "Min connection interval", minimum, scale: 1.25, unit: "ms")
      fields.measure("conn_interval_max", "Max connection interval", maximum, scale: 1.25, unit: "ms")
      fields.uint("latency", "Peripheral latency", latency)
      fields.measure("supervision_timeout", "Supervision timeout", timeout, scale: 10, unit: "ms")
      return .connectionParameterUpdateRequest(
        identifier: identifier, intervalMinimum: minimum, intervalMaximum: maximum, latency: latency, timeout: timeout)

    case 0x13:  // Connection Parameter Update Response §4.21: result(2)
      let result = try d.readUInt16LE()
      let name: Name? = result == 0 ? "Accepted" : (result == 1 ? "Rejected" : nil)
      fields.code("result", "Result", result, width: 4, name: name)
      return .connectionParameterUpdateResponse(identifier: identifier, result: result)

    case 0x14:  // LE Credit Based Connection Request §4.22: LE_PSM(2) SCID(2) MTU(2) MPS(2) credits(2)
      let psm = try d.readUInt16LE()
      let source = try d.readUInt16LE()
      let mtu = try d.readUInt16LE()
      let mps = try d.readUInt16LE()
      let credits = try d.readUInt16LE()
      fields.code("spsm", "SPSM", psm, width: 4, name: psmName(psm))
      fields.hex("source_cid", "Source CID", source, width: 4)
      fields.uint("mtu", "MTU", mtu)
      fields.uint("mps", "MPS", mps)
      fields.uint("initial_credits", "Initial credits", credits)
      return .leCreditConnectionRequest(identifier: identifier, psm: psm, sourceCID: source, mtu: mtu, mps: mps, credits: credits)

    case 0x15:  // LE Credit Based Connection Response §4.23: DCID MTU MPS credits result
      let destination = try d.readUInt16LE()
      let mtu = try d.readUInt16LE()
      let mps = try d.readUInt16LE()
      let credits = try d.readUInt16LE()
      let result = try d.readUInt16LE()
      fields.hex("destination_cid", "Destination CID", destination, width: 4)
      fields.uint("mtu", "MTU", mtu)
      fields.uint("mps", "MPS", mps)
      fields.uint("initial_credits", "Initial credits", credits)
      fields.code("result", "Result", result, width: 4, name: leCreditResultName(result))
      return .leCreditConnectionResponse(identifier: identifier, destinationCID: destination, mtu: mtu, mps: mps, credits: credits, result: result)

    case 0x16:  // Flow Control Credit Indication §4.24: CID(2) credits(2)
      let cid = try d.readUInt16LE()
      let credits = try d.readUInt16LE()
      fields.hex("cid", "CID", cid, width: 4)
      fields.uint("credits", "Credits", credits)
      return .flowControlCredit(identifier: identifier, cid: cid, credits: credits)

    case 0x17:  // Credit Based Connection Request §4.25: SPSM MTU MPS credits SCID×1..5
      let psm = try d.readUInt16LE()
      let mtu = try d.readUInt16LE()
      let mps = try d.readUInt16LE()
      let credits = try d.readUInt16LE()
      fields.code("spsm", "SPSM", psm, width: 4, name: psmName(psm))
      fields.uint("mtu", "MTU", mtu)
      fields.uint("mps", "MPS", mps)
      fields.uint("initial_credits", "Initial credits", credits)
      let sources = try cidList(&d, into: &fields, key: "source_cids", label: "Source CIDs")
      return .creditBasedConnectionRequest(identifier: identifier, psm: psm, mtu: mtu, mps: mps, credits: credits, sourceCIDs: sources)

    case 0x18:  // Credit Based Connection Response §4.26: MTU MPS credits result DCID×1..5
      let mtu = try d.readUInt16LE()
      let mps = try d.readUInt16LE()
      let credits = try d.readUInt16LE()
      let result = try d.readUInt16LE()
      fields.uint("mtu", "MTU", mtu)
      fields.uint("mps", "MPS", mps)
      fields.uint("initial_credits", "Initial credits", credits)
      fields.code("result", "Result", result, width: 4, name: creditBasedResultName(result))
      let destinations = try cidList(&d, into: &fields, key: "destination_cids", label: "Destination CIDs")
      return .creditBasedConnectionResponse(identifier: identifier, mtu: mtu, mps: mps, credits: credits, result: result, destinationCIDs: destinations)

    case 0x19:  // Credit Based Reconfigure Request §4.27: MTU MPS DCID×1..5
      let mtu = try d.readUInt16LE()
      let mps = try d.readUInt16LE()
      fields.uint("mtu", "MTU", mtu)
      fields.uint("mps", "MPS", mps)
      let destinations = try cidList(&d, into: &fields, key: "destination_cids", label: "Destination CIDs")
      return .creditBasedReconfigureRequest(identifier: identifier, mtu: mtu, mps: mps, destinationCIDs: destinations)

    case 0x1A:  // Credit Based Reconfigure Response §4.28: result(2)
      let result = try d.readUInt16LE()
      fields.code("result", "Result", result, width: 4, name: reconfigureResultName(result))
      return .creditBasedReconfigureResponse(identifier: identifier, result: result)

    default:
      if !d.isAtEnd { fields.bytes("data", "Data", d.readRemaining()) }
    }
    return .other(code: code, identifier: identifier)
  }

  // MARK: - Parts

  /// The CIDs that end a credit-based command, two bytes each (the spec allows 1 to 5).
  /// An odd final byte is left for the caller to show as unexpected.
  static func cidList(_ d: inout ByteReader, into fields: inout FieldList, key: Name, label: Name) throws(DecodeError) -> [UInt16] {
    var cids: [UInt16] = []
    fields.beginArray(key, label)
    defer { fields.end() }
    while d.remaining >= 2 {
      let cid = try d.readUInt16LE()
      cids.append(cid)
      fields.hex("", "CID", cid, width: 4)
    }
    return cids
  }

  /// Configuration options §5: type(1, bit 7 = hint) length(1) data(length).
  static func configurationOptions(_ d: inout ByteReader, into fields: inout FieldList) throws(DecodeError) -> [SignalingCommand.ConfigurationOption] {
    var told: [SignalingCommand.ConfigurationOption] = []
    guard !d.isAtEnd else { return told }
    fields.beginArray("options", "Options")
    defer { fields.end() }
    while !d.isAtEnd {
      let type = try d.readUInt8()
      let kind = type & 0x7F
      fields.beginObject("", "Option")
      defer { fields.end() }
      fields.code("option_type", "Type", kind, width: 2, name: optionName(kind))
      if type & 0x80 != 0 { fields.flag("hint", "Hint", true) }
      let length = Int(try d.readUInt8())
      fields.addVerbose("length", "Length", .unsigned(UInt64(length), .decimal))
      var option = try d.readReader(count: length)
      switch kind {
      case 0x01:
        let mtu = try option.readUInt16LE()
        fields.uint("mtu", "MTU", mtu)
        told.append(.mtu(mtu))
      case 0x02:
        let timeout = try option.readUInt16LE()
        fields.measure("flush_timeout", "Flush timeout", timeout, scale: 1, unit: "ms")
      case 0x03:  // Quality of Service §5.3
        fields.hex("qos_flags", "Flags", try option.readUInt8(), width: 2)
        let service = try option.readUInt8()
        fields.code("service_type", "Service type", service, width: 2, name: serviceTypeName(service))
        fields.uint("token_rate", "Token rate (bytes/s)", try option.readUInt32LE())
        fields.uint("token_bucket_size", "Token bucket size (bytes)", try option.readUInt32LE())
        fields.uint("peak_bandwidth", "Peak bandwidth (bytes/s)", try option.readUInt32LE())
        fields.measure("latency", "Latency", try option.readUInt32LE(), scale: 1, unit: "us")
        fields.measure("delay_variation", "Delay variation", try option.readUInt32LE(), scale: 1, unit: "us")
      case 0x04:  // Retransmission and Flow Control §5.4
        let mode = try option.readUInt8()
        fields.code("mode", "Mode", mode, width: 2, name: modeName(mode))
        fields.uint("tx_window", "TxWindow size", try option.readUInt8())
        fields.uint("max_transmit", "MaxTransmit", try option.readUInt8())
        fields.measure("retransmission_timeout", "Retransmission timeout", try option.readUInt16LE(), scale: 1, unit: "ms")
        fields.measure("monitor_timeout", "Monitor timeout", try option.readUInt16LE(), scale: 1, unit: "ms")
        fields.uint("mps", "MPS", try option.readUInt16LE())
        told.append(.mode(mode))
      case 0x05:  // Frame Check Sequence §5.5
        let fcs = try option.readUInt8()
        fields.code("fcs", "FCS", fcs, width: 2, name: fcs == 0 ? "No FCS" : (fcs == 1 ? "16-bit FCS" : nil))
      case 0x06:  // Extended Flow Specification §5.6
        fields.uint("identifier", "Identifier", try option.readUInt8())
        let service = try option.readUInt8()
        fields.code("service_type", "Service type", service, width: 2, name: serviceTypeName(service))
        fields.uint("max_sdu_size", "Maximum SDU size", try option.readUInt16LE())
        fields.measure("sdu_inter_arrival_time", "SDU inter-arrival time", try option.readUInt32LE(), scale: 1, unit: "us")
        fields.measure("access_latency", "Access latency", try option.readUInt32LE(), scale: 1, unit: "us")
        fields.measure("flush_timeout", "Flush timeout", try option.readUInt32LE(), scale: 1, unit: "us")
      case 0x07:  // Extended Window Size §5.7
        fields.uint("max_window_size", "Maximum window size", try option.readUInt16LE())
      default:
        if !option.isAtEnd { fields.bytes("data", "Data", option.readRemaining()) }
      }
      if !option.isAtEnd { fields.bytes("extra", "Unexpected bytes", option.readRemaining()) }
    }
    return told
  }

  /// Information Response data on success §4.11.
  /// Returns the connectionless MTU when that is the type.
  static func informationData(type: UInt16, _ d: inout ByteReader, into fields: inout FieldList) throws(DecodeError) -> UInt16? {
    switch type {
    case 0x0001:
      let mtu = try d.readUInt16LE()
      fields.uint("connectionless_mtu", "Connectionless MTU", mtu)
      return mtu
    case 0x0002:
      let mask = try d.readUInt32LE()
      fields.hex("extended_features", "Extended features", mask, width: 8)
      for (bit, key, label) in featureBits where mask & (1 << bit) != 0 { fields.flag(key, label, true) }
    case 0x0003:
      let mask = try d.readUInt64LE()
      fields.hex("fixed_channels", "Fixed channels", mask, width: 16)
      for (bit, key, label) in fixedChannelBits where mask & (1 << bit) != 0 { fields.flag(key, label, true) }
    default:
      break
    }
    return nil
  }

  /// Extended feature mask bits §4.12.
  static let featureBits: [(UInt32, Name, Name)] = [
    (0, "flow_control_mode", "Flow control mode"),
    (1, "retransmission_mode", "Retransmission mode"),
    (2, "bidirectional_qos", "Bi-directional QoS"),
    (3, "enhanced_retransmission_mode", "Enhanced Retransmission Mode"),
    (4, "streaming_mode", "Streaming Mode"),
    (5, "fcs_option", "FCS option"),
    (6, "extended_flow_spec", "Extended Flow Specification for BR/EDR"),
    (7, "fixed_channels_supported", "Fixed channels"),
    (8, "extended_window_size", "Extended window size"),
    (9, "unicast_connectionless_data", "Unicast connectionless data reception"),
    (10, "enhanced_credit_based_mode", "Enhanced Credit Based Flow Control Mode"),
  ]

  /// Fixed channels supported bits §4.13 (bit n = CID n).
  static let fixedChannelBits: [(UInt64, Name, Name)] = [
    (1, "signaling_channel", "L2CAP signaling channel"),
    (2, "connectionless", "Connectionless reception"),
    (3, "amp_manager", "AMP Manager protocol"),
    (7, "br_edr_security_manager", "BR/EDR Security Manager"),
    (63, "amp_test_manager", "AMP test manager"),
  ]

  // MARK: - Names (Core Vol 3 Part A)
}
