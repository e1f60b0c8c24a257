import Foundation
import Testing
import BLECore
import BLETestSupport
@testable import BLECapture

/// Synthetic Android bugreports (capture-formats.md §5.3): btsnooz v1 and v2 payloads built from
/// the records of captures/hr_strap_session.btsnoop, in a bugreport text and a bugreport zip.
enum BugreportFixtures {
  static var sessionRecords: [CaptureRecord] {
    let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent("captures/hr_strap_session.btsnoop").path
    return CaptureFixtures.read(path: path).records
  }

  static func btsnoozType(_ record: CaptureRecord) -> UInt8 {
    let received = record.direction == .controllerToHost
    switch record.kind {
    case .command: return 0x20
    case .event: return 0x10
    case .acl: return received ? 0x11 : 0x21
    case .sco: return received ? 0x12 : 0x22
    case .iso: return received ? 0x17 : 0x2D
    default: return 0xFF
    }
  }

  /// Preamble (version, last timestamp) and the zlib-compressed records. The first delta is
  /// arbitrary (the gap to a record not in the summary).
  static func btsnooz(_ records: [CaptureRecord], version: UInt8, firstDelta: UInt32 = 777) -> [UInt8] {
    preamble(records, version: version) + Deflate.compress(btsnoozBody(records, version: version, firstDelta: firstDelta), wrapper: .zlib)
  }

  /// The 9-byte preamble: the version and the last record's time.
  static func preamble(_ records: [CaptureRecord], version: UInt8) -> [UInt8] {
    var preamble: [UInt8] = [version]
    let last = UInt64(records.last?.timestamp ?? 0)
    for shift in stride(from: 0, to: 64, by: 8) { preamble.append(UInt8(truncatingIfNeeded: last >> UInt64(shift))) }
    return preamble
  }

  /// The records packed as btsnooz `version` does, not compressed.
  static func btsnoozBody(_ records: [CaptureRecord], version: UInt8, firstDelta: UInt32 = 777) -> [UInt8] {
    var body: [UInt8] = []
    func le16(_ value: Int) { body += [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF)] }
    func le32(_ value: UInt32) { le16(Int(value & 0xFFFF)); le16(Int(value >> 16)) }
    var previous = records.first?.timestamp ?? 0
    for (index, record) in records.enumerated() {
      le16(record.bytes.count + 1)
      if version == 2 { le16(record.originalLength + 1) }
      le32(index == 0 ? firstDelta : UInt32(record.timestamp - previous))
      body.append(btsnoozType(record))
      body += record.bytes
      previous = record.timestamp
    }
    return body
  }

  /// A bugreport text around `payload`, base64 in lines of 76 as Android writes it.
  static func bugreportText(_ payload: [UInt8]) -> [UInt8] {
    let encoded = Data(payload).base64EncodedString(options: [.lineLength76Characters, .endLineWithLineFeed])
    let text = """
      ========================================================
      == dumpstate: 2026-11-30 06:30:00
      ========================================================
      Build: synthetic
      DUMP OF SERVICE bluetooth_manager:
      Bluetooth Status
        enabled: true
      --- BEGIN:BTSNOOP_LOG_SUMMARY (\(payload.count) bytes in) ---
      \(encoded)
      --- END:BTSNOOP_LOG_SUMMARY ---
      more text after
      """
    return Array(text.utf8)
  }
}

@Suite struct BugreportTests {
  static func expectSame(_ decoded: [CaptureRecord], _ source: [CaptureRecord], version: Int) {
    #expect(decoded.count == source.count)
    for (read, original) in zip(decoded, source) {
      #expect(read.kind == original.kind)
      #expect(read.direction == original.direction)
      #expect(read.bytes == original.bytes)
      #expect(read.timestamp == original.timestamp)
      #expect(read.originalLength == (version == 2 ? original.originalLength : original.bytes.count))
    }
  }

  @Test(arguments: [UInt8(1), 2])
  func bugreportTextDecodesToTheSourceRecords(version: UInt8) throws {
    let source = BugreportFixtures.sessionRecords
    try #require(source.count == 160)
    let text = BugreportFixtures.bugreportText(BugreportFixtures.btsnooz(source, version: version))
    let result = CaptureFixtures.read(text)
    #expect(result.error == nil)
    #expect(result.format?.name == "btsnooz")
    #expect(result.format?.detail.hasPrefix("version \(version), Android bugreport") == true)
    Self.expectSame(result.records, source, version: Int(version))
  }

  @Test(arguments: [true, false])
  func bugreportZipDecodesToTheSourceRecords(deflate: Bool) throws {
    let source = BugreportFixtures.sessionRecords
    let text = BugreportFixtures.bugreportText(BugreportFixtures.btsnooz(source, version: 2))
    let archive = ZipArchive.archive([
      (name: "version.txt", bytes: Array("2.0".utf8), deflate: false),
      (name: "FS/data/misc/bluetooth/logs/readme.txt", bytes: Array("elsewhere".utf8), deflate: true),
      (name: "bugreport-synthetic-2026-11-30-06-30-00.txt", bytes: text, deflate: deflate),
    ])
    let result = CaptureFixtures.read(archive)
    #expect(result.error == nil)
    #expect(result.format?.detail.contains("bugreport-synthetic-2026-11-30-06-30-00.txt in the zip archive") == true)
    Self.expectSame(result.records, source, version: 2)
  }

  @Test func mainEntryNamesTheTextFile() throws {
    let source = Array(BugreportFixtures.sessionRecords.prefix(10))
    let text = BugreportFixtures.bugreportText(BugreportFixtures.btsnooz(source, version: 1))
    let archive = ZipArchive.archive([
      (name: "bugreport-decoy.txt", bytes: Array("no summary here\n".utf8), deflate: true),
      (name: "main_entry.txt", bytes: Array("dumpstate-main.txt".utf8), deflate: false),
      (name: "dumpstate-main.txt", bytes: text, deflate: true),
    ])
    let result = CaptureFixtures.read(archive)
    #expect(result.error == nil)
    Self.expectSame(result.records, source, version: 1)
  }

  @Test func summaryThroughGzip() throws {
    let source = Array(BugreportFixtures.sessionRecords.prefix(20))
    let text = BugreportFixtures.bugreportText(BugreportFixtures.btsnooz(source, version: 2))
    let result = CaptureFixtures.read(Deflate.compress(text, wrapper: .gzip))
    #expect(result.error == nil)
    Self.expectSame(result.records, source, version: 2)
  }

  /// The BEGIN marker found wherever the 64 KiB read chunks cut it.
  @Test(arguments: [65_536 - 40, 65_536 - 20, 65_536 - 10, 131_072 - 33])
  func markerAcrossReadChunks(filler: Int) throws {
    let source = Array(BugreportFixtures.sessionRecords.prefix(8))
    let text = BugreportFixtures.bugreportText(BugreportFixtures.btsnooz(source, version: 2))
    let padded = [UInt8](repeating: UInt8(ascii: "="), count: filler) + [0x0A] + text
    let result = CaptureFixtures.read(padded)
    #expect(result.error == nil)
    Self.expectSame(result.records, source, version: 2)
  }

  @Test func textWithoutSummaryIsNotACapture() throws {
    let result = CaptureFixtures.read(Array("just some notes\nnothing else\n".utf8))
    #expect(result.error == .notACapture(firstBytes: Array("just som".utf8)))
    #expect(result.error?.message.contains("with a BTSNOOP_LOG_SUMMARY") == true)
    // Long text: the marker is looked for across the read chunks.
    let long = [UInt8](repeating: UInt8(ascii: "x"), count: 200_000)
    #expect(CaptureFixtures.read(long).error == .notACapture(firstBytes: Array("xxxxxxxx".utf8)))
  }

  @Test func corruptBase64IsAClearError() throws {
    var text = BugreportFixtures.bugreportText(BugreportFixtures.btsnooz(BugreportFixtures.sessionRecords, version: 2))
    let marker = Array("bytes in) ---\n".utf8)
    let offset = try #require((0..<text.count).first { Array(text[$0..<min($0 + marker.count, text.count)]) == marker }) + marker.count
    text[offset + 10] = UInt8(ascii: "*")
    let result = CaptureFixtures.read(text)
    #expect(result.error == .corrupt("BTSNOOP_LOG_SUMMARY is not base64 (byte 0x2a at offset 10 of the section)"))
  }

  @Test func badZlibStreamIsAClearError() throws {
    var payload = BugreportFixtures.btsnooz(BugreportFixtures.sessionRecords, version: 2)
    payload[9] = 0x00  // not a zlib header
    let result = CaptureFixtures.read(BugreportFixtures.bugreportText(payload))
    guard case .readFailed(let why)? = result.error else {
      Issue.record("expected a zlib error, got \(String(describing: result.error))")
      return
    }
    #expect(why.contains("corrupt zlib data"))
    var cut = BugreportFixtures.btsnooz(BugreportFixtures.sessionRecords, version: 1)
    cut.removeLast(cut.count / 3)
    let truncated = CaptureFixtures.read(BugreportFixtures.bugreportText(cut))
    guard case .readFailed(let reason)? = truncated.error else {
      Issue.record("expected a truncation, got \(String(describing: truncated.error))")
      return
    }
    #expect(reason.contains("truncated"))
  }

  @Test func unknownVersionAndShortPreamble() throws {
    var payload = BugreportFixtures.btsnooz(Array(BugreportFixtures.sessionRecords.prefix(3)), version: 2)
    payload[0] = 3
    #expect(CaptureFixtures.read(BugreportFixtures.bugreportText(payload)).error == .unsupportedVersion(format: "btsnooz", version: 3))
    let short = CaptureFixtures.read(BugreportFixtures.bugreportText([1, 2, 3]))
    #expect(short.error == .corrupt("btsnooz preamble is 3 bytes, needs 9 (version, last timestamp)"))
  }

  /// A record whose length runs past the inflated body: the records before it, then damage.
  @Test func recordCutShortInTheBodyIsDamage() throws {
    let source = Array(BugreportFixtures.sessionRecords.prefix(5))
    var payload = BugreportFixtures.btsnooz(source, version: 1)
    var inflated = try Inflater.inflateAll(payload[9...], wrapper: .zlib, limit: 1 << 20)
    inflated.removeLast(2)
    payload = Array(payload[0..<9]) + Deflate.compress(inflated, wrapper: .zlib)
    let result = CaptureFixtures.read(BugreportFixtures.bugreportText(payload))
    #expect(result.records.count == 4)
    guard case .damaged(let frame, _, let reason)? = result.error else {
      Issue.record("expected damage, got \(String(describing: result.error))")
      return
    }
    #expect(frame == 5)
    #expect(reason.contains("truncated"))
  }

  @Test func zipHostileEntries() throws {
    let text = BugreportFixtures.bugreportText(BugreportFixtures.btsnooz(Array(BugreportFixtures.sessionRecords.prefix(3)), version: 2))
    let good = ZipArchive.archive([(name: "bugreport-x.txt", bytes: text, deflate: true)])
    // Central directory entry: compressed size at 20, uncompressed at 24, flags at 8.
    let central = good.count - 22 - (46 + "bugreport-x.txt".utf8.count)
    var huge = good
    for index in 0..<4 { huge[central + 20 + index] = 0xFF; huge[central + 24 + index] = 0x7F }
    huge[central + 23] = 0x7F
    guard case .corrupt(let why)? = CaptureFixtures.read(huge).error else {
      Issue.record("expected a refusal for a huge declared size")
      return
    }
    #expect(why.contains("more than the archive holds"))
    var encrypted = good
    encrypted[central + 8] |= 1
    #expect(CaptureFixtures.read(encrypted).error == .corrupt("zip entry bugreport-x.txt is encrypted; bledissect does not decrypt"))
    var zip64 = good
    for index in 0..<4 { zip64[central + 20 + index] = 0xFF }
    #expect(CaptureFixtures.read(zip64).error == .corrupt("zip entry bugreport-x.txt is a zip64 entry; not read"))
    var method = good
    method[central + 10] = 12
    #expect(CaptureFixtures.read(method).error?.message.contains("compression method 12") == true)
    let cut = Array(good[0..<(good.count - 10)])
    #expect(CaptureFixtures.read(cut).error == .corrupt("zip archive without an end-of-central-directory record (cut short?)"))
    let noReport = ZipArchive.archive([(name: "notes.txt", bytes: text, deflate: true)])
    guard case .corrupt(let none)? = CaptureFixtures.read(noReport).error else {
      Issue.record("expected a clear error for a zip without a bugreport")
      return
    }
    #expect(none.contains("without a snoop log (btsnoop_hci.log) or a bugreport text file"))
    // A bugreport text with no summary in it: said so, not "starts with" nothing.
    let bare = ZipArchive.archive([(name: "bugreport-x.txt", bytes: Array("== dumpstate\nno snoop here\n".utf8), deflate: true)])
    #expect(CaptureFixtures.read(bare).error == .corrupt(
      "a zip archive without a snoop log (btsnoop_hci.log), whose bugreport text bugreport-x.txt holds no BTSNOOP_LOG_SUMMARY either: no capture in it"))
  }

  /// Archives given in memory (as the fuzz targets give them) are read like files.
  @Test func zipFromMemory() throws {
    let source = Array(BugreportFixtures.sessionRecords.prefix(12))
    let text = BugreportFixtures.bugreportText(BugreportFixtures.btsnooz(source, version: 2))
    for deflate in [true, false] {
      let archive = ZipArchive.archive([(name: "bugreport-mem.txt", bytes: text, deflate: deflate)])
      let reader = try CaptureFile.open(InputSource(bytes: archive, name: "memory"))
      var records: [CaptureRecord] = []
      while let record = try reader.next() { records.append(record) }
      Self.expectSame(records, source, version: 2)
    }
  }

  @Test func zipFromAPipeIsRefused() throws {
    let archive = ZipArchive.archive([(name: "bugreport-x.txt", bytes: Array("x".utf8), deflate: true)])
    #expect(throws: CaptureError.self) { _ = try CaptureFixtures.readThroughPipe(archive) }
  }

  /// Random damage to a bugreport zip, a bugreport text and a gzip file: each read ends (records,
  /// an error or both), never a crash or a hang.
  @Test func mutatedContainersEndCleanly() throws {
    let source = Array(BugreportFixtures.sessionRecords.prefix(40))
    let text = BugreportFixtures.bugreportText(BugreportFixtures.btsnooz(source, version: 2))
    let bases = [
      ZipArchive.archive([(name: "bugreport-m.txt", bytes: text, deflate: true)]),
      BugreportFixtures.bugreportText(BugreportFixtures.btsnooz(source, version: 1)),
      Deflate.compress(CaptureFixtures.bytes(.btsnoopH4, source), wrapper: .gzip),
    ]
    var random = SeededGenerator(seed: 0x6272_6570)
    for round in 0..<240 {
      var bytes = bases[round % bases.count]
      if round % 4 == 3 {
        bytes.removeLast(Int.random(in: 1..<bytes.count, using: &random))
      } else {
        for _ in 0..<Int.random(in: 1...6, using: &random) {
          bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
        }
      }
      let result = CaptureFixtures.read(bytes)
      #expect(result.records.count <= source.count + 1, "round \(round)")
      if let error = result.error { #expect(!error.message.isEmpty) }
    }
  }
}

/// Bugreport zips that hold the full snoop log as an entry (capture-formats.md §5.1:
/// `FS/data/misc/bluetooth/logs/btsnoop_hci.log`, rotated to `.last`): the entry is read
/// instead of the text's btsnooz summary, which keeps only a truncated tail.
@Suite struct BugreportSnoopLogEntryTests {
  static let logDirectory = "FS/data/misc/bluetooth/logs/"

  /// The session capture as Android writes it (btsnoop, datalink 1002), and its records read plainly.
  static func plainLog(_ count: Int = 160) -> (bytes: [UInt8], records: [CaptureRecord]) {
    let bytes = CaptureFixtures.bytes(.btsnoopH4, Array(BugreportFixtures.sessionRecords.prefix(count)))
    let plain = CaptureFixtures.read(bytes)
    precondition(plain.error == nil && plain.records.count == count)
    return (bytes, plain.records)
  }

  static func expectSameRecords(_ read: [CaptureRecord], _ plain: [CaptureRecord], sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(read.count == plain.count, sourceLocation: sourceLocation)
    #expect(read.map(Self.summary) == plain.map(Self.summary), sourceLocation: sourceLocation)
  }

  struct RecordSummary: Equatable {
    var kind: PacketKind
    var direction: Direction?
    var adapter: UInt16
    var timestamp: Int64
    var originalLength: Int
    var fileOffset: Int64
    var bytes: [UInt8]
  }

  static func summary(_ record: CaptureRecord) -> RecordSummary {
    RecordSummary(
      kind: record.kind, direction: record.direction, adapter: record.adapter, timestamp: record.timestamp,
      originalLength: record.originalLength, fileOffset: record.fileOffset, bytes: record.bytes)
  }

  @Test(arguments: [true, false])
  func snoopLogEntryIsReadInsteadOfTheSummary(deflate: Bool) throws {
    let (log, plain) = Self.plainLog()
    // The summary holds only the first 10 records: reading it would show 10 frames.
    let text = BugreportFixtures.bugreportText(BugreportFixtures.btsnooz(Array(BugreportFixtures.sessionRecords.prefix(10)), version: 2))
    let archive = ZipArchive.archive([
      (name: "version.txt", bytes: Array("2.0".utf8), deflate: false),
      (name: "bugreport-synthetic-2026-11-30-06-30-00.txt", bytes: text, deflate: true),
      (name: Self.logDirectory, bytes: [], deflate: false),
      (name: Self.logDirectory + "btsnoop_hci.log", bytes: log, deflate: deflate),
    ])
    let result = CaptureFixtures.read(archive)
    #expect(result.error == nil)
    #expect(result.format?.name == "btsnoop")
    #expect(result.format?.detail == "datalink 1002 (H4), FS/data/misc/bluetooth/logs/btsnoop_hci.log in the zip archive")
    #expect(result.format?.notice == nil)
    Self.expectSameRecords(result.records, plain)
  }

  /// The archive as Python's zipfile writes it (Scripts/captures/make_bugreport_zip.py, run
  /// here when python3 is there; else the Swift-written archives cover it): data descriptors,
  /// its own deflate, directory entries.
  @Test(.enabled(if: which("python3") != nil, "python3 is not installed"))
  func zipWrittenByPythonReadsTheSameRecords() throws {
    let (log, plain) = Self.plainLog(40)
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bugreport-zip-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let logPath = directory.appendingPathComponent("btsnoop_hci.log").path
    try Data(log).write(to: URL(fileURLWithPath: logPath))
    let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent("Scripts/captures/make_bugreport_zip.py").path
    for (index, options) in [["--method", "stored"], ["--method", "deflated"], ["--method", "deflated", "--stream"], ["--method", "stored", "--stream"]].enumerated() {
      let method = options.joined(separator: " ")
      let zipPath = directory.appendingPathComponent("bugreport-\(index).zip").path
      let process = Process()
      process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
      process.arguments = ["python3", script] + options + ["--log", logPath, "--last", logPath, zipPath]
      try process.run()
      process.waitUntilExit()
      try #require(process.terminationStatus == 0)
      let result = CaptureFixtures.read(path: zipPath)
      #expect(result.error == nil, "\(method)")
      Self.expectSameRecords(result.records, plain)
      #expect(result.format?.notice?.contains("btsnoop_hci.log.last") == true)
    }
  }

  @Test func fullLogIsPickedOverTheRotatedOneAndTheOthersAreNamed() throws {
    let (log, plain) = Self.plainLog()
    let (older, _) = Self.plainLog(5)
    let archive = ZipArchive.archive([
      (name: Self.logDirectory + "btsnoop_hci.log.last", bytes: older, deflate: true),
      (name: Self.logDirectory + "btsnooz_hci.log", bytes: older, deflate: true),
      (name: Self.logDirectory + "btsnoop_hci.log", bytes: log, deflate: true),
      (name: "bugreport-x.txt", bytes: Array("no summary\n".utf8), deflate: true),
    ])
    let result = CaptureFixtures.read(archive)
    #expect(result.error == nil)
    Self.expectSameRecords(result.records, plain)
    #expect(
      result.format?.detail
        == "datalink 1002 (H4), FS/data/misc/bluetooth/logs/btsnoop_hci.log in the zip archive (not read: FS/data/misc/bluetooth/logs/btsnoop_hci.log.last, FS/data/misc/bluetooth/logs/btsnooz_hci.log)")
    #expect(
      result.format?.notice
        == "read FS/data/misc/bluetooth/logs/btsnoop_hci.log from the zip archive; it also holds 2 other snoop logs (FS/data/misc/bluetooth/logs/btsnoop_hci.log.last, FS/data/misc/bluetooth/logs/btsnooz_hci.log), not read")
  }

  @Test func snoopLogOrder() {
    func entry(_ name: String, size: UInt32 = 100) -> ZipArchive.Entry {
      ZipArchive.Entry(name: name, method: 0, flags: 0, compressedSize: size, uncompressedSize: size, localHeaderOffset: 0)
    }
    let entries = [
      entry("FS/data/log/bt/btsnooz_hci.log.last"), entry("FS/data/misc/bluetooth/logs/btsnoop_hci.log.last"),
      entry("notes.txt"), entry("FS/data/misc/bluetooth/logs/btsnoop_hci.log.cfa"),
      entry("FS/data/misc/bluetooth/logs/btsnoop_hci.log.filtered"), entry("FS/data/misc/bluetooth/logs/"),
      entry("FS/data/misc/bluetooth/logs/btsnoop_hci.log", size: 0), entry("FS/data/log/bt/btsnoop_hci.log"),
      entry("FS/data/misc/bluetooth/logs/btsnoop_hci.log.filtered.last"), entry("xbtsnoop_hci.log"),
    ]
    #expect(
      ZipArchive.snoopLogs(entries).map(\.name) == [
        "FS/data/log/bt/btsnoop_hci.log", "FS/data/misc/bluetooth/logs/btsnoop_hci.log.filtered",
        "FS/data/misc/bluetooth/logs/btsnoop_hci.log.last", "FS/data/misc/bluetooth/logs/btsnoop_hci.log.filtered.last",
        "FS/data/misc/bluetooth/logs/btsnoop_hci.log.cfa", "FS/data/log/bt/btsnooz_hci.log.last",
      ])
  }

  /// Entry names are any bytes: messages, the format detail and the notice show them on one line
  /// (found by the `zip` fuzz target: a name holding a line feed broke the notice in two).
  @Test func entryNamesWithControlCharactersStayOnOneLine() throws {
    let (log, _) = Self.plainLog(5)
    let archive = ZipArchive.archive([
      (name: "logs/btsnoop_hci.log.last\nsecond line", bytes: log, deflate: true),
      (name: "logs/btsnoop_hci.log", bytes: log, deflate: true),
    ])
    let result = CaptureFixtures.read(archive)
    #expect(result.error == nil)
    #expect(result.format?.notice == "read logs/btsnoop_hci.log from the zip archive; it also holds 1 other snoop log (logs/btsnoop_hci.log.last\\nsecond line), not read")
    #expect(result.format?.detail.contains("\n") == false)
    var encrypted = ZipArchive.archive([(name: "btsnoop_hci.log\r\u{2028}\u{85}", bytes: log, deflate: false)])
    encrypted[encrypted.count - 22 - (46 + "btsnoop_hci.log\r\u{2028}\u{85}".utf8.count) + 8] |= 1
    #expect(CaptureFixtures.read(encrypted).error == .corrupt("zip entry btsnoop_hci.log\\r\\u2028\\u0085 is encrypted; bledissect does not decrypt"))
  }

  @Test func zipWithOnlyTheSnoopLog() throws {
    let (log, plain) = Self.plainLog()
    for deflate in [true, false] {
      let archive = ZipArchive.archive([(name: Self.logDirectory + "btsnoop_hci.log", bytes: log, deflate: deflate)])
      let result = CaptureFixtures.read(archive)
      #expect(result.error == nil)
      Self.expectSameRecords(result.records, plain)
      // From memory, as the fuzz targets read: the same.
      let reader = try CaptureFile.open(InputSource(bytes: archive, name: "memory"))
      var records: [CaptureRecord] = []
      while let record = try reader.next() { records.append(record) }
      Self.expectSameRecords(records, plain)
    }
  }

  @Test func withoutASnoopLogTheSummaryIsRead() throws {
    let source = Array(BugreportFixtures.sessionRecords.prefix(10))
    let text = BugreportFixtures.bugreportText(BugreportFixtures.btsnooz(source, version: 2))
    let archive = ZipArchive.archive([
      (name: Self.logDirectory + "btsnoop_hci.log", bytes: [], deflate: false),  // logging was off
      (name: Self.logDirectory + "readme.txt", bytes: Array("x".utf8), deflate: false),
      (name: "bugreport-x.txt", bytes: text, deflate: true),
    ])
    let result = CaptureFixtures.read(archive)
    #expect(result.error == nil)
    #expect(result.format?.name == "btsnooz")
    BugreportTests.expectSame(result.records, source, version: 2)
  }

  /// Offsets in `ZipArchive.archive`'s output of the one entry's central directory record.
  static func centralEntry(_ archive: [UInt8], name: String) -> Int { archive.count - 22 - (46 + name.utf8.count) }

  static func setLE32(_ bytes: inout [UInt8], _ at: Int, _ value: UInt32) {
    for index in 0..<4 { bytes[at + index] = UInt8(truncatingIfNeeded: value >> UInt32(8 * index)) }
  }

  @Test(arguments: [true, false])
  func entryWhoseSizesLieIsAClearError(deflate: Bool) throws {
    let (log, plain) = Self.plainLog(20)
    let name = Self.logDirectory + "btsnoop_hci.log"
    let good = ZipArchive.archive([(name: name, bytes: log, deflate: deflate)])
    let central = Self.centralEntry(good, name: name)
    Self.expectSameRecords(CaptureFixtures.read(good).records, plain)

    // Uncompressed size smaller, then larger than the content.
    var smaller = good
    Self.setLE32(&smaller, central + 24, UInt32(log.count - 100))
    var larger = good
    Self.setLE32(&larger, central + 24, UInt32(log.count + 100))
    if deflate {
      let read = CaptureFixtures.read(smaller)
      #expect(read.error == .corrupt("zip entry \(name) holds more than the \(log.count - 100) bytes its directory entry declares"))
      let readLarger = CaptureFixtures.read(larger)
      #expect(readLarger.error == .corrupt("zip entry \(name) holds \(log.count) bytes; its directory entry declares \(log.count + 100)"))
      // Every record was there: they are read before the end says the entry is wrong.
      Self.expectSameRecords(readLarger.records, plain)
    } else {
      for lying in [smaller, larger] {
        let read = CaptureFixtures.read(lying)
        guard case .corrupt(let why)? = read.error else {
          Issue.record("expected a refusal, got \(String(describing: read.error))")
          continue
        }
        #expect(why.hasPrefix("zip entry \(name) is stored but declares \(log.count) bytes in the archive"))
      }
    }

    // A compressed size past the end of the archive.
    var huge = good
    Self.setLE32(&huge, central + 20, 0x7FFF_FFF0)
    if !deflate { Self.setLE32(&huge, central + 24, 0x7FFF_FFF0) }
    #expect(CaptureFixtures.read(huge).error?.message.contains("more than the archive holds") == true)

    // A compressed size too small: deflate cut short; stored, the sizes differ.
    var short = good
    let compressed = UInt32(good[central + 20]) | UInt32(good[central + 21]) << 8 | UInt32(good[central + 22]) << 16
    Self.setLE32(&short, central + 20, compressed / 2)
    let readShort = CaptureFixtures.read(short)
    let message = try #require(readShort.error?.message)
    #expect(message.contains(deflate ? "deflate data ends before the end of the compressed stream" : "is stored but declares"))
    #expect(!message.contains("\n"))

    // The content changed after the CRC was taken.
    var crc = good
    crc[central + 16] ^= 0xFF
    let readCRC = CaptureFixtures.read(crc)
    guard case .corrupt(let why)? = readCRC.error else {
      Issue.record("expected a CRC error, got \(String(describing: readCRC.error))")
      return
    }
    #expect(why.hasPrefix("zip entry \(name) fails its CRC-32 check"))
  }

  /// The same checks when the archive is given in memory (the fuzz targets' path).
  @Test func lyingSizesFromMemory() throws {
    let (log, _) = Self.plainLog(20)
    let name = Self.logDirectory + "btsnoop_hci.log"
    var archive = ZipArchive.archive([(name: name, bytes: log, deflate: true)])
    Self.setLE32(&archive, Self.centralEntry(archive, name: name) + 24, UInt32(log.count + 1))
    var failure: CaptureError?
    do {
      let reader = try CaptureFile.open(InputSource(bytes: archive, name: "memory"))
      while try reader.next() != nil {}
    } catch {
      failure = error
    }
    #expect(failure == .corrupt("zip entry \(name) holds \(log.count) bytes; its directory entry declares \(log.count + 1)"))

    // Stored, with a wrong CRC: from memory as from a file, the records, then the error where
    // the read reaches the end (found by the `zip` fuzz target: memory read no check at all).
    var stored = ZipArchive.archive([(name: name, bytes: log, deflate: false)])
    stored[Self.centralEntry(stored, name: name) + 16] ^= 0x01
    var records = 0
    failure = nil
    do {
      let reader = try CaptureFile.open(InputSource(bytes: stored, name: "memory"))
      while try reader.next() != nil { records += 1 }
    } catch {
      failure = error
    }
    let fromFile = CaptureFixtures.read(stored)
    #expect(records == 20 && fromFile.records.count == 20)
    #expect(failure != nil && failure == fromFile.error)
    #expect(failure?.message.contains("fails its CRC-32 check") == true)
  }
}
