/// The one escaper: how text that is not ours (names and strings from the air, users' side files
/// and decoders, file names) is shown, so that no control character reaches a terminal and a
/// hostile name cannot clear a screen, retitle a window or break a line.
///
/// Every style shows C0 controls, DEL and C1 controls (U+0080–U+009F, which some terminals obey
/// as ESC-sequences) escaped; they differ in what else their surface needs:
/// - `line`: one line of text (`\n`, `\r`, `\t`, `\x1B`, `\u009B`, and the separators `\u2028`, `\u2029`);
/// - `quoted`: `line`, also `\"` and `\\` (text shown inside quotes);
/// - `json`: a JSON string's body (`\n`, `\u001b`, `\u009b`, `\"`, `\\`: JSON's lowercase digits);
/// - `xml`: character data or an attribute (`&amp;` `&lt;` `&gt;` `&quot;` `&apos;`; controls,
///   which XML 1.0 cannot hold, as `line` shows them; U+FFFE and U+FFFF as U+FFFD);
/// - `csv`: one CSV field (`line`, then quoted as RFC 4180 when it holds `,` `"` or space edges).
/// `OutputBuffer.jsonString` is the `json` style written straight into the buffer.
public enum Escaping {
  public enum Style: Sendable { case line, quoted, json, xml, csv }

  /// Whether `scalar` is a control character every style escapes.
  @inline(__always) public static func isControl(_ value: UInt32) -> Bool {
    value < 0x20 || (0x7F...0x9F).contains(value)
  }

  /// Whether UTF-8 text holds a control character (C0, DEL, or C1 as C2 80–C2 9F) or a line or
  /// paragraph separator (E2 80 A8, E2 80 A9): the check
  /// writers make before taking the slow path.
  public static func containsControl(utf8 bytes: ByteView) -> Bool {
    var index = bytes.startIndex
    let end = bytes.endIndex
    while index < end {
      let byte = bytes[index]
      if byte < 0x20 || byte == 0x7F { return true }
      if byte == 0xC2, index + 1 < end, (0x80...0x9F).contains(bytes[index + 1]) { return true }
      if byte == 0xE2, index + 2 < end, bytes[index + 1] == 0x80, bytes[index + 2] == 0xA8 || bytes[index + 2] == 0xA9 { return true }
      index += 1
    }
    return false
  }

  public static func containsControl(_ text: String) -> Bool {
    ByteView.pinning(utf8: text) { containsControl(utf8: $0) }
  }

  /// `text` in `style`, cut after `limit` characters (then `…`).
  public static func escaped(_ text: some StringProtocol, _ style: Style = .line, limit: Int = .max) -> String {
    var result = ""
    var count = 0
    for scalar in text.unicodeScalars {
      if count == limit {
        result += "…"
        break
      }
      count += 1
      append(scalar, style, to: &result)
    }
    if style == .csv, let first = result.first, let last = result.last,
      result.contains(",") || result.contains("\"") || first == " " || last == " "
    {
      return "\"" + result.replacingAll("\"", with: "\"\"") + "\""
    }
    return result
  }

  static func append(_ scalar: Unicode.Scalar, _ style: Style, to result: inout String) {
    let value = scalar.value
    switch style {
    case .json:
      switch value {
      case 0x22: result += "\\\""
      case 0x5C: result += "\\\\"
      case 0x0A: result += "\\n"
      case 0x0D: result += "\\r"
      case 0x09: result += "\\t"
      default:
        if isControl(value) { result += "\\u00" + hexByte(UInt8(value)).lowercased() } else { result.unicodeScalars.append(scalar) }
      }
    case .xml:
      switch value {
      case 0x26: result += "&amp;"
      case 0x3C: result += "&lt;"
      case 0x3E: result += "&gt;"
      case 0x22: result += "&quot;"
      case 0x27: result += "&apos;"
      // Not characters XML 1.0 allows, and not controls to show as an escape.
      case 0xFFFE, 0xFFFF: result += "\u{FFFD}"
      default: appendLine(scalar, to: &result)
      }
    case .quoted:
      switch value {
      case 0x22: result += "\\\""
      case 0x5C: result += "\\\\"
      default: appendLine(scalar, to: &result)
      }
    case .line, .csv:
      appendLine(scalar, to: &result)
    }
  }

  @inline(__always) static func appendLine(_ scalar: Unicode.Scalar, to result: inout String) {
    let value = scalar.value
    switch value {
    case 0x0A: result += "\\n"
    case 0x0D: result += "\\r"
    case 0x09: result += "\\t"
    case 0..<0x20, 0x7F: result += "\\x" + hexByte(UInt8(value))
    case 0x80...0x9F: result += "\\u00" + hexByte(UInt8(value))
    // Line and paragraph separators: some viewers break the line there.
    case 0x2028: result += "\\u2028"
    case 0x2029: result += "\\u2029"
    default: result.unicodeScalars.append(scalar)
    }
  }

  static func hexByte(_ byte: UInt8) -> String {
    let digits: [Character] = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "A", "B", "C", "D", "E", "F"]
    return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
  }
}

extension String {
  fileprivate func replacingAll(_ target: Character, with replacement: String) -> String {
    var result = ""
    for character in self { if character == target { result += replacement } else { result.append(character) } }
    return result
  }
}
