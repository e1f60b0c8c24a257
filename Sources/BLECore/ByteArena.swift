/// Bytes copied out of records, frame after frame, into one buffer that is emptied by
/// resetting a count: clearing costs nothing and appending a value costs a copy, not an
/// allocation. A run of bytes is named by its range in the arena.
public struct ByteArena: Sendable {
  @usableFromInline var storage: [UInt8] = []
  @usableFromInline var used = 0

  public init() {}

  public var count: Int { used }
  public var isEmpty: Bool { used == 0 }
  /// Bytes the arena holds room for.
  public var capacity: Int { storage.count }

  /// Copies `bytes` in; returns where they are.
  @inlinable public mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) -> Range<Int> {
    let start = used
    let end = start + bytes.count
    if end > storage.count {
      // Grows geometrically, like an array, so appends stay amortized O(1).
      storage.append(contentsOf: repeatElement(0, count: Swift.max(end - storage.count, storage.count)))
    }
    if let source = bytes.baseAddress, !bytes.isEmpty {
      storage.withUnsafeMutableBufferPointer { target in
        (target.baseAddress! + start).update(from: source, count: bytes.count)
      }
    }
    used = end
    return start..<end
  }

  /// Copies `bytes` in (any collection); returns where they are.
  @inlinable public mutating func append(contentsOf bytes: some Collection<UInt8>) -> Range<Int> {
    if let range = bytes.withContiguousStorageIfAvailable({ append($0) }) { return range }
    return append(Array(bytes))
  }

  @inlinable mutating func append(_ bytes: [UInt8]) -> Range<Int> {
    bytes.withUnsafeBufferPointer { append($0) }
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

  /// The bytes of `run` without a copy.
  @inlinable public func withBytes<R>(_ run: Range<Int>, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
    precondition(run.lowerBound >= 0 && run.upperBound <= used, "ByteArena run out of range")
    return storage.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[run])) }
  }
}
