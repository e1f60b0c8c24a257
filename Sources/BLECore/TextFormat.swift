/// Numbers written as ASCII into room made for them: the one place the output buffer
/// (`OutputBuffer`) and the header words (`SummaryLine`, through `TextComposer`) format numbers,
/// so both print the same digits. The writers, which store digits unchecked into that room, are
/// in ByteArena+Text.swift with the composer; here what sizes the room.
public enum TextFormat {
  /// A decimal UInt64 or Int64 takes at most 20 bytes (sign included).
  public static let maximumDecimal = 20
  /// A real with up to 9 decimals that `FixedDecimal` accepts: sign, 19 digits, point, 9.
  public static let maximumReal = 30

  /// How many decimal digits `value` has (comparisons and a few divisions, no loop per digit).
  @inlinable @inline(__always) public static func digitCount(_ value: UInt64) -> Int {
    var count = 1
    var rest = value
    if rest >= 10_000_000_000_000_000 { count += 16; rest /= 10_000_000_000_000_000 }
    if rest >= 100_000_000 { count += 8; rest /= 100_000_000 }
    if rest >= 10_000 { count += 4; rest /= 10_000 }
    if rest >= 100 { count += 2; rest /= 100 }
    if rest >= 10 { count += 1 }
    return count
  }

  @inlinable @inline(__always) public static func hexDigit(_ nibble: UInt8, upper: Bool = false) -> UInt8 {
    nibble < 10 ? 0x30 &+ nibble : (upper ? 0x37 : 0x57) &+ nibble
  }
}
