import BLETestSupport
import Testing

@testable import BLEAnalysis

@Suite struct HeartRatePlotTests {
  /// A device measured at `times`, heart rate and RR intervals from `bpm`.
  static func device(
    _ label: String, times: [Double], bpm: (Double) -> Double, dropouts: [TimeSpan] = [],
    contactLosses: [TimeSpan] = []
  ) -> HeartRatePlot.Device {
    var heartRate = DownsampledSeries()
    var rrIntervals = DownsampledSeries()
    for time in times {
      heartRate.add(time: time, value: bpm(time))
      rrIntervals.add(time: time, value: 60_000 / bpm(time))
    }
    return HeartRatePlot.Device(
      label: label, heartRate: heartRate, rrIntervals: rrIntervals, dropouts: dropouts, contactLosses: contactLosses)
  }

  /// 0…100 s each second, a dropout from 20 to 40 s (no points inside), contact lost from 60 to 70 s.
  static func sessionWithGaps(label: String = "D0:B1:ED:00:48:52 bledissect HR") -> HeartRatePlot.Device {
    device(
      label, times: (0...100).map(Double.init).filter { $0 <= 20 || $0 >= 40 }, bpm: { 70 + $0.truncatingRemainder(dividingBy: 7) },
      dropouts: [TimeSpan(start: 20, end: 40)], contactLosses: [TimeSpan(start: 60, end: 70)])
  }

  @Test func wellFormedWithAxisTitlesAndEscapedLabel() throws {
    let label = #"C4:7C "Polar" <H10> & 'strap'"#
    let svg = HeartRatePlot(title: "Session <1> & more", devices: [Self.sessionWithGaps(), Self.sessionWithGaps(label: label)]).svg()
    let parsed = try #require(ParsedSVG(svg))
    let texts = parsed.all("text").map(\.text)
    #expect(texts.filter { $0 == "time (s)" }.count == 2)
    #expect(texts.filter { $0 == "heart rate (bpm)" }.count == 2)
    #expect(texts.filter { $0 == "RR interval (ms)" }.count == 2)
    #expect(parsed.all("text", class: "device-label").map(\.text) == ["D0:B1:ED:00:48:52 bledissect HR", label])
    #expect(svg.contains("C4:7C &quot;Polar&quot; &lt;H10&gt; &amp; &apos;strap&apos;"))
    #expect(!svg.contains("<H10>"))
    #expect(parsed.all("title").first?.text == "Session <1> & more")
    #expect(parsed.all("script").isEmpty)
    #expect(!svg.contains("@font-face") && !svg.contains("href"))
  }

  @Test func dropoutsAndContactLossesAtTheirTimes() throws {
    let parsed = try #require(ParsedSVG(HeartRatePlot(title: "t", devices: [Self.sessionWithGaps()]).svg()))
    let frames = parsed.all("rect", class: "frame")
    #expect(frames.count == 2)
    for (name, start, end) in [("dropout", 0.2, 0.4), ("contact-loss", 0.6, 0.7)] {
      let spans = parsed.all("rect", class: name)
      #expect(spans.count == 2, "\(name)")
      for (frame, span) in zip(frames, spans) {
        let x = try #require(frame.number("x"))
        let width = try #require(frame.number("width"))
        // Coordinates are written with one decimal.
        #expect(abs(try #require(span.number("x")) - (x + start * width)) <= 0.1, "\(name)")
        #expect(abs(try #require(span.number("width")) - (end - start) * width) <= 0.2, "\(name)")
        #expect(span.number("y") == frame.number("y") && span.number("height") == frame.number("height"))
      }
    }
  }

  @Test func heartRateLineBreaksAtDropoutsOnly() throws {
    func lineSubpaths(_ device: HeartRatePlot.Device) throws -> Int {
      let parsed = try #require(ParsedSVG(HeartRatePlot(title: "t", devices: [device]).svg()))
      let line = try #require(parsed.all("path", class: "heart-rate").first { $0.attributes["fill"] == "none" })
      return try #require(line.attributes["d"]).filter { $0 == "M" }.count
    }
    var withDropout = Self.sessionWithGaps()
    #expect(try lineSubpaths(withDropout) == 2)
    withDropout.dropouts = []
    #expect(try lineSubpaths(withDropout) == 1)
  }

  @Test func emptyDevicesSayNoMeasurements() throws {
    let empty = HeartRatePlot.Device(label: "00:11:22:33:44:55", heartRate: DownsampledSeries(), rrIntervals: DownsampledSeries())
    for devices in [[empty, Self.sessionWithGaps()], [empty], []] {
      let parsed = try #require(ParsedSVG(HeartRatePlot(title: "t", devices: devices).svg()))
      #expect(parsed.all("text").contains { $0.text == "no measurements" })
      #expect(parsed.all("rect", class: "frame").count == (devices.count == 2 ? 2 : 0))
    }
  }

  @Test func singlePointIsADot() throws {
    let svg = HeartRatePlot(title: "t", devices: [Self.device("one", times: [5], bpm: { _ in 61 })]).svg()
    let parsed = try #require(ParsedSVG(svg))
    let dot = try #require(parsed.all("path", class: "heart-rate").first)
    #expect(dot.attributes["d"]?.hasSuffix("h0") == true)
    #expect(parsed.all("path", class: "rr").count == 1)
    #expect(!svg.contains("nan") && !svg.contains("inf"))
  }

  @Test func constantValuesGetAnAxisOfSomeHeight() throws {
    let svg = HeartRatePlot(title: "t", devices: [Self.device("flat", times: (0..<50).map(Double.init), bpm: { _ in 72 })]).svg()
    let parsed = try #require(ParsedSVG(svg))
    let labels = parsed.texts(inGroup: "value-labels")
    // Two plots, each with several distinct labels around the constant.
    #expect(Set(labels).count >= 4)
    #expect(labels.contains("72"))
    let numbers = labels.compactMap(Double.init)
    #expect(numbers.count == labels.count && numbers.contains { $0 < 72 } && numbers.contains { $0 > 72 })
    #expect(!svg.contains("nan") && !svg.contains("inf"))
  }

  @Test func largeTimesGetDistinctIncreasingLabels() throws {
    for start in [1.7e9, 1e15] {
      let device = Self.device("epoch", times: (0...600).map { start + Double($0) }, bpm: { _ in 70 })
      let parsed = try #require(ParsedSVG(HeartRatePlot(title: "t", devices: [device]).svg()))
      let labels = parsed.texts(inGroup: "time-labels")
      let times = labels.compactMap(Double.init)
      #expect(times.count == labels.count && times.count >= 2, "\(labels)")
      #expect(zip(times, times.dropFirst()).allSatisfy { $0 < $1 }, "\(labels)")
      #expect(times.allSatisfy { $0 >= start && $0 <= start + 600 }, "\(labels)")
    }
  }

  @Test func hostileNumbersStayWellFormed() throws {
    var heartRate = DownsampledSeries()
    var rrIntervals = DownsampledSeries()
    for (time, value) in [(1e300, 1e300), (-1e300, -5), (0, .greatestFiniteMagnitude), (5, .greatestFiniteMagnitude)] {
      heartRate.add(time: time, value: value)
      rrIntervals.add(time: time, value: value)
    }
    let device = HeartRatePlot.Device(
      label: "bad\u{0}\u{1B}[31m\u{FFFF}", heartRate: heartRate, rrIntervals: rrIntervals,
      dropouts: [TimeSpan(start: .nan, end: 3), TimeSpan(start: .infinity, end: -.infinity), TimeSpan(start: 9, end: 2)],
      contactLosses: [TimeSpan(start: -.greatestFiniteMagnitude, end: .greatestFiniteMagnitude)])
    let svg = HeartRatePlot(title: "\u{7}", devices: [device], width: -5).svg()
    #expect(ParsedSVG(svg) != nil)
    #expect(!svg.contains("nan") && !svg.contains("inf"))
  }

  @Test func longLabelsAreCut() throws {
    let label = String(repeating: "Very long device name ", count: 40)
    let parsed = try #require(ParsedSVG(HeartRatePlot(title: label, devices: [Self.sessionWithGaps(label: label)]).svg()))
    let shown = try #require(parsed.all("text", class: "device-label").first?.text)
    #expect(shown.count < 150 && shown.hasSuffix("…"))
  }

  @Test func sizeDependsOnBucketsNotPoints() throws {
    // 10^4 and 10^6 points over the same 10^4 s: both fill every pixel column.
    func svg(points: Int) -> String {
      var random = SeededGenerator(seed: 7)
      let step = 10_000 / Double(points)
      let device = Self.device(
        "dense", times: (0..<points).map { Double($0) * step }, bpm: { _ in Double.random(in: 55...95, using: &random) },
        dropouts: (0..<points / 100).map { TimeSpan(start: Double($0) * 100 * step, end: Double($0) * 100 * step + step / 2) })
      return HeartRatePlot(title: "t", devices: [device]).svg()
    }
    let small = svg(points: 10_000)
    let large = svg(points: 1_000_000)
    #expect(ParsedSVG(large) != nil)
    #expect(large.utf8.count < 300_000)
    #expect(large.utf8.count < small.utf8.count * 3 / 2)
  }
}

@Suite struct HeartRateTrackTests {
  @Test func dropoutIsAGapLongerThanTwoSecondsAndThreeMedianIntervals() {
    var track = HeartRateTrack()
    // Each second, with a 10 s gap after 20 s and a 2.5 s one after 40 s (> 2 s, but 3 × 1 s = 3 s).
    let times = (0...20).map(Double.init) + (30...40).map(Double.init) + (0...10).map { 42.5 + Double($0) }
    for time in times { track.add(time: time, bpm: 70, contactLost: false, rrMilliseconds: [857]) }
    #expect(track.medianInterval.map { abs($0 - 1) < 0.01 } == true)
    #expect(track.dropouts == [TimeSpan(start: 20, end: 30)])
    #expect(track.measurements == times.count)

    // Notifications every 5 s: a 12 s gap is under 3 × 5 s, not a dropout; a 16 s gap is.
    var slow = HeartRateTrack()
    for time in [0.0, 5, 10, 15, 20, 32, 37, 42, 58, 63] { slow.add(time: time, bpm: 60, contactLost: false, rrMilliseconds: []) }
    #expect(slow.dropouts == [TimeSpan(start: 42, end: 58)])
  }

  @Test func contactLossRunsUntilContactReturns() {
    var track = HeartRateTrack()
    for (time, lost) in [(0.0, false), (1, true), (2, true), (3, false), (4, true), (5, true)] {
      track.add(time: time, bpm: 70, contactLost: lost, rrMilliseconds: [])
    }
    // The last loss is still open at the end: it ends with the last measurement.
    #expect(track.contactLossSpans == [TimeSpan(start: 1, end: 3), TimeSpan(start: 4, end: 5)])
  }

  @Test func rrIntervalsEndWhereTheirBeatsEnd() {
    var track = HeartRateTrack()
    track.add(time: 10, bpm: 60, contactLost: false, rrMilliseconds: [1000, 500])
    let times = track.rrIntervals.buckets.map(\.earliestTime)
    // The first point sets the series' origin (10 s, the last beat); the earlier one is clamped to it.
    #expect(times == [10])
    #expect(track.rrIntervals.count == 2)
  }

  /// A million short losses stay within the bound and still cover the whole session.
  @Test func spansMergeInsteadOfGrowing() {
    var list = SpanList()
    for index in 0..<1_000_000 {
      let start = Double(index)
      list.add(TimeSpan(start: start, end: start + 0.25))
    }
    #expect(list.spans.count <= SpanList.maximumCount)
    #expect(list.spans.first?.start == 0 && list.spans.last?.end == 999_999.25)
    list.add(TimeSpan(start: .nan, end: 1))
    list.add(TimeSpan(start: 2, end: .infinity))
    #expect(list.spans.allSatisfy { $0.start.isFinite && $0.end.isFinite })
  }
}
