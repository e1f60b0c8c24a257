import BLECore

/// A characteristic's format as a user declared it (`--decoders FILE`, docs/decoders.md): a
/// list of fields read in order, each an integer of any width and byte order, an IEEE-11073
/// SFLOAT/FLOAT, an IEEE 754 float, text or bytes; optionally present only when bits of an
/// earlier field say so, repeated to the end of the value, scaled, with a unit or names.
public final class DeclaredFormat: Sendable {
  /// The characteristic's name (header words, `gatt.name` when discovery named nothing).
  public let name: Name
  /// The key under `decoded` in JSON.
  public let key: Name
  let fields: [DeclaredField]
  /// Items kept per value (a list of one-byte items in a 512-byte value stays under it).
  static let maximumItems = 4096

  init(name: Name, key: Name, fields: [DeclaredField]) {
    self.name = name
    self.key = key
    self.fields = fields
  }

  /// Reads a whole value; a value the format does not fit throws (the fact is then flagged
  /// malformed, its bytes kept).
  func parse(_ reader: inout ByteReader) throws(DecodeError) -> DeclaredValue {
    var items: [DeclaredValue.Item] = []
    // The last raw integer of each field, for conditions and derived fields.
    var raws = [UInt64?](repeating: nil, count: fields.count)
    for (index, field) in fields.enumerated() {
      if let condition = field.condition {
        guard let raw = raws[condition.field], raw & condition.mask == condition.equals else { continue }
      }
      if case .derived(let source, let mask, let shift) = field.kind {
        guard let raw = raws[source] else { continue }
        let value = (raw & mask) >> UInt64(shift)
        raws[index] = value
        items.append(.init(field: index, value: .integer(value, signed: false)))
        continue
      }
      // A list takes what is left (possibly nothing); other fields are read once.
      var count = 0
      while field.repeats ? (!reader.isAtEnd || count < field.minimumCount) : count == 0 {
        let value = try field.read(&reader)
        if case .integer(let raw, _) = value { raws[index] = raw }
        items.append(.init(field: index, value: value))
        count += 1
        if items.count > DeclaredFormat.maximumItems { throw DecodeError(.invalidValue(field: "a declared list longer than 4096 items", value: UInt64(count)), layer: .profile, offset: reader.offset) }
      }
    }
    return DeclaredValue(format: self, items: items)
  }
}

struct DeclaredField: Sendable {
  enum Kind: Sendable {
    case unsigned(bytes: Int, bigEndian: Bool)
    case signed(bytes: Int, bigEndian: Bool)
    case sfloat, float11073
    case float32, float64
    /// Text or bytes: `length` bytes, or the rest of the value.
    case utf8(length: Int?)
    case bytes(length: Int?)
    /// Bits of an earlier integer field: `(raw & mask) >> shift`; reads no bytes.
    case derived(field: Int, mask: UInt64, shift: UInt8)
  }

  var key: Name
  var label: Name
  var kind: Kind
  /// Present only when `(earlier field & mask) == equals`.
  var condition: (field: Int, mask: UInt64, equals: UInt64)?
  /// Read again and again until the value ends (a list), at least `minimumCount` times.
  var repeats = false
  var minimumCount = 0
  var scale: Double?
  var offset: Double?
  var unit: Name?
  /// Decimals shown for scaled and real values.
  var places: UInt8 = 2
  /// Names of integer values.
  var names: [UInt64: Name] = [:]
  /// Left out of the header words (still a field).
  var hidden = false

  var byteWidth: Int {
    switch kind {
    case .unsigned(let bytes, _), .signed(let bytes, _): return bytes
    case .sfloat: return 2
    case .float11073, .float32: return 4
    case .float64: return 8
    case .utf8, .bytes, .derived: return 0
    }
  }

  func read(_ reader: inout ByteReader) throws(DecodeError) -> DeclaredValue.Parsed {
    switch kind {
    case let .unsigned(bytes, bigEndian):
      return .integer(try Self.readInteger(&reader, bytes: bytes, bigEndian: bigEndian), signed: false)
    case let .signed(bytes, bigEndian):
      let raw = try Self.readInteger(&reader, bytes: bytes, bigEndian: bigEndian)
      // Sign-extended from the field's width.
      let unused = UInt64(64 - 8 * bytes)
      return .integer(UInt64(bitPattern: Int64(bitPattern: raw << unused) >> Int64(unused)), signed: true)
    case .sfloat:
      return .medical(MedicalFloat(sfloat: try reader.readUInt16LE()))
    case .float11073:
      return .medical(MedicalFloat(float: try reader.readUInt32LE()))
    case .float32:
      return .real(Double(Float(bitPattern: try reader.readUInt32LE())))
    case .float64:
      return .real(Double(bitPattern: try reader.readUInt64LE()))
    case .utf8(let length):
      let view = try reader.readBytes(count: length ?? reader.remaining)
      return .text(String(decoding: view, as: UTF8.self))
    case .bytes(let length):
      return .bytes(Array(try reader.readBytes(count: length ?? reader.remaining)))
    case .derived:
      return .integer(0, signed: false)
    }
  }

  static func readInteger(_ reader: inout ByteReader, bytes: Int, bigEndian: Bool) throws(DecodeError) -> UInt64 {
    let view = try reader.readBytes(count: bytes)
    var value: UInt64 = 0
    if bigEndian {
      for byte in view { value = value << 8 | UInt64(byte) }
    } else {
      for byte in view.reversed() { value = value << 8 | UInt64(byte) }
    }
    return value
  }
}

/// A value decoded by a `DeclaredFormat`: the fields present, in order.
///
/// A user's format that replaces a built-in decoder changes what is shown, not what the
/// analyses read: the value then also carries the built-in decoder's typed value
/// (`builtInValue`), which `AttributeFact.value(as:)` finds (a `HeartRateMeasurement` for a
/// declared Heart Rate Measurement), so summary, hr and diff give the same figures with or
/// without the user's decoder. When the user's format does not fit a value the built-in one
/// reads, the fact is flagged malformed as the user's format says, and its value holds no
/// fields, only the built-in value.
public struct DeclaredValue: CharacteristicValue {
  enum Parsed: Sendable, Equatable {
    case integer(UInt64, signed: Bool)
    case medical(MedicalFloat)
    case real(Double)
    case text(String)
    case bytes([UInt8])
  }

  struct Item: Sendable {
    var field: Int
    var value: Parsed
  }

  let format: DeclaredFormat
  let items: [Item]
  /// The built-in decoder's value of the same bytes, when the format replaced one and it read them.
  public internal(set) var builtInValue: (any CharacteristicValue)?

  public static var allowsTrailingBytes: Bool { false }

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    // Declared formats are read through their format (`DeclaredFormat.parse`), never by type.
    throw DecodeError(.invalidValue(field: "a declared format read without its format", value: 0), layer: .profile, offset: reader.offset)
  }

  init(format: DeclaredFormat, items: [Item], builtInValue: (any CharacteristicValue)? = nil) {
    self.format = format
    self.items = items
    self.builtInValue = builtInValue
  }

  /// The built-in value if it is a `Value` (`AttributeFact.value(as:)`).
  public func builtInValue<Value: CharacteristicValue>(as type: Value.Type) -> Value? {
    guard let builtInValue else { return nil }
    func same<Stored: CharacteristicValue>(_ value: Stored) -> Value? { sameType(value, as: Value.self) }
    return same(builtInValue)
  }

  /// The field named `key`'s values, as numbers (scaled), in order (tests, tools).
  public func numbers(_ key: String) -> [Double] {
    items.compactMap { item -> Double? in
      let field = format.fields[item.field]
      guard field.key.description == key else { return nil }
      return Self.number(item.value, field)
    }
  }

  /// The field named `key`'s value as its name (an integer with names), or its text.
  public func word(_ key: String) -> String? {
    for item in items where format.fields[item.field].key.description == key {
      let field = format.fields[item.field]
      switch item.value {
      case .integer(let raw, _): return field.names[raw]?.description ?? String(raw)
      case .text(let text): return text
      default: return nil
      }
    }
    return nil
  }

  static func number(_ value: Parsed, _ field: DeclaredField) -> Double? {
    let base: Double
    switch value {
    case let .integer(raw, signed): base = signed ? Double(Int64(bitPattern: raw)) : Double(raw)
    case .medical(let number): base = number.value
    case .real(let number): base = number
    case .text, .bytes: return nil
    }
    return base * (field.scale ?? 1) + (field.offset ?? 0)
  }

  static func fieldValue(_ value: Parsed, _ field: DeclaredField) -> FieldValue {
    switch value {
    case let .integer(raw, signed):
      if !field.names.isEmpty || field.scale == nil && field.offset == nil && field.unit == nil && !signed {
        if field.names.isEmpty { return .unsigned(raw, .decimal) }
        return .code(raw, width: UInt8(max(field.byteWidth, 1) * 2), name: field.names[raw])
      }
      if field.scale == nil && field.offset == nil && field.unit == nil { return .signed(Int64(bitPattern: raw)) }
      let scaled = number(value, field) ?? 0
      let places: UInt8 = field.scale == nil && field.offset == nil ? 0 : field.places
      return .real(scaled, places: places, unit: field.unit ?? "")
    case .medical(let number):
      if let special = number.special { return .staticText(special.word) }
      return .real(number.value * (field.scale ?? 1) + (field.offset ?? 0), places: field.scale == nil ? number.places : field.places, unit: field.unit ?? "")
    case .real(let number):
      return .real(number * (field.scale ?? 1) + (field.offset ?? 0), places: field.places, unit: field.unit ?? "")
    case .text(let text): return .text(text)
    case .bytes(let bytes): return .bytes(bytes[...])
    }
  }

  public func writeFields(to fields: inout FieldList, context: ValueContext) {
    var index = 0
    while index < items.count {
      let field = format.fields[items[index].field]
      var end = index + 1
      while end < items.count, items[end].field == items[index].field { end += 1 }
      if field.repeats {
        fields.beginArray(field.key, field.label)
        for item in items[index..<end] { fields.add(field.key, field.label, Self.fieldValue(item.value, field)) }
        fields.end()
      } else {
        for item in items[index..<end] { fields.add(field.key, field.label, Self.fieldValue(item.value, field)) }
      }
      index = end
    }
  }

  /// "label value unit" for each field not hidden, joined by ", " (a list: its values after
  /// its label).
  public func summarize(into summary: inout SummaryLine, context: ValueContext) {
    var previous: Int?
    var first = true
    for item in items {
      let field = format.fields[item.field]
      guard !field.hidden else { continue }
      if previous != item.field {
        if !first { summary.append(.text(", ")) }
        summary.append(.text(field.label))
        first = false
      }
      summary.append(.text(" "))
      switch Self.fieldValue(item.value, field) {
      case .unsigned(let raw, _): summary.append(.number(Int(truncatingIfNeeded: raw)))
      case .signed(let raw): summary.append(.number(Int(truncatingIfNeeded: raw)))
      case let .code(raw, _, name):
        if let name { summary.append(.text(name)) } else { summary.append(.number(Int(truncatingIfNeeded: raw))) }
      case let .real(number, places, unit):
        summary.append(.real(number, places: places))
        if !unit.isEmpty {
          summary.append(.text(" "))
          summary.append(.text(unit))
        }
      case .staticText(let text): summary.append(.text(text))
      case .text(let text): summary.append(.string(text))
      case .bytes(let bytes): summary.append(.bytes(bytes))
      default: break
      }
      previous = item.field
    }
  }
}
