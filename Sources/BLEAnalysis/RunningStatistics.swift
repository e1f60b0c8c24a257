/// Count, minimum, maximum, mean and sample standard deviation of a stream of numbers, in constant
/// memory (Welford's update, which stays accurate where a sum of squares would cancel). For SDNN
/// (the standard deviation of RR intervals in ms) and the minimum, mean and maximum heart rate.
///
/// Non-finite values (NaN, ±infinity) are not counted: they come from hostile or broken input and
/// would poison every result. Finite values beyond about 1e154 can still make the variance infinite;
/// nothing traps.
package struct RunningStatistics: Sendable, Equatable {
  /// Values counted so far.
  package private(set) var count = 0
  /// Non-finite values passed to `add` and left out.
  package private(set) var ignoredCount = 0
  /// The smallest value counted; nil before the first.
  package private(set) var minimum: Double?
  /// The largest value counted; nil before the first.
  package private(set) var maximum: Double?
  private var runningMean = 0.0
  /// Sum of squared distances from the running mean (Welford's M2).
  private var squaredDeviations = 0.0

  package init() {}

  /// Counts `x`, unless it is NaN or infinite.
  package mutating func add(_ x: Double) {
    guard x.isFinite else {
      ignoredCount += 1
      return
    }
    count += 1
    minimum = Swift.min(minimum ?? x, x)
    maximum = Swift.max(maximum ?? x, x)
    let deviationBefore = x - runningMean
    runningMean += deviationBefore / Double(count)
    squaredDeviations += deviationBefore * (x - runningMean)
  }

  /// The arithmetic mean; nil before the first value.
  package var mean: Double? { count > 0 ? runningMean : nil }

  /// The sample variance (divided by count − 1); nil with fewer than 2 values.
  package var variance: Double? { count > 1 ? squaredDeviations / Double(count - 1) : nil }

  /// The sample standard deviation (SDNN when the values are RR intervals); nil with fewer than 2 values.
  package var standardDeviation: Double? { variance.map { $0.squareRoot() } }
}
