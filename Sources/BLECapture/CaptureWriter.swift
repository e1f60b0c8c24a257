import BLECore

/// The container formats bledissect can write (for conversion, `-w`, and test fixtures).
package enum CaptureWriteFormat: Sendable, Hashable {
  case btsnoopH1, btsnoopH4, btsnoopMonitor
  case packetLogger(bigEndian: Bool)
  /// Classic pcap, microsecond timestamps, with a link type of `PcapLinkType.readable`.
  case pcap(PcapLinkType)
  /// pcapng with one interface.
  case pcapng(PcapLinkType)

  /// Classic pcap, link type 201 (H4 + direction).
  package static let pcapH4WithDirection = pcap(.h4WithDirection)
  /// Classic pcap, link type 254 (Linux monitor).
  package static let pcapMonitor = pcap(.linuxMonitor)
  /// Classic pcap, link type 187 (H4 without direction).
  package static let pcapH4 = pcap(.h4)
  /// pcapng, link type 201.
  package static let pcapngH4WithDirection = pcapng(.h4WithDirection)
}

/// Serializes normalized records into a capture format, appending to a byte buffer.
///
/// Records a format cannot carry (a note in btsnoop H4, SCO in H1) are skipped and counted.
package struct CaptureWriter: Sendable {
  package let format: CaptureWriteFormat
  package private(set) var output: [UInt8] = []
  package private(set) var skipped = 0

  /// `comment`: the file's own comment, in pcapng's section header (the other formats have
  /// no place for one); Wireshark shows it in its capture file properties.
  package init(format: CaptureWriteFormat, comment: String? = nil) {
    self.format = format
    writeHeader(comment: comment)
  }

  /// Moves the bytes written so far out of the writer (for streaming to a file).
  package mutating func takeOutput() -> [UInt8] {
    defer { output.removeAll(keepingCapacity: true) }
    return output
  }

  mutating func writeHeader(comment: String?) {
    switch format {
    case .btsnoopH1, .btsnoopH4, .btsnoopMonitor:
      output += BTSnoopFormat.magic
      appendBE32(1)
      let datalink: BTSnoopFormat.Datalink = format == .btsnoopH1 ? .h1 : (format == .btsnoopH4 ? .h4 : .linuxMonitor)
      appendBE32(datalink.rawValue)
    case .packetLogger: break
    case .pcap(let linkType):
      appendLE32(0xA1B2_C3D4)
      appendLE16(2)
      appendLE16(4)
      appendLE32(0)  // thiszone
      appendLE32(0)  // sigfigs
      appendLE32(UInt32(CaptureFile.maximumPacketLength))
      appendLE32(UInt32(bitPattern: linkType.value))
    case .pcapng(let linkType):
      // Section Header Block: type, length, byte-order magic, version 1.0, section length -1,
      // options (a comment), length again.
      let options = Self.commentOption(comment)
      let sectionLength = UInt32(28 + options.count)
      appendLE32(0x0A0D_0D0A)
      appendLE32(sectionLength)
      appendLE32(0x1A2B_3C4D)
      appendLE16(1)
      appendLE16(0)
      appendLE32(0xFFFF_FFFF)
      appendLE32(0xFFFF_FFFF)
      output += options
      appendLE32(sectionLength)
      // Interface Description Block: link type, snaplen, no options (µs resolution default).
      appendLE32(1)
      appendLE32(20)
      appendLE16(UInt16(truncatingIfNeeded: linkType.value))
      appendLE16(0)
      appendLE32(UInt32(CaptureFile.maximumPacketLength))
      appendLE32(20)
    }
  }

  /// `comment`: the packet's comment in pcapng (Wireshark shows it with the packet); the other
  /// formats have no place for one and write the record without it.
  package mutating func write(_ record: CaptureRecord, comment: String? = nil) {
    switch format {
    case .btsnoopH4:
      guard let indicator = record.kind.h4Indicator else { skipped += 1; return }
      let commandOrEvent = record.kind == .command || record.kind == .event
      let flags: UInt32 = (record.direction == .controllerToHost ? 1 : 0) | (commandOrEvent ? 2 : 0)
      btsnoopRecord(record, prefix: [indicator], flags: flags)
    case .btsnoopH1:
      let flags: UInt32
      switch record.kind {
      case .command: flags = 2
      case .event: flags = 3
      case .acl: flags = record.direction == .controllerToHost ? 1 : 0
      default: skipped += 1; return
      }
      btsnoopRecord(record, prefix: [], flags: flags)
    case .btsnoopMonitor:
      guard let opcode = MonitorOpcode.opcode(for: record.kind, direction: record.direction) else { skipped += 1; return }
      btsnoopRecord(record, prefix: [], flags: UInt32(record.adapter) << 16 | UInt32(opcode))
    case .packetLogger(let bigEndian):
      guard let type = Self.packetLoggerType(record) else { skipped += 1; return }
      let length = UInt32(clamping: 9 + record.bytes.count)
      let time = Timestamp.split(record.timestamp)
      let seconds = UInt32(truncatingIfNeeded: time.seconds)
      let micros = UInt32(truncatingIfNeeded: time.micros)
      for value in [length, seconds, micros] { bigEndian ? appendBE32(value) : appendLE32(value) }
      output.append(type)
      output += record.bytes
    case .pcap(let linkType):
      guard let packet = linkType.packet(record) else { skipped += 1; return }
      pcapRecord(record, packet: packet, extra: packet.count - record.bytes.count)
    case .pcapng(let linkType):
      guard let packet = linkType.packet(record) else { skipped += 1; return }
      pcapngRecord(record, packet: packet, extra: packet.count - record.bytes.count, comment: comment)
    }
  }

  static func packetLoggerType(_ record: CaptureRecord) -> UInt8? {
    let rx = record.direction == .controllerToHost
    switch record.kind {
    case .command: return 0x00
    case .event: return 0x01
    case .acl: return rx ? 0x03 : 0x02
    case .sco: return rx ? 0x09 : 0x08
    case .iso: return rx ? 0x0D : 0x0C
    case .note(.syslog): return 0xF7
    case .note(.kernel): return 0xF8
    case .note(.kernelDebug): return 0xF9
    case .note(.error): return 0xFA
    case .note(.power): return 0xFB
    case .note(.config): return 0xFD
    case .note(.newController): return 0xFE
    case .note(.vendorDiagnostic): return 0x0B
    case .note: return 0xFC
    default: return nil
    }
  }

  mutating func btsnoopRecord(_ record: CaptureRecord, prefix: [UInt8], flags: UInt32) {
    let included = UInt32(clamping: prefix.count + record.bytes.count)
    appendBE32(Self.originalLength(record, extra: prefix.count))
    appendBE32(included)
    appendBE32(flags)
    appendBE32(0)
    let time = UInt64(bitPattern: record.timestamp &+ BTSnoopFormat.unixEpochOffset)
    appendBE32(UInt32(truncatingIfNeeded: time >> 32))
    appendBE32(UInt32(truncatingIfNeeded: time))
    output += prefix
    output += record.bytes
  }

  mutating func pcapRecord(_ record: CaptureRecord, packet: [UInt8], extra: Int) {
    let time = Timestamp.split(record.timestamp)
    appendLE32(UInt32(truncatingIfNeeded: time.seconds))
    appendLE32(UInt32(truncatingIfNeeded: time.micros))
    appendLE32(UInt32(clamping: packet.count))
    appendLE32(Self.originalLength(record, extra: extra))
    output += packet
  }

  mutating func pcapngRecord(_ record: CaptureRecord, packet: [UInt8], extra: Int, comment: String?) {
    let padded = (packet.count + 3) & ~3
    let options = Self.commentOption(comment)
    let blockLength = UInt32(clamping: 32 + padded + options.count)
    appendLE32(6)
    appendLE32(blockLength)
    appendLE32(0)  // interface id
    // pcapng's times are unsigned: a time before 1970 (a pcap's seconds read as signed) is
    // written as 1970, not as a time far in the future that makes every later record go back.
    let time = UInt64(max(record.timestamp, 0))
    appendLE32(UInt32(truncatingIfNeeded: time >> 32))
    appendLE32(UInt32(truncatingIfNeeded: time))
    appendLE32(UInt32(clamping: packet.count))
    appendLE32(Self.originalLength(record, extra: extra))
    output += packet
    output += [UInt8](repeating: 0, count: padded - packet.count)
    output += options
    appendLE32(blockLength)
  }

  /// The pcapng options holding one comment (opt_comment, code 1, UTF-8, padded to 4 bytes)
  /// and the end of options; none for no comment. An option's length is 16 bits: a longer
  /// comment is cut at a character's start.
  static func commentOption(_ comment: String?) -> [UInt8] {
    guard let comment, !comment.isEmpty else { return [] }
    var text = Array(comment.utf8)
    if text.count > 0xFFFC {
      var cut = 0xFFFC
      while cut > 0, text[cut] & 0xC0 == 0x80 { cut -= 1 }
      text.removeSubrange(cut...)
    }
    var option: [UInt8] = [1, 0, UInt8(text.count & 0xFF), UInt8(text.count >> 8)]
    option += text
    option += [UInt8](repeating: 0, count: (4 - text.count % 4) % 4)
    return option + [0, 0, 0, 0]
  }

  /// The length the packet had on the wire, with the format's own prefix: never less than what
  /// is written, and clamped to 32 bits (a record read from a hostile file may claim 0xFFFFFFFF).
  static func originalLength(_ record: CaptureRecord, extra: Int) -> UInt32 {
    UInt32(clamping: max(record.originalLength, record.bytes.count).saturatingAdd(extra))
  }

  mutating func appendBE32(_ value: UInt32) {
    output += [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
  }
  mutating func appendLE32(_ value: UInt32) {
    output += [UInt8(value & 0xFF), UInt8((value >> 8) & 0xFF), UInt8((value >> 16) & 0xFF), UInt8(value >> 24)]
  }
  mutating func appendLE16(_ value: UInt16) {
    output += [UInt8(value & 0xFF), UInt8(value >> 8)]
  }
}
