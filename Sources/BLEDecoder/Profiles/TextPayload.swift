import BLECore

/// Payloads of byte-stream characteristics (a UART's RX and TX, AT commands over vendor
/// characteristics) that read as text: shown quoted, with their line ends escaped visibly
/// (`"AT+BOND\r\n"`), in both directions.
///
/// Line ends and tabs are text here, not control characters: `HELLO\r\n` reads as text as
/// much as `BAT 91%\r\n` does.
public enum TextPayload {
  /// Whether `scalar` is a control character that counts against reading as text: any C0
  /// control but tab, line feed and carriage return; DEL; C1 controls.
  @inline(__always) static func countsAsControl(_ value: UInt32) -> Bool {
    switch value {
    case 0x09, 0x0A, 0x0D: return false
    default: return Escaping.isControl(value)
    }
  }

  /// The bytes as text when they are UTF-8 with no NUL and control characters other than
  /// tab, CR and LF are at most a quarter of the characters; nil for binary data. (A known
  /// byte-stream characteristic: the Nordic UART's RX and TX.)
  public static func lenientText(_ bytes: some Collection<UInt8>) -> String? {
    guard !bytes.contains(0) else { return nil }
    let text = String(decoding: bytes, as: UTF8.self)
    guard text.utf8.elementsEqual(bytes) else { return nil }
    var controls = 0
    var characters = 0
    for scalar in text.unicodeScalars {
      characters += 1
      if countsAsControl(scalar.value) { controls += 1 }
    }
    return controls * 4 <= characters ? text : nil
  }

  /// Whether the raw value of an attribute with no decoder reads as a line of text: printable
  /// ASCII, tabs and line ends only, and either a line end or at least four characters with a
  /// letter among them (`AT+BOND\r\n`, `\r\n`, `HELLO`; not `01` or `0A`, which are as likely
  /// numbers). Reads the bytes in place: no allocation for the binary values most are.
  public static func readsAsText(_ bytes: some Collection<UInt8>) -> Bool {
    guard bytes.count >= 2 else { return false }
    var lineEnd = false
    var letter = false
    for byte in bytes {
      switch byte {
      case 0x0A, 0x0D: lineEnd = true
      case 0x09: break
      case 0x41...0x5A, 0x61...0x7A: letter = true
      case 0x20...0x7E: break
      default: return false
      }
    }
    return lineEnd || (letter && bytes.count >= 4)
  }

  /// `"text"` with control characters, quotes and backslashes escaped by the one escaper
  /// (`\r`, `\n`, `\x1B`, `\"`), at most `limit` characters (then `…`).
  public static func quoted(_ text: some StringProtocol, limit: Int = 80) -> String {
    "\"" + Escaping.escaped(text, .quoted, limit: limit) + "\""
  }

  /// The raw value's words when it reads as text (`readsAsText`), else nil.
  public static func quotedIfText(_ bytes: some Collection<UInt8>, limit: Int = 80) -> String? {
    guard readsAsText(bytes) else { return nil }
    return quoted(String(decoding: bytes, as: UTF8.self), limit: limit)
  }
}
