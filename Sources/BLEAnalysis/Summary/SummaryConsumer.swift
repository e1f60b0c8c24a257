import BLECore
import BLEDecoder
import BLEEngine

/// Runs a `SessionAnalyzer` as a frame stream's consumer: facts only, no fields kept. A struct,
/// run with `run(into: &consumer)`: the analyzer is touched per frame without run-time checks.
package struct SummaryConsumer: FrameConsumer {
  package private(set) var analyzer = SessionAnalyzer()
  /// The rules the capture breaks (`check`'s analysis): summary shows their counts.
  package private(set) var conformance = ConformanceAnalysis()
  /// Damage the reader skipped, in bytes and places (the summary says the capture was damaged).
  package private(set) var skippedBytes = 0
  package private(set) var skippedPlaces = 0
  /// The first skips, to name them (bounded: a hostile file may have a million).
  package private(set) var skips: [SkippedDamage] = []
  package static let listedSkips = 100

  package init() {}

  package var fieldDetail: FieldDetail { .none }

  package mutating func consume(_ frame: inout DissectedFrame) -> Bool {
    analyzer.add(&frame)
    _ = conformance.consume(&frame)
    return true
  }

  package mutating func skippedDamage(_ skip: SkippedDamage) {
    skippedBytes = skippedBytes.saturatingAdd(skip.byteCount)
    skippedPlaces = skippedPlaces.saturatingAdd(1)
    if skips.count < Self.listedSkips { skips.append(skip) }
  }

  package mutating func finish(_ end: FrameStream.End) {
    analyzer.finish(databases: end.dissector.databases)
    conformance.finish(end)
  }

  /// The summary, once the stream has run.
  package var summary: SessionSummary { analyzer.summary }
}
