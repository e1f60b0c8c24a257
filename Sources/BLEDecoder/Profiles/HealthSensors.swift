import BLECore

// Health Thermometer (0x1809) and Blood Pressure (0x1810): Temperature Measurement 0x2A1C,
// Temperature Type 0x2A1D, Intermediate Temperature 0x2A1E, Blood Pressure Measurement
// 0x2A35, Intermediate Cuff Pressure 0x2A36. Values are IEEE 11073-20601 FLOAT / SFLOAT.
//
// The corresponding specification is HTS 1.0, BLS 1.1 and the GATT Specification Supplement.

/// Temperature Measurement 0x2A1C (and Intermediate Temperature 0x2A1E):
/// `flags(1) temperature(FLOAT) [timestamp(Date Time, 7)] [type(1)]`.
/// Flags: bit 0 Fahrenheit (else Celsius), bit 1 timestamp, bit 2 temperature type; 3–7 reserved.
public struct TemperatureMeasurement: CharacteristicValue, Equatable {
  public var flags: UInt8
  public var temperature: MedicalFloat
  public var timestamp: DateTime?
  /// A Temperature Type value (where on the body).
  public var temperatureType: UInt8?

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    flags = try reader.readUInt8()
    temperature = try reader.readMedicalFloat()
    timestamp = flags & 0x02 != 0 ? try DateTime(parsing: &reader) : nil
    temperatureType = flags & 0x04 != 0 ? try reader.readUInt8() : nil
  }

  public var isFahrenheit: Bool { flags & 0x01 != 0 }
  public var unit: Name { isFahrenheit ? "°F" : "°C" }

  public static let decoder = CharacteristicDecoder(uuid16: 0x2A1C, key: "temperature_measurement", TemperatureMeasurement.self)
  /// The flags' bits, for `-v` (HTS 1.0 §3.1.1.1).
  public static let flagLayout: Name = "01:Temperature units=Celsius|Fahrenheit;02:Time stamp=absent|present;04:Temperature type=absent|present;F8:Reserved"
  public static let intermediateDecoder = CharacteristicDecoder(uuid16: 0x2A1E, key: "intermediate_temperature", TemperatureMeasurement.self)

  public func writeFields(to fields: inout FieldList, context: ValueContext) {
    fields.addVerbose("flags", "Flags", .unsigned(UInt64(flags), .bits(2, layout: Self.flagLayout)))
    temperature.add("temperature", "Temperature", unit: unit, to: &fields)
    fields.text("unit", "Unit", isFahrenheit ? "fahrenheit" : "celsius")
    if let timestamp { fields.add("timestamp", "Time stamp", .text(timestamp.description)) }
    if let temperatureType { fields.code("temperature_type", "Temperature type", temperatureType, width: 2, name: TemperatureType.name(temperatureType)) }
  }

  public func summarize(into summary: inout SummaryLine, context: ValueContext) {
    temperature.summarize(into: &summary)
    if temperature.isFinite {
      summary.append(.text(" "))
      summary.append(.text(unit))
    }
    if let temperatureType, let name = TemperatureType.name(temperatureType) {
      summary.append(.text(", "))
      summary.append(.text(name))
    }
    if let timestamp {
      summary.append(.text(", "))
      summary.append(.string(timestamp.description))
    }
  }

  public func diagnose(into diagnostics: inout [Diagnostic], context: ValueContext) {
    timestamp?.diagnose(into: &diagnostics, context: context)
    ProfileSupport.checkReserved(UInt64(flags), defined: 0x07, width: 2, what: "Temperature Measurement flags", &diagnostics)
    if let temperatureType, TemperatureType.name(temperatureType) == nil {
      ProfileSupport.add(.profileReservedValue, &diagnostics, "temperature type \(temperatureType) is reserved")
    }
  }
}

/// Temperature Type 0x2A1D: one byte, where the temperature was taken.
public struct TemperatureType: CharacteristicValue, Equatable {
  public var rawValue: UInt8

  public init(rawValue: UInt8) { self.rawValue = rawValue }

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    rawValue = try reader.readUInt8()
  }

  public var name: Name? { Self.name(rawValue) }

  public static func name(_ type: UInt8) -> Name? {
    switch type {
    case 1: return "Armpit"
    case 2: return "Body (general)"
    case 3: return "Ear (usually earlobe)"
    case 4: return "Finger"
    case 5: return "Gastro-intestinal Tract"
    case 6: return "Mouth"
    case 7: return "Rectum"
    case 8: return "Toe"
    case 9: return "Tympanum (ear drum)"
    default: return nil
    }
  }

  public static let decoder = CharacteristicDecoder(uuid16: 0x2A1D, key: "temperature_type", TemperatureType.self)

  public func writeFields(to fields: inout FieldList, context: ValueContext) {
    fields.code("type", "Type", rawValue, width: 2, name: name)
  }

  public func summarize(into summary: inout SummaryLine, context: ValueContext) {
    if let name {
      summary.append(.text(name))
    } else {
      summary.append(.text("reserved type "))
      summary.append(.number(Int(rawValue)))
    }
  }

  public func diagnose(into diagnostics: inout [Diagnostic], context: ValueContext) {
    if name == nil { ProfileSupport.add(.profileReservedValue, &diagnostics, "temperature type \(rawValue) is reserved") }
  }
}

/// Blood Pressure Measurement 0x2A35 (and Intermediate Cuff Pressure 0x2A36):
/// `flags(1) systolic diastolic MAP (SFLOAT each) [timestamp(7)] [pulse rate(SFLOAT)]
/// [user id(1)] [measurement status(u16)]`.
/// Flags: bit 0 kPa (else mmHg), bit 1 timestamp, bit 2 pulse rate, bit 3 user id, bit 4
/// measurement status; 5–7 reserved. In Intermediate Cuff Pressure, "systolic" carries the
/// current cuff pressure and the other two are NaN.
public struct BloodPressureMeasurement: CharacteristicValue, Equatable {
  public var flags: UInt8
  public var systolic: MedicalFloat
  public var diastolic: MedicalFloat
  public var meanArterialPressure: MedicalFloat
  public var timestamp: DateTime?
  /// Beats per minute.
  public var pulseRate: MedicalFloat?
  /// 0xFF = unknown user.
  public var userID: UInt8?
  /// Bit 0 body movement, 1 cuff too loose, 2 irregular pulse, 3–4 pulse rate range
  /// (0 within, 1 above upper limit, 2 below lower limit), 5 improper measurement position.
  public var measurementStatus: UInt16?

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    flags = try reader.readUInt8()
    systolic = try reader.readSFloat()
    diastolic = try reader.readSFloat()
    meanArterialPressure = try reader.readSFloat()
    timestamp = flags & 0x02 != 0 ? try DateTime(parsing: &reader) : nil
    pulseRate = flags & 0x04 != 0 ? try reader.readSFloat() : nil
    userID = flags & 0x08 != 0 ? try reader.readUInt8() : nil
    measurementStatus = flags & 0x10 != 0 ? try reader.readUInt16LE() : nil
  }

  public var isKilopascal: Bool { flags & 0x01 != 0 }
  public var unit: Name { isKilopascal ? "kPa" : "mmHg" }

  public static let decoder = CharacteristicDecoder(uuid16: 0x2A35, key: "blood_pressure_measurement", BloodPressureMeasurement.self)
  public static let intermediateCuffPressureDecoder = CharacteristicDecoder(uuid16: 0x2A36, key: "intermediate_cuff_pressure", BloodPressureMeasurement.self)
  /// The flags' bits, for `-v` (BLS 1.1 §3.1.1.1).
  public static let flagLayout: Name =
    "01:Blood pressure units=mmHg|kPa;02:Time stamp=absent|present;04:Pulse rate=absent|present;08:User ID=absent|present;10:Measurement status=absent|present;E0:Reserved"

  public func writeFields(to fields: inout FieldList, context: ValueContext) {
    fields.addVerbose("flags", "Flags", .unsigned(UInt64(flags), .bits(2, layout: Self.flagLayout)))
    systolic.add("systolic", "Systolic", unit: unit, to: &fields)
    diastolic.add("diastolic", "Diastolic", unit: unit, to: &fields)
    meanArterialPressure.add("mean_arterial_pressure", "Mean arterial pressure", unit: unit, to: &fields)
    fields.text("unit", "Unit", isKilopascal ? "kPa" : "mmHg")
    if let timestamp { fields.add("timestamp", "Time stamp", .text(timestamp.description)) }
    if let pulseRate { pulseRate.add("pulse_rate_bpm", "Pulse rate", unit: "bpm", to: &fields) }
    if let userID { fields.code("user_id", "User ID", userID, width: 2, name: userID == 0xFF ? "Unknown User" : nil) }
    if let status = measurementStatus {
      fields.beginObject("measurement_status", "Measurement status")
      fields.addVerbose("value", "Value", .unsigned(UInt64(status), .hex(4)))
      fields.flag("body_movement", "Body movement detected", status & 0x0001 != 0)
      fields.flag("cuff_too_loose", "Cuff too loose", status & 0x0002 != 0)
      fields.flag("irregular_pulse", "Irregular pulse detected", status & 0x0004 != 0)
      let range: Name =
        switch status >> 3 & 3 {
        case 0: "within_range"
        case 1: "above_upper_limit"
        case 2: "below_lower_limit"
        default: "reserved"
        }
      fields.text("pulse_rate_range", "Pulse rate range", range)
      fields.flag("improper_measurement_position", "Improper measurement position", status & 0x0020 != 0)
      fields.end()
    }
  }

  /// "120/80 mmHg, MAP 93, pulse 72 bpm"
  public func summarize(into summary: inout SummaryLine, context: ValueContext) {
    systolic.summarize(into: &summary)
    summary.append(.text("/"))
    diastolic.summarize(into: &summary)
    summary.append(.text(" "))
    summary.append(.text(unit))
    summary.append(.text(", MAP "))
    meanArterialPressure.summarize(into: &summary)
    if let pulseRate {
      summary.append(.text(", pulse "))
      pulseRate.summarize(into: &summary)
      summary.append(.text(" bpm"))
    }
  }

  public func diagnose(into diagnostics: inout [Diagnostic], context: ValueContext) {
    timestamp?.diagnose(into: &diagnostics, context: context)
    ProfileSupport.checkReserved(UInt64(flags), defined: 0x1F, width: 2, what: "Blood Pressure Measurement flags", &diagnostics)
    if let status = measurementStatus {
      ProfileSupport.checkReserved(UInt64(status), defined: 0x003F, width: 4, what: "Blood Pressure measurement status", &diagnostics)
    }
  }
}

extension ProfileRegistry {
  /// This file's decoders: adding one here registers it.
  static let health: [CharacteristicDecoder] = [
    TemperatureMeasurement.decoder,
    TemperatureType.decoder,
    TemperatureMeasurement.intermediateDecoder,
    BloodPressureMeasurement.decoder,
    BloodPressureMeasurement.intermediateCuffPressureDecoder,
  ]
}
