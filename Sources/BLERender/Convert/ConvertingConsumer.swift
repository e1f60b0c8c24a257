import BLEAnalysis
import BLECore
import BLEDecoder
import BLEEngine

/// Where `convert` writes records it decoded first (the CLI's writer and output file).
package protocol RecordSink {
  /// Writes a record with its packet comment (nil: none); false when the output failed.
  mutating func write(_ record: CaptureRecord, comment: String?) -> Bool
  /// The reader skipped damage before the next frame (said in order with the records).
  mutating func skippedDamage(_ skip: SkippedDamage)
  /// The input waits (a pipe): what was written so far goes out.
  mutating func inputIdle()
}

/// `convert --redact` and `--comments`: each frame's record, redacted (`CaptureRedactor`)
/// and/or with its comment (`FrameComments`), handed to the sink in capture order. With both,
/// the comments are those of the redacted records (decoded again), so no comment tells what
/// the redaction took out.
package struct ConvertingConsumer<Sink: RecordSink>: FrameConsumer {
  package var sink: Sink
  package var redactor: CaptureRedactor?
  package var comments: FrameComments?
  package private(set) var outputFailed = false

  package init(sink: Sink, redact kinds: RedactionKinds?, comments: Bool) {
    self.sink = sink
    redactor = kinds.map { CaptureRedactor(kinds: $0) }
    self.comments = comments ? FrameComments() : nil
  }

  /// Redaction reads facts only; comments of frames as decoded need the renderer's fields.
  package var fieldDetail: FieldDetail { redactor == nil ? (comments?.fieldDetail ?? .none) : .none }

  package mutating func consume(_ frame: inout DissectedFrame) -> Bool {
    if redactor != nil {
      redactor!.redact(&frame)
      return writeReady()
    }
    let comment = comments?.comment(for: &frame)
    if !sink.write(frame.record, comment: comment) { outputFailed = true }
    return !outputFailed
  }

  mutating func writeReady() -> Bool {
    for record in redactor!.takeReady() where !outputFailed {
      let comment = comments?.comment(for: record)
      if !sink.write(record, comment: comment) { outputFailed = true }
    }
    return !outputFailed
  }

  package mutating func skippedDamage(_ skip: SkippedDamage) { sink.skippedDamage(skip) }
  package mutating func inputIdle() { sink.inputIdle() }

  package mutating func finish(_ end: FrameStream.End) {
    guard redactor != nil, !outputFailed else { return }
    redactor!.finish()
    _ = writeReady()
  }
}
