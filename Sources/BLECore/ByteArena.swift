/// Bytes copied out of records, frame after frame, into one buffer that is emptied by
/// resetting a count: clearing costs nothing and appending a value costs a copy, not an
/// allocation. A run of bytes is named by its range in the arena. Also the text of a frame's
/// header words (`SummaryLine`), composed in place (`compose`).
public struct ByteArena: Sendable {
  @usableFromInline var storage: [UInt8] = []
  @usableFromInline var used = 0

  public init() {}

  public var count: Int { used }
  public var isEmpty: Bool { used == 0 }
  /// Bytes the arena holds room for.
  public var capacity: Int { storage.count }

  /// Makes room for `extra` more bytes.
  @inlinable @inline(__always) mutating func reserve(_ extra: Int) {
    if used &+ extra > storage.count { grow(used &+ extra) }
  }

  @usableFromInline @inline(never) mutating func grow(_ needed: Int) {
    // Geometric, like an array, so appends stay amortized O(1).
    storage.append(contentsOf: repeatElement(0, count: Swift.max(needed - storage.count, storage.count, 64)))
  }

  /// Copies lent bytes in; returns where they are.
  @inlinable @inline(__always) public mutating func append(_ bytes: ByteView) -> Range<Int> {
    // Safety: the view's bytes are pinned by its lender for this call.
    append(UnsafeBufferPointer(start: bytes.base + bytes.startIndex, count: bytes.count))
  }

  // Safety: `bytes` are lent for the call; room for them is made before the copy.
  @inlinable @inline(__always) mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) -> Range<Int> {
    let start = used
    reserve(bytes.count)
    if let source = bytes.baseAddress, !bytes.isEmpty {
      // Safety: `start..<start + bytes.count` lies within the storage (`reserve` above).
      storage.withUnsafeMutableBufferPointer { target in
        (target.baseAddress! + start).update(from: source, count: bytes.count)
      }
    }
    used = start &+ bytes.count
    return start..<used
  }

  /// Copies `bytes` in (any collection); returns where they are.
  @inlinable public mutating func append(contentsOf bytes: some Collection<UInt8>) -> Range<Int> {
    if let range = bytes.withContiguousStorageIfAvailable({ append($0) }) { return range }
    return append(Array(bytes))
  }

  @inlinable mutating func append(_ bytes: [UInt8]) -> Range<Int> {
    // Safety: the array's bytes are lent for the call.
    bytes.withUnsafeBufferPointer { append($0) }
  }

  /// Makes room for `maximumBytes` at the end, lets `body` write its parts there (`TextComposer`
  /// never writes past the room), and keeps what it wrote.
  @inlinable @inline(__always) public mutating func compose(maximumBytes: Int, _ body: (inout TextComposer) -> Void) {
    reserve(maximumBytes)
    let start = used
    // Safety: `start..<start + maximumBytes` lies within the storage (`reserve` above); the composer ends with the closure.
    let written = storage.withUnsafeMutableBufferPointer { all in
      var composer = TextComposer(target: all.baseAddress! + start, limit: maximumBytes)
      body(&composer)
      return composer.count
    }
    used = start &+ written
  }

  /// Forgets every run; the buffer is kept.
  @inlinable public mutating func removeAll() { used = 0 }

  /// Forgets every run and, when the buffer grew past `limit`, lets it go.
  public mutating func release(ifLargerThan limit: Int) {
    used = 0
    if storage.count > limit { storage = [] }
  }

  public subscript(run: Range<Int>) -> ArraySlice<UInt8> {
    precondition(run.upperBound <= used, "ByteArena run out of range")
    return storage[run]
  }

  /// The bytes of `run` without a copy, lent to `body`.
  @inlinable public func withBytes<R>(_ run: Range<Int>, _ body: (ByteView) -> R) -> R {
    precondition(run.lowerBound >= 0 && run.upperBound <= used, "ByteArena run out of range")
    // Safety: the run is checked against `used` above; the storage is pinned while `body` runs.
    return storage.withUnsafeBufferPointer { body(ByteView.pinned(UnsafeBufferPointer(rebasing: $0[run]), count: run.count)) }
  }
}
