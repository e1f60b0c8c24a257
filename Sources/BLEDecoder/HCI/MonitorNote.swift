import BLECore

/// Records that are not HCI packets: Linux monitor index and note records, PacketLogger text.
///
/// Layouts: shared/reference/capture-formats.md §2.4 and §4.2.
enum MonitorNote {
  /// Text up to the first NUL, with trailing whitespace dropped.
  static func text(_ bytes: ByteView) -> String {
    var end = bytes.firstIndex(of: 0) ?? bytes.endIndex
    while end > bytes.startIndex, let last = Optional(bytes[end - 1]), last == 0x0A || last == 0x0D || last == 0x20 || last == 0x09 {
      end -= 1
    }
    return String(decoding: bytes[bytes.startIndex..<end], as: UTF8.self)
  }

  static func readCString(_ reader: inout ByteReader) -> String {
    let rest = reader.readRemaining()
    let end = rest.firstIndex(of: 0) ?? rest.endIndex
    let value = String(decoding: rest[rest.startIndex..<end], as: UTF8.self)
    let consumed = end < rest.endIndex ? end - rest.startIndex + 1 : rest.count
    reader = ByteReader(rest.dropFirst(consumed), layer: .note)
    return value
  }

  static func decode(_ reader: inout ByteReader, kind: PacketKind, into frame: inout DissectedFrame) throws(DecodeError) {
    switch kind {
    case .indexAdded:
      frame.title = "New Index"
      let type = try reader.readUInt8()
      frame.fields.code("controller_type", "Type", type, width: 2, name: type == 0 ? "primary" : (type == 1 ? "AMP" : nil))
      let bus = try reader.readUInt8()
      frame.fields.code("bus", "Bus", bus, width: 2, name: MonitorOpcode.busName(bus))
      let address = try reader.readBDAddr()
      frame.fields.add("address", "Address", .address(address, nil))
      let name = text(try reader.readBytes(count: 8))
      frame.fields.add("name", "Name", .text(name))
      frame.summary = "\(name) \(address)"
    case .indexRemoved: frame.title = "Delete Index"
    case .indexOpened: frame.title = "Open Index"
    case .indexClosed: frame.title = "Close Index"
    case .indexInfo:
      frame.title = "Index Info"
      let address = try reader.readBDAddr()
      frame.fields.add("address", "Address", .address(address, nil))
      let company = try reader.readUInt16LE()
      frame.fields.code("manufacturer", "Manufacturer", company, width: 4, name: AssignedNumbers.companyName(company))
      frame.summary = "\(address) \(AssignedNumbers.companyName(company)?.description ?? "")"
    case .note(.vendorDiagnostic):
      frame.title = "Vendor Diagnostic"
      frame.fields.bytes("data", "Data", reader.readRemaining())
    case .note(.userLogging):
      frame.title = "User Logging"
      let priority = try reader.readUInt8()
      frame.fields.uint("priority", "Priority", priority)
      let identLength = Int(try reader.readUInt8())
      let ident = text(try reader.readBytes(count: identLength))
      frame.fields.add("ident", "Ident", .text(ident))
      let message = text(reader.readRemaining())
      frame.fields.add("message", "Message", .text(message))
      frame.summary = ident.isEmpty ? message : "\(ident): \(message)"
    case .note(.syslog):
      frame.title = "Syslog"
      frame.fields.uint("pid", "Process ID", try reader.readUInt32LE())
      frame.fields.uint("message_type", "Message type", try reader.readUInt8())
      let process = readCString(&reader)
      let sender = readCString(&reader)
      let subsystem = readCString(&reader)
      let category = readCString(&reader)
      let message = readCString(&reader)
      frame.fields.add("process", "Process", .text(process))
      frame.fields.add("sender", "Sender", .text(sender))
      frame.fields.add("subsystem", "Subsystem", .text(subsystem))
      frame.fields.add("category", "Category", .text(category))
      frame.fields.add("message", "Message", .text(message))
      frame.summary = "\(process): \(message)"
    case .note(let noteKind):
      switch noteKind {
      case .system: frame.title = "System Note"
      case .kernel: frame.title = "Kernel"
      case .kernelDebug: frame.title = "Kernel Debug"
      case .error: frame.title = "Error"
      case .power: frame.title = "Power"
      case .config: frame.title = "Config"
      case .newController: frame.title = "New Controller"
      default: frame.title = "Note"
      }
      let message = text(reader.readRemaining())
      // The header line already shows the text; the detail repeats it only with -v.
      frame.fields.addVerbose("text", "Text", .text(message))
      frame.summary = message
    case .control(let opcode):
      switch opcode {
      case 14: frame.title = "Control Open"
      case 15: frame.title = "Control Close"
      case 16: frame.title = "Control Command"
      default: frame.title = "Control Event"
      }
      frame.fields.hex("cookie", "Cookie", try reader.readUInt32LE(), width: 8)
      if opcode == 14 {
        let format = try reader.readUInt16LE()
        frame.fields.code("format", "Format", format, width: 4, name: format == 0 ? "RAW" : (format == 1 ? "USER" : (format == 2 ? "CONTROL" : nil)))
        let major = try reader.readUInt8()
        let revision = try reader.readUInt16LE()
        frame.fields.add("control_version", "Version", .text("\(major).\(revision)"))
        frame.fields.hex("flags", "Flags", try reader.readUInt32LE(), width: 8)
        let length = Int(try reader.readUInt8())
        let command = text(try reader.readBytes(count: length))
        frame.fields.add("process", "Process", .text(command))
        frame.summary = command
      } else if opcode == 16 || opcode == 17 {
        frame.fields.hex("code", opcode == 16 ? "Management opcode" : "Management event", try reader.readUInt16LE(), width: 4)
      }
      if !reader.isAtEnd { frame.fields.bytes("data", "Data", reader.readRemaining()) }
    default:
      frame.title = "Unknown Record"
      frame.fields.bytes("data", "Data", reader.readRemaining())
    }
  }
}
