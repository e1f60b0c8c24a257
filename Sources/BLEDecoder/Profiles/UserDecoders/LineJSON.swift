/// A small JSON reader that remembers where each value began (line and column), so errors in a
/// user's decoder file can name the line. Strict: RFC 8259, no comments, no trailing commas;
/// bounded nesting.
struct LineJSON: Sendable {
  enum Value: Sendable {
    case object([(key: String, value: LineJSON)])
    case array([LineJSON])
    case string(String)
    case number(Double, text: String)
    case bool(Bool)
    case null
  }

  var value: Value
  var line: Int
  var column: Int

  struct SyntaxError: Error {
    var line: Int
    var column: Int
    var message: String
  }

  static let maximumDepth = 64

  static func parse(_ text: String) throws(SyntaxError) -> LineJSON {
    var parser = Parser(bytes: Array(text.utf8))
    parser.skipSpace()
    let value = try parser.value(depth: 0)
    parser.skipSpace()
    guard parser.index == parser.bytes.count else { throw parser.error("unexpected text after the JSON value") }
    return value
  }

  /// The member `key` of an object.
  subscript(key: String) -> LineJSON? {
    guard case .object(let members) = value else { return nil }
    return members.first { $0.key == key }?.value
  }

  var typeName: String {
    switch value {
    case .object: return "an object"
    case .array: return "a list"
    case .string: return "a string"
    case .number: return "a number"
    case .bool: return "true/false"
    case .null: return "null"
    }
  }

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
          guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':' after \"\(key)\"") }
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
        while index < bytes.count, "+-0123456789.eE".utf8.contains(bytes[index]) { index += 1 }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        guard !text.isEmpty, let number = Double(text), number.isFinite else {
          index = start
          throw error("expected a value")
        }
        return made(.number(number, text: text))
      }
    }

    mutating func word(_ expected: StaticString) throws(SyntaxError) {
      let count = expected.utf8CodeUnitCount
      guard index + count <= bytes.count,
        bytes[index..<index + count].elementsEqual(UnsafeBufferPointer(start: expected.utf8Start, count: count))
      else { throw error("expected a value") }
      index += count
    }

    mutating func string() throws(SyntaxError) -> String {
      index += 1  // the opening quote
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
