#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import BLECore

/// Owns the memory of an `OutputBuffer` (freed when the last copy goes away).
// Safety: Sendable so a buffer can be handed to another thread; one thread at a time writes it.
final class OutputStorage: @unchecked Sendable {
  // Safety: allocated here (and by `OutputBuffer.grow`), freed in `deinit` or when replaced.
  var pointer: UnsafeMutablePointer<UInt8>
  /// Static names already found to need no JSON escaping, by address and length: a small
  /// direct-mapped cache, since the same few names are written on every frame.
  // Safety: `plainNameSlots` words, allocated and zeroed here, freed in `deinit`.
  let plainNames: UnsafeMutablePointer<UInt>
  static let plainNameSlotBits = 8
  static let plainNameSlots = 1 << plainNameSlotBits
  init(capacity: Int) {
    pointer = .allocate(capacity: capacity)
    plainNames = .allocate(capacity: Self.plainNameSlots)
    plainNames.initialize(repeating: 0, count: Self.plainNameSlots)
  }
  deinit {
    pointer.deallocate()
    plainNames.deallocate()
  }
}

/// The one buffered writer all output goes through: bytes are appended to a block of memory and
/// written out in large blocks. It is a struct passed `inout` and appends go straight to memory,
/// so the hot path has no reference counting, uniqueness or exclusivity checks. Copies share the
/// memory: keep one owner (the CLI context, a test) and pass it `inout`.
/// A closed pipe (`bledissect FILE | head`) sets `isClosed` instead of failing.
package struct OutputBuffer {
  let storage: OutputStorage
  // Safety: `storage`'s, kept alive by it; slots are indexed by a hash shifted below their count.
  let plainNames: UnsafeMutablePointer<UInt>
  // Safety: `storage.pointer`, `capacity` bytes; every write is within `reserve`d room (below).
  @usableFromInline var base: UnsafeMutablePointer<UInt8>
  @usableFromInline var capacity: Int
  /// Bytes appended and not yet written.
  package private(set) var count = 0
  let fd: Int32?
  let flushThreshold: Int
  package private(set) var isClosed = false
  package private(set) var writeError: String?
  /// The texts of the interned names written so far (a user's decoder names its fields).
  var names = NameCache()

  /// Writes to `fd` (1 for standard output); with nil, collects everything in memory (tests).
  package init(fd: Int32?, flushThreshold: Int = 64 * 1024) {
    self.fd = fd
    self.flushThreshold = flushThreshold
    capacity = flushThreshold + 64 * 1024
    storage = OutputStorage(capacity: capacity)
    base = storage.pointer
    plainNames = storage.plainNames
  }

  /// Everything appended and not yet flushed.
  package var bytes: [UInt8] { withAppendedBytes(since: 0) { Array($0) } }
  package var text: String { withAppendedBytes(since: 0) { String(decoding: $0, as: UTF8.self) } }

  /// Lends the bytes appended since `start` (an earlier `count`) and not yet flushed, without
  /// copying them: checks of what a renderer wrote (fuzz targets, tests), a batch's hand-over.
  package func withAppendedBytes<Result>(since start: Int, _ body: (ByteView) -> Result) -> Result {
    let from = min(max(start, 0), count)
    // Safety: `from..<count` were written, and `self` keeps the storage alive while `body` runs.
    return body(ByteView.pinned(UnsafeBufferPointer(start: base + from, count: count - from), count: count - from))
  }

  /// Makes room for `extra` more bytes.
  @inline(__always) package mutating func reserve(_ extra: Int) {
    if count &+ extra > capacity { grow(count &+ extra) }
  }

  @inline(never) mutating func grow(_ needed: Int) {
    var newCapacity = capacity * 2
    while newCapacity < needed { newCapacity *= 2 }
    // Safety: the `count` bytes written fit the larger block; the old one is freed after the copy.
    let fresh = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
    fresh.update(from: base, count: count)
    storage.pointer.deallocate()
    storage.pointer = fresh
    base = fresh
    capacity = newCapacity
  }

  /// Forgets what was appended and not flushed (an in-memory buffer reused line after line).
  package mutating func removeAll() { count = 0 }

  @inline(__always) package mutating func flushIfFull() {
    if count >= flushThreshold, fd != nil { flush() }
  }

  package mutating func flush() {
    guard let fd, count > 0 else { return }
    defer { count = 0 }
    if isClosed { return }
    if let code = SystemWrite.all(fd, base, count: count) {
      if code != EPIPE { writeError = SystemWrite.reason(code) }
      isClosed = true
    }
  }

  // MARK: Appending

  @inline(__always) package mutating func byte(_ value: UInt8) {
    reserve(1)
    base[count] = value
    count += 1
  }

  @inline(__always) package mutating func append(_ name: Name) {
    if let text = name.staticString {
      raw(text.utf8Start, text.utf8CodeUnitCount)
    } else {
      appendOutOfLine(name)
    }
  }

  /// A name that is not a literal's bytes (an interned name), with its own check for room.
  @inline(never) mutating func appendOutOfLine(_ name: Name) {
    // A user's decoder named it: one line, whatever it holds.
    let text = names.text(of: name)
    append(string: Escaping.containsControl(text) ? Escaping.escaped(text, .line) : text)
  }

  // Safety: the caller lends `length` bytes at `source`; room for them is reserved first.
  @inline(__always) mutating func raw(_ source: UnsafePointer<UInt8>, _ length: Int) {
    reserve(length)
    uncheckedRaw(source, length)
  }

  // Unchecked appends: the caller has reserved room (`reserve`) for everything it writes with
  // them. They spare the hottest writer (JSON members) a capacity check per piece.

  @inline(__always) package mutating func uncheckedByte(_ value: UInt8) {
    base[count] = value
    count &+= 1
  }

  /// Static text of our own (keys, punctuation); the caller reserved its length. An interned
  /// name (a user's decoder) is appended with its own check.
  @inline(__always) package mutating func uncheckedAppend(_ name: Name) {
    if let text = name.staticString {
      uncheckedAppend(literal: text)
    } else {
      appendOutOfLine(name)
    }
  }

  @inline(__always) package mutating func uncheckedAppend(literal text: StaticString) {
    uncheckedRaw(text.utf8Start, text.utf8CodeUnitCount)
  }

  // Safety: the caller reserved `length` bytes of room and lends `length` bytes at `source`.
  @inline(__always) mutating func uncheckedRaw(_ source: UnsafePointer<UInt8>, _ length: Int) {
    let target = UnsafeMutableRawPointer(base + count)
    let from = UnsafeRawPointer(source)
    // Short keys and names (most of what is written): two overlapping word copies beat both a
    // byte loop and a call to memcpy.
    if length >= 8 && length <= 16 {
      target.storeBytes(of: from.loadUnaligned(as: UInt64.self), as: UInt64.self)
      (target + (length - 8)).storeBytes(of: (from + (length - 8)).loadUnaligned(as: UInt64.self), as: UInt64.self)
    } else if length >= 4 && length < 8 {
      target.storeBytes(of: from.loadUnaligned(as: UInt32.self), as: UInt32.self)
      (target + (length - 4)).storeBytes(of: (from + (length - 4)).loadUnaligned(as: UInt32.self), as: UInt32.self)
    } else if length > 0 && length < 4 {
      base[count] = source[0]
      base[count + length / 2] = source[length / 2]
      base[count + length - 1] = source[length - 1]
    } else if length > 16 && length <= 32 {
      // Names and addresses (17 to 32 bytes): four overlapping word copies, no call.
      target.storeBytes(of: from.loadUnaligned(as: UInt64.self), as: UInt64.self)
      (target + 8).storeBytes(of: (from + 8).loadUnaligned(as: UInt64.self), as: UInt64.self)
      (target + (length - 16)).storeBytes(of: (from + (length - 16)).loadUnaligned(as: UInt64.self), as: UInt64.self)
      (target + (length - 8)).storeBytes(of: (from + (length - 8)).loadUnaligned(as: UInt64.self), as: UInt64.self)
    } else if length > 32 {
      target.copyMemory(from: from, byteCount: length)
    }
    count &+= length
  }

  // MARK: Detail lines

  /// Starts a detail line: `indent` spaces, `label` and ": ", then makes room for `room` more
  /// bytes and the newline, so the value and the line's end can be written unchecked. A literal
  /// label with an indent of at most 16 (nearly every line) costs one check for room.
  @inline(__always) package mutating func lineStart(indent: Int, label: Name, room: Int) {
    guard let text = label.staticString, indent >= 0, indent <= 16 else { return lineStartOutOfLine(indent: indent, label: label, room: room) }
    let length = text.utf8CodeUnitCount
    reserve(16 &+ length &+ 2 &+ room &+ 1)
    uncheckedSpaces(indent)
    uncheckedRaw(text.utf8Start, length)
    // Safety: within the room reserved above (2 bytes of `length + 2`).
    UnsafeMutableRawPointer(base + count).storeBytes(of: UInt16(0x203A).littleEndian, as: UInt16.self)  // ": "
    count &+= 2
  }

  /// `lineStart` for an interned label or a deep indent, part by part.
  @inline(never) mutating func lineStartOutOfLine(indent: Int, label: Name, room: Int) {
    spaces(indent)
    append(label)
    append(": ")
    reserve(room &+ 1)
  }

  /// A decimal into room the caller made (`lineStart`, `TextFormat.maximumDecimal` bytes).
  @inline(__always) package mutating func uncheckedDecimal(_ value: UInt64) {
    count &+= TextFormat.decimal(value, to: base + count)
  }

  @inline(__always) package mutating func uncheckedDecimal(_ value: Int64) {
    count &+= TextFormat.decimal(value, to: base + count)
  }

  /// `0x` and `width` hex digits into room the caller made (`width + 2` bytes).
  @inline(__always) package mutating func uncheckedHexPrefixed(_ value: UInt64, width: Int) {
    count &+= TextFormat.hexPrefixed(value, width: width, to: base + count)
  }

  /// Text, ours or not: control characters other than the newlines that end its lines are
  /// shown escaped (`Escaping`, line style), so that no name, note or file name from outside
  /// reaches a terminal raw. Our own colour sequences are static names (`append(_: Name)`).
  package mutating func append(string text: String) {
    let plain = ByteView.pinning(utf8: text) { bytes in
      guard !Escaping.containsControl(utf8: bytes) else { return false }
      append(bytes)
      return true
    }
    if !plain { appendEscapingControls(text) }
  }

  @inline(never) mutating func appendEscapingControls(_ text: String) {
    var first = true
    for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
      if !first { byte(0x0A) }
      first = false
      ByteView.pinning(utf8: Escaping.escaped(line, .line)) { append($0) }
    }
  }

  static let sixteenSpaces: StaticString = "                "

  @inline(__always) package mutating func spaces(_ number: Int) {
    guard number > 0 else { return }
    if number <= 16 {
      // Indents and column padding: two word stores, not a call to memset.
      reserve(16)
      uncheckedSpaces(number)
      return
    }
    manySpaces(number)
  }

  /// Up to 16 spaces into room the caller made for 16: sixteen are stored as two words, of
  /// which `number` are kept.
  @inline(__always) mutating func uncheckedSpaces(_ number: Int) {
    // Safety: the caller reserved 16 bytes; both words are stored within them.
    let target = UnsafeMutableRawPointer(base + count)
    target.storeBytes(of: 0x2020_2020_2020_2020 as UInt64, as: UInt64.self)
    (target + 8).storeBytes(of: 0x2020_2020_2020_2020 as UInt64, as: UInt64.self)
    count &+= number
  }

  @inline(never) mutating func manySpaces(_ number: Int) {
    reserve(number)
    (base + count).update(repeating: 0x20, count: number)
    count += number
  }

  /// Right-aligns what was appended since `start` in `width` columns (ASCII), moving it right
  /// and filling with spaces; longer text is left as it is.
  package mutating func alignRight(from start: Int, width: Int) {
    let length = count &- start
    guard start >= 0, length >= 0, length < width else { return }
    let pad = width - length
    reserve(pad)
    (base + start + pad).update(from: base + start, count: length)
    (base + start).update(repeating: 0x20, count: pad)
    count += pad
  }

  /// The columns the text appended since `start` takes: Unicode scalars, SGR colour sequences
  /// (`ESC [ ... m`) taking none.
  package func columns(from start: Int) -> Int { scanColumns(from: start, cutAfter: nil).columns }

  /// Takes the bytes of `range` (written since the last flush) out, the rest moving up.
  package mutating func remove(_ range: Range<Int>) {
    guard range.lowerBound >= 0, range.upperBound <= count, !range.isEmpty else { return }
    // Safety: both regions lie within the `count` bytes written; memmove allows the overlap.
    memmove(base + range.lowerBound, base + range.upperBound, count - range.upperBound)
    count -= range.count
  }

  /// Shortens the line appended since `start` to at most `columns` columns, its end replaced by
  /// "…". Columns are counted as Unicode scalars (what the text renderer writes is not wide);
  /// SGR colour sequences (`ESC [ ... m`) take none and are kept whole.
  package mutating func clipLine(from start: Int, columns: Int, resetColour: Bool) {
    guard columns > 1 else { return }
    // Where the line is cut if it is too long: after `columns - 1` columns, room for "…".
    let scan = scanColumns(from: start, cutAfter: columns - 1, stopPast: columns)
    guard scan.columns > columns, let cut = scan.cut else { return }
    count = cut
    if resetColour { append("\u{1B}[0m") }
    append("…")
  }

  /// Counts the columns from `start` (stopping once past `stopPast`), and where the column after
  /// the first `cutAfter` starts.
  private func scanColumns(from start: Int, cutAfter: Int?, stopPast: Int = Int.max) -> (columns: Int, cut: Int?) {
    guard start >= 0, start <= count else { return (0, nil) }
    var index = start
    var used = 0
    var cut: Int?
    while index < count {
      let byte = base[index]
      if byte == 0x1B {
        // A colour sequence: skip to its final byte.
        index += 1
        while index < count, !(0x40...0x7E).contains(base[index]) || base[index] == UInt8(ascii: "[") { index += 1 }
        index += 1
        continue
      }
      if byte & 0xC0 != 0x80 {
        if used == cutAfter { cut = index }
        used += 1
        if used > stopPast { break }
      }
      index += 1
    }
    return (used, cut)
  }

  // Numbers: the digits come from `TextFormat` (shared with the header words' `SummaryLine`).

  package mutating func decimal(_ value: UInt64) {
    reserve(TextFormat.maximumDecimal)
    count &+= TextFormat.decimal(value, to: base + count)
  }

  package mutating func decimal(_ value: Int64) {
    reserve(TextFormat.maximumDecimal)
    count &+= TextFormat.decimal(value, to: base + count)
  }

  @inline(__always) package mutating func decimal(_ value: Int) { decimal(Int64(value)) }

  /// Exactly `width` digits, zero-padded (fractions of seconds).
  package mutating func zeroPadded(_ value: UInt64, width: Int) {
    reserve(width)
    count &+= TextFormat.zeroPadded(value, width: width, to: base + count)
  }

  /// `zeroPadded` into room the caller made.
  @inline(__always) mutating func uncheckedZeroPadded(_ value: UInt64, width: Int) {
    count &+= TextFormat.zeroPadded(value, width: width, to: base + count)
  }

  @inline(__always) static func hexDigit(_ nibble: UInt8, upper: Bool = false) -> UInt8 {
    TextFormat.hexDigit(nibble, upper: upper)
  }

  package mutating func hexPrefixed(_ value: UInt64, width: Int) {
    reserve(width + 2)
    count &+= TextFormat.hexPrefixed(value, width: width, to: base + count)
  }

  /// Lowercase hex of `data`, optionally with a separator between bytes.
  package mutating func hexBytes(_ data: ArraySlice<UInt8>, separator: UInt8? = nil) {
    ByteView.pinning(data) { hexBytes($0, separator: separator) }
  }

  package mutating func hexBytes(_ source: ByteView, separator: UInt8? = nil) {
    guard !source.isEmpty else { return }
    reserve(source.count * 3)
    count &+= TextFormat.hexBytes(source.buffer, separator: separator, to: base + count)
  }

  /// Appends lent bytes as they are (a batch copying a file's output, header words).
  package mutating func append(_ bytes: ByteView) {
    guard !bytes.isEmpty, let start = bytes.buffer.baseAddress else { return }
    raw(start, bytes.count)
  }

  /// A UUID as `2a37` (16-bit), 8 digits (32-bit) or dashed lowercase (128-bit), without a String.
  package mutating func uuid(_ uuid: BluetoothUUID) {
    switch uuid.width {
    case 2: hexDigits(uuid.high >> 32, count: 4)
    case 4: hexDigits(uuid.high >> 32, count: 8)
    default:
      hexDigits(uuid.high >> 32, count: 8)
      byte(UInt8(ascii: "-"))
      hexDigits(uuid.high >> 16, count: 4)
      byte(UInt8(ascii: "-"))
      hexDigits(uuid.high, count: 4)
      byte(UInt8(ascii: "-"))
      hexDigits(uuid.low >> 48, count: 4)
      byte(UInt8(ascii: "-"))
      hexDigits(uuid.low, count: 12)
    }
  }

  /// The low `count` hex digits of `value`, lowercase, no prefix.
  mutating func hexDigits(_ value: UInt64, count digits: Int) {
    reserve(digits)
    count &+= TextFormat.hexDigits(value, count: digits, to: base + count)
  }

  /// An address's text, `AA:BB:CC:DD:EE:FF` (most significant byte first), kept to be written
  /// again.
  package static func addressText(_ address: BDAddr) -> PackedText {
    var text = PackedText()
    text.count = 17
    // Safety: 17 bytes written into the tuple's 24.
    withUnsafeMutableBytes(of: &text.bytes) { bytes in
      var index = 0
      for position in stride(from: 5, through: 0, by: -1) {
        let value = UInt8(truncatingIfNeeded: address.rawValue >> (8 * UInt64(position)))
        bytes[index] = hexDigit(value >> 4, upper: true)
        bytes[index + 1] = hexDigit(value & 0x0F, upper: true)
        index += 2
        if position > 0 {
          bytes[index] = UInt8(ascii: ":")
          index += 1
        }
      }
    }
    return text
  }

  /// Writes text kept in a `PackedText`.
  @inline(__always) package mutating func append(_ text: PackedText) {
    var copy = text
    // Safety: `count` is at most 24, the tuple's size; the copy lives for the call.
    withUnsafeBytes(of: &copy.bytes) { raw(
      $0.baseAddress!.assumingMemoryBound(to: UInt8.self), text.count) }
  }

  /// `AA:BB:CC:DD:EE:FF`, most significant byte first.
  package mutating func address(_ address: BDAddr) { append(Self.addressText(address)) }

  /// A JSON number for a real value: integral values as `30.0`, others with up to nine
  /// decimals, trailing zeros dropped (exact for the binary fractions decoders produce, such as
  /// 1/1024 s in ms or 1.25 ms steps), without building a String.
  package mutating func double(_ value: Double) {
    guard value.isFinite else {
      append("null")
      return
    }
    if value == value.rounded(), abs(value) < 1e15 {
      decimal(Int64(value))
      append(".0")
      return
    }
    guard abs(value) < 1e9 else {
      append(string: value.description)
      return
    }
    let scaled = Int64((abs(value) * 1e9).rounded())
    if value < 0 { byte(UInt8(ascii: "-")) }
    decimal(UInt64(scaled / 1_000_000_000))
    var fraction = scaled % 1_000_000_000
    var digits = 9
    while digits > 0 && fraction % 10 == 0 {
      fraction /= 10
      digits -= 1
    }
    if digits > 0 {
      byte(UInt8(ascii: "."))
      zeroPadded(UInt64(fraction), width: digits)
    } else {
      append(".0")
    }
  }

  /// `value` rounded to `places` decimals, trailing zeros dropped (`812.5`, `72`).
  package mutating func real(_ value: Double, places: UInt8) {
    reserve(TextFormat.maximumReal)
    if let written = TextFormat.real(value, places: places, to: base + count) {
      count &+= written
    } else {
      append(string: value.description)  // 1e+20, inf, nan: too large for fixed decimals
    }
  }

  /// Writes a line's parts into room made once (`TextComposer`): for rows written from outside
  /// this module, where each of these methods is a call.
  package mutating func compose(maximumBytes: Int, _ body: (inout TextComposer) -> Void) {
    reserve(maximumBytes)
    var composer = TextComposer(target: base + count, limit: maximumBytes)
    body(&composer)
    count &+= composer.count
  }

  /// A decimal as its parts say (`fraction` zero-padded to `digits`).
  package mutating func fixed(_ value: FixedDecimal) {
    reserve(TextFormat.maximumReal)
    count &+= TextFormat.fixed(value, to: base + count)
  }

  /// `value` with exactly two decimals.
  package mutating func fixed2(_ value: Double) {
    guard let fixed = FixedDecimal(value, places: 2) else {
      append(string: value.description)
      return
    }
    if fixed.negative { byte(UInt8(ascii: "-")) }
    decimal(fixed.whole)
    byte(UInt8(ascii: "."))
    var hundredths = fixed.fraction
    for _ in fixed.digits..<2 { hundredths &*= 10 }
    zeroPadded(hundredths, width: 2)
  }

  /// A JSON string literal: quotes, backslashes and control characters escaped.
  package mutating func jsonString(_ text: String) {
    var copy = text
    copy.withUTF8 { jsonString(utf8: $0) }
  }

  /// An interned name as a JSON string (checked as a literal is, not remembered).
  @inline(never) mutating func jsonStringOutOfLine(_ name: Name) {
    var text = names.text(of: name)
    // A user's name: through the full escaper (the fast check knows no C1 controls).
    text.withUTF8 { jsonString(utf8: $0) }
  }

  // Safety: room for the worst case (6 bytes a byte, 2 quotes) is reserved before any write.
  mutating func jsonString(utf8: UnsafeBufferPointer<UInt8>) {
    reserve(utf8.count * 6 + 2)
    var index = count
    base[index] = UInt8(ascii: "\"")
    index += 1
    var skipNext = false
    for (position, value) in utf8.enumerated() {
      if skipNext {
        skipNext = false
        continue
      }
      switch value {
      case UInt8(ascii: "\""), UInt8(ascii: "\\"):
        base[index] = UInt8(ascii: "\\")
        base[index + 1] = value
        index += 2
      case 0x0A, 0x0D, 0x09:
        base[index] = UInt8(ascii: "\\")
        base[index + 1] = value == 0x0A ? UInt8(ascii: "n") : (value == 0x0D ? UInt8(ascii: "r") : UInt8(ascii: "t"))
        index += 2
      case 0..<0x20, 0x7F:
        for (offset, character) in "\\u00".utf8.enumerated() { base[index + offset] = character }
        base[index + 4] = Self.hexDigit(value >> 4)
        base[index + 5] = Self.hexDigit(value & 0x0F)
        index += 6
      case 0xC2 where position + 1 < utf8.count && (0x80...0x9F).contains(utf8[position + 1]):
        // A C1 control (U+0080–U+009F): escaped as the other controls are; its second byte
        // is written here.
        for (offset, character) in "\\u00".utf8.enumerated() { base[index + offset] = character }
        let second = utf8[position + 1]
        base[index + 4] = Self.hexDigit(second >> 4)
        base[index + 5] = Self.hexDigit(second & 0x0F)
        index += 6
        skipNext = true
      default:
        base[index] = value
        index += 1
      }
    }
    base[index] = UInt8(ascii: "\"")
    count = index + 1
  }

  /// Whether any of eight bytes is a control character, a quote or a backslash (SWAR).
  @inline(__always) static func needsEscaping(_ word: UInt64) -> Bool {
    let ones: UInt64 = 0x0101_0101_0101_0101
    let highs: UInt64 = 0x8080_8080_8080_8080
    // A byte b < 0x20: (b - 0x20) borrows into its high bit while b's own high bit is clear.
    let control = (word &- ones &* 0x20) & ~word & highs
    let quote = word ^ (ones &* 0x22)
    let backslash = word ^ (ones &* 0x5C)
    let hasQuote = (quote &- ones) & ~quote & highs
    let hasBackslash = (backslash &- ones) & ~backslash & highs
    return control | hasQuote | hasBackslash != 0
  }

  /// `"text"`, for text known to need no escaping.
  // Safety: the caller lends `length` bytes at `start`; room for them and two quotes is reserved.
  @inline(__always) mutating func quoted(_ start: UnsafePointer<UInt8>, _ length: Int) {
    reserve(length &+ 2)
    uncheckedByte(UInt8(ascii: "\""))
    uncheckedRaw(start, length)
    uncheckedByte(UInt8(ascii: "\""))
  }

  /// A name as a JSON string: a literal's bytes through the fast path below, an interned
  /// name's text escaped as any string's.
  @inline(__always) package mutating func jsonString(_ name: Name) {
    if let text = name.staticString { jsonString(literal: text) } else { jsonStringOutOfLine(name) }
  }

  /// A literal's bytes as a JSON string.
  package mutating func jsonString(literal text: StaticString) {
    let start = text.utf8Start
    let length = text.utf8CodeUnitCount
    // A name checked before (same address and length: static text never changes) is copied
    // at once.
    let identity = UInt(bitPattern: start) ^ (UInt(truncatingIfNeeded: length) << 48)
    // Fibonacci hashing: the top bits of the product mix every bit of the address.
    let slot = Int(truncatingIfNeeded: (identity &* 0x9E37_79B9_7F4A_7C15) >> (64 - OutputStorage.plainNameSlotBits))
    // Two slots per name (its own and the one beside it), so two frequent names whose
    // addresses collide do not evict each other: which collide depends on the binary's layout.
    if plainNames[slot] == identity || plainNames[slot ^ 1] == identity {
      quoted(start, length)
      return
    }
    if Self.isPlain(start, length) {
      plainNames[plainNames[slot] == 0 ? slot : slot ^ 1] = identity
      quoted(start, length)
    } else {
      // Safety: a literal's bytes, which live as long as the program.
      jsonString(utf8: UnsafeBufferPointer(start: start, count: length))
    }
  }

  /// Whether a name's bytes need no escaping. Names from our tables almost never do: check
  /// eight bytes at a time for a control character, a quote or a backslash (SWAR).
  // Safety: the caller lends `length` bytes at `start`; each word read lies within them (below).
  @inline(__always) static func isPlain(_ start: UnsafePointer<UInt8>, _ length: Int) -> Bool {
    var index = 0
    while index + 8 <= length {
      // Safety: `index + 8 <= length`.
      if needsEscaping(UnsafeRawPointer(start + index).loadUnaligned(as: UInt64.self)) { return false }
      index += 8
    }
    // The tail: the last eight bytes, overlapping what was checked.
    if index < length && length >= 8 {
      // Safety: `length >= 8`, so the last eight bytes lie within.
      return !needsEscaping(UnsafeRawPointer(start + (length - 8)).loadUnaligned(as: UInt64.self))
    }
    while index < length {
      let value = start[index]
      if value < 0x20 || value == UInt8(ascii: "\"") || value == UInt8(ascii: "\\") { return false }
      index += 1
    }
    return true
  }
}

/// Up to 24 bytes of text held inline (no heap, nothing to retain): cached renderings such as a
/// device address.
package struct PackedText: Sendable {
  var bytes: (UInt64, UInt64, UInt64) = (0, 0, 0)
  var count = 0
  package init() {}

  /// Writes the text's bytes (a row composed at once).
  package func write(to composer: inout TextComposer) {
    var copy = bytes
    // Safety: `count` is at most 24, the tuple's size; the copy lives for the call.
    withUnsafeBytes(of: &copy) { composer.bytes(ByteView.pinned(UnsafeBufferPointer(start: $0.baseAddress!.assumingMemoryBound(to: UInt8.self), count: count), count: count)) }
  }
}
