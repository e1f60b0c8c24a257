import BLECore

// GAP service 0x1800 and GATT service 0x1801 characteristics.
//
// The corresponding specification is Core Vol 3, Part C §12 (GAP characteristics) and
// Part G §7 (GATT service), and the GATT Specification Supplement.

/// Device Name 0x2A00: UTF-8, field `value`.
public enum DeviceName {
  public static let decoder = ProfileSupport.stringDecoder(uuid16: 0x2A00, key: "device_name", label: "Device name")
}

/// Appearance 0x2A01: u16, category in bits 15–6, subcategory in bits 5–0.
public struct Appearance: FieldWritable, Equatable {
  public var rawValue: UInt16

  public init(rawValue: UInt16) { self.rawValue = rawValue }

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    rawValue = try reader.readUInt16LE()
  }

  public var category: UInt16 { rawValue >> 6 }
  public var subcategory: UInt8 { UInt8(rawValue & 0x3F) }
  public var name: StaticString? { AssignedNumbers.appearanceName(rawValue) }

  public static let decoder = ProfileSupport.decoder(Appearance.self, uuid16: 0x2A01, key: "appearance")

  func write(to frame: inout DissectedFrame, context: ValueContext) {
    frame.fields.code("appearance", "Appearance", rawValue, width: 4, name: name)
    frame.fields.addVerbose("category", "Category", .unsigned(UInt64(category), .decimal))
    frame.fields.addVerbose("subcategory", "Subcategory", .unsigned(UInt64(subcategory), .decimal))
    if let name {
      frame.summaryParts.append(.text(name))
    } else {
      frame.summaryParts.append(.text("appearance "))
      frame.summaryParts.append(.hex(UInt64(rawValue), width: 4))
    }
  }
}

/// Peripheral Preferred Connection Parameters 0x2A04: four u16, exactly 8 bytes.
/// Intervals in 1.25 ms (6–3200), latency in connection events (0–499), supervision timeout in
/// 10 ms (10–3200); 0xFFFF means no preference (intervals, timeout).
public struct PeripheralPreferredConnectionParameters: FieldWritable, Equatable {
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

  public static let decoder = ProfileSupport.decoder(PeripheralPreferredConnectionParameters.self, uuid16: 0x2A04, key: "peripheral_preferred_connection_parameters")

  func write(to frame: inout DissectedFrame, context: ValueContext) {
    func interval(_ key: StaticString, _ label: StaticString, _ value: UInt16) {
      if value == Self.noPreference {
        frame.fields.add(key, label, .null)
      } else {
        frame.fields.measure(key, label, value, scale: 1.25, unit: "ms")
      }
    }
    interval("interval_min", "Minimum connection interval", minimumInterval)
    interval("interval_max", "Maximum connection interval", maximumInterval)
    frame.fields.uint("latency", "Peripheral latency", peripheralLatency)
    if supervisionTimeout == Self.noPreference {
      frame.fields.add("supervision_timeout", "Supervision timeout", .null)
    } else {
      frame.fields.measure("supervision_timeout", "Supervision timeout", supervisionTimeout, scale: 10, unit: "ms")
    }

    frame.summaryParts.append(.text("interval "))
    if let low = minimumIntervalMilliseconds, let high = maximumIntervalMilliseconds {
      frame.summaryParts.append(.real(low, places: 2))
      if high != low {
        frame.summaryParts.append(.text("–"))
        frame.summaryParts.append(.real(high, places: 2))
      }
      frame.summaryParts.append(.text(" ms"))
    } else if let one = minimumIntervalMilliseconds ?? maximumIntervalMilliseconds {
      frame.summaryParts.append(.text(minimumIntervalMilliseconds == nil ? "≤ " : "≥ "))
      frame.summaryParts.append(.real(one, places: 2))
      frame.summaryParts.append(.text(" ms"))
    } else {
      frame.summaryParts.append(.text("any"))
    }
    frame.summaryParts.append(.text(", latency "))
    frame.summaryParts.append(.number(Int(peripheralLatency)))
    frame.summaryParts.append(.text(", timeout "))
    if let timeout = supervisionTimeoutMilliseconds {
      frame.summaryParts.append(.real(timeout, places: 0))
      frame.summaryParts.append(.text(" ms"))
    } else {
      frame.summaryParts.append(.text("any"))
    }
    for problem in problems { ProfileSupport.warn(&frame, "preferred connection parameters: " + problem) }
  }
}

/// Central Address Resolution 0x2AA6: u8, 0 not supported, 1 supported.
public struct CentralAddressResolution: FieldWritable, Equatable {
  public var rawValue: UInt8
  public var isSupported: Bool { rawValue == 1 }

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    rawValue = try reader.readUInt8()
  }

  public static let decoder = ProfileSupport.decoder(CentralAddressResolution.self, uuid16: 0x2AA6, key: "central_address_resolution")

  func write(to frame: inout DissectedFrame, context: ValueContext) {
    frame.fields.flag("supported", "Supported", isSupported)
    frame.summaryParts.append(.text(isSupported ? "supported" : "not supported"))
    if rawValue > 1 { ProfileSupport.warn(&frame, "Central Address Resolution value \(rawValue) is reserved") }
  }
}

/// Resolvable Private Address Only 0x2AC9: u8, 0 = only resolvable private addresses are used.
public struct ResolvablePrivateAddressOnly: FieldWritable, Equatable {
  public var rawValue: UInt8

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    rawValue = try reader.readUInt8()
  }

  public static let decoder = ProfileSupport.decoder(ResolvablePrivateAddressOnly.self, uuid16: 0x2AC9, key: "resolvable_private_address_only")

  func write(to frame: inout DissectedFrame, context: ValueContext) {
    frame.fields.uint("value", "Value", rawValue)
    if rawValue == 0 {
      frame.summaryParts.append(.text("only resolvable private addresses"))
    } else {
      frame.summaryParts.append(.text("reserved value "))
      frame.summaryParts.append(.number(Int(rawValue)))
      ProfileSupport.warn(&frame, "Resolvable Private Address Only value \(rawValue) is reserved")
    }
  }
}

/// Service Changed 0x2A05: the affected attribute handle range, `start(2) end(2)`.
public struct ServiceChanged: FieldWritable, Equatable {
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

  public static let decoder = ProfileSupport.decoder(ServiceChanged.self, uuid16: 0x2A05, key: "service_changed")

  func write(to frame: inout DissectedFrame, context: ValueContext) {
    frame.fields.hex("start_handle", "Start handle", startHandle, width: 4)
    frame.fields.hex("end_handle", "End handle", endHandle, width: 4)
    frame.summaryParts.append(.text("handles "))
    frame.summaryParts.append(.hex(UInt64(startHandle), width: 4))
    frame.summaryParts.append(.text("–"))
    frame.summaryParts.append(.hex(UInt64(endHandle), width: 4))
    if startHandle == 0 { ProfileSupport.warn(&frame, "Service Changed start handle 0x0000 is invalid") }
    if startHandle > endHandle { ProfileSupport.warn(&frame, "Service Changed start handle is above the end handle") }
  }
}

/// Client Supported Features 0x2B29: a bit field of one or more bytes. Byte 0: bit 0 Robust
/// Caching, bit 1 Enhanced ATT Bearer, bit 2 Multiple Handle Value Notifications.
public struct ClientSupportedFeatures: FieldWritable, Equatable {
  public var bytes: [UInt8]

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    try reader.require(1)
    bytes = Array(reader.readRemaining())
  }

  public var robustCaching: Bool { bytes.first.map { $0 & 0x01 != 0 } ?? false }
  public var enhancedATTBearer: Bool { bytes.first.map { $0 & 0x02 != 0 } ?? false }
  public var multipleHandleValueNotifications: Bool { bytes.first.map { $0 & 0x04 != 0 } ?? false }

  public static let decoder = ProfileSupport.decoder(ClientSupportedFeatures.self, uuid16: 0x2B29, key: "client_supported_features")

  func write(to frame: inout DissectedFrame, context: ValueContext) {
    frame.fields.addVerbose("value", "Value", .bytes(bytes[...]))
    frame.fields.flag("robust_caching", "Robust Caching", robustCaching)
    frame.fields.flag("enhanced_att_bearer", "Enhanced ATT bearer", enhancedATTBearer)
    frame.fields.flag("multiple_handle_value_notifications", "Multiple Handle Value Notifications", multipleHandleValueNotifications)
    var first = true
    if robustCaching { ProfileSupport.separate(&frame, first: &first); frame.summaryParts.append(.text("robust caching")) }
    if enhancedATTBearer { ProfileSupport.separate(&frame, first: &first); frame.summaryParts.append(.text("EATT")) }
    if multipleHandleValueNotifications {
      ProfileSupport.separate(&frame, first: &first)
      frame.summaryParts.append(.text("multiple notifications"))
    }
    if first { frame.summaryParts.append(.text("no features")) }
    if bytes[0] & ~0x07 != 0 || bytes.dropFirst().contains(where: { $0 != 0 }) {
      ProfileSupport.warn(&frame, "reserved bits set in Client Supported Features")
    }
  }
}

/// Database Hash 0x2B2A: a 128-bit AES-CMAC over the GATT database, 16 bytes as sent.
public struct DatabaseHash: FieldWritable, Equatable {
  public var bytes: [UInt8]

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    bytes = Array(try reader.readBytes(count: 16))
  }

  public static let decoder = ProfileSupport.decoder(DatabaseHash.self, uuid16: 0x2B2A, key: "database_hash")

  func write(to frame: inout DissectedFrame, context: ValueContext) {
    frame.fields.bytes("hash", "Hash", bytes[...])
    frame.summaryParts.append(.string(Hex.string(bytes)))
  }
}

/// Server Supported Features 0x2B3A: a bit field of one or more bytes; byte 0 bit 0 EATT supported.
public struct ServerSupportedFeatures: FieldWritable, Equatable {
  public var bytes: [UInt8]

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    try reader.require(1)
    bytes = Array(reader.readRemaining())
  }

  public var enhancedATTBearer: Bool { bytes.first.map { $0 & 0x01 != 0 } ?? false }

  public static let decoder = ProfileSupport.decoder(ServerSupportedFeatures.self, uuid16: 0x2B3A, key: "server_supported_features")

  func write(to frame: inout DissectedFrame, context: ValueContext) {
    frame.fields.addVerbose("value", "Value", .bytes(bytes[...]))
    frame.fields.flag("enhanced_att_bearer", "EATT supported", enhancedATTBearer)
    frame.summaryParts.append(.text(enhancedATTBearer ? "EATT supported" : "no features"))
    if bytes[0] & ~0x01 != 0 || bytes.dropFirst().contains(where: { $0 != 0 }) {
      ProfileSupport.warn(&frame, "reserved bits set in Server Supported Features")
    }
  }
}
