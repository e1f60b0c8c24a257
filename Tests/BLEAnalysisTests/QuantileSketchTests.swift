import BLETestSupport
import Testing

@testable import BLEAnalysis

@Suite struct QuantileSketchTests {
  static let quantiles = [0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999]

  /// The value the sketch estimates: rank ⌊q·(n − 1)⌋ of the sorted values.
  static func exactQuantile(_ sorted: [Double], _ q: Double) -> Double {
    sorted[Int((q * Double(sorted.count - 1)).rounded(.down))]
  }

  static func expectWithinBound(_ values: [Double], comment: Comment) throws {
    var sketch = QuantileSketch()
    values.forEach { sketch.add($0) }
    let sorted = values.sorted()
    #expect(sketch.quantile(0) == sorted.first, comment)
    #expect(sketch.quantile(1) == sorted.last, comment)
    for q in quantiles {
      let exact = Self.exactQuantile(sorted, q)
      let estimate = try #require(sketch.quantile(q))
      #expect(abs(estimate - exact) <= QuantileSketch.relativeErrorBound * exact, "q \(q): \(comment)")
    }
  }

  @Test func boundIsUnderOnePercent() {
    #expect(QuantileSketch.relativeErrorBound <= 0.01)
    #expect(QuantileSketch.resolvedRange.lowerBound <= 0.001)
    #expect(QuantileSketch.resolvedRange.upperBound > 0x1p63)
  }

  @Test func emptyOrInvalidQuantileIsNil() {
    var sketch = QuantileSketch()
    #expect(sketch.quantile(0.5) == nil)
    sketch.add(10)
    #expect(sketch.quantile(-0.1) == nil)
    #expect(sketch.quantile(1.5) == nil)
    #expect(sketch.quantile(.nan) == nil)
    #expect(sketch.quantile(0.5) == 10)
  }

  @Test func logUniformLatencies() throws {
    // Microseconds from 1 to 2^24 (about 17 s), spread evenly across powers of two.
    var random = SeededGenerator(seed: 1)
    let values = (0..<100_000).map { _ in
      Double(sign: .plus, exponent: Int.random(in: 0...23, using: &random), significand: Double.random(in: 1..<2, using: &random))
    }
    try Self.expectWithinBound(values, comment: "log-uniform")
  }

  @Test func uniformAndIntegerLatencies() throws {
    var random = SeededGenerator(seed: 2)
    let uniform = (0..<50_000).map { _ in Double.random(in: 1...30_000, using: &random) }
    try Self.expectWithinBound(uniform, comment: "uniform")
    // Many equal values: connection intervals in microseconds.
    let repeated = (0..<50_000).map { _ in Double([7_500, 15_000, 30_000, 45_000].randomElement(using: &random)!) }
    try Self.expectWithinBound(repeated, comment: "repeated")
  }

  @Test func bucketEdgesAreWithinBound() throws {
    // Each value paired with a larger one: the median is the value itself, answered from its bucket.
    var edges: [Double] = []
    for exponent in [-10, -1, 0, 1, 19, 40, 62, 63] {
      for step in [0, 1, 31, 63, 64] {
        let edge = Double(sign: .plus, exponent: exponent, significand: 1 + Double(step) / 64)
        edges += [edge, edge.nextDown, edge.nextUp]
      }
    }
    for value in edges where QuantileSketch.resolvedRange.contains(value) {
      var sketch = QuantileSketch()
      sketch.add(value)
      sketch.add(value * 3)
      let estimate = try #require(sketch.quantile(0.5))
      #expect(abs(estimate - value) <= QuantileSketch.relativeErrorBound * value, "value \(value)")
    }
  }

  @Test func valuesBelowTheRangeAreNearZero() throws {
    var sketch = QuantileSketch()
    for value in [0.0, 0.0001, 0.0002, 0.0005, 5] { sketch.add(value) }
    let median = try #require(sketch.quantile(0.5))
    #expect(abs(median - 0.0002) < QuantileSketch.resolvedRange.lowerBound)
    #expect(sketch.quantile(0) == 0)
  }

  @Test func hostileInputsDoNotTrap() throws {
    var sketch = QuantileSketch()
    let hostile: [Double] = [
      .nan, .infinity, -.infinity, -1, -.greatestFiniteMagnitude, 1e300, .greatestFiniteMagnitude,
      .leastNonzeroMagnitude, 0, -0.0, 0x1p63, 0x1p64,
    ]
    hostile.forEach { sketch.add($0) }
    #expect(sketch.ignoredCount == 5)
    #expect(sketch.count == hostile.count - 5)
    #expect(sketch.quantile(0) == 0)
    #expect(sketch.quantile(1) == .greatestFiniteMagnitude)
    for q in Self.quantiles {
      let estimate = try #require(sketch.quantile(q))
      #expect(estimate >= 0 && estimate <= .greatestFiniteMagnitude)
    }
    // 2^63 is inside the range: its estimate is within the bound.
    var edge = QuantileSketch()
    edge.add(0x1p63)
    edge.add(1e300)
    let estimate = try #require(edge.quantile(0.5))
    #expect(abs(estimate - 0x1p63) <= QuantileSketch.relativeErrorBound * 0x1p63)
  }

  @Test func bucketsStayBoundedAfterAMillionValues() {
    // Every power of two from 2^-20 to 2^80 and beyond: all buckets used, none more.
    var random = SeededGenerator(seed: 3)
    var sketch = QuantileSketch()
    for _ in 0..<1_000_000 {
      sketch.add(Double(sign: .plus, exponent: Int.random(in: -20...80, using: &random), significand: Double.random(in: 1..<2, using: &random)))
    }
    #expect(sketch.count == 1_000_000)
    #expect(sketch.storedBucketCount == QuantileSketch.maximumBucketCount)
    #expect(QuantileSketch.maximumBucketCount < 5_000)
  }

  @Test func storageGrowsOnlyToTheHighestBucketUsed() {
    var sketch = QuantileSketch()
    for value in stride(from: 1.0, through: 1_000_000, by: 7) { sketch.add(value) }
    // Up to 2^20: 1 bucket below the range and 30 powers of two of 64 buckets.
    #expect(sketch.storedBucketCount <= 1 + 30 * 64)
  }

  /// A quantile is given only when the sample carries it: the median from 3 values, p95 from
  /// 20 (one value in twenty above it), p99 from 100.
  @Test func aQuantileNeedsTheValuesToCarryIt() {
    #expect(QuantileSketch.minimumCount(carrying: 0.5) == 3)
    #expect(QuantileSketch.minimumCount(carrying: 0.95) == 20)
    #expect(QuantileSketch.minimumCount(carrying: 0.9) == 10)
    #expect(QuantileSketch.minimumCount(carrying: 0.99) == 100)
    #expect(QuantileSketch.minimumCount(carrying: 0.05) == 20)
    #expect(QuantileSketch.minimumCount(carrying: 0) == 1 && QuantileSketch.minimumCount(carrying: 1) == 1)
    var sketch = QuantileSketch()
    // The strap session's two Read By Group Type latencies: no median, no p95.
    for value in [237.0, 416.0] { sketch.add(value) }
    #expect(sketch.carriedQuantile(0.5) == nil && sketch.carriedQuantile(0.95) == nil)
    #expect(sketch.carriedQuantile(0) == 237 && sketch.carriedQuantile(1) == 416)
    sketch.add(300)
    #expect(sketch.carriedQuantile(0.5).map { abs($0 - 300) <= 300 * QuantileSketch.relativeErrorBound } == true)
    #expect(sketch.carriedQuantile(0.95) == nil)
    for value in 4...19 { sketch.add(Double(value * 10)) }
    #expect(sketch.count == 19 && sketch.carriedQuantile(0.95) == nil)
    sketch.add(500)
    #expect(sketch.carriedQuantile(0.95) != nil)
  }

  /// Whatever the sample, every answer lies within the exact minimum and maximum.
  @Test func quantilesNeverLeaveTheMinimumAndMaximum() throws {
    var random = SeededGenerator(seed: 19)
    for round in 0..<400 {
      var sketch = QuantileSketch()
      let count = 1 + round % 40
      let values = (0..<count).map { _ in
        round % 3 == 0 ? Double.random(in: 0...0.002, using: &random) : Double.random(in: 100...1_000, using: &random).rounded()
      }
      values.forEach { sketch.add($0) }
      let (low, high) = (try #require(sketch.minimum), try #require(sketch.maximum))
      #expect(low == values.min() && high == values.max())
      for q in Self.quantiles + [0.0, 1.0] {
        let answer = try #require(sketch.quantile(q))
        #expect(low <= answer && answer <= high, "q \(q) of \(values)")
      }
    }
  }
}
