import BLECore

/// What `info` says of a capture without decoding it: records by kind, the time span, the
/// damage skipped (the first `listedSkips` places one by one) and the failure that ended it.
package struct CaptureInventory {
  /// Skips listed one by one (info prints after reading; the list must stay bounded).
  package static let listedSkips = 100

  package private(set) var frames = 0
  package private(set) var first: Int64?
  package private(set) var last: Int64 = 0
  /// Records by kind's name, the most first (ties by name).
  package private(set) var kinds: [(name: String, count: Int)] = []
  package private(set) var skips: [SkippedDamage] = []
  package private(set) var damage = DamageTally()
  package private(set) var failure: SourceFailure?

  /// Reads `source` to its end (or its failure).
  package init(reading source: any RecordSource) {
    // Counted by kind (no String per record), named once at the end.
    var counts: [PacketKind: Int] = [:]
    // One record, its buffer reused (a fresh one per record costs an allocation each).
    var record = CaptureRecord(timestamp: 0, direction: nil, kind: .other(0), bytes: [])
    do {
      while try source.nextRecord(into: &record) {
        frames += 1
        if first == nil { first = record.timestamp }
        last = record.timestamp
        counts[record.kind, default: 0] += 1
        if record.followsDamage, skips.count < Self.listedSkips, let skip = source.damage.last { skips.append(skip) }
      }
    } catch {
      failure = error
    }
    var named: [String: Int] = [:]
    for (kind, count) in counts { named[kind.jsonName.description, default: 0] += count }
    kinds = named.sorted { $0.value > $1.value || ($0.value == $1.value && $0.key < $1.key) }.map { ($0.key, $0.value) }
    damage = source.damage
  }
}
