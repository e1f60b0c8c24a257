import Foundation
import Testing
import BLECore
import BLETestSupport
@testable import BLECapture

@Suite struct CaptureReaderTests {
  static let formats: [(CaptureWriteFormat, String, String)] = [
    (.btsnoopH4, "btsnoop", "datalink 1002 (H4)"),
    (.btsnoopH1, "btsnoop", "datalink 1001 (H1)"),
    (.btsnoopMonitor, "btsnoop", "datalink 2001 (Linux monitor)"),
    (.packetLogger(bigEndian: true), "packetlogger", "big-endian"),
    (.packetLogger(bigEndian: false), "packetlogger", "little-endian (v2)"),
    (.pcapH4WithDirection, "pcap", "link type 201 (H4 with direction)"),
    (.pcapMonitor, "pcap", "link type 254 (Linux monitor)"),
    (.pcapngH4WithDirection, "pcapng", "link type 201 (H4 with direction)"),
  ]

  static func same(_ a: CaptureRecord, _ b: CaptureRecord) -> Bool {
    a.timestamp == b.timestamp && a.adapter == b.adapter && a.direction == b.direction && a.kind == b.kind && a.bytes == b.bytes
  }

  @Test(arguments: 0..<formats.count)
  func everyFormatYieldsTheSameRecords(index: Int) throws {
    let (format, name, detail) = Self.formats[index]
    let result = CaptureFixtures.read(CaptureFixtures.bytes(format))
    #expect(result.error == nil)
    #expect(result.format?.name == name)
    #expect(result.format?.detail == detail)
    try #require(result.records.count == CaptureFixtures.records.count)
    for (got, want) in zip(result.records, CaptureFixtures.records) {
      #expect(Self.same(got, want), "\(name) \(detail): \(got) != \(want)")
    }
  }

  @Test(arguments: 0..<formats.count)
  func everyFormatReadsFromAPipe(index: Int) throws {
    let (format, name, _) = Self.formats[index]
    let (found, records) = try CaptureFixtures.readThroughPipe(CaptureFixtures.bytes(format))
    #expect(found.name == name)
    #expect(records.count == CaptureFixtures.records.count)
    #expect(zip(records, CaptureFixtures.records).allSatisfy { Self.same($0, $1) })
  }

  @Test func btsnoopTimestampsCountFromYearZero() {
    // 0x00DCDDB30F2F8000 µs after 0000-01-01 is the Unix epoch (Wireshark's KUnixTimeBase);
    // BlueZ's 2000-based constant is exactly 946 684 800 s later.
    #expect(BTSnoopFormat.unixEpochOffset == 62_168_256_000_000_000)
    #expect(0x00E0_3AB4_4A67_6000 - BTSnoopFormat.unixEpochOffset == 946_684_800_000_000)
    var header = BTSnoopFormat.magic + [0, 0, 0, 1, 0, 0, 0x03, 0xEA]
    // One H4 command record at exactly 2000-01-01T00:00:00Z.
    header += [0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 2, 0, 0, 0, 0, 0x00, 0xE0, 0x3A, 0xB4, 0x4A, 0x67, 0x60, 0x00, 0x01, 0x03, 0x0C, 0x00]
    let result = CaptureFixtures.read(header)
    #expect(result.error == nil)
    #expect(result.records.first?.timestamp == 946_684_800_000_000)
    #expect(result.records.first?.kind == .command)
  }

  @Test func btsnoopH4DirectionComesFromFlagBitZero() {
    // bumble's writer sets 0x10 rather than 0x02 for commands and events: only bit 0 counts.
    var bytes = BTSnoopFormat.magic + [0, 0, 0, 1, 0, 0, 0x03, 0xEA]
    bytes += [0, 0, 0, 7, 0, 0, 0, 7, 0, 0, 0, 0x11, 0, 0, 0, 0, 0, 0xDC, 0xDD, 0xB3, 0x0F, 0x2F, 0x80, 0x00]
    bytes += [0x04, 0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00]
    let result = CaptureFixtures.read(bytes)
    #expect(result.records.first?.direction == .controllerToHost)
    #expect(result.records.first?.kind == .event)
    #expect(result.records.first?.timestamp == 0)
  }

  @Test func monitorRecordsKeepControllerIndexAndNotes() {
    let note = CaptureRecord(timestamp: 5, adapter: CaptureRecord.noController, direction: nil, kind: .note(.system), bytes: Array("Bluetooth subsystem version 2.22\0".utf8))
    let added = CaptureRecord(timestamp: 6, adapter: 1, direction: nil, kind: .indexAdded, bytes: [0, 1, 1, 2, 3, 4, 5, 6] + Array("hci1\0\0\0\0".utf8))
    let command = CaptureRecord(timestamp: 7, adapter: 1, direction: .hostToController, kind: .command, bytes: [0x03, 0x0C, 0x00])
    for format in [CaptureWriteFormat.btsnoopMonitor, .pcapMonitor] {
      let result = CaptureFixtures.read(CaptureFixtures.bytes(format, [note, added, command]))
      #expect(result.records.map(\.kind) == [.note(.system), .indexAdded, .command])
      #expect(result.records.map(\.adapter) == [0xFFFF, 1, 1])
    }
  }

  @Test func packetLoggerTextRecordsBecomeNotes() {
    // PacketLogger 0xFC note and 0xFB power records (Wireshark's packetlogger.c type list).
    let records = [
      CaptureRecord(timestamp: 1_000_000, direction: nil, kind: .note(.note), bytes: Array("hello\0".utf8)),
      CaptureRecord(timestamp: 2_000_001, direction: nil, kind: .note(.power), bytes: Array("Power on".utf8)),
      CaptureRecord(timestamp: 3_000_000, direction: .hostToController, kind: .iso, bytes: [0x01, 0x20, 0x00, 0x00]),
    ]
    for bigEndian in [true, false] {
      let result = CaptureFixtures.read(CaptureFixtures.bytes(.packetLogger(bigEndian: bigEndian), records))
      #expect(result.error == nil)
      #expect(result.records.map(\.kind) == [.note(.note), .note(.power), .iso])
      #expect(result.records[1].timestamp == 2_000_001)
    }
  }

  // MARK: Unreadable input (exit status 2)

  @Test func emptyFileIsUnreadable() {
    let result = CaptureFixtures.read([])
    #expect(result.error == .emptyFile)
    #expect(result.error?.exitStatus == 2)
  }

  @Test func textIsNotACapture() {
    let result = CaptureFixtures.read(Array("John Smith,42\n".utf8))
    #expect(result.error == .notACapture(firstBytes: Array("John Smi".utf8)))
    #expect(result.error?.message == "not a capture file bledissect understands (starts with 4a 6f 68 6e …); it reads btsnoop, PacketLogger, pcap, pcapng, those gzip-compressed, and Android bugreports (.txt with a BTSNOOP_LOG_SUMMARY, .zip)")
    #expect(result.error?.exitStatus == 2)
  }

  @Test func missingFileIsUnreadable() {
    let result = CaptureFixtures.read(path: "/nonexistent/bledissect/capture.btsnoop")
    #expect(result.error == .cannotOpen("No such file or directory"))
    #expect(result.error?.exitStatus == 2)
  }

  @Test func btsnoopBCSPIsUnsupported() {
    let result = CaptureFixtures.read(BTSnoopFormat.magic + [0, 0, 0, 1, 0, 0, 0x03, 0xEB])
    #expect(result.error == .unsupportedLinkType(format: "btsnoop", linkType: 1003, name: "BCSP"))
    #expect(result.error?.exitStatus == 2)
  }

  @Test func basebandPcapIsUnsupported() {
    // A pcap header with link type 255 (BLUETOOTH_BREDR_BB) and no packets.
    let bytes: [UInt8] = [0xD4, 0xC3, 0xB2, 0xA1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0, 0, 0xFF, 0x00, 0, 0]
    let result = CaptureFixtures.read(bytes)
    guard case .unsupportedLinkType(let format, let type, _)? = result.error else {
      Issue.record("expected unsupported link type, got \(String(describing: result.error))")
      return
    }
    #expect(format == "pcap")
    #expect(type == 255)
    #expect(result.error?.message.contains("link type 255 (BLUETOOTH_BREDR_BB") == true)
  }

  @Test func headerOnlyBtsnoopIsAnEmptyCapture() {
    let result = CaptureFixtures.read(BTSnoopFormat.magic + [0, 0, 0, 1, 0, 0, 0x03, 0xEA])
    #expect(result.error == nil)
    #expect(result.records.isEmpty)
  }

  // MARK: Damaged input (exit status 1, frames before the damage kept)

  /// Cuts every format's capture at every byte of its last record.
  @Test(arguments: 0..<formats.count)
  func truncationAtEveryByteOfTheLastRecord(index: Int) {
    let (format, name, _) = Self.formats[index]
    let full = CaptureFixtures.bytes(format)
    let withoutLast = CaptureFixtures.bytes(format, Array(CaptureFixtures.records.dropLast()))
    let kept = CaptureFixtures.records.count - 1
    for cut in (withoutLast.count + 1)..<full.count {
      let result = CaptureFixtures.read(Array(full[..<cut]))
      #expect(result.records.count == kept, "\(name) cut at \(cut)")
      guard case .damaged(let frame, let offset, let reason)? = result.error else {
        Issue.record("\(name) cut at \(cut): expected damage, got \(String(describing: result.error))")
        continue
      }
      #expect(frame == kept + 1, "\(name) cut at \(cut)")
      #expect(reason.contains("truncated"), "\(name) cut at \(cut): \(reason)")
      if case .pcapngH4WithDirection = format {
        #expect(offset >= Int64(withoutLast.count - 4) && offset <= Int64(withoutLast.count), "\(name) offset \(offset)")
      } else {
        #expect(offset == Int64(withoutLast.count), "\(name) cut at \(cut): offset \(offset)")
      }
      #expect(result.error?.exitStatus == 1)
    }
  }

  @Test func absurdLengthInTheMiddle() {
    var bytes = CaptureFixtures.bytes(.btsnoopH4)
    let firstTwo = CaptureFixtures.bytes(.btsnoopH4, Array(CaptureFixtures.records.prefix(2)))
    // Included length of the third record := 0xFFFFFFF0.
    bytes.replaceSubrange((firstTwo.count + 4)..<(firstTwo.count + 8), with: [0xFF, 0xFF, 0xFF, 0xF0])
    let result = CaptureFixtures.read(bytes)
    #expect(result.records.count == 2)
    #expect(result.error == .damaged(frame: 3, offset: Int64(firstTwo.count), reason: "impossible included length 4294967280 (at most 262144)"))
  }

  @Test func absurdPacketLoggerLength() {
    var bytes = CaptureFixtures.bytes(.packetLogger(bigEndian: true))
    let firstThree = CaptureFixtures.bytes(.packetLogger(bigEndian: true), Array(CaptureFixtures.records.prefix(3)))
    bytes.replaceSubrange(firstThree.count..<(firstThree.count + 4), with: [0x7F, 0, 0, 0])
    let result = CaptureFixtures.read(bytes)
    #expect(result.records.count == 3)
    #expect(result.error == .damaged(frame: 4, offset: Int64(firstThree.count), reason: "impossible record length 2130706432 (8 to 65535)"))
  }

  @Test func absurdPcapLength() {
    var bytes = CaptureFixtures.bytes(.pcapH4WithDirection)
    let firstTwo = CaptureFixtures.bytes(.pcapH4WithDirection, Array(CaptureFixtures.records.prefix(2)))
    bytes.replaceSubrange((firstTwo.count + 8)..<(firstTwo.count + 12), with: [0xF0, 0xFF, 0xFF, 0x7F])
    let result = CaptureFixtures.read(bytes)
    #expect(result.records.count == 2)
    guard case .damaged(let frame, let offset, _)? = result.error else {
      Issue.record("expected damage, got \(String(describing: result.error))")
      return
    }
    #expect(frame == 3)
    #expect(offset == Int64(firstTwo.count))
  }

  @Test func garbageAfterAValidHeader() {
    var generator = SeededGenerator(seed: 0x5EED)
    let garbage = (0..<4000).map { _ in UInt8.random(in: 0...255, using: &generator) }
    let result = CaptureFixtures.read(BTSnoopFormat.magic + [0, 0, 0, 1, 0, 0, 0x03, 0xEA] + garbage)
    #expect(result.records.isEmpty)
    guard case .damaged(let frame, let offset, _)? = result.error else {
      Issue.record("expected damage, got \(String(describing: result.error))")
      return
    }
    #expect(frame == 1)
    #expect(offset == 16)
  }

  @Test func randomGarbageNeverCrashes() {
    // Seeded: the seed is printed by the failure message if anything goes wrong.
    var generator = SeededGenerator(seed: 0xB1E)
    for round in 0..<200 {
      let count = Int.random(in: 1...600, using: &generator)
      var bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
      // Give half of them a real header so the record paths are exercised.
      if round % 2 == 0 { bytes = BTSnoopFormat.magic + [0, 0, 0, 1, 0, 0, 0x03, UInt8(0xE9 + round % 3)] + bytes }
      let result = CaptureFixtures.read(bytes)
      if let error = result.error { #expect(error.exitStatus == 1 || error.exitStatus == 2, "seed 0xB1E round \(round)") }
    }
  }
}
