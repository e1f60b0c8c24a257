/// A run of captured bytes the reader does not own: a pointer and absolute offsets.
///
/// Views exist only while the bytes they point into are pinned (`ByteReader.reading`), so a
/// view is never stored: whatever outlives the decoding of a frame copies its bytes
/// (`Array(view)`, `FieldList.bytes`, `SummaryLine.appendBytes`). Passing views around costs no
/// reference counting, which is what makes them cheaper than array slices on the hot path.
/// Not Sendable: the bytes are pinned by one thread's call.
public struct ByteView: RandomAccessCollection {
  /// The byte at absolute offset 0 of the pinned buffer.
  // Safety: read only at indices checked against `startIndex..<endIndex`, which the lender pins.
  @usableFromInline let base: UnsafePointer<UInt8>
  public let startIndex: Int
  public let endIndex: Int

  // Safety: callers (the pinning functions, readers splitting a view) pass bounds within pinned bytes.
  @inlinable init(base: UnsafePointer<UInt8>, startIndex: Int, endIndex: Int) {
    self.base = base
    self.startIndex = startIndex
    self.endIndex = endIndex
  }

  @inlinable public subscript(position: Int) -> UInt8 {
    precondition(position >= startIndex && position < endIndex, "ByteView index out of range")
    return base[position]
  }

  @inlinable public subscript(bounds: Range<Int>) -> ByteView {
    precondition(bounds.lowerBound >= startIndex && bounds.upperBound <= endIndex, "ByteView range out of bounds")
    return ByteView(base: base, startIndex: bounds.lowerBound, endIndex: bounds.upperBound)
  }

  @inlinable public var count: Int { endIndex - startIndex }
  @inlinable public var isEmpty: Bool { endIndex == startIndex }
  @inlinable public func index(after i: Int) -> Int { i + 1 }
  @inlinable public func index(before i: Int) -> Int { i - 1 }

  /// The bytes as a buffer, for the homes of unsafe code (the output buffer's copies).
  // Safety: exactly the view's bytes; valid as long as the view, which its lender pins.
  @inlinable package var buffer: UnsafeBufferPointer<UInt8> {
    UnsafeBufferPointer(start: base + startIndex, count: count)
  }

  // Safety: as `buffer`: the lent bytes, for the call only (array copies use it).
  @inlinable public func withContiguousStorageIfAvailable<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R? {
    try body(buffer)
  }

  /// A view of a literal's bytes, which live as long as the program (`utf8Start` traps for a
  /// literal held as one scalar).
  @inlinable @inline(__always) public init(_ literal: StaticString) {
    self.init(base: literal.utf8Start, startIndex: 0, endIndex: literal.utf8CodeUnitCount)
  }

  /// Pins `text`'s UTF-8 bytes (in place for a native string) and hands `body` a view of them,
  /// 0-based.
  @inlinable public static func pinning<R>(utf8 text: String, _ body: (ByteView) -> R) -> R {
    refuseEscape(R.self)
    var text = text
    // Safety: withUTF8 keeps the bytes alive and unchanged while `body` runs.
    return text.withUTF8 { body(pinned($0, count: $0.count)) }
  }

  /// Pins `bytes` and hands `body` a view of them, 0-based.
  @inlinable public static func pinning<R, E: Error>(_ bytes: [UInt8], _ body: (ByteView) throws(E) -> R) throws(E) -> R {
    refuseEscape(R.self)
    // Safety: the array's storage is pinned and unchanged while `body` runs; views do not outlive it.
    return try bytes.withUnsafeBufferPointer { (buffer) throws(E) -> R in try body(pinned(buffer, count: buffer.count)) }
  }

  /// Pins `bytes` (a slice) and hands `body` a view of them, 0-based.
  @inlinable public static func pinning<R, E: Error>(_ bytes: ArraySlice<UInt8>, _ body: (ByteView) throws(E) -> R) throws(E) -> R {
    refuseEscape(R.self)
    // Safety: as above, for the slice's part of the storage.
    return try bytes.withUnsafeBufferPointer { (buffer) throws(E) -> R in try body(pinned(buffer, count: buffer.count)) }
  }

  /// A view of memory the caller keeps alive and unchanged for as long as the view is used.
  // Safety: the caller's promise above; the view never reads past `min(count, buffer.count)`.
  @inlinable public static func pinned(_ buffer: UnsafeBufferPointer<UInt8>, count: Int) -> ByteView {
    ByteView(base: buffer.baseAddress ?? emptyBase, startIndex: 0, endIndex: Swift.min(count, buffer.count))
  }

  /// Stops a pinning function from handing back the view or reader it lent (they would point
  /// into bytes no longer pinned). Free where `R` is known, which is everywhere but in generic code.
  @inlinable @inline(__always) static func refuseEscape<R>(_ result: R.Type) {
    precondition(R.self != ByteView.self && R.self != ByteReader.self, "a view or reader handed back from the bytes it pins")
  }

  /// Where empty views point (an empty array may have no storage); never read, since every
  /// read is checked against the view's bounds first.
  // Safety: never dereferenced: an empty view has no index to read.
  @inlinable static var emptyBase: UnsafePointer<UInt8> { UnsafePointer(bitPattern: 1)! }
}

/// A bounds-checked cursor over captured bytes.
///
/// Every read checks what remains first and throws a `DecodeError` carrying the layer and the
/// offset instead of trapping. The reader does not own its bytes: it reads a `ByteView`, so
/// splitting a record into layers copies nothing and costs no reference counting. Readers are
/// made over pinned bytes (`ByteReader.reading`, or from a view) and never stored. Not
/// Sendable: the bytes are pinned by one thread's call.
public struct ByteReader {
  // Safety: read only after `require` checked the bytes lie before `endOffset`, within the pinned view.
  @usableFromInline let base: UnsafePointer<UInt8>
  /// Absolute offset of the next byte to read.
  public var offset: Int { _offset }
  @usableFromInline var _offset: Int
  /// Absolute offset one past the last byte this reader may read.
  public let endOffset: Int
  /// The layer named in errors.
  public var layer: ProtocolLayer

  /// A reader over a view; offsets are the view's own indices.
  @inlinable public init(_ view: ByteView, layer: ProtocolLayer) {
    self.base = view.base
    self._offset = view.startIndex
    self.endOffset = view.endIndex
    self.layer = layer
  }

  // Safety: callers (`readReader`) pass a part of this reader's own checked bounds.
  @inlinable init(base: UnsafePointer<UInt8>, offset: Int, endOffset: Int, layer: ProtocolLayer) {
    self.base = base
    self._offset = offset
    self.endOffset = endOffset
    self.layer = layer
  }

  /// Pins `bytes` and runs `body` with a reader over them (offsets from 0).
  @inlinable public static func reading<R, E: Error>(_ bytes: [UInt8], layer: ProtocolLayer, _ body: (inout ByteReader) throws(E) -> R) throws(E) -> R {
    try ByteView.pinning(bytes) { (view: ByteView) throws(E) -> R in
      var reader = ByteReader(view, layer: layer)
      return try body(&reader)
    }
  }

  /// Pins `bytes` (a slice) and runs `body` with a reader over them (offsets from 0).
  @inlinable public static func reading<R, E: Error>(_ bytes: ArraySlice<UInt8>, layer: ProtocolLayer, _ body: (inout ByteReader) throws(E) -> R) throws(E) -> R {
    try ByteView.pinning(bytes) { (view: ByteView) throws(E) -> R in
      var reader = ByteReader(view, layer: layer)
      return try body(&reader)
    }
  }

  @inlinable public var remaining: Int { endOffset - offset }
  @inlinable public var isAtEnd: Bool { offset >= endOffset }

  /// Throws unless `count` more bytes can be read. Compares with `remaining`, never `offset + count`.
  @inlinable @inline(__always) public func require(_ count: Int) throws(DecodeError) {
    guard count >= 0, count <= remaining else { throw truncation(count) }
  }

  /// The error for a read past the end (out of line: reads are inlined everywhere).
  @inlinable @inline(never) func truncation(_ count: Int) -> DecodeError {
    DecodeError(.truncated(needed: count, available: remaining), layer: layer, offset: offset)
  }

  @inlinable @inline(__always) public mutating func readUInt8() throws(DecodeError) -> UInt8 {
    try require(1)
    defer { _offset += 1 }
    return base[offset]
  }

  @inlinable public mutating func readInt8() throws(DecodeError) -> Int8 {
    Int8(bitPattern: try readUInt8())
  }

  @inlinable @inline(__always) public mutating func readUInt16LE() throws(DecodeError) -> UInt16 {
    try require(2)
    defer { _offset += 2 }
    return UInt16(base[offset]) | UInt16(base[offset + 1]) << 8
  }

  @inlinable @inline(__always) public mutating func readUInt16BE() throws(DecodeError) -> UInt16 {
    try require(2)
    defer { _offset += 2 }
    return UInt16(base[offset]) << 8 | UInt16(base[offset + 1])
  }

  @inlinable @inline(__always) public mutating func readUInt24LE() throws(DecodeError) -> UInt32 {
    try require(3)
    defer { _offset += 3 }
    return UInt32(base[offset]) | UInt32(base[offset + 1]) << 8 | UInt32(base[offset + 2]) << 16
  }

  @inlinable @inline(__always) public mutating func readUInt32LE() throws(DecodeError) -> UInt32 {
    try require(4)
    defer { _offset += 4 }
    return UInt32(base[offset]) | UInt32(base[offset + 1]) << 8
      | UInt32(base[offset + 2]) << 16 | UInt32(base[offset + 3]) << 24
  }

  @inlinable @inline(__always) public mutating func readUInt32BE() throws(DecodeError) -> UInt32 {
    try require(4)
    defer { _offset += 4 }
    return UInt32(base[offset]) << 24 | UInt32(base[offset + 1]) << 16
      | UInt32(base[offset + 2]) << 8 | UInt32(base[offset + 3])
  }

  @inlinable public mutating func readUInt64LE() throws(DecodeError) -> UInt64 {
    let low = UInt64(try readUInt32LE())
    let high = UInt64(try readUInt32LE())
    return high << 32 | low
  }

  /// A 6-byte device address, sent least significant byte first.
  public mutating func readBDAddr() throws(DecodeError) -> BDAddr {
    try require(6)
    defer { _offset += 6 }
    var value: UInt64 = 0
    for index in 0..<6 { value |= UInt64(base[offset + index]) << (8 * UInt64(index)) }
    return BDAddr(rawValue: value)
  }

  public mutating func readUUID16() throws(DecodeError) -> BluetoothUUID {
    BluetoothUUID(uuid16: try readUInt16LE())
  }

  public mutating func readUUID32() throws(DecodeError) -> BluetoothUUID {
    BluetoothUUID(uuid32: try readUInt32LE())
  }

  /// A 128-bit UUID as sent on the wire (least significant byte first).
  public mutating func readUUID128() throws(DecodeError) -> BluetoothUUID {
    let low = try readUInt64LE()
    let high = try readUInt64LE()
    return BluetoothUUID(high: high, low: low)
  }

  /// The next `count` bytes (a view: copy what must outlive the frame).
  @inlinable public mutating func readBytes(count: Int) throws(DecodeError) -> ByteView {
    try require(count)
    defer { _offset += count }
    return ByteView(base: base, startIndex: offset, endIndex: offset + count)
  }

  /// Everything left; never throws.
  @inlinable public mutating func readRemaining() -> ByteView {
    defer { _offset = endOffset }
    return ByteView(base: base, startIndex: offset, endIndex: endOffset)
  }

  @inlinable public func peekUInt8() throws(DecodeError) -> UInt8 {
    try require(1)
    return base[offset]
  }

  @inlinable public mutating func skip(_ count: Int) throws(DecodeError) {
    try require(count)
    _offset += count
  }

  /// Splits off the next `count` bytes as a bounded reader, so a child cannot read past its part.
  @inlinable public mutating func readReader(count: Int, layer: ProtocolLayer? = nil) throws(DecodeError) -> ByteReader {
    try require(count)
    defer { _offset += count }
    return ByteReader(base: base, offset: offset, endOffset: offset + count, layer: layer ?? self.layer)
  }

  /// Runs `body` on a copy and keeps its progress only if it succeeds.
  public mutating func atomically<T>(_ body: (inout ByteReader) throws(DecodeError) -> T) throws(DecodeError) -> T {
    var copy = self
    let result = try body(&copy)
    self = copy
    return result
  }
}
