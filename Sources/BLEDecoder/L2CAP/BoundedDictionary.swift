/// A dictionary that holds at most `capacity` entries: adding one more forgets the oldest
/// (by insertion). For per-link tables that a hostile capture could otherwise grow without end
/// (dynamic channels, EATT bearers, signaling requests in flight); real links use a handful.
struct BoundedDictionary<Key: Hashable & Sendable, Value: Sendable>: Sendable {
  let capacity: Int
  private(set) var storage: [Key: Value] = [:]
  /// Keys in insertion order. Capacities are small, so removal by search is cheap.
  private var order: [Key] = []

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
      yield &storage[key]!
    }
  }

  /// Runs `body` on the value at `key` in place (nothing is copied); nil when there is none.
  mutating func modify<Result>(_ key: Key, _ body: (inout Value) -> Result) -> Result? {
    // One lookup: the value is modified where it lies.
    guard let index = storage.index(forKey: key) else { return nil }
    return body(&storage.values[index])
  }

  /// Stores `value`; returns the key forgotten to make room, if any.
  @discardableResult
  mutating func insert(_ value: Value, for key: Key) -> Key? {
    if storage.updateValue(value, forKey: key) != nil { return nil }
    order.append(key)
    guard storage.count > capacity else { return nil }
    let oldest = order.removeFirst()
    storage[oldest] = nil
    return oldest
  }

  mutating func removeValue(forKey key: Key) -> Value? {
    guard let value = storage.removeValue(forKey: key) else { return nil }
    if let index = order.firstIndex(of: key) { order.remove(at: index) }
    return value
  }
}
