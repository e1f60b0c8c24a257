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
  public static let batteryInfo = CharacteristicDecoder(uuid: uuid(0x0006), key: "huami_battery_info") { reader, _, frame throws(DecodeError) in
    reader.layer = .profile
    frame.fields.addVerbose("unknown", "Byte 0", .unsigned(UInt64(try reader.readUInt8()), .hex(2)))
    let level = try reader.readUInt8()
    frame.fields.measure("percent", "Battery level", level, scale: 1, unit: "%")
    let status = try reader.readUInt8()
    frame.fields.code("status", "Status", status, width: 2, name: status == 0 ? "normal" : (status == 1 ? "charging" : nil))
    if !reader.isAtEnd { frame.fields.verboseBytes("rest", "Rest", reader.readRemaining()) }
    frame.summaryParts.append(.number(Int(level)))
    frame.summaryParts.append(.text(status == 1 ? " %, charging" : " %"))
    if level > 100 { ProfileSupport.warn(&frame, "battery level \(level) % is above 100 %") }
  }

  /// Realtime steps 0x0007: bytes 1–2 step count (u16); the rest stays hex.
  public static let realtimeSteps = CharacteristicDecoder(uuid: uuid(0x0007), key: "huami_realtime_steps") { reader, _, frame throws(DecodeError) in
    reader.layer = .profile
    frame.fields.addVerbose("unknown", "Byte 0", .unsigned(UInt64(try reader.readUInt8()), .hex(2)))
    let steps = try reader.readUInt16LE()
    frame.fields.uint("steps", "Steps", steps)
    if !reader.isAtEnd { frame.fields.verboseBytes("rest", "Rest", reader.readRemaining()) }
    frame.summaryParts.append(.number(Int(steps)))
    frame.summaryParts.append(.text(" steps"))
  }
}
