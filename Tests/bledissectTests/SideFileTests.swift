import BLECapture
import BLECore
import BLEDecoder
import BLEFuzzTargets
import Foundation
import Testing

import BLETestSupport
@testable import bledissect

/// The files read besides the capture (`--gatt`, `--decoders`): hostile content, pipes and
/// FIFOs, files that cannot be read, sizes nothing announces. Each failure is one line naming
/// the file with a true reason; nothing traps, waits forever or reads without bound.
@Suite struct SideFileTests {
  static let base = "-0000-1000-8000-00805f9b34fb"
  /// BlueZ's [Attributes] for the strap of the late_* captures (as GATTMapTests has them).
  static let strapCache = """
    [General]
    Name=bledissect HR

    [Attributes]
    0001=2800:0005:00001800\(base)
    0002=2803:0003:02:00002a00\(base)
    0004=2803:0005:02:00002a01\(base)
    0006=2800:000d:00001801\(base)
    0007=2803:0008:20:00002a05\(base)
    0009=00002902\(base)
    000a=2803:000b:0a:00002b29\(base)
    000c=2803:000d:02:00112233445566778899aabbccddeeff:00002b2a\(base)
    000e=2800:0015:0000180d\(base)
    000f=2803:0010:10:00002a37\(base)
    0011=00002902\(base)
    0012=2803:0013:02:00002a38\(base)
    0014=2803:0015:08:00002a39\(base)
    0016=2800:0019:0000180f\(base)
    0017=2803:0018:12:00002a19\(base)
    0019=00002902\(base)

    """
  static let strap = "D0:B1:ED:00:48:52"
  static let example = repositoryRoot.appendingPathComponent("docs/examples/heart-rate.decoders.json").path

  static func directory() throws -> String {
    let path = NSTemporaryDirectory() + "bledissect-side-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
  }

  /// The message line of a usage error (the line before "see 'bledissect help …'").
  static func message(_ result: CLIResult) -> String {
    let lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: false)
    #expect(lines.count == 3 && lines[1].hasPrefix("see 'bledissect help") && lines[2].isEmpty, "\(result.stderr)")
    return String(lines.first ?? "")
  }

  // MARK: - BlueZ cache files

  @Test func blueZCacheParsesEveryKindOfLine() throws {
    let maps = try GATTMapFile.parseBlueZ(bytes: Array(Self.strapCache.utf8), name: "cache/" + Self.strap, fileName: Self.strap)
    #expect(maps.count == 1)
    let map = try #require(maps.first)
    #expect(map.address == BDAddr(Self.strap))
    #expect(map.name == "bledissect HR")
    #expect(map.databaseHash == [0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF])
    #expect(map.tree.services.map(\.start) == [0x01, 0x06, 0x0E, 0x16])
    #expect(map.tree.services.map(\.end) == [0x05, 0x0D, 0x15, 0x19])
    let heartRate = map.tree.services[2]
    #expect(heartRate.uuid.uuid16 == 0x180D)
    #expect(heartRate.characteristics.map(\.valueHandle) == [0x10, 0x13, 0x15])
    #expect(heartRate.characteristics.map(\.properties) == [0x10, 0x02, 0x08])
    #expect(heartRate.characteristics[0].descriptors.map(\.handle) == [0x11])
    #expect(map.tree.services[1].characteristics.map(\.uuid.uuid16) == [0x2A05, 0x2B29, 0x2B2A])
    // CR LF line ends, spaces around '=', and a descriptor with its extended properties.
    let windows = Self.strapCache.replacingOccurrences(of: "\n", with: "\r\n").replacingOccurrences(of: "0011=", with: "0011 = ")
      + "001a=0001:00002900\(Self.base)\r\n"
    let same = try #require(try GATTMapFile.parseBlueZ(bytes: Array(windows.utf8), name: "w", fileName: Self.strap).first)
    #expect(same.tree.services.map(\.start) == [0x01, 0x06, 0x0E, 0x16])
    #expect(same.tree.services[2].characteristics[0].descriptors.map(\.handle) == [0x11])
    #expect(same.tree.otherHandles.map(\.handle) == [0x1A])
  }

  /// Lines that trapped (`0001=`, `0001=:::`: an index out of range) or were never checked:
  /// each is one line naming the file and the line.
  @Test func badBlueZLinesAreOneLineErrors() throws {
    let cases: [(line: String, message: String)] = [
      ("0001=", "attribute 0001 has no value (a UUID, or a declaration such as 2800:0005:<uuid>)"),
      ("0001=:::", "'' is not a UUID"),
      ("0001=2800", "'2800' has no end handle (too few ':'-separated fields)"),
      ("0001=2800:0005", "'2800:0005' has no UUID (too few ':'-separated fields)"),
      ("0001=2803:0003", "'2803:0003' has no properties (too few ':'-separated fields)"),
      ("0001=2803:0003:02", "'2803:0003:02' has no UUID (too few ':'-separated fields)"),
      ("0001=2803:0003:102:2a00", "properties '102' are not 1 or 2 hex digits"),
      ("0001=2803:-003:02:2a00", "value handle '-003' is not a handle (1 to 4 hex digits)"),
      ("10000=2a00", "attribute key '10000' is not a handle (1 to 4 hex digits)"),
      ("0001=2800:0005:\u{1B}[31m", "'\\x1B[31m' is not a UUID"),
      ("0001=" + String(repeating: "x", count: 5000), "'" + String(repeating: "x", count: 64) + "…' is not a UUID"),
    ]
    let directory = try Self.directory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let path = directory + "/" + Self.strap
    for (line, expected) in cases {
      try "[General]\nName=x\n\n[Attributes]\n\(line)\n".write(toFile: path, atomically: true, encoding: .utf8)
      let result = runCLI(["--no-cache", "--gatt", path, capturePath("late_reconnect.btsnoop")])
      #expect(result.status == 64, "\(line)")
      #expect(Self.message(result) == "bledissect: \(path):5: \(expected)", "\(line)")
      #expect(result.stdout.isEmpty)
      // The same through the parser the fuzz target runs.
      #expect(throws: GATTMapFile.Failure.self) { try GATTMapFile.parseBlueZ(bytes: Array("[Attributes]\n\(line)".utf8), name: "x", fileName: Self.strap) }
    }
  }

  @Test func blueZCacheWithCRLFDecodesEveryValue() throws {
    let directory = try Self.directory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let path = directory + "/" + Self.strap
    try Self.strapCache.replacingOccurrences(of: "\n", with: "\r\n").write(toFile: path, atomically: true, encoding: .utf8)
    let decoded = try GATTMapTests.decodedValues(["--no-cache", "--gatt", path, capturePath("late_reconnect.btsnoop")])
    let truth = try GATTMapTests.truth("late_reconnect")
    #expect(GATTMapTests.compare(decoded, truth, source: "import") == truth.count)
  }

  // MARK: - Our JSON maps

  @Test func jsonMapErrorsShowUserTextOnOneLine() throws {
    let cases: [(text: String, message: String)] = [
      (#"{"format":"bledissect-gatt-map","version":1,"devices":[{"address":"a\nb"}]}"#, ":1: devices[0].address: bad address \"a\\nb\""),
      (#"{"format":"bledissect-gatt-map","version":1,"devices":[7]}"#, ":1: devices[0]: needs an object, not a number"),
      ("{\"format\":\"bledissect-gatt-map\",\n\"ver\\u0007sion\" 1}", ":2:17: not a GATT map (not JSON: expected ':' after \"ver\\x07sion\")"),
      (#"{"format":"bledissect-gatt-map","version":"1\u001b[2J"}"#, ": GATT map version \"1\\x1B[2J\" not supported (this bledissect reads version 1)"),
    ]
    for (text, expected) in cases {
      let path = temporaryFile(Array(text.utf8))
      defer { unlink(path) }
      let result = runCLI(["--no-cache", "--gatt", path, capturePath("late_reconnect.btsnoop")])
      #expect(result.status == 64)
      #expect(Self.message(result) == "bledissect: \(path)\(expected)")
    }
  }

  // MARK: - Pipes and FIFOs

  /// A pipe of this process, its read end named `/dev/fd/N` (as `<(…)` names one), written by
  /// a thread after `delay` seconds.
  static func pipe(writing bytes: [UInt8], after delay: Double) -> (path: String, finish: () -> Void) {
    var ends: [Int32] = [0, 0]
    precondition(Foundation.pipe(&ends) == 0)
    let (readEnd, writeEnd) = (ends[0], ends[1])
    let done = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
      Thread.sleep(forTimeInterval: delay)
      var offset = 0
      while offset < bytes.count {
        let written = bytes.withUnsafeBufferPointer { write(writeEnd, $0.baseAddress! + offset, bytes.count - offset) }
        if written <= 0 { break }
        offset += written
      }
      close(writeEnd)
      done.signal()
    }
    return ("/dev/fd/\(readEnd)", {
      done.wait()
      close(readEnd)
    })
  }

  @Test func processSubstitutionGivesAMap() throws {
    let map = runCLI(["gatt", "--json", "--no-cache", capturePath("hr_strap_session.btsnoop")])
    #expect(map.status == 0)
    // The writer starts after the wait given to a FIFO without one: a pipe with a writer is
    // waited for as long as it takes.
    let (path, finish) = Self.pipe(writing: Array(map.stdout.utf8), after: SideFileTests.slowWriter)
    let decoded = try GATTMapTests.decodedValues(["--no-cache", "--gatt", path, capturePath("late_reconnect.btsnoop")])
    finish()
    let truth = try GATTMapTests.truth("late_reconnect")
    #expect(GATTMapTests.compare(decoded, truth, source: "import") == truth.count)
  }

  /// Longer than `SideFile.writerWait`.
  static let slowWriter = Double(SideFile.writerWait) / 1000 + 0.5

  @Test func aCaptureThroughAPipeGivesAMap() throws {
    let capture = try [UInt8](Data(contentsOf: URL(fileURLWithPath: capturePath("hr_strap_session.btsnoop"))))
    let (path, finish) = Self.pipe(writing: capture, after: 0)
    let decoded = try GATTMapTests.decodedValues(["--no-cache", "--gatt", path, capturePath("late_reconnect.btsnoop")])
    finish()
    let truth = try GATTMapTests.truth("late_reconnect")
    #expect(GATTMapTests.compare(decoded, truth, source: "import") == truth.count)
  }

  @Test func aDecoderFileThroughAPipe() throws {
    let (path, finish) = Self.pipe(writing: try [UInt8](Data(contentsOf: URL(fileURLWithPath: Self.example))), after: 0.2)
    let result = runCLI(["--no-cache", "-1", "--decoders", path, capturePath("hr_strap_session.btsnoop")])
    finish()
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout.contains("0x0010: bpm 74, sensor contact detected, rr intervals 810.5 ms — Heart Rate Measurement"))
  }

  /// A FIFO nothing writes to: refused once the writer wait is over, not waited for forever.
  @Test(arguments: ["gatt", "decoders"])
  func aFIFOWithoutAWriterIsRefused(option: String) throws {
    let directory = try Self.directory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let fifo = directory + "/fifo"
    #expect(mkfifo(fifo, 0o600) == 0)
    let start = Date()
    let result = runCLI(["--no-cache", "--\(option)", fifo, capturePath("late_reconnect.btsnoop")])
    let seconds = Date().timeIntervalSince(start)
    #expect(result.status == 64)
    let what = option == "gatt" ? "the GATT map" : "the decoder file"
    #expect(Self.message(result) == "bledissect: \(fifo): cannot read \(what) (no program writes to this named pipe: nothing came within 2 s)")
    #expect(seconds >= 1.9 && seconds < 10, "\(seconds) s")
  }

  /// A FIFO whose writer comes while the reader waits (the writer started second).
  @Test func aFIFOWhoseWriterComesLateGivesAMap() throws {
    let directory = try Self.directory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let fifo = directory + "/fifo"
    #expect(mkfifo(fifo, 0o600) == 0)
    let map = runCLI(["gatt", "--json", "--no-cache", capturePath("hr_strap_session.btsnoop")])
    let bytes = Array(map.stdout.utf8)
    let done = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
      Thread.sleep(forTimeInterval: 0.5)
      // Opening for writing fails until the reader has the FIFO open (ENXIO): tried again
      // for 5 s at most.
      var descriptor: Int32 = -1
      for _ in 0..<500 where descriptor < 0 {
        descriptor = open(fifo, O_WRONLY | O_NONBLOCK)
        if descriptor < 0 { Thread.sleep(forTimeInterval: 0.01) }
      }
      if descriptor >= 0 {
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
        _ = bytes.withUnsafeBufferPointer { write(descriptor, $0.baseAddress!, $0.count) }
        close(descriptor)
      }
      done.signal()
    }
    let decoded = try GATTMapTests.decodedValues(["--no-cache", "--gatt", fifo, capturePath("late_reconnect.btsnoop")])
    done.wait()
    let truth = try GATTMapTests.truth("late_reconnect")
    #expect(GATTMapTests.compare(decoded, truth, source: "import") == truth.count)
  }

  // MARK: - Reasons and sizes

  @Test(arguments: ["gatt", "decoders"])
  func failuresGiveTheirTrueReason(option: String) throws {
    let directory = try Self.directory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let what = option == "gatt" ? "the GATT map" : "the decoder file"
    func message(_ path: String) -> String {
      Self.message(runCLI(["--no-cache", "--\(option)", path, capturePath("late_reconnect.btsnoop")]))
    }
    #expect(message(directory) == "bledissect: \(directory): cannot open \(what) (is a directory)")
    #expect(message(directory + "/missing.json") == "bledissect: \(directory)/missing.json: cannot open \(what) (No such file or directory)")
    #expect(message(directory + "/missing/map.json") == "bledissect: \(directory)/missing/map.json: cannot open \(what) (No such file or directory)")
    let file = directory + "/file"
    #expect(FileManager.default.createFile(atPath: file, contents: Data("{}".utf8)))
    #expect(message(file + "/below") == "bledissect: \(file)/below: cannot open \(what) (Not a directory)")
    // Root reads a file whatever its mode: permissions are tested only without it.
    if getuid() != 0 {
      #expect(chmod(file, 0) == 0)
      #expect(message(file) == "bledissect: \(file): cannot open \(what) (Permission denied)")
    }
  }

  /// Nothing says how long a device or pipe is: it is read to the limit and one byte more.
  @Test func endlessInputIsCutAtTheLimit() throws {
    let gatt = runCLI(["--no-cache", "--gatt", "/dev/zero", capturePath("late_reconnect.btsnoop")])
    #expect(Self.message(gatt) == "bledissect: /dev/zero: not a GATT map or BlueZ cache file, and more than 16777216 bytes: too large to hold as a capture from a pipe or device (give the capture as a file)")
    let decoders = runCLI(["--no-cache", "--decoders", "/dev/zero", capturePath("late_reconnect.btsnoop")])
    #expect(Self.message(decoders) == "bledissect: /dev/zero: decoder file too large (more than 1048576 bytes)")
    // A map through a pipe that goes on past the limit: `{` and spaces. What the reader leaves
    // (less than a pipe holds) stays in the pipe, so the writer ends.
    let endless = [UInt8(ascii: "{")] + [UInt8](repeating: 0x20, count: (16 << 20) + 1000)
    let (path, finish) = Self.pipe(writing: endless, after: 0)
    let map = runCLI(["--no-cache", "--gatt", path, capturePath("late_reconnect.btsnoop")])
    finish()
    #expect(Self.message(map) == "bledissect: \(path): GATT map too large (more than 16777216 bytes)")
  }

  @Test func aLargeFileIsRefusedByItsSize() throws {
    let path = temporaryFile(Array("{".utf8))
    defer { unlink(path) }
    #expect(truncate(path, off_t(17 << 20)) == 0)
    let result = runCLI(["--no-cache", "--gatt", path, capturePath("late_reconnect.btsnoop")])
    #expect(Self.message(result) == "bledissect: \(path): GATT map too large (17825792 bytes; at most 16777216)")
    #expect(truncate(path, off_t(2 << 20)) == 0)
    let decoders = runCLI(["--no-cache", "--decoders", path, capturePath("late_reconnect.btsnoop")])
    #expect(Self.message(decoders) == "bledissect: \(path): decoder file too large (2097152 bytes; at most 1048576)")
  }

  // MARK: - Decoder files

  @Test func decoderFileErrorsShowUserTextOnOneLine() throws {
    let cases: [(text: String, message: String)] = [
      (#"{"format":"bledissect-decoders","version":1,"decoders":[{"uuid":"2a37","fields":[{"name":"x","type":"u8","a\nb":1}]}]}"#,
       ":1: decoders[0].fields[0].a\\nb: unknown key (expected one of enum, from, hidden, if, label, length, mask, min, name, offset, places, repeat, scale, shift, type, unit)"),
      (#"{"format":"bledissect-decoders","version":1,"decoders":[{"uuid":"2a37","fields":[{"name":"x","type":"u8\r"}]}]}"#,
       ":1: decoders[0].fields[0].type: unknown type 'u8\\r' (u8…u64, s8…s64, with 'be' for big-endian: u16be; sfloat, float, f32, f64, utf8, bytes)"),
      (#"{"format":"bledissect-decoders","version":1,"decoders":[{"uuid":"2a37","key":"\u001b[2J","fields":[{"name":"x","type":"u8"}]}]}"#,
       ":1: decoders[0].key: '\\x1B[2J' is not a JSON key of lowercase letters, digits and _"),
    ]
    for (text, expected) in cases {
      let path = temporaryFile(Array(text.utf8))
      defer { unlink(path) }
      let result = runCLI(["--no-cache", "--decoders", path, capturePath("late_reconnect.btsnoop")])
      #expect(result.status == 64)
      #expect(Self.message(result) == "bledissect: \(path)\(expected)")
    }
  }
}

/// The side-file fuzz targets on inputs whose outcome is known: what parses is put to work
/// (values decoded through the map or the decoders), what does not is one line.
@Suite struct SideFileFuzzTargetTests {
  /// An ATT value in a target's JSON lines, with the frame's `gatt` and `decoded` objects.
  struct ATTValue {
    var connection: Int
    var opcode: Int
    var handle: Int?
    var hex: String
    var gatt: [String: Any]?
    var decoded: [String: Any]?
  }

  static func values(_ outcome: FuzzTarget.Outcome) throws -> [ATTValue] {
    var values: [ATTValue] = []
    for object in try FuzzRegressionTests.jsonObjects(outcome.json) {
      guard let att = object["att"] as? [String: Any], let opcode = att["opcode"] as? Int, let hex = att["value"] as? String else { continue }
      let connection = (object["hci"] as? [String: Any])?["handle"] as? Int ?? -1
      values.append(ATTValue(
        connection: connection, opcode: opcode, handle: att["handle"] as? Int, hex: hex,
        gatt: object["gatt"] as? [String: Any], decoded: object["decoded"] as? [String: Any]))
    }
    return values
  }

  /// The heart-rate notification the map conversations carry at the strap's value handle
  /// 0x0010: flags 0x16, 72 bpm, contact detected, RR 0x0300 and 0x0210 (750 and 515.625 ms).
  static func checkHeartRate(_ outcome: FuzzTarget.Outcome, _ name: String) throws {
    #expect(outcome.refusal == nil, "\(name): \(outcome.refusal ?? "")")
    #expect(outcome.frames == outcome.records && outcome.records > 100, "\(name)")
    let notifications = try values(outcome).filter { $0.opcode == 0x1B && $0.handle == 0x10 && $0.hex == "164800031002" }
    // One on the strap's connection (its map by address), one on the other (by layout: the
    // first value there, before an empty one contradicts the table and it is dropped).
    #expect(notifications.map { $0.connection } == [0x40, 0x41], "\(name)")
    #expect(notifications.map { $0.gatt?["source"] as? String } == ["import", "layout"], "\(name)")
    for notification in notifications {
      let measurement = notification.decoded?["heart_rate_measurement"] as? [String: Any]
      #expect(measurement?["bpm"] as? Int == 72, "\(name)")
      #expect(measurement?["sensor_contact"] as? String == "detected", "\(name)")
      #expect(measurement?["rr_intervals_ms"] as? [Double] == [750, 515.625], "\(name)")
    }
  }

  @Test func gattMapTargetDecodesThroughTheMap() throws {
    let map = runCLI(["gatt", "--json", "--no-cache", capturePath("hr_strap_session.btsnoop")])
    let bytes = Array(map.stdout.utf8)
    let outcome = FuzzTarget.gattmap.run(bytes, keepingJSON: true)
    #expect(outcome.parsed == 1)
    try Self.checkHeartRate(outcome, "gattmap")
    try FuzzRegressionTests.checkConsistent(outcome, target: .gattmap, bytes: bytes, name: "gattmap")
    let refused = FuzzTarget.gattmap.run(Array(#"{"format":"bledissect-gatt-map","version":2}"#.utf8))
    #expect(refused.refusal == "fuzz.json: GATT map version 2 not supported (this bledissect reads version 1)")
    #expect(refused.records == 0)
  }

  @Test func blueZTargetDecodesThroughTheMap() throws {
    let bytes = Array(SideFileTests.strapCache.utf8)
    let outcome = FuzzTarget.bluez.run(bytes, keepingJSON: true)
    #expect(outcome.parsed == 1)
    try Self.checkHeartRate(outcome, "bluez")
    try FuzzRegressionTests.checkConsistent(outcome, target: .bluez, bytes: bytes, name: "bluez")
    // What trapped before: refused on its line.
    let refused = FuzzTarget.bluez.run(Array("[Attributes]\n0001=\n".utf8))
    #expect(refused.refusal == "cache/D0:B1:ED:00:48:52:2: attribute 0001 has no value (a UUID, or a declaration such as 2800:0005:<uuid>)")
  }

  @Test func decodersTargetRunsEveryDecoder() throws {
    let file = try [UInt8](Data(contentsOf: URL(fileURLWithPath: SideFileTests.example)))
    // The example's two decoders (2a37, 2a19) at 0x0100 and 0x0101; one value: 1F 48 00 10 27
    // 00 04 00 04 (16-bit bpm, contact, energy, two RR intervals).
    let value: [UInt8] = [0x1F, 0x48, 0x00, 0x10, 0x27, 0x00, 0x04, 0x00, 0x04]
    let outcome = FuzzTarget.decoders.run(file + [0, UInt8(value.count)] + value, keepingJSON: true)
    #expect(outcome.refusal == nil && outcome.parsed == 2)
    try FuzzRegressionTests.checkConsistent(outcome, target: .decoders, bytes: file, name: "decoders")
    let decoded = try Self.values(outcome).filter { $0.opcode == 0x1B }
    #expect(decoded.map { $0.handle ?? -1 } == [0x100, 0x101])
    let measurement = try #require(decoded.first?.decoded?["hrm"] as? [String: Any])
    #expect(measurement["flags"] as? Int == 0x1F)
    #expect(measurement["bpm"] as? Int == 72)
    #expect(measurement["sensor_contact_name"] as? String == "detected")
    #expect(measurement["energy_expended"] as? Int == 10_000)
    #expect(measurement["rr_intervals"] as? [Double] == [1000, 1000])
    // A Battery Level is one byte: nine are malformed, their bytes kept.
    #expect(decoded.last?.hex == "1f4800102700040004")
    // Without values: the fixed ones, on both decoders as notifications and reads.
    let fixed = FuzzTarget.decoders.run(file)
    #expect(fixed.records == 3 + 2 * 8 * 3 + 1)
    let refused = FuzzTarget.decoders.run(Array(#"{"format":"bledissect-decoders","version":1,"decoders":[{"uuid":"2a37","fields":[{"name":"x","type":"u9"}]}]}"#.utf8))
    #expect(refused.refusal == "fuzz.decoders.json:1: decoders[0].fields[0].type: unknown type 'u9' (u8…u64, s8…s64, with 'be' for big-endian: u16be; sfloat, float, f32, f64, utf8, bytes)")
  }
}
