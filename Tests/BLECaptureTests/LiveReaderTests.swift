#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Testing
import BLECore
@testable import BLECapture

/// `LiveReader` in process: a followed file in each format it reads as it grows (truncated on
/// the way), a stop that ends a wait at once, the recorder's file valid after every record.
@Suite struct LiveReaderTests {
  /// Appends `bytes` to the file at `path`.
  static func append(_ bytes: [UInt8], to path: String) {
    let fd = open(path, O_WRONLY | O_APPEND)
    precondition(fd >= 0)
    bytes.withUnsafeBufferPointer { _ = write(fd, $0.baseAddress!, $0.count) }
    close(fd)
  }

  /// The records of `format` in the file as written, split where each record starts.
  static func parts(_ format: CaptureWriteFormat) -> (header: [UInt8], records: [[UInt8]]) {
    var writer = CaptureWriter(format: format)
    let header = writer.takeOutput()
    var records: [[UInt8]] = []
    for record in CaptureFixtures.records {
      writer.write(record)
      records.append(writer.takeOutput())
    }
    return (header, records)
  }

  @Test(arguments: [CaptureWriteFormat.btsnoopH4, .packetLogger(bigEndian: true), .packetLogger(bigEndian: false)])
  func followsAGrowingFile(format: CaptureWriteFormat) throws {
    let (header, records) = Self.parts(format)
    let path = CaptureFixtures.temporaryFile(header + records[0])
    defer { unlink(path) }
    let control = LiveControl()
    let notices = NoticeLog()
    let reader = try LiveReader(.file(path: Array(path.utf8), name: path), control: control) { notices.add($0) }
    reader.pollInterval = 10
    // The writer: the rest a record at a time, then the file truncated and written again.
    let writer = Thread {
      for record in records.dropFirst() {
        usleep(20_000)
        Self.append(record, to: path)
      }
      usleep(50_000)
      truncate(path, 0)
      usleep(100_000)
      Self.append(header + records[0] + records[1], to: path)
      usleep(100_000)
      control.requestStop()
    }
    writer.start()
    var read: [CaptureRecord] = []
    while let record = try reader.next() { read.append(record) }
    let expected = CaptureFixtures.records + CaptureFixtures.records.prefix(2)
    #expect(read.map(\.bytes) == expected.map(\.bytes))
    #expect(read.map(\.timestamp) == expected.map(\.timestamp))
    #expect(reader.interruptions == 1)
    #expect(notices.lines.contains { $0.contains("file truncated") })
  }

  @Test func aStopEndsAWaitingReadAtOnce() throws {
    var ends: [Int32] = [0, 0]
    #expect(pipe(&ends) == 0)
    defer { close(ends[1]) }
    let control = LiveControl()
    let reader = try LiveReader(.stream(descriptor: ends[0], name: "pipe", owns: true), control: control) { _ in }
    let bytes = CaptureFixtures.bytes(.btsnoopH4)
    bytes.withUnsafeBufferPointer { _ = write(ends[1], $0.baseAddress!, $0.count) }
    let start = Date()
    let stopper = Thread {
      usleep(100_000)
      control.requestStop()
    }
    stopper.start()
    var count = 0
    while try reader.next() != nil { count += 1 }
    #expect(count == CaptureFixtures.records.count)
    #expect(Date().timeIntervalSince(start) < 5)
  }

  @Test func theRecordingIsValidAfterEveryRecord() throws {
    let path = CaptureFixtures.temporaryFile([], name: "recording")
    defer { unlink(path) }
    let recorder = try CaptureRecorder(pathBytes: Array(path.utf8), name: path, format: CaptureRecorder.format(forName: path + ".btsnoop"))
    for (index, record) in CaptureFixtures.records.enumerated() {
      #expect(recorder.write(record) == nil)
      let back = CaptureFixtures.read(path: path)
      #expect(back.error == nil)
      #expect(back.records.map(\.bytes) == CaptureFixtures.records.prefix(index + 1).map(\.bytes))
    }
    #expect(recorder.records == CaptureFixtures.records.count)
    #expect(CaptureRecorder.format(forName: "x.PCAPNG") == .pcapngH4WithDirection)
    #expect(CaptureRecorder.format(forName: "x.pklg") == .packetLogger(bigEndian: true))
  }
}

/// Notices collected from the reading thread.
final class NoticeLog: @unchecked Sendable {
  private let lock = NSLock()
  private var collected: [String] = []
  func add(_ line: String) {
    lock.lock()
    collected.append(line)
    lock.unlock()
  }
  var lines: [String] {
    lock.lock()
    defer { lock.unlock() }
    return collected
  }
}
