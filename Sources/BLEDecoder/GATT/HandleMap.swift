/// Values keyed by attribute handle, in handle order, with the lookups a GATT table needs:
/// exact, the nearest at or before a handle, and removal of a range.
///
/// Handles are 16 bits, so entries are kept in buckets of 256 handles (by the high byte), each a
/// sorted array, and only non-empty buckets are stored. Every operation costs a binary search
/// plus at most one bucket's worth of moves, whatever order a capture declares handles in (a
/// single sorted array costs a move of the whole table per out-of-order insert).
public struct HandleMap<Value: Sendable>: Sendable {
  struct Bucket: Sendable {
    var high: UInt8
    /// Sorted by handle, all with `high` as their high byte.
    var handles: [UInt16] = []
    var values: [Value] = []
  }

  /// Non-empty buckets, sorted by `high`.
  var buckets: [Bucket] = []
  public private(set) var count = 0

  public init() {}

  public var isEmpty: Bool { count == 0 }

  /// Index of the bucket for `high`, or where it would be inserted.
  func bucketIndex(_ high: UInt8) -> (index: Int, found: Bool) {
    var low = 0
    var upper = buckets.count
    while low < upper {
      let middle = (low + upper) / 2
      if buckets[middle].high < high { low = middle + 1 } else { upper = middle }
    }
    return (low, low < buckets.count && buckets[low].high == high)
  }

  /// Index of the first handle >= `handle` in a sorted array.
  static func lowerBound(_ handles: [UInt16], _ handle: UInt16) -> Int {
    var low = 0
    var upper = handles.count
    while low < upper {
      let middle = (low + upper) / 2
      if handles[middle] < handle { low = middle + 1 } else { upper = middle }
    }
    return low
  }

  public subscript(handle: UInt16) -> Value? {
    get {
      let (b, found) = bucketIndex(UInt8(handle >> 8))
      guard found else { return nil }
      let i = Self.lowerBound(buckets[b].handles, handle)
      guard i < buckets[b].handles.count, buckets[b].handles[i] == handle else { return nil }
      return buckets[b].values[i]
    }
    set {
      if let newValue { insert(newValue, at: handle) } else { remove(handle) }
    }
  }

  /// Stores `value` at `handle`, replacing what was there.
  public mutating func insert(_ value: Value, at handle: UInt16) {
    let (b, found) = bucketIndex(UInt8(handle >> 8))
    if !found {
      buckets.insert(Bucket(high: UInt8(handle >> 8), handles: [handle], values: [value]), at: b)
      count += 1
      return
    }
    let i = Self.lowerBound(buckets[b].handles, handle)
    if i < buckets[b].handles.count, buckets[b].handles[i] == handle {
      buckets[b].values[i] = value
    } else {
      buckets[b].handles.insert(handle, at: i)
      buckets[b].values.insert(value, at: i)
      count += 1
    }
  }

  public mutating func remove(_ handle: UInt16) {
    removeAll(in: handle...handle)
  }

  /// The entry with the greatest handle <= `handle`.
  public func atOrBefore(_ handle: UInt16) -> (handle: UInt16, value: Value)? {
    var (b, found) = bucketIndex(UInt8(handle >> 8))
    if found {
      let i = Self.lowerBound(buckets[b].handles, handle)
      if i < buckets[b].handles.count, buckets[b].handles[i] == handle { return (handle, buckets[b].values[i]) }
      if i > 0 { return (buckets[b].handles[i - 1], buckets[b].values[i - 1]) }
    }
    // Every handle of the buckets before `b` is smaller: the last one of the previous bucket.
    guard b > 0 else { return nil }
    b -= 1
    return (buckets[b].handles[buckets[b].handles.count - 1], buckets[b].values[buckets[b].values.count - 1])
  }

  /// Removes every entry whose handle is in `range`.
  public mutating func removeAll(in range: ClosedRange<UInt16>) {
    var b = bucketIndex(UInt8(range.lowerBound >> 8)).index
    while b < buckets.count, UInt16(buckets[b].high) <= range.upperBound >> 8 {
      let start = Self.lowerBound(buckets[b].handles, range.lowerBound)
      var end = start
      while end < buckets[b].handles.count, buckets[b].handles[end] <= range.upperBound { end += 1 }
      if end > start {
        buckets[b].handles.removeSubrange(start..<end)
        buckets[b].values.removeSubrange(start..<end)
        count -= end - start
      }
      if buckets[b].handles.isEmpty { buckets.remove(at: b) } else { b += 1 }
    }
  }

  /// Removes every entry whose value matches.
  public mutating func removeAll(where shouldRemove: (Value) -> Bool) {
    var b = 0
    while b < buckets.count {
      var kept = 0
      for i in buckets[b].handles.indices where !shouldRemove(buckets[b].values[i]) {
        buckets[b].handles[kept] = buckets[b].handles[i]
        buckets[b].values[kept] = buckets[b].values[i]
        kept += 1
      }
      count -= buckets[b].handles.count - kept
      buckets[b].handles.removeSubrange(kept...)
      buckets[b].values.removeSubrange(kept...)
      if buckets[b].handles.isEmpty { buckets.remove(at: b) } else { b += 1 }
    }
  }

  /// Every entry in handle order.
  public var entries: [(handle: UInt16, value: Value)] {
    var all: [(handle: UInt16, value: Value)] = []
    all.reserveCapacity(count)
    for bucket in buckets {
      for (handle, value) in zip(bucket.handles, bucket.values) { all.append((handle, value)) }
    }
    return all
  }
}
