import Testing

@testable import BLEAnalysis

@Suite struct AxisScaleTests {
  @Test func stepsAreOneTwoOrFiveTimesAPowerOfTen() {
    #expect(AxisScale.tickStep(span: 100, targetCount: 5) == .init(mantissa: 2, exponent: 1))
    #expect(AxisScale.tickStep(span: 7, targetCount: 5) == .init(mantissa: 2, exponent: 0))
    #expect(AxisScale.tickStep(span: 0.03, targetCount: 5) == .init(mantissa: 1, exponent: -2))
    #expect(AxisScale.tickStep(span: 600, targetCount: 10) == .init(mantissa: 1, exponent: 2))
    #expect(AxisScale.tickStep(span: 2.4e300, targetCount: 10) == .init(mantissa: 5, exponent: 299))
    #expect(AxisScale.tickStep(span: 0, targetCount: 5) == nil)
    #expect(AxisScale.tickStep(span: .infinity, targetCount: 5) == nil)
    #expect(AxisScale.tickStep(span: .nan, targetCount: 5) == nil)
  }

  @Test func valueAxisCoversTheDataWithRoundTicks() {
    let axis = AxisScale.values(minimum: 57, maximum: 93, pixelStart: 300, pixelEnd: 100)
    #expect(axis.lower < 57 && axis.upper > 93)
    #expect(axis.ticks == [50, 60, 70, 80, 90, 100])
    #expect(axis.ticks.map { axis.label(of: $0) } == ["50", "60", "70", "80", "90", "100"])
    #expect(axis.position(of: axis.lower) == 300 && axis.position(of: axis.upper) == 100)
  }

  @Test func constantValueGetsABand() {
    for value in [72.0, 0, -3, 1e-10, 1e300] {
      let axis = AxisScale.values(minimum: value, maximum: value, pixelStart: 200, pixelEnd: 0)
      #expect(axis.lower < value && value < axis.upper, "\(value)")
      #expect(axis.ticks.count >= 2, "\(value)")
      let labels = axis.ticks.map { axis.label(of: $0) }
      #expect(Set(labels).count == labels.count, "\(value): \(labels)")
    }
  }

  @Test func timeAxisFitsItsLabels() {
    for (minimum, maximum) in [(0.0, 600.0), (0, 0.004), (1.7e9, 1.7e9 + 3600), (-50, 50), (3, 3)] {
      let axis = AxisScale.time(minimum: minimum, maximum: maximum, pixelStart: 92, pixelEnd: 1160, characterWidth: 7)
      let labels = axis.ticks.map { axis.label(of: $0) }
      let widest = Double(labels.map(\.count).max() ?? 0) * 7 + 16
      #expect(axis.ticks.count >= 2, "\(minimum)…\(maximum)")
      #expect(Double(axis.ticks.count) * widest <= 1160 - 92, "\(labels)")
      #expect(Set(labels).count == labels.count, "\(labels)")
      #expect(axis.ticks.allSatisfy { $0 >= axis.lower && $0 <= axis.upper })
    }
  }

  @Test func labelsTooLongForFixedNotationUseAnExponent() {
    let axis = AxisScale.values(minimum: 1e300, maximum: 1.2e300, pixelStart: 200, pixelEnd: 0)
    let labels = axis.ticks.map { axis.label(of: $0) }
    #expect(labels.contains("1e300"), "\(labels)")
    #expect(labels.allSatisfy { $0.count <= 8 }, "\(labels)")
    // Steps of 2e-9 need 9 decimals: "0.000000012" is too long.
    let small = AxisScale.values(minimum: 1.2e-8, maximum: 1.9e-8, pixelStart: 200, pixelEnd: 0)
    let smallLabels = small.ticks.map { small.label(of: $0) }
    #expect(smallLabels.contains("1.2e-8") && smallLabels.contains("1.4e-8"), "\(smallLabels)")
  }

  @Test func positionsAreFiniteForAnyDouble() {
    let axis = AxisScale.time(minimum: -1e308, maximum: .greatestFiniteMagnitude, pixelStart: 0, pixelEnd: 1000, characterWidth: 7)
    for value in [Double.nan, .infinity, -.infinity, .greatestFiniteMagnitude, 0] {
      #expect(axis.position(of: value).isFinite, "\(value)")
    }
  }
}
