import BLECore

/// Record times as a capture gives them, checked. Some sniffers' writers break them: Ubertooth
/// captures carry microsecond fields of a million or more (nanoseconds written where
/// microseconds go) and times that go back. A link's timing then means nothing: silences that
/// never were, pairings cut off their connection. Once a record shows the clock is broken,
/// records are timed by the sniffer's own clock where the link type carries one (from the last
/// record timed right), else kept from going back; the first record so timed says why, once.
struct RecordClock: Sendable {
  /// Why the record clock is not trusted, from the first record that showed it; nil while it is.
  private(set) var broken: String?
  /// The last time given, and the last pair of a trusted record time and the sniffer's clock.
  private var last: Int64?
  private var anchor: (time: Int64, clock: UInt64)?
  private var lastClock: UInt64?
  private var said = false

  /// The time of frame `frame`: `seconds` and `micros` as recorded, `clock` the sniffer's own
  /// (µs, when the link type has one). `note` is set on the first record timed otherwise.
  mutating func time(seconds: Int64, micros: Int64, clock: UInt64?, frame: Int, note: inout String?) -> Int64 {
    let recorded = Timestamp.microseconds(seconds: seconds, micros: min(max(micros, 0), 999_999))
    if broken == nil {
      if micros >= 1_000_000 {
        broken = "frame \(frame)'s record time has \(micros) in its microseconds field"
      } else if let last, recorded < last {
        broken = "frame \(frame)'s record time goes back \(Self.words(last.saturatingSubtract(recorded))) from the one before"
      }
    }
    guard let reason = broken else {
      last = recorded
      if let clock { anchor = (recorded, clock) }
      return recorded
    }
    var time = recorded
    var how = "kept from going back"
    if let clock, lastClock.map({ clock >= $0 }) ?? true {
      // The sniffer's clock runs on from the last record timed right (or this one).
      if anchor == nil { anchor = (last ?? recorded, clock) }
      if let anchor, clock >= anchor.clock {
        time = anchor.time.saturatingAdd(Int64(clamping: clock - anchor.clock))
        how = "timed by the sniffer's own clock"
      }
      lastClock = clock
    }
    if let last, time < last { time = last }
    last = time
    if !said {
      said = true
      note = "the capture's record clock is broken (\(reason)): records are \(how) from here on"
    }
    return time
  }

  static func words(_ microseconds: Int64) -> String {
    microseconds < 1_000_000 ? "\(microseconds) µs" : "\(microseconds / 1_000_000).\(String(microseconds % 1_000_000 / 1000).leftPadded(3)) s"
  }
}

extension String {
  fileprivate func leftPadded(_ width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
