/// A dictionary that holds at most `capacity` entries: adding one more forgets the oldest
/// (by insertion). For per-link tables that a hostile capture could otherwise grow without end
/// (dynamic channels, EATT bearers, signaling requests in flight); real links use a handful.
struct BoundedDictionary<Key: Hashable & Sendable, Value: Sendable>: Sendable {
  let capacity: Int
  private(set) var storage: [Key: Value] = [:]
  /// Keys in insertion order. Capacities are small, so removal by search is cheap.
  private var order: [Key] = []
  /// Where the key `modify` found last lies: a link's packets come in runs, so most lookups
  /// are of that key again and cost no hashing. Forgotten on every insertion and removal
  /// (they may move entries, and an index from before would not be valid).
  private var last: (key: Key, index: Dictionary<Key, Value>.Index)?

  init(capacity: Int) { self.capacity = capacity }

  var count: Int { storage.count }
  var keys: Dictionary<Key, Value>.Keys { storage.keys }

  /// Reads; `nil` assignment removes. Modifications through the subscript happen in place.
  subscript(key: Key) -> Value? {
    get { storage[key] }
    set {
      if let newValue { insert(newValue, for: key) } else { _ = removeValue(forKey: key) }
    }
  }

  /// In place when present; inserts `defaultValue()` first when absent.
  subscript(key: Key, default defaultValue: @autoclosure () -> Value) -> Value {
    get { storage[key] ?? defaultValue() }
    _modify {
      if storage[key] == nil { insert(defaultValue(), for: key) }
      last = nil
      yield &storage[key]!
    }
  }

  /// Runs `body` on the value at `key` in place (nothing is copied); nil when there is none.
  @inline(__always) mutating func modify<Result>(_ key: Key, _ body: (inout Value) -> Result) -> Result? {
    // One lookup at most: the value is modified where it lies.
    let index: Dictionary<Key, Value>.Index
    if let last, last.key == key {
      index = last.index
    } else {
      guard let found = storage.index(forKey: key) else { return nil }
      index = found
      last = (key, found)
    }
    return body(&storage.values[index])
  }

  /// Stores `value`; returns the key forgotten to make room, if any.
  @discardableResult
  mutating func insert(_ value: Value, for key: Key) -> Key? {
    last = nil
    if storage.updateValue(value, forKey: key) != nil { return nil }
    order.append(key)
    guard storage.count > capacity else { return nil }
    let oldest = order.removeFirst()
    storage[oldest] = nil
    return oldest
  }

  mutating func removeValue(forKey key: Key) -> Value? {
    last = nil
    guard let value = storage.removeValue(forKey: key) else { return nil }
    if let index = order.firstIndex(of: key) { order.remove(at: index) }
    return value
  }
}
