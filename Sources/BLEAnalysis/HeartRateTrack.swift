import BLECore

/// One device's heart-rate measurements gathered for a plot, in bounded memory: the series
/// (`DownsampledSeries`), the intervals between notifications (for the median), the gaps that may
/// be dropouts, and the spans without sensor contact. Values that carry a flag making them
/// doubtful (`HeartRateFlags.doubtfulRate`; an RR interval out of range) stay out of the series,
/// so they cannot stretch its axis; they and the other flagged values are kept in a series per
/// flag, which the plot draws as markers.
///
/// A dropout is a gap between two notifications longer than max(2 s, 3 × the device's median
/// interval). The median is only known at the end, so every gap over 2 s is kept as a candidate
/// and judged in `dropouts`. Gaps and contact losses are kept in `SpanList`s: past
/// `SpanList.maximumCount` spans, neighbours closer than a growing resolution merge (as the
/// series' buckets do), so a capture with a million short losses still shades where they are.
package struct HeartRateTrack: Sendable {
  /// The shortest gap that can be a dropout, in seconds.
  package static let minimumDropout = 2.0

  /// Buckets start 1 µs wide (capture timestamps' resolution): a short capture keeps every point.
  package private(set) var heartRate = DownsampledSeries(initialWidth: 1e-6)
  package private(set) var rrIntervals = DownsampledSeries(initialWidth: 1e-6)
  package private(set) var measurements = 0
  /// Flagged heart rates (bpm) and RR intervals (ms), one series per flag, made when first needed.
  package private(set) var flaggedHeartRate: [HeartRatePlot.FlaggedValues] = []
  package private(set) var flaggedRRIntervals: [HeartRatePlot.FlaggedValues] = []
  private var intervals = QuantileSketch()
  private var gaps = SpanList()
  private var contactLosses = SpanList()
  private var lastTime: Double?
  /// Where the current loss of contact began, while the sensor says it has none.
  private var lossStart: Double?

  package init() {}

  /// One measurement at `time` (seconds): its heart rate, whether the sensor reported no
  /// contact, its RR intervals in milliseconds, oldest first (each is placed where its beat
  /// ended: the last at `time`, the ones before it earlier by the intervals after them), and
  /// its flags (`HeartRatePlausibility`).
  package mutating func add(
    time: Double, bpm: Double, contactLost: Bool, rrMilliseconds: [Double], flags: HeartRateFlags = []
  ) {
    guard time.isFinite else { return }
    measurements = measurements.saturatingAdd(1)
    if flags.isDisjoint(with: .doubtfulRate) { heartRate.add(time: time, value: bpm) }
    for flag in HeartRatePlot.FlaggedValues.heartRateFlags where flags.contains(flag) {
      Self.add(time: time, value: bpm, flag: flag, to: &flaggedHeartRate)
    }
    // Oldest first: a series clamps a time before its first point to that point, so the first
    // measurement's earlier beats would otherwise all land on its last one.
    var beat = time
    for rr in rrMilliseconds.dropFirst() { beat -= rr / 1000 }
    for (index, rr) in rrMilliseconds.enumerated() {
      if index > 0 { beat += rr / 1000 }
      // Only the intervals out of range are doubtful, not the others sent with them.
      if flags.contains(.rrOutOfRange), !HeartRatePlausibility.plausibleRRMilliseconds.contains(rr) {
        Self.add(time: beat, value: rr, flag: .rrOutOfRange, to: &flaggedRRIntervals)
      } else {
        rrIntervals.add(time: beat, value: rr)
      }
      if flags.contains(.rrInconsistent) { Self.add(time: beat, value: rr, flag: .rrInconsistent, to: &flaggedRRIntervals) }
    }
    if let lastTime {
      let gap = time - lastTime
      if gap.isFinite, gap >= 0 {
        intervals.add(gap)
        if gap > Self.minimumDropout { gaps.add(TimeSpan(start: lastTime, end: time)) }
      }
    }
    lastTime = max(lastTime ?? time, time)
    if contactLost {
      if lossStart == nil { lossStart = time }
    } else if let start = lossStart {
      contactLosses.add(TimeSpan(start: start, end: time))
      lossStart = nil
    }
  }

  private static func add(time: Double, value: Double, flag: HeartRateFlags, to list: inout [HeartRatePlot.FlaggedValues]) {
    if let index = list.firstIndex(where: { $0.flag == flag }) {
      list[index].values.add(time: time, value: value)
    } else {
      var values = HeartRatePlot.FlaggedValues(flag: flag)
      values.values.add(time: time, value: value)
      list.append(values)
    }
  }

  /// The median time between notifications, in seconds; nil before two measurements.
  package var medianInterval: Double? { intervals.count > 0 ? intervals.quantile(0.5) : nil }

  /// The gaps longer than max(2 s, 3 × the median interval).
  package var dropouts: [TimeSpan] {
    let threshold = max(Self.minimumDropout, 3 * (medianInterval ?? 0))
    return gaps.spans.filter { $0.end - $0.start > threshold }
  }

  /// The spans without contact; one still open ends at the last measurement.
  package var contactLossSpans: [TimeSpan] {
    guard let start = lossStart, let lastTime else { return contactLosses.spans }
    var spans = contactLosses
    spans.add(TimeSpan(start: start, end: lastTime))
    return spans.spans
  }

  /// The device as the plot takes it: `label` its title, `detail` the words after it.
  package func plotDevice(label: String, detail: String = "", marks: [LinkMark] = []) -> HeartRatePlot.Device {
    var device = HeartRatePlot.Device(
      label: label, heartRate: heartRate, rrIntervals: rrIntervals, dropouts: dropouts, contactLosses: contactLossSpans)
    device.detail = detail
    device.flaggedHeartRate = flaggedHeartRate
    device.flaggedRRIntervals = flaggedRRIntervals
    device.marks = marks
    return device
  }
}

/// Spans in time order, bounded: when more than `maximumCount` are held, neighbours whose gap is
/// under `resolution` merge, the resolution doubling until they fit. A plot cannot tell apart
/// spans closer than a pixel anyway; merging overstates a span by at most the resolution (two
/// dropout candidates merged are judged as one: only past 4096 gaps of over 2 s).
package struct SpanList: Sendable, Equatable {
  package static let maximumCount = 4096
  package private(set) var spans: [TimeSpan] = []
  /// Gaps up to this many seconds are merged; 0 until the list first fills.
  package private(set) var resolution = 0.0

  package init() {}

  /// Adds a span that starts at or after the previous one; spans with a non-finite end are left out.
  /// Spans that merge: separated by less than the resolution (touching spans stay apart: two
  /// gaps around one notification are two gaps). At infinity everything merges.
  private func closeEnough(_ earlier: TimeSpan, _ later: TimeSpan) -> Bool {
    resolution == .infinity || later.start - earlier.end < resolution
  }

  package mutating func add(_ span: TimeSpan) {
    guard span.start.isFinite, span.end.isFinite else { return }
    if let last = spans.last, closeEnough(last, span) {
      spans[spans.count - 1].end = Swift.max(last.end, span.end)
      return
    }
    spans.append(span)
    while spans.count > Self.maximumCount {
      // Starts at the spacing that could fit, then doubles: reaches infinity (all merge) at worst.
      let spread = (spans[spans.count - 1].end - spans[0].start) / Double(Self.maximumCount)
      resolution = resolution > 0 ? resolution * 2 : Swift.max(spread.isFinite ? spread : 0, 1e-6)
      var merged: [TimeSpan] = []
      merged.reserveCapacity(spans.count)
      for span in spans {
        if let last = merged.last, closeEnough(last, span) {
          merged[merged.count - 1].end = Swift.max(last.end, span.end)
        } else {
          merged.append(span)
        }
      }
      spans = merged
    }
  }
}
