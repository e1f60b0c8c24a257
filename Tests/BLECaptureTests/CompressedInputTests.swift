import Foundation
import Testing
import BLECore
import BLETestSupport
@testable import BLECapture

/// gzip input: every format inflated on the fly, from files and pipes; damaged gzip is an error.
@Suite struct CompressedInputTests {
  @Test(arguments: 0..<CaptureReaderTests.formats.count)
  func gzipOfEveryFormatYieldsTheSameRecords(index: Int) throws {
    let (format, name, detail) = CaptureReaderTests.formats[index]
    let plain = CaptureFixtures.bytes(format)
    let result = CaptureFixtures.read(Deflate.compress(plain, wrapper: .gzip))
    #expect(result.error == nil)
    #expect(result.format?.name == name)
    #expect(result.format?.detail == detail + ", gzip-compressed")
    try #require(result.records.count == CaptureFixtures.records.count)
    for (read, written) in zip(result.records, CaptureFixtures.records) { #expect(CaptureReaderTests.same(read, written)) }
  }

  @Test func gzipThroughAPipe() throws {
    let gzipped = Deflate.compress(CaptureFixtures.bytes(.btsnoopH4), wrapper: .gzip)
    let (format, records) = try CaptureFixtures.readThroughPipe(gzipped)
    #expect(format.name == "btsnoop")
    #expect(records.count == CaptureFixtures.records.count)
  }

  /// From a pipe, asking whether a record is ready never waits for the writer, gzip or not.
  @Test func gzipPipeAnswersReadinessWithoutWaiting() throws {
    let plain = CaptureFixtures.bytes(.btsnoopH4)
    let firstRecordEnd = 16 + 24 + 1 + CaptureFixtures.records[0].bytes.count
    var fds: [Int32] = [0, 0]
    try #require(pipe(&fds) == 0)
    defer { close(fds[1]) }
    let first = Deflate.compress(Array(plain[0..<firstRecordEnd]), wrapper: .gzip)
    first.withUnsafeBufferPointer { _ = write(fds[1], $0.baseAddress, $0.count) }
    let reader = try CaptureFile.open(InputSource(descriptor: fds[0], name: "pipe", owns: true))
    #expect(reader.mayWaitForInput)
    #expect(reader.nextIsReady())
    #expect(try reader.next()?.kind == .command)
    #expect(!reader.nextIsReady())  // would wait: the writer has sent nothing more
    let rest = Deflate.compress(Array(plain[firstRecordEnd...]), wrapper: .gzip)
    rest.withUnsafeBufferPointer { _ = write(fds[1], $0.baseAddress, $0.count) }
    #expect(reader.nextIsReady())
    #expect(try reader.next()?.kind == .event)
  }

  @Test func concatenatedMembersAreOneStream() throws {
    let plain = CaptureFixtures.bytes(.btsnoopH4)
    // The header in one member, the records in a second one (as `cat a.gz b.gz`).
    let gzipped = Deflate.compress(Array(plain[0..<16]), wrapper: .gzip) + Deflate.compress(Array(plain[16...]), wrapper: .gzip)
    let result = CaptureFixtures.read(gzipped)
    #expect(result.error == nil)
    #expect(result.records.count == CaptureFixtures.records.count)
  }

  @Test func gzipFromMemoryLikeTheFuzzTargets() throws {
    let gzipped = Deflate.compress(CaptureFixtures.bytes(.packetLogger(bigEndian: true)), wrapper: .gzip)
    let reader = try CaptureFile.open(InputSource(bytes: gzipped, name: "memory"))
    var count = 0
    while try reader.next() != nil { count += 1 }
    #expect(count == CaptureFixtures.records.count)
  }

  /// A large capture inflates through a bounded buffer: it is read whole, in order.
  @Test func largeCaptureStreams() throws {
    var records: [CaptureRecord] = []
    for index in 0..<20_000 {
      var record = CaptureFixtures.records[index % CaptureFixtures.records.count]
      record.timestamp = CaptureFixtures.base + Int64(index)
      records.append(record)
    }
    let result = CaptureFixtures.read(Deflate.compress(CaptureFixtures.bytes(.btsnoopH4, records), wrapper: .gzip))
    #expect(result.error == nil)
    #expect(result.records.count == records.count)
    #expect(result.records.last?.timestamp == records.last?.timestamp)
    // The buffers stay at their initial sizes however much is inflated.
    let gzipped = Deflate.compress(CaptureFixtures.bytes(.btsnoopH4, records), wrapper: .gzip)
    let path = CaptureFixtures.temporaryFile(gzipped)
    defer { unlink(path) }
    let reader = try CaptureFile.open(path: path)
    while try reader.next() != nil {}
    let input = try #require(((reader as? ContainedReader)?.reader as? BTSnoopReader)?.input)
    #expect(input.bufferSize == InputSource.chunkSize)
    #expect(input.inflater?.inputCapacity == Inflater.inputChunk)
  }

  @Test func truncatedGzipKeepsTheFramesBeforeAndSaysSo() throws {
    var records: [CaptureRecord] = []
    for index in 0..<2_000 { records.append(CaptureFixtures.records[index % CaptureFixtures.records.count]) }
    let gzipped = Deflate.compress(CaptureFixtures.bytes(.btsnoopH4, records), wrapper: .gzip)
    let result = CaptureFixtures.read(Array(gzipped[0..<(gzipped.count / 2)]))
    #expect(result.records.count > 0 && result.records.count < records.count)
    guard case .readFailed(let why)? = result.error else {
      Issue.record("expected a read error, got \(String(describing: result.error))")
      return
    }
    #expect(why.contains("truncated"))
  }

  @Test func corruptGzipIsAnError() throws {
    var records: [CaptureRecord] = []
    for index in 0..<2_000 { records.append(CaptureFixtures.records[index % CaptureFixtures.records.count]) }
    var gzipped = Deflate.compress(CaptureFixtures.bytes(.btsnoopH4, records), wrapper: .gzip)
    for offset in (gzipped.count / 2)..<(gzipped.count / 2 + 16) { gzipped[offset] ^= 0xA5 }
    let result = CaptureFixtures.read(gzipped)
    #expect(result.records.count < records.count)
    #expect(result.error != nil)
  }

  @Test func gzipHeaderOnlyOrEmptyContent() throws {
    let cut = CaptureFixtures.read([0x1F, 0x8B, 0x08, 0x00])
    #expect(cut.records.isEmpty)
    #expect(cut.error != nil)
    let empty = CaptureFixtures.read(Deflate.compress([], wrapper: .gzip))
    #expect(empty.error == .corrupt("the gzip file holds no bytes: not a capture"))
  }

  @Test func gzipOfGzipIsNotUnwrappedTwice() throws {
    let twice = Deflate.compress(Deflate.compress(CaptureFixtures.bytes(.btsnoopH4), wrapper: .gzip), wrapper: .gzip)
    let result = CaptureFixtures.read(twice)
    guard case .notACapture? = result.error else {
      Issue.record("expected not a capture, got \(String(describing: result.error))")
      return
    }
  }

  /// A zip bomb's output is streamed: reading it costs time, never memory beyond the buffers.
  @Test func highlyCompressedGarbageIsRefusedQuickly() throws {
    let zeros = [UInt8](repeating: 0, count: 8 * 1024 * 1024)
    let result = CaptureFixtures.read(Deflate.compress(zeros, wrapper: .gzip))
    #expect(result.records.isEmpty)
    #expect(result.error != nil)
  }
}
