/// A Bluetooth UUID, remembering the width it was sent with (16, 32 or 128 bits).
///
/// 16- and 32-bit UUIDs are aliases inside the Bluetooth Base UUID
/// `0000xxxx-0000-1000-8000-00805F9B34FB`; `high`/`low` always hold the full 128-bit value.
public struct BluetoothUUID: Hashable, Sendable, CustomStringConvertible {
  public let high: UInt64
  public let low: UInt64
  /// 2, 4 or 16: the number of bytes the UUID used on the wire.
  public let width: UInt8

  static let baseLow: UInt64 = 0x8000_0080_5F9B_34FB
  static let baseHighLow32: UInt64 = 0x0000_1000

  public init(uuid16: UInt16) {
    self.high = UInt64(uuid16) << 32 | Self.baseHighLow32
    self.low = Self.baseLow
    self.width = 2
  }

  public init(uuid32: UInt32) {
    self.high = UInt64(uuid32) << 32 | Self.baseHighLow32
    self.low = Self.baseLow
    self.width = 4
  }

  public init(high: UInt64, low: UInt64) {
    self.high = high
    self.low = low
    self.width = 16
  }

  /// Whether both name the same UUID, whatever width each was sent with (`==` also compares
  /// the widths).
  public func hasSameValue(as other: BluetoothUUID) -> Bool { high == other.high && low == other.low }

  /// The 16-bit alias when this UUID is one (whatever width it was sent with).
  public var uuid16: UInt16? {
    guard low == Self.baseLow, high & 0xFFFF_FFFF == Self.baseHighLow32, high >> 48 == 0 else { return nil }
    return UInt16(truncatingIfNeeded: high >> 32)
  }

  /// `2a37` for 16-bit, `0000fe95`-style for 32-bit, dashed lowercase for 128-bit.
  public var description: String {
    switch width {
    case 2: return Hex.prefixed(high >> 32, width: 4).dropFirst(2).description
    case 4: return Hex.prefixed(high >> 32, width: 8).dropFirst(2).description
    default:
      let h = Hex.prefixed(high, width: 16).dropFirst(2)
      let l = Hex.prefixed(low, width: 16).dropFirst(2)
      let hs = Array(h), ls = Array(l)
      return String(hs[0..<8]) + "-" + String(hs[8..<12]) + "-" + String(hs[12..<16]) + "-"
        + String(ls[0..<4]) + "-" + String(ls[4..<16])
    }
  }

  /// Parses `180d`, `0x180D`, 8 hex digits, or a dashed 128-bit UUID.
  public init?(_ text: String) {
    var body = Substring(text.lowercased())
    if body.hasPrefix("0x") { body = body.dropFirst(2) }
    let hex = body.filter { $0 != "-" }
    guard hex.allSatisfy({ $0.isASCII && $0.isHexDigit }) else { return nil }
    switch hex.count {
    case 4: self.init(uuid16: UInt16(hex, radix: 16)!)
    case 8: self.init(uuid32: UInt32(hex, radix: 16)!)
    case 32:
      self.init(high: UInt64(hex.prefix(16), radix: 16)!, low: UInt64(hex.suffix(16), radix: 16)!)
    default: return nil
    }
  }
}
