import BLECore
import BLEDecoder

/// Where something shows in a capture: its frame number and timestamp.
public struct Occurrence: Sendable, Equatable, Hashable {
  public var frame: Int
  public var time: Int64
  public init(frame: Int, time: Int64) {
    self.frame = frame
    self.time = time
  }
}

/// What one read or write carried, and how it ended. A value keeps its first `keptBytes` bytes
/// (to show) and is compared by them, its length and a digest of all its bytes (so long values
/// that differ past the kept bytes differ); its words (the decoder's reading: "4.1.7", "87 %")
/// are for showing, not comparing.
public struct ExchangedValue: Sendable, Hashable {
  public static let keptBytes = 64
  public var prefix: [UInt8]
  public var length: Int
  /// FNV-1a over every byte.
  public var digest: UInt64
  public var outcome: ProcedureStep.Outcome
  public var words: String?

  public init(bytes: some Collection<UInt8>, outcome: ProcedureStep.Outcome, words: String?) {
    prefix = Array(bytes.prefix(Self.keptBytes))
    length = bytes.count
    var hash: UInt64 = 0xCBF2_9CE4_8422_2325
    for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
    digest = hash
    self.outcome = outcome
    self.words = words
  }

  /// An exchange that ended without a value (an error, no answer, a cancelled queue).
  public init(outcome: ProcedureStep.Outcome) {
    self.init(bytes: [], outcome: outcome, words: nil)
  }

  public static func == (a: Self, b: Self) -> Bool {
    a.length == b.length && a.digest == b.digest && a.prefix == b.prefix && a.outcome == b.outcome
  }
  public func hash(into hasher: inout Hasher) {
    hasher.combine(digest)
    hasher.combine(length)
    hasher.combine(outcome)
  }

  /// Whether the words are the bytes read as text (a string characteristic): shown quoted.
  public var isText: Bool {
    guard let words, length == prefix.count, !prefix.isEmpty else { return false }
    return String(decoding: prefix, as: UTF8.self) == words
  }
}

/// What a connection's client read or wrote, per attribute and kind of exchange: how often, and
/// each distinct value with its count and where it showed. Bounded: at most `maximumValues`
/// distinct values per attribute and `valueBudget` in all (more are counted), and
/// `occurrenceBudget` places kept in all.
public struct ExchangeLedger: Sendable {
  public static let maximumValues = 256
  public static let valueBudget = 1 << 16
  public static let maximumKeys = 1024
  /// Places kept per value (for `-v` and for where a difference first shows).
  public static let maximumOccurrences = 256
  public static let occurrenceBudget = 1 << 18

  /// Which attribute, by what GATT says it is (so that moved handles compare equal); the handle
  /// only when the capture never named it.
  public struct Key: Sendable, Hashable {
    public var kind: ProcedureStep.Kind
    public var service: BluetoothUUID?
    public var characteristic: BluetoothUUID?
    public var descriptor: BluetoothUUID?
    /// Set only when the attribute has no name.
    public var handle: UInt16?
    /// The attributes a Read Multiple read together (the other fields nil).
    public var group: [Key]?

    public init(
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

  public struct ValueTally: Sendable {
    public var value: ExchangedValue
    public var count = 0
    public var occurrences: [Occurrence] = []
  }

  public struct Tally: Sendable {
    public var count = 0
    public var values: [ValueTally] = []
    /// Exchanges whose value was one too many to list.
    public var valuesNotListed = 0
    /// Every exchange's place, in order (the first `maximumOccurrences`).
    public var occurrences: [Occurrence] = []
    /// Where each value is in `values`.
    var valueIndex: [ExchangedValue: Int] = [:]
  }

  /// The attributes in the order first exchanged, and each one's tally (same positions).
  public private(set) var keys: [Key] = []
  public private(set) var tallies: [Tally] = []
  var index: [Key: Int] = [:]
  public private(set) var exchangesNotListed = 0

  public init() {}

  public func tally(for key: Key) -> Tally? { index[key].map { tallies[$0] } }

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
