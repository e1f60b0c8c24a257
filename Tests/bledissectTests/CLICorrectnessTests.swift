#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Testing
@testable import bledissect

/// What a new user found wrong with the command line (issue 7), each shown fixed.
@Suite struct CLICorrectnessTests {
  let session = capturePath("hr_strap_session.btsnoop")
  let straps = capturePath("two_straps.btsnoop")

  /// The frame numbers of `-1` output.
  func frameNumbers(_ text: String) -> Set<Int> {
    Set(text.split(separator: "\n").compactMap { line in Int(line.dropFirst().prefix { $0.isNumber }) })
  }

  // MARK: Times under filters

  /// A filtered line is the very line the unfiltered output has for that frame: relative
  /// times count from the capture's first frame, deltas from the previous frame captured.
  @Test(arguments: [
    ["--uuid", "2a37"], ["--conn", "2"], ["--peer", "D0:B1:ED:00:48:53"], ["--handle", "0x0010"], ["--layer", "att"],
  ])
  func filtersDoNotRestartTheClock(filter: [String]) {
    for time in ["rel", "delta"] {
      let all = Set(runCLI(["-1", "--time", time, straps]).stdout.split(separator: "\n"))
      let shown = runCLI(["-1", "--time", time] + filter + [straps])
      #expect(shown.status == 0)
      let lines = shown.stdout.split(separator: "\n")
      #expect(lines.count >= 10)
      #expect(!lines[0].hasPrefix("#1 "))
      for line in lines { #expect(all.contains(line), "\(filter) \(time): \(line)") }
    }
    // The first frame shown is not at time 0 (it is not the capture's first).
    let first = runCLI(["-1"] + filter + [straps]).stdout.split(separator: "\n")[0]
    #expect(!first.contains(" 0.000000 "), "\(first)")
  }

  // MARK: convert

  func makeDirectory() -> String {
    let directory = NSTemporaryDirectory() + "bledissect-convert-\(UUID().uuidString)"
    try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    return directory
  }

  func inode(_ path: String) -> UInt64? {
    var info = stat()
    return stat(path, &info) == 0 ? UInt64(info.st_ino) : nil
  }

  @Test func convertRefusesToWriteOverItsInput() throws {
    let directory = makeDirectory()
    let input = directory + "/in.btsnoop"
    try FileManager.default.copyItem(atPath: session, toPath: input)
    let original = try Data(contentsOf: URL(fileURLWithPath: input))
    try FileManager.default.createDirectory(atPath: directory + "/sub", withIntermediateDirectories: true)
    #expect(link(input, directory + "/hard.btsnoop") == 0)
    #expect(symlink("in.btsnoop", directory + "/soft.btsnoop") == 0)
    for output in [input, directory + "/./in.btsnoop", directory + "/sub/../in.btsnoop", directory + "/hard.btsnoop", directory + "/soft.btsnoop"] {
      let result = runCLI(["convert", "--to", "pcap", input, output])
      #expect(result.status == 64, "\(output)")
      #expect(result.stderr == "bledissect: \(output) is the same file as the input \(input): convert cannot write over its input\n")
      #expect(try Data(contentsOf: URL(fileURLWithPath: input)) == original)
    }
    // Also when the input is named through the link.
    #expect(runCLI(["convert", "--to", "pcap", directory + "/hard.btsnoop", input]).status == 64)
    #expect(try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == ["hard.btsnoop", "in.btsnoop", "soft.btsnoop", "sub"])
  }

  /// A new file replaces the old one whole (a new inode renamed into place), keeps its mode,
  /// and no temporary file is left beside it.
  @Test func convertReplacesTheOutputByRenaming() throws {
    let directory = makeDirectory()
    let output = directory + "/out.pcap"
    _ = FileManager.default.createFile(atPath: output, contents: Data("old".utf8))
    #expect(chmod(output, 0o600) == 0)
    let before = inode(output)
    let result = runCLI(["convert", "--to", "pcap", session, output])
    #expect(result.status == 0)
    #expect(result.stderr.isEmpty)
    #expect(inode(output) != before)
    #expect(try FileManager.default.attributesOfItem(atPath: output)[.posixPermissions] as? Int == 0o600)
    #expect(runCLI(["--json", output]).stdout == runCLI(["--json", session]).stdout)
    #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["out.pcap"])
    // Through a symbolic link: the file it names is replaced, the link stays a link.
    #expect(symlink("out.pcap", directory + "/link.pcap") == 0)
    #expect(runCLI(["convert", "--to", "pcapng", session, directory + "/link.pcap"]).status == 0)
    #expect(try FileManager.default.destinationOfSymbolicLink(atPath: directory + "/link.pcap") == "out.pcap")
    #expect(runCLI(["info", output]).stdout.contains("format:   pcapng"))
    #expect(try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == ["link.pcap", "out.pcap"])
  }

  /// The real binary, its file size limited so a write fails half-way (EFBIG): the old output
  /// is untouched and the temporary file is removed.
  @Test func failedConvertLeavesNoHalfFile() throws {
    guard let binary = binaryPath() else {
      Issue.record("bledissect binary not found")
      return
    }
    let directory = makeDirectory()
    let input = directory + "/big.btsnoop"
    _ = FileManager.default.createFile(atPath: input, contents: try repeatedSession(times: 400))
    let output = directory + "/out.pcap"
    _ = FileManager.default.createFile(atPath: output, contents: Data("previous".utf8))
    // 64 blocks of at least 512 bytes: far less than the 2 MB the conversion writes.
    let (status, stderrText) = try runShell("trap '' XFSZ; ulimit -f 64; exec \"$0\" convert --to pcap \"$1\" \"$2\"", binary, input, output)
    #expect(status == 2)
    #expect(stderrText.hasPrefix("bledissect: \(output): File too large"), "\(stderrText)")
    #expect(try String(contentsOfFile: output, encoding: .utf8) == "previous")
    #expect(try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == ["big.btsnoop", "out.pcap"])
  }

  @Test func convertToAClosedPipeEndsQuietlyWithStatus0() throws {
    guard let binary = binaryPath() else {
      Issue.record("bledissect binary not found")
      return
    }
    let input = temporaryFile(Array(try repeatedSession(times: 400)))
    let result = try runWithOutputClosedEarly(binary, ["convert", "--to", "pcap", input, "-"], after: 100)
    #expect(result.bytesRead == 100)
    #expect(result.reason == .exit)
    #expect(result.status == 0)
    #expect(result.stderr.isEmpty)
  }

  /// The strap session's records `times` times over, as one btsnoop file.
  func repeatedSession(times: Int) throws -> Data {
    let whole = try Data(contentsOf: URL(fileURLWithPath: session))
    var big = Data(whole)
    for _ in 1..<times { big.append(whole.dropFirst(16)) }
    return big
  }

  /// Runs `sh -c script binary arguments...`; returns the status and standard error.
  func runShell(_ script: String, _ arguments: String...) throws -> (Int32, String) {
    let process = Process()
    process.environment = hermeticEnvironment
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", script] + arguments
    let errors = Pipe()
    process.standardOutput = FileHandle.nullDevice
    process.standardError = errors
    try process.run()
    let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return (process.terminationStatus, text)
  }

  // MARK: File names that are not UTF-8

  @Test func fileNamesAreBytes() throws {
    let directory = makeDirectory()
    // "caf", a lone 0xFF (never UTF-8), ".btsnoop".
    let name = Array((directory + "/caf").utf8) + [0xFF] + Array(".btsnoop".utf8)
    let bytes = try Data(contentsOf: URL(fileURLWithPath: session))
    let fd = (name + [0]).withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_WRONLY | O_CREAT, 0o644) } }
    #expect(fd >= 0)
    _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress!, $0.count) }
    close(fd)
    let opened = runCLI(words: [Argument("-1"), Argument(bytes: name)])
    #expect(opened.status == 0)
    #expect(opened.stdout == runCLI(["-1", session]).stdout)
    #expect(runCLI(words: ["info", Argument(bytes: name)]).stdout.hasPrefix("file:     \(directory)/caf\\xFF.btsnoop\n"))
    // Messages escape the bytes that are not UTF-8 (and control characters), keep the rest.
    let missing = runCLI(words: [Argument(bytes: Array((directory + "/né").utf8) + [0xC3, 0x28, 0x0A])])
    #expect(missing.status == 2)
    #expect(missing.stderr == "bledissect: \(directory)/né\\xC3(\\x0A: No such file or directory\n")
  }

  /// The binary reads its words as bytes: a shell passes the name with 0xFF untouched.
  @Test func theBinaryOpensANameThatIsNotUTF8() throws {
    guard let binary = binaryPath() else {
      Issue.record("bledissect binary not found")
      return
    }
    let directory = makeDirectory()
    let (made, _) = try runShell("cp \"$1\" \"$2/$(printf 'x\\377')\"", "sh", session, directory)
    #expect(made == 0)
    let (status, stderrText) = try runShell("exec \"$0\" info \"$1/$(printf 'x\\377')\"", binary, directory)
    #expect(status == 0, "\(stderrText)")
    let (missing, message) = try runShell("exec \"$0\" \"$1/$(printf 'y\\377')\"", binary, directory)
    #expect(missing == 2)
    #expect(message == "bledissect: \(directory)/y\\xFF: No such file or directory\n")
  }

  // MARK: Argument parsing

  @Test func shortOptionsBundleAndTakeAttachedValues() {
    let separate = runCLI(["-1", "-v", "-c", "5", "-t", "abs", session])
    #expect(separate.status == 0)
    #expect(separate.stdout.split(separator: "\n").count == 5)
    for bundled in [["-1v", "-c5", "-tabs"], ["-1vc5", "-tabs"], ["-v1", "-c", "5", "--time=abs"], ["-1vc", "5", "-t", "ABS"]] {
      let result = runCLI(bundled + [session])
      #expect(result.status == 0, "\(bundled): \(result.stderr)")
      #expect(result.stdout == separate.stdout, "\(bundled)")
    }
    let unknown = runCLI(["-1xv", session])
    #expect(unknown.status == 64)
    #expect(unknown.stderr == "bledissect: unknown option '-x' in '-1xv'\nsee 'bledissect help annotate'\n")
  }

  /// One filter given twice shows frames about either value; different filters still all apply.
  @Test(arguments: [
    ("--uuid", "2a37", "2a19"), ("--conn", "1", "2"), ("--peer", "D0:B1:ED:00:48:52", "d0:b1:ed:00:48:53"),
    ("--handle", "0x0010", "0x0018"), ("--layer", "l2cap", "gatt"),
  ])
  func repeatedFiltersAreAlternatives(option: String, first: String, second: String) {
    let a = frameNumbers(runCLI(["-1", option, first, straps]).stdout)
    let b = frameNumbers(runCLI(["-1", option, second, straps]).stdout)
    let either = runCLI(["-1", option, first, option, second, straps])
    #expect(either.status == 0)
    #expect(!a.isEmpty && !b.isEmpty)
    #expect(frameNumbers(either.stdout) == a.union(b))
    #expect(frameNumbers(either.stdout).count > max(a.count, b.count) || option == "--layer")
  }

  @Test func differentFiltersCombine() {
    let uuids = frameNumbers(runCLI(["-1", "--uuid", "2a37", "--uuid", "2a19", straps]).stdout)
    let second = frameNumbers(runCLI(["-1", "--conn", "2", straps]).stdout)
    let both = frameNumbers(runCLI(["-1", "--uuid", "2a37", "--uuid", "2a19", "--conn", "2", straps]).stdout)
    #expect(!both.isEmpty)
    #expect(both == uuids.intersection(second))
  }

  @Test func layerNamesIgnoreCase() {
    let lower = runCLI(["-1", "--layer", "att", session])
    #expect(lower.status == 0)
    #expect(runCLI(["-1", "--layer", "ATT", session]).stdout == lower.stdout)
    #expect(runCLI(["-1", "--layer=Att", session]).stdout == lower.stdout)
  }

  @Test func aWordThatIsNoFileNorCommandIsAnUnknownCommand() {
    let typo = runCLI(["anotate", session])
    #expect(typo.status == 64)
    #expect(typo.stderr == "bledissect: unknown command 'anotate' (did you mean 'annotate'?)\nsee 'bledissect --help'\n")
    #expect(runCLI(["conver", "--to", "pcap", "a", "b"]).stderr.hasPrefix("bledissect: unknown command 'conver' (did you mean 'convert'?)\n"))
    #expect(runCLI(["xyz"]).stderr == "bledissect: unknown command 'xyz'\nsee 'bledissect --help'\n")
    // A path (a separator or a dot) is a file, missing or not.
    #expect(runCLI(["xyz.btsnoop"]).stderr == "bledissect: xyz.btsnoop: No such file or directory\n")
    #expect(runCLI(["/nonexistent/xyz"]).status == 2)
    #expect(runCLI(["help", "inf"]).stderr == "bledissect: unknown command 'inf' (did you mean 'info'?)\nsee 'bledissect --help'\n")
  }

  @Test func usageErrorsAreTwoLines() {
    for arguments in [["--frobnicate", session], ["--time", "sideways", session], ["-c"], ["a.btsnoop", "b.btsnoop"], ["--conn", "x", session], ["convert", "a", "b"], ["info"], ["convert", "--to", "pcapp", "a", "b"]] {
      let result = runCLI(arguments)
      #expect(result.status == 64, "\(arguments)")
      let lines = result.stderr.split(separator: "\n")
      #expect(lines.count == 2, "\(arguments): \(result.stderr)")
      #expect(lines.first?.hasPrefix("bledissect: ") == true)
      #expect(lines.last?.hasPrefix("see 'bledissect help ") == true, "\(arguments)")
      #expect(result.stdout.isEmpty)
    }
  }

  @Test func everyWayOfAskingForHelpWorks() {
    let overview = runCLI(["--help"])
    #expect(overview.status == 0)
    #expect(runCLI(["-h"]).stdout == overview.stdout)
    #expect(runCLI(["help"]).stdout == overview.stdout)
    #expect(runCLI(["help", "help"]).stdout == overview.stdout)
    for command in ["annotate", "info", "convert"] {
      let help = runCLI(["help", command])
      #expect(help.status == 0)
      #expect(help.stdout.hasPrefix("OVERVIEW: "))
      #expect(help.stdout.contains("USAGE: bledissect \(command)"))
      #expect(help.stdout != overview.stdout)
      #expect(runCLI([command, "--help"]).stdout == help.stdout)
      #expect(runCLI([command, "-h"]).stdout == help.stdout)
    }
    // Help wins over what else is wrong on the line.
    #expect(runCLI(["convert", "-h", "--to", "nope"]).status == 0)
  }

  // MARK: Columns

  /// On a 100-column terminal every `-1` line fits; the ATT notification lines whose full text
  /// is longer are cut with "…", the others are whole. Piped output is never cut.
  @Test func oneLineOutputFitsA100ColumnTerminal() {
    let piped = runCLI(["-1", session]).stdout.split(separator: "\n")
    let terminal = runCLI(["-1", "--color", "never", session], terminal: true, columns: 100).stdout.split(separator: "\n")
    #expect(terminal.count == 160)
    let notifications = terminal.filter { $0.contains(" Notify 0x") }
    #expect(notifications.count == piped.filter { $0.contains(" Notify 0x") }.count)
    #expect(notifications.count == 22)
    // A short notification line fits 100 columns uncut: "Notify" names the PDU in -1 lines.
    // (Every heart-rate line of this session says the contact, so none is that short.)
    #expect(piped.contains { $0.hasSuffix("Notify 0x0018: 86 % — Battery Level") && $0.count <= 100 })
    for line in terminal { #expect(line.count <= 100, "\(line)") }
    for (whole, shown) in zip(piped, terminal) where whole.count <= 100 { #expect(whole == shown) }
    // A long RR list is its first interval and a count: nine intervals.
    #expect(piped.contains { $0.hasSuffix("RR 327.1 ms +8 — Heart Rate Measurement") })
    // Every heart-rate value fits 100 columns whole (the name may be cut), the address left out.
    for line in notifications where line.contains("Heart") { #expect(line.contains(" — H"), "\(line)") }
    // On 80 columns the common notification (bpm, contact, one RR interval) keeps its value.
    let narrow = runCLI(["-1", "--color", "never", session], terminal: true, columns: 80).stdout.split(separator: "\n")
    #expect(narrow.contains("#132       2.335818 rx ATT   conn 1 Notify 0x0010: 74 bpm, contact, RR 810.5 ms…"))
    // Without -1 nothing is cut: a header line holds values the details do not repeat.
    #expect(runCLI(["--color", "never", session], terminal: true, columns: 100).stdout == runCLI([session]).stdout)
  }

  /// The header's fixed columns: number, time, direction, protocol, connection.
  @Test func headerColumnsAreCompactAndAligned() {
    let lines = runCLI(["-1", session]).stdout.split(separator: "\n")
    let notification = lines.first { $0.hasPrefix("#130 ") }
    // -1: the value before the characteristic's name, so a narrow terminal keeps the value.
    #expect(notification == "#130       0.332579 rx ATT   conn 1 D0:B1:ED:00:48:52 Notify 0x0010: 72 bpm, no contact — Heart Rate Measurement")
    #expect(notification?.count == 112)
    // The protocol column starts at the same place on every line, before and after 10 s.
    let starts = Set(lines.map { $0.distance(from: $0.startIndex, to: $0.range(of: " rx ")?.lowerBound ?? $0.range(of: " tx ")!.lowerBound) })
    #expect(starts == [19])
  }
}
