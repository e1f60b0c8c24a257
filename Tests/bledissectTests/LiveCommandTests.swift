#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import BLECapture
import BLECore
import Foundation
import Testing
@testable import bledissect

/// `bledissect live` end to end: the real binary follows a file a test thread grows (with a
/// truncation and a rotation), reads a TCP feed that drops and comes back, records with `-w`
/// and ends cleanly on a signal. Every wait is bounded; nothing needs Bluetooth.
@Suite(.serialized) struct LiveCommandTests {
  /// The sample session split into its btsnoop header and raw records.
  static let session: (header: [UInt8], records: [[UInt8]]) = {
    let bytes = [UInt8](FileManager.default.contents(atPath: capturePath("hr_strap_session.btsnoop"))!)
    var records: [[UInt8]] = []
    var offset = 16
    while offset + 24 <= bytes.count {
      let included = Int(bytes[offset + 4]) << 24 | Int(bytes[offset + 5]) << 16 | Int(bytes[offset + 6]) << 8 | Int(bytes[offset + 7])
      records.append(Array(bytes[offset..<(offset + 24 + included)]))
      offset += 24 + included
    }
    return (Array(bytes[..<16]), records)
  }()

  /// What identifies a frame in the JSON output: time, direction, type, length.
  static func identities(_ json: String) -> [String] {
    json.split(separator: "\n").compactMap { line in
      guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
      return "\(object["ts"] ?? "") \(object["dir"] ?? "") \(object["type"] ?? "") \(object["len"] ?? "")"
    }
  }

  /// The identities of records as annotate prints them (decoded from a file holding them).
  static func expectedIdentities(_ records: ArraySlice<[UInt8]>) -> [String] {
    let path = temporaryFile(session.header + records.flatMap { $0 })
    defer { try? FileManager.default.removeItem(atPath: path) }
    return identities(runCLI(["--json", "--no-cache", path]).stdout)
  }

  /// The binary started with standard output and error going to files (read while it runs).
  struct Running {
    let process: Process
    let stdoutPath: String
    let stderrPath: String

    var stdout: String { (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? "" }
    var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }
    var lines: Int { stdout.split(separator: "\n").count }

    /// Waits until standard output holds `count` lines; false after `timeout` seconds.
    func awaitLines(_ count: Int, timeout: Double = 10) -> Bool {
      let deadline = Date().addingTimeInterval(timeout)
      while Date() < deadline {
        if lines >= count { return true }
        usleep(20_000)
      }
      return lines >= count
    }

    func awaitStderr(_ text: String, timeout: Double = 10) -> Bool {
      let deadline = Date().addingTimeInterval(timeout)
      while Date() < deadline {
        if stderr.contains(text) { return true }
        usleep(20_000)
      }
      return stderr.contains(text)
    }

    /// Sends `signal` and waits for the end (killed after `timeout` seconds: a failure).
    func stop(_ signal: Int32 = SIGINT, timeout: Double = 10) -> Int32? {
      kill(process.processIdentifier, signal)
      return awaitExit(timeout: timeout)
    }

    /// The exit status, or nil when it did not end within `timeout` seconds (then killed).
    func awaitExit(timeout: Double = 10) -> Int32? {
      let deadline = Date().addingTimeInterval(timeout)
      while process.isRunning && Date() < deadline { usleep(20_000) }
      if process.isRunning {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        return nil
      }
      return process.terminationStatus
    }

    func cleanUp() {
      if process.isRunning {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
      }
      try? FileManager.default.removeItem(atPath: stdoutPath)
      try? FileManager.default.removeItem(atPath: stderrPath)
    }
  }

  static func launch(_ arguments: [String]) throws -> Running? {
    guard let binary = binaryPath() else {
      Issue.record("bledissect binary not found")
      return nil
    }
    let base = NSTemporaryDirectory() + "bledissect-live-\(UUID().uuidString)"
    let stdoutPath = base + ".out"
    let stderrPath = base + ".err"
    _ = FileManager.default.createFile(atPath: stdoutPath, contents: nil)
    _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
    let process = Process()
    process.environment = hermeticEnvironment
    process.executableURL = URL(fileURLWithPath: binary)
    process.arguments = arguments
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = FileHandle(forWritingAtPath: stdoutPath)
    process.standardError = FileHandle(forWritingAtPath: stderrPath)
    try process.run()
    return Running(process: process, stdoutPath: stdoutPath, stderrPath: stderrPath)
  }

  /// Appends bytes to a file (opened for each write, as a logger that reopens would).
  static func append(_ bytes: [UInt8], to path: String) {
    let fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0o644)
    precondition(fd >= 0)
    bytes.withUnsafeBufferPointer { _ = write(fd, $0.baseAddress!, $0.count) }
    close(fd)
  }

  /// Appends records in bursts of `burst`, with a short pause between bursts.
  static func appendInBursts(_ records: ArraySlice<[UInt8]>, to path: String, burst: Int = 7) {
    var index = records.startIndex
    while index < records.endIndex {
      let last = min(index + burst, records.endIndex)
      append(records[index..<last].flatMap { $0 }, to: path)
      index = last
      usleep(15_000)
    }
  }

  @Test func followsAGrowingFileThroughTruncationAndRotation() throws {
    let records = Self.session.records
    let path = NSTemporaryDirectory() + "bledissect-follow-\(UUID().uuidString).btsnoop"
    defer {
      try? FileManager.default.removeItem(atPath: path)
      try? FileManager.default.removeItem(atPath: path + ".1")
    }
    Self.append(Self.session.header, to: path)
    guard let live = try Self.launch(["live", "--json", "--no-cache", "--follow", path]) else { return }
    defer { live.cleanUp() }
    // Bursts while it runs.
    Self.appendInBursts(records[0..<60], to: path)
    #expect(live.awaitLines(60), "the first 60 frames did not appear")
    // Truncated, then written again from its header.
    truncate(path, 0)
    #expect(live.awaitStderr("file truncated"))
    Self.append(Self.session.header, to: path)
    Self.appendInBursts(records[60..<100], to: path)
    #expect(live.awaitLines(100), "frames after the truncation did not appear")
    // Rotated: the name now names a new file.
    rename(path, path + ".1")
    usleep(100_000)
    Self.append(Self.session.header, to: path)
    Self.appendInBursts(records[100...], to: path)
    #expect(live.awaitLines(records.count), "frames after the rotation did not appear")
    let status = live.stop(SIGINT)
    #expect(status == 0)
    let expected = Self.expectedIdentities(records[0..<60]) + Self.expectedIdentities(records[60..<100]) + Self.expectedIdentities(records[100...])
    #expect(expected.count == records.count)
    #expect(Self.identities(live.stdout) == expected)
    let errors = live.stderr
    #expect(errors.contains("file truncated; reading it again from the start"))
    #expect(errors.contains("rotated"))
    #expect(errors.contains("live: \(records.count) frames,"), "\(errors)")
    #expect(errors.contains(", 2 drops"), "\(errors)")
  }

  @Test func readsTheAndroidFeedAndReconnects() throws {
    let records = Self.session.records
    // Bound but not yet listening: the first attempts are refused.
    #if canImport(Glibc)
    let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #else
    let server = socket(AF_INET, SOCK_STREAM, 0)
    #endif
    #expect(server >= 0)
    defer { close(server) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(server, $0, length) == 0 && getsockname(server, $0, &length) == 0 }
    }
    #expect(bound)
    let port = UInt16(bigEndian: address.sin_port)
    guard let live = try Self.launch(["live", "--json", "--no-cache", "--android", "127.0.0.1:\(port)"]) else { return }
    defer { live.cleanUp() }
    #expect(live.awaitStderr("connection refused"), "\(live.stderr)")
    // The first line said what it was doing before the first try ended.
    #expect(live.stderr.hasPrefix("bledissect: 127.0.0.1:\(port): connecting to the Android snoop feed (Ctrl-C to stop)\n"), "\(live.stderr)")
    #expect(listen(server, 4) == 0)
    // Bounded: an accept waits at most 10 s (SO_RCVTIMEO applies to accept).
    var limit = timeval(tv_sec: 10, tv_usec: 0)
    _ = setsockopt(server, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    // First connection: the header, 80 records in bursts, then closed.
    func serve(_ part: ArraySlice<[UInt8]>, thenClose: Bool) -> Int32 {
      let client = accept(server, nil, nil)
      guard client >= 0 else {
        Issue.record("live did not connect within 10 s")
        return -1
      }
      var chunks = [Self.session.header]
      var index = part.startIndex
      while index < part.endIndex {
        let last = min(index + 9, part.endIndex)
        chunks.append(part[index..<last].flatMap { $0 })
        index = last
      }
      for chunk in chunks {
        chunk.withUnsafeBufferPointer { _ = send(client, $0.baseAddress!, $0.count, 0) }
        usleep(10_000)
      }
      if thenClose { close(client) }
      return client
    }
    _ = serve(records[0..<80], thenClose: true)
    #expect(live.awaitLines(80))
    #expect(live.awaitStderr("closed the connection"))
    let second = serve(records[80...], thenClose: false)
    defer { if second >= 0 { close(second) } }
    #expect(live.awaitLines(records.count), "frames after the reconnection did not appear")
    let status = live.stop(SIGINT)
    #expect(status == 0)
    let expected = Self.expectedIdentities(records[0..<80]) + Self.expectedIdentities(records[80...])
    #expect(Self.identities(live.stdout) == expected)
    let errors = live.stderr
    #expect(errors.contains("adb forward tcp:8872 tcp:8872"))
    #expect(errors.components(separatedBy: "connected, reading the btsnoop feed").count == 3, "\(errors)")
    #expect(errors.contains("live: \(records.count) frames,"), "\(errors)")
    #expect(errors.contains(", 1 drop"), "\(errors)")
  }

  /// A TCP listener on 127.0.0.1 (any free port), accepting for at most 10 s at a time.
  static func listener() -> (socket: Int32, port: UInt16) {
    #if canImport(Glibc)
    let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #else
    let server = socket(AF_INET, SOCK_STREAM, 0)
    #endif
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(server, $0, length) == 0 && getsockname(server, $0, &length) == 0 }
    }
    _ = listen(server, 4)
    var limit = timeval(tv_sec: 10, tv_usec: 0)
    _ = setsockopt(server, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    return (server, UInt16(bigEndian: address.sin_port))
  }

  /// Android's feed sends each record's header and its packet in separate writes, so a client
  /// that connects between them gets the btsnoop header, then the tail of a record: bytes the
  /// reader skips as damage. Ctrl-C still ends `live` with status 0, as its help says; the skip
  /// is said on stderr.
  @Test func androidFeedJoinedMidRecordEndsWithStatus0OnSIGINT() throws {
    let records = Self.session.records
    let (server, port) = Self.listener()
    defer { close(server) }
    guard let live = try Self.launch(["live", "--json", "--no-cache", "--android", "127.0.0.1:\(port)"]) else { return }
    defer { live.cleanUp() }
    let client = accept(server, nil, nil)
    #expect(client >= 0, "live did not connect within 10 s")
    guard client >= 0 else { return }
    defer { close(client) }
    // The header, the packet of record 40 without its record header, then records 41…
    let joined = Self.session.header + Array(records[40].dropFirst(24)) + records[41...].flatMap { $0 }
    joined.withUnsafeBufferPointer { _ = send(client, $0.baseAddress!, $0.count, 0) }
    #expect(live.awaitStderr("skipped"), "\(live.stderr)")
    #expect(live.awaitLines(60))
    let status = live.stop(SIGINT)
    #expect(status == 0, "\(live.stderr)")
    let errors = live.stderr
    #expect(errors.contains("damaged capture at frame "), "\(errors)")
    #expect(errors.contains("frames read; skipped "), "\(errors)")
    #expect(errors.contains("bledissect: live: "), "\(errors)")
    // Every whole record after the skip was decoded.
    #expect(Self.identities(live.stdout).suffix(records.count - 41) == Self.expectedIdentities(records[41...])[...])
  }

  /// `--follow` as tail -F: a file not there yet is waited for (said once); once followed,
  /// a file replaced with bytes that are not a capture, or with text, is said once and waited
  /// on until a capture header is there again, rewritten in place or replaced; then reading
  /// goes on. The writer is a thread of the test.
  /// An empty or short file is waited on, and says so (silence looked like a hang).
  @Test(arguments: [0, 3])
  func anEmptyOrShortFileSaysItWaits(size: Int) throws {
    let path = temporaryFile(Array(Self.session.header.prefix(size)))
    defer { unlink(path) }
    guard let live = try Self.launch(["live", "--no-cache", "--follow", path]) else { return }
    defer { live.cleanUp() }
    let held = size == 0 ? "is empty" : "holds 3 bytes, too few to tell its format"
    #expect(live.awaitStderr("bledissect: \(path) \(held); waiting for more (Ctrl-C to stop)\n"), "\(live.stderr)")
    // The rest of the capture comes: read.
    Self.append(Array(Self.session.header.dropFirst(size)), to: path)
    Self.appendInBursts(Self.session.records[0..<5], to: path)
    #expect(live.awaitLines(5), "\(live.stderr)")
    #expect(live.stop(SIGINT) == 0)
  }

  @Test func followsAFileFromItsCreationThroughGarbage() throws {
    let records = Self.session.records
    let directory = NSTemporaryDirectory() + "bledissect-follow-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let path = directory + "/btsnoop_hci.log"
    guard let live = try Self.launch(["live", "--json", "--no-cache", "--follow", path]) else { return }
    defer { live.cleanUp() }
    #expect(live.awaitStderr("does not exist yet; waiting for it to be created"), "\(live.stderr)")
    /// Writes `bytes` under a temporary name, then renames it over `path` (a replacement).
    func replace(with bytes: [UInt8]) {
      let temporary = directory + "/new"
      _ = FileManager.default.createFile(atPath: temporary, contents: Data(bytes))
      rename(temporary, path)
    }
    // The writer: creates the file a little later, then writes records in bursts.
    let created = DispatchSemaphore(value: 0)
    let writer = Thread {
      usleep(300_000)
      Self.append(Self.session.header, to: path)
      Self.appendInBursts(records[0..<40], to: path)
      created.signal()
    }
    writer.start()
    #expect(created.wait(timeout: .now() + 20) == .success)
    #expect(live.awaitLines(40), "frames of the file created later did not appear: \(live.stderr)")
    #expect(live.stderr.components(separatedBy: "does not exist yet").count == 2, "said once: \(live.stderr)")
    // Replaced with bytes that are no capture: said, and waited on.
    var garbage: [UInt8] = []
    var seed: UInt32 = 12345
    for _ in 0..<4096 {
      seed = seed &* 1_103_515_245 &+ 12345
      garbage.append(UInt8(truncatingIfNeeded: seed >> 16) | 0x80)
    }
    replace(with: garbage)
    #expect(live.awaitStderr("not a capture file bledissect understands"), "\(live.stderr)")
    #expect(live.awaitStderr("waiting for a capture header"))
    // The garbage grows: still waited on, not said again.
    Self.append(Array(garbage[0..<512]), to: path)
    usleep(300_000)
    #expect(live.lines == 40)
    #expect(live.stderr.components(separatedBy: "waiting for a capture header").count == 2, "\(live.stderr)")
    // Rewritten in place with a capture: read from its start.
    let rewrite = open(path, O_WRONLY | O_TRUNC)
    #expect(rewrite >= 0)
    close(rewrite)
    Self.append(Self.session.header, to: path)
    Self.appendInBursts(records[40..<100], to: path)
    #expect(live.awaitStderr("holds a btsnoop capture now; reading it from its start"), "\(live.stderr)")
    #expect(live.awaitLines(100), "frames after the garbage did not appear: \(live.stderr)")
    // Replaced with text, then with a capture.
    replace(with: Array(String(repeating: "not a capture, a note\n", count: 8).utf8))
    #expect(live.awaitStderr("text, not a capture (starts with 6e 6f 74 20 …): live --follow reads btsnoop and PacketLogger files"), "\(live.stderr)")
    replace(with: Self.session.header + records[100...].flatMap { $0 })
    #expect(live.awaitLines(records.count), "frames after the text did not appear: \(live.stderr)")
    let status = live.stop(SIGINT)
    #expect(status == 0, "\(live.stderr)")
    let expected = Self.expectedIdentities(records[0..<40]) + Self.expectedIdentities(records[40..<100]) + Self.expectedIdentities(records[100...])
    #expect(Self.identities(live.stdout) == expected)
    let errors = live.stderr
    #expect(errors.components(separatedBy: "holds a btsnoop capture now").count == 3, "\(errors)")
    #expect(errors.contains("live: \(records.count) frames,"), "\(errors)")
  }

  @Test(arguments: [SIGINT, SIGTERM, SIGHUP])
  func recordingSurvivesASignalInTheMiddleOfABurst(signal: Int32) throws {
    let records = Self.session.records
    let path = NSTemporaryDirectory() + "bledissect-record-\(UUID().uuidString).btsnoop"
    let output = path + ".out.btsnoop"
    defer {
      try? FileManager.default.removeItem(atPath: path)
      try? FileManager.default.removeItem(atPath: output)
    }
    Self.append(Self.session.header, to: path)
    guard let live = try Self.launch(["live", "-1", "--no-cache", "--follow", path, "-w", output]) else { return }
    defer { live.cleanUp() }
    Self.appendInBursts(records[0..<50], to: path)
    #expect(live.awaitLines(50))
    // A burst written record by record, the signal arriving in its middle.
    let pid = live.process.processIdentifier
    let sender = Thread {
      usleep(30_000)
      kill(pid, signal)
    }
    sender.start()
    for record in records[50..<100] {
      Self.append(record, to: path)
      usleep(2_000)
    }
    #expect(live.awaitExit() == 0, "live did not end cleanly on signal \(signal)")
    // The recording is a valid capture holding the first N records.
    let reader = try CaptureFile.open(path: output)
    var written: [CaptureRecord] = []
    while let record = try reader.next() { written.append(record) }
    let source = try CaptureFile.open(path: capturePath("hr_strap_session.btsnoop"))
    var expected: [CaptureRecord] = []
    while let record = try source.next() { expected.append(record) }
    #expect(written.count >= 50 && written.count <= 100)
    #expect(written.map(\.bytes) == expected.prefix(written.count).map(\.bytes))
    #expect(written.map(\.timestamp) == expected.prefix(written.count).map(\.timestamp))
    #expect(live.stderr.contains("\(written.count) records written to"), "\(live.stderr)")
  }

  @Test func standardInputIsDecodedAsItArrives() throws {
    guard let binary = binaryPath() else {
      Issue.record("bledissect binary not found")
      return
    }
    let process = Process()
    process.environment = hermeticEnvironment
    process.executableURL = URL(fileURLWithPath: binary)
    process.arguments = ["live", "-1", "--no-cache", "-"]
    let input = Pipe()
    let output = Pipe()
    let errors = Pipe()
    process.standardInput = input
    process.standardOutput = output
    process.standardError = errors
    try process.run()
    let records = Self.session.records
    input.fileHandleForWriting.write(Data(Self.session.header + records[0..<5].flatMap { $0 }))
    // Five frames shown while the input stays open.
    var received = Data()
    let readEnd = output.fileHandleForReading.fileDescriptor
    let deadline = Date().addingTimeInterval(10)
    while String(decoding: received, as: UTF8.self).split(separator: "\n").count < 5 && Date() < deadline {
      var request = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
      guard poll(&request, 1, 100) > 0 else { continue }
      var chunk = [UInt8](repeating: 0, count: 65536)
      let got = read(readEnd, &chunk, chunk.count)
      if got <= 0 { break }
      received += Data(chunk[..<got])
    }
    #expect(String(decoding: received, as: UTF8.self).split(separator: "\n").count == 5)
    input.fileHandleForWriting.write(Data(records[5...].flatMap { $0 }))
    try input.fileHandleForWriting.close()
    received += output.fileHandleForReading.readDataToEndOfFile()
    let stderrText = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    #expect(process.terminationStatus == 0)
    #expect(String(decoding: received, as: UTF8.self).split(separator: "\n").count == records.count)
    #expect(stderrText.contains("live: \(records.count) frames"), "\(stderrText)")
  }

  /// `live --follow FILE | head`: the reader of the output leaving ends the wait for more.
  @Test func endsWhenItsOutputCloses() throws {
    guard let binary = binaryPath() else {
      Issue.record("bledissect binary not found")
      return
    }
    let errorsPath = NSTemporaryDirectory() + "bledissect-live-\(UUID().uuidString).err"
    _ = FileManager.default.createFile(atPath: errorsPath, contents: nil)
    defer { try? FileManager.default.removeItem(atPath: errorsPath) }
    let process = Process()
    process.environment = hermeticEnvironment
    process.executableURL = URL(fileURLWithPath: binary)
    process.arguments = ["live", "-1", "--no-cache", "--follow", capturePath("hr_strap_session.btsnoop")]
    let output = Pipe()
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = output
    process.standardError = FileHandle(forWritingAtPath: errorsPath)
    try process.run()
    let running = Running(process: process, stdoutPath: "/dev/null", stderrPath: errorsPath)
    #expect(output.fileHandleForReading.readData(ofLength: 100).count == 100)
    try output.fileHandleForReading.close()
    // Bounded: killed (and failed) if it goes on waiting for the file to grow.
    #expect(running.awaitExit(timeout: 10) == 0, "live did not end when its output closed")
    #expect(running.stderr.contains("live: "))
  }

  @Test func errorsSayWhatToDo() {
    // A file not there yet is waited for (followsAFileFromItsCreationThroughGarbage); one in a
    // directory that is not there either is a wrong path.
    let missing = runCLI(["live", "--follow", "/nonexistent/capture.btsnoop"])
    #expect(missing.status == 2)
    #expect(missing.stderr == "bledissect: /nonexistent/capture.btsnoop: No such file or directory, nor its directory (check the path: live waits for a file to be created, in a directory that exists)\n")
    // No source: the monitor channel, which this machine's kernel does not have (CI: the same);
    // one line saying what to do. (With a stand-in for the socket: MonitorLiveTests.)
    let none = runCLI(["live"])
    #expect(none.status == 2)
    #expect(none.stderr.contains("no Bluetooth sockets") || none.stderr.contains("CAP_NET_RAW"))
    #expect(none.stderr.split(separator: "\n").count == 1)
    // -w naming the followed file, even one not created yet (it would follow its own recording).
    let directory = NSTemporaryDirectory() + "bledissect-same-\(UUID().uuidString)"
    try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let itself = runCLI(["live", "--follow", directory + "/log.btsnoop", "-w", directory + "/./log.btsnoop"])
    #expect(itself.status == 64 && itself.stderr.contains("is the file being followed"), "\(itself.stderr)")
    #expect(!FileManager.default.fileExists(atPath: directory + "/log.btsnoop"))
    let both = runCLI(["live", "--android", "--follow", "x.btsnoop"])
    #expect(both.status == 64)
    let badPort = runCLI(["live", "--android", "localhost:99999"])
    #expect(badPort.status == 64)
    #expect(badPort.stderr.contains("[host:]port"))
    for (text, host, port) in [(nil, "127.0.0.1", 8872), ("9000", "127.0.0.1", 9000), ("[::1]:8872", "::1", 8872), ("phone.local:1234", "phone.local", 1234)] as [(String?, String, UInt16)] {
      let parsed = LiveCommand.parseAddress(text)
      #expect(parsed?.0 == host && parsed?.1 == port, "\(text ?? "nil")")
    }
    #expect(LiveCommand.parseAddress("host:") == nil)
  }
}
