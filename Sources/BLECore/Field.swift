/// How an unsigned number reads in text.
public enum NumberStyle: Sendable {
  case decimal
  /// `0x` and this many hex digits.
  case hex(UInt8)
}

/// A decoded value, independent of how it is rendered.
public enum FieldValue: Sendable {
  case unsigned(UInt64, NumberStyle)
  case signed(Int64)
  case bool(Bool)
  /// A spec code point with its name when known: text `Name (0x13)`, JSON `key: 19, key_name: "Name"`.
  case code(UInt64, width: UInt8, name: StaticString?)
  /// A spec code point whose name was built at run time.
  case codeText(UInt64, width: UInt8, name: String)
  case text(String)
  case staticText(StaticString)
  case bytes(ArraySlice<UInt8>)
  case address(BDAddr, AddressType?)
  case uuid(BluetoothUUID, name: StaticString?)
  /// A raw count in spec units with its scaled meaning: text `30.00 ms (24)`,
  /// JSON `key: 24, key_<unit>: 30.0` (only `key` when `scale` is 1).
  case measure(Int64, scale: Double, unit: StaticString)
  /// A real number: text with `places` decimals and the unit (`812.5 ms`), JSON the number.
  case real(Double, places: UInt8, unit: StaticString)
  /// Explicitly absent (JSON `null`; text "none").
  case null
  /// Starts a nested object; the fields that follow one level deeper belong to it.
  case object
  /// Starts an array; each element is a field one level deeper (keys are ignored in JSON).
  case array
}

/// One decoded field: a JSON key (snake_case), a text label, a value and its nesting depth.
public struct Field: Sendable {
  public var key: StaticString
  public var label: StaticString
  public var value: FieldValue
  public var depth: Int
  /// Shown in text only with `--verbose` (JSON always has it).
  public var isVerbose = false
  /// A group the text output does not title: its members show at the group's own level.
  public var isInline = false
}

/// The decoded fields of one frame, flat with depths, so frames reuse one buffer.
public struct FieldList: Sendable {
  public private(set) var fields: [Field] = []
  public private(set) var depth = 0
  /// When false, `addVerbose` drops its field: a renderer that will not show them (plain text)
  /// saves building them. JSON keeps them.
  public var keepsVerbose = true
  /// Depth of a verbose group being dropped (when `keepsVerbose` is false): everything added
  /// inside it is dropped too, so plain text pays nothing for fields it will not show.
  var droppingFrom: Int?

  public init() { fields.reserveCapacity(64) }

  public var isEmpty: Bool { fields.isEmpty }

  public mutating func removeAll() {
    fields.removeAll(keepingCapacity: true)
    depth = 0
    droppingFrom = nil
  }

  /// Drops every field from `index` on (a layer a higher one makes redundant in plain text).
  public mutating func truncate(to index: Int) {
    if index < fields.count { fields.removeSubrange(index...) }
  }

  public mutating func add(_ key: StaticString, _ label: StaticString, _ value: FieldValue) {
    if droppingFrom != nil { return }
    fields.append(Field(key: key, label: label, value: value, depth: depth))
  }

  /// Opens a nested object. `inline`: text shows its members without a title line.
  /// `verbose`: text shows it (and all it holds) only with `-v`; JSON always has it.
  public mutating func beginObject(_ key: StaticString, _ label: StaticString, inline: Bool = false, verbose: Bool = false) {
    if droppingFrom == nil {
      if verbose && !keepsVerbose {
        droppingFrom = depth
      } else {
        fields.append(Field(key: key, label: label, value: .object, depth: depth, isVerbose: verbose, isInline: inline))
      }
    }
    depth += 1
  }

  /// Marks the field at `index` (an object opened earlier) verbose, once it is known that a
  /// higher layer says it better (an ACL header under a decoded ATT PDU).
  public mutating func markVerbose(at index: Int) {
    guard index < fields.count else { return }
    fields[index].isVerbose = true
  }

  public var count: Int { fields.count }

  /// Adds a field that text output shows only when verbose (lengths, raw opcode parts).
  public mutating func addVerbose(_ key: StaticString, _ label: StaticString, _ value: FieldValue) {
    guard keepsVerbose, droppingFrom == nil else { return }
    fields.append(Field(key: key, label: label, value: value, depth: depth, isVerbose: true))
  }

  public mutating func beginArray(_ key: StaticString, _ label: StaticString) {
    add(key, label, .array)
    depth += 1
  }

  public mutating func end() {
    if depth > 0 { depth -= 1 }
    if let from = droppingFrom, depth <= from { droppingFrom = nil }
  }

  /// Closes every open group (after a decode error left some open).
  public mutating func closeAll() {
    depth = 0
    droppingFrom = nil
  }

  /// Closes groups until `depth` is back to `level` (after a decoder threw inside its groups).
  public mutating func close(toDepth level: Int) {
    depth = min(depth, max(level, 0))
    if let from = droppingFrom, depth <= from { droppingFrom = nil }
  }

  // Shorthands used by decoders.
  public mutating func uint(_ key: StaticString, _ label: StaticString, _ value: some BinaryInteger) {
    add(key, label, .unsigned(UInt64(value), .decimal))
  }
  public mutating func hex(_ key: StaticString, _ label: StaticString, _ value: some BinaryInteger, width: UInt8) {
    add(key, label, .unsigned(UInt64(value), .hex(width)))
  }
  public mutating func int(_ key: StaticString, _ label: StaticString, _ value: some BinaryInteger) {
    add(key, label, .signed(Int64(value)))
  }
  public mutating func code(_ key: StaticString, _ label: StaticString, _ value: some BinaryInteger, width: UInt8, name: StaticString?) {
    add(key, label, .code(UInt64(value), width: width, name: name))
  }
  public mutating func bytes(_ key: StaticString, _ label: StaticString, _ value: ArraySlice<UInt8>) {
    add(key, label, .bytes(value))
  }
  public mutating func measure(_ key: StaticString, _ label: StaticString, _ raw: some BinaryInteger, scale: Double, unit: StaticString) {
    add(key, label, .measure(Int64(raw), scale: scale, unit: unit))
  }
  public mutating func flag(_ key: StaticString, _ label: StaticString, _ value: Bool) {
    add(key, label, .bool(value))
  }
  public mutating func real(_ key: StaticString, _ label: StaticString, _ value: Double, places: UInt8, unit: StaticString) {
    add(key, label, .real(value, places: places, unit: unit))
  }
  public mutating func text(_ key: StaticString, _ label: StaticString, _ value: StaticString) {
    add(key, label, .staticText(value))
  }
}
