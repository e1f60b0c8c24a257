import BLEAnalysis
import BLECapture
import BLECore
import BLEDecoder
import BLEEngine
import BLERender

extension FuzzTarget {
  /// `convert --redact=all --comments` over any bytes read as a capture: every record comes
  /// out once, in order, as long as it went in and of the same kind and time, unless it was
  /// counted as left out; the redacted records are decoded again for their comments.
  static func redact(_ bytes: [UInt8]) -> Outcome {
    var collector = RedactedRecords()
    var consumer = ConvertingConsumer(sink: collector, redact: .all, comments: true)
    let (opened, stopped) = stream(bytes, into: &consumer)
    var outcome = opened
    guard let end = stopped else { return outcome }
    collector = consumer.sink
    let tally = consumer.redactor!.tally
    precondition(collector.records.count + tally.dropped == end.frames, "\(collector.records.count) records out and \(tally.dropped) left out of \(end.frames)")
    precondition(collector.comments == collector.records.count, "a record without its comment")
    // The records out are the records in, in order, less those left out.
    var next = 0
    var input: [CaptureRecord] = []
    if let reader = try? open(bytes) {
      while input.count < end.frames, let record = try? reader.next() { input.append(record) }
    }
    for record in input where next < collector.records.count {
      let out = collector.records[next]
      if out.kind == record.kind && out.timestamp == record.timestamp && out.bytes.count == record.bytes.count { next += 1 }
    }
    precondition(input.count < end.frames || next == collector.records.count, "a record changed its kind, time or length")
    outcome.frames = end.frames
    return outcome
  }

  struct RedactedRecords: RecordSink {
    var records: [CaptureRecord] = []
    var comments = 0
    mutating func write(_ record: CaptureRecord, comment: String?) -> Bool {
      records.append(record)
      if comment != nil { comments += 1 }
      return true
    }
    mutating func skippedDamage(_ skip: SkippedDamage) {}
    mutating func inputIdle() {}
  }
}
