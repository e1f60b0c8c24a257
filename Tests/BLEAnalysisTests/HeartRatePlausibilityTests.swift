import BLEAnalysis
import BLEDecoder
import Testing

/// Flags on heart-rate measurements: each rule at its edges, and energy going backwards only
/// without a reset.
@Suite struct HeartRatePlausibilityTests {
  /// A measurement with contact detected (flags 0x06), RR intervals given in 1/1024 s.
  static func measurement(bpm: UInt16, contact: UInt8 = 0x06, energy: UInt16? = nil, rr: [UInt16] = []) -> HeartRateMeasurement {
    HeartRateMeasurement(flags: contact | (energy == nil ? 0 : 0x08) | (rr.isEmpty ? 0 : 0x10), bpm: bpm, energyExpended: energy, rrIntervals: rr)
  }

  @Test func bpmOutsideThirtyToTwoHundredTwenty() {
    for (bpm, flagged) in [(29, true), (30, false), (72, false), (220, false), (221, true), (256, true), (300, true), (0, true)] as [(UInt16, Bool)] {
      #expect(HeartRatePlausibility.flags(of: Self.measurement(bpm: bpm)).contains(.bpmOutOfRange) == flagged, "\(bpm)")
    }
  }

  @Test func rrOutsideTwoHundredFiftyToTwoThousandMilliseconds() {
    // 177 ms (181/1024 s) and 213 ms, as a misreporting strap sent them; 250 ms = 256, 2000 ms = 2048.
    for (raw, flagged) in [(181, true), (218, true), (255, true), (256, false), (2048, false), (2049, true)] as [(UInt16, Bool)] {
      let bpm = UInt16(min(max(60 * 1024 / Int(raw), 30), 220))
      #expect(HeartRatePlausibility.flags(of: Self.measurement(bpm: bpm, rr: [raw])).contains(.rrOutOfRange) == flagged, "\(raw)")
    }
  }

  @Test func rrThatDisagreeWithTheRate() {
    // 812.5 ms (832) is 73.8 bpm: 74 agrees; 120 does not; 60 is within 15 bpm.
    #expect(!HeartRatePlausibility.flags(of: Self.measurement(bpm: 74, rr: [832])).contains(.rrInconsistent))
    #expect(HeartRatePlausibility.flags(of: Self.measurement(bpm: 120, rr: [832])).contains(.rrInconsistent))
    #expect(!HeartRatePlausibility.flags(of: Self.measurement(bpm: 60, rr: [832])).contains(.rrInconsistent))
    // A mean over several intervals: 335, 334, 333 (about 183.7 bpm) with 184.
    #expect(!HeartRatePlausibility.flags(of: Self.measurement(bpm: 184, rr: [335, 334, 333])).contains(.rrInconsistent))
    // No intervals: nothing to compare.
    #expect(HeartRatePlausibility.flags(of: Self.measurement(bpm: 184)).isEmpty)
  }

  @Test func noContactIsAFact() {
    #expect(HeartRatePlausibility.flags(of: Self.measurement(bpm: 70, contact: 0x04)) == .noContact)
    #expect(HeartRatePlausibility.flags(of: Self.measurement(bpm: 70, contact: 0x00)).isEmpty)
  }

  @Test func energyGoingBackwardsWithoutAReset() {
    var checker = HeartRatePlausibility()
    let energies: [UInt16?] = [10, nil, 12, 12, 5]
    let flags = energies.map { checker.check(Self.measurement(bpm: 70, energy: $0)) }
    #expect(flags.map { $0.contains(.energyBackwards) } == [false, false, false, false, true])
    // A reset written to the control point: starting again from 0 is no fault.
    var reset = HeartRatePlausibility()
    _ = reset.check(Self.measurement(bpm: 70, energy: 31))
    reset.energyWasReset()
    #expect(reset.check(Self.measurement(bpm: 70, energy: 0)).isEmpty)
    #expect(reset.check(Self.measurement(bpm: 70, energy: 1)).isEmpty)
  }

  @Test func wordsInTheirOrder() {
    #expect(HeartRateFlags([.noContact, .bpmOutOfRange, .energyBackwards]).words == ["bpm_out_of_range", "energy_backwards", "no_contact"])
  }
}
