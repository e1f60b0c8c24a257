import BLECore

/// A connection as labelled on a frame: which link it is and who is on the other end.
public struct ConnectionLabel: Sendable, Equatable {
  public var adapter: UInt16
  public var handle: UInt16
  /// Counts the connections that used this handle on this controller, from 1.
  public var generation: Int
  public var peer: BDAddr?
  public var peerType: AddressType?
  /// The local side's own address, when the capture shows it: a sniffed link's central (its
  /// CONNECT_IND's initiator). An HCI capture's host is "the local device" instead.
  public var localAddress: BDAddr? = nil

  public init(adapter: UInt16, handle: UInt16, generation: Int, peer: BDAddr?, peerType: AddressType?, localAddress: BDAddr? = nil) {
    self.adapter = adapter
    self.handle = handle
    self.generation = generation
    self.peer = peer
    self.peerType = peerType
    self.localAddress = localAddress
  }

  /// The local side as a GATT server: by its address when known, else the capturing host.
  public var localServer: GATTServerIdentity { localAddress.map { .peer($0) } ?? .local(adapter: adapter) }
}

/// A piece of a frame's one-line summary.
public enum SummaryPart: Sendable, Equatable {
  case text(Name)
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
    FixedDecimal(value, places: places)?.text ?? value.description
  }
}

/// A frame's header words, written as text as they are appended: a part is formatted once,
/// into a buffer that is emptied by resetting a count, and a renderer copies the text out in
/// one go. Appending costs no allocation and no reference counting once the buffer has grown.
public struct SummaryLine: Sendable {
  @usableFromInline var bytes = ByteArena()
  /// Whether the first part was a `.hex` (a handle): such words continue the title.
  @usableFromInline var _startsWithHex = false
  public var startsWithHex: Bool { _startsWithHex }
  /// The texts of the interned names appended so far (a user's decoder names its words).
  @usableFromInline var names = NameCache()
  /// One-line output (`-1`): a value comes before its attribute's name, and decoders may say
  /// less (a long list by its first item and a count). Kept across `removeAll`.
  public var compact = false

  public init() {}

  public var isEmpty: Bool { bytes.isEmpty }
  /// The text's length in bytes.
  public var byteCount: Int { bytes.count }
  /// Bytes the line holds room for.
  public var capacity: Int { bytes.capacity }

  /// The words as a String (tests, tools; renderers copy the bytes).
  public var text: String { withText { String(decoding: $0, as: UTF8.self) } }

  /// The text in place.
  @inlinable @inline(__always) package func withText<R>(_ body: (ByteView) -> R) -> R {
    bytes.withBytes(0..<bytes.count, body)
  }

  /// Appends every word of `other`.
  public mutating func append(contentsOf other: SummaryLine) {
    if bytes.isEmpty { _startsWithHex = other.startsWithHex }
    other.withText { _ = bytes.append($0) }
  }

  /// Inlined (in other modules too), so a part spelled at the call site is formatted directly
  /// (the enum is never built and passed by address).
  @inlinable @inline(__always) public mutating func append(_ part: SummaryPart) {
    if bytes.isEmpty {
      if case .hex = part { _startsWithHex = true } else { _startsWithHex = false }
    }
    switch part {
    case .text(let words):
      if let text = words.staticString {
        _ = bytes.append(ByteView(text))
      } else {
        appendName(words)
      }
    case .number(let value): bytes.compose(maximumBytes: TextFormat.maximumDecimal) { $0.number(value) }
    case let .hex(value, width):
      bytes.compose(maximumBytes: Int(width) &+ 2) { $0.hexPrefixed(value, width: Int(width)) }
    case .real, .string, .bytes: appendOwned(part)
    }
  }

  /// Appends several parts with one reservation: a hot decoder's whole summary (a heart-rate
  /// measurement's words come to eight parts or more). `maximumBytes` bounds what `body` may
  /// write (`TextComposer` leaves out a part that would pass it).
  @inlinable @inline(__always) public mutating func compose(maximumBytes: Int, _ body: (inout TextComposer) -> Void) {
    if bytes.isEmpty { _startsWithHex = false }
    bytes.compose(maximumBytes: maximumBytes, body)
  }

  /// A name whose text is looked up (an interned name, a user's decoder's).
  @usableFromInline @inline(never) mutating func appendName(_ name: Name) {
    appendString(names.text(of: name))
  }

  @usableFromInline mutating func appendString(_ text: String) {
    ByteView.pinning(utf8: text) { _ = bytes.append($0) }
  }

  /// Parts that take more than a few instructions (or a String).
  @usableFromInline @inline(never) mutating func appendOwned(_ part: SummaryPart) {
    switch part {
    case .text(let words): appendName(words)
    case .number, .hex: append(part)
    case let .real(value, places):
      if let fixed = FixedDecimal(value, places: places) {
        bytes.compose(maximumBytes: TextFormat.maximumReal) { $0.fixed(fixed) }
      } else {
        appendString(value.description)  // 1e+20, inf, nan: too large for fixed decimals
      }
    case .string(let words): appendString(words)
    case .bytes(let data): ByteView.pinning(data) { appendHexBytes($0) }
    }
  }

  /// Bytes shown as hex, at most `SummaryPart.maximumBytes` of them, then " …".
  mutating func appendHexBytes(_ data: ByteView) {
    let shown = data.prefix(SummaryPart.maximumBytes)
    bytes.compose(maximumBytes: shown.count * 3) { $0.hexBytes(shown, separator: 0x20) }
    if data.count > SummaryPart.maximumBytes { append(.text(" …")) }
  }

  /// Bytes shown as hex, from a view (views do not outlive decoding).
  public mutating func appendBytes(_ view: ByteView) {
    if bytes.isEmpty { _startsWithHex = false }
    appendHexBytes(view)
  }

  public mutating func removeAll(keepingCapacity: Bool = true) {
    _startsWithHex = false
    if keepingCapacity { bytes.removeAll() } else { bytes = ByteArena() }
  }

  /// Forgets the words and, when the buffer grew past `limit`, lets it go.
  public mutating func release(ifLargerThan limit: Int) {
    removeAll(keepingCapacity: bytes.capacity <= limit)
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

/// The attribute whose groups end a frame, as the value stage needs it: a few words, not the
/// fact.
struct TrailingAttribute: Sendable {
  /// Its place in `DissectedFrame.attributes`.
  var index: Int
  var decoder: Int?
  /// Its raw value in the frame's value bytes.
  var raw: Range<Int>?
  /// Whether its typed value is decoded already (a Database Hash: the dissector needs it).
  var valueDecoded = false
}

/// Everything decoded from one record. Reused across frames: `reset` keeps the buffers.
public struct DissectedFrame: Sendable {
  /// 1-based, the same numbering as Wireshark.
  public var number = 0
  public var record = CaptureRecord(timestamp: 0, direction: nil, kind: .other(0), bytes: [])
  /// Which way the packet went, host to controller being the local side's: the record's, or
  /// as the decoder worked it out when the capture does not say (a data PDU sniffed over the
  /// air: central to peripheral is host to controller; ACL data in pcap link type 187).
  /// Analyses read this; renderers show the record's.
  public internal(set) var direction: Direction?
  /// The deepest layer this frame's bytes were decoded to (for `--layer`).
  public var deepestLayer: ProtocolLayer = .hci
  /// Typed facts (FrameFacts.swift): what the HCI packet is, what happened to links, the ATT
  /// PDU, and the attributes it is about with their GATT meaning and typed values.
  public var hci = HCIFact.none
  public var linkEvents = ReusableList<LinkEvent>()
  public internal(set) var att: ATTFact?
  /// The ATT PDU's opcode, kept beside the fact (set with it): renderers ask it per frame, and
  /// reading `att?.opcode` copies the whole fact first.
  public internal(set) var attOpcode: UInt8?
  public internal(set) var attributes: [AttributeFact] {
    @inlinable get { storedAttributes }
    set { storedAttributes = newValue }
    _modify { yield &storedAttributes }
  }
  /// The facts, under a name inlinable code may reach (`withAttribute`).
  @usableFromInline var storedAttributes: [AttributeFact] = []
  /// The attribute whose `gatt` and `decoded` groups end the frame (the one an ATT PDU is
  /// about): `ValueStage` decodes its value and writes its groups, where the engine runs it.
  var trailing: TrailingAttribute?
  /// Where the trailing attribute's meaning came from when that is a map (its `gatt` group
  /// names the file); nil for meanings from the capture.
  var trailingProvenance: GATTMapProvenance?
  /// Raw attribute values the facts point into (`AttributeFact.rawValue`), capacity kept.
  var valueBytes = ByteArena()
  /// What the header line tells of a frame ATT does not describe (HeaderFacts.swift). The
  /// header line itself is BLERender's (`FrameDescription`).
  public var header = HeaderFact.none
  /// For an air packet: what the sniffer said of it and its access address.
  public internal(set) var air: AirFact?
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

  /// Starts the decoding of the record already in `record`: what an earlier record left is
  /// cleared first, unless `recycle()` already cleared it.
  public mutating func reset(number: Int) {
    if !isClear { clear() }
    isClear = false
    self.number = number
    capturedLength = record.bytes.count
    deepestLayer = record.kind.isHCIPacket ? .hci : .note
  }

  /// Whether nothing decoded is held (a new frame, or one cleared by `recycle`).
  var isClear = true

  /// Drops what was decoded, keeping the buffers' capacity (the record stays).
  mutating func clear() {
    hci = .none
    linkEvents.removeAll()
    att = nil
    attOpcode = nil
    // Most frames hold one attribute or none: removeLast is much cheaper than removeAll.
    if attributes.count == 1 {
      attributes.removeLast()
    } else if !attributes.isEmpty {
      attributes.removeAll(keepingCapacity: true)
    }
    valueBytes.removeAll()
    trailing = nil
    if trailingProvenance != nil { trailingProvenance = nil }
    if case .none = header {} else { header = .none }
    if air != nil { air = nil }
    connection = nil
    fields.removeAll()
    malformed = nil
    if !diagnostics.isEmpty { diagnostics.removeAll(keepingCapacity: true) }
    isClear = true
  }

  /// Readies a consumed frame for the next record: large buffers let go, the rest cleared.
  /// On two threads the consumer's thread calls it, which takes the clearing off the
  /// dissecting thread (the busier one).
  public mutating func recycle() {
    releaseLargeBuffers()
    clear()
  }

  /// Frames are reused, and each buffer keeps the capacity of the largest record or value it
  /// held: 1 024 frames in flight that once held a 256 KiB record would keep 256 MiB. Once a
  /// frame is rendered, buffers grown past this are let go.
  package static let retainedBufferLimit = 16 << 10

  /// The frame's content is gone afterwards when a buffer was let go: call it once rendered.
  public mutating func releaseLargeBuffers() {
    let limit = Self.retainedBufferLimit
    if record.bytes.capacity > limit { record.bytes = [] }
    if valueBytes.capacity > limit {
      attributes.removeAll(keepingCapacity: true)
      valueBytes.release(ifLargerThan: limit)
    }
    fields.releaseLargeBuffers(limit: limit)
  }

  /// Copies a raw value into `valueBytes`; returns where it is.
  mutating func keepValue(_ view: ByteView) -> Range<Int> { valueBytes.append(view) }

  /// The raw bytes of `range` in `valueBytes` (a fact's `rawValue`).
  public func valueBytes(_ range: Range<Int>) -> ArraySlice<UInt8> { valueBytes[range] }

  /// Handles the frame names (`--handle`): its attributes', and an Error Response's.
  public func namesHandle(_ handle: UInt16) -> Bool {
    if attributes.contains(where: { $0.handle == handle }) { return true }
    if case .error(_, let errorHandle, _)? = att?.operation { return errorHandle == handle }
    return false
  }
}
