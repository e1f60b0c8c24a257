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

  /// A dropout's band says how long it lasted (in each panel); the time axis starts at the
  /// capture's first frame with a 0 tick, never before it.
  @Test func dropoutsSayTheirLengthAndTimeStartsAtZero() throws {
    var device = Self.sessionWithGaps()
    device.dropouts = [TimeSpan(start: 20, end: 40), TimeSpan(start: 80.5, end: 81)]
    let parsed = try #require(ParsedSVG(HeartRatePlot(title: "t", devices: [device]).svg()))
    // The half-second one is too narrow for its words.
    #expect(parsed.all("text", class: "dropout-duration").map(\.text) == ["20 s", "20 s"])
    let later = Self.device("x", times: (3...100).map(Double.init), bpm: { _ in 70 }, dropouts: [], contactLosses: [])
    let axis = try #require(ParsedSVG(HeartRatePlot(title: "t", devices: [later]).svg())).texts(inGroup: "time-labels")
    #expect(axis.first == "0" && !axis.contains { $0.hasPrefix("-") })
    // Far from the start, the axis starts near the first value.
    let late = Self.device("x", times: (300...400).map(Double.init), bpm: { _ in 70 }, dropouts: [], contactLosses: [])
    let lateAxis = try #require(ParsedSVG(HeartRatePlot(title: "t", devices: [late]).svg())).texts(inGroup: "time-labels")
    #expect(lateAxis.first == "300")
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

extension HeartRatePlotTests {
  /// x of a time on the plot, from two of its tick labels (`time-labels`): the axis is linear.
  static func timeToX(_ parsed: ParsedSVG, panel: Int = 0) throws -> (Double) -> Double {
    let labels = parsed.all("text").filter { $0.ancestorClasses.contains("time-labels") }
    let perPanel = labels.count / max(parsed.all("rect", class: "frame").count / 2, 1)
    let ticks = Array(labels[(panel * perPanel)..<((panel + 1) * perPanel)]).compactMap { label in
      Double(label.text).flatMap { time in label.number("x").map { (time, $0) } }
    }
    // The outermost labels may be pushed inward to stay in the document: the inner two are exact.
    try #require(ticks.count >= 4)
    let (a, b) = (ticks[1], ticks[ticks.count - 2])
    return { a.1 + ($0 - a.0) * (b.1 - a.1) / (b.0 - a.0) }
  }

  /// The x of every vertical line in a path of `M x y V y` segments.
  static func lineXs(_ element: ParsedSVG.Element) -> [Double] {
    (element.attributes["d"] ?? "").split(separator: "M").compactMap { Double($0.split(separator: " ").first ?? "") }
  }

  /// Where a path starts (its first `M x y`).
  static func start(_ element: ParsedSVG.Element?) -> (x: Double, y: Double)? {
    let numbers = (element?.attributes["d"] ?? "").dropFirst().prefix { $0 != "l" && $0 != "h" && $0 != "V" }
      .split(separator: " ").compactMap { Double($0) }
    return numbers.count == 2 ? (numbers[0], numbers[1]) : nil
  }

  /// Text of the `<tspan>`s of the mark labels.
  static func markWords(_ parsed: ParsedSVG) -> [String] {
    parsed.all("tspan").filter { $0.ancestorClasses.contains("mark-labels") }.map(\.text)
  }

  static func marks(_ list: [(LinkMarkKind, Double, LinkMark.Detail)]) -> [LinkMark] {
    list.map { LinkMark(kind: $0.0, time: $0.1, detail: $0.2) }
  }

  @Test func marksStandAtTheirTimesWithTheirWords() throws {
    var device = Self.sessionWithGaps()
    device.marks = Self.marks([
      (.connected, 0, .plain), (.mtuExchanged, 0.05, .mtu(247)), (.subscribed, 1, .plain),
      (.parametersUpdated, 30, .parameters(interval: 40, latency: 4)), (.disconnected, 62.5, .reason(0x08)),
      (.connected, 75, .plain), (.parametersRequested, 75.2, .plain), (.unsubscribed, 99, .plain),
    ])
    let parsed = try #require(ParsedSVG(HeartRatePlot(title: "t", devices: [device]).svg()))
    let x = try Self.timeToX(parsed)
    for (kind, times) in [
      ("mark-connected", [0.0, 75]), ("mark-mtu", [0.05]), ("mark-subscribed", [1]), ("mark-parameters", [30]),
      ("mark-disconnected", [62.5]), ("mark-parameters-requested", [75.2]), ("mark-unsubscribed", [99]),
    ] {
      let path = try #require(parsed.all("path", class: kind).first, "\(kind)")
      let xs = Self.lineXs(path)
      #expect(xs.count == times.count, "\(kind)")
      for (drawn, time) in zip(xs, times) { #expect(abs(drawn - x(time)) <= 0.15, "\(kind) at \(time) s") }
    }
    let words = Self.markWords(parsed)
    #expect(words.contains("disconnected: Connection Timeout"))
    #expect(words.contains("interval 50 ms, latency 4"))
    for expected in ["connected", "MTU 247", "subscribed HR", "parameters requested", "unsubscribed HR"] {
      #expect(words.contains(expected), "\(expected)")
    }
    // Connected, MTU and subscribed within 4 pixels share one label, in time order.
    let first = try #require(parsed.all("text").first { $0.ancestorClasses.contains("mark-labels") })
    #expect(first.number("x").map { abs($0 - x(0) - 3) <= 0.15 } == true)
    // Lines stay inside the plots' time range: the axis reaches a little past the first and last.
    let frameLeft = try #require(parsed.all("rect", class: "frame").first?.number("x"))
    #expect(x(0) > frameLeft + 4)
  }

  @Test func legendListsFlagsAndMarksOnlyWhenPresent() throws {
    func legend(_ device: HeartRatePlot.Device) throws -> [String] {
      try #require(ParsedSVG(HeartRatePlot(title: "t", devices: [device]).svg())).texts(inGroup: "legend")
    }
    let plain = try legend(Self.sessionWithGaps())
    #expect(plain == ["heart rate, mean", "heart rate, min–max", "RR interval", "dropout (no notifications)", "sensor contact lost"])
    var track = HeartRateTrack()
    track.add(time: 0, bpm: 70, contactLost: false, rrMilliseconds: [850])
    track.add(time: 1, bpm: 256, contactLost: false, rrMilliseconds: [], flags: .bpmOutOfRange)
    var device = track.plotDevice(label: "x")
    device.marks = Self.marks([(.disconnected, 1.5, .reason(0x13))])
    let flagged = try legend(device)
    // No dropout and no loss of contact: no entry for them.
    #expect(flagged == ["heart rate, mean", "heart rate, min–max", "RR interval", "bpm out of range (30–220)", "disconnected"])
  }

  /// One 300 bpm spike and one 177 ms interval: the axes stay on the plausible values, and the
  /// two are drawn at the edges with their values beside them.
  @Test func flaggedValuesAreMarkedAndLeftOffTheAxes() throws {
    var track = HeartRateTrack()
    for second in 0..<60 {
      let bpm = 60 + Double(second % 20)
      var flags: HeartRateFlags = []
      var rr = [60_000 / bpm]
      var value = bpm
      if second == 20 { (value, flags) = (300, .bpmOutOfRange) }
      if second == 40 { (rr, flags) = ([177, 60_000 / bpm], [.rrOutOfRange, .rrInconsistent]) }
      if second == 50 { flags = .energyBackwards }
      track.add(time: Double(second), bpm: value, contactLost: false, rrMilliseconds: rr, flags: flags)
    }
    #expect(track.heartRate.count == 58)  // the spike and the inconsistent one are markers only
    let parsed = try #require(ParsedSVG(HeartRatePlot(title: "t", devices: [track.plotDevice(label: "spiky")]).svg()))
    let frames = parsed.all("rect", class: "frame")
    let heartRateFrame = try #require(frames.first)
    let rrFrame = try #require(frames.last)
    let valueLabels = parsed.texts(inGroup: "value-labels").compactMap(Double.init)
    // Heart-rate labels come first: at most 100 bpm (values 60–79 and 78 flagged inconsistent, not 300).
    let heartRateLabels = valueLabels.prefix { $0 < 200 }
    #expect(heartRateLabels.max().map { $0 <= 100 } == true, "\(valueLabels)")
    let rrLabels = valueLabels.dropFirst(heartRateLabels.count)
    #expect(rrLabels.min().map { $0 >= 600 } == true, "\(valueLabels)")
    let x = try Self.timeToX(parsed)
    // The spike: a triangle at the top edge at 20 s, with "300" beside it.
    let spike = try #require(Self.start(parsed.all("path", class: "flag-bpm-out-of-range").first))
    let heartRateTop = try #require(heartRateFrame.number("y"))
    // The triangle's apex, 5 px above its centre 7 px inside the frame.
    #expect(abs(spike.x - x(20)) <= 0.15 && abs(spike.y - (heartRateTop + 2)) <= 0.15, "\(spike)")
    let clipped = parsed.texts(inGroup: "clipped-values")
    #expect(clipped == ["300", "177"])
    // The short interval: a diamond at the bottom edge of the RR plot.
    let diamond = try #require(Self.start(parsed.all("path", class: "flag-rr-out-of-range").first))
    let rrBottom = try #require(rrFrame.number("y")) + (try #require(rrFrame.number("height")))
    // Its top corner, 5.5 px above its centre 7 px inside the frame; its beat ended one interval
    // (1000 ms at 60 bpm) before the measurement at 40 s.
    #expect(abs(diamond.x - x(39)) <= 0.15 && abs(diamond.y - (rrBottom - 12.5)) <= 0.15, "\(diamond)")
    // Inconsistent: a cross at the bpm and at both of its intervals; energy backwards: a square.
    let crosses = parsed.all("path", class: "flag-rr-inconsistent").map { ($0.attributes["d"] ?? "").filter { $0 == "M" }.count }
    #expect(crosses == [1, 2])
    #expect(parsed.all("path", class: "flag-energy-backwards").count == 1)
  }

  /// 100 000 reconnects, each with its subscription and a timeout, unevenly spaced: the marks
  /// stay bounded, every event is counted once (in a label or as not labelled), and the
  /// document stays small.
  @Test func aHundredThousandReconnectsStayBounded() throws {
    var lists = [MarkList](repeating: MarkList(), count: LinkMarkKind.allCases.count)
    var random = SeededGenerator(seed: 18)
    var time = 0.0
    // In 2000 bursts of 50, 0.5–3 s apart within a burst, 20–2000 s between bursts.
    for index in 0..<100_000 {
      time += index % 50 == 0 ? Double.random(in: 20...2000, using: &random) : Double.random(in: 0.5...3, using: &random)
      lists[LinkMarkKind.connected.rawValue].add(LinkMark(kind: .connected, time: time))
      lists[LinkMarkKind.subscribed.rawValue].add(LinkMark(kind: .subscribed, time: time + 0.005))
      lists[LinkMarkKind.disconnected.rawValue].add(LinkMark(kind: .disconnected, time: time + 0.007, detail: .reason(0x08)))
    }
    for list in lists {
      #expect(list.marks.count <= MarkList.maximumCount)
      #expect(zip(list.marks, list.marks.dropFirst()).allSatisfy { $0.end < $1.start })
    }
    #expect(lists[LinkMarkKind.connected.rawValue].marks.reduce(0) { $0 + $1.count } == 100_000)
    var device = Self.device("storm", times: stride(from: 0, through: time, by: time / 5000).map { $0 }, bpm: { _ in 70 })
    device.marks = lists.flatMap(\.marks).sorted { $0.start < $1.start }
    let svg = HeartRatePlot(title: "t", devices: [device]).svg()
    #expect(svg.utf8.count < 200_000)
    let parsed = try #require(ParsedSVG(svg))
    var labelled = 0
    for word in Self.markWords(parsed) {
      let count = word.split(separator: "×").last.flatMap { Int($0) }
      labelled += word.contains("×") ? try #require(count) : 1
    }
    let detail = try #require(parsed.all("text", class: "device-detail").first?.text)
    let unlabelled = detail.split(separator: "·").last.flatMap { $0.split(separator: " ").first }.flatMap { Int($0) } ?? 0
    #expect(detail.hasSuffix("not labelled (too close together)"), "\(detail)")
    #expect(labelled + unlabelled == 300_000)
    #expect(labelled > 0)
  }
}

@Suite struct LinkMarkTests {
  @Test func listMergesOnlyPastItsBoundAndCountsWhatItMerged() {
    var list = MarkList()
    for index in 0..<MarkList.maximumCount { list.add(LinkMark(kind: .connected, time: Double(index))) }
    #expect(list.marks.count == MarkList.maximumCount && list.resolution == 0)
    list.add(LinkMark(kind: .connected, time: 1e6))
    #expect(list.marks.count <= MarkList.maximumCount)
    #expect(list.marks.reduce(0) { $0 + $1.count } == MarkList.maximumCount + 1)
    #expect(list.marks.last?.start == 1e6)
    // An earlier one (a subscription recognised late) goes in its place; non-finite times stay out.
    var late = MarkList()
    late.add(LinkMark(kind: .subscribed, time: 10))
    late.add(LinkMark(kind: .subscribed, time: 5))
    late.add(LinkMark(kind: .subscribed, time: .nan))
    #expect(late.marks.map(\.start) == [5, 10])
  }

  @Test func mergedDetailsThatDifferAreMixed() {
    var mark = LinkMark(kind: .disconnected, time: 1, detail: .reason(0x08))
    mark.merge(LinkMark(kind: .disconnected, time: 2, detail: .reason(0x08)))
    #expect(LinkMark.words(kind: mark.kind, detail: mark.detail, count: mark.count) == "disconnected: Connection Timeout ×2")
    mark.merge(LinkMark(kind: .disconnected, time: 3, detail: .reason(0x13)))
    #expect(mark.detail == .mixed && mark.start == 1 && mark.end == 3 && mark.count == 3)
    #expect(LinkMark.words(kind: .disconnected, detail: .mixed, count: 3) == "disconnected ×3")
    #expect(LinkMark.words(kind: .disconnected, detail: .reason(0xEE), count: 1) == "disconnected: 0xee")
    #expect(LinkMark.words(kind: .parametersUpdated, detail: .failed(status: 0x3B), count: 1).hasPrefix("parameter update failed: "))
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
    // The 500 ms interval ends at 10 s, the 1000 ms one 500 ms earlier (added oldest first, so
    // the series' origin is the earlier beat and neither is clamped).
    #expect(track.rrIntervals.buckets.map(\.earliestTime) == [9.5, 10])
    #expect(track.rrIntervals.buckets.map(\.minimum) == [1000, 500])
  }

  @Test func doubtfulValuesGoToTheirFlagsSeries() {
    var track = HeartRateTrack()
    track.add(time: 1, bpm: 70, contactLost: false, rrMilliseconds: [857])
    track.add(time: 2, bpm: 256, contactLost: false, rrMilliseconds: [], flags: .bpmOutOfRange)
    track.add(time: 3, bpm: 72, contactLost: false, rrMilliseconds: [176.8, 830], flags: [.rrOutOfRange, .rrInconsistent])
    track.add(time: 4, bpm: 74, contactLost: true, rrMilliseconds: [810], flags: [.noContact, .energyBackwards])
    #expect(track.measurements == 4)
    #expect(track.heartRate.buckets.map(\.minimum) == [70, 74])
    #expect(track.rrIntervals.buckets.map(\.minimum) == [857, 830, 810])
    let heartRate = Dictionary(uniqueKeysWithValues: track.flaggedHeartRate.map { ($0.flag.rawValue, $0.values.buckets.map(\.minimum)) })
    #expect(heartRate == [HeartRateFlags.bpmOutOfRange.rawValue: [256], HeartRateFlags.rrInconsistent.rawValue: [72], HeartRateFlags.energyBackwards.rawValue: [74]])
    let rr = Dictionary(uniqueKeysWithValues: track.flaggedRRIntervals.map { ($0.flag.rawValue, $0.values.buckets.map(\.minimum)) })
    #expect(rr == [HeartRateFlags.rrOutOfRange.rawValue: [176.8], HeartRateFlags.rrInconsistent.rawValue: [176.8, 830]])
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
