import Foundation
import Testing
import BLECapture
import BLECore
import BLETestSupport
@testable import bledissect

/// gzip and bugreport inputs through every command that reads captures: the same output as the
/// plain capture, but for the file name and the format's words.
@Suite struct CompressedInputCLITests {
  static let samples = ["hr_strap_session.btsnoop", "hr_strap_session.pklg", "hr_strap_session.pcapng"]

  static func gzipped(_ name: String) throws -> String {
    let plain = try [UInt8](Data(contentsOf: URL(fileURLWithPath: capturePath(name))))
    return temporaryFile(Deflate.compress(plain, wrapper: .gzip))
  }

  /// The output with `path` written as `plain`, and the container's words dropped.
  static func normalized(_ text: String, _ path: String, _ plain: String) -> String {
    text.replacingOccurrences(of: path, with: plain).replacingOccurrences(of: ", gzip-compressed", with: "")
  }

  @Test(arguments: samples)
  func gzippedCaptureGivesTheSameJSONLines(name: String) throws {
    let path = try Self.gzipped(name)
    defer { try? FileManager.default.removeItem(atPath: path) }
    let plain = runCLI(["--json", "--no-cache", capturePath(name)])
    let compressed = runCLI(["--json", "--no-cache", path])
    #expect(compressed.status == 0)
    #expect(plain.stdout.split(separator: "\n").count == 160)
    #expect(compressed.stdout == plain.stdout)
  }

  @Test(arguments: [["summary", "--json"], ["gatt", "--json"], ["hr", "--csv"], ["info"], ["summary"], ["-1", "--time", "abs"]])
  func everyCommandReadsGzip(command: [String]) throws {
    let name = "hr_strap_session.btsnoop"
    let path = try Self.gzipped(name)
    defer { try? FileManager.default.removeItem(atPath: path) }
    let plain = runCLI(command + ["--no-cache", capturePath(name)].filter { command != ["info"] || $0 != "--no-cache" })
    let compressed = runCLI(command + ["--no-cache", path].filter { command != ["info"] || $0 != "--no-cache" })
    #expect(compressed.status == 0)
    #expect(Self.normalized(compressed.stdout, path, capturePath(name)) == plain.stdout)
  }

  @Test func diffAndConvertReadGzip() throws {
    let path = try Self.gzipped("hr_strap_session.btsnoop")
    defer { try? FileManager.default.removeItem(atPath: path) }
    let diff = runCLI(["diff", "--no-cache", capturePath("hr_strap_session.btsnoop"), path])
    #expect(diff.status == 0)
    #expect(diff.stdout.contains("equivalent"))
    let output = NSTemporaryDirectory() + "bledissect-gz-\(UUID().uuidString).pcapng"
    defer { try? FileManager.default.removeItem(atPath: output) }
    #expect(runCLI(["convert", "--to", "pcapng", path, output]).status == 0)
    #expect(runCLI(["info", output]).stdout.contains("frames:   160\n"))
  }

  @Test func infoTakesSeveralFilesInOrder() throws {
    let path = try Self.gzipped("hr_strap_session.pklg")
    defer { try? FileManager.default.removeItem(atPath: path) }
    let result = runCLI(["info", capturePath("eatt.btsnoop"), path, capturePath("le_coc.btsnoop")])
    #expect(result.status == 0)
    let blocks = result.stdout.components(separatedBy: "\n\n")
    try #require(blocks.count == 3)
    #expect(blocks[0].hasPrefix("file:     \(capturePath("eatt.btsnoop"))\n"))
    #expect(blocks[1].hasPrefix("file:     \(path)\nformat:   packetlogger, big-endian, gzip-compressed\nframes:   160\n"))
    #expect(blocks[2].hasPrefix("file:     \(capturePath("le_coc.btsnoop"))\n"))
    // The worst status of all; the other files are still shown.
    let missing = runCLI(["info", "/nonexistent/capture.btsnoop", capturePath("eatt.btsnoop")])
    #expect(missing.status == 2)
    #expect(missing.stdout.contains("file:     \(capturePath("eatt.btsnoop"))"))
  }

  @Test func truncatedGzipIsOneClearLine() throws {
    let plain = try [UInt8](Data(contentsOf: URL(fileURLWithPath: capturePath("hr_strap_session.btsnoop"))))
    let gzipped = Deflate.compress(plain, wrapper: .gzip)
    let path = temporaryFile(Array(gzipped[0..<(gzipped.count / 2)]))
    defer { try? FileManager.default.removeItem(atPath: path) }
    let result = runCLI(["-1", "--no-cache", path])
    #expect(result.status != 0)
    #expect(result.stdout.split(separator: "\n").count > 10)
    let lines = result.stderr.split(separator: "\n")
    #expect(lines.count == 1)
    #expect(lines.first?.contains("gzip data ends before the end of the compressed stream") == true)
  }

  /// Wireshark reads gzip captures itself: its frame count must equal ours.
  @Test(.enabled(if: which("tshark") != nil, "tshark is not installed"), arguments: samples)
  func tsharkCountsTheSameFramesInGzip(name: String) throws {
    let path = try Self.gzipped(name)
    defer { try? FileManager.default.removeItem(atPath: path) }
    let ours = try TsharkCrossCheckTests.ourFrameCount(path)
    #expect(ours == 160)
    #expect(try TsharkCrossCheckTests.tsharkFrameCount(path) == ours)
  }

  @Test func bugreportTextAndZipFromTheCommandLine() throws {
    let reader = try CaptureFile.open(path: capturePath("hr_strap_session.btsnoop"))
    var records: [BLECore.CaptureRecord] = []
    while let record = try reader.next() { records.append(record) }
    // btsnooz v2 by hand (capture-formats.md §5.3): the summary keeps every byte here.
    var body: [UInt8] = []
    var previous = records[0].timestamp
    for record in records {
      let type: UInt8
      switch record.kind {
      case .command: type = 0x20
      case .event: type = 0x10
      default: type = record.direction == .controllerToHost ? 0x11 : 0x21
      }
      let length = record.bytes.count + 1
      let delta = UInt32(record.timestamp - previous)
      body += [UInt8(length & 0xFF), UInt8(length >> 8), UInt8(length & 0xFF), UInt8(length >> 8)]
      body += [UInt8(delta & 0xFF), UInt8(delta >> 8 & 0xFF), UInt8(delta >> 16 & 0xFF), UInt8(delta >> 24), type] + record.bytes
      previous = record.timestamp
    }
    let last = UInt64(records.last!.timestamp)
    let payload = [2] + (0..<8).map { UInt8(truncatingIfNeeded: last >> UInt64($0 * 8)) } + Deflate.compress(body, wrapper: .zlib)
    let text = "== dumpstate\n--- BEGIN:BTSNOOP_LOG_SUMMARY (\(payload.count) bytes in) ---\n"
      + Data(payload).base64EncodedString(options: [.lineLength76Characters, .endLineWithLineFeed]) + "\n--- END:BTSNOOP_LOG_SUMMARY ---\n"
    let textPath = temporaryFile(Array(text.utf8))
    let zipPath = temporaryFile(ZipArchive.archive([(name: "bugreport-test.txt", bytes: Array(text.utf8), deflate: true)]))
    defer {
      try? FileManager.default.removeItem(atPath: textPath)
      try? FileManager.default.removeItem(atPath: zipPath)
    }
    let plain = runCLI(["--json", "--no-cache", capturePath("hr_strap_session.btsnoop")])
    for path in [textPath, zipPath] {
      let result = runCLI(["--json", "--no-cache", path])
      #expect(result.status == 0)
      #expect(result.stdout == plain.stdout)
    }
    let info = runCLI(["info", zipPath])
    #expect(info.stdout.contains("format:   btsnooz, version 2, Android bugreport (bugreport-test.txt in the zip archive) BTSNOOP_LOG_SUMMARY\n"))
  }
}

/// A bugreport zip holding the full snoop log: every command reads the entry, says which.
@Suite struct BugreportZipSnoopLogCLITests {
  @Test func snoopLogEntryFromTheCommandLine() throws {
    let log = try [UInt8](Data(contentsOf: URL(fileURLWithPath: capturePath("hr_strap_session.btsnoop"))))
    let older = try [UInt8](Data(contentsOf: URL(fileURLWithPath: capturePath("beacons.btsnoop"))))
    let one = temporaryFile(ZipArchive.archive([
      (name: "bugreport-x.txt", bytes: Array("no summary here\n".utf8), deflate: true),
      (name: "FS/data/misc/bluetooth/logs/btsnoop_hci.log", bytes: log, deflate: true),
    ]))
    let two = temporaryFile(ZipArchive.archive([
      (name: "FS/data/misc/bluetooth/logs/btsnoop_hci.log.last", bytes: older, deflate: true),
      (name: "FS/data/misc/bluetooth/logs/btsnoop_hci.log", bytes: log, deflate: false),
    ]))
    defer {
      try? FileManager.default.removeItem(atPath: one)
      try? FileManager.default.removeItem(atPath: two)
    }
    let plain = runCLI(["--json", "--no-cache", capturePath("hr_strap_session.btsnoop")])
    let fromOne = runCLI(["--json", "--no-cache", one])
    #expect(fromOne.status == 0 && fromOne.stdout == plain.stdout && fromOne.stderr.isEmpty)
    let fromTwo = runCLI(["--json", "--no-cache", two])
    #expect(fromTwo.status == 0 && fromTwo.stdout == plain.stdout)
    #expect(
      fromTwo.stderr
        == "bledissect: \(two): read FS/data/misc/bluetooth/logs/btsnoop_hci.log from the zip archive; it also holds 1 other snoop log (FS/data/misc/bluetooth/logs/btsnoop_hci.log.last), not read\n")
    let info = runCLI(["info", two])
    #expect(info.status == 0)
    #expect(
      info.stdout.contains(
        "format:   btsnoop, datalink 1002 (H4), FS/data/misc/bluetooth/logs/btsnoop_hci.log in the zip archive (not read: FS/data/misc/bluetooth/logs/btsnoop_hci.log.last)\nframes:   160\n"))
  }
}

/// Decompression bombs from the command line, at the CLI's own caps (issue 17): the frames before
/// the cap, then one line naming the file, what was inflated and the cap; exit status 1.
@Suite struct InflationCapCLITests {
  /// hr_strap_session.btsnoop (160 frames), then 260 records of 262 144 zero bytes after an ACL
  /// indicator: 68 MB that deflate squeezes to about 70 KB.
  static func bombCapture() throws -> (plain: [UInt8], bomb: [UInt8]) {
    let plain = try [UInt8](Data(contentsOf: URL(fileURLWithPath: capturePath("hr_strap_session.btsnoop"))))
    let time = Array(plain[(16 + 16)..<(16 + 24)])  // the first record's time
    var record: [UInt8] = [0x00, 0x04, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0, 0, 0, 1, 0, 0, 0, 0] + time + [0x02]
    record += [UInt8](repeating: 0, count: 262_144 - 1)
    var bomb = plain
    for _ in 0..<260 { bomb += record }
    return (plain, bomb)
  }

  /// Frames whose records end within `cap` bytes.
  static func framesBefore(_ cap: Int, plainSize: Int, recordSize: Int) -> Int {
    160 + (cap - plainSize) / recordSize
  }

  static func expectCapped(_ result: CLIResult, path: String, prefix: String, suffix: String, frames: Int) {
    #expect(result.status == 1)
    #expect(result.stdout.contains("frames:   \(frames)\n"))
    #expect(result.stderr.hasPrefix("bledissect: \(path): \(prefix)"))
    #expect(result.stderr.hasSuffix(suffix + "\n"))
    #expect(result.stderr.split(separator: "\n").count == 1)
  }

  @Test func gzipAndZipBombsStopAtTheCap() throws {
    let (plain, bomb) = try Self.bombCapture()
    let gzipped = Deflate.compress(bomb, wrapper: .gzip)
    try #require(gzipped.count * 100 < 64 << 20)
    let gzipPath = temporaryFile(gzipped)
    let zipPath = temporaryFile(ZipArchive.archive([(name: "FS/data/misc/bluetooth/logs/btsnoop_hci.log", bytes: bomb, deflate: true)]))
    defer {
      try? FileManager.default.removeItem(atPath: gzipPath)
      try? FileManager.default.removeItem(atPath: zipPath)
    }
    let frames = Self.framesBefore(64 << 20, plainSize: plain.count, recordSize: 24 + 262_144)
    #expect(frames == 415)
    Self.expectCapped(
      runCLI(["info", gzipPath]), path: gzipPath,
      prefix: "gzip data inflates to more than 100 times its compressed size: stopped at 67108864 bytes from ",
      suffix: " compressed bytes (the cap against decompression bombs: 100 times the compressed size, at least 64 MiB); to read it all, decompress it first (gzip -dc)",
      frames: frames)
    Self.expectCapped(
      runCLI(["info", zipPath]), path: zipPath,
      prefix: "zip entry FS/data/misc/bluetooth/logs/btsnoop_hci.log inflates to more than 100 times its compressed size: stopped at 67108864 bytes from ",
      suffix: "; to read it all, extract it first (unzip)", frames: frames)
    // The frames before the cap are the capture's own.
    let plainPath = temporaryFile(plain)
    defer { try? FileManager.default.removeItem(atPath: plainPath) }
    let capped = runCLI(["-1", "--no-cache", gzipPath])
    let whole = runCLI(["-1", "--no-cache", plainPath])
    #expect(capped.stdout.hasPrefix(whole.stdout.replacingOccurrences(of: plainPath, with: gzipPath)))
    #expect(capped.status == 1)
  }

  @Test func btsnoozSummaryBombStopsAtTheCap() throws {
    let reader = try CaptureFile.open(path: capturePath("hr_strap_session.btsnoop"))
    var records: [BLECore.CaptureRecord] = []
    while let record = try reader.next() { records.append(record) }
    // btsnooz v2 (capture-formats.md §5.3): the session, then records of 65 534 zero bytes.
    var body: [UInt8] = []
    func le16(_ value: Int) { body += [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF)] }
    var previous = records[0].timestamp
    for record in records {
      let type: UInt8
      switch record.kind {
      case .command: type = 0x20
      case .event: type = 0x10
      default: type = record.direction == .controllerToHost ? 0x11 : 0x21
      }
      let delta = UInt32(record.timestamp - previous)
      le16(record.bytes.count + 1)
      le16(record.bytes.count + 1)
      body += [UInt8(delta & 0xFF), UInt8(delta >> 8 & 0xFF), UInt8(delta >> 16 & 0xFF), UInt8(delta >> 24), type] + record.bytes
      previous = record.timestamp
    }
    let goodSize = body.count
    let big: [UInt8] = [0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0, 0x11] + [UInt8](repeating: 0, count: 65_534)
    for _ in 0..<300 { body += big }
    let last = UInt64(records.last!.timestamp)
    let payload = [2] + (0..<8).map { UInt8(truncatingIfNeeded: last >> UInt64($0 * 8)) } + Deflate.compress(body, wrapper: .zlib)
    let text = "== dumpstate\n--- BEGIN:BTSNOOP_LOG_SUMMARY (\(payload.count) bytes in) ---\n"
      + Data(payload).base64EncodedString(options: [.lineLength76Characters, .endLineWithLineFeed]) + "\n--- END:BTSNOOP_LOG_SUMMARY ---\n"
    let path = temporaryFile(Array(text.utf8))
    defer { try? FileManager.default.removeItem(atPath: path) }
    let result = runCLI(["info", path])
    #expect(result.status == 1)
    #expect(result.stdout.contains("frames:   \(Self.framesBefore(16 << 20, plainSize: goodSize, recordSize: big.count))\n"))
    #expect(
      result.stderr
        == "bledissect: \(path): the BTSNOOP_LOG_SUMMARY's zlib data inflates to more than 16 MiB, the cap (Android keeps at most about 1 MiB of records for a summary): stopped there\n"
    )
  }
}
