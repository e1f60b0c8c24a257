import Foundation
import Testing

/// The library example (Examples/HeartRateList), built with the tests and run as a user would.
@Suite struct ExampleTests {
  /// The built example, next to the test bundle (as `binaryPath()` finds `bledissect`).
  static let example: String? = {
    var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    for _ in 0..<4 {
      let candidate = directory.appendingPathComponent("HeartRateList")
      if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate.path }
      directory = directory.deletingLastPathComponent()
    }
    return nil
  }()

  static func runExample(_ path: String) throws -> CLIResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: try #require(example, "HeartRateList is built with the tests"))
    process.arguments = [path]
    let (output, errors) = (Pipe(), Pipe())
    process.standardOutput = output
    process.standardError = errors
    try process.run()
    let stdout = output.fileHandleForReading.readDataToEndOfFile()
    let stderr = errors.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return CLIResult(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self), stderr: String(decoding: stderr, as: UTF8.self))
  }

  /// The example's lines as (time, device, bpm, RR ms), and `hr --csv`'s rows the same way (its
  /// RR intervals exact, rounded here to 0.1 ms as the example shows them).
  typealias Row = (time: String, device: String, bpm: String, rr: [Double])

  static func exampleRows(_ text: String) -> [Row] {
    text.split(separator: "\n").map { line in
      let halves = line.components(separatedBy: "  RR ")
      let words = halves[0].split(separator: " ").map(String.init)
      let rr = halves.count > 1 ? halves[1].dropLast(3).split(separator: " ").compactMap { Double($0) } : []
      return (words[0], words[1], words[2], rr)
    }
  }

  static func hrRows(_ csv: String) -> [Row] {
    csv.split(separator: "\n").dropFirst().map { line in
      let columns = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
      let rr = columns[6].split(separator: " ").compactMap { Double($0) }.map { ($0 * 10).rounded() / 10 }
      return (columns[1], columns[2], columns[3], rr)
    }
  }

  @Test func listsTheValuesTheHRCommandLists() throws {
    let path = capturePath("hr_strap_session.btsnoop")
    let result = try Self.runExample(path)
    #expect(result.status == 0)
    #expect(result.stderr.isEmpty)
    let lines = result.stdout.split(separator: "\n")
    // The 21 notifications of captures/README.md, every flag combination among them.
    #expect(lines.count == 21)
    #expect(lines.first == "  0.332579  D0:B1:ED:00:48:52   72 bpm")
    #expect(lines.contains("  4.339118  D0:B1:ED:00:48:52   78 bpm  RR 771.5 766.6 ms"))
    #expect(lines.last == " 20.366862  D0:B1:ED:00:48:52   95 bpm  RR 631.8 634.8 ms")
    let hr = runCLI(["hr", "--csv", path])
    #expect(hr.status == 0)
    let (got, expected) = (Self.exampleRows(result.stdout), Self.hrRows(hr.stdout))
    #expect(got.count == expected.count)
    for (row, want) in zip(got, expected) {
      #expect(row.time == want.time && row.device == want.device && row.bpm == want.bpm && row.rr == want.rr, "\(row) vs \(want)")
    }
  }

  /// A capture cut off mid-record: the values before the cut, then the message and exit status
  /// the command line gives (the stream's failure, read through the public API).
  @Test func endsAtDamageAsTheCommandLineDoes() throws {
    let whole = try Data(contentsOf: URL(fileURLWithPath: capturePath("hr_strap_session.btsnoop")))
    let path = temporaryFile([UInt8](whole.prefix(5500)))
    defer { try? FileManager.default.removeItem(atPath: path) }
    let result = try Self.runExample(path)
    let hr = runCLI(["hr", "--stop-at-damage", path])
    #expect(result.status == 1 && hr.status == 1)
    #expect("bledissect: " + result.stderr == hr.stderr)
    #expect(result.stdout.split(separator: "\n").count == 13)
  }

  @Test func refusesWhatIsNotACapture() throws {
    let path = temporaryFile(Array("not a capture\n".utf8))
    defer { try? FileManager.default.removeItem(atPath: path) }
    let result = try Self.runExample(path)
    let hr = runCLI(["hr", path])
    #expect(result.status == 2 && hr.status == 2)
    #expect("bledissect: " + result.stderr == hr.stderr)
    #expect(result.stdout.isEmpty)
  }
}
