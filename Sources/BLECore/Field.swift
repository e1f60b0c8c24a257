/// How an unsigned number reads in text.
public enum NumberStyle: Sendable {
  case decimal
  /// `0x` and this many hex digits.
  case hex(UInt8)
  /// A flags value: `0x` and this many hex digits, and in text with `-v` a line per bit field
  /// as `layout` (a `BitLayout` literal) names them. JSON has the number.
  case bits(UInt8, layout: Name)
}

/// A decoded value, independent of how it is rendered.
public enum FieldValue: Sendable {
  case unsigned(UInt64, NumberStyle)
  case signed(Int64)
  case bool(Bool)
  /// A spec code point with its name when known: text `Name (0x13)`, JSON `key: 19, key_name: "Name"`.
  case code(UInt64, width: UInt8, name: Name?)
  /// A spec code point whose name was built at run time.
  case codeText(UInt64, width: UInt8, name: String)
  case text(String)
  /// A name (a literal, or a user's interned one): nothing copied per frame.
  case staticText(Name)
  case bytes(ArraySlice<UInt8>)
  case address(BDAddr, AddressType?)
  case uuid(BluetoothUUID, name: Name?)
  /// A raw count in spec units with its scaled meaning: text `30.00 ms (24)`,
  /// JSON `key: 24, key_<unit>: 30.0` (only `key` when `scale` is 1).
  case measure(Int64, scale: Double, unit: Name)
  /// A real number: text with `places` decimals and the unit (`812.5 ms`), JSON the number.
  case real(Double, places: UInt8, unit: Name)
  /// Explicitly absent (JSON `null`; text "none").
  case null
  /// Starts a nested object; the fields that follow one level deeper belong to it.
  case object
  /// Starts an array; each element is a field one level deeper (keys are ignored in JSON).
  case array
}

/// How much of a frame's field list a consumer shows, and so how much is kept.
///
/// Fields are a presentation of what was decoded; the typed facts beside them (`DissectedFrame`)
/// are decoded whatever the detail, so every consumer sees the same facts. Only what is stored
/// in the list changes: analyses keep none, plain text the fields it shows, JSON and `-v` all.
public enum FieldDetail: Sendable, Equatable {
  /// No fields (analyses that read facts only).
  case none
  /// Fields plain text shows: verbose fields and groups are dropped.
  case plain
  /// Every field.
  case all
}

/// One decoded field: a JSON key (snake_case), a text label, a value and its nesting depth.
public struct Field: Sendable {
  public var key: Name
  public var label: Name
  public var value: FieldValue
  public var depth: Int
  /// Shown in text only with `--verbose` (JSON always has it).
  public var isVerbose = false
  /// A group the text output does not title: its members show at the group's own level.
  public var isInline = false
}

/// The decoded fields of one frame, flat with depths, so frames reuse one buffer.
///
/// Fields are stored without reference counting: strings and byte runs live in side arrays and
/// the stored field only holds their index, so appending, copying and clearing fields (millions
/// of times) costs no retains, releases or value-witness calls. `self[i]` gives a `Field` back.
public struct FieldList: Sendable {
  /// A field as stored: plain data only (renderers read these; strings and bytes by slot).
  public struct Stored: Sendable {
    // Declaration order is memory order: what JSON reads (key, value, depth) comes first and
    // the text-only label last, so a frame's fields span fewer cache lines for JSON.
    public var key: Name
    public var value: StoredValue
    public var depth: Int32
    public var isVerbose: Bool
    public var isInline: Bool
    public var label: Name

    @inlinable init(key: Name, label: Name, value: StoredValue, depth: Int32, isVerbose: Bool, isInline: Bool) {
      self.key = key
      self.label = label
      self.value = value
      self.depth = depth
      self.isVerbose = isVerbose
      self.isInline = isInline
    }
  }

  /// `FieldValue` with strings and byte runs replaced by slots in the list's side arrays.
  public enum StoredValue: Sendable {
    case unsigned(UInt64, NumberStyle)
    case signed(Int64)
    case bool(Bool)
    case code(UInt64, width: UInt8, name: Name?)
    case codeText(UInt64, width: UInt8, slot: Int)
    case text(slot: Int)
    case staticText(Name)
    /// A run in the list's byte arena.
    case bytes(slot: Range<Int>)
    case address(BDAddr, AddressType?)
    case uuid(BluetoothUUID, name: Name?)
    case measure(Int64, scale: Double, unit: Name)
    case real(Double, places: UInt8, unit: Name)
    case null
    case object
    case array
  }

  /// Fields in use are `stored[0..<used]`; clearing resets `used` (plain data), in O(1).
  @usableFromInline var stored: ContiguousArray<Stored> = []
  @usableFromInline var used = 0
  @usableFromInline var strings: [String] = []
  /// Byte runs, copied out of the frame's bytes; a `.bytes` value names its run.
  @usableFromInline var byteArena = ByteArena()
  public internal(set) var depth: Int {
    get { _depth }
    set { _depth = newValue }
  }
  @usableFromInline var _depth = 0
  public init() {}

  public var isEmpty: Bool { used == 0 }
  public var count: Int { used }

  /// How many fields in use are values rather than groups: with none, text has nothing to show.
  public var leafCount: Int { _leafCount }
  @usableFromInline var _leafCount = 0
  /// How many of those text shows without `-v`: values neither verbose nor inside a verbose
  /// group. With none, plain text has no detail lines to write and skips the walk.
  public var plainLeafCount: Int { _plainLeafCount }
  @usableFromInline var _plainLeafCount = 0
  /// The depth of the outermost verbose group open, if any.
  @usableFromInline var verboseGroupDepth: Int32 = .max
  /// What is kept (set by the dissector for its consumer; `.all` by default).
  public var detail = FieldDetail.all

  /// Whether a field added now is kept: `verbose` for a verbose field or group.
  @inlinable @inline(__always) func keeps(verbose: Bool) -> Bool {
    switch detail {
    case .all: return true
    case .plain: return !verbose && Int32(_depth) <= verboseGroupDepth
    case .none: return false
    }
  }

  /// Whether a group opened now would be kept: decoders skip building groups the consumer will
  /// not see (their facts are recorded elsewhere).
  @inlinable @inline(__always) public func keepsGroup(verbose: Bool) -> Bool { keeps(verbose: verbose) }

  /// Notes a verbose group opening at the current depth (whether it is kept or not).
  @inlinable @inline(__always) mutating func noteGroup(verbose: Bool) {
    if verbose && Int32(_depth) < verboseGroupDepth { verboseGroupDepth = Int32(_depth) }
  }

  @inlinable @inline(__always) mutating func push(_ field: Stored) {
    switch field.value {
    case .object, .array:
      break
    default:
      _leafCount += 1
      if !field.isVerbose && field.depth <= verboseGroupDepth { _plainLeafCount += 1 }
    }
    if used < stored.count { stored[used] = field } else { stored.append(field) }
    used += 1
  }

  /// Every field as a `Field` (tests and tools; renderers index the list instead).
  public var fields: [Field] { (0..<used).map { self[$0] } }

  public subscript(index: Int) -> Field {
    let field = stored[index]
    return Field(key: field.key, label: field.label, value: value(field.value), depth: Int(field.depth), isVerbose: field.isVerbose, isInline: field.isInline)
  }

  /// The fields in use, read in place (renderers' hot path: copying a stored field onto the
  /// stack and reading it back costs more than reading it where it is).
  @inlinable @inline(__always) package func withStoredFields<R>(_ body: (Span<Stored>) -> R) -> R {
    body(stored.span.extracting(0..<used))
  }

  /// The stored field at `index`, without materializing strings or bytes (renderers' hot path).
  @inline(__always) public func entry(at index: Int) -> Stored { stored[index] }
  @inline(__always) public func string(slot: Int) -> String { strings[slot] }
  @inline(__always) public func bytes(slot: Range<Int>) -> ArraySlice<UInt8> { byteArena[slot] }
  /// The bytes of `slot` without a copy or a retain (renderers' hot path).
  @inlinable @inline(__always) package func withBytes<R>(slot: Range<Int>, _ body: (ByteView) -> R) -> R {
    byteArena.withBytes(slot, body)
  }

  /// The depth of field `index` (renderers' hot path: no copy of the value).
  @inline(__always) public func depth(at index: Int) -> Int { Int(stored[index].depth) }
  @inline(__always) public func key(at index: Int) -> Name { stored[index].key }
  @inline(__always) public func isGroup(at index: Int) -> Bool {
    switch stored[index].value {
    case .object, .array: return true
    default: return false
    }
  }

  public func value(_ stored: StoredValue) -> FieldValue {
    switch stored {
    case let .unsigned(value, style): return .unsigned(value, style)
    case .signed(let value): return .signed(value)
    case .bool(let value): return .bool(value)
    case let .code(value, width, name): return .code(value, width: width, name: name)
    case let .codeText(value, width, slot): return .codeText(value, width: width, name: strings[slot])
    case .text(let slot): return .text(strings[slot])
    case .staticText(let text): return .staticText(text)
    case .bytes(let slot): return .bytes(byteArena[slot])
    case let .address(address, type): return .address(address, type)
    case let .uuid(uuid, name): return .uuid(uuid, name: name)
    case let .measure(raw, scale, unit): return .measure(raw, scale: scale, unit: unit)
    case let .real(value, places, unit): return .real(value, places: places, unit: unit)
    case .null: return .null
    case .object: return .object
    case .array: return .array
    }
  }

  @inlinable @inline(__always) mutating func store(_ value: FieldValue) -> StoredValue {
    switch value {
    case let .unsigned(value, style): return .unsigned(value, style)
    case .signed(let value): return .signed(value)
    case .bool(let value): return .bool(value)
    case let .code(value, width, name): return .code(value, width: width, name: name)
    case let .codeText(value, width, name):
      strings.append(name)
      return .codeText(value, width: width, slot: strings.count - 1)
    case .text(let text):
      strings.append(text)
      return .text(slot: strings.count - 1)
    case .staticText(let text): return .staticText(text)
    case .bytes(let data):
      return .bytes(slot: keep(data))
    case let .address(address, type): return .address(address, type)
    case let .uuid(uuid, name): return .uuid(uuid, name: name)
    case let .measure(raw, scale, unit): return .measure(raw, scale: scale, unit: unit)
    case let .real(value, places, unit): return .real(value, places: places, unit: unit)
    case .null: return .null
    case .object: return .object
    case .array: return .array
    }
  }

  /// Copies bytes into the arena; returns their slot.
  @inlinable mutating func keep(_ data: some Collection<UInt8>) -> Range<Int> {
    byteArena.append(contentsOf: data)
  }

  @inlinable mutating func keep(_ view: ByteView) -> Range<Int> { byteArena.append(view) }

  public mutating func removeAll() {
    used = 0
    _leafCount = 0
    _plainLeafCount = 0
    verboseGroupDepth = .max
    if !strings.isEmpty { strings.removeAll(keepingCapacity: true) }
    byteArena.removeAll()
    depth = 0
  }

  /// Once the fields were rendered: when the byte arena grew past `limit`, empties the list
  /// and lets the arena go.
  public mutating func releaseLargeBuffers(limit: Int) {
    guard byteArena.capacity > limit else { return }
    removeAll()
    byteArena.release(ifLargerThan: limit)
  }

  /// Drops every field from `index` on (a layer a higher one makes redundant in plain text).
  public mutating func truncate(to index: Int) {
    guard index < used else { return }
    used = index
    recount()
  }

  /// Counts the leaves, and those plain text shows, afresh (after fields changed in place).
  mutating func recount() {
    _leafCount = 0
    _plainLeafCount = 0
    var hiddenFrom = Int32.max
    for position in 0..<used {
      let field = stored[position]
      if field.depth <= hiddenFrom { hiddenFrom = .max }
      if isGroup(at: position) {
        if field.isVerbose && hiddenFrom == .max { hiddenFrom = field.depth }
        continue
      }
      _leafCount += 1
      if !field.isVerbose && hiddenFrom == .max { _plainLeafCount += 1 }
    }
  }

  @inlinable @inline(__always) public mutating func add(_ key: Name, _ label: Name, _ value: FieldValue) {
    guard keeps(verbose: false) else { return }
    let value = store(value)
    push(Stored(key: key, label: label, value: value, depth: Int32(_depth), isVerbose: false, isInline: false))
  }

  /// Opens a nested object. `inline`: text shows its members without a title line.
  /// `verbose`: text shows it (and all it holds) only with `-v`; JSON always has it.
  @inlinable public mutating func beginObject(_ key: Name, _ label: Name, inline: Bool = false, verbose: Bool = false) {
    noteGroup(verbose: verbose)
    if keeps(verbose: verbose) {
      push(Stored(key: key, label: label, value: .object, depth: Int32(_depth), isVerbose: verbose, isInline: inline))
    }
    _depth += 1
  }

  /// Marks the field at `index` (an object opened earlier) verbose, once it is known that a
  /// higher layer says it better (an ACL header under a decoded ATT PDU).
  public mutating func markVerbose(at index: Int) {
    guard index < used, !stored[index].isVerbose else { return }
    if detail == .plain {
      // Plain text keeps no verbose group: it goes, with what it holds.
      truncate(to: index)
      return
    }
    stored[index].isVerbose = true
    // The group's plain values are hidden now: take them off the count (unless a verbose
    // group around it hid them already).
    let depth = stored[index].depth
    var ancestorDepth = depth
    for position in stride(from: index - 1, through: 0, by: -1) where stored[position].depth < ancestorDepth {
      ancestorDepth = stored[position].depth
      if stored[position].isVerbose { return }
    }
    var hiddenFrom = Int32.max
    var position = index + 1
    while position < used, stored[position].depth > depth {
      let field = stored[position]
      if field.depth <= hiddenFrom { hiddenFrom = .max }
      if isGroup(at: position) {
        if field.isVerbose && hiddenFrom == .max { hiddenFrom = field.depth }
      } else if !field.isVerbose && hiddenFrom == .max {
        _plainLeafCount -= 1
      }
      position += 1
    }
  }

  /// Adds a field that text output shows only when verbose (lengths, raw opcode parts).
  @inlinable @inline(__always) public mutating func addVerbose(_ key: Name, _ label: Name, _ value: FieldValue) {
    guard keeps(verbose: true) else { return }
    let value = store(value)
    push(Stored(key: key, label: label, value: value, depth: Int32(_depth), isVerbose: true, isInline: false))
  }

  /// Opens an array. `verbose`: text shows it only with `-v`; JSON always has it.
  @inlinable public mutating func beginArray(_ key: Name, _ label: Name, verbose: Bool = false) {
    noteGroup(verbose: verbose)
    if keeps(verbose: verbose) {
      push(Stored(key: key, label: label, value: .array, depth: Int32(_depth), isVerbose: verbose, isInline: false))
    }
    _depth += 1
  }

  @inlinable public mutating func end() {
    if _depth > 0 { _depth -= 1 }
    if Int32(_depth) <= verboseGroupDepth { verboseGroupDepth = .max }
  }

  /// Closes every open group (after a decode error left some open).
  public mutating func closeAll() {
    depth = 0
    verboseGroupDepth = .max
  }

  /// Closes groups until `depth` is back to `level` (after a decoder threw inside its groups).
  public mutating func close(toDepth level: Int) {
    depth = min(depth, max(level, 0))
    if Int32(depth) <= verboseGroupDepth { verboseGroupDepth = .max }
  }

  // Shorthands used by decoders.
  @inlinable public mutating func uint(_ key: Name, _ label: Name, _ value: some BinaryInteger) {
    add(key, label, .unsigned(UInt64(value), .decimal))
  }
  @inlinable public mutating func hex(_ key: Name, _ label: Name, _ value: some BinaryInteger, width: UInt8) {
    add(key, label, .unsigned(UInt64(value), .hex(width)))
  }
  @inlinable public mutating func int(_ key: Name, _ label: Name, _ value: some BinaryInteger) {
    add(key, label, .signed(Int64(value)))
  }
  @inlinable public mutating func code(_ key: Name, _ label: Name, _ value: some BinaryInteger, width: UInt8, name: Name?) {
    add(key, label, .code(UInt64(value), width: width, name: name))
  }
  @inlinable public mutating func bytes(_ key: Name, _ label: Name, _ value: ArraySlice<UInt8>) {
    add(key, label, .bytes(value))
  }
  /// Bytes from a view, copied into the list (views do not outlive decoding).
  @inlinable public mutating func bytes(_ key: Name, _ label: Name, _ view: ByteView) {
    guard keeps(verbose: false) else { return }
    push(Stored(key: key, label: label, value: .bytes(slot: keep(view)), depth: Int32(_depth), isVerbose: false, isInline: false))
  }
  /// Bytes text shows only when verbose (raw values under a decoded one).
  @inlinable public mutating func verboseBytes(_ key: Name, _ label: Name, _ view: ByteView) {
    guard keeps(verbose: true) else { return }
    push(Stored(key: key, label: label, value: .bytes(slot: keep(view)), depth: Int32(_depth), isVerbose: true, isInline: false))
  }
  @inlinable public mutating func measure(_ key: Name, _ label: Name, _ raw: some BinaryInteger, scale: Double, unit: Name) {
    add(key, label, .measure(Int64(raw), scale: scale, unit: unit))
  }
  @inlinable public mutating func flag(_ key: Name, _ label: Name, _ value: Bool) {
    add(key, label, .bool(value))
  }
  @inlinable public mutating func real(_ key: Name, _ label: Name, _ value: Double, places: UInt8, unit: Name) {
    add(key, label, .real(value, places: places, unit: unit))
  }
  @inlinable public mutating func text(_ key: Name, _ label: Name, _ value: Name) {
    add(key, label, .staticText(value))
  }
}
