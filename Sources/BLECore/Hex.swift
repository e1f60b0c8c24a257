/// Hexadecimal digits and helpers shared by decoders and renderers.
public enum Hex {
  public static let lower: [UInt8] = Array("0123456789abcdef".utf8)
  public static let upper: [UInt8] = Array("0123456789ABCDEF".utf8)

  @inlinable public static func digit(_ nibble: UInt8, upper: Bool) -> Character {
    Character(Unicode.Scalar((upper ? Hex.upper : Hex.lower)[Int(nibble & 0x0F)]))
  }

  /// Hex digits as bytes, or nil unless every two digits are a byte.
  public static func bytes(_ hex: some StringProtocol) -> [UInt8]? {
    let digits = Array(hex.utf8)
    guard digits.count % 2 == 0 else { return nil }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(digits.count / 2)
    var index = 0
    while index < digits.count {
      guard let high = value(digits[index]), let low = value(digits[index + 1]) else { return nil }
      bytes.append(high << 4 | low)
      index += 2
    }
    return bytes
  }

  /// The value of one hex digit (either case).
  public static func value(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
    default: return nil
    }
  }

  /// Lowercase hex of `bytes` with no separators.
  public static func string<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
    var out = [UInt8]()
    out.reserveCapacity(bytes.count * 2)
    for byte in bytes {
      out.append(lower[Int(byte >> 4)])
      out.append(lower[Int(byte & 0x0F)])
    }
    return String(decoding: out, as: UTF8.self)
  }

  /// `0x` followed by `width` lowercase digits.
  public static func prefixed(_ value: UInt64, width: Int) -> String {
    var digits = [UInt8](repeating: UInt8(ascii: "0"), count: width)
    var rest = value
    var index = width - 1
    while index >= 0 {
      digits[index] = lower[Int(rest & 0xF)]
      rest >>= 4
      index -= 1
    }
    return "0x" + String(decoding: digits, as: UTF8.self)
  }
}
