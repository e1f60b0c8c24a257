import BLECore

/// HCI command packets: `opcode(2) parameter_length(1) parameters`.
///
/// The opcode packs OGF (bits 10–15) and OCF (bits 0–9). Parameters are decoded for the
/// commands of the LE central and peripheral flows and the common BR/EDR ones (inquiry, paging,
/// pairing, sniff, roles: `HCICommand+Classic.swift`); others show their raw parameter bytes.
/// The corresponding specification is Core Vol 4, Part E, §5.4.1 and §7.
public enum HCICommand {
  /// Facts a command decoder hands back to the dissector.
  public struct Context: Sendable {
    /// The connection the command is about, when it names exactly one.
    public var handle: UInt16?
    /// What the command does to links (connect, cancel, disconnect).
    public var events: [LinkEvent] = []
    /// Where vendor commands find their decoders.
    var registry: DecoderRegistry?
    public init() {}
  }

  public static func ogf(_ opcode: UInt16) -> UInt16 { opcode >> 10 }
  public static func ocf(_ opcode: UInt16) -> UInt16 { opcode & 0x03FF }

  /// The command's name; vendor commands (OGF 0x3F) and unknown opcodes get a generic one.
  public static func name(_ opcode: UInt16) -> Name {
    if let name = AssignedNumbers.hciCommandName(opcode) { return name }
    return ogf(opcode) == 0x3F ? "Vendor Command" : "Unknown Command"
  }

  static func decode(_ reader: inout ByteReader, into frame: inout DissectedFrame, context: inout Context) throws(DecodeError) {
    let opcode = try reader.readUInt16LE()
    frame.hci = .command(opcode: opcode)
    frame.fields.addVerbose("opcode", "Opcode", .code(UInt64(opcode), width: 4, name: AssignedNumbers.hciCommandName(opcode)))
    frame.fields.addVerbose("ogf", "OGF", .unsigned(UInt64(ogf(opcode)), .hex(2)))
    frame.fields.addVerbose("ocf", "OCF", .unsigned(UInt64(ocf(opcode)), .hex(4)))
    let length = Int(try reader.readUInt8())
    frame.fields.addVerbose("plen", "Parameter length", .unsigned(UInt64(length), .decimal))
    guard length <= reader.remaining else {
      throw DecodeError(.lengthMismatch(field: "parameter length", declared: length, actual: reader.remaining), layer: .hci, offset: reader.offset - 1)
    }
    var parameters = try reader.readReader(count: length)
    linkEvents(opcode: opcode, parameters, &context)
    frame.fields.beginObject("params", "Parameters", inline: true)
    defer { frame.fields.end() }
    if try !decodeParameters(opcode: opcode, &parameters, into: &frame.fields, header: &frame.header, context: &context) {
      if AssignedNumbers.hciCommandName(opcode) == nil {
        // No name to go by: say which opcode it is, as OGF and OCF.
        frame.header = .unknownCommand(opcode: opcode)
      }
      if ogf(opcode) == 0x3F, let decoder = context.registry?.vendorCommand(ocf(opcode)) {
        if let error = decoder.run(&parameters, into: &frame.fields), frame.malformed == nil { frame.malformed = error }
      }
      if !parameters.isAtEnd { frame.fields.bytes("raw", "Data", parameters.readRemaining()) }
    } else if !parameters.isAtEnd {
      frame.fields.bytes("extra", "Unexpected bytes", parameters.readRemaining())
    }
    if !reader.isAtEnd {
      frame.diagnostics.append(Diagnostic(.hciCommandTrailingBytes, "\(reader.remaining) bytes after the command parameters"))
    }
  }

  /// The link story of connection commands, read from their parameters (Core Vol 4, Part E:
  /// Create Connection §7.1.5, Create Connection Cancel §7.1.7, Disconnect §7.1.6, LE Create
  /// Connection §7.8.12, LE Create Connection Cancel §7.8.13, LE Extended Create Connection
  /// §7.8.66). The field decoders say the rest; a short parameter list says nothing here.
  static func linkEvents(opcode: UInt16, _ parameters: ByteReader, _ context: inout Context) {
    var p = parameters
    switch opcode {
    case 0x0405:
      if let peer = try? p.readBDAddr() { context.events.append(.connectRequested(peer: peer, peerType: .publicDevice, isLE: false)) }
    case 0x0408, 0x200E:
      context.events.append(.connectCancelRequested)
    case 0x0406:
      if let handle = try? p.readUInt16LE(), let reason = try? p.readUInt8() {
        context.events.append(.disconnectRequested(handle: handle & 0x0FFF, reason: reason))
      }
    case 0x200D:
      guard (try? p.skip(4)) != nil, let policy = try? p.readUInt8(), let type = try? p.readUInt8(), let peer = try? p.readBDAddr() else { return }
      context.events.append(.connectRequested(peer: policy == 0 ? peer : nil, peerType: policy == 0 ? AddressType(rawValue: type) : nil, isLE: true))
    case 0x2043, 0x2085:
      if opcode == 0x2085 { guard (try? p.skip(2)) != nil else { return } }
      guard let policy = try? p.readUInt8(), (try? p.skip(1)) != nil, let type = try? p.readUInt8(), let peer = try? p.readBDAddr() else { return }
      context.events.append(.connectRequested(peer: policy == 0 ? peer : nil, peerType: policy == 0 ? AddressType(rawValue: type) : nil, isLE: true))
    default:
      break
    }
  }
}
