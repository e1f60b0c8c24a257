import BLERender
import Foundation
import Testing

@testable import bledissect

/// A copy of a capture cut after `bytes` bytes: its last record is truncated.
func truncatedCapture(_ capture: String, keeping bytes: Int) throws -> String {
  let data = try Data(contentsOf: URL(fileURLWithPath: capturePath(capture)))
  return temporaryFile([UInt8](data.prefix(bytes)))
}

@Suite struct BatchTests {
  static var files: [String] {
    ["two_straps.btsnoop", "hr_strap_session.btsnoop", "eatt.btsnoop", "hr_strap_session.pcapng", "reconnect_cached.btsnoop"].map(capturePath)
  }

  @Test(arguments: [["hr"], ["hr", "--csv"], ["hr", "--json"], ["gatt"], ["gatt", "--json"]])
  func sameBytesWhateverTheJobs(_ command: [String]) {
    let one = runCLI(command + ["-j", "1"] + Self.files)
    let two = runCLI(command + ["-j", "2"] + Self.files)
    let many = runCLI(command + ["-j", "5"] + Self.files)
    #expect(one.status == 0 && two.status == 0)
    #expect(one.stdout == two.stdout && one.stdout == many.stdout)
    #expect(!one.stdout.isEmpty)
    // Each file's output alone, in the order given.
    if command == ["hr"] || command == ["gatt"] {
      let expected = Self.files.enumerated().map { index, file in
        (index > 0 ? "\n" : "") + "==> \(file) <==\n" + runCLI(command + [file]).stdout
      }.joined()
      #expect(one.stdout == expected)
    }
  }

  @Test func csvAndJSONSayTheFile() throws {
    let csv = runCLI(["hr", "--csv", "-j", "2"] + Self.files)
    let lines = csv.stdout.split(separator: "\n")
    #expect(lines.first == "file,frame,time,device,bpm,contact,energy_kj,rr_ms,flags")
    #expect(lines.filter { $0.hasPrefix("file,") }.count == 1)
    #expect(lines.dropFirst().allSatisfy { $0.hasPrefix("\"/") })
    #expect(lines[1].hasPrefix("\"\(Self.files[0])\",155,0.338397,D0:B1:ED:00:48:52,60,"))
    let json = runCLI(["hr", "--json"] + Self.files)
    for line in json.stdout.split(separator: "\n") {
      let object = try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
      #expect(Self.files.contains(object["file"] as? String ?? ""))
    }
    // 42 + 21 + 5 (EATT) + 21 + 10 (reconnect) measurements.
    #expect(json.stdout.split(separator: "\n").count == 99)
  }

  @Test func csvHeaderEvenWhenTheFirstFileIsMissing() {
    let result = runCLI(["hr", "--csv", capturePath("no_such_capture.btsnoop"), capturePath("two_straps.btsnoop")])
    #expect(result.status == 2)
    let lines = result.stdout.split(separator: "\n")
    #expect(lines.first == "file,frame,time,device,bpm,contact,energy_kj,rr_ms,flags" && lines.count == 43)
  }

  @Test func missingAndDamagedFiles() throws {
    let cut = try truncatedCapture("two_straps.btsnoop", keeping: 7000)
    let missing = capturePath("no_such_capture.btsnoop")
    let files = [capturePath("hr_strap_session.btsnoop"), missing, cut, capturePath("eatt.btsnoop")]
    for jobs in ["1", "2"] {
      let result = runCLI(["hr", "-j", jobs] + files)
      #expect(result.status == 2)
      #expect(result.stdout.contains("==> \(missing) <==\n\n==> \(cut) <=="))
      // The damaged file keeps the rows read before the damage, then the next file follows.
      let cutPart = try #require(result.stdout.components(separatedBy: "==> \(cut) <==\n").last?.components(separatedBy: "\n==> ").first)
      #expect(textRows(cutPart).count > 20 && textRows(cutPart).count < 42)
      #expect(result.stdout.hasSuffix(runCLI(["hr", capturePath("eatt.btsnoop")]).stdout))
      #expect(result.stderr.contains("\(missing): No such file or directory"))
      #expect(result.stderr.contains("\(cut): damaged capture at frame"))
      // Errors in file order.
      let missingAt = try #require(result.stderr.range(of: missing)?.lowerBound)
      let cutAt = try #require(result.stderr.range(of: cut)?.lowerBound)
      #expect(missingAt < cutAt)
    }
    let damagedOnly = runCLI(["gatt", "-j", "2", cut, capturePath("eatt.btsnoop")])
    #expect(damagedOnly.status == 1)
    #expect(damagedOnly.stdout.contains("D0:B1:ED:00:45:41"))
    #expect(runCLI(["hr", "-j", "0", cut]).status == 64)
  }

  /// The real binary: same bytes with -j 1 and -j 2, written to a pipe; a large batch output
  /// (beyond the 1 MiB kept in memory) comes out whole and in order.
  @Test func binaryKeepsOrderThroughTemporaryFiles() throws {
    let binary = try #require(binaryPath())
    // Enough files that later ones wait for their turn with more than 1 MiB each.
    let big = (0..<6).map { _ in capturePath("two_straps.btsnoop") }
    let (statusOne, one) = try runProgram(binary, ["hr", "--json", "-j", "1"] + big)
    let (statusTwo, two) = try runProgram(binary, ["hr", "--json", "-j", "2"] + big)
    #expect(statusOne == 0 && statusTwo == 0)
    #expect(one == two)
    #expect(String(decoding: one, as: UTF8.self).split(separator: "\n").count == 42 * 6)
  }

  @Test func batchOutputCopiesLargeOutputsExactly() throws {
    // Straight through the ordered output with a small memory limit is not configurable, so
    // check the size path with many files through the in-process runner instead.
    let files = Array(repeating: capturePath("two_straps.btsnoop"), count: 40)
    let one = runCLI(["hr", "--json", "-j", "1"] + files)
    let four = runCLI(["hr", "--json", "-j", "4"] + files)
    #expect(one.stdout == four.stdout)
    #expect(one.stdout.split(separator: "\n").count == 42 * 40)
  }
}

@Suite struct BatchRunnerTests {
  /// Jobs that write numbered lines in several hand-overs, finishing out of order: the output
  /// comes in file order, through memory and temporary files alike.
  @Test(arguments: [0, 100, 1 << 20])
  func orderKeptThroughMemoryAndTemporaryFiles(memoryLimit: Int) {
    let files = (0..<7).map { Argument("file\($0)") }
    for jobs in [1, 3, 7] {
      let context = CLIContext(stdout: OutputBuffer(fd: nil), stderr: OutputBuffer(fd: nil), environment: [:], stdoutIsTerminal: false)
      let status = BatchRunner.run(files: files, jobs: jobs, header: fileHeader, context, memoryLimit: memoryLimit) { file, output, context in
        let index = Int(file.text.dropFirst(4))!
        // Later files finish first: each waits for the files before it.
        usleep(UInt32((7 - index) * 2000))
        var out = output.buffer
        for line in 0..<(index * 3000) {
          out.append(string: "\(file.text) line \(line)\n")
          output.checkpoint(&out)
        }
        output.buffer = out
        if index == 4 { context.error("\(file.text): something to say") }
        return index == 5 ? 1 : 0
      }
      #expect(status == 1)
      let expected = files.enumerated().map { index, file in
        (index > 0 ? "\n" : "") + "==> \(file.text) <==\n" + (0..<(index * 3000)).map { "\(file.text) line \($0)\n" }.joined()
      }.joined()
      #expect(context.stdout.text == expected, "jobs \(jobs), memory \(memoryLimit)")
      #expect(context.stderr.text == "bledissect: file4: something to say\n")
    }
  }
}
