import BLECore
import BLEDecoder

/// How the time column of the text output reads.
package enum TimeDisplay: String, Sendable, CaseIterable {
  /// Seconds since the capture's first frame (shown or not).
  case relative = "rel"
  /// UTC date and time.
  case absolute = "abs"
  /// Seconds since the previous frame of the capture (shown or not).
  case delta
}

/// Writes decoded frames to an output buffer in one format.
package protocol FrameRenderer {
  /// How much of a frame's field list this renderer shows.
  var fieldDetail: FieldDetail { get }
  /// Renderers do not change the frame: it is `inout` so it is passed by address, never copied.
  mutating func render(_ frame: inout DissectedFrame, to out: inout OutputBuffer)
  /// Takes note of a frame the filter does not show (times stay relative to the capture).
  mutating func skip(_ frame: inout DissectedFrame)
  /// Called once after the last frame.
  mutating func finish(to out: inout OutputBuffer)
}

extension FrameRenderer {
  package var fieldDetail: FieldDetail { .all }
  package mutating func skip(_ frame: inout DissectedFrame) {}
  package mutating func finish(to out: inout OutputBuffer) {}
}

/// Calendar arithmetic for UTC timestamps, without Foundation (days-from-civil inverse).
enum UTCDate {
  static func components(fromUnixSeconds seconds: Int64) -> (year: Int64, month: Int64, day: Int64, hour: Int64, minute: Int64, second: Int64) {
    var days = seconds / 86_400
    var rest = seconds % 86_400
    if rest < 0 {
      rest += 86_400
      days -= 1
    }
    let z = days + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let dayOfEra = z - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let mp = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * mp + 2) / 5 + 1
    let month = mp < 10 ? mp + 3 : mp - 9
    let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    return (year, month, day, rest / 3600, (rest % 3600) / 60, rest % 60)
  }
}

extension OutputBuffer {
  /// Unix microseconds as `seconds.micros` (JSON `ts`).
  package mutating func unixSeconds(_ micros: Int64) {
    var seconds = micros / 1_000_000
    var fraction = micros % 1_000_000
    if fraction < 0 {
      fraction += 1_000_000
      seconds -= 1
    }
    decimal(seconds)
    byte(UInt8(ascii: "."))
    zeroPadded(UInt64(fraction), width: 6)
  }

  /// A signed span of microseconds as seconds with six decimals.
  package mutating func seconds(_ micros: Int64) {
    if micros < 0 { byte(UInt8(ascii: "-")) }
    let magnitude = micros.magnitude
    decimal(magnitude / 1_000_000)
    byte(UInt8(ascii: "."))
    zeroPadded(magnitude % 1_000_000, width: 6)
  }

  /// `seconds(micros)` right-aligned in `width` columns: the spaces first, so nothing is moved.
  /// (The header line's time column: its parts written into room made once.)
  package mutating func seconds(_ micros: Int64, rightAlignedIn width: Int) {
    let magnitude = micros.magnitude
    let whole = magnitude / 1_000_000
    let length = (micros < 0 ? 1 : 0) + TextFormat.digitCount(whole) + 7
    let pad = width - length
    guard pad <= 16 else {
      spaces(pad)
      seconds(micros)
      return
    }
    reserve(16 + length)
    uncheckedSpaces(max(pad, 0))
    if micros < 0 { uncheckedByte(UInt8(ascii: "-")) }
    uncheckedDecimal(whole)
    uncheckedByte(UInt8(ascii: "."))
    uncheckedZeroPadded(magnitude % 1_000_000, width: 6)
  }

  package mutating func utcDateTime(_ micros: Int64) {
    var seconds = micros / 1_000_000
    var fraction = micros % 1_000_000
    if fraction < 0 {
      fraction += 1_000_000
      seconds -= 1
    }
    let date = UTCDate.components(fromUnixSeconds: seconds)
    // ISO 8601: four digits at least, a sign before years before 1 BC (year 0 is 1 BC).
    if date.year < 0 { byte(UInt8(ascii: "-")) }
    let year = date.year.magnitude
    if year < 10_000 { zeroPadded(year, width: 4) } else { decimal(year) }
    byte(UInt8(ascii: "-"))
    zeroPadded(UInt64(date.month), width: 2)
    byte(UInt8(ascii: "-"))
    zeroPadded(UInt64(date.day), width: 2)
    byte(UInt8(ascii: " "))
    zeroPadded(UInt64(date.hour), width: 2)
    byte(UInt8(ascii: ":"))
    zeroPadded(UInt64(date.minute), width: 2)
    byte(UInt8(ascii: ":"))
    zeroPadded(UInt64(date.second), width: 2)
    byte(UInt8(ascii: "."))
    zeroPadded(UInt64(fraction), width: 6)
  }
}

