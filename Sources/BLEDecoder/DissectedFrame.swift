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
    case bytes(Int)
  }
  /// Parts in use are `stored[0..<used]`; clearing only resets `used` (the parts are plain
  /// data), so a frame's summary is emptied in O(1), millions of times.
  @usableFromInline var stored: [Stored] = []
  @usableFromInline var used = 0
  /// When false, parts are not kept: an output without summaries (JSON Lines) saves building them.
  public var isRecording = true
  var strings: [String] = []
  /// Byte runs copied out of the frame (`byteArena[byteRuns[slot]]`), capacity kept.
  @usableFromInline var byteArena: [UInt8] = []
  @usableFromInline var byteRuns: [Range<Int>] = []

  public init() {}

  public var isEmpty: Bool { used == 0 }
  public var count: Int { used }

  @inline(__always) mutating func push(_ part: Stored) {
    guard isRecording else { return }
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
      guard isRecording else { return }
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
    guard isRecording else { return }
    let start = byteArena.count
    byteArena.append(contentsOf: data)
    push(.bytes(byteRuns.count))
    byteRuns.append(start..<byteArena.count)
  }

  /// The bytes of a `.bytes` part without a copy (renderers).
  @inlinable @inline(__always) public func withBytes<R>(slot: Int, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
    let range = byteRuns[slot]
    return byteArena.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[range])) }
  }

  public mutating func removeAll(keepingCapacity: Bool = true) {
    used = 0
    if !strings.isEmpty { strings.removeAll(keepingCapacity: keepingCapacity) }
    if !byteRuns.isEmpty {
      byteRuns.removeAll(keepingCapacity: keepingCapacity)
      byteArena.removeAll(keepingCapacity: keepingCapacity)
    }
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
    case .bytes(let slot): return .bytes(byteArena[byteRuns[slot]])
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

  public mutating func append(_ element: Element) {
    if used < storage.count { storage[used] = element } else { storage.append(element) }
    used += 1
  }

  public mutating func removeAll() { used = 0 }

  public subscript(index: Int) -> Element { storage[index] }

  public func makeIterator() -> ArraySlice<Element>.Iterator { storage[0..<used].makeIterator() }

  public var array: [Element] { Array(storage[0..<used]) }
}

/// A characteristic value whose (pure, stateless) decoding was left for later. Its bytes are in
/// the frame: inline when they fit (most values: the rendering thread then finds them beside the
/// rest of the frame instead of in a buffer of their own), else in `pendingBytes`.
public struct PendingValue: Sendable {
  static let inlineCapacity = 32
  /// How many bytes are in the frame's `pendingInline`; -1 when they are in `pendingBytes`.
  var inlineCount = -1
  /// Index in `ProfileRegistry.all` (plain data: nothing to retain).
  var decoder: Int
  var context: ValueContext
  var name: StaticString?
}

/// Everything decoded from one record. Reused across frames: `reset` keeps the buffers.
public struct DissectedFrame: Sendable {
  /// 1-based, the same numbering as Wireshark.
  public var number = 0
  public var record = CaptureRecord(timestamp: 0, direction: nil, kind: .other(0), bytes: [])
  /// The protocol item's name for the header line ("LE Set Scan Enable", "Disconnection Complete").
  public var title: StaticString = ""
  /// The protocol the title belongs to when it is above HCI ("ATT", "SMP", "L2CAP").
  public var layerLabel: StaticString = ""
  /// The deepest layer this frame's bytes were decoded to (for `--layer`).
  public var deepestLayer: ProtocolLayer = .hci
  /// Attribute handles the frame names (for `--handle`), and the services and characteristics
  /// they belong to (for `--uuid`).
  public var attributeHandles = ReusableList<UInt16>()
  public var gattUUIDs = ReusableList<BluetoothUUID>()
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
  /// When set (by a pipeline that renders on another thread), a frame's last value is not
  /// decoded by the dissector; `completeDecoding()` does it where the frame is rendered.
  public var defersValueDecoding = false
  var pendingValue: PendingValue?
  /// The pending value's bytes (a copy: the record's bytes are only pinned while dissecting);
  /// the buffer keeps its capacity frame after frame.
  var pendingBytes: [UInt8] = []
  var pendingInline: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)

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
    attributeHandles.removeAll()
    gattUUIDs.removeAll()
    summary = ""
    if !summaryParts.isEmpty { summaryParts.removeAll(keepingCapacity: true) }
    summarySeparator = ": "
    connection = nil
    fields.removeAll()
    malformed = nil
    pendingValue = nil
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
    if pendingBytes.capacity > limit {
      pendingValue = nil
      pendingBytes = []
    }
    if summaryParts.byteArena.capacity > limit {
      summaryParts.removeAll(keepingCapacity: true)
      summaryParts.byteArena = []
    }
    fields.releaseLargeBuffers(limit: limit)
  }

  /// The whole summary as text (tests, tools); renderers write the parts directly.
  public var summaryText: String {
    var text = summary
    for part in summaryParts { text += part.text }
    return text
  }

  /// Leaves a value's decoding for `completeDecoding`, with a copy of its bytes (the record's
  /// bytes are pinned only while dissecting).
  mutating func deferDecoding(_ decoder: Int, value: ByteView, context: ValueContext, name: StaticString?) {
    var pending = PendingValue(decoder: decoder, context: context, name: name)
    if value.count <= PendingValue.inlineCapacity {
      pending.inlineCount = value.count
      withUnsafeMutableBytes(of: &pendingInline) { $0.copyMemory(from: UnsafeRawBufferPointer(value.buffer)) }
    } else {
      pendingBytes.removeAll(keepingCapacity: true)
      pendingBytes.append(contentsOf: value.buffer)
    }
    pendingValue = pending
  }

  /// Decodes the value left pending by a dissector that defers value decoding (no-op otherwise).
  public mutating func completeDecoding() {
    guard let pending = pendingValue else { return }
    pendingValue = nil
    func decode(_ view: ByteView) {
      ATTLayer.decodeNow(ProfileRegistry.all[pending.decoder], value: view, context: pending.context, name: pending.name, &self, summary: true)
    }
    if pending.inlineCount >= 0 {
      var bytes = pendingInline
      withUnsafeBytes(of: &bytes) { decode(ByteView.pinned($0.bindMemory(to: UInt8.self), count: pending.inlineCount)) }
    } else {
      // Moved out while decoding (the decoder mutates the frame), and back after: no copy.
      var bytes: [UInt8] = []
      swap(&bytes, &pendingBytes)
      ByteView.pinning(bytes, decode)
      swap(&bytes, &pendingBytes)
    }
  }
}
