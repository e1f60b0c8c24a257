import BLECore
import BLEDecoder

/// What is doubtful about a heart-rate measurement, as facts beside its value: a strap that
/// lost contact, or misreports, sends values that look like any other.
package struct HeartRateFlags: OptionSet, Sendable, Hashable {
  package let rawValue: UInt8
  package init(rawValue: UInt8) { self.rawValue = rawValue }

  /// bpm outside 30–220 (the decoder's own check).
  package static let bpmOutOfRange = HeartRateFlags(rawValue: 1 << 0)
  /// An RR interval outside 250–2000 ms (240–30 bpm).
  package static let rrOutOfRange = HeartRateFlags(rawValue: 1 << 1)
  /// The RR intervals imply a rate more than 30 % (and 15 bpm) from the bpm sent with them.
  package static let rrInconsistent = HeartRateFlags(rawValue: 1 << 2)
  /// Energy expended lower than the device's last value with no reset written to its Heart
  /// Rate Control Point in between (a reset is not a fault).
  package static let energyBackwards = HeartRateFlags(rawValue: 1 << 3)
  /// The sensor says it has no contact with the skin.
  package static let noContact = HeartRateFlags(rawValue: 1 << 4)

  /// Every flag with its word (CSV, JSON, text), in this order.
  package static let all: [(flag: HeartRateFlags, word: String)] = [
    (.bpmOutOfRange, "bpm_out_of_range"), (.rrOutOfRange, "rr_out_of_range"), (.rrInconsistent, "rr_inconsistent"),
    (.energyBackwards, "energy_backwards"), (.noContact, "no_contact"),
  ]

  /// The flags' words, in `all`'s order.
  package var words: [String] { Self.all.filter { contains($0.flag) }.map(\.word) }

  /// The words joined by spaces (text, CSV) and as JSON strings joined by commas, made once
  /// for every combination: a row's flags are written without building anything.
  package var spaced: String { Self.spacedByValue[Int(rawValue & 0x1F)] }
  package var jsonList: String { Self.jsonListByValue[Int(rawValue & 0x1F)] }
  static let spacedByValue: [String] = (0..<32).map { HeartRateFlags(rawValue: UInt8($0)).words.joined(separator: " ") }
  static let jsonListByValue: [String] = (0..<32).map { HeartRateFlags(rawValue: UInt8($0)).words.map { "\"\($0)\"" }.joined(separator: ",") }

  /// Flags that make the bpm itself doubtful: such values stay out of minimum, maximum and mean.
  package static let doubtfulRate: HeartRateFlags = [.bpmOutOfRange, .rrInconsistent]
}

/// Checks one device's measurements in order (the energy check needs the one before).
package struct HeartRatePlausibility: Sendable {
  // The ranges: 30–220 bpm; RR intervals 250–2000 ms, in 1/1024 s 256–2048.
  /// The same ranges as real numbers, for the plot (its axes cover plausible values only).
  package static let plausibleBPM = 30.0...220.0
  package static let plausibleRRMilliseconds = 250.0...2000.0

  var lastEnergy: UInt16?

  package init() {}

  /// A write of Reset Energy Expended to the device's Heart Rate Control Point: the next
  /// energy may start again from zero.
  package mutating func energyWasReset() { lastEnergy = nil }

  /// The flags of `measurement`, the device's next one.
  package mutating func check(_ measurement: HeartRateMeasurement) -> HeartRateFlags {
    var flags = Self.flags(of: measurement)
    if let energy = measurement.energyExpended {
      if let last = lastEnergy, energy < last { flags.insert(.energyBackwards) }
      lastEnergy = energy
    }
    return flags
  }

  /// The flags a measurement carries on its own (all but the energy check). In integers, one
  /// pass over the intervals: `hr` asks it of every row.
  package static func flags(of measurement: HeartRateMeasurement) -> HeartRateFlags {
    var flags: HeartRateFlags = []
    let bpm = Int(measurement.bpm)
    if bpm < 30 || bpm > 220 { flags.insert(.bpmOutOfRange) }
    if measurement.sensorContact == .notDetected { flags.insert(.noContact) }
    let intervals = measurement.rrIntervals
    let count = intervals.endIndex
    guard count > 0 else { return flags }
    var total = 0
    var outOfRange = false
    for index in 0..<count {
      let raw = intervals[index]
      outOfRange = outOfRange || raw < 256 || raw > 2048
      total += Int(raw)
    }
    if outOfRange { flags.insert(.rrOutOfRange) }
    // The rate the intervals imply: 60 s over their mean (61 440 = 60 × 1024 per count),
    // against the bpm sent: more than 30 % and 15 bpm apart.
    if total > 0, bpm > 0 {
      let implied = 61_440 * count / total
      if abs(implied - bpm) * 10 > max(3 * bpm, 150) { flags.insert(.rrInconsistent) }
    }
    return flags
  }
}

/// The checks of several devices, kept together so that a row costs one access to them.
/// Bounded: past `maximumDevices` a device is checked without its history.
package struct HeartRatePlausibilityTable: Sendable {
  package static let maximumDevices = 4096
  var checkers: [HeartRatePlausibility] = []
  var indices: [String: Int] = [:]
  /// The device whose measurements come now (-1: none, or past the bound).
  var current = -1
  /// Measurements checked so far (counted here, where a row already writes).
  package private(set) var checked = 0

  package init() {}

  /// Makes `label` the device the next measurements come from.
  package mutating func select(_ label: String) { current = index(label) }

  /// The flags of the current device's next measurement.
  package mutating func check(_ measurement: HeartRateMeasurement) -> HeartRateFlags {
    checked = checked.saturatingAdd(1)
    return current >= 0 ? checkers[current].check(measurement) : HeartRatePlausibility.flags(of: measurement)
  }

  /// A Reset Energy Expended written to the device `label`.
  package mutating func energyWasReset(_ label: String) {
    let found = index(label)
    if found >= 0 { checkers[found].energyWasReset() }
  }

  mutating func index(_ label: String) -> Int {
    if let known = indices[label] { return known }
    guard checkers.count < Self.maximumDevices else { return -1 }
    checkers.append(HeartRatePlausibility())
    indices[label] = checkers.count - 1
    return checkers.count - 1
  }
}
