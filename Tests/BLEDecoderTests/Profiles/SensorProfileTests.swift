import BLECore
import BLERender
import Testing

@testable import BLEDecoder

@Suite struct SensorProfileTests {
  @Test func cscMeasurement() throws {
    // Constructed per GSS csc_measurement (reference §4.1): flags 0x03, wheel revolutions 1000,
    // last wheel event 2048 (2 s), crank revolutions 50, last crank event 1024 (1 s).
    let bytes: [UInt8] = [0x03, 0xE8, 0x03, 0x00, 0x00, 0x00, 0x08, 0x32, 0x00, 0x00, 0x04]
    let frame = try decodeProfile(0x2A5B, bytes)
    #expect(frame.fields.uint("wheel_revolutions") == 1000)
    #expect(frame.fields.uint("last_wheel_event_time") == 2048)
    #expect(frame.fields.unit("last_wheel_event_time") == "s")
    #expect(frame.fields.uint("crank_revolutions") == 50)
    #expect(frame.fields.uint("last_crank_event_time") == 1024)
    #expect(frame.summaryText == "wheel 1000 revs, crank 50 revs")
    let typed = try CSCMeasurement(bytes: bytes)
    #expect(typed.cumulativeWheelRevolutions == 1000 && typed.lastCrankEventTime == 1024)
    let registered = try #require(typedValue(0x2A5B, bytes) as? CSCMeasurement)
    #expect(registered == typed && registered.lastWheelEventTime == 2048 && registered.cumulativeCrankRevolutions == 50)
    expectPrefixesTruncate(0x2A5B, bytes)
    expectTrailingByteRejected(0x2A5B, bytes)
    // Crank only; reserved flag bit 2.
    let crank = try decodeProfile(0x2A5B, [0x06, 0x32, 0x00, 0x00, 0x04])
    #expect(crank.fields.value("wheel_revolutions") == nil)
    #expect(crank.summaryText == "crank 50 revs")
    #expect(crank.warnings == ["reserved bits set in CSC Measurement flags: 0x04"])
    #expect((typedValue(0x2A5B, [0x06, 0x32, 0x00, 0x00, 0x04]) as? CSCMeasurement)?.cumulativeWheelRevolutions == nil)
    #expect(try decodeProfile(0x2A5B, [0x00]).summaryText == "no data")
  }

  @Test func rscMeasurement() throws {
    // Constructed per GSS rsc_measurement (reference §4.2): flags 0x07 (stride, distance,
    // running), speed 0x0300 = 768/256 = 3 m/s, cadence 170/min, stride 120 cm, distance 12345 (1234.5 m).
    let bytes: [UInt8] = [0x07, 0x00, 0x03, 0xAA, 0x78, 0x00, 0x39, 0x30, 0x00, 0x00]
    let frame = try decodeProfile(0x2A53, bytes)
    #expect(frame.fields.real("speed_mps") == 3)
    #expect(frame.fields.uint("cadence_per_min") == 170)
    #expect(frame.fields.uint("stride_length") == 120)
    #expect(frame.fields.uint("total_distance") == 12345)
    #expect(frame.fields.word("activity") == "running")
    #expect(frame.summaryText == "3 m/s, 170/min, running")
    let typed = try RSCMeasurement(bytes: bytes)
    #expect(typed.speedMetresPerSecond == 3 && typed.instantaneousStrideLength == 120 && typed.totalDistance == 12345)
    expectPrefixesTruncate(0x2A53, bytes)
    expectTrailingByteRejected(0x2A53, bytes)
    // Walking, no optional fields: speed 0x0180 = 1.5 m/s.
    let walk = try decodeProfile(0x2A53, [0x00, 0x80, 0x01, 0x64])
    #expect(walk.summaryText == "1.5 m/s, 100/min, walking")
    let walking = try #require(typedValue(0x2A53, [0x00, 0x80, 0x01, 0x64]) as? RSCMeasurement)
    #expect(!walking.isRunning && walking.speedMetresPerSecond == 1.5 && walking.instantaneousCadence == 100)
    #expect(walking.instantaneousStrideLength == nil && walking.totalDistance == nil)
  }

  @Test func cyclingPowerMeasurement() throws {
    // Constructed per GSS cycling_power_measurement (reference §4.3), every optional field:
    // flags 0x1FFF; power 250 W; balance 100 (50 %, left); torque 640 (20 N·m, crank);
    // wheel revs 500 @ 4096 (2 s); crank revs 60 @ 2048 (2 s); force max 300 / min −50 N;
    // torque max 320 (10 N·m) / min −32 (−1 N·m); extreme angles max 0xABC, min 0x123 sent
    // BC 3A 12 (gatt-xml example); top dead spot 10°, bottom 190°; energy 42 kJ.
    let bytes: [UInt8] = [
      0xFF, 0x1F, 0xFA, 0x00, 0x64, 0x80, 0x02, 0xF4, 0x01, 0x00, 0x00, 0x00, 0x10, 0x3C, 0x00, 0x00, 0x08,
      0x2C, 0x01, 0xCE, 0xFF, 0x40, 0x01, 0xE0, 0xFF, 0xBC, 0x3A, 0x12, 0x0A, 0x00, 0xBE, 0x00, 0x2A, 0x00,
    ]
    let frame = try decodeProfile(0x2A63, bytes)
    #expect(frame.fields.int("power_w") == 250)
    #expect(frame.fields.real("pedal_power_balance_percent") == 50)
    #expect(frame.fields.word("pedal_power_balance_reference") == "left")
    #expect(frame.fields.real("accumulated_torque_nm") == 20)
    #expect(frame.fields.word("accumulated_torque_source") == "crank")
    #expect(frame.fields.uint("wheel_revolutions") == 500)
    #expect(frame.fields.uint("last_wheel_event_time") == 4096)
    #expect(frame.fields.uint("crank_revolutions") == 60)
    #expect(frame.fields.int("max_force_n") == 300)
    #expect(frame.fields.int("min_force_n") == -50)
    #expect(frame.fields.real("max_torque_nm") == 10)
    #expect(frame.fields.real("min_torque_nm") == -1)
    #expect(frame.fields.uint("max_angle_deg") == 0xABC)
    #expect(frame.fields.uint("min_angle_deg") == 0x123)
    #expect(frame.fields.uint("top_dead_spot_angle_deg") == 10)
    #expect(frame.fields.uint("bottom_dead_spot_angle_deg") == 190)
    #expect(frame.fields.uint("accumulated_energy_kj") == 42)
    #expect(frame.fields.bool("offset_compensation") == true)
    #expect(frame.summaryText == "250 W, balance 50 % left, 42 kJ")
    #expect(frame.diagnostics.isEmpty)
    let typed = try CyclingPowerMeasurement(bytes: bytes)
    #expect(typed.instantaneousPower == 250 && typed.maximumAngle == 0xABC && typed.minimumAngle == 0x123)
    #expect(typed.minimumForce == -50 && typed.accumulatedEnergy == 42)
    let registered = try #require(typedValue(0x2A63, bytes) as? CyclingPowerMeasurement)
    #expect(registered == typed)
    #expect(registered.pedalPowerBalancePercent == 50 && registered.pedalPowerBalanceReferenceIsLeft)
    #expect(registered.accumulatedTorqueSourceIsCrank && registered.offsetCompensation)
    expectPrefixesTruncate(0x2A63, bytes)
    expectTrailingByteRejected(0x2A63, bytes)
    // Power only, negative; reserved flag bit 13.
    let minimal = try decodeProfile(0x2A63, [0x00, 0x20, 0xF6, 0xFF])
    #expect(minimal.fields.int("power_w") == -10)
    #expect(minimal.summaryText == "-10 W")
    #expect(minimal.warnings == ["reserved bits set in Cycling Power Measurement flags: 0x2000"])
    let powerOnly = try #require(typedValue(0x2A63, [0x00, 0x20, 0xF6, 0xFF]) as? CyclingPowerMeasurement)
    #expect(powerOnly.instantaneousPower == -10 && powerOnly.pedalPowerBalancePercent == nil && powerOnly.accumulatedEnergy == nil)
  }

  @Test func sensorLocationAndFeatures() throws {
    // GSS sensor_location: 6 = Right Crank.
    let location = try decodeProfile(0x2A5D, [0x06], operation: .read)
    #expect(location.fields.name("location") == "Right Crank")
    #expect(location.summaryText == "Right Crank")
    expectTrailingByteRejected(0x2A5D, [0x06])
    #expect(try decodeProfile(0x2A5D, [0x11]).warnings == ["sensor location 17 is reserved"])
    #expect(try decodeProfile(0x2A5D, [0x11]).summaryText == "reserved location 17")
    let typedLocation = try #require(typedValue(0x2A5D, [0x06]) as? SensorLocation)
    #expect(typedLocation == SensorLocation(location: 6) && typedLocation.name?.description == "Right Crank")

    // CSC Feature: wheel + crank.
    let csc = try decodeProfile(0x2A5C, [0x03, 0x00], operation: .read)
    #expect(csc.fields.bool("wheel_revolution_data") == true)
    #expect(csc.fields.bool("multiple_sensor_locations") == false)
    #expect(csc.summaryText == "wheel, crank")
    let cscFeature = try #require(typedValue(0x2A5C, [0x03, 0x00]) as? CSCFeature)
    #expect(cscFeature.wheelRevolutionData && cscFeature.crankRevolutionData && !cscFeature.multipleSensorLocations)
    #expect(cscFeature == CSCFeature(rawValue: 3))
    // Reserved feature bits are a note, not a warning.
    let cscReserved = try decodeProfile(0x2A5C, [0x08, 0x00])
    #expect(cscReserved.warnings.isEmpty)
    #expect(cscReserved.diagnostics.map(\.message) == ["reserved bits set in CSC Feature: 0x0008"])
    #expect(cscReserved.diagnostics.map(\.code) == ["profile.reserved_feature_bits"])
    #expect(cscReserved.summaryText == "no features")
    expectPrefixesTruncate(0x2A5C, [0x03, 0x00])
    expectTrailingByteRejected(0x2A5C, [0x03, 0x00])

    // RSC Feature: stride length, total distance, walking/running status.
    let rsc = try decodeProfile(0x2A54, [0x07, 0x00], operation: .read)
    #expect(rsc.fields.bool("walking_or_running_status") == true)
    #expect(rsc.fields.bool("calibration_procedure") == false)
    #expect(rsc.summaryText == "stride length, total distance, walking/running")
    let rscFeature = try #require(typedValue(0x2A54, [0x07, 0x00]) as? RSCFeature)
    #expect(rscFeature.strideLength && rscFeature.totalDistance && rscFeature.walkingOrRunningStatus)
    #expect(!rscFeature.calibrationProcedure && !rscFeature.multipleSensorLocations)
    #expect((typedValue(0x2A54, [0x18, 0x00]) as? RSCFeature) == RSCFeature(rawValue: 0x18))
    #expect(try decodeProfile(0x2A54, [0x18, 0x00]).summaryText == "calibration, multiple locations")
    expectPrefixesTruncate(0x2A54, [0x07, 0x00])
  }

  @Test func temperatureMeasurement() throws {
    // Constructed per GSS temperature_measurement: flags 0x06 (Celsius, time stamp, type),
    // 36.6 °C as FLOAT 0xFF00016E (366 × 10^-1), 2024-03-01 12:34:56, type 3 (ear).
    let bytes: [UInt8] = [0x06, 0x6E, 0x01, 0x00, 0xFF, 0xE8, 0x07, 0x03, 0x01, 0x0C, 0x22, 0x38, 0x03]
    let frame = try decodeProfile(0x2A1C, bytes, operation: .indication)
    #expect(frame.fields.real("temperature") == 36.6)
    #expect(frame.fields.unit("temperature") == "°C")
    #expect(frame.fields.word("unit") == "celsius")
    #expect(frame.fields.text("timestamp") == "2024-03-01 12:34:56")
    #expect(frame.fields.name("temperature_type") == "Ear (usually earlobe)")
    #expect(frame.summaryText == "36.6 °C, Ear (usually earlobe), 2024-03-01 12:34:56")
    #expect(frame.diagnostics.isEmpty)
    let typed = try TemperatureMeasurement(bytes: bytes)
    #expect(typed.temperature.value == 36.6)
    #expect(typed.timestamp == DateTime(year: 2024, month: 3, day: 1, hours: 12, minutes: 34, seconds: 56))
    #expect(typed.temperatureType == 3)
    let registered = try #require(typedValue(0x2A1C, bytes) as? TemperatureMeasurement)
    #expect(registered == typed && !registered.isFahrenheit && registered.unit.description == "°C")
    // Intermediate Temperature makes the same type.
    #expect((typedValue(0x2A1E, bytes) as? TemperatureMeasurement) == typed)
    expectPrefixesTruncate(0x2A1C, bytes)
    expectTrailingByteRejected(0x2A1C, bytes)

    // Fahrenheit, no options: 98.6 °F = 986 × 10^-1.
    let fahrenheit = try decodeProfile(0x2A1C, [0x01, 0xDA, 0x03, 0x00, 0xFF])
    #expect(fahrenheit.fields.real("temperature") == 98.6)
    #expect(fahrenheit.fields.word("unit") == "fahrenheit")
    #expect(fahrenheit.summaryText == "98.6 °F")
    // NaN temperature (a reading not available); reserved flag bit 3.
    let nan = try decodeProfile(0x2A1C, [0x08, 0xFF, 0xFF, 0x7F, 0x00])
    #expect(nan.fields.word("temperature") == "nan")
    #expect(nan.summaryText == "nan")
    #expect(nan.warnings == ["reserved bits set in Temperature Measurement flags: 0x08"])
    // Intermediate Temperature shares the format under its own key.
    #expect(ProfileRegistry.decoder(for: BluetoothUUID(uuid16: 0x2A1E))?.key.description == "intermediate_temperature")
    #expect(try decodeProfile(0x2A1D, [0x02], operation: .read).summaryText == "Body (general)")
    // Temperature Type alone: one byte.
    let type = try decodeProfile(0x2A1D, [0x02], operation: .read)
    #expect(type.fields.uint("type") == 2 && type.fields.name("type") == "Body (general)")
    let typedType = try #require(typedValue(0x2A1D, [0x02]) as? TemperatureType)
    #expect(typedType == TemperatureType(rawValue: 2) && typedType.name?.description == "Body (general)")
    expectPrefixesTruncate(0x2A1D, [0x02])
    expectTrailingByteRejected(0x2A1D, [0x02])
    let reservedType = try decodeProfile(0x2A1D, [0x0A], operation: .read)
    #expect(reservedType.summaryText == "reserved type 10")
    #expect(reservedType.warnings == ["temperature type 10 is reserved"])
    // A reserved type and a bad time stamp inside a measurement.
    let odd = try decodeProfile(0x2A1C, [0x06, 0x6E, 0x01, 0x00, 0xFF, 0xE8, 0x07, 0x0D, 0x01, 0x0C, 0x22, 0x38, 0x0A])
    #expect(
      odd.warnings == [
        "date and time: month 13 is above 12",
        "temperature type 10 is reserved",
      ])
  }

  @Test func bloodPressureMeasurement() throws {
    // Constructed per GSS blood_pressure_measurement: flags 0x1E (mmHg, time stamp, pulse, user,
    // status); SFLOAT systolic 120 (0x0078), diastolic 80 (0x0050), MAP 93.3 (0xF3A5);
    // 2024-03-01 08:00:00; pulse 72 (0x0048); user 1; status 0x0004 (irregular pulse).
    let bytes: [UInt8] = [
      0x1E, 0x78, 0x00, 0x50, 0x00, 0xA5, 0xF3, 0xE8, 0x07, 0x03, 0x01, 0x08, 0x00, 0x00, 0x48, 0x00, 0x01, 0x04, 0x00,
    ]
    let frame = try decodeProfile(0x2A35, bytes, operation: .indication)
    #expect(frame.fields.real("systolic") == 120)
    #expect(frame.fields.real("diastolic") == 80)
    #expect(frame.fields.real("mean_arterial_pressure") == 93.3)
    #expect(frame.fields.unit("systolic") == "mmHg")
    #expect(frame.fields.word("unit") == "mmHg")
    #expect(frame.fields.text("timestamp") == "2024-03-01 08:00:00")
    #expect(frame.fields.real("pulse_rate_bpm") == 72)
    #expect(frame.fields.uint("user_id") == 1)
    #expect(frame.fields.bool("measurement_status.irregular_pulse") == true)
    #expect(frame.fields.bool("measurement_status.body_movement") == false)
    #expect(frame.fields.word("measurement_status.pulse_rate_range") == "within_range")
    #expect(frame.summaryText == "120/80 mmHg, MAP 93.3, pulse 72 bpm")
    #expect(frame.diagnostics.isEmpty)
    let typed = try BloodPressureMeasurement(bytes: bytes)
    #expect(typed.systolic.value == 120 && typed.pulseRate?.value == 72 && typed.userID == 1 && typed.measurementStatus == 4)
    let registered = try #require(typedValue(0x2A35, bytes) as? BloodPressureMeasurement)
    #expect(registered == typed && !registered.isKilopascal)
    #expect(registered.timestamp == DateTime(year: 2024, month: 3, day: 1, hours: 8, minutes: 0, seconds: 0))
    expectPrefixesTruncate(0x2A35, bytes)
    expectTrailingByteRejected(0x2A35, bytes)

    // kPa, no options: 16.0 / 10.7 / 12.4 kPa (exponent −1).
    let kpa = try decodeProfile(0x2A35, [0x01, 0xA0, 0xF0, 0x6B, 0xF0, 0x7C, 0xF0])
    #expect(kpa.fields.real("systolic") == 16)
    #expect(kpa.summaryText == "16/10.7 kPa, MAP 12.4")
    // Intermediate Cuff Pressure: current pressure in "systolic", the others NaN.
    let cuff = try decodeProfile(0x2A36, [0x00, 0x64, 0x00, 0xFF, 0x07, 0xFF, 0x07])
    #expect(cuff.fields.real("systolic") == 100)
    #expect(cuff.fields.word("diastolic") == "nan")
    #expect(cuff.summaryText == "100/nan mmHg, MAP nan")
    let cuffValue = try #require(typedValue(0x2A36, [0x00, 0x64, 0x00, 0xFF, 0x07, 0xFF, 0x07]) as? BloodPressureMeasurement)
    #expect(cuffValue.systolic.value == 100 && cuffValue.diastolic.special == .nan)
    // Reserved flag bit 5 and reserved status bit 6.
    let reserved = try decodeProfile(0x2A35, [0x30, 0x78, 0x00, 0x50, 0x00, 0x5D, 0x00, 0x40, 0x00])
    #expect(
      reserved.warnings == [
        "reserved bits set in Blood Pressure Measurement flags: 0x20",
        "reserved bits set in Blood Pressure measurement status: 0x0040",
      ])
  }

  @Test func environmentalTemperatureAndHumidity() throws {
    // GSS temperature: s16 in 0.01 °C; 0x0866 = 2150 → 21.5 °C; −5.25 °C = −525 = 0xFDF3.
    let warm = try decodeProfile(0x2A6E, [0x66, 0x08], operation: .read)
    #expect(warm.fields.real("celsius") == 21.5)
    #expect(warm.summaryText == "21.5 °C")
    #expect(try decodeProfile(0x2A6E, [0xF3, 0xFD]).fields.real("celsius") == -5.25)
    let unknown = try decodeProfile(0x2A6E, [0x00, 0x80])
    #expect(unknown.fields.isNull("celsius"))
    #expect(unknown.summaryText == "unknown")
    #expect((typedValue(0x2A6E, [0x66, 0x08]) as? Temperature)?.celsius == 21.5)
    let unknownValue = try #require(typedValue(0x2A6E, [0x00, 0x80]) as? Temperature)
    #expect(!unknownValue.isKnown && unknownValue.celsius == nil && unknownValue == Temperature(rawValue: Int16.min))
    expectPrefixesTruncate(0x2A6E, [0x66, 0x08])
    expectTrailingByteRejected(0x2A6E, [0x66, 0x08])

    // GSS humidity: u16 in 0.01 %; 4550 = 45.5 %.
    let humid = try decodeProfile(0x2A6F, [0xC6, 0x11], operation: .read)
    #expect(humid.fields.real("percent") == 45.5)
    #expect(humid.summaryText == "45.5 %")
    #expect(try decodeProfile(0x2A6F, [0xFF, 0xFF]).fields.isNull("percent"))
    #expect(try decodeProfile(0x2A6F, [0xFF, 0xFF]).summaryText == "unknown")
    #expect((typedValue(0x2A6F, [0xC6, 0x11]) as? Humidity)?.percent == 45.5)
    #expect((typedValue(0x2A6F, [0xFF, 0xFF]) as? Humidity) == Humidity(rawValue: 0xFFFF))
    expectTrailingByteRejected(0x2A6F, [0xC6, 0x11])
    #expect(try decodeProfile(0x2A6F, [0x11, 0x27]).warnings == ["humidity 100.01 % is above 100 %"])
    expectPrefixesTruncate(0x2A6F, [0xC6, 0x11])
  }

  @Test func currentTime() throws {
    // CTS 1.1 Current Time layout (reference §4.4): 2024-03-01 12:34:56, Friday (5),
    // fractions 128 (0.5 s), adjust reason 0x01 (manual time update).
    let bytes: [UInt8] = [0xE8, 0x07, 0x03, 0x01, 0x0C, 0x22, 0x38, 0x05, 0x80, 0x01]
    let frame = try decodeProfile(0x2A2B, bytes, operation: .read)
    #expect(frame.fields.text("date_time") == "2024-03-01 12:34:56")
    #expect(frame.fields.uint("year") == 2024)
    #expect(frame.fields.uint("month") == 3)
    #expect(frame.fields.uint("seconds") == 56)
    #expect(frame.fields.name("day_of_week") == "Friday")
    #expect(frame.fields.uint("fractions256") == 128)
    #expect(frame.fields.bool("adjust_reason.manual_time_update") == true)
    #expect(frame.fields.bool("adjust_reason.dst_change") == false)
    #expect(frame.summaryText == "2024-03-01 12:34:56 Friday, manual update")
    #expect(frame.diagnostics.isEmpty)
    let typed = try CurrentTime(bytes: bytes)
    #expect(typed.dateTime == DateTime(year: 2024, month: 3, day: 1, hours: 12, minutes: 34, seconds: 56))
    #expect(typed.dayOfWeek == 5 && typed.fractions256 == 128 && typed.manualTimeUpdate)
    let registered = try #require(typedValue(0x2A2B, bytes) as? CurrentTime)
    #expect(registered == typed && registered.adjustReason == 0x01)
    #expect(!registered.externalReferenceTimeUpdate && !registered.timeZoneChange && !registered.dstChange)
    expectPrefixesTruncate(0x2A2B, bytes)
    expectTrailingByteRejected(0x2A2B, bytes)
    // Out of range parts, reserved adjust reason bit 4.
    let bad = try decodeProfile(0x2A2B, [0xE8, 0x07, 0x0D, 0x01, 0x18, 0x00, 0x00, 0x08, 0x00, 0x10])
    #expect(
      bad.warnings == [
        "day of week 8 is reserved",
        "date and time: month 13 is above 12",
        "date and time: hours 24 is above 23",
        "reserved bits set in Current Time adjust reason: 0x10",
      ])
    // Date Time alone (0x2A08).
    let dateTime = try decodeProfile(0x2A08, [0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00], operation: .read)
    #expect(dateTime.summaryText == "0000-00-00 00:00:00")
    expectPrefixesTruncate(0x2A08, [0xE8, 0x07, 0x03, 0x01, 0x0C, 0x22, 0x38])
    expectTrailingByteRejected(0x2A08, [0xE8, 0x07, 0x03, 0x01, 0x0C, 0x22, 0x38])
    let typedDateTime = try #require(typedValue(0x2A08, [0xE8, 0x07, 0x03, 0x01, 0x0C, 0x22, 0x38]) as? DateTime)
    #expect(typedDateTime == DateTime(year: 2024, month: 3, day: 1, hours: 12, minutes: 34, seconds: 56))
    #expect(typedDateTime.problems.isEmpty && typedDateTime.description == "2024-03-01 12:34:56")
    #expect(try decodeProfile(0x2A08, [0x05, 0x00, 0x01, 0x20, 0x00, 0x3C, 0x00]).warnings == [
      "date and time: year 5 is outside 1582–9999",
      "date and time: day 32 is above 31",
      "date and time: minutes 60 is above 59",
    ])
  }

  @Test func dayOfWeekAndDayDateTime() throws {
    // Day of Week 0x2A09: 7 = Sunday.
    let sunday = try decodeProfile(0x2A09, [0x07], operation: .read)
    #expect(sunday.fields.name("day_of_week") == "Sunday")
    #expect(sunday.summaryText == "Sunday")
    #expect(sunday.diagnostics.isEmpty)
    let typedDay = try #require(typedValue(0x2A09, [0x07]) as? DayOfWeek)
    #expect(typedDay == DayOfWeek(rawValue: 7) && typedDay.name?.description == "Sunday")
    expectPrefixesTruncate(0x2A09, [0x07])
    expectTrailingByteRejected(0x2A09, [0x07])
    let reservedDay = try decodeProfile(0x2A09, [0x08], operation: .read)
    #expect(reservedDay.summaryText == "reserved day")
    #expect(reservedDay.warnings == ["day of week 8 is reserved"])
    #expect((typedValue(0x2A09, [0x08]) as? DayOfWeek)?.name == nil)

    // Day Date Time 0x2A0A: 2024-03-01 12:34:56, Friday; a day of 0 (unknown) is not named.
    let bytes: [UInt8] = [0xE8, 0x07, 0x03, 0x01, 0x0C, 0x22, 0x38, 0x05]
    let frame = try decodeProfile(0x2A0A, bytes, operation: .read)
    #expect(frame.fields.text("date_time") == "2024-03-01 12:34:56")
    #expect(frame.fields.name("day_of_week") == "Friday")
    #expect(frame.summaryText == "2024-03-01 12:34:56 Friday")
    let typed = try #require(typedValue(0x2A0A, bytes) as? DayDateTime)
    #expect(typed == DayDateTime(dateTime: DateTime(year: 2024, month: 3, day: 1, hours: 12, minutes: 34, seconds: 56), dayOfWeek: 5))
    expectPrefixesTruncate(0x2A0A, bytes)
    expectTrailingByteRejected(0x2A0A, bytes)
    #expect(try decodeProfile(0x2A0A, Array(bytes.dropLast()) + [0x00]).summaryText == "2024-03-01 12:34:56")

    // Exact Time 256 0x2A0C: the same plus 64/256 s.
    let exactBytes = bytes + [0x40]
    let exact = try decodeProfile(0x2A0C, exactBytes, operation: .read)
    #expect(exact.fields.uint("fractions256") == 64)
    #expect(exact.fields.unit("fractions256") == "s")
    #expect(exact.summaryText == "2024-03-01 12:34:56 Friday")
    let typedExact = try #require(typedValue(0x2A0C, exactBytes) as? ExactTime256)
    #expect(typedExact == ExactTime256(dayDateTime: typed, fractions256: 64))
    expectPrefixesTruncate(0x2A0C, exactBytes)
    expectTrailingByteRejected(0x2A0C, exactBytes)
  }
}
