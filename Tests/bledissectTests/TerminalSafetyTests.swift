import BLECapture
import BLECore
import BLERender
import Foundation
import Testing

@testable import bledissect

/// Text from the air, users' files and file names never reaches a terminal raw: a crafted
/// capture whose names, strings, UART text and notes hold ESC, BEL, NUL, DEL, C1 (U+009B) and
/// invalid UTF-8 is run through every text surface, and no output holds a control byte other
/// than the newlines that end lines.
@Suite struct TerminalSafetyTests {
  /// Same-length replacements, so every length field stays right.
  static let hostileGAPName: [UInt8] = [0x1B, 0x5B, 0x32, 0x4A, 0x07, 0x00, 0x7F, 0xC2, 0x9B, 0x58, 0x9B, 0xFF, 0x5A]  // 13, for "bledissect HR"
  static let hostileMaker: [UInt8] = Array("labs".utf8) + [0x1B] + Array("]0;pwn".utf8) + [0x07, 0x9B, 0xC2, 0x9B]  // 15, for "bledissect labs"
  static let hostileUART: [UInt8] = Array("hello there ".utf8) + [0x1B, 0x5B, 0x32, 0x4A, 0x07, 0xC2, 0x9B] + Array("ok NU\n".utf8)  // 25

  static func crafted(_ name: String, replacing pairs: [(String, [UInt8])]) throws -> String {
    var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: capturePath(name))))
    for (old, new) in pairs {
      let target = Array(old.utf8)
      #expect(target.count == new.count)
      var found = 0
      var index = 0
      while index + target.count <= bytes.count {
        if Array(bytes[index..<index + target.count]) == target {
          bytes.replaceSubrange(index..<index + target.count, with: new)
          found += 1
        }
        index += 1
      }
      #expect(found > 0, "\(old) not in \(name)")
    }
    return temporaryFile(bytes)
  }

  /// Where the output holds a control byte (C0 other than newline, DEL, C1 as C2 80–9F) or a
  /// byte that is not valid UTF-8, or nil.
  static func firstControl(_ bytes: [UInt8]) -> String? {
    func place(_ index: Int, _ what: String) -> String {
      let start = max(0, index - 30)
      return "\(what) \(Hex.prefixed(UInt64(bytes[index]), width: 2)) at \(index): " + String(decoding: bytes[start..<min(bytes.count, index + 10)], as: UTF8.self).debugDescription
    }
    var index = 0
    while index < bytes.count {
      let byte = bytes[index]
      if (byte < 0x20 && byte != 0x0A) || byte == 0x7F { return place(index, "byte") }
      // A UTF-8 sequence: its length from the lead byte, then that many continuation bytes.
      let length = byte < 0x80 ? 1 : byte >= 0xC2 && byte <= 0xDF ? 2 : byte >= 0xE0 && byte <= 0xEF ? 3 : byte >= 0xF0 && byte <= 0xF4 ? 4 : 0
      guard length > 0, index + length <= bytes.count, bytes[index + 1..<index + length].allSatisfy({ $0 & 0xC0 == 0x80 }) else {
        return place(index, "invalid UTF-8")
      }
      if byte == 0xC2 && bytes[index + 1] <= 0x9F { return place(index, "C1 control") }
      index += length
    }
    return nil
  }

  static func expectClean(_ result: CLIResult, _ what: String) {
    let out = result.stdoutBytes.isEmpty ? Array(result.stdout.utf8) : result.stdoutBytes
    let err = result.stderrBytes.isEmpty ? Array(result.stderr.utf8) : result.stderrBytes
    if let place = firstControl(out) { Issue.record("\(what): stdout has \(place)") }
    if let place = firstControl(err) { Issue.record("\(what): stderr has \(place)") }
  }

  static let decoders = """
    {"format": "bledissect-decoders", "version": 1, "decoders": [
      {"uuid": "2a19", "name": "Charge\\u001b[2J\\u0007", "key": "charge", "fields": [
        {"name": "level", "type": "u8", "enum": {"87": "full\\u001b]0;x\\u0007\\u009b"}}
      ]}
    ]}
    """

  @Test func noRawControlByteOnAnySurface() throws {
    let strap = try Self.crafted("hr_strap_session.btsnoop", replacing: [("bledissect HR", Self.hostileGAPName), ("bledissect labs", Self.hostileMaker)])
    let uart = try Self.crafted("vendor_services.btsnoop", replacing: [("hello phone, this is NUS\n", Self.hostileUART)])
    let decoders = temporaryFile(Array(Self.decoders.utf8))
    let surfaces: [[String]] = [
      [], ["-1"], ["-v"], ["--json"], ["info"], ["summary"], ["summary", "--json"], ["gatt"], ["gatt", "--json"],
      ["hr"], ["hr", "--csv"], ["hr", "--json"],
    ]
    for file in [strap, uart] {
      for words in surfaces {
        let arguments = words + ["--no-cache", file]
        let result = runCLI(words.first == "info" ? words + [file] : arguments)
        #expect(result.status == 0, "\(arguments)")
        Self.expectClean(result, arguments.joined(separator: " "))
      }
      // A user's decoder's names and enum text.
      for words in [["-1"], ["-v"], []] {
        Self.expectClean(runCLI(words + ["--no-cache", "--decoders", decoders, file]), "\(words) --decoders")
      }
    }
    let diff = runCLI(["diff", "--no-cache", capturePath("hr_strap_session.btsnoop"), strap])
    Self.expectClean(diff, "diff")

    // The cache: a table learned from the hostile capture, listed and shown.
    let cache = GATTCacheTests.Folder()
    _ = cache.run(["summary", strap])
    for words in [["cache", "list"], ["cache", "show", GATTCacheTests.strap], ["summary", strap], ["-1", strap]] {
      Self.expectClean(cache.run(words), words.joined(separator: " "))
    }
    // live, with its closing status line on stderr.
    for words in [["-1"], []] {
      let live = try Self.live(words, file: strap)
      #expect(live.stdout.contains(words == ["-1"] ? "0x0010: 72 bpm, no contact — Heart Rate Measurement" : "0x0010 Heart Rate Measurement: 72 bpm"))
      #expect(live.stderr.contains("live: "))
      Self.expectClean(live, "live \(words)")
    }

    // The escapes are there to read.
    let oneLine = runCLI(["-1", "--no-cache", strap]).stdout
    #expect(oneLine.contains("\\x1B[2J\\x07\\x00\\x7F\\u009BX"))
    let summary = runCLI(["summary", "--no-cache", strap]).stdout
    #expect(summary.contains("\"\\x1B[2J\\x07\\x00\\x7F\\u009BX"))
    #expect(summary.contains("labs\\x1B]0;pwn\\x07"))
    #expect(runCLI(["-1", "--no-cache", uart]).stdout.contains("\"hello there \\x1B[2J\\x07\\u009Bok NU\\n\""))
    #expect(runCLI(["-1", "--no-cache", "--decoders", decoders, strap]).stdout.contains("level full\\x1B]0;x\\x07\\u009B"))
  }

  /// `live -` fed a file on standard input, as the binary runs it.
  static func live(_ words: [String], file: String) throws -> CLIResult {
    let binary = try #require(binaryPath())
    let process = Process()
    process.environment = hermeticEnvironment
    process.executableURL = URL(fileURLWithPath: binary)
    process.arguments = ["live"] + words + ["--no-cache", "-"]
    // The file itself is standard input, so nothing here blocks writing it while live's output fills its pipe.
    let input = try #require(FileHandle(forReadingAtPath: file))
    let (output, errors) = (Pipe(), Pipe())
    process.standardInput = input
    process.standardOutput = output
    process.standardError = errors
    try process.run()
    let shown = [UInt8](output.fileHandleForReading.readDataToEndOfFile())
    let said = [UInt8](errors.fileHandleForReading.readDataToEndOfFile())
    process.waitUntilExit()
    return CLIResult(
      status: process.terminationStatus, stdout: String(decoding: shown, as: UTF8.self), stderr: String(decoding: said, as: UTF8.self),
      stdoutBytes: shown, stderrBytes: said)
  }

  @Test func colourOnlyOurOwnSequences() throws {
    let strap = try Self.crafted("hr_strap_session.btsnoop", replacing: [("bledissect HR", Self.hostileGAPName)])
    let text = runCLI(["--color", "always", "--no-cache", strap], terminal: true).stdout
    // Every ESC starts one of the renderer's SGR sequences.
    let pieces = text.split(separator: "\u{1B}", omittingEmptySubsequences: false).dropFirst()
    #expect(!pieces.isEmpty)
    for piece in pieces {
      #expect(piece.range(of: #"^\[[0-9]+m"#, options: .regularExpression) != nil, "\(piece.prefix(12).debugDescription)")
    }
  }

  @Test func packetLoggerNoteAndFileName() throws {
    var writer = CaptureWriter(format: .packetLogger(bigEndian: true))
    writer.write(CaptureRecord(timestamp: 1_000_000, direction: nil, kind: .note(.note), bytes: Array("note \u{1B}[2J\u{07}\u{9B}".utf8) + [0x9B, 0x00]))
    writer.write(CaptureRecord(timestamp: 2_000_000, direction: .hostToController, kind: .command, bytes: [0x03, 0x0C, 0x00]))
    let path = temporaryFile(writer.output)
    for words in [[], ["-1"], ["-v"], ["--json"], ["summary"]] {
      let result = runCLI(words + ["--no-cache", path])
      Self.expectClean(result, "pklg \(words)")
    }
    #expect(runCLI(["-1", "--no-cache", path]).stdout.contains("note \\x1B[2J\\x07\\u009B"))
    // A file name with controls, in a message.
    let missing = runCLI(words: [Argument(bytes: Array("/nonexistent/\u{1B}[2J\u{07}".utf8) + [0xC2, 0x9B])])
    Self.expectClean(missing, "file name")
    #expect(missing.stderr.contains("\\x1B[2J\\x07\\xC2\\x9B"))
  }

  @Test func oneEscaperStyles() {
    let text = "a\u{1B}b\u{7}\u{0}\u{7F}\u{9B}\n\t\"\\&<"
    #expect(Escaping.escaped(text, .line) == #"a\x1Bb\x07\x00\x7F\u009B\n\t"\&<"#)
    #expect(Escaping.escaped(text, .quoted) == #"a\x1Bb\x07\x00\x7F\u009B\n\t\"\\&<"#)
    #expect(Escaping.escaped(text, .json) == #"a\u001bb\u0007\u0000\u007f\u009b\n\t\"\\&<"#)
    #expect(Escaping.escaped(text, .xml) == #"a\x1Bb\x07\x00\x7F\u009B\n\t&quot;\&amp;&lt;"#)
    #expect(Escaping.escaped("a,b", .csv) == "\"a,b\"")
    #expect(Escaping.escaped("plain", .csv) == "plain")
    #expect(Escaping.escaped("abcdef", .line, limit: 3) == "abc…")
    // The buffer's JSON writer is the json style.
    var out = OutputBuffer(fd: nil)
    out.jsonString(text)
    #expect(out.text == "\"" + Escaping.escaped(text, .json) + "\"")
  }
}
