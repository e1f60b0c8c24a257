/// A Bluetooth device address (BD_ADDR), 48 bits; printed most significant byte first.
public struct BDAddr: Hashable, Sendable, Comparable, CustomStringConvertible {
  public let rawValue: UInt64

  public init(rawValue: UInt64) { self.rawValue = rawValue & 0xFFFF_FFFF_FFFF }

  /// Parses `AA:BB:CC:DD:EE:FF` (also with `-`), most significant byte first.
  public init?(_ text: String) {
    let parts = text.split(whereSeparator: { $0 == ":" || $0 == "-" })
    guard parts.count == 6 else { return nil }
    var value: UInt64 = 0
    for part in parts {
      guard part.count == 2, let byte = UInt8(part, radix: 16) else { return nil }
      value = value << 8 | UInt64(byte)
    }
    self.init(rawValue: value)
  }

  public var description: String {
    var text = ""
    text.reserveCapacity(17)
    for index in stride(from: 5, through: 0, by: -1) {
      let byte = UInt8(truncatingIfNeeded: rawValue >> (8 * UInt64(index)))
      text.append(Hex.digit(byte >> 4, upper: true))
      text.append(Hex.digit(byte & 0x0F, upper: true))
      if index > 0 { text.append(":") }
    }
    return text
  }

  public static func < (a: BDAddr, b: BDAddr) -> Bool { a.rawValue < b.rawValue }
}

/// How a device address is to be read (HCI address type).
public struct AddressType: RawRepresentable, Hashable, Sendable {
  public let rawValue: UInt8
  public init(rawValue: UInt8) { self.rawValue = rawValue }
  public static let publicDevice = AddressType(rawValue: 0)
  public static let randomDevice = AddressType(rawValue: 1)
  public static let publicIdentity = AddressType(rawValue: 2)
  public static let randomIdentity = AddressType(rawValue: 3)
  public static let anonymous = AddressType(rawValue: 0xFF)

  public var name: Name {
    switch rawValue {
    case 0: return "public"
    case 1: return "random"
    case 2: return "public identity"
    case 3: return "random identity"
    case 0xFF: return "anonymous"
    default: return "reserved"
    }
  }
}
