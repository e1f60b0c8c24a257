import Foundation
import Testing

import BLERender
@testable import bledissect

/// `bledissect summary`, end to end.
@Suite struct SummaryCLITests {
  @Test func summarizesTheStrapSession() {
    let result = runCLI(["summary", capturePath("hr_strap_session.btsnoop")])
    #expect(result.status == 0)
    #expect(result.stderr.isEmpty)
    let text = result.stdout
    #expect(text.contains("  160 frames over 20.568 s"))
    #expect(text.contains("  1 device, 1 connection, 1 connection attempt (1 connected)"))
    #expect(text.contains("Connection 1  D0:B1:ED:00:48:52 \"bledissect HR\", handle 1, as central\n"))
    #expect(text.contains("  ended       by the local host: Remote User Terminated Connection (0x13)\n"))
    #expect(text.contains("  link        ATT MTU 247\n"))
    #expect(text.contains("  heart rate  72 / 113.0 / 184 bpm (min / mean / max), 21 measurements\n"))
    #expect(text.contains("    RR        37 intervals, mean 459.8 ms, RMSSD 46.0 ms, SDNN 164.3 ms\n"))
    #expect(text.contains("    0.332 s  Heart Rate Measurement  notifications on  accepted\n"))
    #expect(text.contains("  battery     87 % at 0.331 s → 86 % at 16.360 s"))
    // One screen for a typical session.
    #expect(text.split(separator: "\n", omittingEmptySubsequences: false).count < 60)
  }

  @Test func twoStrapsInText() {
    let text = runCLI(["summary", capturePath("two_straps.btsnoop")]).stdout
    #expect(text.contains("  heart rate  60 / 70.0 / 80 bpm (min / mean / max), 21 measurements\n"))
    #expect(text.contains("  heart rate  140 / 150.0 / 160 bpm (min / mean / max), 21 measurements\n"))
    #expect(text.contains("  battery     87 % at"))
    #expect(text.contains("  battery     55 % at"))
  }

  /// Several files: one JSON object per file, per line, in input order; valid, no repeated keys.
  @Test func jsonHasOneObjectPerFileInOrder() throws {
    let names = ["two_straps.btsnoop", "hr_strap_session.btsnoop", "reconnect_cached.btsnoop", "eatt.btsnoop", "hr_strap_session.pcapng", "hr_strap_session.pklg"]
    let result = runCLI(["summary", "--json"] + names.map(capturePath))
    #expect(result.status == 0)
    let lines = result.stdout.split(separator: "\n")
    #expect(lines.count == names.count)
    var objects: [[String: Any]] = []
    for line in lines {
      #expect(JSONKeyChecker.check(line) == nil)
      objects.append(try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]))
    }
    #expect(objects.map { $0["file"] as? String } == names.map(capturePath))
    for object in objects {
      for key in ["v", "kind", "file", "format", "frames", "start_ts", "duration_s", "devices", "attempts", "connections", "att_latency"] {
        #expect(object[key] != nil, "missing \(key)")
      }
    }
    let strap = try #require((objects[1]["connections"] as? [[String: Any]])?.first)
    #expect(strap["mtu"] as? Int == 247)
    #expect(strap["disconnected_by"] as? String == "local_host")
    #expect(strap["disconnect_reason_name"] as? String == "Remote User Terminated Connection")
    #expect((strap["parameters"] as? [String: Any])?["interval_ms"] as? Double == 15)
    #expect((strap["updates"] as? [Any])?.count == 2)
    let hr = try #require(strap["heart_rate"] as? [String: Any])
    #expect(hr["bpm_min"] as? Double == 72 && hr["bpm_max"] as? Double == 184 && hr["rr_count"] as? Int == 37)
    #expect(hr["measurements"] as? Int == 21 && hr["contact_loss_count"] as? Int == 4 && hr["dropout_count"] as? Int == 0)
    let subscriptions = try #require(strap["subscriptions"] as? [[String: Any]])
    #expect(subscriptions.map { $0["outcome"] as? String } == ["accepted", "accepted"])
    #expect(subscriptions.map { $0["characteristic"] as? String } == ["2a37", "2a19"])
    // The same session in three containers: the same summary but for the file and format.
    func stripped(_ object: [String: Any]) -> NSDictionary {
      var copy = object
      copy["file"] = nil
      copy["format"] = nil
      return copy as NSDictionary
    }
    #expect(stripped(objects[1]) == stripped(objects[4]))
    #expect(stripped(objects[1]) == stripped(objects[5]))
    let straps = try #require(objects[0]["connections"] as? [[String: Any]])
    #expect(straps.map { ($0["battery"] as? [String: Any]).flatMap { ($0["first"] as? [String: Any])?["percent"] as? Int } } == [87, 55])
  }

  /// A truncated capture: the summary of what was read, then the damage, status 1.
  @Test func damagedCaptureIsSummarizedUpToTheDamage() throws {
    let whole = try Data(contentsOf: URL(fileURLWithPath: capturePath("hr_strap_session.btsnoop")))
    let cut = temporaryFile(Array(whole.dropLast(3)))
    defer { try? FileManager.default.removeItem(atPath: cut) }
    let result = runCLI(["summary", cut])
    #expect(result.status == 1)
    #expect(result.stdout.contains("  159 frames over"))
    #expect(result.stdout.contains("  damaged: read up to the damage: damaged capture at frame 160"))
    #expect(result.stdout.contains("  heart rate  72 / 113.0 / 184 bpm"))
    #expect(result.stderr.hasPrefix("bledissect: \(cut): damaged capture at frame 160 (byte offset 6073)"))
    let json = runCLI(["summary", "--json", cut])
    #expect(json.status == 1)
    #expect(JSONKeyChecker.check(json.stdout.dropLast()) == nil)
    #expect(json.stdout.contains("\"damaged\":{\"message\":\"damaged capture at frame 160"))
  }

  /// Unreadable files get their line on stderr; the others are still summarized; the status
  /// is the worst.
  @Test func unreadableAndEmptyFiles() {
    let empty = temporaryFile([])
    let header = temporaryFile(Array("btsnoop".utf8) + [0, 0, 0, 0, 1, 0, 0, 0x03, 0xEA])
    defer {
      try? FileManager.default.removeItem(atPath: empty)
      try? FileManager.default.removeItem(atPath: header)
    }
    let result = runCLI(["summary", empty, header, "/nonexistent/capture.btsnoop", capturePath("eatt.btsnoop")])
    #expect(result.status == 2)
    #expect(result.stderr.split(separator: "\n").count == 2)
    #expect(result.stdout.contains("\(header): btsnoop, datalink 1002 (H4)\n  0 frames\n  0 devices, 0 connections\n"))
    #expect(result.stdout.contains("eatt.btsnoop: btsnoop"))
    let headerOnly = runCLI(["summary", "--json", header])
    #expect(headerOnly.status == 0)
    #expect(headerOnly.stdout.contains("\"frames\":0,\"duration_s\":0.000000,\"devices\":[]"))
  }

  @Test func usageErrors() {
    #expect(runCLI(["summary"]).status == 64)
    #expect(runCLI(["summary", "-j", "0", capturePath("eatt.btsnoop")]).status == 64)
    #expect(runCLI(["summary", "--jobs=two", capturePath("eatt.btsnoop")]).stderr.contains("--jobs needs a number of files to read at once"))
    #expect(runCLI(["summary", "-j2", capturePath("eatt.btsnoop")]).status == 0)
  }

  /// The built binary, as a user runs it: several files, text.
  @Test func theBinarySummarizesSeveralFiles() throws {
    let binary = try #require(binaryPath(), "bledissect binary not found")
    let (status, data) = try runProgram(binary, ["summary", capturePath("hr_strap_session.btsnoop"), capturePath("two_straps.btsnoop")])
    #expect(status == 0)
    let text = String(decoding: data, as: UTF8.self)
    #expect(text == runCLI(["summary", capturePath("hr_strap_session.btsnoop"), capturePath("two_straps.btsnoop")]).stdout)
    #expect(text.components(separatedBy: "btsnoop, datalink 1002 (H4)\n").count == 3)
  }

  /// `summarize` works alone, as a batch runner's worker calls it: on one thread, into
  /// buffers of its own.
  @Test func summarizeOneFileReturnsBytesAndStatus() {
    func summarize(_ path: String) -> (output: [UInt8], errors: [UInt8], status: Int32) {
      let context = CLIContext(stdout: OutputBuffer(fd: nil), stderr: OutputBuffer(fd: nil), environment: [:], stdoutIsTerminal: false)
      let output = JobOutput(direct: OutputBuffer(fd: nil), threading: .one)
      let status = SummaryCommand.summarize(Argument(path), settings: SummaryCommand.Settings(), output: output, context)
      return (output.buffer.bytes, context.stderr.bytes, status)
    }
    let result = summarize(capturePath("two_straps.btsnoop"))
    #expect(result.status == 0 && result.errors.isEmpty)
    #expect(String(decoding: result.output, as: UTF8.self) == runCLI(["summary", capturePath("two_straps.btsnoop")]).stdout)
    let missing = summarize("/nonexistent")
    #expect(missing.status == 2 && missing.output.isEmpty && !missing.errors.isEmpty)
  }

  /// Every capture of ../shared/corpus (when present): a summary of valid JSON, no trap.
  @Test(.enabled(if: corpusRoot != nil, "../shared/corpus is absent"))
  func corpusCapturesSummarize() throws {
    let corpusRoot = try #require(corpusRoot)
    let files = FileManager.default.enumerator(atPath: corpusRoot.path)?.compactMap { $0 as? String }.filter { !$0.hasSuffix(".md") }.sorted() ?? []
    for file in files {
      let path = corpusRoot.appendingPathComponent(file).path
      var isDirectory: ObjCBool = false
      guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
      let result = runCLI(["summary", "--json", path])
      #expect([0, 1, 2].contains(result.status), "\(file)")
      if result.status != 2 {
        #expect(JSONKeyChecker.check(result.stdout.dropLast()) == nil, "\(file)")
        #expect(runCLI(["summary", path]).status == result.status, "\(file)")
      }
    }
  }
}

@Suite struct SummaryBatchTests {
  /// Several files summarized at once give the same bytes, in the same order, as one at a time.
  @Test func parallelSummariesKeepTheirOrder() {
    let files = ["two_straps.btsnoop", "hr_strap_session.btsnoop", "reconnect_cached.btsnoop", "eatt.btsnoop"].map(capturePath)
    for format in [[], ["--json"]] {
      let serial = runCLI(["summary", "-j", "1"] + format + files)
      let parallel = runCLI(["summary", "-j", "3"] + format + files)
      #expect(serial.status == 0 && parallel.status == 0)
      #expect(parallel.stdout == serial.stdout)
      let order = files.compactMap { file in serial.stdout.range(of: file)?.lowerBound }
      #expect(order.count == files.count && order == order.sorted())
    }
  }

  /// The ATT latency table gives only the figures a sample carries: the median from 3 values,
  /// p95 from 20 ("-" in text, no key in JSON); and no figure lies outside min and max.
  @Test func latencyFiguresAreThoseTheSampleCarries() throws {
    let strap = runCLI(["summary", "--no-cache", capturePath("hr_strap_session.btsnoop")]).stdout
    #expect(strap.contains("\nATT latency (ms)              count    min  median  p95    max  errors\n"))
    #expect(strap.contains("\n  Read By Type Request           10  0.205   0.227    -  0.275\n"))
    #expect(strap.contains("\n  Write Request                   3  0.186   0.203    -  0.261\n"))
    #expect(strap.contains("\n  Read By Group Type Request      2  0.237       -    -  0.416\n"))
    #expect(strap.contains("\n  Exchange MTU Request            1  0.292       -    -  0.292\n"))
    let huami = runCLI(["summary", "--no-cache", capturePath("huami.btsnoop")]).stdout
    #expect(huami.contains("\n  Read By Type Request           20  0.325   0.350  0.426  4.639\n"))
    let json = try #require(
      try JSONSerialization.jsonObject(with: Data(runCLI(["summary", "--json", "--no-cache", capturePath("hr_strap_session.btsnoop")]).stdout.utf8))
        as? [String: Any])
    let rows = try #require(json["att_latency"] as? [[String: Any]])
    #expect(rows.count == 6)
    for row in rows {
      let count = try #require(row["count"] as? Int)
      #expect((row["median_ms"] != nil) == (count >= 3), "\(row)")
      #expect((row["p95_ms"] != nil) == (count >= 20), "\(row)")
      #expect(row["min_ms"] != nil && row["max_ms"] != nil)
    }
    // Every capture: min ≤ median ≤ p95 ≤ max, as printed and in JSON.
    let captures = try FileManager.default.contentsOfDirectory(atPath: capturePath("")).filter { $0.hasSuffix(".btsnoop") || $0.hasSuffix(".pcap") }
    #expect(captures.count > 20)
    for name in captures {
      let text = runCLI(["summary", "--no-cache", capturePath(name)]).stdout
      var inTable = false
      for line in text.split(separator: "\n") {
        if line.hasPrefix("ATT latency (ms)") { inTable = true; continue }
        guard inTable, line.hasPrefix("  ") else { inTable = false; continue }
        // The name's words, then count, min, median, p95, max (and errors).
        let words = line.split(separator: " ")
        guard let countIndex = words.firstIndex(where: { Int($0) != nil }), words.count >= countIndex + 5 else { continue }
        let figures = words[(countIndex + 1)...(countIndex + 4)].compactMap { Double($0) }
        #expect(figures == figures.sorted(), "\(name): \(line)")
      }
      let summary = try #require(try JSONSerialization.jsonObject(with: Data(runCLI(["summary", "--json", "--no-cache", capturePath(name)]).stdout.utf8)) as? [String: Any])
      for row in summary["att_latency"] as? [[String: Any]] ?? [] {
        let figures = ["min_ms", "median_ms", "p95_ms", "max_ms"].compactMap { row[$0] as? Double }
        #expect(figures == figures.sorted(), "\(name): \(row)")
      }
    }
  }
}
