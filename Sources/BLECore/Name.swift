import Dispatch

/// A name shown in output: a field's key or label, a code's name, a unit, header words, what
/// an attribute is.
///
/// Almost every name is a literal in the decoders and tables (`"heart_rate"`, `"Heart Rate"`),
/// kept as the `StaticString` itself: making one, copying it and writing it cost what a
/// `StaticString` costs, and it holds no reference (field lists and frame facts stay plain
/// data). A name known only at run time (from a user's decoder file, `--decoders`) is
/// interned: its text goes into `NameTable` once, when the file is read, and the name is its
/// place there; its text is looked up only when it is shown (once per writer: `NameCache`).
public struct Name: Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
  @usableFromInline enum Storage: Sendable {
    /// A literal's text, always held by pointer (`StaticString.hasPointerRepresentation`).
    case literal(StaticString)
    /// A `StaticString` holding one scalar instead (made in a generic context only).
    case scalar(Unicode.Scalar)
    /// A place in `NameTable`.
    case interned(Int)
  }

  @usableFromInline let storage: Storage

  @inlinable @inline(__always) public init(stringLiteral value: StaticString) { self.init(value) }
  @inlinable @inline(__always) public init(_ text: StaticString) {
    storage = text.hasPointerRepresentation ? .literal(text) : .scalar(text.unicodeScalar)
  }
  init(interned place: Int) { storage = .interned(place) }

  /// The literal (its bytes are at `utf8Start`), or nil for a name whose text is looked up
  /// (`description`).
  @inlinable @inline(__always) public var staticString: StaticString? {
    if case .literal(let text) = storage { return text }
    return nil
  }

  public var description: String {
    switch storage {
    case .literal(let text): return text.description
    case .scalar(let scalar): return String(scalar)
    case .interned(let place): return NameTable.text(at: place)
    }
  }

  // A literal's paths are inlined (they cost what a `StaticString`'s do, plus one test); the
  // others are out of line.
  @usableFromInline @inline(never) func outOfLineText() -> String { description }
  @usableFromInline @inline(never) func outOfLineByteCount() -> Int { description.utf8.count }

  /// The text's length in UTF-8 bytes.
  @inlinable @inline(__always) public var utf8CodeUnitCount: Int {
    if case .literal(let text) = storage { return text.utf8CodeUnitCount }
    return outOfLineByteCount()
  }

  /// Whether the text is empty (never for an interned name: empty text is not interned).
  @inlinable @inline(__always) public var isEmpty: Bool {
    if case .literal(let text) = storage { return text.utf8CodeUnitCount == 0 }
    return false
  }

  /// Lends the text's UTF-8 bytes to `body`.
  @inlinable @inline(__always) public func withUTF8<R>(_ body: (ByteView) -> R) -> R {
    if case .literal(let text) = storage { return body(ByteView(text)) }
    return ByteView.pinning(utf8: outOfLineText(), body)
  }
}

/// The texts of the interned names a writer has shown (an output buffer, a renderer's header
/// words), kept by the writer: a name's text is looked up in `NameTable` (under its lock) the
/// first time only. A value owned by one writer on one thread, so reading it takes no lock.
/// Places are never given out twice, so a text kept here stays that name's text.
public struct NameCache: Sendable {
  /// The text at place `first + i`, once looked up.
  var texts: [String?] = []
  var first = 0
  /// How many places one cache spans at most (a longer span starts it afresh).
  static let maximumSpan = 1 << 16

  public init() {}

  /// The text of `name` (a literal's without a lookup).
  public mutating func text(of name: Name) -> String {
    guard case .interned(let place) = name.storage else { return name.description }
    let index = place &- first
    if index >= 0 && index < texts.count, let text = texts[index] { return text }
    let text = NameTable.text(at: place)
    if texts.isEmpty || index < 0 || index >= Self.maximumSpan {
      texts = [text]
      first = place
    } else {
      if index >= texts.count { texts.append(contentsOf: repeatElement(nil, count: index + 1 - texts.count)) }
      texts[index] = text
    }
    return text
  }
}

extension Name: Equatable {
  /// Names with the same text are equal (a literal and an interned name too).
  public static func == (a: Name, b: Name) -> Bool {
    a.withUTF8 { first in b.withUTF8 { first.elementsEqual($0) } }
  }
}

/// The text of names known only at run time (names in a user's decoder file): an append-only
/// table of strings, a name being its place in it (`Name`). Texts are added while decoder files
/// are read and looked up only when an interned name is shown (user decoders are rare), both
/// behind one lock (tests read decoder files on several threads at once). Bounded: past
/// `maximumBytes` in all, text is refused (callers refuse the file).
public enum NameTable {
  public static let maximumBytes = 4 << 20

  /// The table, behind a lock.
  struct Store {
    var texts: [String] = []
    /// The place of `texts[0]`: places below it were released (`releaseAll`) and are never
    /// given out again.
    var first = 0
    /// Bytes interned so far (each text counts one byte more, as a literal's NUL).
    var used = 0

    mutating func intern(_ text: String, cost: Int) -> Int? {
      guard used + cost <= NameTable.maximumBytes else { return nil }
      used += cost
      texts.append(text)
      return first + texts.count - 1
    }

    func text(at place: Int) -> String {
      let index = place - first
      return texts.indices.contains(index) ? texts[index] : "?"
    }

    mutating func releaseAll() {
      first += texts.count
      texts = []
      used = 0
    }
  }

  private static let store = Locked(Store())

  /// A name with `text`, or nil for an empty text or past the budget. Call it while loading,
  /// not per frame.
  public static func intern(_ text: String) -> Name? {
    let cost = text.utf8.count + 1
    guard cost > 1 else { return nil }
    return store.withLock { $0.intern(text, cost: cost) }.map(Name.init(interned:))
  }

  /// The text at `place`; "?" for a place released since (`releaseAll`).
  static func text(at place: Int) -> String { store.withLock { $0.text(at: place) } }

  /// Drops every text interned so far and restores the budget. Only for a process that reads
  /// decoder files again and again (the `decoders` fuzz target, after each input): a name
  /// interned before reads as "?" afterwards.
  package static func releaseAll() { store.withLock { $0.releaseAll() } }
}
