import BLECore

// Huami / Xiaomi Mi Band vendor characteristics in the Huami base UUID
// 0000xxxx-0000-3512-2118-0009AF100700 (service 0xFEE0). Not vendor-documented: only the bytes
// that two public reverse-engineering sources agree on are decoded; the rest stays hex.

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

  /// Battery info 0x0006: byte 1 level (%), byte 2 status (0 normal, 1 charging); later bytes
  /// (last charge time stamps, level at last charge) differ between parsers and stay hex.
  public struct BatteryInfo: CharacteristicValue, Equatable {
    /// Byte 0, meaning unknown.
    public var firstByte: UInt8
    /// Percent.
    public var level: UInt8
    /// 0 normal, 1 charging; other values unknown.
    public var status: UInt8
    /// The bytes after the status, undecoded.
    public var rest: [UInt8]

    public init(firstByte: UInt8, level: UInt8, status: UInt8, rest: [UInt8] = []) {
      self.firstByte = firstByte
      self.level = level
      self.status = status
      self.rest = rest
    }

    public init(parsing reader: inout ByteReader) throws(DecodeError) {
      reader.layer = .profile
      firstByte = try reader.readUInt8()
      level = try reader.readUInt8()
      status = try reader.readUInt8()
      rest = Array(reader.readRemaining())
    }

    public var isCharging: Bool { status == 1 }

    public static let decoder = CharacteristicDecoder(uuid: Huami.uuid(0x0006), key: "huami_battery_info", BatteryInfo.self)

    public func writeFields(to fields: inout FieldList, context: ValueContext) {
      fields.addVerbose("unknown", "Byte 0", .unsigned(UInt64(firstByte), .hex(2)))
      fields.measure("percent", "Battery level", level, scale: 1, unit: "%")
      fields.code("status", "Status", status, width: 2, name: status == 0 ? "normal" : (status == 1 ? "charging" : nil))
      if !rest.isEmpty { fields.addVerbose("rest", "Rest", .bytes(rest[...])) }
    }

    public func summarize(into summary: inout SummaryLine, context: ValueContext) {
      summary.append(.number(Int(level)))
      summary.append(.text(isCharging ? " %, charging" : " %"))
    }

    public func diagnose(into diagnostics: inout [Diagnostic], context: ValueContext) {
      if level > 100 { ProfileSupport.warn(&diagnostics, "battery level \(level) % is above 100 %") }
    }
  }

  /// Realtime steps 0x0007: bytes 1–2 step count (u16); the rest stays hex.
  public struct RealtimeSteps: CharacteristicValue, Equatable {
    /// Byte 0, meaning unknown.
    public var firstByte: UInt8
    public var steps: UInt16
    /// The bytes after the step count, undecoded.
    public var rest: [UInt8]

    public init(firstByte: UInt8, steps: UInt16, rest: [UInt8] = []) {
      self.firstByte = firstByte
      self.steps = steps
      self.rest = rest
    }

    public init(parsing reader: inout ByteReader) throws(DecodeError) {
      reader.layer = .profile
      firstByte = try reader.readUInt8()
      steps = try reader.readUInt16LE()
      rest = Array(reader.readRemaining())
    }

    public static let decoder = CharacteristicDecoder(uuid: Huami.uuid(0x0007), key: "huami_realtime_steps", RealtimeSteps.self)

    public func writeFields(to fields: inout FieldList, context: ValueContext) {
      fields.addVerbose("unknown", "Byte 0", .unsigned(UInt64(firstByte), .hex(2)))
      fields.uint("steps", "Steps", steps)
      if !rest.isEmpty { fields.addVerbose("rest", "Rest", .bytes(rest[...])) }
    }

    public func summarize(into summary: inout SummaryLine, context: ValueContext) {
      summary.append(.number(Int(steps)))
      summary.append(.text(" steps"))
    }
  }
}

extension ProfileRegistry {
  /// This file's decoders: adding one here registers it.
  static let huami: [CharacteristicDecoder] = [
    Huami.BatteryInfo.decoder,
    Huami.RealtimeSteps.decoder,
  ]
}
