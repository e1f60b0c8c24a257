import BLECore
import BLERender
import Testing

@testable import BLEDecoder

@Suite struct HeartRateProfileTests {
  static let hrm = BluetoothUUID(uuid16: 0x2A37)

  /// Builds a Heart Rate Measurement value the way the GSS layout describes it.
  static func encode(bpm: UInt16, sixteenBit: Bool, contactBits: UInt8, energy: UInt16?, rr: [UInt16]) -> [UInt8] {
    var flags = contactBits << 1
    var body: [UInt8] = []
    if sixteenBit {
      flags |= 0x01
      body += [UInt8(bpm & 0xFF), UInt8(bpm >> 8)]
    } else {
      body.append(UInt8(bpm))
    }
    if let energy {
      flags |= 0x08
      body += [UInt8(energy & 0xFF), UInt8(energy >> 8)]
    }
    if !rr.isEmpty { flags |= 0x10 }
    for value in rr { body += [UInt8(value & 0xFF), UInt8(value >> 8)] }
    return [flags] + body
  }

  static func milliseconds(_ raw: UInt16) -> Double { Double(raw) * 1000 / 1024 }

  @Test(arguments: [false, true], [UInt8(0), 1, 2, 3])
  func everyFlagCombination(sixteenBit: Bool, contactBits: UInt8) throws {
    // RR raw 832 → 812.5 ms, 840 → 820.3125 ms, 1024 → 1000 ms.
    for energy in [UInt16?.none, 110] {
      for rr: [UInt16] in [[], [832], [832, 840, 1024]] {
        let bpm: UInt16 = sixteenBit ? 72 : 72
        let bytes = Self.encode(bpm: bpm, sixteenBit: sixteenBit, contactBits: contactBits, energy: energy, rr: rr)
        let frame = try decodeProfile(Self.hrm, bytes)
        let fields = frame.fields
        #expect(fields.topKeys == ["flags", "bpm", "sensor_contact", "energy_expended_kj", "rr_intervals", "rr_intervals_ms"])
        #expect(fields.uint("bpm") == 72)
        if case .measure(_, 1, _)? = fields.value("bpm") {} else { Issue.record("bpm is not a whole number of bpm (JSON: an integer)") }
        let contact = ["unsupported", "unsupported", "not_detected", "detected"][Int(contactBits)]
        #expect(fields.word("sensor_contact") == contact)
        if let energy {
          #expect(fields.uint("energy_expended_kj") == UInt64(energy))
        } else {
          #expect(fields.isNull("energy_expended_kj"))
        }
        #expect(fields.isArray("rr_intervals") && fields.isArray("rr_intervals_ms"))
        let raw = fields.elements("rr_intervals").map { value -> UInt64? in
          if case .unsigned(let v, _) = value { return v }
          return nil
        }
        #expect(raw == rr.map { UInt64($0) })
        let ms = fields.elements("rr_intervals_ms").map { value -> Double? in
          if case let .real(v, places, unit) = value, places == 1, unit.description == "ms" { return v }
          return nil
        }
        #expect(ms == rr.map { Self.milliseconds($0) })

        var summary = "72 bpm"
        if contactBits == 3 { summary += ", contact detected" }
        if contactBits == 2 { summary += ", no contact" }
        if let energy { summary += ", \(energy) kJ" }
        if !rr.isEmpty { summary += ", RR" + ["812.5", "820.3", "1000"].prefix(rr.count).map { " \($0) ms" }.joined() }
        #expect(frame.summaryText == summary, "flags \(Hex.string(bytes.prefix(1)))")
        #expect(frame.diagnostics.isEmpty)

        // The typed struct agrees with the fields.
        let typed = try HeartRateMeasurement(bytes: bytes)
        #expect(typed.bpm == 72)
        #expect(typed.isSixteenBit == sixteenBit)
        #expect(typed.energyExpended == energy)
        #expect(Array(typed.rrIntervals) == rr)
        #expect(typed.rrIntervalsMilliseconds == rr.map { Self.milliseconds($0) })
        #expect(typed.sensorContact.word.description == contact)
      }
    }
  }

  @Test func exactRRValues() throws {
    // flags 0x10 (8-bit bpm, RR present), 75 bpm, RR 832 and 840.
    let frame = try decodeProfile(Self.hrm, [0x10, 0x4B, 0x40, 0x03, 0x48, 0x03])
    #expect(frame.fields.real("rr_intervals_ms.0") == 812.5)
    #expect(frame.fields.real("rr_intervals_ms.1") == 820.3125)
    #expect(frame.fields.uint("rr_intervals.0") == 832)
    #expect(frame.summaryText == "75 bpm, RR 812.5 ms 820.3 ms")
  }

  /// The header words round RR intervals in integers; every raw value gives what rounding the
  /// floating-point milliseconds to one decimal gives (ties included: 32 is 31.25 ms, 31.3).
  @Test func rrTenthsInIntegersMatchFloatingPoint() {
    for raw in UInt16.min...UInt16.max {
      let integer = HeartRateMeasurement.millisecondsToTenth(raw)
      let floating = FixedDecimal(HeartRateMeasurement.milliseconds(raw), places: 1)
      guard integer == floating else {
        Issue.record("raw \(raw): \(integer) against \(String(describing: floating))")
        return
      }
    }
    #expect(HeartRateMeasurement.millisecondsToTenth(32) == FixedDecimal(negative: false, whole: 31, fraction: 3, digits: 1))
    #expect(HeartRateMeasurement.millisecondsToTenth(16) == FixedDecimal(negative: false, whole: 15, fraction: 6, digits: 1))
    #expect(HeartRateMeasurement.millisecondsToTenth(1024) == FixedDecimal(negative: false, whole: 1000, fraction: 0, digits: 0))
  }

  @Test func sixteenBitHeartRate() throws {
    // flags 0x07: 16-bit bpm 0x0100 = 256 (implausible), contact detected.
    let frame = try decodeProfile(Self.hrm, [0x07, 0x00, 0x01])
    #expect(frame.fields.uint("bpm") == 256)
    #expect(frame.summaryText == "256 bpm, contact detected")
    #expect(frame.warnings == ["heart rate 256 bpm is outside 30–220 bpm"])
  }

  /// Every value the strap in captures/hr_strap_session.btsnoop notifies (bumble 0.0.236
  /// heart_rate_service as notified, frames 130–154), with the values make_hr_session.py encoded:
  /// the contact-supported bit set in all (static within the connection, HRS §3.1.1.1; the
  /// "not supported" encodings 0b00 / 0b01 are in `everyFlagCombination`).
  static let bumbleNotifications: [(bytes: [UInt8], bpm: UInt64, contact: String, energy: UInt64?, rr: [UInt64])] = [
    ([0x04, 0x48], 72, "not_detected", nil, []),
    ([0x04, 0x49], 73, "not_detected", nil, []),
    ([0x16, 0x4A, 0x3E, 0x03], 74, "detected", nil, [830]),
    ([0x1E, 0x4B, 0x0C, 0x00, 0x33, 0x03], 75, "detected", 12, [819]),
    ([0x16, 0x4E, 0x16, 0x03, 0x11, 0x03], 78, "detected", nil, [790, 785]),
    ([0x07, 0x50, 0x00], 80, "detected", nil, []),
    ([0x1F, 0x52, 0x00, 0x0F, 0x00, 0xEE, 0x02], 82, "detected", 15, [750]),
    ([0x0E, 0x5A, 0x12, 0x00], 90, "detected", 18, []),
    ([0x0C, 0x60, 0x14, 0x00], 96, "not_detected", 20, []),
    ([0x16, 0x63, 0x6C, 0x02], 99, "detected", nil, [620]),
    ([0x14, 0x65, 0x62, 0x02, 0x5D, 0x02, 0x58, 0x02], 101, "not_detected", nil, [610, 605, 600]),
    ([0x0D, 0x76, 0x00, 0x1B, 0x00], 118, "not_detected", 27, []),
    ([0x1E, 0x87, 0x1F, 0x00, 0x08, 0x02, 0x03, 0x02, 0xFE, 0x01], 135, "detected", 31, [520, 515, 510]),
    ([0x1F, 0x96, 0x00, 0x00, 0x00, 0x9A, 0x01, 0x98, 0x01], 150, "detected", 0, [410, 408]),
    ([0x1E, 0xA0, 0x01, 0x00, 0x80, 0x01], 160, "detected", 1, [384]),
    (
      [0x16, 0xB8, 0x4F, 0x01, 0x4E, 0x01, 0x4D, 0x01, 0x4E, 0x01, 0x4F, 0x01, 0x50, 0x01, 0x4E, 0x01, 0x4D, 0x01, 0x4C, 0x01],
      184, "detected", nil, [335, 334, 333, 334, 335, 336, 334, 333, 332]
    ),
    (
      [0x1F, 0xB4, 0x00, 0x02, 0x00, 0x55, 0x01, 0x54, 0x01, 0x56, 0x01, 0x55, 0x01, 0x54, 0x01, 0x53, 0x01, 0x55, 0x01, 0x56, 0x01],
      180, "detected", 2, [341, 340, 342, 341, 340, 339, 341, 342]
    ),
    ([0x15, 0xAA, 0x00, 0x69, 0x01, 0x6A, 0x01], 170, "not_detected", nil, [361, 362]),
    ([0x05, 0x8C, 0x00], 140, "not_detected", nil, []),
    ([0x1C, 0x78, 0x03, 0x00, 0x00, 0x02], 120, "not_detected", 3, [512]),
    ([0x1E, 0x5F, 0x04, 0x00, 0x87, 0x02, 0x8A, 0x02], 95, "detected", 4, [647, 650]),
  ]

  @Test func bumbleCaptureNotifications() throws {
    for item in Self.bumbleNotifications {
      let frame = try decodeProfile(Self.hrm, item.bytes)
      #expect(frame.fields.uint("bpm") == item.bpm)
      #expect(frame.fields.word("sensor_contact") == item.contact)
      #expect(frame.fields.uint("energy_expended_kj") == item.energy)
      let raw = frame.fields.elements("rr_intervals").compactMap { value -> UInt64? in
        if case .unsigned(let v, _) = value { return v }
        return nil
      }
      #expect(raw == item.rr)
      #expect(frame.diagnostics.isEmpty, "\(Hex.string(item.bytes)): \(frame.diagnostics)")
    }
    let first = try decodeProfile(Self.hrm, Self.bumbleNotifications[12].bytes)
    #expect(first.summaryText == "135 bpm, contact detected, 31 kJ, RR 507.8 ms 502.9 ms 498 ms")
  }

  @Test func theRawArrayIsVerbose() throws {
    let frame = try decodeProfile(Self.hrm, [0x16, 0x4A, 0x3E, 0x03])
    #expect(frame.fields.topKeys == ["flags", "bpm", "sensor_contact", "energy_expended_kj", "rr_intervals", "rr_intervals_ms"])
    #expect(frame.fields.fields.first { $0.key.description == "rr_intervals" }?.isVerbose == true)
    // The flags byte: JSON's number, text's bit lines with -v only.
    #expect(frame.fields.fields.first { $0.key.description == "flags" }?.isVerbose == true)
    #expect(frame.fields.uint("flags") == 0x16)
    #expect(frame.fields.fields.first { $0.key.description == "rr_intervals_ms" }?.isVerbose == false)
    let value = try #require(typedValue(Self.hrm, [0x16, 0x4A, 0x3E, 0x03]) as? HeartRateMeasurement)
    #expect(value.bpm == 74 && value.rrIntervals == [0x033E] && value.sensorContact == .detected && value.energyExpended == nil)
  }

  @Test func prefixesAndTrailingBytes() {
    // Every strict prefix of a value with at most one RR interval is truncated.
    for item in Self.bumbleNotifications where item.rr.count <= 1 {
      expectPrefixesTruncate(0x2A37, item.bytes)
    }
    // Without RR intervals, a byte after the value does not fit the format.
    expectTrailingByteRejected(0x2A37, [0x0E, 0x5A, 0x12, 0x00])
    // With RR intervals, an odd byte at the end is a truncated interval.
    if case .truncated(needed: 2, available: 1)? = profileError(0x2A37, [0x10, 0x4B, 0x40, 0x03, 0x48])?.reason {} else {
      Issue.record("odd RR byte not truncated")
    }
    // The RR flag with no interval is truncated.
    if case .truncated(needed: 2, available: 0)? = profileError(0x2A37, [0x10, 0x4B])?.reason {} else {
      Issue.record("RR flag without intervals not truncated")
    }
    // A prefix cut between two RR intervals is itself a valid value with fewer intervals.
    #expect(profileError(0x2A37, [0x10, 0x65, 0x62, 0x02]) == nil)
    #expect(throws: DecodeError.self) { try HeartRateMeasurement(bytes: [0x1E, 0x4B, 0x0C]) }
  }

  @Test func implausibleValuesWarn() throws {
    // 25 bpm, RR raw 200 (195.3 ms) and 2100 (2050.8 ms), reserved flag bit 5.
    let frame = try decodeProfile(Self.hrm, [0x30, 0x19, 0xC8, 0x00, 0x34, 0x08])
    #expect(
      frame.warnings == [
        "heart rate 25 bpm is outside 30–220 bpm",
        "reserved bits set in Heart Rate Measurement flags: 0x20",
        "RR interval 195.3 ms is outside 250–2000 ms",
        "RR interval 2050.8 ms is outside 250–2000 ms",
      ])
    #expect(frame.diagnostics.allSatisfy { $0.layer == .profile })
    // 221 bpm warns; the limits themselves do not.
    #expect(try decodeProfile(Self.hrm, [0x00, 221]).warnings.count == 1)
    #expect(try decodeProfile(Self.hrm, [0x00, 220]).warnings.isEmpty)
    #expect(try decodeProfile(Self.hrm, [0x00, 30]).warnings.isEmpty)
    // RR exactly 250 ms (256) and 2000 ms (2048) are plausible.
    #expect(try decodeProfile(Self.hrm, [0x10, 60, 0x00, 0x01, 0x00, 0x08]).warnings.isEmpty)
  }

  @Test func bodySensorLocation() throws {
    // captures/hr_strap_session.btsnoop frame 108: bumble 0.0.236 Read Response, chest.
    let frame = try decodeProfile(0x2A38, [0x01], operation: .read)
    #expect(frame.fields.uint("location") == 1)
    #expect(frame.fields.name("location") == "Chest")
    #expect(frame.summaryText == "Chest")
    expectPrefixesTruncate(0x2A38, [0x01])
    expectTrailingByteRejected(0x2A38, [0x01])
    let reserved = try decodeProfile(0x2A38, [0x07], operation: .read)
    #expect(reserved.warnings == ["body sensor location 7 is reserved"])
    #expect(try BodySensorLocation(bytes: [0x05]).name?.description == "Ear Lobe")
    let typed = try #require(typedValue(0x2A38, [0x01]) as? BodySensorLocation)
    #expect(typed == BodySensorLocation(location: 1) && typed.name?.description == "Chest")
    #expect((typedValue(0x2A38, [0x07]) as? BodySensorLocation)?.name == nil)
  }

  @Test func controlPoint() throws {
    // captures/hr_strap_session.btsnoop frame 143: bumble 0.0.236 Write Request, Reset Energy Expended.
    let reset = try decodeProfile(0x2A39, [0x01], operation: .write)
    #expect(reset.fields.name("opcode") == "Reset Energy Expended")
    #expect(reset.summaryText == "Reset Energy Expended")
    expectTrailingByteRejected(0x2A39, [0x01])
    // Gadgetbridge/HuamiSupport: 15 01 01 = start continuous measurement (reference §9.2).
    let huami = try decodeProfile(0x2A39, [0x15, 0x01, 0x01], operation: .write)
    #expect(huami.fields.name("mode") == "continuous")
    #expect(huami.fields.bool("enabled") == true)
    #expect(huami.summaryText == "Huami: Measurement Control start continuous")
    expectPrefixesTruncate(0x2A39, [0x15, 0x01, 0x01])
    let reserved = try decodeProfile(0x2A39, [0x42, 0x01], operation: .write)
    #expect(reserved.summaryText == "reserved op code 0x42")
    #expect(reserved.warnings == ["Heart Rate Control Point op code 0x42 is reserved"])
    #expect(reserved.fields.text("parameters") == "01")

    // The typed commands.
    let resetValue = try #require(typedValue(0x2A39, [0x01]) as? HeartRateControlPoint)
    #expect(resetValue.command == .resetEnergyExpended)
    #expect(resetValue.opcode == HeartRateControlPoint.resetEnergyExpended)
    #expect(resetValue.opcodeName?.description == "Reset Energy Expended")
    #expect((typedValue(0x2A39, [0x15, 0x01, 0x01]) as? HeartRateControlPoint)?.command == .huamiMeasurementControl(mode: 1, enable: true))
    #expect((typedValue(0x2A39, [0x15, 0x00, 0x00]) as? HeartRateControlPoint)?.command == .huamiMeasurementControl(mode: 0, enable: false))
    #expect((typedValue(0x2A39, [0x16]) as? HeartRateControlPoint)?.command == .huamiKeepAlive)
    let reservedValue = try #require(typedValue(0x2A39, [0x42, 0x01]) as? HeartRateControlPoint)
    #expect(reservedValue.command == .reserved(opcode: 0x42, parameters: [0x01]))
    #expect(reservedValue.opcode == 0x42 && reservedValue.opcodeName == nil)
    // A reserved op code alone: no parameters field.
    #expect(try decodeProfile(0x2A39, [0x42]).fields.value("parameters") == nil)

    // Huami interval: 14 1e = every 30 minutes.
    let interval = try decodeProfile(0x2A39, [0x14, 0x1E], operation: .write)
    #expect(interval.fields.uint("interval_minutes") == 30)
    #expect(interval.summaryText == "Huami: Set Measurement Interval 30 min")
    #expect((typedValue(0x2A39, [0x14, 0x1E]) as? HeartRateControlPoint)?.command == .huamiSetMeasurementInterval(minutes: 30))
    expectTrailingByteRejected(0x2A39, [0x14, 0x1E])
    expectTrailingByteRejected(0x2A39, [0x16])
    // An unknown mode is shown by number only.
    let unknownMode = try decodeProfile(0x2A39, [0x15, 0x07, 0x01], operation: .write)
    #expect(unknownMode.fields.uint("mode") == 7 && unknownMode.fields.name("mode") == nil)
    #expect(unknownMode.summaryText == "Huami: Measurement Control")
  }
}

@Suite struct RRIntervalsTests {
  /// Up to three intervals stay inline; a fourth moves them all to an array; order is kept.
  @Test func inlineThenSpilled() {
    for count in 0...9 {
      let values = (0..<count).map { UInt16(700 + $0 * 7) }
      let intervals = RRIntervals(values)
      #expect(Array(intervals) == values)
      #expect(intervals.count == count)
      #expect((intervals.spilled != nil) == (count > 3))
    }
    #expect(RRIntervals([1, 2]) == [1, 2])
    #expect(RRIntervals([1, 2, 3, 4]) != [1, 2, 3])
    // A measurement with three intervals fits a typed value's inline storage (no box).
    #expect(MemoryLayout<HeartRateMeasurement>.size <= 3 * MemoryLayout<Int>.size)
  }

  /// The longest value a 512-byte attribute can hold: 254 intervals after flags and bpm.
  @Test func longValuesKeepEveryInterval() throws {
    let bytes: [UInt8] = [0x10, 60] + (0..<254).flatMap { [UInt8($0 & 0xFF), 0x03] }
    let value = try #require(typedValue(0x2A37, bytes) as? HeartRateMeasurement)
    #expect(value.rrIntervals.count == 254)
    #expect(value.rrIntervals.last == 0x03FD)
  }
}
