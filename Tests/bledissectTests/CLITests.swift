import Foundation
import Testing
@testable import bledissect

@Suite struct CLITests {
  @Test func annotatesTheSampleCapture() {
    let result = runCLI([capturePath("hr_strap_session.btsnoop")])
    #expect(result.status == 0)
    #expect(result.stderr.isEmpty)
    #expect(result.stdout.hasPrefix("#1         0.000000 tx CMD   Reset\n"))
    #expect(result.stdout.contains("LE Connection Complete: D0:B1:ED:00:48:52 as central"))
  }

  @Test func annotateIsTheDefaultCommand() {
    let implicit = runCLI(["--json", capturePath("hr_strap_session.btsnoop")])
    let explicit = runCLI(["annotate", "--json", capturePath("hr_strap_session.btsnoop")])
    #expect(implicit.status == 0)
    #expect(implicit.stdout == explicit.stdout)
    #expect(implicit.stdout.split(separator: "\n").count == 160)
  }

  @Test func optionsTakeValuesInEveryForm() {
    let a = runCLI(["--time", "delta", "-c", "3", capturePath("hr_strap_session.btsnoop")])
    let b = runCLI(["--time=delta", "--count=3", capturePath("hr_strap_session.btsnoop")])
    #expect(a.status == 0)
    #expect(a.stdout == b.stdout)
    #expect(a.stdout.components(separatedBy: "\n#").count == 3)
  }

  @Test func colourOnlyOnATerminalAndNeverWithNoColor() {
    let path = capturePath("hr_strap_session.btsnoop")
    #expect(!runCLI(["-c", "1", path], terminal: false).stdout.contains("\u{1B}["))
    #expect(runCLI(["-c", "1", path], terminal: true).stdout.contains("\u{1B}["))
    #expect(!runCLI(["-c", "1", path], environment: ["NO_COLOR": "1"], terminal: true).stdout.contains("\u{1B}["))
    #expect(runCLI(["-c", "1", "--color", "always", path], terminal: false).stdout.contains("\u{1B}["))
    #expect(!runCLI(["-c", "1", "--color", "never", path], terminal: true).stdout.contains("\u{1B}["))
  }

  @Test func usageErrorsExit64WithOneLineAndWhereHelpIs() {
    let unknown = runCLI(["--frobnicate", "x"])
    #expect(unknown.status == 64)
    #expect(unknown.stderr == "bledissect: unknown option '--frobnicate'\nsee 'bledissect help annotate'\n")
    // Bare: the overview, as `help` gives it; `version` as `--version`.
    let bare = runCLI([])
    #expect(bare.status == 0 && bare.stderr.isEmpty && bare.stdout == runCLI(["help"]).stdout && bare.stdout.contains("<command> [options] <file>"))
    #expect(runCLI(["version"]).stdout == "bledissect \(BLEDissectCLI.version)\n" && runCLI(["version"]).stdout == runCLI(["--version"]).stdout)
    #expect(runCLI(["--time", "sideways", "x"]).status == 64)
    // -c 0 would print nothing: a usage error that says what -c needs.
    let none = runCLI(["-c", "0", capturePath("hr_strap_session.btsnoop")])
    #expect(none.status == 64 && none.stdout.isEmpty && none.stderr.hasPrefix("bledissect: --count needs a number of frames, 1 or more, not '0'\n"))
    #expect(runCLI(["-1", "-c", "1", capturePath("hr_strap_session.btsnoop")]).stdout.split(separator: "\n").count == 1)
    #expect(runCLI(["--time"]).status == 64)
    #expect(runCLI(["a", "b"]).status == 64)
    #expect(runCLI(["help", "nope"]).status == 64)
    #expect(runCLI(["convert", "a", "b"]).status == 64)
  }

  @Test func helpAndVersion() {
    let help = runCLI(["--help"])
    #expect(help.status == 0)
    #expect(help.stdout.contains("EXIT STATUS:"))
    #expect(help.stdout.contains("annotate"))
    let commandHelp = runCLI(["help", "annotate"])
    #expect(commandHelp.status == 0)
    #expect(commandHelp.stdout.contains("--time <rel|abs|delta>"))
    #expect(runCLI(["annotate", "--help"]).stdout == commandHelp.stdout)
    #expect(runCLI(["--version"]).stdout == "bledissect \(BLEDissectCLI.version)\n")
  }

  @Test func unreadableInputsExit2WithOneLine() {
    let missing = runCLI(["/nonexistent/x.btsnoop"])
    #expect(missing.status == 2)
    #expect(missing.stderr == "bledissect: /nonexistent/x.btsnoop: No such file or directory\n")
    let empty = temporaryFile([])
    #expect(runCLI([empty]).stderr == "bledissect: \(empty): empty file (0 bytes): not a capture\n")
    #expect(runCLI([empty]).status == 2)
    let text = temporaryFile(Array("John Smith,42\n".utf8))
    let notCapture = runCLI([text])
    #expect(notCapture.status == 2)
    #expect(notCapture.stderr == "bledissect: \(text): not a capture file bledissect understands (starts with 4a 6f 68 6e …); it reads btsnoop, PacketLogger, pcap, pcapng, those gzip-compressed, and Android bugreports (.txt with a BTSNOOP_LOG_SUMMARY, .zip)\n")
    #expect(notCapture.stdout.isEmpty)
  }

  @Test func damagedCapturePrintsWhatCameBeforeThenExits1() throws {
    let whole = try Data(contentsOf: URL(fileURLWithPath: capturePath("hr_strap_session.btsnoop")))
    let cut = temporaryFile(Array(whole.dropLast(3)))
    let result = runCLI(["-1", cut])
    #expect(result.status == 1)
    #expect(result.stdout.split(separator: "\n").count == 159)
    #expect(result.stderr.hasPrefix("bledissect: \(cut): damaged capture at frame 160 (byte offset 6073): truncated record: needs 7 bytes of packet data, only 4 remain"))
    #expect(result.stderr.split(separator: "\n").count == 1)
  }

  @Test func headerOnlyCaptureIsClean() {
    let header = temporaryFile(Array("btsnoop".utf8) + [0, 0, 0, 0, 1, 0, 0, 0x03, 0xEA])
    let result = runCLI([header])
    #expect(result.status == 0)
    #expect(result.stdout.isEmpty)
    #expect(result.stderr.isEmpty)
  }

  @Test func infoCountsFrames() {
    let result = runCLI(["info", capturePath("hr_strap_session.pklg")])
    #expect(result.status == 0)
    #expect(result.stdout.contains("format:   packetlogger, big-endian\n"))
    #expect(result.stdout.contains("frames:   160\n"))
  }

  @Test func convertRoundTrips() throws {
    let output = NSTemporaryDirectory() + "bledissect-convert-\(UUID().uuidString).pcap"
    let convert = runCLI(["convert", "--to", "pcap", capturePath("hr_strap_session.btsnoop"), output])
    #expect(convert.status == 0)
    #expect(convert.stderr.isEmpty)
    let original = runCLI(["--json", capturePath("hr_strap_session.btsnoop")]).stdout
    #expect(runCLI(["--json", output]).stdout == original)
  }

  /// The real binary, with its output piped into a reader that stops early (`| head`).
  @Test func closedPipeEndsQuietlyWithStatus0() throws {
    guard let binary = binaryPath() else {
      Issue.record("bledissect binary not found")
      return
    }
    // A large input so the output outlives the reader: the same capture several times over.
    let whole = try Data(contentsOf: URL(fileURLWithPath: capturePath("hr_strap_session.btsnoop")))
    var big = Data(whole)
    for _ in 0..<200 { big.append(whole.dropFirst(16)) }
    let input = temporaryFile(Array(big))
    let result = try runWithOutputClosedEarly(binary, [input], after: 100)
    #expect(result.reason == .exit)
    #expect(result.status == 0)
    #expect(result.stderr.isEmpty)
  }

  @Test func readsStandardInput() throws {
    guard let binary = binaryPath() else {
      Issue.record("bledissect binary not found")
      return
    }
    let (process, input, output) = try launchReadingStandardInput(binary, ["--json", "-"])
    let data = try Data(contentsOf: URL(fileURLWithPath: capturePath("hr_strap_session.pcapng")))
    input.fileHandleForWriting.write(data)
    try input.fileHandleForWriting.close()
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    #expect(process.terminationStatus == 0)
    #expect(text == runCLI(["--json", capturePath("hr_strap_session.btsnoop")]).stdout)
  }

  @Test func jsonKeyCheckerFindsDuplicates() {
    #expect(JSONKeyChecker.check(#"{"a":1,"b":{"c":[1,{"d":"x"}]}}"#) == nil)
    #expect(JSONKeyChecker.check(#"{"a":1,"b":{"c":2,"c":3}}"#) == "duplicate key $.b.c")
    #expect(JSONKeyChecker.check(#"{"a":1,"#) != nil)
  }

  @Test func filtersChooseFramesInBothOutputs() throws {
    let path = capturePath("two_straps.btsnoop")
    let strapA = runCLI(["--json", "--peer", "d0:b1:ed:00:48:52", "--uuid", "2A37", path])
    #expect(strapA.status == 0)
    let lines = strapA.stdout.split(separator: "\n")
    // Strap A: the CCCD write, its response and 21 notifications name the Heart Rate Measurement.
    #expect(lines.filter { $0.contains("\"name\":\"Handle Value Notification\"") }.count == 21)
    #expect(lines.allSatisfy { $0.contains("\"peer\":\"D0:B1:ED:00:48:52\"") })
    #expect(lines.allSatisfy { $0.contains("\"2a37\"") })
    let text = runCLI(["-1", "--conn", "2", "--handle", "0x0010", "--layer", "gatt", path])
    let textLines = text.stdout.split(separator: "\n")
    #expect(textLines.count >= 21)
    #expect(textLines.allSatisfy { $0.contains("conn 2 D0:B1:ED:00:48:53") && $0.contains("0x0010") })
    let hciOnly = runCLI(["-1", "--layer", "att", capturePath("hr_strap_session.btsnoop")])
    #expect(!hciOnly.stdout.contains("Command Complete"))
    #expect(hciOnly.stdout.contains(" ATT   conn 1 D0:B1:ED:00:48:52 Read By Group Type Request"))
  }

  @Test func badFilterValuesAreUsageErrors() {
    for arguments in [["--conn", "x"], ["--peer", "nope"], ["--handle", "0x1ffff"], ["--uuid", "zz"], ["--layer", "phy"]] {
      let result = runCLI(arguments + [capturePath("hr_strap_session.btsnoop")])
      #expect(result.status == 64, "\(arguments)")
      #expect(result.stdout.isEmpty)
    }
  }
}
