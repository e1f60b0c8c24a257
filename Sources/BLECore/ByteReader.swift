/// A bounds-checked cursor over captured bytes.
///
/// Every read checks what remains first and throws a `DecodeError` carrying the layer and the
/// offset instead of trapping. Sub-readers share the storage (arrays are copy-on-write and
/// never mutated here), so splitting a record into layers copies nothing.
public struct ByteReader: Sendable {
  @usableFromInline let storage: ArraySlice<UInt8>
  /// Absolute offset into `storage` of the next byte to read.
  public var offset: Int { _offset }
  @usableFromInline var _offset: Int
  /// Absolute offset one past the last byte this reader may read.
  public let endOffset: Int
  /// The layer named in errors.
  public var layer: ProtocolLayer

  public init(_ bytes: [UInt8], layer: ProtocolLayer) {
    self.storage = bytes[...]
    self._offset = 0
    self.endOffset = bytes.count
    self.layer = layer
  }

  /// A reader over a slice, sharing its storage; offsets are the slice's own indices.
  public init(_ slice: ArraySlice<UInt8>, layer: ProtocolLayer) {
    self.storage = slice
    self._offset = slice.startIndex
    self.endOffset = slice.endIndex
    self.layer = layer
  }

  init(storage: ArraySlice<UInt8>, offset: Int, endOffset: Int, layer: ProtocolLayer) {
    self.storage = storage
    self._offset = offset
    self.endOffset = endOffset
    self.layer = layer
  }

  @inlinable public var remaining: Int { endOffset - offset }
  @inlinable public var isAtEnd: Bool { offset >= endOffset }

  /// Throws unless `count` more bytes can be read. Compares with `remaining`, never `offset + count`.
  @inlinable public func require(_ count: Int) throws(DecodeError) {
    guard count >= 0, count <= remaining else {
      throw DecodeError(.truncated(needed: count, available: remaining), layer: layer, offset: offset)
    }
  }

  @inlinable public mutating func readUInt8() throws(DecodeError) -> UInt8 {
    try require(1)
    defer { _offset += 1 }
    return storage[offset]
  }

  @inlinable public mutating func readInt8() throws(DecodeError) -> Int8 {
    Int8(bitPattern: try readUInt8())
  }

  @inlinable public mutating func readUInt16LE() throws(DecodeError) -> UInt16 {
    try require(2)
    defer { _offset += 2 }
    return UInt16(storage[offset]) | UInt16(storage[offset + 1]) << 8
  }

  @inlinable public mutating func readUInt16BE() throws(DecodeError) -> UInt16 {
    try require(2)
    defer { _offset += 2 }
    return UInt16(storage[offset]) << 8 | UInt16(storage[offset + 1])
  }

  @inlinable public mutating func readUInt24LE() throws(DecodeError) -> UInt32 {
    try require(3)
    defer { _offset += 3 }
    return UInt32(storage[offset]) | UInt32(storage[offset + 1]) << 8 | UInt32(storage[offset + 2]) << 16
  }

  @inlinable public mutating func readUInt32LE() throws(DecodeError) -> UInt32 {
    try require(4)
    defer { _offset += 4 }
    return UInt32(storage[offset]) | UInt32(storage[offset + 1]) << 8
      | UInt32(storage[offset + 2]) << 16 | UInt32(storage[offset + 3]) << 24
  }

  @inlinable public mutating func readUInt32BE() throws(DecodeError) -> UInt32 {
    try require(4)
    defer { _offset += 4 }
    return UInt32(storage[offset]) << 24 | UInt32(storage[offset + 1]) << 16
      | UInt32(storage[offset + 2]) << 8 | UInt32(storage[offset + 3])
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
    for index in 0..<6 { value |= UInt64(storage[offset + index]) << (8 * UInt64(index)) }
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

  /// The next `count` bytes, sharing storage.
  public mutating func readBytes(count: Int) throws(DecodeError) -> ArraySlice<UInt8> {
    try require(count)
    defer { _offset += count }
    return storage[offset..<(offset + count)]
  }

  /// Everything left; never throws.
  public mutating func readRemaining() -> ArraySlice<UInt8> {
    defer { _offset = endOffset }
    return storage[offset..<endOffset]
  }

  public func peekUInt8() throws(DecodeError) -> UInt8 {
    try require(1)
    return storage[offset]
  }

  public mutating func skip(_ count: Int) throws(DecodeError) {
    try require(count)
    _offset += count
  }

  /// Splits off the next `count` bytes as a bounded reader, so a child cannot read past its part.
  public mutating func readReader(count: Int, layer: ProtocolLayer? = nil) throws(DecodeError) -> ByteReader {
    try require(count)
    defer { _offset += count }
    return ByteReader(storage: storage, offset: offset, endOffset: offset + count, layer: layer ?? self.layer)
  }

  /// Runs `body` on a copy and keeps its progress only if it succeeds.
  public mutating func atomically<T>(_ body: (inout ByteReader) throws(DecodeError) -> T) throws(DecodeError) -> T {
    var copy = self
    let result = try body(&copy)
    self = copy
    return result
  }
}
