import BLECore

// Battery service 0x180F: Battery Level 0x2A19, Battery Level Status 0x2BED; and the older
// Battery Power State 0x2A1A and Battery Level State 0x2A1B (the Battery Service's first
// characteristics, kept by HID devices and in Wireshark).
//
// The corresponding specification is the Battery Service 1.1 and the GATT Specification
// Supplement (battery_level, battery_level_status); battery_power_state and
// battery_level_state are the SIG's withdrawn characteristic definitions.

/// Battery Level 0x2A19: one byte, percent (0–100; other values reserved).
public struct BatteryLevel: CharacteristicValue, Equatable {
  public var percent: UInt8

  public init(percent: UInt8) { self.percent = percent }

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    percent = try reader.readUInt8()
  }

  public static let decoder = CharacteristicDecoder(uuid16: 0x2A19, key: "battery_level", BatteryLevel.self, summarySaysItAll: true)

  public func writeFields(to fields: inout FieldList, context: ValueContext) {
    fields.measure("percent", "Battery level", percent, scale: 1, unit: "%")
  }

  public func summarize(into summary: inout SummaryLine, context: ValueContext) {
    summary.append(.number(Int(percent)))
    summary.append(.text(" %"))
  }

  public func diagnose(into diagnostics: inout [Diagnostic], context: ValueContext) {
    if percent > 100 { ProfileSupport.add(.profileOutOfRange, &diagnostics, "battery level \(percent) % is above 100 %") }
  }
}

/// Battery Level Status 0x2BED:
/// `flags(1) power_state(2) [identifier(2)] [battery_level(1)] [additional_status(1)]`.
public struct BatteryLevelStatus: CharacteristicValue, Equatable {
  /// Wired / wireless external power: 0 no, 1 yes, 2 unknown, 3 reserved.
  public enum Connection: UInt8, Sendable { case no = 0, yes = 1, unknown = 2, reserved = 3 }
  /// 0 unknown, 1 charging, 2 discharging (active), 3 discharging (inactive).
  public enum ChargeState: UInt8, Sendable { case unknown = 0, charging = 1, dischargingActive = 2, dischargingInactive = 3 }
  /// 0 unknown, 1 good, 2 low, 3 critical.
  public enum ChargeLevel: UInt8, Sendable { case unknown = 0, good = 1, low = 2, critical = 3 }

  public var flags: UInt8
  /// The Power State bit field, raw; see the computed properties.
  public var powerState: UInt16
  /// A GATT Characteristic Presentation Format description (which battery), when sent.
  public var identifier: UInt16?
  public var batteryLevel: UInt8?
  /// Additional Status, raw: bits 0–1 service required (0 no, 1 yes, 2 unknown), bit 2 battery fault.
  public var additionalStatus: UInt8?

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    flags = try reader.readUInt8()
    powerState = try reader.readUInt16LE()
    identifier = flags & 0x01 != 0 ? try reader.readUInt16LE() : nil
    batteryLevel = flags & 0x02 != 0 ? try reader.readUInt8() : nil
    additionalStatus = flags & 0x04 != 0 ? try reader.readUInt8() : nil
  }

  public var batteryPresent: Bool { powerState & 0x0001 != 0 }
  public var wiredExternalPower: Connection { Connection(rawValue: UInt8(powerState >> 1 & 3))! }
  public var wirelessExternalPower: Connection { Connection(rawValue: UInt8(powerState >> 3 & 3))! }
  public var chargeState: ChargeState { ChargeState(rawValue: UInt8(powerState >> 5 & 3))! }
  public var chargeLevel: ChargeLevel { ChargeLevel(rawValue: UInt8(powerState >> 7 & 3))! }
  /// 0 unknown / not charging, 1 constant current, 2 constant voltage, 3 trickle, 4 float, 5–7 reserved.
  public var chargingType: UInt8 { UInt8(powerState >> 9 & 7) }
  public var chargingFaultBattery: Bool { powerState & 0x1000 != 0 }
  public var chargingFaultExternalPower: Bool { powerState & 0x2000 != 0 }
  public var chargingFaultOther: Bool { powerState & 0x4000 != 0 }

  public static let decoder = CharacteristicDecoder(uuid16: 0x2BED, key: "battery_level_status", BatteryLevelStatus.self)

  static func word(_ value: Connection) -> Name {
    switch value {
    case .no: return "no"
    case .yes: return "yes"
    case .unknown: return "unknown"
    case .reserved: return "reserved"
    }
  }

  static func word(_ value: ChargeState) -> Name {
    switch value {
    case .unknown: return "unknown"
    case .charging: return "charging"
    case .dischargingActive: return "discharging_active"
    case .dischargingInactive: return "discharging_inactive"
    }
  }

  static func word(_ value: ChargeLevel) -> Name {
    switch value {
    case .unknown: return "unknown"
    case .good: return "good"
    case .low: return "low"
    case .critical: return "critical"
    }
  }

  static func chargingTypeWord(_ value: UInt8) -> Name {
    switch value {
    case 0: return "unknown"
    case 1: return "constant_current"
    case 2: return "constant_voltage"
    case 3: return "trickle"
    case 4: return "float"
    default: return "reserved"
    }
  }

  /// Additional Status bits 0–1: whether the battery needs service (0 no, 1 yes, 2 unknown, 3 reserved).
  public var serviceRequired: UInt8? { additionalStatus.map { $0 & 3 } }
  /// Additional Status bit 2.
  public var batteryFault: Bool? { additionalStatus.map { $0 & 0x04 != 0 } }

  public func writeFields(to fields: inout FieldList, context: ValueContext) {
    fields.addVerbose("flags", "Flags", .unsigned(UInt64(flags), .hex(2)))
    fields.beginObject("power_state", "Power state")
    fields.addVerbose("value", "Value", .unsigned(UInt64(powerState), .hex(4)))
    fields.flag("battery_present", "Battery present", batteryPresent)
    fields.text("wired_external_power", "Wired external power", Self.word(wiredExternalPower))
    fields.text("wireless_external_power", "Wireless external power", Self.word(wirelessExternalPower))
    fields.text("charge_state", "Charge state", Self.word(chargeState))
    fields.text("charge_level", "Charge level", Self.word(chargeLevel))
    fields.text("charging_type", "Charging type", Self.chargingTypeWord(chargingType))
    fields.flag("charging_fault_battery", "Charging fault: battery", chargingFaultBattery)
    fields.flag("charging_fault_external_power", "Charging fault: external power", chargingFaultExternalPower)
    fields.flag("charging_fault_other", "Charging fault: other", chargingFaultOther)
    fields.end()
    if let identifier { fields.hex("identifier", "Identifier", identifier, width: 4) }
    if let batteryLevel { fields.measure("percent", "Battery level", batteryLevel, scale: 1, unit: "%") }
    if let serviceRequired, let batteryFault {
      fields.beginObject("additional_status", "Additional status")
      let required: Name =
        switch serviceRequired {
        case 0: "no"
        case 1: "yes"
        case 2: "unknown"
        default: "reserved"
        }
      fields.text("service_required", "Service required", required)
      fields.flag("battery_fault", "Battery fault", batteryFault)
      fields.end()
    }
  }

  public func summarize(into summary: inout SummaryLine, context: ValueContext) {
    var first = true
    if let batteryLevel {
      ProfileSupport.separate(&summary, first: &first)
      summary.append(.number(Int(batteryLevel)))
      summary.append(.text(" %"))
    }
    ProfileSupport.separate(&summary, first: &first)
    if !batteryPresent {
      summary.append(.text("no battery"))
    } else {
      switch chargeState {
      case .unknown: summary.append(.text("charge state unknown"))
      case .charging: summary.append(.text("charging"))
      case .dischargingActive: summary.append(.text("discharging (active)"))
      case .dischargingInactive: summary.append(.text("discharging (inactive)"))
      }
      switch chargeLevel {
      case .low: summary.append(.text(", level low"))
      case .critical: summary.append(.text(", level critical"))
      default: break
      }
    }
    if wiredExternalPower == .yes || wirelessExternalPower == .yes { summary.append(.text(", external power")) }
    if chargingFaultBattery || chargingFaultExternalPower || chargingFaultOther { summary.append(.text(", charging fault")) }
  }

  public func diagnose(into diagnostics: inout [Diagnostic], context: ValueContext) {
    ProfileSupport.checkReserved(UInt64(flags), defined: 0x07, width: 2, what: "Battery Level Status flags", &diagnostics)
    ProfileSupport.checkReserved(UInt64(powerState), defined: 0x7FFF, width: 4, what: "Battery Level Status power state", &diagnostics)
    if wiredExternalPower == .reserved || wirelessExternalPower == .reserved || chargingType > 4 {
      ProfileSupport.add(.profileReservedValue, &diagnostics, "Battery Level Status power state uses a reserved value")
    }
    if let additionalStatus {
      ProfileSupport.checkReserved(UInt64(additionalStatus), defined: 0x07, width: 2, what: "Battery Level Status additional status", &diagnostics)
      if additionalStatus & 3 == 3 { ProfileSupport.add(.profileReservedValue, &diagnostics, "Battery Level Status service required uses the reserved value 3") }
    }
    if let batteryLevel, batteryLevel > 100 { ProfileSupport.add(.profileOutOfRange, &diagnostics, "battery level \(batteryLevel) % is above 100 %") }
  }
}

/// Battery Power State 0x2A1A: one byte of four 2-bit states: bits 0–1 battery present,
/// 2–3 discharging, 4–5 charging, 6–7 level. Each state: 0 unknown, 1 not supported (charging:
/// not chargeable), 2 no (level: good), 3 yes (level: critically low).
public struct BatteryPowerState: CharacteristicValue, Equatable {
  public var rawValue: UInt8

  public init(rawValue: UInt8) { self.rawValue = rawValue }

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    rawValue = try reader.readUInt8()
  }

  /// The four 2-bit states, raw (0–3).
  public var present: UInt8 { rawValue & 3 }
  public var discharging: UInt8 { rawValue >> 2 & 3 }
  public var charging: UInt8 { rawValue >> 4 & 3 }
  public var level: UInt8 { rawValue >> 6 & 3 }

  public static let decoder = CharacteristicDecoder(uuid16: 0x2A1A, key: "battery_power_state", BatteryPowerState.self)

  static func presentWord(_ value: UInt8) -> Name {
    switch value {
    case 1: return "not_supported"
    case 2: return "not_present"
    case 3: return "present"
    default: return "unknown"
    }
  }

  static func dischargingWord(_ value: UInt8) -> Name {
    switch value {
    case 1: return "not_supported"
    case 2: return "not_discharging"
    case 3: return "discharging"
    default: return "unknown"
    }
  }

  static func chargingWord(_ value: UInt8) -> Name {
    switch value {
    case 1: return "not_chargeable"
    case 2: return "not_charging"
    case 3: return "charging"
    default: return "unknown"
    }
  }

  static func levelWord(_ value: UInt8) -> Name {
    switch value {
    case 1: return "not_supported"
    case 2: return "good"
    case 3: return "critically_low"
    default: return "unknown"
    }
  }

  /// `present`, `discharging`, `charging`, `level`: each state's word, and its 2-bit code.
  public func writeFields(to fields: inout FieldList, context: ValueContext) {
    fields.addVerbose("power_state", "Value", .unsigned(UInt64(rawValue), .hex(2)))
    fields.text("present", "Present", Self.presentWord(present))
    fields.text("discharging", "Discharging", Self.dischargingWord(discharging))
    fields.text("charging", "Charging", Self.chargingWord(charging))
    fields.text("level", "Level", Self.levelWord(level))
  }

  /// "present, discharging, not charging, level good": the states that are known.
  public func summarize(into summary: inout SummaryLine, context: ValueContext) {
    var first = true
    func part(_ words: StaticString) {
      ProfileSupport.separate(&summary, first: &first)
      summary.append(.text(Name(words)))
    }
    switch present {
    case 2: part("no battery")
    case 3: part("present")
    default: break
    }
    switch discharging {
    case 2: part("not discharging")
    case 3: part("discharging")
    default: break
    }
    switch charging {
    case 1: part("not chargeable")
    case 2: part("not charging")
    case 3: part("charging")
    default: break
    }
    switch level {
    case 2: part("level good")
    case 3: part("level critically low")
    default: break
    }
    if first { summary.append(.text("state unknown")) }
  }
}

/// Battery Level State 0x2A1B: `level(1) [power_state(1)]`: a Battery Level (percent) and,
/// when sent, a Battery Power State.
public struct BatteryLevelState: CharacteristicValue, Equatable {
  public var percent: UInt8
  public var powerState: BatteryPowerState?

  public init(percent: UInt8, powerState: BatteryPowerState?) {
    self.percent = percent
    self.powerState = powerState
  }

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    percent = try reader.readUInt8()
    powerState = reader.isAtEnd ? nil : BatteryPowerState(rawValue: try reader.readUInt8())
  }

  public static let decoder = CharacteristicDecoder(uuid16: 0x2A1B, key: "battery_level_state", BatteryLevelState.self)

  /// `percent`, then the power state's fields inside `power_state` when it was sent.
  public func writeFields(to fields: inout FieldList, context: ValueContext) {
    fields.measure("percent", "Battery level", percent, scale: 1, unit: "%")
    if let powerState {
      fields.beginObject("power_state", "Power state")
      powerState.writeFields(to: &fields, context: context)
      fields.end()
    }
  }

  public func summarize(into summary: inout SummaryLine, context: ValueContext) {
    summary.append(.number(Int(percent)))
    summary.append(.text(" %"))
    if let powerState {
      summary.append(.text(", "))
      powerState.summarize(into: &summary, context: context)
    }
  }

  public func diagnose(into diagnostics: inout [Diagnostic], context: ValueContext) {
    if percent > 100 { ProfileSupport.add(.profileOutOfRange, &diagnostics, "battery level \(percent) % is above 100 %") }
  }
}

extension ProfileRegistry {
  /// This file's decoders: adding one here registers it.
  static let battery: [CharacteristicDecoder] = [
    BatteryLevel.decoder,
    BatteryLevelStatus.decoder,
    BatteryPowerState.decoder,
    BatteryLevelState.decoder,
  ]
}
