import BLECore

// Huami / Xiaomi Mi Band vendor characteristics in the Huami base UUID
// 0000xxxx-0000-3512-2118-0009AF100700 (services 0xFEE0, 0xFEE1; shared/reference/gatt-payloads.md
// §9). Not vendor-documented: what two public reverse-engineering sources agree on is decoded,
// what only one gives is decoded and marked uncertain (`uncertain_fields`), the rest stays hex.
// The auth characteristic is in HuamiAuth.swift; the heart-rate commands on 0x2A39 in HeartRate.swift.

public enum Huami {
  /// The 128-bit UUID of Huami short id `short`.
  public static func uuid(_ short: UInt16) -> BluetoothUUID {
    BluetoothUUID(high: UInt64(short) << 32 | 0x3512, low: 0x2118_0009_AF10_0700)
  }

  static let baseLow: UInt64 = 0x2118_0009_AF10_0700
  static let baseHighLow32: UInt64 = 0x3512

  /// The Huami short id when `high`/`low` are in the Huami base.
  static func shortID(high: UInt64, low: UInt64) -> UInt16? {
    guard low == baseLow, high & 0xFFFF_FFFF == baseHighLow32, high >> 48 == 0 else { return nil }
    return UInt16(truncatingIfNeeded: high >> 32)
  }

  /// Battery info 0x0006: byte 1 level (%), byte 2 status (0 normal, 1 charging), byte 19
  /// the level at the last charge. The times of the last power-off and of the last charge
  /// (year u16, month, day, hour, minute, second) are read at bytes 3–9 and 11–17 (creotiv's
  /// layout; Gadgetbridge reads the last charge from byte 10): marked uncertain.
  public struct BatteryInfo: CharacteristicValue, Equatable {
    /// Byte 0, meaning unknown.
    public var firstByte: UInt8
    /// Percent.
    public var level: UInt8
    /// 0 normal, 1 charging; other values unknown.
    public var status: UInt8
    /// Bytes 3–9 (uncertain offset).
    public var lastOff: DateTime?
    /// Bytes 11–17 (uncertain offset).
    public var lastCharge: DateTime?
    /// Byte 19, percent.
    public var lastChargeLevel: UInt8?
    /// The bytes after the last part decoded.
    public var rest: [UInt8]

    public init(firstByte: UInt8, level: UInt8, status: UInt8, lastOff: DateTime? = nil, lastCharge: DateTime? = nil, lastChargeLevel: UInt8? = nil, rest: [UInt8] = []) {
      self.firstByte = firstByte
      self.level = level
      self.status = status
      self.lastOff = lastOff
      self.lastCharge = lastCharge
      self.lastChargeLevel = lastChargeLevel
      self.rest = rest
    }

    public init(parsing reader: inout ByteReader) throws(DecodeError) {
      reader.layer = .profile
      firstByte = try reader.readUInt8()
      level = try reader.readUInt8()
      status = try reader.readUInt8()
      lastOff = nil
      lastCharge = nil
      lastChargeLevel = nil
      // Each later part only when the value reaches its end.
      if reader.remaining >= 7 {
        lastOff = try DateTime(parsing: &reader)
        if reader.remaining >= 8 {
          try reader.skip(1)
          lastCharge = try DateTime(parsing: &reader)
          if reader.remaining >= 2 {
            try reader.skip(1)
            lastChargeLevel = try reader.readUInt8()
          }
        }
      }
      rest = Array(reader.readRemaining())
    }

    public var isCharging: Bool { status == 1 }

    public static let decoder = CharacteristicDecoder(uuid: Huami.uuid(0x0006), key: "huami_battery_info", BatteryInfo.self)

    public func writeFields(to fields: inout FieldList, context: ValueContext) {
      fields.addVerbose("unknown", "Byte 0", .unsigned(UInt64(firstByte), .hex(2)))
      fields.measure("percent", "Battery level", level, scale: 1, unit: "%")
      fields.code("status", "Status", status, width: 2, name: status == 0 ? "normal" : (status == 1 ? "charging" : nil))
      if let lastChargeLevel { fields.measure("last_charge_percent", "Level at last charge", lastChargeLevel, scale: 1, unit: "%") }
      if let lastOff { fields.add("last_off", "Last off (uncertain offset)", .text(lastOff.description)) }
      if let lastCharge { fields.add("last_charge", "Last charge (uncertain offset)", .text(lastCharge.description)) }
      if lastOff != nil {
        fields.beginArray("uncertain_fields", "Uncertain (sources differ)", verbose: true)
        fields.text("uncertain_fields", "Field", "last_off")
        if lastCharge != nil { fields.text("uncertain_fields", "Field", "last_charge") }
        fields.end()
      }
      if !rest.isEmpty { fields.addVerbose("rest", "Rest", .bytes(rest[...])) }
    }

    public func summarize(into summary: inout SummaryLine, context: ValueContext) {
      summary.append(.number(Int(level)))
      summary.append(.text(isCharging ? " %, charging" : " %"))
    }

    public func diagnose(into diagnostics: inout [Diagnostic], context: ValueContext) {
      if level > 100 { ProfileSupport.add(.profileOutOfRange, &diagnostics, "battery level \(level) % is above 100 %") }
      if let lastChargeLevel, lastChargeLevel > 100 { ProfileSupport.add(.profileOutOfRange, &diagnostics, "level at last charge \(lastChargeLevel) % is above 100 %") }
    }
  }

  /// Realtime steps 0x0007: bytes 1–2 step count (u16; Gadgetbridge, xDrip). In the 13-byte
  /// value, distance (m) and calories follow as u32 at bytes 5 and 9 (creotiv's reading, not
  /// cross-checked): marked uncertain.
  public struct RealtimeSteps: CharacteristicValue, Equatable {
    /// Byte 0, meaning unknown.
    public var firstByte: UInt8
    public var steps: UInt16
    /// Bytes 3–4 of a 13-byte value (zero when the step count fits 16 bits).
    public var stepsHigh: UInt16?
    /// Uncertain.
    public var distance: UInt32?
    /// Uncertain.
    public var calories: UInt32?
    /// The bytes after the last part decoded.
    public var rest: [UInt8]

    public init(firstByte: UInt8, steps: UInt16, stepsHigh: UInt16? = nil, distance: UInt32? = nil, calories: UInt32? = nil, rest: [UInt8] = []) {
      self.firstByte = firstByte
      self.steps = steps
      self.stepsHigh = stepsHigh
      self.distance = distance
      self.calories = calories
      self.rest = rest
    }

    public init(parsing reader: inout ByteReader) throws(DecodeError) {
      reader.layer = .profile
      firstByte = try reader.readUInt8()
      steps = try reader.readUInt16LE()
      stepsHigh = nil
      distance = nil
      calories = nil
      if reader.remaining >= 10 {
        stepsHigh = try reader.readUInt16LE()
        distance = try reader.readUInt32LE()
        calories = try reader.readUInt32LE()
      }
      rest = Array(reader.readRemaining())
    }

    public static let decoder = CharacteristicDecoder(uuid: Huami.uuid(0x0007), key: "huami_realtime_steps", RealtimeSteps.self)

    public func writeFields(to fields: inout FieldList, context: ValueContext) {
      fields.addVerbose("unknown", "Byte 0", .unsigned(UInt64(firstByte), .hex(2)))
      fields.uint("steps", "Steps", steps)
      if let distance, let calories {
        fields.measure("distance_m", "Distance (uncertain)", distance, scale: 1, unit: "m")
        fields.measure("calories", "Calories (uncertain)", calories, scale: 1, unit: "kcal")
        fields.beginArray("uncertain_fields", "Uncertain (not cross-checked)", verbose: true)
        fields.text("uncertain_fields", "Field", "distance_m")
        fields.text("uncertain_fields", "Field", "calories")
        fields.end()
      }
      if !rest.isEmpty { fields.addVerbose("rest", "Rest", .bytes(rest[...])) }
    }

    public func summarize(into summary: inout SummaryLine, context: ValueContext) {
      summary.append(.number(Int(steps)))
      summary.append(.text(" steps"))
      if let distance, let calories {
        summary.append(.text("; unconfirmed: "))
        summary.append(.number(Int(distance)))
        summary.append(.text(" m, "))
        summary.append(.number(Int(calories)))
        summary.append(.text(" kcal"))
      }
    }

    public func diagnose(into diagnostics: inout [Diagnostic], context: ValueContext) {
      if let stepsHigh, stepsHigh != 0 {
        ProfileSupport.add(.profileVendorValueUnexpected, &diagnostics, "bytes 3–4 of the steps value are \(Hex.prefixed(UInt64(stepsHigh), width: 4)), not zero: the step count may be 32-bit")
      }
    }
  }
}

extension ProfileRegistry {
  /// This file's decoders: adding one here registers it.
  static let huami: [CharacteristicDecoder] = [
    Huami.BatteryInfo.decoder,
    Huami.RealtimeSteps.decoder,
    Huami.Auth.decoder,
  ]
}
