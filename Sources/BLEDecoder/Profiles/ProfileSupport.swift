import BLECore

/// Helpers shared by the characteristic values.
enum ProfileSupport {
  /// Throws unless the reader is exhausted: the format has no room for more bytes.
  static func requireEnd(_ reader: ByteReader, start: Int) throws(DecodeError) {
    guard reader.isAtEnd else {
      throw DecodeError(
        .lengthMismatch(field: "the value format", declared: reader.offset - start, actual: reader.endOffset - start),
        layer: .profile, offset: reader.offset)
    }
  }

  /// A one-byte location code (Body Sensor Location, Sensor Location) as a field.
  static func writeLocation(_ location: UInt8, name: Name?, to fields: inout FieldList) {
    fields.code("location", "Location", location, width: 2, name: name)
  }

  /// A location code's words: its name, or that it is reserved.
  static func summarizeLocation(_ location: UInt8, name: Name?, into summary: inout SummaryLine) {
    if let name {
      summary.append(.text(name))
    } else {
      summary.append(.text("reserved location "))
      summary.append(.number(Int(location)))
    }
  }

  /// A value's diagnostic: a profile kind from the catalogue, and its words.
  static func add(_ kind: DiagnosticKind, _ diagnostics: inout [Diagnostic], _ message: String) {
    diagnostics.append(Diagnostic(kind, message))
  }

  /// Warns when bits outside `defined` are set in a flags or bit-field value.
  static func checkReserved(
    _ value: UInt64, defined: UInt64, width: Int, what: Name, _ diagnostics: inout [Diagnostic],
    kind: DiagnosticKind = .profileReservedBits
  ) {
    let reserved = value & ~defined
    guard reserved != 0 else { return }
    diagnostics.append(Diagnostic(kind, "reserved bits set in \(what): \(Hex.prefixed(reserved, width: width))"))
  }

  /// A summary separator: nothing before the first part a value writes, ", " after.
  static func separate(_ summary: inout SummaryLine, first: inout Bool) {
    if first { first = false } else { summary.append(.text(", ")) }
  }

  /// `0`-padded decimal (`07`), for dates.
  static func padded(_ value: some BinaryInteger, width: Int) -> String {
    let digits = String(value)
    return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
  }
}

/// UTF-8 text as GATT strings carry it: the bytes up to the end, without a terminator.
public struct UTF8Text: Sendable, Equatable {
  /// The text, trailing NUL padding dropped, invalid sequences replaced.
  public var text: String
  /// NUL bytes dropped from the end (the format has no terminator, but devices pad).
  public var nulPadding: Int
  public var isValidUTF8: Bool

  public init(text: String, nulPadding: Int = 0, isValidUTF8: Bool = true) {
    self.text = text
    self.nulPadding = nulPadding
    self.isValidUTF8 = isValidUTF8
  }

  public init(parsing reader: inout ByteReader) {
    let bytes = reader.readRemaining()
    var end = bytes.endIndex
    while end > bytes.startIndex, bytes[end - 1] == 0 { end -= 1 }
    let body = bytes[bytes.startIndex..<end]
    text = String(decoding: body, as: UTF8.self)
    nulPadding = bytes.endIndex - end
    isValidUTF8 = text.utf8.elementsEqual(body)
  }

  func diagnose(into diagnostics: inout [Diagnostic]) {
    if nulPadding > 0 {
      ProfileSupport.add(.profileStringNULPadded, &diagnostics, "string ends with \(nulPadding) NUL byte\(nulPadding == 1 ? "" : "s") (the format has no terminator)")
    }
    if !isValidUTF8 { ProfileSupport.add(.profileStringInvalidUTF8, &diagnostics, "string is not valid UTF-8") }
  }
}

/// A characteristic or descriptor whose value is one UTF-8 string: field `value`, summary the text.
public protocol TextCharacteristic: CharacteristicValue {
  /// The text label of the `value` field ("Device name").
  static var label: Name { get }
  var string: UTF8Text { get }
  init(string: UTF8Text)
}

extension TextCharacteristic {
  public var text: String { string.text }

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    self.init(string: UTF8Text(parsing: &reader))
  }

  public func writeFields(to fields: inout FieldList, context: ValueContext) {
    fields.add("value", Self.label, .text(string.text))
  }

  public func summarize(into summary: inout SummaryLine, context: ValueContext) {
    summary.append(.string(string.text))
  }

  public func diagnose(into diagnostics: inout [Diagnostic], context: ValueContext) {
    string.diagnose(into: &diagnostics)
  }
}
