import Testing

@testable import BLEAnalysis

@Suite struct SuccessiveDifferencesTests {
  @Test func rmssdOfFourIntervals() throws {
    // Differences 10, −20, 30: √((100 + 400 + 900) / 3).
    var differences = SuccessiveDifferences()
    for rr in [800.0, 810, 790, 820] { differences.add(rr) }
    #expect(differences.differenceCount == 3)
    let rmssd = try #require(differences.rmssd)
    #expect(abs(rmssd - 21.602_468_994_692_867) < 1e-12)
  }

  @Test func fewerThanTwoValuesHaveNoRMSSD() {
    var differences = SuccessiveDifferences()
    #expect(differences.rmssd == nil)
    differences.add(800)
    #expect(differences.rmssd == nil)
  }

  @Test func resetKeepsDifferencesFromSpanningTheBreak() throws {
    // Without the break, 810 → 900 would add a difference of 90.
    var differences = SuccessiveDifferences()
    differences.add(800)
    differences.add(810)
    differences.reset()
    differences.add(900)
    differences.add(880)
    #expect(differences.differenceCount == 2)
    #expect(abs(try #require(differences.rmssd) - (500.0 / 2).squareRoot()) < 1e-12)
  }

  @Test func runsOfOneValueGiveNothing() {
    var differences = SuccessiveDifferences()
    differences.reset()
    differences.add(800)
    differences.reset()
    differences.reset()
    differences.add(900)
    differences.reset()
    #expect(differences.rmssd == nil)
    #expect(differences.differenceCount == 0)
  }

  @Test func nonFiniteValueBreaksTheRun() throws {
    var differences = SuccessiveDifferences()
    for rr in [800.0, .nan, 900, 910, .infinity, 1000] { differences.add(rr) }
    #expect(differences.ignoredCount == 2)
    #expect(differences.differenceCount == 1)
    #expect(try #require(differences.rmssd) == 10)
  }

  @Test func constantIntervalsHaveZeroRMSSD() {
    var differences = SuccessiveDifferences()
    for _ in 0..<5 { differences.add(1000) }
    #expect(differences.rmssd == 0)
  }
}
