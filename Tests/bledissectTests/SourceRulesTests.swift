import Foundation
import Testing
import BLETestSupport

/// Unsafe code (anything spelled `unsafe`/`Unsafe`, `@unchecked Sendable`, `Unmanaged`) lives in
/// a few homes, and each use says why it is sound: a `// Safety:` comment on one of the three
/// lines above it. The compiler cannot hold the sources to that (strict memory safety would
/// flag the homes too), so this test reads them.
@Suite struct SourceRulesTests {
  /// The files unsafe code may live in, and why it is there.
  static let homes: [String: String] = [
    "Sources/BLECore/ByteReader.swift": "ByteView and ByteReader: pinned bytes read without reference counting",
    "Sources/BLECore/ByteArena.swift": "bytes copied in and lent out, header words composed in place",
    "Sources/BLECore/ByteArena+Text.swift": "TextComposer and TextFormat's digit writers: room made by ByteArena or OutputBuffer",
    "Sources/BLECore/SystemWrite.swift": "write(2)",
    "Sources/BLECore/Locked.swift": "state shared by threads behind a lock (Mutex needs macOS 15)",
    "Sources/BLECore/SameType.swift": "a value opened from an existential, as its own type (a cast costs 2%)",
    "Sources/BLERender/OutputBuffer.swift": "the buffered writer all output goes through",
    "Sources/BLEEngine/FrameStream.swift": "the frame batches handed between the reading and consuming threads",
    "Sources/BLECapture/FileSystem.swift": "file names as C strings, read(2), mkstemp, realpath, readdir, argv",
    "Sources/BLECapture/InputSource.swift": "the capture's read buffer, filled by read(2), pread(2) and zlib",
    "Sources/BLECapture/Inflater.swift": "zlib",
    "Sources/BLECapture/PcapReader.swift": "libpcap and its stdio stream",
    "Sources/BLECapture/MonitorSocketReader.swift": "the Bluetooth monitor socket: bind, recvmsg, control messages",
    "Sources/BLECapture/AndroidFeed.swift": "getaddrinfo and connect",
    "Sources/BLECapture/SignalStop.swift": "the signal handler's descriptor (a C function captures nothing)",
    "Sources/BLEFuzzTargets/FuzzTargets.swift": "the bytes libFuzzer lends (its C entry point)",
    "Sources/BLETestSupport/TestSupport.swift": "test readers over copies kept for the process",
  ]

  /// What counts as unsafe in code (comments aside).
  static let unsafeWords = try! NSRegularExpression(pattern: #"unsafe|@unchecked\b|\bUnmanaged\b"#, options: [.caseInsensitive])

  struct Finding: Equatable, CustomStringConvertible {
    var file: String
    var line: Int
    var problem: String
    var description: String { "\(file):\(line): \(problem)" }
  }

  @Test func unsafeCodeLivesInItsHomesAndSaysWhyItIsSound() throws {
    let sources = repositoryRoot.appendingPathComponent("Sources")
    let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)?
      .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
    #expect(files.count > 100)
    var findings: [Finding] = []
    var homesWithUnsafeCode: Set<String> = []
    for file in files {
      let path = String(file.standardizedFileURL.path.dropFirst(repositoryRoot.standardizedFileURL.path.count + 1))
      let lines = try String(contentsOf: file, encoding: .utf8).components(separatedBy: "\n")
      let found = Self.check(lines, file: path, isHome: Self.homes[path] != nil)
      findings += found.findings
      if found.unsafeLines > 0 { homesWithUnsafeCode.insert(path) }
    }
    #expect(findings.isEmpty, "\(findings.count) unsafe lines out of place or unexplained:\n\(findings.map(\.description).joined(separator: "\n"))")
    // A home left without unsafe code leaves the list, so the list stays the truth.
    let idle = Set(Self.homes.keys).subtracting(homesWithUnsafeCode).sorted()
    #expect(idle.isEmpty, "homes without unsafe code: \(idle)")
  }

  /// Commands stay thin (options → stream → analysis → writer; docs/architecture.md): analyses
  /// live in BLEAnalysis and output in BLERender, so the CLI target holds argument parsing, the
  /// batch runner, the manual, live's terminal and the cache policy, and no command file grows
  /// past 200 lines (issue 27's bounds).
  @Test func commandsStayThin() throws {
    let cli = repositoryRoot.appendingPathComponent("Sources/bledissect")
    let files = FileManager.default.enumerator(at: cli, includingPropertiesForKeys: nil)?
      .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
    var total = 0
    for file in files {
      let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).count - 1
      total += lines
      if file.path.contains("/Commands/") && file.lastPathComponent.hasSuffix("Command.swift") {
        #expect(lines <= 200, "\(file.lastPathComponent): \(lines) lines")
      }
    }
    #expect(files.count > 10)
    #expect(total <= 3_500, "the CLI target has \(total) lines")
  }

  @Test func theCheckFindsUnexplainedAndMisplacedUnsafeCode() {
    let source = """
      // Safety: the buffer outlives the call.
      let a = bytes.withUnsafeBufferPointer { $0.count }
      let b = 1
      let c = 2
      let d = 3
      let e = unsafeBitCast(x, to: Int.self)
      /// Unsafe in a comment is no code.
      final class Box: @unchecked Sendable {}
      let f = Unmanaged.passRetained(object)
      let g = 4 // unsafe only in a trailing comment
      """
    let lines = source.components(separatedBy: "\n")
    // In a home: lines 2 (explained above), 6, 8 and 9 are unsafe; 6, 8 and 9 lack a comment.
    let home = Self.check(lines, file: "Home.swift", isHome: true)
    #expect(home.unsafeLines == 4)
    #expect(home.findings.map(\.line) == [6, 8, 9])
    // Elsewhere every unsafe line is out of place, explained or not.
    let elsewhere = Self.check(lines, file: "Other.swift", isHome: false)
    #expect(elsewhere.findings.map(\.line) == [2, 6, 8, 9])
    #expect(elsewhere.findings.allSatisfy { $0.problem.hasPrefix("unsafe code outside") })
  }

  /// The unsafe lines of `lines` (from 1) that break the rules, and how many unsafe lines there are.
  static func check(_ lines: [String], file: String, isHome: Bool) -> (findings: [Finding], unsafeLines: Int) {
    var findings: [Finding] = []
    var unsafeLines = 0
    for (index, line) in lines.enumerated() {
      let code = line.components(separatedBy: "//").first ?? line
      guard unsafeWords.firstMatch(in: code, range: NSRange(code.startIndex..., in: code)) != nil else { continue }
      unsafeLines += 1
      guard isHome else {
        findings.append(Finding(file: file, line: index + 1, problem: "unsafe code outside its homes: \(line.trimmingCharacters(in: .whitespaces))"))
        continue
      }
      let above = lines[max(0, index - 3)..<index].map { $0.trimmingCharacters(in: .whitespaces) }
      if !above.contains(where: { $0.hasPrefix("// Safety:") }) {
        findings.append(Finding(file: file, line: index + 1, problem: "no '// Safety:' comment in the 3 lines above: \(line.trimmingCharacters(in: .whitespaces))"))
      }
    }
    return (findings, unsafeLines)
  }
}
