import BLEDecoder

/// What is doubtful about a heart-rate measurement, as facts beside its value: a strap that
/// lost contact, or misreports, sends values that look like any other.
public struct HeartRateFlags: OptionSet, Sendable, Hashable {
  public let rawValue: UInt8
  public init(rawValue: UInt8) { self.rawValue = rawValue }

  /// bpm outside 30–220 (the decoder's own check).
  public static let bpmOutOfRange = HeartRateFlags(rawValue: 1 << 0)
  /// An RR interval outside 250–2000 ms (240–30 bpm).
  public static let rrOutOfRange = HeartRateFlags(rawValue: 1 << 1)
  /// The RR intervals imply a rate more than 30 % (and 15 bpm) from the bpm sent with them.
  public static let rrInconsistent = HeartRateFlags(rawValue: 1 << 2)
  /// Energy expended lower than the device's last value with no reset written to its Heart
  /// Rate Control Point in between (a reset is not a fault).
  public static let energyBackwards = HeartRateFlags(rawValue: 1 << 3)
  /// The sensor says it has no contact with the skin.
  public static let noContact = HeartRateFlags(rawValue: 1 << 4)

  /// Every flag with its word (CSV, JSON, text), in this order.
  public static let all: [(flag: HeartRateFlags, word: String)] = [
    (.bpmOutOfRange, "bpm_out_of_range"), (.rrOutOfRange, "rr_out_of_range"), (.rrInconsistent, "rr_inconsistent"),
    (.energyBackwards, "energy_backwards"), (.noContact, "no_contact"),
  ]

  /// The flags' words, in `all`'s order.
  public var words: [String] { Self.all.filter { contains($0.flag) }.map(\.word) }

  /// Flags that make the bpm itself doubtful: such values stay out of minimum, maximum and mean.
  public static let doubtfulRate: HeartRateFlags = [.bpmOutOfRange, .rrInconsistent]
}

/// Checks one device's measurements in order (the energy check needs the one before).
public struct HeartRatePlausibility: Sendable {
  public static let bpmRange: ClosedRange<UInt16> = 30...220
  /// RR intervals in 1/1024 s: 250 ms = 256, 2000 ms = 2048.
  public static let rrRange: ClosedRange<UInt16> = 256...2048

  var lastEnergy: UInt16?

  public init() {}

  /// A write of Reset Energy Expended to the device's Heart Rate Control Point: the next
  /// energy may start again from zero.
  public mutating func energyWasReset() { lastEnergy = nil }

  /// The flags of `measurement`, the device's next one.
  public mutating func check(_ measurement: HeartRateMeasurement) -> HeartRateFlags {
    var flags = Self.flags(of: measurement)
    if let energy = measurement.energyExpended {
      if let last = lastEnergy, energy < last { flags.insert(.energyBackwards) }
      lastEnergy = energy
    }
    return flags
  }

  /// The flags a measurement carries on its own (all but the energy check).
  public static func flags(of measurement: HeartRateMeasurement) -> HeartRateFlags {
    var flags: HeartRateFlags = []
    if !bpmRange.contains(measurement.bpm) { flags.insert(.bpmOutOfRange) }
    if measurement.sensorContact == .notDetected { flags.insert(.noContact) }
    let intervals = measurement.rrIntervals
    if !intervals.isEmpty {
      if intervals.contains(where: { !rrRange.contains($0) }) { flags.insert(.rrOutOfRange) }
      // The rate the intervals imply: 60 s over their mean, in 1/1024 s units.
      var total = 0
      for raw in intervals { total += Int(raw) }
      if total > 0, measurement.bpm > 0 {
        let implied = 60.0 * 1024.0 * Double(intervals.count) / Double(total)
        let bpm = Double(measurement.bpm)
        if abs(implied - bpm) > max(0.3 * bpm, 15) { flags.insert(.rrInconsistent) }
      }
    }
    return flags
  }
}
