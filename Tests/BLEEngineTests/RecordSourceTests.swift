import BLECapture
import BLECore
import BLEDecoder
import BLEEngine
import BLERender
import Testing

/// Records served from memory: a source that is no capture reader (as a link-layer sniffer
/// will be), failing on its own terms after `failAfter` records when asked to.
final class RecordList: RecordSource {
  struct LostSync: Error {}
  let records: [CaptureRecord]
  let failAfter: Int?
  var served = 0

  init(_ records: [CaptureRecord], failAfter: Int? = nil) {
    self.records = records
    self.failAfter = failAfter
  }

  func nextRecord(into record: inout CaptureRecord) throws(SourceFailure) -> Bool {
    if served == failAfter { throw SourceFailure(message: "sniffer lost sync", exitStatus: 1, cause: LostSync()) }
    guard served < records.count else { return false }
    record = records[served]
    served += 1
    return true
  }
}

@Suite struct RecordSourceTests {
  static func records(_ name: String) throws -> [CaptureRecord] {
    let reader = try CaptureFile.open(path: capturePath(name))
    var records: [CaptureRecord] = []
    while let record = try reader.next() { records.append(record) }
    return records
  }

  /// The stream decodes records from any source as it decodes them from a capture file.
  @Test(arguments: [FrameStream.Threading.one, .two])
  func aSourceOtherThanACaptureFeedsTheStream(threading: FrameStream.Threading) throws {
    var options = FrameStream.Options()
    options.threading = threading
    let fromList = RecordingConsumer(JSONLinesRenderer())
    let end = FrameStream(source: RecordList(try Self.records("hr_strap_session.btsnoop")), options: options).run(into: fromList)
    let fromFile = try stream("hr_strap_session.btsnoop", JSONLinesRenderer(), threading: threading, share: .adaptive)
    #expect(end.frames == 160 && end.failure == nil)
    #expect(fromList.facts == fromFile.facts)
    #expect(fromList.out.text == fromFile.out.text)
  }

  /// A source's failure ends the stream after the records before it, and reaches the caller
  /// and the consumer as it was thrown.
  @Test(arguments: [FrameStream.Threading.one, .two])
  func aSourcesFailureEndsTheStream(threading: FrameStream.Threading) throws {
    var options = FrameStream.Options()
    options.threading = threading
    let consumer = RecordingConsumer(JSONLinesRenderer())
    let end = FrameStream(source: RecordList(try Self.records("hr_strap_session.btsnoop"), failAfter: 50), options: options).run(into: consumer)
    #expect(end.frames == 50 && consumer.facts.count == 50)
    let failure = try #require(end.failure)
    #expect(failure.message == "sniffer lost sync" && failure.exitStatus == 1 && failure.cause is RecordList.LostSync)
    #expect(consumer.end?.failure?.message == "sniffer lost sync")
  }

  /// A capture reader's error reaches the stream's caller with its message and exit status.
  @Test func aCaptureErrorKeepsItsWordsAndStatus() throws {
    let error = CaptureError.damaged(frame: 78, offset: 2976, reason: "truncated record")
    let failure = error.sourceFailure
    #expect(failure.message == error.message && failure.exitStatus == error.exitStatus)
    #expect(failure.cause as? CaptureError == error)
  }
}
