/// A strict little JSON reader that reports duplicate keys (JSONSerialization silently keeps one).
struct JSONKeyChecker {
  let bytes: [UInt8]
  var index = 0
  var problems: [String] = []

  init(_ text: Substring) { bytes = Array(text.utf8) }

  /// Nil when the text is one valid JSON value with no duplicate keys; otherwise the first problem.
  static func check(_ text: Substring) -> String? {
    var checker = JSONKeyChecker(text)
    checker.skipSpace()
    if !checker.value(path: "$") { return checker.problems.first ?? "invalid JSON at byte \(checker.index)" }
    checker.skipSpace()
    if checker.index != checker.bytes.count { return "trailing bytes at \(checker.index)" }
    return checker.problems.first
  }

  mutating func skipSpace() {
    while index < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[index]) { index += 1 }
  }

  mutating func value(path: String) -> Bool {
    guard index < bytes.count else { return false }
    switch bytes[index] {
    case UInt8(ascii: "{"):
      index += 1
      var keys = Set<String>()
      skipSpace()
      if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return true }
      while true {
        skipSpace()
        guard let key = string() else { return false }
        if !keys.insert(key).inserted { problems.append("duplicate key \(path).\(key)") }
        skipSpace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return false }
        index += 1
        skipSpace()
        guard value(path: path + "." + key) else { return false }
        skipSpace()
        guard index < bytes.count else { return false }
        if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
        if bytes[index] == UInt8(ascii: "}") { index += 1; return true }
        return false
      }
    case UInt8(ascii: "["):
      index += 1
      skipSpace()
      if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return true }
      var element = 0
      while true {
        skipSpace()
        guard value(path: "\(path)[\(element)]") else { return false }
        element += 1
        skipSpace()
        guard index < bytes.count else { return false }
        if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
        if bytes[index] == UInt8(ascii: "]") { index += 1; return true }
        return false
      }
    case UInt8(ascii: "\""):
      return string() != nil
    default:
      let start = index
      while index < bytes.count, !([UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x0A].contains(bytes[index])) { index += 1 }
      let token = String(decoding: bytes[start..<index], as: UTF8.self)
      if ["true", "false", "null"].contains(token) || Double(token) != nil { return true }
      problems.append("bad token '\(token)' at \(path)")
      return false
    }
  }

  mutating func string() -> String? {
    guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
    index += 1
    var result: [UInt8] = []
    while index < bytes.count {
      let byte = bytes[index]
      index += 1
      if byte == UInt8(ascii: "\"") { return String(decoding: result, as: UTF8.self) }
      if byte < 0x20 { problems.append("raw control character in a string"); return nil }
      if byte == UInt8(ascii: "\\") {
        guard index < bytes.count else { return nil }
        let escaped = bytes[index]
        index += 1
        if escaped == UInt8(ascii: "u") { index += 4 }
        result.append(escaped)
      } else {
        result.append(byte)
      }
    }
    return nil
  }
}
