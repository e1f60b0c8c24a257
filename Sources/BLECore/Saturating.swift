/// Arithmetic on values that came from a capture: clamped to the type's range instead of
/// trapping. A hostile file can put any number in a length, count or timestamp, so plain `+`,
/// `-` and `*` on such values are not used (a test reads the sources for timestamp arithmetic).
extension FixedWidthInteger {
  /// `self + other`, or the nearest bound when the sum does not fit.
  @inlinable public func saturatingAdd(_ other: Self) -> Self {
    let (sum, overflow) = addingReportingOverflow(other)
    guard overflow else { return sum }
    return other < 0 ? .min : .max
  }

  /// `self - other`, or the nearest bound when the difference does not fit.
  @inlinable public func saturatingSubtract(_ other: Self) -> Self {
    let (difference, overflow) = subtractingReportingOverflow(other)
    guard overflow else { return difference }
    return other < 0 ? .max : .min
  }

  /// `self * other`, or the nearest bound when the product does not fit.
  @inlinable public func saturatingMultiply(_ other: Self) -> Self {
    let (product, overflow) = multipliedReportingOverflow(by: other)
    guard overflow else { return product }
    return (self < 0) != (other < 0) ? .min : .max
  }
}

/// Capture timestamps: signed microseconds since 1970-01-01 UTC.
public enum Timestamp {
  /// `seconds` and `micros` (either may be out of range in a hostile file) as one count.
  @inlinable public static func microseconds(seconds: Int64, micros: Int64) -> Int64 {
    seconds.saturatingMultiply(1_000_000).saturatingAdd(micros)
  }

  /// Microseconds from `start` to `end`; clamped, never trapping, negative when the clock went back.
  @inlinable public static func elapsed(from start: Int64, to end: Int64) -> Int64 {
    end.saturatingSubtract(start)
  }

  /// Whole seconds and the microseconds within them (0...999_999), also for times before 1970.
  @inlinable public static func split(_ timestamp: Int64) -> (seconds: Int64, micros: Int64) {
    let (q, r) = timestamp.quotientAndRemainder(dividingBy: 1_000_000)
    return r < 0 ? (q - 1, r + 1_000_000) : (q, r)
  }
}

/// A real number cut to a fixed number of decimals, for text. Values from the wire can be
/// anything (an IEEE-11073 FLOAT of 1e20, a latency of years, NaN), so the scaled value is
/// only formed when it fits; otherwise `fixed` is nil and callers print `value.description`.
public struct FixedDecimal: Sendable, Equatable {
  public var negative: Bool
  public var whole: UInt64
  /// The decimals, without trailing zeros: `fraction` has `digits` digits (0 when none).
  public var fraction: UInt64
  public var digits: Int

  @usableFromInline static let powersOfTen: [UInt64] = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000, 1_000_000_000]

  /// A decimal given by its parts (`fraction` without trailing zeros, `digits` long).
  @inlinable public init(negative: Bool, whole: UInt64, fraction: UInt64, digits: Int) {
    self.negative = negative
    self.whole = whole
    self.fraction = fraction
    self.digits = digits
  }

  /// `value` rounded to `places` decimals (at most 9); nil when it is not finite or too large.
  @inlinable public init?(_ value: Double, places: UInt8) {
    guard value.isFinite else { return nil }
    let places = Int(min(places, 9))
    let scale = FixedDecimal.powersOfTen[places]
    let magnitude = abs(value) * Double(scale)
    // 2^63: beyond it UInt64(…) would trap or lose the integer part's exactness anyway.
    guard magnitude < 9.2e18 else { return nil }
    // Rounded half away from zero, like `rounded()`, without a call into libm: the
    // conversion truncates, and the remainder is exact.
    let truncated = UInt64(magnitude)
    let units = magnitude - Double(truncated) >= 0.5 ? truncated &+ 1 : truncated
    self.init(units: units, places: places)
    negative = value < 0 && units != 0
  }

  /// `units` of 10^-`places` (at most 9) as a decimal: 8125 units of 0.001 are 8.125.
  @inlinable public init(units: UInt64, places: Int) {
    let places = Swift.min(Swift.max(places, 0), 9)
    let scale = FixedDecimal.powersOfTen[places]
    negative = false
    whole = units / scale
    fraction = units % scale
    digits = places
    while digits > 0 && fraction % 10 == 0 {
      fraction /= 10
      digits -= 1
    }
  }

  /// The decimal as text ("8.125", "-0.5", "72").
  public var text: String {
    var text = (negative ? "-" : "") + String(whole)
    if digits > 0 {
      let fractionText = String(fraction)
      text += "." + String(repeating: "0", count: digits - fractionText.count) + fractionText
    }
    return text
  }
}
