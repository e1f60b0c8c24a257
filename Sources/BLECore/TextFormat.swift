/// Numbers written as ASCII straight into memory the caller has made room for: the one place
/// the output buffer (`OutputBuffer`) and the header words (`SummaryLine`) format numbers, so
/// both print the same digits. Each writer returns how many bytes it wrote; `maximum…`
/// constants say how much room to make.
public enum TextFormat {
  /// A decimal UInt64 or Int64 takes at most 20 bytes (sign included).
  public static let maximumDecimal = 20
  /// A real with up to 9 decimals that `FixedDecimal` accepts: sign, 19 digits, point, 9.
  public static let maximumReal = 30

  /// "00" through "99" back to back: a literal, so reading it needs no lazy initialization.
  @inlinable @inline(__always) static var digitPairs: UnsafePointer<UInt8> {
    let pairs: StaticString = "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"
    return pairs.utf8Start
  }

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

  /// Numbers under 100 (most of what detail lines show: sequence bits, channels, signals) are
  /// written where they are asked for; longer ones by a call.
  @inlinable @inline(__always) package static func decimal(_ value: UInt64, to target: UnsafeMutablePointer<UInt8>) -> Int {
    if value < 10 {
      target[0] = 0x30 &+ UInt8(truncatingIfNeeded: value)
      return 1
    }
    if value < 100 {
      let pair = Int(truncatingIfNeeded: value) &* 2
      target[0] = digitPairs[pair]
      target[1] = digitPairs[pair &+ 1]
      return 2
    }
    return longDecimal(value, to: target)
  }

  @inlinable @inline(never) package static func longDecimal(_ value: UInt64, to target: UnsafeMutablePointer<UInt8>) -> Int {
    let digits = digitCount(value)
    let pairs = digitPairs
    var rest = value
    var index = digits
    while rest >= 100 {
      let pair = Int(truncatingIfNeeded: rest % 100) &* 2
      rest /= 100
      index &-= 2
      target[index] = pairs[pair]
      target[index &+ 1] = pairs[pair &+ 1]
    }
    if rest >= 10 {
      let pair = Int(truncatingIfNeeded: rest) &* 2
      target[index &- 2] = pairs[pair]
      target[index &- 1] = pairs[pair &+ 1]
    } else {
      target[index &- 1] = 0x30 &+ UInt8(truncatingIfNeeded: rest)
    }
    return digits
  }

  @inlinable @inline(__always) package static func decimal(_ value: Int64, to target: UnsafeMutablePointer<UInt8>) -> Int {
    guard value < 0 else { return decimal(UInt64(value), to: target) }
    target[0] = UInt8(ascii: "-")
    return 1 &+ decimal(value.magnitude, to: target + 1)
  }

  /// Exactly `width` digits, zero-padded (fractions of seconds, decimals).
  @inlinable package static func zeroPadded(_ value: UInt64, width: Int, to target: UnsafeMutablePointer<UInt8>) -> Int {
    let pairs = digitPairs
    var rest = value
    var index = width
    // Two digits per division, then the odd one.
    while index >= 2 {
      let pair = Int(truncatingIfNeeded: rest % 100) &* 2
      rest /= 100
      index &-= 2
      target[index] = pairs[pair]
      target[index &+ 1] = pairs[pair &+ 1]
    }
    if index > 0 { target[0] = 0x30 &+ UInt8(truncatingIfNeeded: rest % 10) }
    return width
  }

  @inlinable @inline(__always) public static func hexDigit(_ nibble: UInt8, upper: Bool = false) -> UInt8 {
    nibble < 10 ? 0x30 &+ nibble : (upper ? 0x37 : 0x57) &+ nibble
  }

  /// The low `count` hex digits of `value`, lowercase, no prefix.
  @inlinable package static func hexDigits(_ value: UInt64, count digits: Int, to target: UnsafeMutablePointer<UInt8>) -> Int {
    let characters = lowercaseHexDigits
    var shift = (digits &- 1) &* 4
    var index = 0
    while shift >= 0 {
      target[index] = characters[Int(truncatingIfNeeded: (value >> UInt64(shift)) & 0xF)]
      shift &-= 4
      index &+= 1
    }
    return digits
  }

  /// "0123456789abcdef": a digit by its nibble, read from a literal (no lazy initialization).
  @inlinable @inline(__always) static var lowercaseHexDigits: UnsafePointer<UInt8> {
    let digits: StaticString = "0123456789abcdef"
    return digits.utf8Start
  }

  /// `AA:BB:CC:DD:EE:FF`, uppercase, most significant byte first: 17 bytes.
  @inlinable package static func address(_ address: BDAddr, to target: UnsafeMutablePointer<UInt8>) -> Int {
    var index = 0
    for position in stride(from: 5, through: 0, by: -1) {
      let value = UInt8(truncatingIfNeeded: address.rawValue >> (8 &* UInt64(position)))
      target[index] = hexDigit(value >> 4, upper: true)
      target[index &+ 1] = hexDigit(value & 0x0F, upper: true)
      index &+= 2
      if position > 0 {
        target[index] = UInt8(ascii: ":")
        index &+= 1
      }
    }
    return index
  }

  /// `0x` and `width` lowercase hex digits.
  @inlinable package static func hexPrefixed(_ value: UInt64, width: Int, to target: UnsafeMutablePointer<UInt8>) -> Int {
    target[0] = UInt8(ascii: "0")
    target[1] = UInt8(ascii: "x")
    return 2 &+ hexDigits(value, count: width, to: target + 2)
  }

  /// Lowercase hex of `source`, with `separator` between bytes when given: at most
  /// `3 * source.count` bytes.
  @inlinable package static func hexBytes(_ source: UnsafeBufferPointer<UInt8>, separator: UInt8?, to target: UnsafeMutablePointer<UInt8>) -> Int {
    var index = 0
    for (position, value) in source.enumerated() {
      if let separator, position > 0 {
        target[index] = separator
        index &+= 1
      }
      target[index] = hexDigit(value >> 4)
      target[index &+ 1] = hexDigit(value & 0x0F)
      index &+= 2
    }
    return index
  }

  /// `value` rounded to `places` decimals, trailing zeros dropped (`812.5`, `72`); nil (nothing
  /// written) when it is too large for fixed decimals or not finite: callers then write
  /// `value.description`.
  @inlinable package static func real(_ value: Double, places: UInt8, to target: UnsafeMutablePointer<UInt8>) -> Int? {
    guard let fixed = FixedDecimal(value, places: places) else { return nil }
    return self.fixed(fixed, to: target)
  }

  /// A number already cut to its decimals.
  @inlinable package static func fixed(_ fixed: FixedDecimal, to target: UnsafeMutablePointer<UInt8>) -> Int {
    var index = 0
    if fixed.negative {
      target[0] = UInt8(ascii: "-")
      index = 1
    }
    index &+= decimal(fixed.whole, to: target + index)
    if fixed.digits > 0 {
      target[index] = UInt8(ascii: ".")
      index &+= 1
      index &+= zeroPadded(fixed.fraction, width: fixed.digits, to: target + index)
    }
    return index
  }
}

/// Writes several parts of a line into room made once (`SummaryLine.compose`,
/// `OutputBuffer.compose`): a hot line's dozen parts cost one bounds check each and no call.
/// `limit` bounds what it writes: a part that would pass it is left out, so a caller's miscount
/// shortens the line and never writes past the room.
public struct TextComposer {
  @usableFromInline let target: UnsafeMutablePointer<UInt8>
  @usableFromInline let limit: Int
  /// Bytes written so far.
  @usableFromInline var written = 0
  public var count: Int { written }

  @inlinable package init(target: UnsafeMutablePointer<UInt8>, limit: Int) {
    self.target = target
    self.limit = limit
  }

  @inlinable @inline(__always) public mutating func byte(_ value: UInt8) {
    guard written < limit else { return }
    target[written] = value
    written &+= 1
  }

  @inlinable @inline(__always) public mutating func text(_ words: Name) {
    words.withUTF8Buffer { bytes($0) }
  }

  @inlinable @inline(__always) package mutating func bytes(_ source: UnsafeBufferPointer<UInt8>) {
    guard let start = source.baseAddress, written &+ source.count <= limit else { return }
    (target + written).update(from: start, count: source.count)
    written &+= source.count
  }

  /// A String's bytes (named apart from `text`: a literal would pick this overload).
  @inlinable public mutating func string(_ string: String) {
    var string = string
    string.withUTF8 { bytes($0) }
  }

  @inlinable @inline(__always) public mutating func number(_ value: Int) {
    guard written &+ TextFormat.maximumDecimal <= limit else { return }
    written &+= TextFormat.decimal(Int64(value), to: target + written)
  }

  @inlinable @inline(__always) public mutating func fixed(_ value: FixedDecimal) {
    guard written &+ TextFormat.maximumReal <= limit else { return }
    written &+= TextFormat.fixed(value, to: target + written)
  }

  /// Rounded to `places` decimals, trailing zeros dropped (`812.5`, `72`).
  @inlinable public mutating func real(_ value: Double, places: UInt8) {
    guard written &+ TextFormat.maximumReal <= limit else { return }
    if let length = TextFormat.real(value, places: places, to: target + written) {
      written &+= length
    } else {
      string(value.description)  // inf, nan, 1e+20: at most 24 bytes
    }
  }

  /// A device address, `AA:BB:CC:DD:EE:FF` (most significant byte first).
  @inlinable public mutating func address(_ address: BDAddr) {
    guard written &+ 17 <= limit else { return }
    written &+= TextFormat.address(address, to: target + written)
  }

  /// Microseconds as seconds with six decimals (`12.000250`, `-0.500000`).
  @inlinable public mutating func seconds(_ micros: Int64) {
    guard written &+ TextFormat.maximumDecimal &+ 8 <= limit else { return }
    if micros < 0 { byte(UInt8(ascii: "-")) }
    let magnitude = micros.magnitude
    written &+= TextFormat.decimal(magnitude / 1_000_000, to: target + written)
    target[written] = UInt8(ascii: ".")
    written &+= 1
    written &+= TextFormat.zeroPadded(magnitude % 1_000_000, width: 6, to: target + written)
  }
}
