import BLECore
import BLEDecoder

/// Human-readable output: one header line per frame, then indented detail lines.
///
/// `#12        0.012345 tx ACL   conn 64 C0:FF:EE:00:00:01 ACL Data: handle 64 start dlen 7`
package struct TextRenderer: FrameRenderer {
  package var time: TimeDisplay
  package var color: Bool
  /// Detail lines under each header; off gives one line per frame.
  package var details: Bool
  /// Also show fields marked verbose (lengths, opcode parts).
  package var verbose: Bool
  /// Header lines longer than this many columns end in "…" (`-1` on a terminal); nil: never.
  package var lineWidth: Int?
  var firstTimestamp: Int64?
  var previousTimestamp: Int64?
  var firstAdapter: UInt16?
  var showAdapter = false
  /// The last peer address written, and its text.
  var peerText = (address: BDAddr(rawValue: UInt64.max), text: PackedText())
  /// The summary of a frame whose words are derived at rendering (ATT), reused.
  var derivedSummary = SummaryLine()

  /// One-line output shows no fields; plain text, those that are not verbose.
  package var fieldDetail: FieldDetail { !details ? .none : (verbose ? .all : .plain) }

  package init(time: TimeDisplay = .relative, color: Bool = false, details: Bool = true, verbose: Bool = false, lineWidth: Int? = nil) {
    self.time = time
    self.color = color
    self.details = details
    self.verbose = verbose
    self.lineWidth = lineWidth
    derivedSummary.compact = !details
  }

  enum Style {
    static let reset: Name = "\u{1B}[0m"
    static let dim: Name = "\u{1B}[2m"
    static let bold: Name = "\u{1B}[1m"
    static let red: Name = "\u{1B}[31m"
    static let green: Name = "\u{1B}[32m"
    static let yellow: Name = "\u{1B}[33m"
    static let blue: Name = "\u{1B}[34m"
    static let magenta: Name = "\u{1B}[35m"
    static let cyan: Name = "\u{1B}[36m"
  }

  @inline(__always) func style(_ code: Name, _ out: inout OutputBuffer) {
    if color { out.append(code) }
  }

  /// The protocol column: the highest layer decoded above HCI, else the kind of record.
  static func protocolLabel(layer: Name, kind: PacketKind, attOpcode: UInt8?) -> Name {
    if attOpcode != nil { return "ATT" }
    if !layer.isEmpty { return layer }
    return kind.textLabel
  }

  /// One-line output (`-1`) names the PDUs that fill most captures briefly, so the common
  /// notification line fits 100 columns.
  static func shortTitle(_ frame: inout DissectedFrame, attOpcode: UInt8?) -> Name {
    switch attOpcode {
    case 0x1B?: return "Notify"
    case 0x1D?: return "Indicate"
    case 0x1E?: return "Confirm"
    default: return FrameDescription.title(&frame, attOpcode: attOpcode)
    }
  }

  /// Column widths of the header line: frame numbers up to 99999, times up to 99999.999999 s
  /// (or -9999.999999 s) and UTC times stay in their columns, so lines do not drift.
  static let numberWidth = 6
  static let secondsWidth = 12
  static let dateTimeWidth = 26
  static let protocolWidth = 5

  /// Takes note of a frame the filter hides: times stay relative to the capture's first frame
  /// and deltas to the previous frame captured, shown or not (Wireshark's "delta", not "delta
  /// displayed").
  package mutating func skip(_ frame: inout DissectedFrame) {
    let timestamp = frame.record.timestamp
    if firstTimestamp == nil { firstTimestamp = timestamp }
    previousTimestamp = timestamp
    noteAdapter(frame.record.kind, frame.record.adapter)
  }

  @inline(__always) mutating func noteAdapter(_ kind: PacketKind, _ adapter: UInt16) {
    guard kind.isHCIPacket else { return }
    if firstAdapter == nil { firstAdapter = adapter }
    if adapter != firstAdapter { showAdapter = true }
  }

  package mutating func render(_ frame: inout DissectedFrame, to out: inout OutputBuffer) {
    // Read through the frame, not a copy of the record: copying it would retain its bytes,
    // whose reference count lives on the dissecting thread's cache line.
    let timestamp = frame.record.timestamp
    let adapter = frame.record.adapter
    let direction = frame.record.direction
    noteAdapter(frame.record.kind, adapter)
    let lineStart = out.count

    style(Style.dim, &out)
    let numberStart = out.count
    out.byte(UInt8(ascii: "#"))
    out.decimal(frame.number)
    out.spaces(Self.numberWidth - (out.count - numberStart))
    out.byte(0x20)
    let timeStart = out.count
    if firstTimestamp == nil { firstTimestamp = timestamp }
    switch time {
    case .relative:
      out.seconds(Timestamp.elapsed(from: firstTimestamp!, to: timestamp), rightAlignedIn: Self.secondsWidth)
    case .delta:
      out.seconds(Timestamp.elapsed(from: previousTimestamp ?? timestamp, to: timestamp), rightAlignedIn: Self.secondsWidth)
    case .absolute:
      out.utcDateTime(timestamp)
      out.alignRight(from: timeStart, width: Self.dateTimeWidth)
    }
    previousTimestamp = timestamp
    style(Style.reset, &out)
    out.byte(0x20)
    switch direction {
    case .hostToController?:
      style(Style.blue, &out)
      out.append("tx")
    case .controllerToHost?:
      style(Style.green, &out)
      out.append("rx")
    case nil:
      // A sniffed packet: which side sent it, "C→" (central) or "P→" (peripheral); in lower
      // case when worked out (the events' rhythm, the ATT PDU) rather than said by the sniffer
      // or proved by the MIC.
      if frame.record.kind == .airPacket, let sender = frame.direction {
        let source = frame.air?.directionSource
        let inferred = source == .timing || source == .att
        if sender == .hostToController {
          style(Style.blue, &out)
          if inferred { out.append("c→") } else { out.append("C→") }
        } else {
          style(Style.green, &out)
          if inferred { out.append("p→") } else { out.append("P→") }
        }
      } else {
        out.append("  ")
      }
    }
    style(Style.reset, &out)
    out.byte(0x20)
    let attOpcode = frame.attOpcode
    let label = Self.protocolLabel(layer: FrameDescription.layerLabel(&frame, attOpcode: attOpcode), kind: frame.record.kind, attOpcode: attOpcode)
    out.append(label)
    out.spaces(Self.protocolWidth - label.utf8CodeUnitCount)
    out.byte(0x20)
    if showAdapter, adapter != CaptureRecord.noController {
      out.append("[hci")
      out.decimal(Int(adapter))
      out.append("] ")
    }
    var address: Range<Int>?
    if let connection = frame.connection {
      style(Style.cyan, &out)
      out.append("conn ")
      out.decimal(Int(connection.handle))
      if let peer = connection.peer {
        let start = out.count
        out.byte(0x20)
        // Frames of one link repeat its address: format it once.
        if peer != peerText.address { peerText = (peer, OutputBuffer.addressText(peer)) }
        out.append(peerText.text)
        address = start..<out.count
      }
      style(Style.reset, &out)
      out.byte(0x20)
    }
    style(Style.bold, &out)
    out.append(details ? FrameDescription.title(&frame, attOpcode: attOpcode) : Self.shortTitle(&frame, attOpcode: attOpcode))
    style(Style.reset, &out)
    let separator = FrameDescription.summary(&frame, into: &derivedSummary)
    if !derivedSummary.isEmpty {
      out.append(separator)
      Self.writeSummary(derivedSummary, &out)
    }
    // Clipped before the mark, so a long malformed line keeps it. A line too wide for the
    // terminal leaves out the peer's address first ("conn N" stays: the connection's first line
    // names its peer), then is cut.
    if let lineWidth {
      let columns = lineWidth - (frame.malformed == nil ? 0 : 13)
      if let address, out.columns(from: lineStart) > columns { out.remove(address) }
      out.clipLine(from: lineStart, columns: columns, resetColour: color)
    }
    if frame.malformed != nil {
      style(Style.red, &out)
      out.append("  [malformed]")
      style(Style.reset, &out)
    }
    if !frame.diagnostics.isEmpty { Self.markRuleBroken(frame.diagnostics, color: color, &out) }
    out.byte(0x0A)
    if details {
      Self.renderFields(frame.fields, verbose: verbose, &out)
      if let error = frame.malformed {
        style(Style.red, &out)
        out.append("    malformed: ")
        Self.writeText(error.description, &out)
        style(Style.reset, &out)
        out.byte(0x0A)
      }
      if verbose && !frame.record.bytes.isEmpty { Self.hexDump(frame.record.bytes, &out) }
      for diagnostic in frame.diagnostics {
        style(diagnostic.severity == .warning ? Style.yellow : Style.dim, &out)
        out.append("    ")
        out.append(diagnostic.severity == .warning ? "warning: " : "note: ")
        Self.writeText(diagnostic.message, &out)
        style(Style.reset, &out)
        out.byte(0x0A)
      }
    }
    out.flushIfFull()
  }

  // Static: a method would be handed a copy of the renderer (136 bytes) on every frame.
  static func renderFields(_ fields: FieldList, verbose: Bool, _ out: inout OutputBuffer) {
    // Groups without values show nothing: frames whose fields are all hidden cost no walk.
    if fields.leafCount == 0 || (!verbose && fields.plainLeafCount == 0) { return }
    // The stored fields are read where they lie (a field is 96 bytes: copying each one out, and
    // its value into a `FieldValue`, cost more than writing its line).
    fields.withStoredFields { entries in renderFields(entries, fields, verbose: verbose, &out) }
  }

  static func renderFields(_ entries: borrowing Span<FieldList.Stored>, _ fields: FieldList, verbose: Bool, _ out: inout OutputBuffer) {
    // Open groups by depth, as bits: groups whose title line is not printed (inline groups,
    // array elements), and open arrays (to recognise their elements). No allocation per frame;
    // decoders nest far less than 64 levels.
    var hiddenBits: UInt64 = 0
    /// How many bits `hiddenBits` has (counting them on every line costs more than the line).
    var hiddenCount = 0
    var arrayBits: UInt64 = 0
    var skipDeeperThan = Int.max
    var dashNext = false
    for index in 0..<entries.count {
      let depth = Int(entries[index].depth) & 63
      if depth > skipDeeperThan { continue }
      skipDeeperThan = Int.max
      // Groups at this depth or deeper have ended (most lines find none open).
      if (hiddenBits | arrayBits) &>> UInt64(depth) != 0 {
        let below: UInt64 = (1 &<< UInt64(depth)) &- 1
        hiddenBits &= below
        hiddenCount = hiddenBits.nonzeroBitCount
        arrayBits &= below
      }
      if entries[index].isVerbose && !verbose {
        skipDeeperThan = depth
        continue
      }
      // Most lines: a value outside any array, after no element's dash.
      if arrayBits == 0 && !dashNext && !Self.isGroup(entries[index].value) {
        Self.writeLine(entries, index, indent: 4 + 2 * (depth - hiddenCount), fields, &out)
        continue
      }
      let isElement = depth > 0 && (arrayBits &>> UInt64(depth &- 1)) & 1 != 0
      var isGroup = false
      var isArray = false
      switch entries[index].value {
      case .object: isGroup = true
      case .array:
        isGroup = true
        isArray = true
      default: break
      }
      if isGroup {
        // An empty group shows nothing.
        let hasMembers = index + 1 < entries.count && Int(entries[index + 1].depth) > depth
        if !hasMembers { continue }
        if !isArray && isElement {
          // An array element: no title; its first member follows a "- " at the element's level.
          dashNext = true
          continue
        }
        if entries[index].isInline {
          hiddenBits |= 1 &<< UInt64(depth)
          hiddenCount += 1
          continue
        }
        if isArray {
          // An array of plain values reads best on one line: "RR intervals: 812.5 ms, 820.3 ms".
          var end = index + 1
          var scalars = true
          while end < entries.count, Int(entries[end].depth) > depth {
            if Self.isGroup(entries[end].value) { scalars = false }
            end += 1
          }
          if scalars {
            if dashNext {
              // An element's first shown member (an AD structure's UUID list): its dash.
              out.spaces(4 + 2 * (depth - hiddenCount - 1))
              out.append("- ")
              dashNext = false
            } else {
              out.spaces(4 + 2 * (depth - hiddenCount))
            }
            out.append(entries[index].label)
            out.append(": ")
            for element in (index + 1)..<end {
              if element > index + 1 { out.append(", ") }
              Self.writeValue(entries, element, fields, &out)
            }
            out.byte(0x0A)
            skipDeeperThan = depth
            continue
          }
          arrayBits |= 1 &<< UInt64(depth)
        }
      }
      var shown = depth - hiddenCount
      if dashNext {
        // Print "- " in place of the last two spaces of the member's indent.
        out.spaces(4 + 2 * (shown - 1))
        out.append("- ")
        dashNext = false
        shown = -1
      } else if isElement {
        // A scalar array element: a dash and the value, no label.
        out.spaces(4 + 2 * shown)
        out.append("- ")
        Self.writeValue(entries, index, fields, &out)
        out.byte(0x0A)
        continue
      }
      if isGroup {
        if shown >= 0 { out.spaces(4 + 2 * shown) }
        out.append(entries[index].label)
        out.append(":\n")
        continue
      }
      Self.writeLine(entries, index, indent: shown >= 0 ? 4 + 2 * shown : 0, fields, &out)
    }
  }

  /// A value's line, `label: value` and the newline. The values most lines hold (numbers,
  /// flags, codes and measures with literal names) are written into room made once for the
  /// whole line; the rest as `writeValue` writes them.
  static func writeLine(_ entries: borrowing Span<FieldList.Stored>, _ index: Int, indent: Int, _ fields: FieldList, _ out: inout OutputBuffer) {
    let label = entries[index].label
    switch entries[index].value {
    case let .unsigned(number, .decimal):
      out.lineStart(indent: indent, label: label, room: TextFormat.maximumDecimal)
      out.uncheckedDecimal(number)
    case let .unsigned(number, .hex(width)):
      out.lineStart(indent: indent, label: label, room: 2 + Int(width))
      out.uncheckedHexPrefixed(number, width: Int(width))
    case let .unsigned(number, .bits(width, layout)):
      return writeBits(number, width: width, layout: layout, label: label, indent: indent, &out)
    case .signed(let number):
      out.lineStart(indent: indent, label: label, room: TextFormat.maximumDecimal)
      out.uncheckedDecimal(number)
    case .bool(let flag):
      out.lineStart(indent: indent, label: label, room: 3)
      out.uncheckedAppend(literal: flag ? "yes" : "no")
    case let .code(number, width, name):
      // `Name (0x13)`
      guard let text = (name ?? "Unknown").staticString else { return writeLineChecked(entries, index, indent: indent, fields, &out) }
      out.lineStart(indent: indent, label: label, room: text.utf8CodeUnitCount + 5 + Int(width))
      out.uncheckedAppend(literal: text)
      out.uncheckedAppend(literal: " (")
      out.uncheckedHexPrefixed(number, width: Int(width))
      out.uncheckedByte(UInt8(ascii: ")"))
    case let .measure(raw, scale, unit) where scale == 1:
      // `-52 dBm`
      guard let text = unit.staticString else { return writeLineChecked(entries, index, indent: indent, fields, &out) }
      out.lineStart(indent: indent, label: label, room: TextFormat.maximumDecimal + 1 + text.utf8CodeUnitCount)
      out.uncheckedDecimal(raw)
      out.uncheckedByte(0x20)
      out.uncheckedAppend(literal: text)
    case .staticText(let name):
      guard let text = name.staticString else { return writeLineChecked(entries, index, indent: indent, fields, &out) }
      out.lineStart(indent: indent, label: label, room: text.utf8CodeUnitCount)
      out.uncheckedAppend(literal: text)
    default:
      return writeLineChecked(entries, index, indent: indent, fields, &out)
    }
    out.uncheckedByte(0x0A)
  }

  /// A flags value (`Flags: 0x16`), then a line per bit field one level deeper, as Wireshark
  /// draws them: `.... ..1. = Sensor contact status: detected`. Out of line: only `-v` and
  /// only flags values come here.
  @inline(never)
  static func writeBits(_ number: UInt64, width: UInt8, layout: Name, label: Name, indent: Int, _ out: inout OutputBuffer) {
    out.lineStart(indent: indent, label: label, room: 2 + Int(width))
    out.uncheckedHexPrefixed(number, width: Int(width))
    out.uncheckedByte(0x0A)
    for line in BitLayout.lines(number, width: width, layout: layout) {
      out.spaces(indent + 2)
      writeText(line.bits + " = " + line.label + ": " + line.word, &out)
      out.byte(0x0A)
    }
  }

  /// A value's line, each part with its own check for room (text, bytes, addresses...).
  static func writeLineChecked(_ entries: borrowing Span<FieldList.Stored>, _ index: Int, indent: Int, _ fields: FieldList, _ out: inout OutputBuffer) {
    out.lineStart(indent: indent, label: entries[index].label, room: 0)
    writeValue(entries, index, fields, &out)
    out.byte(0x0A)
  }

  static func isGroup(_ value: FieldList.StoredValue) -> Bool {
    switch value {
    case .object, .array: return true
    default: return false
    }
  }

  /// The text form of a stored field's value, read in place (strings and bytes by their slot).
  static func writeValue(_ entries: borrowing Span<FieldList.Stored>, _ index: Int, _ fields: FieldList, _ out: inout OutputBuffer) {
    switch entries[index].value {
    case let .unsigned(number, style): writeUnsigned(number, style, &out)
    case .signed(let number): out.decimal(number)
    case .bool(let flag): out.append(flag ? "yes" : "no")
    case let .code(number, width, name): writeCode(number, width: width, name: name, &out)
    case let .codeText(number, width, slot): writeCode(number, width: width, text: fields.string(slot: slot), &out)
    case .text(let slot): writeText(fields.string(slot: slot), &out)
    case .staticText(let text): out.append(text)
    case .bytes(let slot): fields.withBytes(slot: slot) { writeBytes($0, &out) }
    case let .address(address, type): writeAddress(address, type, &out)
    case let .uuid(uuid, name): writeUUID(uuid, name, &out)
    case let .measure(raw, scale, unit): writeMeasure(raw, scale: scale, unit: unit, &out)
    case let .real(number, places, unit): writeReal(number, places: places, unit: unit, &out)
    case .null: out.append("none")
    case .object, .array: break
    }
  }

  /// The text form of a value (shared with summaries and tests).
  package static func writeValue(_ value: FieldValue, _ out: inout OutputBuffer) {
    switch value {
    case let .unsigned(number, style): writeUnsigned(number, style, &out)
    case .signed(let number): out.decimal(number)
    case .bool(let flag): out.append(flag ? "yes" : "no")
    case let .code(number, width, name): writeCode(number, width: width, name: name, &out)
    case let .codeText(number, width, name): writeCode(number, width: width, text: name, &out)
    case .text(let text): writeText(text, &out)
    case .staticText(let text): out.append(text)
    case .bytes(let data): ByteView.pinning(data) { writeBytes($0, &out) }
    case let .address(address, type): writeAddress(address, type, &out)
    case let .uuid(uuid, name): writeUUID(uuid, name, &out)
    case let .measure(raw, scale, unit): writeMeasure(raw, scale: scale, unit: unit, &out)
    case let .real(number, places, unit): writeReal(number, places: places, unit: unit, &out)
    case .null: out.append("none")
    case .object, .array: break
    }
  }

  @inline(__always) static func writeUnsigned(_ number: UInt64, _ style: NumberStyle, _ out: inout OutputBuffer) {
    switch style {
    case .decimal: out.decimal(number)
    case .hex(let width), .bits(let width, _): out.hexPrefixed(number, width: Int(width))
    }
  }

  /// `Name (0x13)`, or `Unknown (0x13)`.
  static func writeCode(_ number: UInt64, width: UInt8, name: Name?, _ out: inout OutputBuffer) {
    out.append(name ?? "Unknown")
    out.append(" (")
    out.hexPrefixed(number, width: Int(width))
    out.byte(UInt8(ascii: ")"))
  }

  static func writeCode(_ number: UInt64, width: UInt8, text: String, _ out: inout OutputBuffer) {
    writeText(text, &out)
    out.append(" (")
    out.hexPrefixed(number, width: Int(width))
    out.byte(UInt8(ascii: ")"))
  }

  static func writeText(_ text: String, _ out: inout OutputBuffer) {
    // Control characters (a newline in a device name, a UART line) would break the layout.
    if Escaping.containsControl(text) { out.append(string: Escaping.escaped(text, .line)) } else { out.append(string: text) }
  }

  static func writeBytes(_ data: ByteView, _ out: inout OutputBuffer) {
    if data.isEmpty { out.append("(empty)") } else { out.hexBytes(data, separator: 0x20) }
  }

  static func writeAddress(_ address: BDAddr, _ type: AddressType?, _ out: inout OutputBuffer) {
    out.address(address)
    if let type {
      out.append(" (")
      out.append(type.name)
      out.byte(UInt8(ascii: ")"))
    }
  }

  static func writeUUID(_ uuid: BluetoothUUID, _ name: Name?, _ out: inout OutputBuffer) {
    if let name {
      out.append(name)
      out.append(" (")
      out.uuid(uuid)
      out.byte(UInt8(ascii: ")"))
    } else {
      out.uuid(uuid)
    }
  }

  /// `-52 dBm`, or `30.00 ms (24)` for a count in units of `scale`.
  static func writeMeasure(_ raw: Int64, scale: Double, unit: Name, _ out: inout OutputBuffer) {
    if scale == 1 {
      out.decimal(raw)
      out.byte(0x20)
      out.append(unit)
    } else {
      out.fixed2(Double(raw) * scale)
      out.byte(0x20)
      out.append(unit)
      out.append(" (")
      out.decimal(raw)
      out.byte(UInt8(ascii: ")"))
    }
  }

  static func writeReal(_ number: Double, places: UInt8, unit: Name, _ out: inout OutputBuffer) {
    out.real(number, places: places)
    if !unit.isEmpty {
      out.byte(0x20)
      out.append(unit)
    }
  }

  /// `text` with its control characters written as `\n`, `\r`, `\t` and `\xNN`.
  package static func escapingControlCharacters(_ text: String) -> String {
    Escaping.escaped(text, .line)
  }

  /// The record's bytes, 16 to a line with their offset, and the same bytes as ASCII (`.` for
  /// the rest), so text in any value, decoded or not, can be read (`-v`).
  static func hexDump(_ bytes: [UInt8], _ out: inout OutputBuffer) {
    var offset = 0
    while offset < bytes.count {
      let line = bytes[offset..<min(offset + 16, bytes.count)]
      out.append("    ")
      out.hexPrefixed(UInt64(offset), width: 4)
      out.append("  ")
      out.hexBytes(line, separator: 0x20)
      out.spaces(3 * (16 - line.count) + 2)
      for byte in line { out.byte(byte >= 0x20 && byte < 0x7F ? byte : UInt8(ascii: ".")) }
      out.byte(0x0A)
      offset += 16
    }
  }

  /// The words, already text: one copy.
  /// `annotate --check`: "[! ATT-01]" after the header of a frame that proves a rule broken
  /// (the first rule; the detail lines list them all).
  @inline(never)
  static func markRuleBroken(_ diagnostics: [Diagnostic], color: Bool, _ out: inout OutputBuffer) {
    guard let first = diagnostics.first(where: { $0.kind.code.hasSuffix(".rule_broken") }) else { return }
    if color { out.append(Style.red) }
    out.append(string: "  [! " + String(first.message.prefix { $0 != " " }) + "]")
    if color { out.append(Style.reset) }
  }

  static func writeSummary(_ line: SummaryLine, _ out: inout OutputBuffer) {
    // Words hold names from the air: a control character among them is shown escaped.
    let plain = line.withText { text in
      guard !Escaping.containsControl(utf8: text) else { return false }
      out.append(text)
      return true
    }
    if !plain { writeText(line.text, &out) }
  }
}
