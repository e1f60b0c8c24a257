import BLEFuzzTargets
import BLETestSupport
import Foundation
import Testing

@testable import bledissect

/// `diff` on the scenario pairs of Scripts/captures/make_diff_scenarios.py (Bumble; what was
/// injected, and the record numbers where it shows, in captures/diff/scenarios.truth.json):
/// each pair gives exactly its injected differences, at the frames the generator recorded.
@Suite struct DiffScenarioTests {
  static func path(_ name: String) -> String { capturePath("diff/" + name) }

  static func pair(_ name: String) throws -> [String: Any] {
    let truth = try #require(
      try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path("scenarios.truth.json")))) as? [String: Any])
    let pairs = try #require(truth["pairs"] as? [[String: Any]])
    return try #require(pairs.first { $0["name"] as? String == name })
  }

  static func differences(_ pair: [String: Any], verbose: Bool = false) throws -> (status: Int32, list: [[String: Any]]) {
    let files = [try #require(pair["a"] as? String), try #require(pair["b"] as? String)].map(path)
    let result = runCLI(["diff", "--json", "--no-cache"] + (verbose ? ["-v"] : []) + files)
    let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result.stderr)")
    return (result.status, try #require(object["differences"] as? [[String: Any]]))
  }

  static func frame(_ difference: [String: Any], _ key: String) -> Int? {
    (difference[key] as? [String: Any])?["frame"] as? Int
  }

  /// "013c" → "01 3C", as the diff writes payloads.
  static func spaced(_ hex: String) -> String {
    stride(from: 0, to: hex.count, by: 2).map { hex.dropFirst($0).prefix(2).uppercased() }.joined(separator: " ")
  }

  /// The strap's Firmware Revision String and Battery Level read back differently: strings as
  /// text, numbers in their words, at the Read Responses.
  @Test func readValues() throws {
    let pair = try Self.pair("value")
    let (status, found) = try Self.differences(pair)
    let injected = try #require(pair["differences"] as? [[String: Any]])
    #expect(status == 1 && found.count == injected.count, "\(found.map { $0["text"] ?? "" })")
    for (difference, truth) in zip(found, injected) {
      #expect(difference["kind"] as? String == "reads")
      let text = try #require(difference["text"] as? String)
      let name = try #require(truth["name"] as? String)
      if let a = truth["a"] as? String, let b = truth["b"] as? String {
        #expect(text == "Read \(name): \"\(a)\" in A, \"\(b)\" in B", "\(text)")
      } else {
        let (a, b) = (try #require(truth["a"] as? Int), try #require(truth["b"] as? Int))
        #expect(text == "Read \(name): \(a) % in A, \(b) % in B", "\(text)")
      }
      #expect(Self.frame(difference, "a_at") == truth["first_frame_a"] as? Int && Self.frame(difference, "b_at") == truth["first_frame_b"] as? Int)
    }
  }

  /// One command's payload differs among five: that payload, named as such, at its Write.
  @Test func writePayload() throws {
    let pair = try Self.pair("write")
    let (status, found) = try Self.differences(pair)
    let truth = try #require((pair["differences"] as? [[String: Any]])?.first)
    #expect(status == 1 && found.count == 1, "\(found.map { $0["text"] ?? "" })")
    let difference = try #require(found.first)
    let (a, b) = (Self.spaced(try #require(truth["a"] as? String)), Self.spaced(try #require(truth["b"] as? String)))
    #expect(difference["kind"] as? String == "writes")
    #expect((difference["text"] as? String)?.hasPrefix("Write \(try #require(truth["characteristic"] as? String)): \(a) in A, \(b) in B (both wrote") == true)
    #expect(Self.frame(difference, "a_at") == truth["first_frame_a"] as? Int && Self.frame(difference, "b_at") == truth["first_frame_b"] as? Int)
  }

  /// The phone's and the strap's capture of one session: equivalent, though one saw the
  /// requests leave and the other arrive, one ended the link and the other was told.
  @Test func bothEndsOfOneSession() throws {
    let pair = try Self.pair("roles")
    #expect(pair["expected"] as? String == "equivalent")
    let (status, found) = try Self.differences(pair)
    #expect(status == 0 && found.isEmpty, "\(found.map { $0["text"] ?? "" })")
    // Either way round.
    let reversed = runCLI(["diff", "--no-cache", Self.path("roles_peripheral.btsnoop"), Self.path("roles_central.btsnoop")])
    #expect(reversed.status == 0 && reversed.stdout.hasSuffix("equivalent\n"))
  }

  /// 117 more Write Commands and 40 more reads in B: one line each with the counts, placed at
  /// A's last and B's first extra exchange; `-v` lists every extra one.
  @Test func repeatedExchangesAreCounted() throws {
    let pair = try Self.pair("repeat")
    let (status, found) = try Self.differences(pair, verbose: true)
    let injected = try #require(pair["differences"] as? [[String: Any]])
    #expect(status == 1 && found.count == 2, "\(found.map { $0["text"] ?? "" })")
    let write = try #require(found.first { $0["kind"] as? String == "writes" })
    let writeTruth = try #require(injected.first { $0["kind"] as? String == "repeated_write" })
    #expect(write["a_count"] as? Int == writeTruth["count_a"] as? Int && write["b_count"] as? Int == writeTruth["count_b"] as? Int)
    #expect(write["text"] as? String == "Write Command \(try #require(writeTruth["characteristic"] as? String)) 01 3× in A, 120× in B")
    #expect(Self.frame(write, "a_at") == writeTruth["last_frame_a"] as? Int && Self.frame(write, "b_at") == writeTruth["first_frame_b"] as? Int)
    // Every extra write in B, as the truth lists B's Write Commands on that handle.
    let truth = try #require(
      try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: Self.path("scenarios.truth.json")))) as? [String: Any])
    let filesB = try #require((truth["files"] as? [String: Any])?["repeat_b.btsnoop"] as? [String: Any])
    let writesB = try #require(filesB["att"] as? [[String: Any]]).filter { $0["opcode"] as? String == "0x52" && $0["handle"] as? Int == writeTruth["handle"] as? Int }
    let every = try #require(write["b_every"] as? [[String: Any]]).compactMap { $0["frame"] as? Int }
    #expect(every == writesB.dropFirst(3).compactMap { $0["frame"] as? Int } && every.count == 117)
    let read = try #require(found.first { $0["kind"] as? String == "reads" })
    let readTruth = try #require(injected.first { $0["kind"] as? String == "repeated_read" })
    #expect(read["text"] as? String == "Read Battery Level 87 % 2× in A, 42× in B")
    // Reads show at their responses.
    #expect(Self.frame(read, "a_at") == readTruth["last_response_frame_a"] as? Int && Self.frame(read, "b_at") == readTruth["first_response_frame_b"] as? Int)
    // The text form: one line each, however many repeats.
    let text = runCLI(["diff", "--no-cache", Self.path("repeat_a.btsnoop"), Self.path("repeat_b.btsnoop")])
    #expect(text.stdout.split(separator: "\n").count == 5)
  }
}

extension DiffScenarioTests {
  /// Every capture the project has (and the corpus, when present) is equivalent to itself, and
  /// against nothing lists only its devices: what the `diff` fuzz target checks on any bytes.
  @Test func everyCaptureEqualsItself() throws {
    var paths = try FileManager.default.contentsOfDirectory(atPath: capturePath("")).filter { $0.contains(".") && !$0.hasSuffix(".md") && !$0.hasSuffix(".json") }
      .map { capturePath($0) }
    paths += try FileManager.default.contentsOfDirectory(atPath: capturePath("diff")).filter { $0.hasSuffix(".btsnoop") }.map { capturePath("diff/" + $0) }
    if let corpus = corpusRoot {
      let walker = FileManager.default.enumerator(atPath: corpus.path)
      while let name = walker?.nextObject() as? String {
        let path = corpus.appendingPathComponent(name).path
        var folder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &folder), !folder.boolValue, !name.hasSuffix(".md") else { continue }
        paths.append(path)
      }
    }
    var compared = 0
    for path in paths {
      let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
      let outcome = FuzzTarget.diff.run(bytes)
      if outcome.records > 0 { compared += 1 }
    }
    #expect(compared >= 20, "\(compared) of \(paths.count)")
  }
}

extension DiffScenarioTests {
  /// A session with discovery against one that joined late (no discovery: tables inferred,
  /// a CCCD written by handle): the same read and subscription compare by what they are, and
  /// what truly differs is said once. Values from captures/late_reconnect.truth.json.
  @Test func aLateCaptureAgainstAFullOne() throws {
    let truth = try #require(
      try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: capturePath("late_reconnect.truth.json")))) as? [String: Any])
    let values = try #require(truth["values"] as? [[String: Any]])
    let battery = try #require(values.first { $0["handle"] as? Int == 24 && $0["opcode"] as? String == "read_response" }?["decoded"] as? [String: Any])
    let noContact = values.filter { ($0["decoded"] as? [String: Any])?["contact"] as? String == "not_detected" }.count
    let result = runCLI(["diff", "--no-cache", capturePath("hr_strap_session.btsnoop"), capturePath("late_reconnect.btsnoop")])
    let lines = result.stdout.split(separator: "\n").filter { $0.hasPrefix("  ") }
    #expect(result.status == 1)
    // hr_strap_session reads 87 % (captures/README.md).
    let percent = try #require(battery["battery_percent"] as? Int)
    #expect(lines.contains { $0.contains("Read Battery Level: 87 % in A, \(percent) % in B") })
    #expect(!lines.contains { $0.contains("unnamed attribute") || $0.contains("Battery Level 1× only") }, "\(lines)")
    #expect(lines.contains { $0.contains("flagged heart-rate values: 8 no_contact in A, \(noContact) no_contact in B") }, "\(lines)")
    // One battery notification in A: no rhythm to call B's 30 s between them a silence.
    #expect(!lines.contains { $0.contains("Battery Level: values stopped") })
  }
}
