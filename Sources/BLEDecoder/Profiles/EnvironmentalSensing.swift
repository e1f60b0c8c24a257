import BLECore

// Environmental Sensing (0x181A): Temperature 0x2A6E, Humidity 0x2A6F.
//
// The corresponding specification is ESS 1.0 and the GATT Specification Supplement.

/// Temperature 0x2A6E: s16 in 0.01 °C; 0x8000 = value not known.
public struct Temperature: FieldWritable, Equatable {
  public var rawValue: Int16

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    rawValue = Int16(bitPattern: try reader.readUInt16LE())
  }

  public var isKnown: Bool { rawValue != Int16.min }
  public var celsius: Double? { isKnown ? Double(rawValue) / 100 : nil }

  public static let decoder = ProfileSupport.decoder(Temperature.self, uuid16: 0x2A6E, key: "temperature")

  func write(to frame: inout DissectedFrame, context: ValueContext) {
    if let celsius {
      frame.fields.real("celsius", "Temperature", celsius, places: 2, unit: "°C")
      frame.summaryParts.append(.real(celsius, places: 2))
      frame.summaryParts.append(.text(" °C"))
    } else {
      frame.fields.add("celsius", "Temperature", .null)
      frame.summaryParts.append(.text("unknown"))
    }
  }
}

/// Humidity 0x2A6F: u16 in 0.01 %; 0xFFFF = value not known.
public struct Humidity: FieldWritable, Equatable {
  public var rawValue: UInt16

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    rawValue = try reader.readUInt16LE()
  }

  public var isKnown: Bool { rawValue != 0xFFFF }
  public var percent: Double? { isKnown ? Double(rawValue) / 100 : nil }

  public static let decoder = ProfileSupport.decoder(Humidity.self, uuid16: 0x2A6F, key: "humidity")

  func write(to frame: inout DissectedFrame, context: ValueContext) {
    if let percent {
      frame.fields.real("percent", "Humidity", percent, places: 2, unit: "%")
      frame.summaryParts.append(.real(percent, places: 2))
      frame.summaryParts.append(.text(" %"))
      if percent > 100 { ProfileSupport.warn(&frame, "humidity \(SummaryPart.formatReal(percent, places: 2)) % is above 100 %") }
    } else {
      frame.fields.add("percent", "Humidity", .null)
      frame.summaryParts.append(.text("unknown"))
    }
  }
}
