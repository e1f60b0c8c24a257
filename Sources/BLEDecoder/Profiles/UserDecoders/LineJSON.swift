import BLECore

/// A small JSON reader that remembers where each value began (line and column), so errors in a
/// user's file (decoders, GATT maps) can name the line. Strict: RFC 8259, no comments, no
/// trailing commas; bounded nesting.
package struct LineJSON: Sendable {
  package enum Value: Sendable {
    case object([(key: String, value: LineJSON)])
    case array([LineJSON])
    case string(String)
    case number(Double, text: String)
    case bool(Bool)
    case null
  }

  package var value: Value
  package var line: Int
  package var column: Int

  package struct SyntaxError: Error {
    package var line: Int
    package var column: Int
    package var message: String
  }

  static let maximumDepth = 64

  package static func parse(_ text: String) throws(SyntaxError) -> LineJSON {
    try parse(bytes: Array(text.utf8))
  }

  package static func parse(bytes: [UInt8]) throws(SyntaxError) -> LineJSON {
    var parser = Parser(bytes: bytes)
    parser.skipSpace()
    let value = try parser.value(depth: 0)
    parser.skipSpace()
    guard parser.index == parser.bytes.count else { throw parser.error("unexpected text after the JSON value") }
    return value
  }

  /// The member `key` of an object.
  package subscript(key: String) -> LineJSON? {
    guard case .object(let members) = value else { return nil }
    return members.first { $0.key == key }?.value
  }

  package var string: String? {
    if case .string(let text) = value { return text }
    return nil
  }

  /// A number without a fraction that fits an Int.
  package var integer: Int? {
    guard case .number(let number, _) = value, number == number.rounded(), abs(number) < 9.0e15 else { return nil }
    return Int(number)
  }

  package var bool: Bool? {
    if case .bool(let flag) = value { return flag }
    return nil
  }

  package var array: [LineJSON]? {
    if case .array(let elements) = value { return elements }
    return nil
  }

  package var isObject: Bool {
    if case .object = value { return true }
    return false
  }

  /// The value as written, for messages: numbers and strings as they are (made one short
  /// line: `printable`), else the type.
  package var shown: String {
    switch value {
    case .number(_, let text): return LineJSON.printable(text)
    case .string(let text): return "\"\(LineJSON.printable(text))\""
    case .bool(let flag): return flag ? "true" : "false"
    default: return typeName
    }
  }

  package var typeName: String {
    switch value {
    case .object: return "an object"
    case .array: return "a list"
    case .string: return "a string"
    case .number: return "a number"
    case .bool: return "true/false"
    case .null: return "null"
    }
  }

  /// Text from a user's file as a message shows it (the one escaper's line style: `\n`, `\t`,
  /// `\xNN`), cut after `limit` characters (`…`), so that a message stays one short line.
  package static func printable(_ text: some StringProtocol, limit: Int = 64) -> String { Escaping.escaped(text, .line, limit: limit) }

  struct Parser {
    let bytes: [UInt8]
    var index = 0
    var line = 1
    var lineStart = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    func error(_ message: String) -> SyntaxError {
      SyntaxError(line: line, column: index - lineStart + 1, message: message)
    }

    mutating func skipSpace() {
      while index < bytes.count {
        switch bytes[index] {
        case 0x20, 0x09, 0x0D: index += 1
        case 0x0A:
          index += 1
          line += 1
          lineStart = index
        default: return
        }
      }
    }

    mutating func value(depth: Int) throws(SyntaxError) -> LineJSON {
      guard depth < LineJSON.maximumDepth else { throw error("nested too deeply") }
      guard index < bytes.count else { throw error("the file ends where a value was expected") }
      let (startLine, startColumn) = (line, index - lineStart + 1)
      func made(_ value: Value) -> LineJSON { LineJSON(value: value, line: startLine, column: startColumn) }
      switch bytes[index] {
      case UInt8(ascii: "{"):
        index += 1
        var members: [(key: String, value: LineJSON)] = []
        skipSpace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
          index += 1
          return made(.object(members))
        }
        while true {
          skipSpace()
          guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a quoted key") }
          let key = try string()
          skipSpace()
          guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':' after \"\(LineJSON.printable(key))\"") }
          index += 1
          skipSpace()
          members.append((key, try value(depth: depth + 1)))
          skipSpace()
          guard index < bytes.count else { throw error("the file ends inside an object") }
          if bytes[index] == UInt8(ascii: ",") {
            index += 1
            continue
          }
          guard bytes[index] == UInt8(ascii: "}") else { throw error("expected ',' or '}'") }
          index += 1
          return made(.object(members))
        }
      case UInt8(ascii: "["):
        index += 1
        var elements: [LineJSON] = []
        skipSpace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
          index += 1
          return made(.array(elements))
        }
        while true {
          skipSpace()
          elements.append(try value(depth: depth + 1))
          skipSpace()
          guard index < bytes.count else { throw error("the file ends inside a list") }
          if bytes[index] == UInt8(ascii: ",") {
            index += 1
            continue
          }
          guard bytes[index] == UInt8(ascii: "]") else { throw error("expected ',' or ']'") }
          index += 1
          return made(.array(elements))
        }
      case UInt8(ascii: "\""):
        return made(.string(try string()))
      case UInt8(ascii: "t"):
        try word("true")
        return made(.bool(true))
      case UInt8(ascii: "f"):
        try word("false")
        return made(.bool(false))
      case UInt8(ascii: "n"):
        try word("null")
        return made(.null)
      default:
        let start = index
        while index < bytes.count, Self.isNumberByte(bytes[index]) { index += 1 }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        guard !text.isEmpty, let number = Double(text), number.isFinite else {
          index = start
          throw error("expected a value")
        }
        return made(.number(number, text: text))
      }
    }

    static func isNumberByte(_ byte: UInt8) -> Bool {
      switch byte {
      case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): return true
      default: return false
      }
    }

    mutating func word(_ expected: StaticString) throws(SyntaxError) {
      let count = expected.utf8CodeUnitCount
      guard index + count <= bytes.count,
        bytes[index..<index + count].elementsEqual(ByteView(expected))
      else { throw error("expected a value") }
      index += count
    }

    mutating func string() throws(SyntaxError) -> String {
      index += 1  // the opening quote
      // Most strings have no escape: take their bytes at once.
      var scan = index
      while scan < bytes.count, bytes[scan] != UInt8(ascii: "\""), bytes[scan] != UInt8(ascii: "\\"), bytes[scan] >= 0x20 { scan += 1 }
      if scan < bytes.count, bytes[scan] == UInt8(ascii: "\"") {
        defer { index = scan + 1 }
        return String(decoding: bytes[index..<scan], as: UTF8.self)
      }
      var scalars = String.UnicodeScalarView()
      var run: [UInt8] = []
      func flush() {
        if !run.isEmpty {
          scalars.append(contentsOf: String(decoding: run, as: UTF8.self).unicodeScalars)
          run.removeAll()
        }
      }
      while index < bytes.count {
        let byte = bytes[index]
        if byte == UInt8(ascii: "\"") {
          index += 1
          flush()
          return String(scalars)
        }
        if byte < 0x20 { throw error("a control character inside a string") }
        if byte == UInt8(ascii: "\\") {
          flush()
          guard index + 1 < bytes.count else { break }
          index += 1
          switch bytes[index] {
          case UInt8(ascii: "\""): scalars.append("\"")
          case UInt8(ascii: "\\"): scalars.append("\\")
          case UInt8(ascii: "/"): scalars.append("/")
          case UInt8(ascii: "b"): scalars.append("\u{08}")
          case UInt8(ascii: "f"): scalars.append("\u{0C}")
          case UInt8(ascii: "n"): scalars.append("\n")
          case UInt8(ascii: "r"): scalars.append("\r")
          case UInt8(ascii: "t"): scalars.append("\t")
          case UInt8(ascii: "u"):
            guard index + 4 < bytes.count, let code = UInt32(String(decoding: bytes[index + 1...index + 4], as: UTF8.self), radix: 16) else {
              throw error("bad \\u escape")
            }
            index += 4
            scalars.append(Unicode.Scalar(code) ?? "\u{FFFD}")
          default: throw error("bad escape")
          }
          index += 1
          continue
        }
        run.append(byte)
        index += 1
      }
      throw error("the file ends inside a string")
    }
  }
}
