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
      let type = try reader.readUInt8()
      frame.fields.code("controller_type", "Type", type, width: 2, name: type == 0 ? "primary" : (type == 1 ? "AMP" : nil))
      let bus = try reader.readUInt8()
      frame.fields.code("bus", "Bus", bus, width: 2, name: MonitorOpcode.busName(bus))
      let address = try reader.readBDAddr()
      frame.fields.add("address", "Address", .address(address, nil))
      let name = text(try reader.readBytes(count: 8))
      frame.fields.add("name", "Name", .text(name))
      frame.header = .indexAdded(name: name, address: address)
    case .indexRemoved, .indexOpened, .indexClosed:
      break  // nothing but the kind (`PacketKind.recordTitle`)
    case .indexInfo:
      let address = try reader.readBDAddr()
      frame.fields.add("address", "Address", .address(address, nil))
      let company = try reader.readUInt16LE()
      frame.fields.code("manufacturer", "Manufacturer", company, width: 4, name: AssignedNumbers.companyName(company))
      frame.header = .indexInfo(address, manufacturer: company)
    case .note(.vendorDiagnostic):
      frame.fields.bytes("data", "Data", reader.readRemaining())
    case .note(.userLogging):
      let priority = try reader.readUInt8()
      frame.fields.uint("priority", "Priority", priority)
      let identLength = Int(try reader.readUInt8())
      let ident = text(try reader.readBytes(count: identLength))
      frame.fields.add("ident", "Ident", .text(ident))
      let message = text(reader.readRemaining())
      frame.fields.add("message", "Message", .text(message))
      frame.header = .note(from: ident.isEmpty ? nil : ident, text: message)
    case .note(.syslog):
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
      frame.header = .note(from: process, text: message)
    case .note:
      let message = text(reader.readRemaining())
      // The header line already shows the text; the detail repeats it only with -v.
      frame.fields.addVerbose("text", "Text", .text(message))
      frame.header = .note(from: nil, text: message)
    case .control(let opcode):
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
        frame.header = .note(from: nil, text: command)
      } else if opcode == 16 || opcode == 17 {
        frame.fields.hex("code", opcode == 16 ? "Management opcode" : "Management event", try reader.readUInt16LE(), width: 4)
      }
      if !reader.isAtEnd { frame.fields.bytes("data", "Data", reader.readRemaining()) }
    default:
      frame.fields.bytes("data", "Data", reader.readRemaining())
    }
  }
}
