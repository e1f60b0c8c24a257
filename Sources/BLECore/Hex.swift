/// Hexadecimal digits and helpers shared by decoders and renderers.
public enum Hex {
  public static let lower: [UInt8] = Array("0123456789abcdef".utf8)
  public static let upper: [UInt8] = Array("0123456789ABCDEF".utf8)

  @inlinable public static func digit(_ nibble: UInt8, upper: Bool) -> Character {
    Character(Unicode.Scalar((upper ? Hex.upper : Hex.lower)[Int(nibble & 0x0F)]))
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
