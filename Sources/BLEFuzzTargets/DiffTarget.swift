import BLEAnalysis
import BLECapture
import BLECore
import BLEEngine

extension FuzzTarget {
  /// `diff`'s side of a capture (summary, operation log and exchange ledger, tables), then the
  /// comparison: a capture compared with itself must be equivalent, whatever it holds, and
  /// against an empty side it may only list its devices as missing.
  static func diff(_ bytes: [UInt8]) -> Outcome {
    var outcome = Outcome()
    let reader: any CaptureReader
    do {
      reader = try open(bytes)
    } catch {
      check(error)
      outcome.error = error
      return outcome
    }
    var options = FrameStream.Options()
    options.threading = .one
    options.limit = frameLimit
    var consumer = DiffConsumer()
    let end = FrameStream(source: reader, options: options).run(into: &consumer)
    outcome.records = end.frames
    if let failure = end.failure {
      // The source is a capture reader: the failure's cause is a `CaptureError`.
      let error = failure.cause as! CaptureError
      check(error)
      outcome.error = error
    }
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
