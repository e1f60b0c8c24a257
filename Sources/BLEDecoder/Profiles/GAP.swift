import BLECore

// GAP service 0x1800 and GATT service 0x1801 characteristics.
//
// The corresponding specification is Core Vol 3, Part C §12 (GAP characteristics) and
// Part G §7 (GATT service), and the GATT Specification Supplement.

/// Device Name 0x2A00: UTF-8, field `value`.
public struct DeviceName: TextCharacteristic, Equatable {
  public static let label: Name = "Device name"
  public var string: UTF8Text
  public init(string: UTF8Text) { self.string = string }
  public static let decoder = CharacteristicDecoder(uuid16: 0x2A00, key: "device_name", DeviceName.self, summarySaysItAll: true)
}

/// Appearance 0x2A01: u16, category in bits 15–6, subcategory in bits 5–0.
public struct Appearance: CharacteristicValue, Equatable {
  public var rawValue: UInt16

  public init(rawValue: UInt16) { self.rawValue = rawValue }

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    rawValue = try reader.readUInt16LE()
  }

  public var category: UInt16 { rawValue >> 6 }
  public var subcategory: UInt8 { UInt8(rawValue & 0x3F) }
  public var name: Name? { AssignedNumbers.appearanceName(rawValue) }

  public static let decoder = CharacteristicDecoder(uuid16: 0x2A01, key: "gap_appearance", Appearance.self)

  public func writeFields(to fields: inout FieldList, context: ValueContext) {
    fields.code("appearance", "Appearance", rawValue, width: 4, name: name)
    fields.addVerbose("category", "Category", .unsigned(UInt64(category), .decimal))
    fields.addVerbose("subcategory", "Subcategory", .unsigned(UInt64(subcategory), .decimal))
  }

  public func summarize(into summary: inout SummaryLine, context: ValueContext) {
    if let name {
      summary.append(.text(name))
    } else {
      summary.append(.text("appearance "))
      summary.append(.hex(UInt64(rawValue), width: 4))
    }
  }
}

/// Peripheral Preferred Connection Parameters 0x2A04: four u16, exactly 8 bytes.
/// Intervals in 1.25 ms (6–3200), latency in connection events (0–499), supervision timeout in
/// 10 ms (10–3200); 0xFFFF means no preference (intervals, timeout).
public struct PeripheralPreferredConnectionParameters: CharacteristicValue, Equatable {
  public static let noPreference: UInt16 = 0xFFFF

  public var minimumInterval: UInt16
  public var maximumInterval: UInt16
  public var peripheralLatency: UInt16
  public var supervisionTimeout: UInt16

  public init(minimumInterval: UInt16, maximumInterval: UInt16, peripheralLatency: UInt16, supervisionTimeout: UInt16) {
    self.minimumInterval = minimumInterval
    self.maximumInterval = maximumInterval
    self.peripheralLatency = peripheralLatency
    self.supervisionTimeout = supervisionTimeout
  }

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    minimumInterval = try reader.readUInt16LE()
    maximumInterval = try reader.readUInt16LE()
    peripheralLatency = try reader.readUInt16LE()
    supervisionTimeout = try reader.readUInt16LE()
  }

  /// In milliseconds; nil for no preference.
  public var minimumIntervalMilliseconds: Double? { minimumInterval == Self.noPreference ? nil : Double(minimumInterval) * 1.25 }
  public var maximumIntervalMilliseconds: Double? { maximumInterval == Self.noPreference ? nil : Double(maximumInterval) * 1.25 }
  public var supervisionTimeoutMilliseconds: Double? { supervisionTimeout == Self.noPreference ? nil : Double(supervisionTimeout) * 10 }

  /// Why the values break the specification's ranges (empty when they do not).
  public var problems: [String] {
    var found: [String] = []
    func interval(_ value: UInt16, _ what: String) {
      if value != Self.noPreference && (value < 6 || value > 3200) {
        found.append("\(what) connection interval \(value) (\(SummaryPart.formatReal(Double(value) * 1.25, places: 2)) ms) is outside 6–3200 (7.5 ms–4 s)")
      }
    }
    interval(minimumInterval, "minimum")
    interval(maximumInterval, "maximum")
    if minimumInterval != Self.noPreference, maximumInterval != Self.noPreference, minimumInterval > maximumInterval {
      found.append("minimum connection interval \(minimumInterval) is above the maximum \(maximumInterval)")
    }
    if peripheralLatency > 499 { found.append("peripheral latency \(peripheralLatency) is above 499") }
    if supervisionTimeout != Self.noPreference {
      if supervisionTimeout < 10 || supervisionTimeout > 3200 {
        found.append("supervision timeout \(supervisionTimeout) (\(Int(supervisionTimeout) * 10) ms) is outside 10–3200 (100 ms–32 s)")
      } else if maximumInterval != Self.noPreference, peripheralLatency <= 499 {
        // Core Vol 6 Part B §4.5.2: timeout > (1 + latency) × interval × 2.
        let needed = (1 + Double(peripheralLatency)) * Double(maximumInterval) * 1.25 * 2
        if Double(supervisionTimeout) * 10 <= needed {
          found.append("supervision timeout \(Int(supervisionTimeout) * 10) ms is not above (1 + latency) × maximum interval × 2 = \(SummaryPart.formatReal(needed, places: 2)) ms")
        }
      }
    }
    return found
  }

  public static let decoder = CharacteristicDecoder(
    uuid16: 0x2A04, key: "peripheral_preferred_connection_parameters", PeripheralPreferredConnectionParameters.self)

  public func writeFields(to fields: inout FieldList, context: ValueContext) {
    func interval(_ key: Name, _ label: Name, _ value: UInt16) {
      if value == Self.noPreference {
        fields.add(key, label, .null)
      } else {
        fields.measure(key, label, value, scale: 1.25, unit: "ms")
      }
    }
    interval("interval_min", "Minimum connection interval", minimumInterval)
    interval("interval_max", "Maximum connection interval", maximumInterval)
    fields.uint("latency", "Peripheral latency", peripheralLatency)
    if supervisionTimeout == Self.noPreference {
      fields.add("supervision_timeout", "Supervision timeout", .null)
    } else {
      fields.measure("supervision_timeout", "Supervision timeout", supervisionTimeout, scale: 10, unit: "ms")
    }
  }

  public func summarize(into summary: inout SummaryLine, context: ValueContext) {
    summary.append(.text("interval "))
    if let low = minimumIntervalMilliseconds, let high = maximumIntervalMilliseconds {
      summary.append(.real(low, places: 2))
      if high != low {
        summary.append(.text("–"))
        summary.append(.real(high, places: 2))
      }
      summary.append(.text(" ms"))
    } else if let one = minimumIntervalMilliseconds ?? maximumIntervalMilliseconds {
      summary.append(.text(minimumIntervalMilliseconds == nil ? "≤ " : "≥ "))
      summary.append(.real(one, places: 2))
      summary.append(.text(" ms"))
    } else {
      summary.append(.text("any"))
    }
    summary.append(.text(", latency "))
    summary.append(.number(Int(peripheralLatency)))
    summary.append(.text(", timeout "))
    if let timeout = supervisionTimeoutMilliseconds {
      summary.append(.real(timeout, places: 0))
      summary.append(.text(" ms"))
    } else {
      summary.append(.text("any"))
    }
  }

  public func diagnose(into diagnostics: inout [Diagnostic], context: ValueContext) {
    for problem in problems { ProfileSupport.add(.profileInvalidValue, &diagnostics, "preferred connection parameters: " + problem) }
  }
}

/// Central Address Resolution 0x2AA6: u8, 0 not supported, 1 supported.
public struct CentralAddressResolution: CharacteristicValue, Equatable {
  public var rawValue: UInt8
  public var isSupported: Bool { rawValue == 1 }

  public init(rawValue: UInt8) { self.rawValue = rawValue }

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    rawValue = try reader.readUInt8()
  }

  public static let decoder = CharacteristicDecoder(uuid16: 0x2AA6, key: "central_address_resolution", CentralAddressResolution.self)

  public func writeFields(to fields: inout FieldList, context: ValueContext) {
    fields.flag("supported", "Supported", isSupported)
  }

  public func summarize(into summary: inout SummaryLine, context: ValueContext) {
    summary.append(.text(isSupported ? "supported" : "not supported"))
  }

  public func diagnose(into diagnostics: inout [Diagnostic], context: ValueContext) {
    if rawValue > 1 { ProfileSupport.add(.profileReservedValue, &diagnostics, "Central Address Resolution value \(rawValue) is reserved") }
  }
}

/// Resolvable Private Address Only 0x2AC9: u8, 0 = only resolvable private addresses are used.
public struct ResolvablePrivateAddressOnly: CharacteristicValue, Equatable {
  public var rawValue: UInt8
  /// 0 is the only defined value; others are reserved.
  public var onlyResolvablePrivateAddresses: Bool { rawValue == 0 }

  public init(rawValue: UInt8) { self.rawValue = rawValue }

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    rawValue = try reader.readUInt8()
  }

  public static let decoder = CharacteristicDecoder(uuid16: 0x2AC9, key: "resolvable_private_address_only", ResolvablePrivateAddressOnly.self)

  public func writeFields(to fields: inout FieldList, context: ValueContext) {
    fields.uint("value", "Value", rawValue)
  }

  public func summarize(into summary: inout SummaryLine, context: ValueContext) {
    if onlyResolvablePrivateAddresses {
      summary.append(.text("only resolvable private addresses"))
    } else {
      summary.append(.text("reserved value "))
      summary.append(.number(Int(rawValue)))
    }
  }

  public func diagnose(into diagnostics: inout [Diagnostic], context: ValueContext) {
    if !onlyResolvablePrivateAddresses { ProfileSupport.add(.profileReservedValue, &diagnostics, "Resolvable Private Address Only value \(rawValue) is reserved") }
  }
}

/// Service Changed 0x2A05: the affected attribute handle range, `start(2) end(2)`.
public struct ServiceChanged: CharacteristicValue, Equatable {
  public var startHandle: UInt16
  public var endHandle: UInt16

  public init(startHandle: UInt16, endHandle: UInt16) {
    self.startHandle = startHandle
    self.endHandle = endHandle
  }

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    startHandle = try reader.readUInt16LE()
    endHandle = try reader.readUInt16LE()
  }

  public static let decoder = CharacteristicDecoder(uuid16: 0x2A05, key: "service_changed", ServiceChanged.self)

  public func writeFields(to fields: inout FieldList, context: ValueContext) {
    fields.hex("start_handle", "Start handle", startHandle, width: 4)
    fields.hex("end_handle", "End handle", endHandle, width: 4)
  }

  public func summarize(into summary: inout SummaryLine, context: ValueContext) {
    summary.append(.text("handles "))
    summary.append(.hex(UInt64(startHandle), width: 4))
    summary.append(.text("–"))
    summary.append(.hex(UInt64(endHandle), width: 4))
  }

  public func diagnose(into diagnostics: inout [Diagnostic], context: ValueContext) {
    if startHandle == 0 { ProfileSupport.add(.profileInvalidValue, &diagnostics, "Service Changed start handle 0x0000 is invalid") }
    if startHandle > endHandle { ProfileSupport.add(.profileInvalidValue, &diagnostics, "Service Changed start handle is above the end handle") }
  }
}

/// Client Supported Features 0x2B29: a bit field of one or more bytes. Byte 0: bit 0 Robust
/// Caching, bit 1 Enhanced ATT Bearer, bit 2 Multiple Handle Value Notifications.
public struct ClientSupportedFeatures: CharacteristicValue, Equatable {
  /// The whole bit field, at least one byte (later bytes are reserved for future features).
  public var bytes: [UInt8]

  public init(bytes: [UInt8]) { self.bytes = bytes }

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    try reader.require(1)
    bytes = Array(reader.readRemaining())
  }

  public var robustCaching: Bool { bytes.first.map { $0 & 0x01 != 0 } ?? false }
  public var enhancedATTBearer: Bool { bytes.first.map { $0 & 0x02 != 0 } ?? false }
  public var multipleHandleValueNotifications: Bool { bytes.first.map { $0 & 0x04 != 0 } ?? false }

  public static let decoder = CharacteristicDecoder(uuid16: 0x2B29, key: "client_supported_features", ClientSupportedFeatures.self)

  public func writeFields(to fields: inout FieldList, context: ValueContext) {
    fields.addVerbose("value", "Value", .bytes(bytes[...]))
    fields.flag("robust_caching", "Robust Caching", robustCaching)
    fields.flag("enhanced_att_bearer", "Enhanced ATT bearer", enhancedATTBearer)
    fields.flag("multiple_handle_value_notifications", "Multiple Handle Value Notifications", multipleHandleValueNotifications)
  }

  public func summarize(into summary: inout SummaryLine, context: ValueContext) {
    var first = true
    if robustCaching { ProfileSupport.separate(&summary, first: &first); summary.append(.text("robust caching")) }
    if enhancedATTBearer { ProfileSupport.separate(&summary, first: &first); summary.append(.text("EATT")) }
    if multipleHandleValueNotifications {
      ProfileSupport.separate(&summary, first: &first)
      summary.append(.text("multiple notifications"))
    }
    if first { summary.append(.text("no features")) }
  }

  public func diagnose(into diagnostics: inout [Diagnostic], context: ValueContext) {
    // Parsing guarantees one byte at least (an empty array built by hand has nothing reserved).
    if (bytes.first ?? 0) & ~0x07 != 0 || bytes.dropFirst().contains(where: { $0 != 0 }) {
      ProfileSupport.add(.profileReservedBits, &diagnostics, "reserved bits set in Client Supported Features")
    }
  }
}

/// Database Hash 0x2B2A: a 128-bit AES-CMAC over the GATT database, 16 bytes as sent.
public struct DatabaseHash: CharacteristicValue, Equatable {
  /// The 16 hash bytes, in the order sent.
  public var bytes: [UInt8]

  public init(bytes: [UInt8]) { self.bytes = bytes }

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    bytes = Array(try reader.readBytes(count: 16))
  }

  public static let decoder = CharacteristicDecoder(uuid16: 0x2B2A, key: "database_hash", DatabaseHash.self)

  public func writeFields(to fields: inout FieldList, context: ValueContext) {
    fields.bytes("hash", "Hash", bytes[...])
  }

  public func summarize(into summary: inout SummaryLine, context: ValueContext) {
    summary.append(.string(Hex.string(bytes)))
  }
}

/// Server Supported Features 0x2B3A: a bit field of one or more bytes; byte 0 bit 0 EATT supported.
public struct ServerSupportedFeatures: CharacteristicValue, Equatable {
  /// The whole bit field, at least one byte.
  public var bytes: [UInt8]

  public init(bytes: [UInt8]) { self.bytes = bytes }

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    try reader.require(1)
    bytes = Array(reader.readRemaining())
  }

  public var enhancedATTBearer: Bool { bytes.first.map { $0 & 0x01 != 0 } ?? false }

  public static let decoder = CharacteristicDecoder(uuid16: 0x2B3A, key: "server_supported_features", ServerSupportedFeatures.self)

  public func writeFields(to fields: inout FieldList, context: ValueContext) {
    fields.addVerbose("value", "Value", .bytes(bytes[...]))
    fields.flag("enhanced_att_bearer", "EATT supported", enhancedATTBearer)
  }

  public func summarize(into summary: inout SummaryLine, context: ValueContext) {
    summary.append(.text(enhancedATTBearer ? "EATT supported" : "no features"))
  }

  public func diagnose(into diagnostics: inout [Diagnostic], context: ValueContext) {
    if (bytes.first ?? 0) & ~0x01 != 0 || bytes.dropFirst().contains(where: { $0 != 0 }) {
      ProfileSupport.add(.profileReservedBits, &diagnostics, "reserved bits set in Server Supported Features")
    }
  }
}

extension ProfileRegistry {
  /// This file's decoders: adding one here registers it.
  static let gapAndGATT: [CharacteristicDecoder] = [
    DeviceName.decoder,
    Appearance.decoder,
    PeripheralPreferredConnectionParameters.decoder,
    ServiceChanged.decoder,
    CentralAddressResolution.decoder,
    ResolvablePrivateAddressOnly.decoder,
    ClientSupportedFeatures.decoder,
    DatabaseHash.decoder,
    ServerSupportedFeatures.decoder,
  ]
}
