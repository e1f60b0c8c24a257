import BLETestSupport
import Testing

@testable import BLEAnalysis

@Suite struct DownsampledSeriesTests {
  @Test func emptyAndSinglePoint() throws {
    var series = DownsampledSeries()
    #expect(series.isEmpty)
    #expect(series.buckets.isEmpty)
    series.add(time: 12.5, value: 72)
    #expect(!series.isEmpty)
    let bucket = try #require(series.buckets.first)
    #expect(series.buckets.count == 1)
    #expect(bucket.count == 1)
    #expect(bucket.mean == 72)
    #expect(bucket.earliestTime == 12.5 && bucket.latestTime == 12.5)
    #expect(series.origin == 12.5)
  }

  @Test func widthDoublesUntilThePointsFit() {
    // Ten points 1 s apart in 4 buckets: widths 1 and 2 reach only 4 s and 8 s; 4 s reaches 16 s.
    var series = DownsampledSeries(capacity: 4, initialWidth: 1)
    for second in 0..<10 { series.add(time: Double(second), value: Double(second)) }
    #expect(series.bucketWidth == 4)
    let buckets = series.buckets
    #expect(buckets.map(\.count) == [4, 4, 2])
    #expect(buckets.map(\.minimum) == [0, 4, 8])
    #expect(buckets.map(\.maximum) == [3, 7, 9])
    #expect(buckets.map(\.sum) == [6, 22, 17])
    #expect(buckets.map(\.earliestTime) == [0, 4, 8])
    #expect(buckets.map(\.latestTime) == [3, 7, 9])
    #expect(buckets[2].mean == 8.5)
    #expect(buckets[1].midpointTime == 5.5)
  }

  @Test func emptyBucketsAreLeftOut() {
    // A gap: nothing between 2 s and 10 s.
    var series = DownsampledSeries(capacity: 16, initialWidth: 1)
    for time in [0.0, 1, 2, 10, 11] { series.add(time: time, value: 1) }
    #expect(series.buckets.map(\.earliestTime) == [0, 1, 2, 10, 11])
  }

  @Test func millionPointsStayWithinCapacityAndMatchDirectGrouping() throws {
    var random = SeededGenerator(seed: 11)
    var series = DownsampledSeries()
    var points: [(time: Double, value: Double)] = []
    var time = 1000.0
    for _ in 0..<1_000_000 {
      time += Double.random(in: 0...0.02, using: &random)
      points.append((time, Double.random(in: 40...200, using: &random)))
    }
    points.forEach { series.add(time: $0.time, value: $0.value) }
    let buckets = series.buckets
    #expect(buckets.count <= series.capacity)
    #expect(buckets.count > series.capacity / 2)  // doubling only when needed
    #expect(buckets.map(\.count).reduce(0, +) == points.count)
    #expect(series.count == points.count)

    // The same points grouped directly at the final width.
    let origin = try #require(series.origin)
    var expected: [Int: (count: Int, minimum: Double, maximum: Double, sum: Double)] = [:]
    for point in points {
      let index = Int((point.time - origin) / series.bucketWidth)
      var entry = expected[index] ?? (0, .infinity, -.infinity, 0)
      entry.count += 1
      entry.minimum = min(entry.minimum, point.value)
      entry.maximum = max(entry.maximum, point.value)
      entry.sum += point.value
      expected[index] = entry
    }
    #expect(buckets.count == expected.count)
    for (bucket, index) in zip(buckets, expected.keys.sorted()) {
      let entry = try #require(expected[index])
      #expect(bucket.count == entry.count && bucket.minimum == entry.minimum && bucket.maximum == entry.maximum)
      #expect(abs(bucket.sum - entry.sum) <= 1e-9 * entry.sum)
      let start = origin + Double(index) * series.bucketWidth
      #expect(bucket.earliestTime >= start && bucket.latestTime < start + series.bucketWidth)
    }
  }

  @Test func timeBeforeTheFirstIsClampedIntoTheFirstBucket() throws {
    var series = DownsampledSeries(capacity: 8, initialWidth: 1)
    series.add(time: 100, value: 60)
    series.add(time: 103.5, value: 70)
    series.add(time: 40, value: 80)  // the clock went back
    series.add(time: 101.2, value: 90)  // late, but after the first point
    let buckets = series.buckets
    #expect(buckets.map(\.count) == [2, 1, 1])
    #expect(buckets[0].earliestTime == 100 && buckets[0].maximum == 80)
    #expect(buckets[1].earliestTime == 101.2)
    #expect(series.ignoredCount == 0)
  }

  @Test func nonFiniteTimesAndValuesAreIgnored() {
    var series = DownsampledSeries()
    series.add(time: .nan, value: 1)
    series.add(time: .infinity, value: 1)
    series.add(time: 1, value: .nan)
    series.add(time: 1, value: -.infinity)
    #expect(series.isEmpty)
    #expect(series.origin == nil)
    #expect(series.ignoredCount == 4)
    series.add(time: 1, value: 2)
    #expect(series.count == 1)
  }

  @Test func extremeTimesDoNotTrap() {
    var series = DownsampledSeries()
    series.add(time: -1e308, value: 1)
    series.add(time: 1e308, value: 2)  // 2e308 away: not a finite offset
    #expect(series.count == 1 && series.ignoredCount == 1)

    var wide = DownsampledSeries()
    wide.add(time: 0, value: 1)
    wide.add(time: 1e308, value: 2)
    wide.add(time: 5e307, value: 3)
    #expect(wide.count == 3)
    #expect(wide.buckets.count <= wide.capacity)
    #expect(wide.bucketWidth.isFinite)

    // The farthest finite offset with the fewest buckets: the width stays finite.
    var farthest = DownsampledSeries(capacity: 2, initialWidth: 0.3)
    farthest.add(time: 0, value: 1)
    farthest.add(time: .greatestFiniteMagnitude, value: 2)
    #expect(farthest.count == 2 && farthest.ignoredCount == 0)
    #expect(farthest.buckets.count == 2)
    #expect(farthest.bucketWidth.isFinite)
  }

  @Test func hugeValuesOverflowOnlyTheSum() throws {
    var series = DownsampledSeries()
    series.add(time: 0, value: .greatestFiniteMagnitude)
    series.add(time: 0, value: .greatestFiniteMagnitude)
    let bucket = try #require(series.buckets.first)
    #expect(bucket.maximum == .greatestFiniteMagnitude)
    #expect(bucket.sum == .infinity)
  }
}
