import BLECore

// Characteristic descriptors: Extended Properties 0x2900, User Description 0x2901,
// Client Characteristic Configuration 0x2902, Server Characteristic Configuration 0x2903,
// Presentation Format 0x2904.
//
// The corresponding specification is Core Vol 3, Part G §3.3.3.

/// Client Characteristic Configuration 0x2902: u16, bit 0 notifications, bit 1 indications.
public struct ClientCharacteristicConfiguration: CharacteristicValue, Equatable {
  public var rawValue: UInt16

  public init(rawValue: UInt16) { self.rawValue = rawValue }

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    rawValue = try reader.readUInt16LE()
  }

  public var notifications: Bool { rawValue & 0x0001 != 0 }
  public var indications: Bool { rawValue & 0x0002 != 0 }

  public static let decoder = CharacteristicDecoder(uuid16: 0x2902, key: "client_characteristic_configuration", ClientCharacteristicConfiguration.self)

  public func writeFields(to fields: inout FieldList, context: ValueContext) {
    fields.addVerbose("configuration", "Value", .unsigned(UInt64(rawValue), .hex(4)))
    fields.flag("notifications", "Notifications", notifications)
    fields.flag("indications", "Indications", indications)
  }

  public func summarize(into summary: inout SummaryLine, context: ValueContext) {
    switch (notifications, indications) {
    case (true, true): summary.append(.text("notifications and indications enabled"))
    case (true, false): summary.append(.text("notifications enabled"))
    case (false, true): summary.append(.text("indications enabled"))
    case (false, false): summary.append(.text("notifications and indications disabled"))
    }
    // The characteristic this descriptor configures, when the GATT database knows it.
    if let name = context.characteristicName ?? context.characteristic?.uuid16.flatMap(AssignedNumbers.characteristicName16) {
      summary.append(.text(" on "))
      summary.append(.text(name))
    }
  }

  public func diagnose(into diagnostics: inout [Diagnostic], context: ValueContext) {
    ProfileSupport.checkReserved(UInt64(rawValue), defined: 0x0003, width: 4, what: "Client Characteristic Configuration", &diagnostics)
  }
}

/// Server Characteristic Configuration 0x2903: u16, bit 0 broadcasts.
public struct ServerCharacteristicConfiguration: CharacteristicValue, Equatable {
  public var rawValue: UInt16
  public var broadcasts: Bool { rawValue & 0x0001 != 0 }

  public init(rawValue: UInt16) { self.rawValue = rawValue }

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    rawValue = try reader.readUInt16LE()
  }

  public static let decoder = CharacteristicDecoder(uuid16: 0x2903, key: "server_characteristic_configuration", ServerCharacteristicConfiguration.self)

  public func writeFields(to fields: inout FieldList, context: ValueContext) {
    fields.addVerbose("configuration", "Value", .unsigned(UInt64(rawValue), .hex(4)))
    fields.flag("broadcasts", "Broadcasts", broadcasts)
  }

  public func summarize(into summary: inout SummaryLine, context: ValueContext) {
    summary.append(.text(broadcasts ? "broadcasts enabled" : "broadcasts disabled"))
  }

  public func diagnose(into diagnostics: inout [Diagnostic], context: ValueContext) {
    ProfileSupport.checkReserved(UInt64(rawValue), defined: 0x0001, width: 4, what: "Server Characteristic Configuration", &diagnostics)
  }
}

/// Characteristic Extended Properties 0x2900: u16, bit 0 reliable write, bit 1 writable auxiliaries.
public struct CharacteristicExtendedProperties: CharacteristicValue, Equatable {
  public var rawValue: UInt16
  public var reliableWrite: Bool { rawValue & 0x0001 != 0 }
  public var writableAuxiliaries: Bool { rawValue & 0x0002 != 0 }

  public init(rawValue: UInt16) { self.rawValue = rawValue }

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    rawValue = try reader.readUInt16LE()
  }

  public static let decoder = CharacteristicDecoder(uuid16: 0x2900, key: "characteristic_extended_properties", CharacteristicExtendedProperties.self)

  public func writeFields(to fields: inout FieldList, context: ValueContext) {
    fields.addVerbose("properties", "Value", .unsigned(UInt64(rawValue), .hex(4)))
    fields.flag("reliable_write", "Reliable write", reliableWrite)
    fields.flag("writable_auxiliaries", "Writable auxiliaries", writableAuxiliaries)
  }

  public func summarize(into summary: inout SummaryLine, context: ValueContext) {
    switch (reliableWrite, writableAuxiliaries) {
    case (true, true): summary.append(.text("reliable write, writable auxiliaries"))
    case (true, false): summary.append(.text("reliable write"))
    case (false, true): summary.append(.text("writable auxiliaries"))
    case (false, false): summary.append(.text("no extended properties"))
    }
  }

  public func diagnose(into diagnostics: inout [Diagnostic], context: ValueContext) {
    ProfileSupport.checkReserved(UInt64(rawValue), defined: 0x0003, width: 4, what: "Characteristic Extended Properties", &diagnostics)
  }
}

/// Characteristic User Description 0x2901: UTF-8, field `value`.
public struct CharacteristicUserDescription: TextCharacteristic, Equatable {
  public static let label: Name = "Description"
  public var string: UTF8Text
  public init(string: UTF8Text) { self.string = string }
  public static let decoder = CharacteristicDecoder(
    uuid16: 0x2901, key: "characteristic_user_description", CharacteristicUserDescription.self, summarySaysItAll: true)
}

/// Characteristic Presentation Format 0x2904:
/// `format(1) exponent(s8) unit(uuid16) namespace(1) description(2)`, 7 bytes.
public struct CharacteristicPresentationFormat: CharacteristicValue, Equatable {
  public var format: UInt8
  public var exponent: Int8
  /// A 16-bit unit UUID (0x27xx).
  public var unit: UInt16
  /// 0x01 = Bluetooth SIG.
  public var namespace: UInt8
  public var description: UInt16

  public init(format: UInt8, exponent: Int8, unit: UInt16, namespace: UInt8, description: UInt16) {
    self.format = format
    self.exponent = exponent
    self.unit = unit
    self.namespace = namespace
    self.description = description
  }

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    format = try reader.readUInt8()
    exponent = try reader.readInt8()
    unit = try reader.readUInt16LE()
    namespace = try reader.readUInt8()
    description = try reader.readUInt16LE()
  }

  public var formatName: Name? { Self.formatName(format) }
  public var unitName: Name? { Self.unitName(unit) }
  public var descriptionName: Name? { namespace == 1 ? Self.descriptionName(description) : nil }

  public static let decoder = CharacteristicDecoder(uuid16: 0x2904, key: "characteristic_presentation_format", CharacteristicPresentationFormat.self)

  public func writeFields(to fields: inout FieldList, context: ValueContext) {
    fields.code("format", "Format", format, width: 2, name: formatName)
    fields.int("exponent", "Exponent", exponent)
    fields.add("unit", "Unit", .uuid(BluetoothUUID(uuid16: unit), name: unitName))
    fields.code("namespace", "Namespace", namespace, width: 2, name: namespace == 1 ? "Bluetooth SIG" : nil)
    fields.code("description", "Description", description, width: 4, name: descriptionName)
  }

  public func summarize(into summary: inout SummaryLine, context: ValueContext) {
    if let formatName {
      summary.append(.text(formatName))
    } else {
      summary.append(.text("format "))
      summary.append(.hex(UInt64(format), width: 2))
    }
    if exponent != 0 {
      summary.append(.text(" ×10^"))
      summary.append(.number(Int(exponent)))
    }
    summary.append(.text(", "))
    if let unitName {
      summary.append(.text(unitName))
    } else {
      summary.append(.text("unit "))
      summary.append(.hex(UInt64(unit), width: 4))
    }
    if let descriptionName, description != 0 {
      summary.append(.text(", "))
      summary.append(.text(descriptionName))
    }
  }

  public func diagnose(into diagnostics: inout [Diagnostic], context: ValueContext) {
    if formatName == nil { ProfileSupport.add(.profileReservedValue, &diagnostics, "presentation format \(Hex.prefixed(UInt64(format), width: 2)) is reserved") }
  }

  /// Core Vol 3 Part G §3.3.3.5.2 / Assigned Numbers §2.4.1 format types.
  public static func formatName(_ format: UInt8) -> Name? {
    switch format {
    case 0x01: return "boolean"
    case 0x02: return "2bit"
    case 0x03: return "nibble"
    case 0x04: return "uint8"
    case 0x05: return "uint12"
    case 0x06: return "uint16"
    case 0x07: return "uint24"
    case 0x08: return "uint32"
    case 0x09: return "uint48"
    case 0x0A: return "uint64"
    case 0x0B: return "uint128"
    case 0x0C: return "sint8"
    case 0x0D: return "sint12"
    case 0x0E: return "sint16"
    case 0x0F: return "sint24"
    case 0x10: return "sint32"
    case 0x11: return "sint48"
    case 0x12: return "sint64"
    case 0x13: return "sint128"
    case 0x14: return "float32"
    case 0x15: return "float64"
    case 0x16: return "medfloat16"
    case 0x17: return "medfloat32"
    case 0x18: return "uint16 [2]"
    case 0x19: return "utf8s"
    case 0x1A: return "utf16s"
    case 0x1B: return "struct"
    case 0x1C: return "medASN1"
    default: return nil
    }
  }

  /// Bluetooth SIG namespace descriptions (Assigned Numbers §2.4.2.1).
  public static func descriptionName(_ description: UInt16) -> Name? {
    switch description {
    case 0x0000: return "unknown"
    case 0x0001: return "first"
    case 0x0002: return "second"
    case 0x0003: return "third"
    case 0x0004: return "fourth"
    case 0x0005: return "fifth"
    case 0x0006: return "sixth"
    case 0x0007: return "seventh"
    case 0x0008: return "eighth"
    case 0x0009: return "ninth"
    case 0x000A: return "tenth"
    case 0x0100: return "front"
    case 0x0101: return "back"
    case 0x0102: return "top"
    case 0x0103: return "bottom"
    case 0x0104: return "upper"
    case 0x0105: return "lower"
    case 0x0106: return "main"
    case 0x0107: return "backup"
    case 0x0108: return "auxiliary"
    case 0x0109: return "supplementary"
    case 0x010A: return "flash"
    case 0x010B: return "inside"
    case 0x010C: return "outside"
    case 0x010D: return "left"
    case 0x010E: return "right"
    case 0x010F: return "internal"
    case 0x0110: return "external"
    default: return nil
    }
  }

  /// Unit UUIDs (Assigned Numbers §3.5, 0x2700–0x27FF), the common ones.
  public static func unitName(_ unit: UInt16) -> Name? {
    switch unit {
    case 0x2700: return "unitless"
    case 0x2701: return "metre"
    case 0x2702: return "kilogram"
    case 0x2703: return "second"
    case 0x2704: return "ampere"
    case 0x2705: return "kelvin"
    case 0x2706: return "mole"
    case 0x2707: return "candela"
    case 0x2710: return "square metres"
    case 0x2711: return "cubic metres"
    case 0x2712: return "metres per second"
    case 0x2713: return "metres per second squared"
    case 0x2720: return "radian"
    case 0x2721: return "steradian"
    case 0x2722: return "hertz"
    case 0x2723: return "newton"
    case 0x2724: return "pascal"
    case 0x2725: return "joule"
    case 0x2726: return "watt"
    case 0x2727: return "coulomb"
    case 0x2728: return "volt"
    case 0x2729: return "farad"
    case 0x272A: return "ohm"
    case 0x272B: return "siemens"
    case 0x272C: return "weber"
    case 0x272D: return "tesla"
    case 0x272E: return "henry"
    case 0x272F: return "degree Celsius"
    case 0x2730: return "lumen"
    case 0x2731: return "lux"
    case 0x2732: return "becquerel"
    case 0x2733: return "gray"
    case 0x2734: return "sievert"
    case 0x2735: return "katal"
    case 0x2741: return "newton metre"
    case 0x2743: return "radian per second"
    case 0x2760: return "minute"
    case 0x2761: return "hour"
    case 0x2762: return "day"
    case 0x2763: return "degree"
    case 0x2767: return "litre"
    case 0x2780: return "bar"
    case 0x2781: return "millimetre of mercury"
    case 0x27A2: return "inch"
    case 0x27A3: return "foot"
    case 0x27A4: return "mile"
    case 0x27A6: return "kilometre per hour"
    case 0x27A7: return "mile per hour"
    case 0x27A8: return "revolution per minute"
    case 0x27A9: return "gram calorie"
    case 0x27AA: return "kilogram calorie"
    case 0x27AB: return "kilowatt hour"
    case 0x27AC: return "degree Fahrenheit"
    case 0x27AD: return "percentage"
    case 0x27AE: return "per mille"
    case 0x27AF: return "beats per minute"
    case 0x27B0: return "ampere hours"
    case 0x27B1: return "milligram per decilitre"
    case 0x27B2: return "millimole per litre"
    case 0x27B3: return "year"
    case 0x27B4: return "month"
    case 0x27B8: return "pound"
    case 0x27BA: return "step per minute"
    case 0x27C3: return "decibel"
    case 0x27C4: return "parts per million"
    case 0x27C5: return "parts per billion"
    default: return nil
    }
  }
}

extension ProfileRegistry {
  /// This file's decoders: adding one here registers it.
  static let descriptors: [CharacteristicDecoder] = [
    CharacteristicExtendedProperties.decoder,
    CharacteristicUserDescription.decoder,
    ClientCharacteristicConfiguration.decoder,
    ServerCharacteristicConfiguration.decoder,
    CharacteristicPresentationFormat.decoder,
  ]
}
