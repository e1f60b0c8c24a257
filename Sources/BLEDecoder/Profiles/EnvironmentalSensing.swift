import BLECore

// Environmental Sensing (0x181A): Temperature 0x2A6E, Humidity 0x2A6F.
//
// The corresponding specification is ESS 1.0 and the GATT Specification Supplement.

/// Temperature 0x2A6E: s16 in 0.01 °C; 0x8000 = value not known.
public struct Temperature: CharacteristicValue, Equatable {
  public var rawValue: Int16

  public init(rawValue: Int16) { self.rawValue = rawValue }

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    rawValue = Int16(bitPattern: try reader.readUInt16LE())
  }

  public var isKnown: Bool { rawValue != Int16.min }
  public var celsius: Double? { isKnown ? Double(rawValue) / 100 : nil }

  public static let decoder = CharacteristicDecoder(uuid16: 0x2A6E, key: "temperature", Temperature.self)

  public func writeFields(to fields: inout FieldList, context: ValueContext) {
    if let celsius {
      fields.real("celsius", "Temperature", celsius, places: 2, unit: "°C")
    } else {
      fields.add("celsius", "Temperature", .null)
    }
  }

  public func summarize(into summary: inout SummaryLine, context: ValueContext) {
    if let celsius {
      summary.append(.real(celsius, places: 2))
      summary.append(.text(" °C"))
    } else {
      summary.append(.text("unknown"))
    }
  }
}

/// Humidity 0x2A6F: u16 in 0.01 %; 0xFFFF = value not known.
public struct Humidity: CharacteristicValue, Equatable {
  public var rawValue: UInt16

  public init(rawValue: UInt16) { self.rawValue = rawValue }

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    rawValue = try reader.readUInt16LE()
  }

  public var isKnown: Bool { rawValue != 0xFFFF }
  public var percent: Double? { isKnown ? Double(rawValue) / 100 : nil }

  public static let decoder = CharacteristicDecoder(uuid16: 0x2A6F, key: "humidity", Humidity.self)

  public func writeFields(to fields: inout FieldList, context: ValueContext) {
    if let percent {
      fields.real("percent", "Humidity", percent, places: 2, unit: "%")
    } else {
      fields.add("percent", "Humidity", .null)
    }
  }

  public func summarize(into summary: inout SummaryLine, context: ValueContext) {
    if let percent {
      summary.append(.real(percent, places: 2))
      summary.append(.text(" %"))
    } else {
      summary.append(.text("unknown"))
    }
  }

  public func diagnose(into diagnostics: inout [Diagnostic], context: ValueContext) {
    if let percent, percent > 100 {
      ProfileSupport.add(.profileOutOfRange, &diagnostics, "humidity \(SummaryPart.formatReal(percent, places: 2)) % is above 100 %")
    }
  }
}

extension ProfileRegistry {
  /// This file's decoders: adding one here registers it.
  static let environmentalSensing: [CharacteristicDecoder] = [
    Temperature.decoder,
    Humidity.decoder,
  ]
}
