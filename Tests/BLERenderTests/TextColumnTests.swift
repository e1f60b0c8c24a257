import Testing
import BLECore
import BLEDecoder
import BLERender

/// The header line's columns: fixed widths, times relative to the capture, cutting at a width.
@Suite struct TextColumnTests {
  /// A Reset command at `micros`.
  func reset(at micros: Int64) -> CaptureRecord {
    CaptureRecord(timestamp: micros, direction: .hostToController, kind: .command, bytes: [0x03, 0x0C, 0x00])
  }

  /// Where "Reset" starts on each header line.
  func titleColumns(_ text: String) -> [Int] {
    text.split(separator: "\n").map { line in line.distance(from: line.startIndex, to: line.range(of: "Reset")!.lowerBound) }
  }

  @Test(arguments: [TimeDisplay.relative, .delta])
  func timeColumnKeepsItsWidthUpTo99999Seconds(time: TimeDisplay) {
    // 0 s, then past 9, 99, 999, 9999 s and up to 99999.999999 s (from the first frame).
    let times: [Int64] = [0, 9_999_999, 10_000_001, 100_000_002, 1_000_000_003, 10_000_000_004, 99_999_999_999]
    var renderer = TextRenderer(time: time, details: false)
    let text = render(records: times.map(reset(at:)), with: &renderer)
    let columns = titleColumns(text)
    #expect(columns.count == times.count)
    #expect(Set(columns).count == 1, "\(text)")
    if time == .relative {
      #expect(text.contains(" 99999.999999 tx "))
      #expect(text.contains("      9.999999 tx "))
    } else {
      #expect(text.contains(" 89999.999995 tx "))
    }
  }

  @Test func negativeDeltasAndAbsoluteTimesKeepTheColumnToo() {
    // Out of order: the second record is 9999.5 s before the first.
    var delta = TextRenderer(time: .delta, details: false)
    let backwards = render(records: [reset(at: 10_000_000_000), reset(at: 500_000), reset(at: 600_000)], with: &delta)
    #expect(backwards.contains(" -9999.500000 tx "))
    #expect(Set(titleColumns(backwards)).count == 1, "\(backwards)")
    var absolute = TextRenderer(time: .absolute, details: false)
    let utc = render(records: [reset(at: 1_764_480_000_000_001), reset(at: 1_764_480_012_345_678)], with: &absolute)
    #expect(utc.contains("2025-11-30 05:20:12.345678 tx "))
    #expect(Set(titleColumns(utc)).count == 1)
  }

  @Test func frameNumbersUpTo99999KeepTheColumn() {
    var out = OutputBuffer(fd: nil)
    var renderer = TextRenderer(details: false)
    var dissector = Dissector()
    var frame = DissectedFrame()
    for number in [1, 9, 10, 999, 1_000, 99_999] {
      dissector.dissect(reset(at: 0), number: number, into: &frame)
      renderer.render(&frame, to: &out)
    }
    #expect(Set(titleColumns(out.text)).count == 1, "\(out.text)")
    #expect(out.text.contains("#99999     0.000000 tx CMD   Reset\n"))
  }

  /// Frames the filter hides still move the clock: relative times count from the capture's
  /// first frame and deltas from the previous frame captured.
  @Test func skippedFramesSetTheTimeBase() {
    let records = [reset(at: 1_000_000), reset(at: 3_000_000), reset(at: 3_500_000)]
    for (time, expected) in [(TimeDisplay.relative, " 2.500000 "), (.delta, " 0.500000 ")] {
      var out = OutputBuffer(fd: nil)
      var renderer = TextRenderer(time: time, details: false)
      var dissector = Dissector()
      var frame = DissectedFrame()
      for (index, record) in records.enumerated() {
        dissector.dissect(record, number: index + 1, into: &frame)
        if index < 2 { renderer.skip(&frame) } else { renderer.render(&frame, to: &out) }
      }
      #expect(out.text.hasPrefix("#3"))
      #expect(out.text.contains(expected), "\(time): \(out.text)")
    }
  }

  @Test func longHeaderLinesAreCutAtTheLineWidth() throws {
    let records = try readAll(path: capturePath("hr_strap_session.btsnoop"))
    var full = TextRenderer(details: false)
    let fullLines = render(records: records, with: &full).split(separator: "\n")
    for width in [60, 100] {
      var cut = TextRenderer(details: false, lineWidth: width)
      let cutLines = render(records: records, with: &cut).split(separator: "\n")
      #expect(cutLines.count == fullLines.count)
      for (long, short) in zip(fullLines, cutLines) {
        // Too wide: the peer's address goes first ("conn 1" stays), then the line is cut.
        let address = " D0:B1:ED:00:48:52"
        let narrower = long.count > width && long.contains("conn 1" + address)
          ? long.replacingOccurrences(of: "conn 1" + address, with: "conn 1") : String(long)
        if narrower.count <= width {
          #expect(short == narrower)
        } else {
          // Exactly the width, ending in "…", and what is left is the start of the narrower line.
          #expect(short.count == width, "\(short)")
          #expect(short.hasSuffix("…"))
          #expect(narrower.hasPrefix(short.dropLast()))
        }
      }
    }
  }

  @Test func cuttingCountsCharactersNotBytesNorColours() throws {
    let records = try readAll(path: capturePath("hr_strap_session.btsnoop"))
    var coloured = TextRenderer(color: true, details: false, lineWidth: 100)
    let lines = render(records: records, with: &coloured).split(separator: "\n")
    for line in lines {
      // Without the colour sequences, at most 100 characters (the en dash of "0x0001–0xffff" is one).
      let plain = line.replacing(/\u{1B}\[[0-9;]*m/, with: "")
      #expect(plain.count <= 100, "\(plain)")
      if plain.hasSuffix("…") { #expect(line.hasSuffix("…")) }
    }
    #expect(lines.contains { $0.contains("–") })
  }
}
