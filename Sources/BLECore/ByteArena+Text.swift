// The text writers: digits and words stored unchecked into room a caller made, which is what
// keeps number formatting cheap (a checked store per digit, through a span, cost about 3% of the
// instructions of `bledissect FILE`). Only `OutputBuffer` and `ByteArena.compose` make that room.

/// Writes several parts of a line into room made once (`ByteArena.compose` for header words,
/// `OutputBuffer.compose`): a hot line's dozen parts cost one check for room each and no call.
/// `limit` bounds what it writes: a part that would pass it is left out, so a caller's miscount
/// shortens the line and never writes past the room. Made only by those two, for the closure
/// they run, which is as long as their memory is lent.
public struct TextComposer {
  // Safety: `limit` writable bytes, lent by `ByteArena.compose` or `OutputBuffer.compose` while their closure runs.
  @usableFromInline let target: UnsafeMutablePointer<UInt8>
  @usableFromInline let limit: Int
  /// Bytes written so far.
  @usableFromInline var written = 0
  public var count: Int { written }

  // Safety: the caller lends `limit` writable bytes at `target` for as long as the composer is used.
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
    words.withUTF8 { bytes($0) }
  }

  /// Lent bytes as they are.
  @inlinable @inline(__always) public mutating func bytes(_ source: ByteView) {
    guard written &+ source.count <= limit, !source.isEmpty else { return }
    // Safety: the check above keeps the copy within the room; the view's lender pins its bytes.
    (target + written).update(from: source.base + source.startIndex, count: source.count)
    written &+= source.count
  }

  /// A String's bytes (named apart from `text`: a literal would pick this overload).
  @inlinable public mutating func string(_ string: String) {
    ByteView.pinning(utf8: string) { bytes($0) }
  }

  @inlinable @inline(__always) public mutating func number(_ value: Int) {
    guard written &+ TextFormat.maximumDecimal <= limit else { return }
    written &+= TextFormat.decimal(Int64(value), to: target + written)
  }

  /// `0x` and `width` lowercase hex digits.
  @inlinable @inline(__always) public mutating func hexPrefixed(_ value: UInt64, width: Int) {
    guard written &+ width &+ 2 <= limit else { return }
    written &+= TextFormat.hexPrefixed(value, width: width, to: target + written)
  }

  /// Bytes as lowercase hex, `separator` between them.
  @inlinable public mutating func hexBytes(_ source: ByteView, separator: UInt8?) {
    guard written &+ source.count &* 3 <= limit else { return }
    written &+= TextFormat.hexBytes(source.buffer, separator: separator, to: target + written)
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

/// The writers behind `TextComposer` and `OutputBuffer`: each stores from `target` on and
/// returns how many bytes it wrote; `maximumDecimal` and `maximumReal` say how much room to make.
extension TextFormat {

  /// "00" through "99" back to back: a literal, so reading it needs no lazy initialization.
  // Safety: a literal's 200 bytes, static; read at `2 * pair` and `2 * pair + 1` for a pair below 100.
  @inlinable @inline(__always) static var digitPairs: UnsafePointer<UInt8> {
    let pairs: StaticString = "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"
    return pairs.utf8Start
  }

  /// Numbers under 100 (most of what detail lines show: sequence bits, channels, signals) are
  /// written where they are asked for; longer ones by a call.
  // Safety: the caller made room for `maximumDecimal` bytes at `target` (as for each writer here).
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

  // Safety: room for `maximumDecimal` bytes; `digitCount` digits are stored, the last first.
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

  // Safety: room for `maximumDecimal` bytes: a sign and at most 19 digits.
  @inlinable @inline(__always) package static func decimal(_ value: Int64, to target: UnsafeMutablePointer<UInt8>) -> Int {
    guard value < 0 else { return decimal(UInt64(value), to: target) }
    target[0] = UInt8(ascii: "-")
    return 1 &+ decimal(value.magnitude, to: target + 1)
  }

  /// Exactly `width` digits, zero-padded (fractions of seconds, decimals).
  // Safety: the caller made room for `width` bytes.
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

  /// The low `count` hex digits of `value`, lowercase, no prefix.
  // Safety: the caller made room for `digits` bytes; nibbles index the 16-byte table below.
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
  // Safety: a literal's 16 bytes, static.
  @inlinable @inline(__always) static var lowercaseHexDigits: UnsafePointer<UInt8> {
    let digits: StaticString = "0123456789abcdef"
    return digits.utf8Start
  }

  /// `AA:BB:CC:DD:EE:FF`, uppercase, most significant byte first: 17 bytes.
  // Safety: the caller made room for 17 bytes.
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
  // Safety: the caller made room for `width + 2` bytes.
  @inlinable package static func hexPrefixed(_ value: UInt64, width: Int, to target: UnsafeMutablePointer<UInt8>) -> Int {
    target[0] = UInt8(ascii: "0")
    target[1] = UInt8(ascii: "x")
    return 2 &+ hexDigits(value, count: width, to: target + 2)
  }

  /// Lowercase hex of `source`, with `separator` between bytes when given: at most
  /// `3 * source.count` bytes.
  // Safety: the caller lends `source` and made room for `3 * source.count` bytes.
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
  // Safety: the caller made room for `maximumReal` bytes.
  @inlinable package static func real(_ value: Double, places: UInt8, to target: UnsafeMutablePointer<UInt8>) -> Int? {
    guard let fixed = FixedDecimal(value, places: places) else { return nil }
    return self.fixed(fixed, to: target)
  }

  /// A number already cut to its decimals.
  // Safety: the caller made room for `maximumReal` bytes: a sign, 19 digits, a point and 9.
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
