import BLECore

/// A characteristic or descriptor value with a typed form, for tests and library users.
///
/// `init(parsing:)` reads exactly the value's format from the reader (setting its layer to
/// `.profile`) and leaves any bytes after it; `init(bytes:)` parses a whole value and also
/// rejects bytes left over.
public protocol CharacteristicValue: Sendable {
  init(parsing reader: inout ByteReader) throws(DecodeError)
}

extension CharacteristicValue {
  /// Parses a complete value: throws `.truncated` when bytes are missing and
  /// `.lengthMismatch` when bytes are left over.
  public init(bytes: [UInt8]) throws(DecodeError) {
    self = try ByteReader.reading(bytes, layer: .profile) { (reader: inout ByteReader) throws(DecodeError) -> Self in
      let value = try Self(parsing: &reader)
      try ProfileSupport.requireEnd(reader, start: 0)
      return value
    }
  }
}

/// A typed value that can also write its decoded form into a frame.
protocol FieldWritable: CharacteristicValue {
  func write(to frame: inout DissectedFrame, context: ValueContext)
}

/// Helpers shared by the characteristic decoders.
enum ProfileSupport {
  /// Throws unless the reader is exhausted: the format has no room for more bytes.
  static func requireEnd(_ reader: ByteReader, start: Int) throws(DecodeError) {
    guard reader.isAtEnd else {
      throw DecodeError(
        .lengthMismatch(field: "the value format", declared: reader.offset - start, actual: reader.endOffset - start),
        layer: .profile, offset: reader.offset)
    }
  }

  /// A decoder that parses `T`, writes its fields, then rejects bytes left over (after writing,
  /// so the decoded part stays visible next to the error).
  static func decoder<T: FieldWritable>(_ type: T.Type, uuid16: UInt16, key: StaticString, summarySaysItAll: Bool = false) -> CharacteristicDecoder {
    CharacteristicDecoder(uuid: BluetoothUUID(uuid16: uuid16), key: key, summarySaysItAll: summarySaysItAll) { reader, context, frame throws(DecodeError) in
      reader.layer = .profile
      let start = reader.offset
      let value = try T(parsing: &reader)
      value.write(to: &frame, context: context)
      try requireEnd(reader, start: start)
    }
  }

  /// A one-byte location code (Body Sensor Location, Sensor Location): field, summary, and a
  /// warning for reserved values.
  static func writeLocation(_ location: UInt8, name: StaticString?, what: String, to frame: inout DissectedFrame) {
    frame.fields.code("location", "Location", location, width: 2, name: name)
    if let name {
      frame.summaryParts.append(.text(name))
    } else {
      frame.summaryParts.append(.text("reserved location "))
      frame.summaryParts.append(.number(Int(location)))
      warn(&frame, "\(what) \(location) is reserved")
    }
  }

  static func warn(_ frame: inout DissectedFrame, _ message: String) {
    frame.diagnostics.append(Diagnostic(.warning, .profile, message))
  }

  static func note(_ frame: inout DissectedFrame, _ message: String) {
    frame.diagnostics.append(Diagnostic(.note, .profile, message))
  }

  /// Warns when bits outside `defined` are set in a flags or bit-field value.
  static func checkReserved(_ value: UInt64, defined: UInt64, width: Int, what: StaticString, _ frame: inout DissectedFrame, severity: Diagnostic.Severity = .warning) {
    let reserved = value & ~defined
    guard reserved != 0 else { return }
    frame.diagnostics.append(
      Diagnostic(severity, .profile, "reserved bits set in \(what): \(Hex.prefixed(reserved, width: width))"))
  }

  /// UTF-8 text: the bytes up to the end, trailing NUL padding dropped (with a note), invalid
  /// sequences replaced (with a warning).
  static func utf8(_ bytes: ByteView, _ frame: inout DissectedFrame) -> String {
    var end = bytes.endIndex
    while end > bytes.startIndex, bytes[end - 1] == 0 { end -= 1 }
    let body = bytes[bytes.startIndex..<end]
    if end != bytes.endIndex { note(&frame, "string ends with \(bytes.endIndex - end) NUL byte\(bytes.endIndex - end == 1 ? "" : "s") (the format has no terminator)") }
    let text = String(decoding: body, as: UTF8.self)
    if !text.utf8.elementsEqual(body) { warn(&frame, "string is not valid UTF-8") }
    return text
  }

  /// A decoder for a UTF-8 string characteristic or descriptor: field `value`, summary the text.
  static func stringDecoder(uuid16: UInt16, key: StaticString, label: StaticString) -> CharacteristicDecoder {
    CharacteristicDecoder(uuid: BluetoothUUID(uuid16: uuid16), key: key, summarySaysItAll: true) { reader, _, frame throws(DecodeError) in
      reader.layer = .profile
      let text = utf8(reader.readRemaining(), &frame)
      frame.fields.add("value", label, .text(text))
      frame.summaryParts.append(.string(text))
    }
  }

  /// A summary separator: nothing before the first part this decoder writes, ", " after.
  static func separate(_ frame: inout DissectedFrame, first: inout Bool) {
    if first { first = false } else { frame.summaryParts.append(.text(", ")) }
  }

  /// `0`-padded decimal (`07`), for dates.
  static func padded(_ value: some BinaryInteger, width: Int) -> String {
    let digits = String(value)
    return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
  }
}
