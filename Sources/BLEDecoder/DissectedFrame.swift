import BLECore

/// A connection as labelled on a frame: which link it is and who is on the other end.
public struct ConnectionLabel: Sendable, Equatable {
  public var adapter: UInt16
  public var handle: UInt16
  /// Counts the connections that used this handle on this controller, from 1.
  public var generation: Int
  public var peer: BDAddr?
  public var peerType: AddressType?
}

/// A piece of a frame's one-line summary.
public enum SummaryPart: Sendable, Equatable {
  case text(StaticString)
  case number(Int)
  /// A real number with a fixed number of decimals, trailing zeros dropped (`812.5`, `820.3`, `72`).
  case real(Double, places: UInt8)
  case hex(UInt64, width: UInt8)
  case string(String)
  /// Bytes shown as hex (a renderer may shorten long ones).
  case bytes(ArraySlice<UInt8>)

  public static func == (a: SummaryPart, b: SummaryPart) -> Bool {
    switch (a, b) {
    case let (.text(x), .text(y)): return x.description == y.description
    case let (.number(x), .number(y)): return x == y
    case let (.real(x, p), .real(y, q)): return x == y && p == q
    case let (.hex(x, w), .hex(y, v)): return x == y && w == v
    case let (.string(x), .string(y)): return x == y
    case let (.bytes(x), .bytes(y)): return x.elementsEqual(y)
    default: return false
    }
  }

  /// The text of this part (tests, tools; renderers write parts directly).
  public var text: String {
    switch self {
    case .text(let words): return words.description
    case .number(let value): return String(value)
    case let .real(value, places): return SummaryPart.formatReal(value, places: places)
    case let .hex(value, width): return Hex.prefixed(value, width: Int(width))
    case .string(let words): return words
    case .bytes(let data):
      let shown = data.prefix(SummaryPart.maximumBytes).map { Hex.string([$0]) }.joined(separator: " ")
      return data.count > SummaryPart.maximumBytes ? shown + " …" : shown
    }
  }

  /// Summaries show at most this many bytes of a value.
  public static let maximumBytes = 16

  /// `value` rounded to `places` decimals, without trailing zeros.
  public static func formatReal(_ value: Double, places: UInt8) -> String {
    guard let fixed = FixedDecimal(value, places: places) else { return value.description }
    var text = (fixed.negative ? "-" : "") + String(fixed.whole)
    if fixed.digits > 0 {
      let fractionText = String(fixed.fraction)
      text += "." + String(repeating: "0", count: fixed.digits - fractionText.count) + fractionText
    }
    return text
  }
}

/// A frame's summary as parts, stored without reference counting: strings and byte runs live
/// in side arrays, so appending and clearing the parts (millions of times) costs no retains.
public struct SummaryLine: Sendable, Sequence {
  /// A part as stored (renderers read these; strings and bytes by slot).
  public enum Stored: Sendable {
    case text(StaticString)
    case number(Int)
    case real(Double, places: UInt8)
    case hex(UInt64, width: UInt8)
    case string(Int)
    case bytes(Range<Int>)
  }
  /// Parts in use are `stored[0..<used]`; clearing only resets `used` (the parts are plain
  /// data), so a frame's summary is emptied in O(1), millions of times.
  @usableFromInline var stored: [Stored] = []
  @usableFromInline var used = 0
  var strings: [String] = []
  /// Byte runs copied out of the frame; a `.bytes` part names its run.
  @usableFromInline var byteArena = ByteArena()

  public init() {}

  public var isEmpty: Bool { used == 0 }
  public var count: Int { used }
  public var first: SummaryPart? { used > 0 ? self[0] : nil }

  /// Appends every part of `other`.
  public mutating func append(contentsOf other: SummaryLine) {
    for index in 0..<other.count { append(other[index]) }
  }

  @inline(__always) mutating func push(_ part: Stored) {
    if used < stored.count { stored[used] = part } else { stored.append(part) }
    used += 1
  }

  /// Inlined, so a part spelled at the call site becomes a stored part directly (the enum is
  /// never built and passed by address).
  @inline(__always) public mutating func append(_ part: SummaryPart) {
    switch part {
    case .text(let words): push(.text(words))
    case .number(let value): push(.number(value))
    case let .real(value, places): push(.real(value, places: places))
    case let .hex(value, width): push(.hex(value, width: width))
    case .string, .bytes: appendOwned(part)
    }
  }

  /// Parts whose text or bytes are kept in the side arrays.
  @inline(never) mutating func appendOwned(_ part: SummaryPart) {
    switch part {
    case .text, .number, .real, .hex: break
    case .string(let words):
        push(.string(strings.count))
      strings.append(words)
    case .bytes(let data):
      keepBytes(data)
    }
  }

  /// Bytes shown as hex, copied from a view (views do not outlive decoding).
  public mutating func appendBytes(_ view: ByteView) { keepBytes(view.buffer) }

  /// Copies bytes into the arena and adds a part showing them.
  mutating func keepBytes(_ data: some Collection<UInt8>) {
    push(.bytes(byteArena.append(contentsOf: data)))
  }

  /// The bytes of a `.bytes` part without a copy (renderers).
  @inlinable @inline(__always) public func withBytes<R>(slot: Range<Int>, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
    byteArena.withBytes(slot, body)
  }

  public mutating func removeAll(keepingCapacity: Bool = true) {
    used = 0
    if !strings.isEmpty { strings.removeAll(keepingCapacity: keepingCapacity) }
    byteArena.removeAll()
  }

  /// Drops the parts from `range.lowerBound` on (their strings stay until the next reset).
  public mutating func removeSubrange(_ range: PartialRangeFrom<Int>) {
    used = Swift.min(used, range.lowerBound)
  }

  /// The text of a `.string` part (renderers).
  @inline(__always) public func string(slot: Int) -> String { strings[slot] }
  /// The parts in use, read in place (renderers' hot path).
  @inlinable @inline(__always) public func withStoredParts<R>(_ body: (UnsafeBufferPointer<Stored>) -> R) -> R {
    stored.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[0..<used])) }
  }

  public subscript(index: Int) -> SummaryPart {
    switch stored[index] {
    case .text(let words): return .text(words)
    case .number(let value): return .number(value)
    case let .real(value, places): return .real(value, places: places)
    case let .hex(value, width): return .hex(value, width: width)
    case .string(let slot): return .string(strings[slot])
    case .bytes(let slot): return .bytes(byteArena[slot])
    }
  }

  public func makeIterator() -> IndexingIterator<[SummaryPart]> {
    (0..<used).map { self[$0] }.makeIterator()
  }
}

/// A list of plain values reused frame after frame: clearing resets a count (O(1)) instead of
/// going through `Array.removeAll`, which costs more than the frame's own decoding of it.
public struct ReusableList<Element: Sendable>: Sendable, Sequence {
  var storage: [Element] = []
  var used = 0

  public init() {}

  public var count: Int { used }
  public var isEmpty: Bool { used == 0 }
  public var first: Element? { used > 0 ? storage[0] : nil }

  public mutating func append(_ element: Element) {
    if used < storage.count { storage[used] = element } else { storage.append(element) }
    used += 1
  }

  public mutating func removeAll() { used = 0 }

  public subscript(index: Int) -> Element {
    get { storage[index] }
    _modify { yield &storage[index] }
  }

  public func makeIterator() -> ArraySlice<Element>.Iterator { storage[0..<used].makeIterator() }

  public var array: [Element] { Array(storage[0..<used]) }
}

/// Everything decoded from one record. Reused across frames: `reset` keeps the buffers.
public struct DissectedFrame: Sendable {
  /// 1-based, the same numbering as Wireshark.
  public var number = 0
  public var record = CaptureRecord(timestamp: 0, direction: nil, kind: .other(0), bytes: [])
  // The header words of HCI, L2CAP signaling and SMP frames, as their decoders still build them
  // (ATT frames' words are derived from facts at rendering). Renderers read every frame's words
  // through `FrameDescription`, never these directly.
  /// The protocol item's name for the header line ("LE Set Scan Enable", "Disconnection Complete").
  public var title: StaticString = ""
  /// The protocol the title belongs to when it is above HCI ("SMP", "L2CAP").
  public var layerLabel: StaticString = ""
  /// The deepest layer this frame's bytes were decoded to (for `--layer`).
  public var deepestLayer: ProtocolLayer = .hci
  /// Typed facts (FrameFacts.swift): what the HCI packet is, what happened to links, the ATT
  /// PDU, and the attributes it is about with their GATT meaning and typed values.
  public var hci = HCIFact.none
  public var linkEvents = ReusableList<LinkEvent>()
  public var att: ATTFact?
  public internal(set) var attributes: [AttributeFact] = []
  /// Raw attribute values the facts point into (`AttributeFact.rawValue`), capacity kept.
  var valueBytes = ByteArena()
  /// Short extra words for the header line ("enabled", "reason Remote User Terminated Connection").
  public var summary = ""
  /// More words after `summary`, kept as parts so the frequent frames (ACL data, completed
  /// packets) build no strings; renderers write them straight out.
  public var summaryParts = SummaryLine()
  /// What joins the title and the summary in the header line: ": " by default, " " when the
  /// summary continues the title ("Handle Value Notification 0x0010 Heart Rate Measurement").
  public var summarySeparator: StaticString = ": "
  public var connection: ConnectionLabel?
  /// The HCI-level fields (command, event, data packet header, note).
  public var fields = FieldList()
  /// Set when the bytes of some layer could not be decoded; the fields before it are kept.
  public var malformed: DecodeError?
  public var diagnostics: [Diagnostic] = []
  public init() {}

  /// How many bytes the record holds (its bytes are away while they are being dissected).
  public internal(set) var capturedLength = 0

  public mutating func reset(number: Int, record: CaptureRecord) {
    self.record = record
    reset(number: number)
  }

  /// Clears what was decoded, for the record already in `record`.
  public mutating func reset(number: Int) {
    self.number = number
    capturedLength = record.bytes.count
    title = ""
    layerLabel = ""
    deepestLayer = record.kind.isHCIPacket ? .hci : .note
    hci = .none
    linkEvents.removeAll()
    att = nil
    // Most frames hold one attribute or none: removeLast is much cheaper than removeAll.
    if attributes.count == 1 {
      attributes.removeLast()
    } else if !attributes.isEmpty {
      attributes.removeAll(keepingCapacity: true)
    }
    valueBytes.removeAll()
    summary = ""
    if !summaryParts.isEmpty { summaryParts.removeAll(keepingCapacity: true) }
    summarySeparator = ": "
    connection = nil
    fields.removeAll()
    malformed = nil
    if !diagnostics.isEmpty { diagnostics.removeAll(keepingCapacity: true) }
  }

  /// Frames are reused, and each buffer keeps the capacity of the largest record or value it
  /// held: 1 536 frames in flight that once held a 256 KiB record would keep 384 MiB. Once a
  /// frame is rendered, buffers grown past this are let go.
  public static let retainedBufferLimit = 16 << 10

  /// The frame's content is gone afterwards when a buffer was let go: call it once rendered.
  public mutating func releaseLargeBuffers() {
    let limit = Self.retainedBufferLimit
    if record.bytes.capacity > limit { record.bytes = [] }
    if valueBytes.capacity > limit {
      attributes.removeAll(keepingCapacity: true)
      valueBytes.release(ifLargerThan: limit)
    }
    if summaryParts.byteArena.capacity > limit {
      summaryParts.removeAll(keepingCapacity: true)
      summaryParts.byteArena.release(ifLargerThan: limit)
    }
    fields.releaseLargeBuffers(limit: limit)
  }

  /// Copies a raw value into `valueBytes`; returns where it is.
  mutating func keepValue(_ view: ByteView) -> Range<Int> { valueBytes.append(view.buffer) }

  /// The raw bytes of `range` in `valueBytes` (a fact's `rawValue`).
  public func valueBytes(_ range: Range<Int>) -> ArraySlice<UInt8> { valueBytes[range] }

  /// Handles the frame names (`--handle`): its attributes', and an Error Response's.
  public func namesHandle(_ handle: UInt16) -> Bool {
    if attributes.contains(where: { $0.handle == handle }) { return true }
    if case .error(_, let errorHandle, _)? = att?.operation { return errorHandle == handle }
    return false
  }
}
