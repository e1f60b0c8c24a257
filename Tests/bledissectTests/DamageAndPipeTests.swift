import Foundation
import Testing
@testable import bledissect

/// Damage through the command line (reading on, `--stop-at-damage`, info, convert) and piped
/// input decoded as it arrives, with the real binary.
@Suite struct DamageAndPipeTests {
  static func bytes(_ name: String) throws -> [UInt8] {
    Array(try Data(contentsOf: URL(fileURLWithPath: capturePath(name))))
  }

  /// Record start offsets of a btsnoop file, from its length fields.
  static func btsnoopOffsets(_ bytes: [UInt8]) -> [Int] {
    var offsets: [Int] = []
    var offset = 16
    while offset + 24 <= bytes.count {
      offsets.append(offset)
      let included = Int(bytes[offset + 4]) << 24 | Int(bytes[offset + 5]) << 16 | Int(bytes[offset + 6]) << 8 | Int(bytes[offset + 7])
      offset += 24 + included
    }
    offsets.append(bytes.count)
    return offsets
  }

  /// A header line without its frame number (and the padding after it, which follows the width).
  static func unnumbered(_ line: Substring) -> Substring { line.drop { $0 != " " }.drop { $0 == " " } }

  /// hr_strap_session.btsnoop with frame 82's included length (an HCI event) made impossible.
  static func damagedSession() throws -> (path: String, offset: Int, size: Int) {
    let original = try bytes("hr_strap_session.btsnoop")
    let offsets = btsnoopOffsets(original)
    var damaged = original
    damaged.replaceSubrange((offsets[81] + 4)..<(offsets[81] + 8), with: [0xFF, 0xFF, 0xFF, 0xF0])
    return (temporaryFile(damaged), offsets[81], offsets[82] - offsets[81])
  }

  @Test func annotateReadsOnAfterDamageAndExits1() throws {
    let (path, offset, size) = try Self.damagedSession()
    let original = runCLI(["-1", capturePath("hr_strap_session.btsnoop")]).stdout.split(separator: "\n")
    #expect(original.count == 160)
    let result = runCLI(["-1", path])
    #expect(result.status == 1)
    let lines = result.stdout.split(separator: "\n")
    try #require(lines.count == 159)
    #expect(Array(lines[..<81]) == Array(original[..<81]))
    #expect(lines[81].hasPrefix("#82 "))
    // Every frame after the damage is the original's next one, numbered one less.
    #expect(lines[81...].map(Self.unnumbered) == original[82...].map(Self.unnumbered))
    #expect(result.stderr == """
      bledissect: \(path): damaged capture at frame 82 (byte offset \(offset)): impossible included length 4294967280 (at most 262144); skipped \(size) bytes, reading on at byte offset \(offset + size)
      bledissect: \(path): 159 frames read; skipped \(size) damaged bytes in 1 place

      """)

    let stopped = runCLI(["-1", "--stop-at-damage", path])
    #expect(stopped.status == 1)
    #expect(stopped.stdout.split(separator: "\n") == Array(original[..<81]))
    #expect(stopped.stderr == "bledissect: \(path): damaged capture at frame 82 (byte offset \(offset)): impossible included length 4294967280 (at most 262144)\n")
  }

  @Test func jsonAndPacketLoggerReadOnToo() throws {
    var pklg = try Self.bytes("hr_strap_session.pklg")
    // The 40th record's length field (big-endian PacketLogger): walk 39 records.
    var offset = 0
    for _ in 0..<39 { offset += 4 + (Int(pklg[offset]) << 24 | Int(pklg[offset + 1]) << 16 | Int(pklg[offset + 2]) << 8 | Int(pklg[offset + 3])) }
    pklg.replaceSubrange(offset..<(offset + 4), with: [0, 0, 0, 3])
    let path = temporaryFile(pklg)
    let result = runCLI(["--json", path])
    #expect(result.status == 1)
    #expect(result.stdout.split(separator: "\n").count == 159)
    #expect(result.stderr.hasPrefix("bledissect: \(path): damaged capture at frame 40 (byte offset \(offset)): impossible record length 3 (8 to 65535); skipped "))
    #expect(runCLI(["--json", "--stop-at-damage", path]).stdout.split(separator: "\n").count == 39)
  }

  @Test func infoAndConvertAgree() throws {
    let (path, _, size) = try Self.damagedSession()
    let info = runCLI(["info", path])
    #expect(info.status == 1)
    #expect(info.stdout.contains("frames:   159\n"))
    #expect(info.stdout.contains("skipped:  \(size) damaged bytes in 1 place\n"))
    #expect(info.stderr.split(separator: "\n").count == 2)
    let stopped = runCLI(["info", "--stop-at-damage", path])
    #expect(stopped.status == 1)
    #expect(stopped.stdout.contains("frames:   81\n"))
    #expect(!stopped.stdout.contains("skipped:"))

    let output = NSTemporaryDirectory() + "bledissect-resync-\(UUID().uuidString).pklg"
    let convert = runCLI(["convert", "--to", "pklg", path, output])
    #expect(convert.status == 1)
    #expect(convert.stderr.contains("skipped \(size) bytes, reading on"))
    let converted = runCLI(["info", output])
    #expect(converted.status == 0)
    #expect(converted.stdout.contains("frames:   159\n"))
    #expect(runCLI(["-1", output]).stdout.split(separator: "\n").map(Self.unnumbered) == runCLI(["-1", path]).stdout.split(separator: "\n").map(Self.unnumbered))
  }

  /// The real binary with stdout and stderr on one pipe: the skip is reported between the
  /// frames around it.
  @Test func theSkipIsReportedInOrderWithTheFrames() throws {
    guard let binary = binaryPath() else {
      Issue.record("bledissect binary not found")
      return
    }
    let (path, _, _) = try Self.damagedSession()
    let process = Process()
    process.environment = hermeticEnvironment
    process.executableURL = URL(fileURLWithPath: binary)
    process.arguments = ["-1", path]
    let both = Pipe()
    process.standardOutput = both
    process.standardError = both
    try process.run()
    let text = String(decoding: both.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    #expect(process.terminationStatus == 1)
    let lines = text.split(separator: "\n")
    try #require(lines.count == 161)
    #expect(lines[80].hasPrefix("#81 "))
    #expect(lines[81].hasPrefix("bledissect: \(path): damaged capture at frame 82"))
    #expect(lines[82].hasPrefix("#82 "))
    #expect(lines[160].hasPrefix("bledissect: \(path): 159 frames read"))
  }

  // MARK: Piped input

  /// Reads from `fd` until `count` newlines have arrived in all, or `timeout` passes.
  static func awaitLines(_ fd: Int32, _ received: inout [UInt8], count: Int, timeout: Double) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    var chunk = [UInt8](repeating: 0, count: 65_536)
    while received.filter({ $0 == 0x0A }).count < count {
      let left = deadline.timeIntervalSinceNow
      if left <= 0 { return false }
      var request = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      guard poll(&request, 1, Int32(left * 1000) + 1) > 0 else { continue }
      let got = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
      if got <= 0 { return false }
      received += chunk[..<got]
    }
    return true
  }

  static func write(_ bytes: ArraySlice<UInt8>, to pipe: Pipe) {
    pipe.fileHandleForWriting.write(Data(bytes))
  }

  /// A btsnoop header and one record written into a pipe that stays open: the frame's line
  /// must arrive before the end of the input, then the next ones, one by one.
  @Test(arguments: [["-1"], ["--json"]])
  func pipedFramesAppearBeforeTheEndOfInput(options: [String]) throws {
    guard let binary = binaryPath() else {
      Issue.record("bledissect binary not found")
      return
    }
    let capture = try Self.bytes("hr_strap_session.btsnoop")
    let offsets = Self.btsnoopOffsets(capture)
    let (process, input, output) = try launchReadingStandardInput(binary, options + ["-"])
    let readEnd = output.fileHandleForReading.fileDescriptor
    var received: [UInt8] = []
    var latencies: [Double] = []
    for frame in 1...5 {
      let start = Date()
      Self.write(capture[(frame == 1 ? 0 : offsets[frame - 1])..<offsets[frame]], to: input)
      let arrived = Self.awaitLines(readEnd, &received, count: frame, timeout: 2)
      latencies.append(Date().timeIntervalSince(start))
      #expect(arrived, "frame \(frame) did not appear within 2 s of its bytes (input still open)")
      if !arrived { break }
    }
    let lines = String(decoding: received, as: UTF8.self).split(separator: "\n")
    #expect(lines.count == 5)
    if options == ["-1"] { #expect(lines.map { $0.prefix(3) } == ["#1 ", "#2 ", "#3 ", "#4 ", "#5 "]) }
    print("piped \(options): latency per frame (ms): \(latencies.map { String(format: "%.1f", $0 * 1000) }.joined(separator: ", "))")
    // The rest in one go, then the end of input.
    Self.write(capture[offsets[5]...], to: input)
    try input.fileHandleForWriting.close()
    received += output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    #expect(process.terminationStatus == 0)
    #expect(String(decoding: received, as: UTF8.self).split(separator: "\n").count == 160)
  }

  /// PacketLogger (no magic number: one good record suffices when the writer pauses), pcap and
  /// pcapng (read by libpcap through a stream of ours).
  @Test(arguments: ["pklg", "pcap", "pcapng"])
  func pipedPacketLoggerAndPcapAppearBeforeTheEndOfInput(format: String) throws {
    guard let binary = binaryPath() else {
      Issue.record("bledissect binary not found")
      return
    }
    let converted = NSTemporaryDirectory() + "bledissect-piped-\(UUID().uuidString).\(format)"
    #expect(runCLI(["convert", "--to", format, capturePath("hr_strap_session.btsnoop"), converted]).status == 0)
    let capture = Array(try Data(contentsOf: URL(fileURLWithPath: converted)))
    // Where the first record ends: the file holding only it, converted the same way.
    let one = NSTemporaryDirectory() + "bledissect-piped-\(UUID().uuidString).btsnoop"
    let btsnoop = try Self.bytes("hr_strap_session.btsnoop")
    _ = FileManager.default.createFile(atPath: one, contents: Data(btsnoop[..<Self.btsnoopOffsets(btsnoop)[1]]))
    let firstOut = one + "." + format
    #expect(runCLI(["convert", "--to", format, one, firstOut]).status == 0)
    let first = try Data(contentsOf: URL(fileURLWithPath: firstOut)).count
    #expect(Array(capture[..<first]) == Array(try Data(contentsOf: URL(fileURLWithPath: firstOut))))

    let (process, input, output) = try launchReadingStandardInput(binary, ["-1", "-"])
    var received: [UInt8] = []
    Self.write(capture[..<first], to: input)
    #expect(Self.awaitLines(output.fileHandleForReading.fileDescriptor, &received, count: 1, timeout: 2), "\(format)")
    Self.write(capture[first...], to: input)
    try input.fileHandleForWriting.close()
    received += output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    #expect(process.terminationStatus == 0)
    #expect(String(decoding: received, as: UTF8.self).split(separator: "\n").count == 160)
  }
}
