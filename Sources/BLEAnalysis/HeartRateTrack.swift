/// One device's heart-rate measurements gathered for a plot, in bounded memory: the series
/// (`DownsampledSeries`), the intervals between notifications (for the median), the gaps that may
/// be dropouts, and the spans without sensor contact.
///
/// A dropout is a gap between two notifications longer than max(2 s, 3 × the device's median
/// interval). The median is only known at the end, so every gap over 2 s is kept as a candidate
/// (at most `maximumSpans`; later ones are counted in `spansLeftOut`) and judged in `plotDevice`.
public struct HeartRateTrack: Sendable {
  /// Candidate gaps and contact losses kept per device; a plot cannot show more apart anyway.
  public static let maximumSpans = 4096
  /// The shortest gap that can be a dropout, in seconds.
  public static let minimumDropout = 2.0

  public private(set) var heartRate = DownsampledSeries()
  public private(set) var rrIntervals = DownsampledSeries()
  public private(set) var measurements = 0
  /// Gaps and contact losses not kept because the lists were full.
  public private(set) var spansLeftOut = 0
  private var intervals = QuantileSketch()
  private var gaps: [TimeSpan] = []
  private var contactLosses: [TimeSpan] = []
  private var lastTime: Double?
  /// Where the current loss of contact began, while the sensor says it has none.
  private var lossStart: Double?

  public init() {}

  /// One measurement at `time` (seconds): its heart rate, whether the sensor reported no
  /// contact, and its RR intervals in milliseconds, oldest first (each is placed where its beat
  /// ended: the last at `time`, the ones before it earlier by the intervals after them).
  public mutating func add(time: Double, bpm: Double, contactLost: Bool, rrMilliseconds: [Double]) {
    guard time.isFinite else { return }
    measurements += 1
    heartRate.add(time: time, value: bpm)
    var beat = time
    for rr in rrMilliseconds.reversed() {
      rrIntervals.add(time: beat, value: rr)
      beat -= rr / 1000
    }
    if let lastTime {
      let gap = time - lastTime
      if gap.isFinite, gap >= 0 {
        intervals.add(gap)
        if gap > Self.minimumDropout { Self.keep(TimeSpan(start: lastTime, end: time), in: &gaps, leftOut: &spansLeftOut) }
      }
    }
    lastTime = max(lastTime ?? time, time)
    if contactLost {
      if lossStart == nil { lossStart = time }
    } else if let start = lossStart {
      Self.keep(TimeSpan(start: start, end: time), in: &contactLosses, leftOut: &spansLeftOut)
      lossStart = nil
    }
  }

  private static func keep(_ span: TimeSpan, in list: inout [TimeSpan], leftOut: inout Int) {
    if list.count < maximumSpans { list.append(span) } else { leftOut += 1 }
  }

  /// The median time between notifications, in seconds; nil before two measurements.
  public var medianInterval: Double? { intervals.count > 0 ? intervals.quantile(0.5) : nil }

  /// The gaps longer than max(2 s, 3 × the median interval).
  public var dropouts: [TimeSpan] {
    let threshold = max(Self.minimumDropout, 3 * (medianInterval ?? 0))
    return gaps.filter { $0.end - $0.start > threshold }
  }

  /// The spans without contact; one still open ends at the last measurement.
  public var contactLossSpans: [TimeSpan] {
    guard let start = lossStart, let lastTime else { return contactLosses }
    var spans = contactLosses
    if spans.count < Self.maximumSpans { spans.append(TimeSpan(start: start, end: lastTime)) }
    return spans
  }

  public func plotDevice(label: String) -> HeartRatePlot.Device {
    HeartRatePlot.Device(
      label: label, heartRate: heartRate, rrIntervals: rrIntervals, dropouts: dropouts, contactLosses: contactLossSpans)
  }
}
