import BLECore

/// Record times as a capture gives them, checked. Some sniffers' writers break them: Ubertooth
/// captures carry microsecond fields of a million or more (nanoseconds written where
/// microseconds go) and times that go back. A link's timing then means nothing: silences that
/// never were, pairings cut off their connection. Once a record shows the clock is broken,
/// records are timed by the sniffer's own clock where the link type carries one (from the last
/// record timed right), else kept from going back; the first record so timed says why, once
/// (`CaptureRecord.clockRepair`).
struct RecordClock: Sendable {
  /// Why the record clock is not trusted, from the first record that showed it; nil while it is.
  private(set) var broken: CaptureRecord.ClockRepair.Fault?
  /// The last time given, and the last pair of a trusted record time and the sniffer's clock.
  private var last: Int64?
  private var anchor: (time: Int64, clock: UInt64)?
  private var lastClock: UInt64?
  private var said = false

  /// The time of a record: `seconds` and `micros` as recorded, `clock` the sniffer's own (µs,
  /// when the link type has one). `repair` is set on the first record timed otherwise.
  @inline(__always) mutating func time(seconds: Int64, micros: Int64, clock: UInt64?, repair: inout CaptureRecord.ClockRepair?) -> Int64 {
    // The common case first: a record clock trusted, running on.
    if broken == nil, micros >= 0, micros < 1_000_000 {
      let recorded = Timestamp.microseconds(seconds: seconds, micros: micros)
      if recorded >= last ?? .min {
        last = recorded
        if let clock { anchor = (recorded, clock) }
        return recorded
      }
    }
    return repairedTime(seconds: seconds, micros: micros, clock: clock, repair: &repair)
  }

  private mutating func repairedTime(seconds: Int64, micros: Int64, clock: UInt64?, repair: inout CaptureRecord.ClockRepair?) -> Int64 {
    let recorded = Timestamp.microseconds(seconds: seconds, micros: min(max(micros, 0), 999_999))
    if broken == nil { broken = micros >= 1_000_000 || micros < 0 ? .microsecondsPastASecond : .goesBack }
    var time = recorded
    var bySnifferClock = false
    if let clock, lastClock.map({ clock >= $0 }) ?? true {
      // The sniffer's clock runs on from the last record timed right (or this one).
      if anchor == nil { anchor = (last ?? recorded, clock) }
      if let anchor, clock >= anchor.clock {
        time = anchor.time.saturatingAdd(Int64(clamping: clock - anchor.clock))
        bySnifferClock = true
      }
      lastClock = clock
    }
    if let last, time < last { time = last }
    last = time
    if !said, let broken {
      said = true
      repair = CaptureRecord.ClockRepair(fault: broken, bySnifferClock: bySnifferClock)
    }
    return time
  }
}
