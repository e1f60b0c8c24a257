/// A linear map from data values to pixels, with ticks at round numbers (1, 2 or 5 × 10^k).
///
/// The ends are clamped to ±`largestMagnitude` before they are widened, so every difference the
/// map takes stays finite, and a range of zero height is widened, so the map never divides by zero.
struct AxisScale {
  /// A distance between ticks: `mantissa` (1, 2 or 5) × 10^`exponent`.
  struct TickStep: Equatable {
    var mantissa: Int
    var exponent: Int
    var value: Double { Double(mantissa) * AxisScale.powerOfTen(exponent) }
  }

  static let largestMagnitude = 1e300

  /// The values at the two ends of the axis.
  private(set) var lower: Double
  private(set) var upper: Double
  /// Where `lower` and `upper` land (for a vertical axis, `pixelStart` is the bottom).
  let pixelStart: Double
  let pixelEnd: Double
  private(set) var step = TickStep(mantissa: 1, exponent: 0)
  /// Multiples of `step` between `lower` and `upper`.
  private(set) var ticks: [Double] = []
  /// Longest label allowed in fixed notation before a tick is written as mantissa and exponent.
  private let longestFixedLabel: Int

  /// An axis for measured values: `minimum` to `maximum` with a margin of 4 %, widened to the
  /// ticks just outside, about `targetTickCount` of them.
  static func values(
    minimum: Double, maximum: Double, pixelStart: Double, pixelEnd: Double, targetTickCount: Int = 5
  ) -> AxisScale {
    var (lower, upper) = clampedOrdered(minimum, maximum)
    let magnitude = Swift.max(Swift.abs(lower), Swift.abs(upper))
    // A constant series gets a band around it; a varying one at least a span its labels can tell apart.
    let span = lower == upper ? (magnitude > 0 ? magnitude * 0.1 : 1) : Swift.max(magnitude * 1e-6, 1e-9)
    (lower, upper) = widened(lower, upper, toAtLeast: span)
    // A margin, so that extremes on a round number do not sit on the frame.
    let margin = (upper - lower) * 0.04
    (lower, upper) = (lower - margin, upper + margin)
    var scale = AxisScale(
      lower: lower, upper: upper, pixelStart: pixelStart, pixelEnd: pixelEnd, longestFixedLabel: 8)
    if let step = tickStep(span: upper - lower, targetCount: targetTickCount) {
      let value = step.value
      scale.lower = Swift.min(lower, (lower / value).rounded(.down) * value)
      scale.upper = Swift.max(upper, (upper / value).rounded(.up) * value)
      scale.setTicks(step)
    }
    return scale
  }

  /// A time axis from exactly `minimum` to `maximum`, with as many ticks (up to 10) as fit their
  /// labels, each label about `characterWidth` pixels a character.
  static func time(minimum: Double, maximum: Double, pixelStart: Double, pixelEnd: Double, characterWidth: Double)
    -> AxisScale
  {
    var (lower, upper) = clampedOrdered(minimum, maximum)
    let magnitude = Swift.max(Swift.abs(lower), Swift.abs(upper))
    // One instant gets a second around it; times far from zero a span their Doubles can resolve.
    let resolvable = Swift.max(magnitude * 0x1p-40, 1e-9)
    (lower, upper) = widened(lower, upper, toAtLeast: lower == upper ? Swift.max(1, resolvable) : resolvable)
    var scale = AxisScale(
      lower: lower, upper: upper, pixelStart: pixelStart, pixelEnd: pixelEnd, longestFixedLabel: 16)
    let length = Swift.abs(pixelEnd - pixelStart)
    for targetCount in stride(from: 10, through: 2, by: -1) {
      guard let step = tickStep(span: upper - lower, targetCount: targetCount) else { break }
      scale.setTicks(step)
      let widest = scale.ticks.map { scale.label(of: $0).count }.max() ?? 0
      if Double(scale.ticks.count) * (Double(widest) * characterWidth + 16) <= length { break }
    }
    return scale
  }

  private init(lower: Double, upper: Double, pixelStart: Double, pixelEnd: Double, longestFixedLabel: Int) {
    self.lower = lower
    self.upper = upper
    self.pixelStart = pixelStart
    self.pixelEnd = pixelEnd
    self.longestFixedLabel = longestFixedLabel
  }

  /// The pixel of `value`. Clamped first, so any Double maps to a finite pixel; the bound is far
  /// beyond the axis ends, which widening and rounding may take past `largestMagnitude`.
  func position(of value: Double) -> Double {
    let bound = Self.largestMagnitude * 1e4
    let clamped = value.isNaN ? lower : Swift.min(Swift.max(value, -bound), bound)
    return pixelStart + (clamped - lower) / (upper - lower) * (pixelEnd - pixelStart)
  }

  /// A tick's label: as many decimals as the step has, or mantissa and exponent ("1.5e300") when
  /// that would be too long.
  func label(of tick: Double) -> String {
    let places = Swift.max(0, -step.exponent)
    if places <= 9 {
      let fixed = SVGText.decimal(tick, places: UInt8(places))
      if fixed.count <= longestFixedLabel { return fixed }
    }
    return Self.scientific(tick, step: step)
  }

  private mutating func setTicks(_ step: TickStep) {
    self.step = step
    let value = step.value
    let first = (lower / value).rounded(.up)
    let last = (upper / value).rounded(.down)
    // Counting from `first` in Doubles: past 2^53 `first + 1 == first`, so the count is bounded here.
    guard first <= last, last - first <= 100 else {
      ticks = []
      return
    }
    ticks = (0...Int(last - first)).map { (first + Double($0)) * value }
  }

  private static func clampedOrdered(_ a: Double, _ b: Double) -> (Double, Double) {
    func clamped(_ x: Double) -> Double {
      x.isNaN ? 0 : Swift.min(Swift.max(x, -largestMagnitude), largestMagnitude)
    }
    return (Swift.min(clamped(a), clamped(b)), Swift.max(clamped(a), clamped(b)))
  }

  private static func widened(_ lower: Double, _ upper: Double, toAtLeast span: Double) -> (Double, Double) {
    guard upper - lower < span else { return (lower, upper) }
    let middle = lower / 2 + upper / 2
    return (middle - span / 2, middle + span / 2)
  }

  /// The round step nearest above `span / targetCount`; nil when that is not a normal positive number.
  static func tickStep(span: Double, targetCount: Int) -> TickStep? {
    let rough = span / Double(Swift.max(targetCount, 1))
    guard rough.isFinite, rough >= 1e-300 else { return nil }
    var exponent = 0
    var power = 1.0
    while power * 10 <= rough {
      power *= 10
      exponent += 1
    }
    while power > rough {
      power /= 10
      exponent -= 1
    }
    switch rough / power {
    case ...1: return TickStep(mantissa: 1, exponent: exponent)
    case ...2: return TickStep(mantissa: 2, exponent: exponent)
    case ...5: return TickStep(mantissa: 5, exponent: exponent)
    default: return TickStep(mantissa: 1, exponent: exponent + 1)
    }
  }

  /// 10^exponent, exact up to 10^22 (the inverse of it below zero, correctly rounded).
  static func powerOfTen(_ exponent: Int) -> Double {
    var power = 1.0
    for _ in 0..<Swift.min(Swift.abs(exponent), 400) { power *= 10 }
    return exponent >= 0 ? power : 1 / power
  }

  /// `value` as mantissa and exponent, with the mantissa decimals the step needs (at most 6).
  private static func scientific(_ value: Double, step: TickStep) -> String {
    guard value != 0, value.isFinite else { return value.description }
    var exponent = 0
    var power = 1.0
    while power * 10 <= Swift.abs(value), exponent < 308 {
      power *= 10
      exponent += 1
    }
    while power > Swift.abs(value), exponent > -320 {
      power /= 10
      exponent -= 1
    }
    let places = UInt8(Swift.min(Swift.max(exponent - step.exponent, 0), 6))
    var mantissa = SVGText.decimal(value / power, places: places)
    if mantissa.hasPrefix("10") || mantissa.hasPrefix("-10") {  // rounded up to the next power
      mantissa = SVGText.decimal(value / power / 10, places: places)
      exponent += 1
    }
    return mantissa + "e" + String(exponent)
  }
}
