import BLECore

// Cycling Speed and Cadence (0x1816), Running Speed and Cadence (0x1814) and Cycling Power
// (0x1818): CSC Measurement 0x2A5B, CSC Feature 0x2A5C, RSC Measurement 0x2A53, RSC Feature
// 0x2A54, Cycling Power Measurement 0x2A63, Sensor Location 0x2A5D.
//
// The corresponding specification is CSCS 1.0, RSCS 1.0, CPS 1.1 and the GATT Specification
// Supplement.

/// CSC Measurement 0x2A5B: `flags(1) [wheel_revs(u32) wheel_time(u16)] [crank_revs(u16) crank_time(u16)]`,
/// event times in 1/1024 s (they wrap every 64 s).
public struct CSCMeasurement: CharacteristicValue, Equatable {
  public var flags: UInt8
  public var cumulativeWheelRevolutions: UInt32?
  /// 1/1024 s.
  public var lastWheelEventTime: UInt16?
  public var cumulativeCrankRevolutions: UInt16?
  /// 1/1024 s.
  public var lastCrankEventTime: UInt16?

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    flags = try reader.readUInt8()
    if flags & 0x01 != 0 {
      cumulativeWheelRevolutions = try reader.readUInt32LE()
      lastWheelEventTime = try reader.readUInt16LE()
    }
    if flags & 0x02 != 0 {
      cumulativeCrankRevolutions = try reader.readUInt16LE()
      lastCrankEventTime = try reader.readUInt16LE()
    }
  }

  public static let decoder = CharacteristicDecoder(uuid16: 0x2A5B, key: "csc_measurement", CSCMeasurement.self)
  /// The flags' bits, for `-v` (CSCS 1.0 §3.1.1.1).
  public static let flagLayout: Name = "01:Wheel revolution data=absent|present;02:Crank revolution data=absent|present;FC:Reserved"

  public func writeFields(to fields: inout FieldList, context: ValueContext) {
    fields.addVerbose("flags", "Flags", .unsigned(UInt64(flags), .bits(2, layout: Self.flagLayout)))
    if let revolutions = cumulativeWheelRevolutions, let time = lastWheelEventTime {
      fields.uint("wheel_revolutions", "Cumulative wheel revolutions", revolutions)
      fields.measure("last_wheel_event_time", "Last wheel event time", time, scale: 1.0 / 1024, unit: "s")
    }
    if let revolutions = cumulativeCrankRevolutions, let time = lastCrankEventTime {
      fields.uint("crank_revolutions", "Cumulative crank revolutions", revolutions)
      fields.measure("last_crank_event_time", "Last crank event time", time, scale: 1.0 / 1024, unit: "s")
    }
  }

  public func summarize(into summary: inout SummaryLine, context: ValueContext) {
    var first = true
    if let revolutions = cumulativeWheelRevolutions {
      ProfileSupport.separate(&summary, first: &first)
      summary.append(.text("wheel "))
      summary.append(.number(Int(revolutions)))
      summary.append(.text(" revs"))
    }
    if let revolutions = cumulativeCrankRevolutions {
      ProfileSupport.separate(&summary, first: &first)
      summary.append(.text("crank "))
      summary.append(.number(Int(revolutions)))
      summary.append(.text(" revs"))
    }
    if first { summary.append(.text("no data")) }
  }

  public func diagnose(into diagnostics: inout [Diagnostic], context: ValueContext) {
    ProfileSupport.checkReserved(UInt64(flags), defined: 0x03, width: 2, what: "CSC Measurement flags", &diagnostics)
  }
}

/// RSC Measurement 0x2A53: `flags(1) speed(u16, 1/256 m/s) cadence(u8, /min) [stride(u16, cm)]
/// [distance(u32, 1/10 m)]`; flags bit 2 = running (else walking).
public struct RSCMeasurement: CharacteristicValue, Equatable {
  public var flags: UInt8
  /// 1/256 m/s.
  public var instantaneousSpeed: UInt16
  /// Steps per minute.
  public var instantaneousCadence: UInt8
  /// Centimetres.
  public var instantaneousStrideLength: UInt16?
  /// 1/10 m.
  public var totalDistance: UInt32?

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    flags = try reader.readUInt8()
    instantaneousSpeed = try reader.readUInt16LE()
    instantaneousCadence = try reader.readUInt8()
    instantaneousStrideLength = flags & 0x01 != 0 ? try reader.readUInt16LE() : nil
    totalDistance = flags & 0x02 != 0 ? try reader.readUInt32LE() : nil
  }

  public var isRunning: Bool { flags & 0x04 != 0 }
  public var speedMetresPerSecond: Double { Double(instantaneousSpeed) / 256 }

  public static let decoder = CharacteristicDecoder(uuid16: 0x2A53, key: "rsc_measurement", RSCMeasurement.self)
  /// The flags' bits, for `-v` (RSCS 1.0 §3.1.1.1).
  public static let flagLayout: Name = "01:Instantaneous stride length=absent|present;02:Total distance=absent|present;04:Status=walking|running;F8:Reserved"

  public func writeFields(to fields: inout FieldList, context: ValueContext) {
    fields.addVerbose("flags", "Flags", .unsigned(UInt64(flags), .bits(2, layout: Self.flagLayout)))
    fields.real("speed_mps", "Speed", speedMetresPerSecond, places: 2, unit: "m/s")
    fields.measure("cadence_per_min", "Cadence", instantaneousCadence, scale: 1, unit: "/min")
    if let instantaneousStrideLength {
      fields.measure("stride_length", "Stride length", instantaneousStrideLength, scale: 0.01, unit: "m")
    }
    if let totalDistance {
      fields.measure("total_distance", "Total distance", totalDistance, scale: 0.1, unit: "m")
    }
    fields.text("activity", "Activity", isRunning ? "running" : "walking")
  }

  public func summarize(into summary: inout SummaryLine, context: ValueContext) {
    summary.append(.real(speedMetresPerSecond, places: 2))
    summary.append(.text(" m/s, "))
    summary.append(.number(Int(instantaneousCadence)))
    summary.append(.text("/min, "))
    summary.append(.text(isRunning ? "running" : "walking"))
  }

  public func diagnose(into diagnostics: inout [Diagnostic], context: ValueContext) {
    ProfileSupport.checkReserved(UInt64(flags), defined: 0x07, width: 2, what: "RSC Measurement flags", &diagnostics)
  }
}

/// Cycling Power Measurement 0x2A63: `flags(u16) power(s16 W)` then the optional fields in
/// flag-bit order (see the field comments).
public struct CyclingPowerMeasurement: CharacteristicValue, Equatable {
  public var flags: UInt16
  /// Watts.
  public var instantaneousPower: Int16
  /// Bit 0: 1/2 %. Bit 1 says whether it refers to the left pedal (else unknown).
  public var pedalPowerBalance: UInt8?
  /// Bit 2: 1/32 N·m. Bit 3 says the source: 0 wheel, 1 crank.
  public var accumulatedTorque: UInt16?
  /// Bit 4: cumulative wheel revolutions and last wheel event time (1/2048 s).
  public var wheelRevolutions: UInt32?
  public var lastWheelEventTime: UInt16?
  /// Bit 5: cumulative crank revolutions and last crank event time (1/1024 s).
  public var crankRevolutions: UInt16?
  public var lastCrankEventTime: UInt16?
  /// Bit 6: newtons.
  public var maximumForce: Int16?
  public var minimumForce: Int16?
  /// Bit 7: 1/32 N·m.
  public var maximumTorque: Int16?
  public var minimumTorque: Int16?
  /// Bit 8: degrees, 12 bits each (max in bits 0–11, min in bits 12–23 of a u24).
  public var maximumAngle: UInt16?
  public var minimumAngle: UInt16?
  /// Bit 9 / 10: degrees.
  public var topDeadSpotAngle: UInt16?
  public var bottomDeadSpotAngle: UInt16?
  /// Bit 11: kJ.
  public var accumulatedEnergy: UInt16?

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    flags = try reader.readUInt16LE()
    instantaneousPower = Int16(bitPattern: try reader.readUInt16LE())
    if flags & 0x0001 != 0 { pedalPowerBalance = try reader.readUInt8() }
    if flags & 0x0004 != 0 { accumulatedTorque = try reader.readUInt16LE() }
    if flags & 0x0010 != 0 {
      wheelRevolutions = try reader.readUInt32LE()
      lastWheelEventTime = try reader.readUInt16LE()
    }
    if flags & 0x0020 != 0 {
      crankRevolutions = try reader.readUInt16LE()
      lastCrankEventTime = try reader.readUInt16LE()
    }
    if flags & 0x0040 != 0 {
      maximumForce = Int16(bitPattern: try reader.readUInt16LE())
      minimumForce = Int16(bitPattern: try reader.readUInt16LE())
    }
    if flags & 0x0080 != 0 {
      maximumTorque = Int16(bitPattern: try reader.readUInt16LE())
      minimumTorque = Int16(bitPattern: try reader.readUInt16LE())
    }
    if flags & 0x0100 != 0 {
      let angles = try reader.readUInt24LE()
      maximumAngle = UInt16(angles & 0xFFF)
      minimumAngle = UInt16(angles >> 12)
    }
    if flags & 0x0200 != 0 { topDeadSpotAngle = try reader.readUInt16LE() }
    if flags & 0x0400 != 0 { bottomDeadSpotAngle = try reader.readUInt16LE() }
    if flags & 0x0800 != 0 { accumulatedEnergy = try reader.readUInt16LE() }
  }

  public var pedalPowerBalanceReferenceIsLeft: Bool { flags & 0x0002 != 0 }
  public var accumulatedTorqueSourceIsCrank: Bool { flags & 0x0008 != 0 }
  public var offsetCompensation: Bool { flags & 0x1000 != 0 }

  public static let decoder = CharacteristicDecoder(uuid16: 0x2A63, key: "cycling_power_measurement", CyclingPowerMeasurement.self)

  /// Pedal power balance in percent (the raw value is in 1/2 %).
  public var pedalPowerBalancePercent: Double? { pedalPowerBalance.map { Double($0) / 2 } }

  public func writeFields(to fields: inout FieldList, context: ValueContext) {
    fields.addVerbose("flags", "Flags", .unsigned(UInt64(flags), .hex(4)))
    fields.measure("power_w", "Instantaneous power", instantaneousPower, scale: 1, unit: "W")
    if let percent = pedalPowerBalancePercent {
      fields.real("pedal_power_balance_percent", "Pedal power balance", percent, places: 1, unit: "%")
      fields.text("pedal_power_balance_reference", "Pedal power balance reference", pedalPowerBalanceReferenceIsLeft ? "left" : "unknown")
    }
    if let accumulatedTorque {
      fields.real("accumulated_torque_nm", "Accumulated torque", Double(accumulatedTorque) / 32, places: 2, unit: "N·m")
      fields.text("accumulated_torque_source", "Accumulated torque source", accumulatedTorqueSourceIsCrank ? "crank" : "wheel")
    }
    if let wheelRevolutions, let lastWheelEventTime {
      fields.uint("wheel_revolutions", "Cumulative wheel revolutions", wheelRevolutions)
      fields.measure("last_wheel_event_time", "Last wheel event time", lastWheelEventTime, scale: 1.0 / 2048, unit: "s")
    }
    if let crankRevolutions, let lastCrankEventTime {
      fields.uint("crank_revolutions", "Cumulative crank revolutions", crankRevolutions)
      fields.measure("last_crank_event_time", "Last crank event time", lastCrankEventTime, scale: 1.0 / 1024, unit: "s")
    }
    if let maximumForce, let minimumForce {
      fields.measure("max_force_n", "Maximum force", maximumForce, scale: 1, unit: "N")
      fields.measure("min_force_n", "Minimum force", minimumForce, scale: 1, unit: "N")
    }
    if let maximumTorque, let minimumTorque {
      fields.real("max_torque_nm", "Maximum torque", Double(maximumTorque) / 32, places: 2, unit: "N·m")
      fields.real("min_torque_nm", "Minimum torque", Double(minimumTorque) / 32, places: 2, unit: "N·m")
    }
    if let maximumAngle, let minimumAngle {
      fields.measure("max_angle_deg", "Maximum angle", maximumAngle, scale: 1, unit: "°")
      fields.measure("min_angle_deg", "Minimum angle", minimumAngle, scale: 1, unit: "°")
    }
    if let topDeadSpotAngle { fields.measure("top_dead_spot_angle_deg", "Top dead spot angle", topDeadSpotAngle, scale: 1, unit: "°") }
    if let bottomDeadSpotAngle {
      fields.measure("bottom_dead_spot_angle_deg", "Bottom dead spot angle", bottomDeadSpotAngle, scale: 1, unit: "°")
    }
    if let accumulatedEnergy {
      fields.measure("accumulated_energy_kj", "Accumulated energy", accumulatedEnergy, scale: 1, unit: "kJ")
    }
    fields.flag("offset_compensation", "Offset compensation indicator", offsetCompensation)
  }

  public func summarize(into summary: inout SummaryLine, context: ValueContext) {
    summary.append(.number(Int(instantaneousPower)))
    summary.append(.text(" W"))
    if let percent = pedalPowerBalancePercent {
      summary.append(.text(", balance "))
      summary.append(.real(percent, places: 1))
      summary.append(.text(pedalPowerBalanceReferenceIsLeft ? " % left" : " %"))
    }
    if let accumulatedEnergy {
      summary.append(.text(", "))
      summary.append(.number(Int(accumulatedEnergy)))
      summary.append(.text(" kJ"))
    }
  }

  public func diagnose(into diagnostics: inout [Diagnostic], context: ValueContext) {
    ProfileSupport.checkReserved(UInt64(flags), defined: 0x1FFF, width: 4, what: "Cycling Power Measurement flags", &diagnostics)
  }
}

/// Sensor Location 0x2A5D (CSC, RSC, Cycling Power): one byte.
public struct SensorLocation: CharacteristicValue, Equatable {
  public var location: UInt8

  public init(location: UInt8) { self.location = location }

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    location = try reader.readUInt8()
  }

  public var name: Name? { Self.name(location) }

  public static func name(_ location: UInt8) -> Name? {
    switch location {
    case 0: return "Other"
    case 1: return "Top of shoe"
    case 2: return "In shoe"
    case 3: return "Hip"
    case 4: return "Front Wheel"
    case 5: return "Left Crank"
    case 6: return "Right Crank"
    case 7: return "Left Pedal"
    case 8: return "Right Pedal"
    case 9: return "Front Hub"
    case 10: return "Rear Dropout"
    case 11: return "Chainstay"
    case 12: return "Rear Wheel"
    case 13: return "Rear Hub"
    case 14: return "Chest"
    case 15: return "Spider"
    case 16: return "Chain Ring"
    default: return nil
    }
  }

  public static let decoder = CharacteristicDecoder(uuid16: 0x2A5D, key: "sensor_location", SensorLocation.self)

  public func writeFields(to fields: inout FieldList, context: ValueContext) {
    ProfileSupport.writeLocation(location, name: name, to: &fields)
  }

  public func summarize(into summary: inout SummaryLine, context: ValueContext) {
    ProfileSupport.summarizeLocation(location, name: name, into: &summary)
  }

  public func diagnose(into diagnostics: inout [Diagnostic], context: ValueContext) {
    if name == nil { ProfileSupport.add(.profileReservedValue, &diagnostics, "sensor location \(location) is reserved") }
  }
}

/// CSC Feature 0x2A5C: u16, bit 0 wheel revolution data, bit 1 crank revolution data,
/// bit 2 multiple sensor locations.
public struct CSCFeature: CharacteristicValue, Equatable {
  public var rawValue: UInt16

  public init(rawValue: UInt16) { self.rawValue = rawValue }

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    rawValue = try reader.readUInt16LE()
  }

  public var wheelRevolutionData: Bool { rawValue & 0x0001 != 0 }
  public var crankRevolutionData: Bool { rawValue & 0x0002 != 0 }
  public var multipleSensorLocations: Bool { rawValue & 0x0004 != 0 }

  public static let decoder = CharacteristicDecoder(uuid16: 0x2A5C, key: "csc_feature", CSCFeature.self)

  public func writeFields(to fields: inout FieldList, context: ValueContext) {
    fields.addVerbose("value", "Value", .unsigned(UInt64(rawValue), .hex(4)))
    fields.flag("wheel_revolution_data", "Wheel revolution data", wheelRevolutionData)
    fields.flag("crank_revolution_data", "Crank revolution data", crankRevolutionData)
    fields.flag("multiple_sensor_locations", "Multiple sensor locations", multipleSensorLocations)
  }

  public func summarize(into summary: inout SummaryLine, context: ValueContext) {
    var first = true
    if wheelRevolutionData { ProfileSupport.separate(&summary, first: &first); summary.append(.text("wheel")) }
    if crankRevolutionData { ProfileSupport.separate(&summary, first: &first); summary.append(.text("crank")) }
    if multipleSensorLocations { ProfileSupport.separate(&summary, first: &first); summary.append(.text("multiple locations")) }
    if first { summary.append(.text("no features")) }
  }

  public func diagnose(into diagnostics: inout [Diagnostic], context: ValueContext) {
    ProfileSupport.checkReserved(UInt64(rawValue), defined: 0x0007, width: 4, what: "CSC Feature", &diagnostics, kind: .profileReservedFeatureBits)
  }
}

/// RSC Feature 0x2A54: u16, bit 0 stride length, bit 1 total distance, bit 2 walking or running
/// status, bit 3 calibration procedure, bit 4 multiple sensor locations.
public struct RSCFeature: CharacteristicValue, Equatable {
  public var rawValue: UInt16

  public init(rawValue: UInt16) { self.rawValue = rawValue }

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    rawValue = try reader.readUInt16LE()
  }

  public var strideLength: Bool { rawValue & 0x01 != 0 }
  public var totalDistance: Bool { rawValue & 0x02 != 0 }
  public var walkingOrRunningStatus: Bool { rawValue & 0x04 != 0 }
  public var calibrationProcedure: Bool { rawValue & 0x08 != 0 }
  public var multipleSensorLocations: Bool { rawValue & 0x10 != 0 }

  public static let decoder = CharacteristicDecoder(uuid16: 0x2A54, key: "rsc_feature", RSCFeature.self)

  public func writeFields(to fields: inout FieldList, context: ValueContext) {
    fields.addVerbose("value", "Value", .unsigned(UInt64(rawValue), .hex(4)))
    fields.flag("stride_length", "Instantaneous stride length measurement", strideLength)
    fields.flag("total_distance", "Total distance measurement", totalDistance)
    fields.flag("walking_or_running_status", "Walking or running status", walkingOrRunningStatus)
    fields.flag("calibration_procedure", "Calibration procedure", calibrationProcedure)
    fields.flag("multiple_sensor_locations", "Multiple sensor locations", multipleSensorLocations)
  }

  public func summarize(into summary: inout SummaryLine, context: ValueContext) {
    var first = true
    if strideLength { ProfileSupport.separate(&summary, first: &first); summary.append(.text("stride length")) }
    if totalDistance { ProfileSupport.separate(&summary, first: &first); summary.append(.text("total distance")) }
    if walkingOrRunningStatus { ProfileSupport.separate(&summary, first: &first); summary.append(.text("walking/running")) }
    if calibrationProcedure { ProfileSupport.separate(&summary, first: &first); summary.append(.text("calibration")) }
    if multipleSensorLocations { ProfileSupport.separate(&summary, first: &first); summary.append(.text("multiple locations")) }
    if first { summary.append(.text("no features")) }
  }

  public func diagnose(into diagnostics: inout [Diagnostic], context: ValueContext) {
    ProfileSupport.checkReserved(UInt64(rawValue), defined: 0x001F, width: 4, what: "RSC Feature", &diagnostics, kind: .profileReservedFeatureBits)
  }
}

extension ProfileRegistry {
  /// This file's decoders: adding one here registers it.
  static let fitness: [CharacteristicDecoder] = [
    CSCMeasurement.decoder,
    CSCFeature.decoder,
    RSCMeasurement.decoder,
    RSCFeature.decoder,
    CyclingPowerMeasurement.decoder,
    SensorLocation.decoder,
  ]
}
