import BLECore
import BLEDecoder

/// JSON Lines: one object per frame, keys as documented in docs/json.md.
package struct JSONLinesRenderer: FrameRenderer {
  /// The schema version written as `"v"` on every line.
  package static let schemaVersion = 3

  /// The last peer address written, and its text.
  var peerText = (address: BDAddr(rawValue: UInt64.max), text: PackedText())

  package init() {}

  static func direction(_ direction: Direction?) -> Name? {
    switch direction {
    case .hostToController?: return "tx"
    case .controllerToHost?: return "rx"
    case nil: return nil
    }
  }

  package mutating func render(_ frame: inout DissectedFrame, to out: inout OutputBuffer) {
    // Read through the frame, not a copy of the record: copying it would retain its bytes,
    // whose reference count lives on the dissecting thread's cache line.
    let timestamp = frame.record.timestamp
    let direction = frame.record.direction
    let kind = frame.record.kind
    let adapter = frame.record.adapter
    let originalLength = frame.record.originalLength
    out.append("{\"v\":")
    out.decimal(Self.schemaVersion)
    out.append(",\"frame\":")
    out.decimal(frame.number)
    out.append(",\"ts\":")
    out.unixSeconds(timestamp)
    if let dir = Self.direction(direction) {
      out.append(",\"dir\":\"")
      out.append(dir)
      out.byte(UInt8(ascii: "\""))
    } else if kind == .airPacket, let sender = frame.direction, let source = frame.air?.directionSource {
      // (`directionSource` is set with the direction, on data packets.)
      // A sniffed data packet: the side that sent it, and how that is known.
      out.append(sender == .hostToController ? ",\"from\":\"central\",\"from_source\":\"" : ",\"from\":\"peripheral\",\"from_source\":\"")
      out.append(source.key)
      out.byte(UInt8(ascii: "\""))
    }
    out.append(",\"type\":\"")
    out.append(kind.jsonName)
    out.byte(UInt8(ascii: "\""))
    switch kind {
    case .note(let kind):
      out.append(",\"note_kind\":\"")
      out.append(string: kind.rawValue)
      out.byte(UInt8(ascii: "\""))
    case .other(let code), .control(let code):
      out.append(",\"code\":")
      out.decimal(Int(code))
    default: break
    }
    if adapter != CaptureRecord.noController {
      out.append(",\"index\":")
      out.decimal(Int(adapter))
    }
    out.append(",\"len\":")
    out.decimal(frame.capturedLength)
    if originalLength > frame.capturedLength {
      out.append(",\"orig_len\":")
      out.decimal(originalLength)
    }
    if let connection = frame.connection {
      out.append(",\"conn\":")
      out.decimal(Int(connection.handle))
      if connection.generation > 0 {
        out.append(",\"conn_generation\":")
        out.decimal(connection.generation)
      }
      if let peer = connection.peer {
        out.append(",\"peer\":\"")
        if peer != peerText.address { peerText = (peer, OutputBuffer.addressText(peer)) }
        out.append(peerText.text)
        out.byte(UInt8(ascii: "\""))
        if let type = connection.peerType {
          out.append(",\"peer_type\":")
          out.jsonString(type.name)
        }
      }
    }
    out.append(",\"name\":")
    out.jsonString(FrameDescription.title(frame))
    // Each layer is a top-level group of fields: `hci`/`info`, then `l2cap`, `att`, ...
    Self.writeFields(frame.fields, &out, leadingComma: true)
    if let error = frame.malformed {
      out.append(",\"malformed\":{\"layer\":\"")
      out.append(string: error.layer.rawValue)
      out.append("\",\"offset\":")
      out.decimal(error.offset)
      out.append(",\"message\":")
      out.jsonString(error.description)
      out.byte(UInt8(ascii: "}"))
    }
    if !frame.diagnostics.isEmpty {
      out.append(",\"diagnostics\":[")
      for (index, diagnostic) in frame.diagnostics.enumerated() {
        if index > 0 { out.byte(UInt8(ascii: ",")) }
        out.append("{\"code\":\"")
        out.append(string: diagnostic.code)
        out.append("\",\"severity\":\"")
        out.append(string: diagnostic.severity.rawValue)
        out.append("\",\"layer\":\"")
        out.append(string: diagnostic.layer.rawValue)
        out.append("\",\"message\":")
        out.jsonString(diagnostic.message)
        out.byte(UInt8(ascii: "}"))
      }
      out.byte(UInt8(ascii: "]"))
    }
    out.append("}\n")
    out.flushIfFull()
  }

  /// Writes flat depth-tagged fields as the members of an already-open object; `leadingComma`
  /// when that object already has members.
  static func writeFields(_ fields: FieldList, _ out: inout OutputBuffer, leadingComma: Bool = false) {
    // Open containers as bits (1 = array) by depth: no array to grow on the hot path.
    // Nesting deeper than 64 levels does not occur (decoders nest a handful).
    var arrays: UInt64 = 0
    var needsComma = leadingComma
    var depth = 0
    fields.withStoredFields { entries in
    for index in entries.indices {
      let fieldDepth = Int(entries[index].depth)
      // A literal key (an interned one, from a user's decoder, is written with its own check).
      let key = entries[index].key.staticString
      // Room for the closing brackets, the comma, the quoted key and an opening bracket.
      out.reserve(depth &+ (key?.utf8CodeUnitCount ?? 0) &+ 8)
      while fieldDepth < depth {
        depth -= 1
        out.uncheckedByte(arrays & (1 << UInt64(depth & 63)) != 0 ? UInt8(ascii: "]") : UInt8(ascii: "}"))
        needsComma = true
      }
      if needsComma { out.uncheckedByte(UInt8(ascii: ",")) }
      let inArray = depth > 0 && arrays & (1 << UInt64((depth - 1) & 63)) != 0
      if !inArray {
        // Keys are snake_case (a user's too: `DecoderFile.isKey`): nothing to escape.
        out.uncheckedByte(UInt8(ascii: "\""))
        if let key {
          out.uncheckedAppend(literal: key)
        } else {
          out.append(entries[index].key)
          out.reserve(3)  // the quote, the colon, a bracket
        }
        out.uncheckedByte(UInt8(ascii: "\""))
        out.uncheckedByte(UInt8(ascii: ":"))
      }
      switch entries[index].value {
      case .object:
        out.uncheckedByte(UInt8(ascii: "{"))
        arrays &= ~(1 << UInt64(depth & 63))
        depth += 1
        needsComma = false
      case .array:
        out.uncheckedByte(UInt8(ascii: "["))
        arrays |= 1 << UInt64(depth & 63)
        depth += 1
        needsComma = false
      default:
        writeValue(entries, index, inArray: inArray, fields, &out)
        needsComma = true
      }
    }
    }
    while depth > 0 {
      depth -= 1
      out.byte(arrays & (1 << UInt64(depth & 63)) != 0 ? UInt8(ascii: "]") : UInt8(ascii: "}"))
    }
  }

  /// The value, then for codes and measures the companion `key_name` / `key_<unit>` member.
  static func writeValue(_ entries: borrowing Span<FieldList.Stored>, _ index: Int, inArray: Bool, _ fields: FieldList, _ out: inout OutputBuffer) {
    let key = entries[index].key
    switch entries[index].value {
    case let .unsigned(number, style):
      // 64-bit fields (masks, random numbers, feature bits) as "0x…" strings, whatever their
      // value: JSON numbers past 2^53 lose digits in most readers (jq), and a key keeps one type.
      if case .hex(let width) = style, width >= 14 {
        out.byte(UInt8(ascii: "\""))
        out.hexPrefixed(number, width: Int(width))
        out.byte(UInt8(ascii: "\""))
      } else {
        out.decimal(number)
      }
    case .signed(let number): out.decimal(number)
    case .bool(let flag): out.append(flag ? "true" : "false")
    case let .code(number, _, name):
      out.decimal(number)
      if let name, !inArray { companion(key, "_name", &out); out.jsonString(name) }
    case let .codeText(number, _, slot):
      out.decimal(number)
      if !inArray { companion(key, "_name", &out); out.jsonString(fields.string(slot: slot)) }
    case .text(let slot): out.jsonString(fields.string(slot: slot))
    case .staticText(let text): out.jsonString(text)
    case .bytes(let slot):
      out.byte(UInt8(ascii: "\""))
      fields.withBytes(slot: slot) { out.hexBytes($0) }
      out.byte(UInt8(ascii: "\""))
    case let .address(address, type):
      out.byte(UInt8(ascii: "\""))
      out.address(address)
      out.byte(UInt8(ascii: "\""))
      if let type, !inArray { companion(key, "_type", &out); out.jsonString(type.name) }
    case let .uuid(uuid, name):
      out.byte(UInt8(ascii: "\""))
      out.uuid(uuid)
      out.byte(UInt8(ascii: "\""))
      if let name, !inArray { companion(key, "_name", &out); out.jsonString(name) }
    case let .measure(raw, scale, unit):
      out.decimal(raw)
      if scale != 1, !inArray {
        out.append(",\"")
        out.append(key)
        out.byte(UInt8(ascii: "_"))
        out.append(unit)
        out.append("\":")
        out.double(Double(raw) * scale)
      }
    case .real(let number, _, _): out.double(number)
    case .null: out.append("null")
    case .object, .array: break
    }
  }

  static func companion(_ key: Name, _ suffix: StaticString, _ out: inout OutputBuffer) {
    guard let key = key.staticString else {
      companionOutOfLine(key, suffix, &out)
      return
    }
    out.reserve(key.utf8CodeUnitCount &+ suffix.utf8CodeUnitCount &+ 4)
    out.uncheckedByte(UInt8(ascii: ","))
    out.uncheckedByte(UInt8(ascii: "\""))
    out.uncheckedAppend(literal: key)
    out.uncheckedAppend(literal: suffix)
    out.uncheckedByte(UInt8(ascii: "\""))
    out.uncheckedByte(UInt8(ascii: ":"))
  }

  /// The same for an interned key (a user's decoder).
  @inline(never) static func companionOutOfLine(_ key: Name, _ suffix: StaticString, _ out: inout OutputBuffer) {
    out.append(",\"")
    out.append(key)
    out.append(Name(suffix))
    out.append("\":")
  }
}
