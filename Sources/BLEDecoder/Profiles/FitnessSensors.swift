import BLECore

// Cycling Speed and Cadence (0x1816), Running Speed and Cadence (0x1814) and Cycling Power
// (0x1818): CSC Measurement 0x2A5B, CSC Feature 0x2A5C, RSC Measurement 0x2A53, RSC Feature
// 0x2A54, Cycling Power Measurement 0x2A63, Sensor Location 0x2A5D.
//
// The corresponding specification is CSCS 1.0, RSCS 1.0, CPS 1.1 and the GATT Specification
// Supplement.

/// CSC Measurement 0x2A5B: `flags(1) [wheel_revs(u32) wheel_time(u16)] [crank_revs(u16) crank_time(u16)]`,
/// event times in 1/1024 s (they wrap every 64 s).
public struct CSCMeasurement: FieldWritable, Equatable {
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

  public static let decoder = ProfileSupport.decoder(CSCMeasurement.self, uuid16: 0x2A5B, key: "csc_measurement")

  func write(to frame: inout DissectedFrame, context: ValueContext) {
    frame.fields.addVerbose("flags", "Flags", .unsigned(UInt64(flags), .hex(2)))
    var first = true
    if let revolutions = cumulativeWheelRevolutions, let time = lastWheelEventTime {
      frame.fields.uint("wheel_revolutions", "Cumulative wheel revolutions", revolutions)
      frame.fields.measure("last_wheel_event_time", "Last wheel event time", time, scale: 1.0 / 1024, unit: "s")
      ProfileSupport.separate(&frame, first: &first)
      frame.summaryParts.append(.text("wheel "))
      frame.summaryParts.append(.number(Int(revolutions)))
      frame.summaryParts.append(.text(" revs"))
    }
    if let revolutions = cumulativeCrankRevolutions, let time = lastCrankEventTime {
      frame.fields.uint("crank_revolutions", "Cumulative crank revolutions", revolutions)
      frame.fields.measure("last_crank_event_time", "Last crank event time", time, scale: 1.0 / 1024, unit: "s")
      ProfileSupport.separate(&frame, first: &first)
      frame.summaryParts.append(.text("crank "))
      frame.summaryParts.append(.number(Int(revolutions)))
      frame.summaryParts.append(.text(" revs"))
    }
    if first { frame.summaryParts.append(.text("no data")) }
    ProfileSupport.checkReserved(UInt64(flags), defined: 0x03, width: 2, what: "CSC Measurement flags", &frame)
  }
}

/// RSC Measurement 0x2A53: `flags(1) speed(u16, 1/256 m/s) cadence(u8, /min) [stride(u16, cm)]
/// [distance(u32, 1/10 m)]`; flags bit 2 = running (else walking).
public struct RSCMeasurement: FieldWritable, Equatable {
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

  public static let decoder = ProfileSupport.decoder(RSCMeasurement.self, uuid16: 0x2A53, key: "rsc_measurement")

  func write(to frame: inout DissectedFrame, context: ValueContext) {
    frame.fields.addVerbose("flags", "Flags", .unsigned(UInt64(flags), .hex(2)))
    frame.fields.real("speed_mps", "Speed", speedMetresPerSecond, places: 2, unit: "m/s")
    frame.fields.measure("cadence_per_min", "Cadence", instantaneousCadence, scale: 1, unit: "/min")
    if let instantaneousStrideLength {
      frame.fields.measure("stride_length", "Stride length", instantaneousStrideLength, scale: 0.01, unit: "m")
    }
    if let totalDistance {
      frame.fields.measure("total_distance", "Total distance", totalDistance, scale: 0.1, unit: "m")
    }
    frame.fields.text("activity", "Activity", isRunning ? "running" : "walking")
    frame.summaryParts.append(.real(speedMetresPerSecond, places: 2))
    frame.summaryParts.append(.text(" m/s, "))
    frame.summaryParts.append(.number(Int(instantaneousCadence)))
    frame.summaryParts.append(.text("/min, "))
    frame.summaryParts.append(.text(isRunning ? "running" : "walking"))
    ProfileSupport.checkReserved(UInt64(flags), defined: 0x07, width: 2, what: "RSC Measurement flags", &frame)
  }
}

/// Cycling Power Measurement 0x2A63: `flags(u16) power(s16 W)` then the optional fields in
/// flag-bit order (see the field comments).
public struct CyclingPowerMeasurement: FieldWritable, Equatable {
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

  public static let decoder = ProfileSupport.decoder(CyclingPowerMeasurement.self, uuid16: 0x2A63, key: "cycling_power_measurement")

  func write(to frame: inout DissectedFrame, context: ValueContext) {
    frame.fields.addVerbose("flags", "Flags", .unsigned(UInt64(flags), .hex(4)))
    frame.fields.measure("power_w", "Instantaneous power", instantaneousPower, scale: 1, unit: "W")
    frame.summaryParts.append(.number(Int(instantaneousPower)))
    frame.summaryParts.append(.text(" W"))
    if let pedalPowerBalance {
      let percent = Double(pedalPowerBalance) / 2
      frame.fields.real("pedal_power_balance_percent", "Pedal power balance", percent, places: 1, unit: "%")
      frame.fields.text("pedal_power_balance_reference", "Pedal power balance reference", pedalPowerBalanceReferenceIsLeft ? "left" : "unknown")
      frame.summaryParts.append(.text(", balance "))
      frame.summaryParts.append(.real(percent, places: 1))
      frame.summaryParts.append(.text(pedalPowerBalanceReferenceIsLeft ? " % left" : " %"))
    }
    if let accumulatedTorque {
      frame.fields.real("accumulated_torque_nm", "Accumulated torque", Double(accumulatedTorque) / 32, places: 2, unit: "N·m")
      frame.fields.text("accumulated_torque_source", "Accumulated torque source", accumulatedTorqueSourceIsCrank ? "crank" : "wheel")
    }
    if let wheelRevolutions, let lastWheelEventTime {
      frame.fields.uint("wheel_revolutions", "Cumulative wheel revolutions", wheelRevolutions)
      frame.fields.measure("last_wheel_event_time", "Last wheel event time", lastWheelEventTime, scale: 1.0 / 2048, unit: "s")
    }
    if let crankRevolutions, let lastCrankEventTime {
      frame.fields.uint("crank_revolutions", "Cumulative crank revolutions", crankRevolutions)
      frame.fields.measure("last_crank_event_time", "Last crank event time", lastCrankEventTime, scale: 1.0 / 1024, unit: "s")
    }
    if let maximumForce, let minimumForce {
      frame.fields.measure("max_force_n", "Maximum force", maximumForce, scale: 1, unit: "N")
      frame.fields.measure("min_force_n", "Minimum force", minimumForce, scale: 1, unit: "N")
    }
    if let maximumTorque, let minimumTorque {
      frame.fields.real("max_torque_nm", "Maximum torque", Double(maximumTorque) / 32, places: 2, unit: "N·m")
      frame.fields.real("min_torque_nm", "Minimum torque", Double(minimumTorque) / 32, places: 2, unit: "N·m")
    }
    if let maximumAngle, let minimumAngle {
      frame.fields.measure("max_angle_deg", "Maximum angle", maximumAngle, scale: 1, unit: "°")
      frame.fields.measure("min_angle_deg", "Minimum angle", minimumAngle, scale: 1, unit: "°")
    }
    if let topDeadSpotAngle { frame.fields.measure("top_dead_spot_angle_deg", "Top dead spot angle", topDeadSpotAngle, scale: 1, unit: "°") }
    if let bottomDeadSpotAngle {
      frame.fields.measure("bottom_dead_spot_angle_deg", "Bottom dead spot angle", bottomDeadSpotAngle, scale: 1, unit: "°")
    }
    if let accumulatedEnergy {
      frame.fields.measure("accumulated_energy_kj", "Accumulated energy", accumulatedEnergy, scale: 1, unit: "kJ")
      frame.summaryParts.append(.text(", "))
      frame.summaryParts.append(.number(Int(accumulatedEnergy)))
      frame.summaryParts.append(.text(" kJ"))
    }
    frame.fields.flag("offset_compensation", "Offset compensation indicator", offsetCompensation)
    ProfileSupport.checkReserved(UInt64(flags), defined: 0x1FFF, width: 4, what: "Cycling Power Measurement flags", &frame)
  }
}

/// Sensor Location 0x2A5D (CSC, RSC, Cycling Power): one byte.
public struct SensorLocation: FieldWritable, Equatable {
  public var location: UInt8

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    location = try reader.readUInt8()
  }

  public var name: StaticString? { Self.name(location) }

  public static func name(_ location: UInt8) -> StaticString? {
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

  public static let decoder = ProfileSupport.decoder(SensorLocation.self, uuid16: 0x2A5D, key: "sensor_location")

  func write(to frame: inout DissectedFrame, context: ValueContext) {
    ProfileSupport.writeLocation(location, name: name, what: "sensor location", to: &frame)
  }
}

/// CSC Feature 0x2A5C: u16, bit 0 wheel revolution data, bit 1 crank revolution data,
/// bit 2 multiple sensor locations.
public struct CSCFeature: FieldWritable, Equatable {
  public var rawValue: UInt16

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    rawValue = try reader.readUInt16LE()
  }

  public var wheelRevolutionData: Bool { rawValue & 0x0001 != 0 }
  public var crankRevolutionData: Bool { rawValue & 0x0002 != 0 }
  public var multipleSensorLocations: Bool { rawValue & 0x0004 != 0 }

  public static let decoder = ProfileSupport.decoder(CSCFeature.self, uuid16: 0x2A5C, key: "csc_feature")

  func write(to frame: inout DissectedFrame, context: ValueContext) {
    frame.fields.addVerbose("value", "Value", .unsigned(UInt64(rawValue), .hex(4)))
    frame.fields.flag("wheel_revolution_data", "Wheel revolution data", wheelRevolutionData)
    frame.fields.flag("crank_revolution_data", "Crank revolution data", crankRevolutionData)
    frame.fields.flag("multiple_sensor_locations", "Multiple sensor locations", multipleSensorLocations)
    var first = true
    if wheelRevolutionData { ProfileSupport.separate(&frame, first: &first); frame.summaryParts.append(.text("wheel")) }
    if crankRevolutionData { ProfileSupport.separate(&frame, first: &first); frame.summaryParts.append(.text("crank")) }
    if multipleSensorLocations { ProfileSupport.separate(&frame, first: &first); frame.summaryParts.append(.text("multiple locations")) }
    if first { frame.summaryParts.append(.text("no features")) }
    ProfileSupport.checkReserved(UInt64(rawValue), defined: 0x0007, width: 4, what: "CSC Feature", &frame, severity: .note)
  }
}

/// RSC Feature 0x2A54: u16, bit 0 stride length, bit 1 total distance, bit 2 walking or running
/// status, bit 3 calibration procedure, bit 4 multiple sensor locations.
public struct RSCFeature: FieldWritable, Equatable {
  public var rawValue: UInt16

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    rawValue = try reader.readUInt16LE()
  }

  public static let decoder = ProfileSupport.decoder(RSCFeature.self, uuid16: 0x2A54, key: "rsc_feature")

  func write(to frame: inout DissectedFrame, context: ValueContext) {
    frame.fields.addVerbose("value", "Value", .unsigned(UInt64(rawValue), .hex(4)))
    frame.fields.flag("stride_length", "Instantaneous stride length measurement", rawValue & 0x01 != 0)
    frame.fields.flag("total_distance", "Total distance measurement", rawValue & 0x02 != 0)
    frame.fields.flag("walking_or_running_status", "Walking or running status", rawValue & 0x04 != 0)
    frame.fields.flag("calibration_procedure", "Calibration procedure", rawValue & 0x08 != 0)
    frame.fields.flag("multiple_sensor_locations", "Multiple sensor locations", rawValue & 0x10 != 0)
    var first = true
    if rawValue & 0x01 != 0 { ProfileSupport.separate(&frame, first: &first); frame.summaryParts.append(.text("stride length")) }
    if rawValue & 0x02 != 0 { ProfileSupport.separate(&frame, first: &first); frame.summaryParts.append(.text("total distance")) }
    if rawValue & 0x04 != 0 { ProfileSupport.separate(&frame, first: &first); frame.summaryParts.append(.text("walking/running")) }
    if rawValue & 0x08 != 0 { ProfileSupport.separate(&frame, first: &first); frame.summaryParts.append(.text("calibration")) }
    if rawValue & 0x10 != 0 { ProfileSupport.separate(&frame, first: &first); frame.summaryParts.append(.text("multiple locations")) }
    if first { frame.summaryParts.append(.text("no features")) }
    ProfileSupport.checkReserved(UInt64(rawValue), defined: 0x001F, width: 4, what: "RSC Feature", &frame, severity: .note)
  }
}
