import BLECore
import BLEDecoder
import BLEEngine

/// Runs a `SessionAnalyzer` as a frame stream's consumer: facts only, no fields kept. A struct,
/// run with `run(into: &consumer)`: the analyzer is touched per frame without run-time checks.
public struct SummaryConsumer: FrameConsumer {
  public private(set) var analyzer = SessionAnalyzer()
  /// The rules the capture breaks (`check`'s analysis): summary shows their counts.
  public private(set) var conformance = ConformanceAnalysis()
  /// Damage the reader skipped, in bytes and places (the summary says the capture was damaged).
  public private(set) var skippedBytes = 0
  public private(set) var skippedPlaces = 0
  /// The first skips, to name them (bounded: a hostile file may have a million).
  public private(set) var skips: [SkippedDamage] = []
  public static let listedSkips = 100

  public init() {}

  public var fieldDetail: FieldDetail { .none }

  public mutating func consume(_ frame: inout DissectedFrame) -> Bool {
    analyzer.add(&frame)
    _ = conformance.consume(&frame)
    return true
  }

  public mutating func skippedDamage(_ skip: SkippedDamage) {
    skippedBytes = skippedBytes.saturatingAdd(skip.byteCount)
    skippedPlaces = skippedPlaces.saturatingAdd(1)
    if skips.count < Self.listedSkips { skips.append(skip) }
  }

  public mutating func finish(_ end: FrameStream.End) {
    analyzer.finish(databases: end.dissector.databases)
    conformance.finish(end)
  }

  /// The summary, once the stream has run.
  public var summary: SessionSummary { analyzer.summary }
}
