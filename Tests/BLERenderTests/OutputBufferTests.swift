import Foundation
import Testing
import BLECore
import BLEDecoder
import BLERender
import BLETestSupport

@Suite struct OutputBufferTests {
  @Test func staticNamesAreEscapedWhereverTheSpecialByteFalls() {
    // The fast path checks eight bytes at a time: put the special byte in every lane and the tail.
    let cases: [(Name, String)] = [
      ("plain name of twenty", #""plain name of twenty""#),
      ("01234567\"abc", #""01234567\"abc""#),
      ("0123456\"", #""0123456\"""#),
      ("\"", #""\"""#),
      ("abcdefg\\h", #""abcdefg\\h""#),
      ("abcdefghijklmno\u{01}", #""abcdefghijklmno\u0001""#),
      ("tab\tin the middle", #""tab\tin the middle""#),
      ("NetEase（Hangzhou）Network", "\"NetEase（Hangzhou）Network\""),
    ]
    for (name, expected) in cases {
      var out = OutputBuffer(fd: nil)
      out.jsonString(name)
      #expect(out.text == expected, "\(name)")
    }
    // Names found plain are remembered; the second time they are copied at once. Every case
    // twice in one buffer, the remembered and the escaped alike.
    var out = OutputBuffer(fd: nil)
    for (name, _) in cases + cases { out.jsonString(name) }
    #expect(out.text == (cases + cases).map(\.1).joined())
  }

  @Test func internedNamesAreWrittenAndEscapedLikeLiterals() throws {
    // Names from a user's decoder file: looked up once, then from the buffer's own copy.
    let plain = try #require(NameTable.intern("heart_rate_0123456789"))
    let quoted = try #require(NameTable.intern("say \"hi\"\tthere"))
    var out = OutputBuffer(fd: nil)
    for _ in 0..<2 {
      out.append(plain)
      out.byte(UInt8(ascii: " "))
      out.jsonString(plain)
      out.jsonString(quoted)
      out.uncheckedAppend(quoted)  // an interned name brings its own check for room
    }
    // The tab is escaped in the text too: a name is one line.
    let once = #"heart_rate_0123456789 "heart_rate_0123456789""say \"hi\"\tthere"say "hi"\tthere"#
    #expect(out.text == once + once)
    // Header words take them too.
    var line = SummaryLine()
    line.append(.text(plain))
    line.append(.text(" "))
    line.append(.text(quoted))
    line.append(.text(plain))
    #expect(line.text == "heart_rate_0123456789 say \"hi\"\tthereheart_rate_0123456789")
  }

  @Test func copiesOfEveryShortLengthAreExact() {
    // Short copies move overlapping words: check every length around the word sizes, after
    // every starting offset, against the text itself.
    let source = Array("abcdefghijklmnopqrstuvwxyz0123456789ABCD")
    for lead in 0..<3 {
      for length in 0...source.count {
        var out = OutputBuffer(fd: nil)
        for _ in 0..<lead { out.byte(UInt8(ascii: "-")) }
        let text = String(source[0..<length])
        out.append(string: text)
        out.byte(UInt8(ascii: "|"))
        #expect(out.text == String(repeating: "-", count: lead) + text + "|", "lead \(lead) length \(length)")
      }
    }
  }

  /// `hr` writes RR intervals from their exact decimal: for every raw value it is what writing
  /// the Double gives, and what Swift prints for it (the shortest form that reads back).
  @Test func exactRRMillisecondsMatchTheDouble() {
    var exact = OutputBuffer(fd: nil)
    var double = OutputBuffer(fd: nil)
    var standard = ""
    for raw in UInt16.min...UInt16.max {
      exact.fixed(HeartRateMeasurement.exactMilliseconds(raw))
      exact.byte(0x20)
      double.double(HeartRateMeasurement.milliseconds(raw))
      double.byte(0x20)
      standard += "\(HeartRateMeasurement.milliseconds(raw)) "
    }
    #expect(exact.text == double.text)
    #expect(exact.text == standard)
    #expect(exact.text.hasPrefix("0.0 0.9765625 1.953125 2.9296875 "))
  }

  /// JSON reals are written digit by digit into the buffer: the same text as rounding to nine
  /// decimals and printing with the standard library's Strings, for values of every magnitude,
  /// sign and tie.
  @Test func realsMatchRoundingToNineDecimals() {
    func reference(_ value: Double) -> String {
      guard value.isFinite else { return "null" }
      if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) + ".0" }
      guard abs(value) < 1e9 else { return value.description }
      let scaled = Int64((abs(value) * 1e9).rounded())
      var fraction = String(scaled % 1_000_000_000)
      fraction = String(repeating: "0", count: 9 - fraction.count) + fraction
      while fraction.hasSuffix("0") { fraction.removeLast() }
      return (value < 0 ? "-" : "") + String(scaled / 1_000_000_000) + "." + (fraction.isEmpty ? "0" : fraction)
    }
    var generator = SeededGenerator(seed: 0x7EA1)
    var values: [Double] = [
      0, -0.0, 1, -1, 0.5, -0.5, 1e-9, 5e-10, 4.9e-10, -1e-12, 1e9, 1e9 - 1e-6, -999_999_999.999_999_9, 1e15, 1e15 - 1,
      9.5e14, 1e300, -1e300, .infinity, -.infinity, .nan, .leastNonzeroMagnitude, .ulpOfOne, 123.456_789_012_5, 0.1, 0.2, 0.3,
    ]
    for raw in stride(from: 0, through: 65535, by: 7) { values.append(HeartRateMeasurement.milliseconds(UInt16(raw))) }
    for _ in 0..<20_000 {
      let magnitude = Double.random(in: 0..<1, using: &generator) * pow(10, Double(Int.random(in: -12...16, using: &generator)))
      values.append(Bool.random(using: &generator) ? -magnitude : magnitude)
      // Ties at the ninth decimal and values a hair either side.
      let tie = (Double(Int.random(in: 0..<2_000_000_000, using: &generator)) + 0.5) / 1e9
      values.append(contentsOf: [tie, tie.nextUp, tie.nextDown, -tie])
    }
    for value in values {
      var out = OutputBuffer(fd: nil)
      out.double(value)
      guard out.text == reference(value) else {
        Issue.record("\(value): \(out.text) against \(reference(value))")
        return
      }
    }
  }

  @Test func decimalsMatchTheStandardLibrary() {
    var generator = SeededGenerator(seed: 0xD1617)
    var values: [UInt64] = [0, 9, 10, 99, 100, 101, 999, 1000, 65535, UInt64.max, UInt64.max - 1]
    for _ in 0..<2000 { values.append(UInt64.random(in: 0...UInt64.max, using: &generator) >> UInt64.random(in: 0..<64, using: &generator)) }
    for value in values {
      var out = OutputBuffer(fd: nil)
      out.decimal(value)
      #expect(out.text == String(value))
    }
    var negative = OutputBuffer(fd: nil)
    negative.decimal(Int64.min)
    #expect(negative.text == String(Int64.min))
  }

  @Test func realsAreWrittenExactlyEnough() {
    let cases: [(Double, String)] = [(30, "30.0"), (812.5, "812.5"), (820.3125, "820.3125"), (0.625, "0.625"), (-1.25, "-1.25"), (.nan, "null")]
    for (value, expected) in cases {
      var out = OutputBuffer(fd: nil)
      out.double(value)
      #expect(out.text == expected)
    }
  }
}
