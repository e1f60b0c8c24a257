import BLETestSupport
import Testing

@testable import BLEAnalysis

@Suite struct RunningStatisticsTests {
  @Test func emptyHasNoResults() {
    let statistics = RunningStatistics()
    #expect(statistics.count == 0)
    #expect(statistics.minimum == nil)
    #expect(statistics.maximum == nil)
    #expect(statistics.mean == nil)
    #expect(statistics.standardDeviation == nil)
  }

  @Test func oneValueHasAMeanButNoDeviation() {
    var statistics = RunningStatistics()
    statistics.add(72)
    #expect(statistics.mean == 72)
    #expect(statistics.minimum == 72)
    #expect(statistics.maximum == 72)
    #expect(statistics.variance == nil)
    #expect(statistics.standardDeviation == nil)
  }

  @Test func sdnnOfRRIntervals() throws {
    // Mean 805; deviations −5, 5, −15, 15: squares sum to 500, sample variance 500/3.
    var statistics = RunningStatistics()
    for rr in [800.0, 810, 790, 820] { statistics.add(rr) }
    #expect(statistics.count == 4)
    #expect(statistics.mean == 805)
    #expect(statistics.minimum == 790)
    #expect(statistics.maximum == 820)
    let sdnn = try #require(statistics.standardDeviation)
    #expect(abs(sdnn - 12.909_944_487_358_056) < 1e-12)
  }

  @Test func sampleStandardDeviationOfAKnownSet() throws {
    // Population standard deviation 2; the sample one divides by 7: √(32/7).
    var statistics = RunningStatistics()
    for x in [2.0, 4, 4, 4, 5, 5, 7, 9] { statistics.add(x) }
    #expect(statistics.mean == 5)
    let variance = try #require(statistics.variance)
    #expect(abs(variance - 32.0 / 7) < 1e-12)
    #expect(abs(try #require(statistics.standardDeviation) - 2.138_089_935_299_395) < 1e-12)
  }

  @Test func largeOffsetDoesNotCancel() throws {
    // A sum of squares minus the squared sum loses everything here; Welford keeps the variance 30.
    var statistics = RunningStatistics()
    for x in [4.0, 7, 13, 16] { statistics.add(1e9 + x) }
    #expect(abs(try #require(statistics.variance) - 30) < 1e-6)
    #expect(statistics.mean == 1e9 + 10)
  }

  @Test func nonFiniteValuesAreIgnored() throws {
    var statistics = RunningStatistics()
    for x in [60.0, .nan, .infinity, 80, -.infinity] { statistics.add(x) }
    #expect(statistics.count == 2)
    #expect(statistics.ignoredCount == 3)
    #expect(statistics.mean == 70)
    #expect(statistics.minimum == 60)
    #expect(statistics.maximum == 80)
    #expect(abs(try #require(statistics.standardDeviation) - 200.0.squareRoot()) < 1e-12)
  }

  @Test func agreesWithTwoPassOnSeededData() throws {
    var random = SeededGenerator(seed: 0x5D_44)
    let values = (0..<10_000).map { _ in Double.random(in: 300...1500, using: &random) }
    var statistics = RunningStatistics()
    values.forEach { statistics.add($0) }
    let mean = values.reduce(0, +) / Double(values.count)
    let variance = values.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(values.count - 1)
    #expect(abs(try #require(statistics.mean) - mean) < 1e-9)
    #expect(abs(try #require(statistics.variance) - variance) / variance < 1e-9)
    #expect(statistics.minimum == values.min())
    #expect(statistics.maximum == values.max())
  }

  @Test func hugeFiniteValuesDoNotTrap() {
    var statistics = RunningStatistics()
    for x in [Double.greatestFiniteMagnitude, -Double.greatestFiniteMagnitude, 1e300] { statistics.add(x) }
    #expect(statistics.count == 3)
    #expect(statistics.maximum == .greatestFiniteMagnitude)
    #expect(statistics.minimum == -.greatestFiniteMagnitude)
  }
}
