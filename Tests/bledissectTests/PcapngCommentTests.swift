import BLECapture
import BLECore
import BLETestSupport
import Foundation
import Testing

/// pcapng comments (a slice's context frames, `convert --comments`): written as each packet's
/// opt_comment and the section's, read back by our reader unchanged, and shown by Wireshark.
@Suite struct PcapngCommentTests {
  static func records() throws -> [CaptureRecord] {
    let reader = try CaptureFile.open(path: capturePath("hr_strap_session.btsnoop"))
    var records: [CaptureRecord] = []
    while let record = try reader.next(), records.count < 40 { records.append(record) }
    return records
  }

  /// Comments of every length class (padding 0 to 3, non-ASCII, empty = none).
  static func comment(_ index: Int) -> String? {
    index % 5 == 4 ? nil : String(repeating: "é", count: index % 4) + "frame \(index + 1): context (discovery)"
  }

  static func written(_ records: [CaptureRecord]) -> [UInt8] {
    var writer = CaptureWriter(format: .pcapngH4WithDirection, comment: "redacted by bledissect")
    for (index, record) in records.enumerated() { writer.write(record, comment: comment(index)) }
    return writer.takeOutput()
  }

  @Test func commentsLeaveTheRecordsAsTheyWere() throws {
    let records = try Self.records()
    let path = temporaryFile(Self.written(records))
    defer { unlink(path) }
    let reader = try CaptureFile.open(path: path)
    var read: [CaptureRecord] = []
    while let record = try reader.next() { read.append(record) }
    #expect(read.count == records.count)
    for (ours, theirs) in zip(read, records) {
      #expect(ours.bytes == theirs.bytes && ours.kind == theirs.kind && ours.direction == theirs.direction && ours.timestamp == theirs.timestamp)
    }
  }

  @Test(.enabled(if: which("tshark") != nil, "tshark is not installed"))
  func wiresharkShowsTheComments() throws {
    let records = try Self.records()
    let path = temporaryFile(Self.written(records))
    defer { unlink(path) }
    let (status, data) = try runProgram(which("tshark")!, ["-r", path, "-T", "fields", "-E", "separator=/t", "-e", "frame.number", "-e", "frame.comment"])
    #expect(status == 0)
    let lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).dropLast()
    #expect(lines.count == records.count)
    for (index, line) in lines.enumerated() {
      #expect(String(line) == "\(index + 1)\t\(Self.comment(index) ?? "")")
    }
    // The section's comment (capinfos comes with tshark).
    let (infoStatus, info) = try runProgram(try #require(which("capinfos")), ["-k", path])
    #expect(infoStatus == 0)
    #expect(String(decoding: info, as: UTF8.self).contains("Capture comment:     redacted by bledissect"))
  }
}
