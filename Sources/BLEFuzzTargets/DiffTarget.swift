import BLEAnalysis
import BLECapture
import BLECore
import BLEEngine

extension FuzzTarget {
  /// Opens `bytes` as a capture and runs the stream into `consumer` (one thread, at most
  /// `frameLimit` frames): the records read and the error that ended them, and the stream's
  /// end (nil when the bytes did not open).
  static func stream<Consumer: FrameConsumer>(_ bytes: [UInt8], into consumer: inout Consumer) -> (outcome: Outcome, end: FrameStream.End?) {
    var outcome = Outcome()
    let reader: any CaptureReader
    do {
      reader = try open(bytes)
    } catch {
      check(error)
      outcome.error = error
      return (outcome, nil)
    }
    var options = FrameStream.Options()
    options.threading = .one
    options.limit = frameLimit
    let end = FrameStream(source: reader, options: options).run(into: &consumer)
    outcome.records = end.frames
    if let failure = end.failure {
      // The source is a capture reader: the failure's cause is a `CaptureError`.
      let error = failure.cause as! CaptureError
      check(error)
      outcome.error = error
    }
    return (outcome, end)
  }

  /// `diff`'s side of a capture (summary, operation log and exchange ledger, tables), then the
  /// comparison: a capture compared with itself must be equivalent, whatever it holds, and
  /// against an empty side it may only list its devices as missing.
  static func diff(_ bytes: [UInt8]) -> Outcome {
    var consumer = DiffConsumer()
    let (opened, stopped) = stream(bytes, into: &consumer)
    var outcome = opened
    guard let end = stopped else { return outcome }
    let side = consumer.side
    let same = SessionDiff().compare(side, side)
    precondition(same.isEmpty, "a capture differs from itself: \(same.map(\.text))")
    let empty = DiffSide(summary: SessionSummary(), tables: [:], operations: OperationLog())
    for difference in SessionDiff().compare(side, empty) + SessionDiff().compare(empty, side) {
      precondition(difference.kind == .devices, "against nothing, only devices differ: \(difference.text)")
    }
    outcome.frames = end.frames
    return outcome
  }
}
