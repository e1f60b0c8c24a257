/// Approximate quantiles of non-negative values (latencies in microseconds) in bounded memory.
///
/// Values are counted in buckets laid out as in HDR histograms: each power of two is split into 64
/// buckets of equal width, so a bucket's width is at most 1/64 of its lower edge, and answering
/// with a point chosen inside the bucket is within 1/129 of every value in it (in exact
/// arithmetic; `relativeErrorBound`, 1/128 or 0.79 %, leaves room for rounding). The bucket of a
/// value comes from its exponent and top six significand bits: no logarithms, so no rounding at
/// bucket edges.
///
/// The buckets resolve `[resolvedRange.lowerBound, resolvedRange.upperBound)` = [2^-10, 2^64).
/// Values below it (0 included) share one bucket, answered with its midpoint 2^-11 (absolute error
/// under 0.001); values at or above 2^64 share one bucket, answered with the exact maximum. Answers
/// are clamped to the exact minimum and maximum, which are kept, so `quantile(0)` and `quantile(1)`
/// are exact.
///
/// Memory: one `Int` per bucket, at most `maximumBucketCount` (4738, about 37 KiB), whatever the
/// input; storage grows only up to the highest bucket used (values up to 2^20, a second in
/// microseconds, use under 2000 buckets). NaN, infinities and negative values are not counted.
package struct QuantileSketch: Sendable, Equatable {
  /// The values the buckets tell apart; those below share one bucket, and so do those above.
  package static let resolvedRange = Double(sign: .plus, exponent: lowestExponent, significand: 1)
    ..< Double(sign: .plus, exponent: lowestExponent + octaveCount, significand: 1)
  /// Largest relative error of an answer for values in `resolvedRange`.
  package static let relativeErrorBound = 1.0 / Double(2 * bucketsPerOctave)
  /// The most buckets a sketch ever stores: one below the range, 64 per power of two, one above.
  package static let maximumBucketCount = 1 + octaveCount * bucketsPerOctave + 1

  private static let bucketsPerOctave = 64
  private static let lowestExponent = -10
  private static let octaveCount = 74
  private static let belowRangeBucket = 0
  private static let aboveRangeBucket = maximumBucketCount - 1

  /// Values counted.
  package private(set) var count = 0
  /// Values passed to `add` and left out: NaN, infinite or negative.
  package private(set) var ignoredCount = 0
  /// The smallest value counted, exactly; nil before the first.
  package private(set) var minimum: Double?
  /// The largest value counted, exactly; nil before the first.
  package private(set) var maximum: Double?
  /// Counts per bucket, from the bucket below the range up to the highest bucket used.
  private var bucketCounts: [Int] = []

  package init() {}

  /// Buckets held in memory now; never more than `maximumBucketCount`.
  package var storedBucketCount: Int { bucketCounts.count }

  /// Counts `value`, unless it is NaN, infinite or negative.
  package mutating func add(_ value: Double) {
    guard value.isFinite, value >= 0 else {
      ignoredCount += 1
      return
    }
    let bucket = Self.bucket(of: value)
    if bucket >= bucketCounts.count {
      bucketCounts.append(contentsOf: repeatElement(0, count: bucket + 1 - bucketCounts.count))
    }
    bucketCounts[bucket] += 1
    count += 1
    minimum = Swift.min(minimum ?? value, value)
    maximum = Swift.max(maximum ?? value, value)
  }

  /// An estimate of the value at rank ⌊q·(count − 1)⌋ (from 0) of the values in ascending order:
  /// the minimum for q = 0, the maximum for q = 1, and within `relativeErrorBound` of the exact
  /// value in between (for values in `resolvedRange`). Nil when nothing was counted or q is not in
  /// 0...1 (NaN included).
  package func quantile(_ q: Double) -> Double? {
    guard let minimum, let maximum, q >= 0, q <= 1 else { return nil }
    if q == 0 { return minimum }
    if q == 1 { return maximum }
    let rank = Int((q * Double(count - 1)).rounded(.down))
    var countedThrough = 0
    for (bucket, bucketCount) in bucketCounts.enumerated() {
      countedThrough += bucketCount
      if countedThrough > rank {
        return Swift.min(Swift.max(representative(ofBucket: bucket), minimum), maximum)
      }
    }
    return maximum  // not reached: the counts add up to `count`
  }

  /// The fewest values a q-quantile is given for (`carriedQuantile`): at least one value must
  /// lie above it and one below, by count, so that it says something the minimum and maximum
  /// do not: 3 for the median, 20 for p95 (one value in twenty above it), 100 for p99.
  package static func minimumCount(carrying q: Double) -> Int {
    guard q > 0, q < 1 else { return 1 }
    let share = 1 / min(q, 1 - q)
    // 1 / 0.05 is 19.999999999999982 in binary: a share within rounding of a whole number is that number.
    let whole = share.rounded()
    return max(3, abs(share - whole) < 1e-9 ? Int(whole) : Int(share.rounded(.up)))
  }

  /// `quantile(q)` when the sample carries it (at least `minimumCount(carrying: q)` values),
  /// else nil: with 2 values a median is one of them, with 10 a p95 is the maximum or below
  /// it by chance. Within the minimum and maximum, as every answer is.
  package func carriedQuantile(_ q: Double) -> Double? {
    count >= Self.minimumCount(carrying: q) ? quantile(q) : nil
  }

  private static func bucket(of value: Double) -> Int {
    if value < resolvedRange.lowerBound { return belowRangeBucket }
    if value >= resolvedRange.upperBound { return aboveRangeBucket }
    // A value in range is a normal double: its biased exponent picks the power of two, and the
    // top six of its 52 fraction bits pick the bucket within it, exactly.
    let octave = Int(value.exponentBitPattern) - 1023 - lowestExponent
    let step = Int(value.significandBitPattern >> (Double.significandBitCount - 6))  // 64 = 2^6 buckets
    return 1 + octave * bucketsPerOctave + step
  }

  /// The point answered for a value in `bucket`: for the resolved buckets, the one whose relative
  /// distance to both edges is the same, (upper − lower) / (upper + lower).
  private func representative(ofBucket bucket: Int) -> Double {
    switch bucket {
    case Self.belowRangeBucket:
      return Self.resolvedRange.lowerBound / 2
    case Self.aboveRangeBucket:
      return maximum ?? Self.resolvedRange.upperBound
    default:
      let (octave, step) = (bucket - 1).quotientAndRemainder(dividingBy: Self.bucketsPerOctave)
      let scale = Double(sign: .plus, exponent: octave + Self.lowestExponent, significand: 1)
      let lower = scale * (1 + Double(step) / Double(Self.bucketsPerOctave))
      let upper = scale * (1 + Double(step + 1) / Double(Self.bucketsPerOctave))
      return 2 * lower * upper / (lower + upper)
    }
  }
}
