import BLECore
import BLEDecoder

/// Where something shows in a capture: its frame number and timestamp.
package struct Occurrence: Sendable, Equatable, Hashable {
  package var frame: Int
  package var time: Int64
  package init(frame: Int, time: Int64) {
    self.frame = frame
    self.time = time
  }
}

/// What one read or write carried, and how it ended. A value keeps its first `keptBytes` bytes
/// (to show) and is compared by them, its length and a digest of all its bytes (so long values
/// that differ past the kept bytes differ); its words (the decoder's reading: "4.1.7", "87 %")
/// are for showing, not comparing.
package struct ExchangedValue: Sendable, Hashable {
  package static let keptBytes = 64
  package var prefix: [UInt8]
  package var length: Int
  /// FNV-1a over every byte.
  package var digest: UInt64
  package var outcome: ProcedureStep.Outcome
  package var words: String?

  package init(bytes: some Collection<UInt8>, outcome: ProcedureStep.Outcome, words: String?) {
    prefix = Array(bytes.prefix(Self.keptBytes))
    length = bytes.count
    var hash: UInt64 = 0xCBF2_9CE4_8422_2325
    for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
    digest = hash
    self.outcome = outcome
    self.words = words
  }

  /// An exchange that ended without a value (an error, no answer, a cancelled queue).
  package init(outcome: ProcedureStep.Outcome) {
    self.init(bytes: [], outcome: outcome, words: nil)
  }

  package static func == (a: Self, b: Self) -> Bool {
    a.length == b.length && a.digest == b.digest && a.prefix == b.prefix && a.outcome == b.outcome
  }
  package func hash(into hasher: inout Hasher) {
    hasher.combine(digest)
    hasher.combine(length)
    hasher.combine(outcome)
  }

  /// Whether the words are the bytes read as text (a string characteristic): shown quoted.
  package var isText: Bool {
    guard let words, length == prefix.count, !prefix.isEmpty else { return false }
    return String(decoding: prefix, as: UTF8.self) == words
  }
}

/// What a connection's client read or wrote, per attribute and kind of exchange: how often, and
/// each distinct value with its count and where it showed. Bounded: at most `maximumValues`
/// distinct values per attribute and `valueBudget` in all (more are counted), and
/// `occurrenceBudget` places kept in all.
package struct ExchangeLedger: Sendable {
  package static let maximumValues = 256
  package static let valueBudget = 1 << 16
  package static let maximumKeys = 1024
  /// Places kept per value (for `-v` and for where a difference first shows).
  package static let maximumOccurrences = 256
  package static let occurrenceBudget = 1 << 18

  /// Which attribute, by what GATT says it is (so that moved handles compare equal); the handle
  /// only when the capture never named it.
  package struct Key: Sendable, Hashable {
    package var kind: ProcedureStep.Kind
    package var service: BluetoothUUID?
    package var characteristic: BluetoothUUID?
    package var descriptor: BluetoothUUID?
    /// Set only when the attribute has no name.
    package var handle: UInt16?
    /// The attributes a Read Multiple read together (the other fields nil).
    package var group: [Key]?

    package init(
      kind: ProcedureStep.Kind, service: BluetoothUUID? = nil, characteristic: BluetoothUUID? = nil, descriptor: BluetoothUUID? = nil,
      handle: UInt16? = nil, group: [Key]? = nil
    ) {
      self.kind = kind
      self.service = service
      self.characteristic = characteristic
      self.descriptor = descriptor
      self.handle = handle
      self.group = group
    }
  }

  package struct ValueTally: Sendable {
    package var value: ExchangedValue
    package var count = 0
    package var occurrences: [Occurrence] = []
  }

  package struct Tally: Sendable {
    package var count = 0
    package var values: [ValueTally] = []
    /// Exchanges whose value was one too many to list.
    package var valuesNotListed = 0
    /// Every exchange's place, in order (the first `maximumOccurrences`).
    package var occurrences: [Occurrence] = []
    /// Where each value is in `values`.
    var valueIndex: [ExchangedValue: Int] = [:]
  }

  /// The attributes in the order first exchanged, and each one's tally (same positions).
  package private(set) var keys: [Key] = []
  package private(set) var tallies: [Tally] = []
  var index: [Key: Int] = [:]
  package private(set) var exchangesNotListed = 0

  package init() {}

  package func tally(for key: Key) -> Tally? { index[key].map { tallies[$0] } }

  mutating func add(_ key: Key, _ value: ExchangedValue, at place: Occurrence, budget: inout Int, valueBudget: inout Int) {
    let slot: Int
    if let known = index[key] {
      slot = known
    } else {
      guard keys.count < Self.maximumKeys else {
        exchangesNotListed = exchangesNotListed.saturatingAdd(1)
        return
      }
      slot = keys.count
      keys.append(key)
      tallies.append(Tally())
      index[key] = slot
    }
    tallies[slot].add(value, at: place, budget: &budget, valueBudget: &valueBudget)
  }
}

extension ExchangeLedger.Tally {
  mutating func add(_ value: ExchangedValue, at place: Occurrence, budget: inout Int, valueBudget: inout Int) {
    count = count.saturatingAdd(1)
    if occurrences.count < ExchangeLedger.maximumOccurrences, budget > 0 {
      occurrences.append(place)
      budget -= 1
    }
    if let known = valueIndex[value] {
      values[known].count = values[known].count.saturatingAdd(1)
      if values[known].occurrences.count < ExchangeLedger.maximumOccurrences, budget > 0 {
        values[known].occurrences.append(place)
        budget -= 1
      }
    } else if values.count < ExchangeLedger.maximumValues, valueBudget > 0 {
      valueIndex[value] = values.count
      values.append(ExchangeLedger.ValueTally(value: value, count: 1, occurrences: budget > 0 ? [place] : []))
      valueBudget -= 1
      if budget > 0 { budget -= 1 }
    } else {
      valuesNotListed = valuesNotListed.saturatingAdd(1)
    }
  }
}
