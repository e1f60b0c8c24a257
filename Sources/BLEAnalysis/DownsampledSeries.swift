/// A time series kept in bounded memory for plotting: points fall into buckets of equal time width,
/// each keeping the minimum, maximum, sum and count of its values and the earliest and latest time
/// in it. When a point lands beyond `capacity` buckets from the first point, the width doubles and
/// neighbouring buckets merge, so millions of points cost at most `capacity` buckets.
///
/// Times are seconds and expected to be mostly non-decreasing. A time before the first point's
/// (a clock that went back) is clamped to it, into the first bucket. A point with a non-finite time
/// or value, or a time whose distance from the first point overflows, is ignored and counted.
package struct DownsampledSeries: Sendable, Equatable {
  /// What one bucket holds of the points that fell into it.
  package struct Bucket: Sendable, Equatable {
    package var count: Int
    package var minimum: Double
    package var maximum: Double
    /// Sum of the values: infinite if they overflow, so the mean is then infinite too.
    package var sum: Double
    /// The earliest and latest (clamped) times of the points in the bucket.
    package var earliestTime: Double
    package var latestTime: Double

    package var mean: Double { sum / Double(count) }
    /// Halfway between the earliest and latest time: where the bucket's mean is plotted.
    package var midpointTime: Double { earliestTime / 2 + latestTime / 2 }

    fileprivate init(time: Double, value: Double) {
      count = 1
      minimum = value
      maximum = value
      sum = value
      earliestTime = time
      latestTime = time
    }

    fileprivate mutating func add(time: Double, value: Double) {
      count += 1
      minimum = Swift.min(minimum, value)
      maximum = Swift.max(maximum, value)
      sum += value
      earliestTime = Swift.min(earliestTime, time)
      latestTime = Swift.max(latestTime, time)
    }

    /// Takes in `other`'s points (the plot merges buckets that share a pixel column).
    mutating func merge(_ other: Bucket) {
      count += other.count
      minimum = Swift.min(minimum, other.minimum)
      maximum = Swift.max(maximum, other.maximum)
      sum += other.sum
      earliestTime = Swift.min(earliestTime, other.earliestTime)
      latestTime = Swift.max(latestTime, other.latestTime)
    }
  }

  /// The most buckets kept.
  package let capacity: Int
  /// The time width of every bucket: the initial width times a power of two.
  package private(set) var bucketWidth: Double
  /// The first point's time: bucket i covers [origin + i·width, origin + (i+1)·width).
  package private(set) var origin: Double?
  /// Points counted.
  package private(set) var count = 0
  /// Points left out: non-finite time or value, or a distance from the first point that overflows.
  package private(set) var ignoredCount = 0
  /// One slot per bucket from the origin on; nil where no point fell.
  private var slots: [Bucket?] = []

  /// A series of at most `capacity` buckets (at least 2), starting `initialWidth` seconds wide
  /// (positive and finite; about 1 ms by default, so a short series keeps every point apart).
  package init(capacity: Int = 2048, initialWidth: Double = 1.0 / 1024) {
    precondition(capacity >= 2, "a series needs room for two buckets to merge them")
    precondition(initialWidth.isFinite && initialWidth > 0, "bucket width must be positive and finite")
    self.capacity = capacity
    bucketWidth = initialWidth
  }

  /// True until a point is counted.
  package var isEmpty: Bool { count == 0 }

  /// The buckets that hold points, in time order.
  package var buckets: [Bucket] { slots.compactMap { $0 } }

  /// Counts `value` at `time` (seconds).
  package mutating func add(time: Double, value: Double) {
    guard time.isFinite, value.isFinite else {
      ignoredCount += 1
      return
    }
    let origin = self.origin ?? time
    self.origin = origin
    let clampedTime = Swift.max(time, origin)
    let offset = clampedTime - origin
    guard offset.isFinite else {  // times of opposite signs near the largest Double
      ignoredCount += 1
      return
    }
    // Ends with a finite width: doubling passes a width of at least 2^1023 before it could
    // overflow, and a finite offset (under 2^1024) is less than 2 such widths away.
    while offset / bucketWidth >= Double(capacity) { mergeNeighbours() }
    let index = Int(offset / bucketWidth)
    if index >= slots.count {
      slots.append(contentsOf: repeatElement(nil, count: index + 1 - slots.count))
    }
    if slots[index] == nil {
      slots[index] = Bucket(time: clampedTime, value: value)
    } else {
      slots[index]!.add(time: clampedTime, value: value)
    }
    count += 1
  }

  /// Doubles the width: buckets 2i and 2i+1 become bucket i.
  private mutating func mergeNeighbours() {
    bucketWidth *= 2
    let mergedCount = (slots.count + 1) / 2
    for index in 0..<mergedCount {
      var merged = slots[2 * index]
      if 2 * index + 1 < slots.count, let right = slots[2 * index + 1] {
        if merged == nil { merged = right } else { merged!.merge(right) }
      }
      slots[index] = merged
    }
    slots.removeLast(slots.count - mergedCount)
  }
}
