import BLEAnalysis
import BLETestSupport
import Foundation
import Testing

@testable import bledissect

/// `bledissect diff` on the pairs of Scripts/captures/make_diff_pairs.py (captures/diff, with
/// what was injected recorded in pairs.truth.json): the same session twice is equivalent, and
/// each injected difference is reported exactly once, with nothing else.
@Suite struct DiffTests {
  static func path(_ name: String) -> String { capturePath("diff/" + name) }

  static func truth() throws -> [[String: Any]] {
    let object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path("pairs.truth.json")))) as? [String: Any])
    let pairs = try #require(object["pairs"] as? [[String: Any]])
    return try #require(pairs.first { ($0["b"] as? String)?.contains("broken_b") == true }?["differences"] as? [[String: Any]])
  }

  static func differences(_ arguments: [String]) throws -> (status: Int32, list: [[String: Any]]) {
    let result = runCLI(["diff", "--json", "--no-cache"] + arguments)
    let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result.stderr)")
    return (result.status, try #require(object["differences"] as? [[String: Any]]))
  }

  /// The frame number of a difference's place in A or B (`a_at`, `b_at`).
  static func frame(_ difference: [String: Any]?, _ key: String) -> Int? {
    (difference?[key] as? [String: Any])?["frame"] as? Int
  }

  @Test func theSameSessionTwiceIsEquivalent() throws {
    let result = runCLI(["diff", "--no-cache", Self.path("healthy_a.btsnoop"), Self.path("healthy_b.btsnoop")])
    #expect(result.status == 0)
    #expect(result.stdout.hasSuffix("equivalent\n") && result.stderr.isEmpty)
    // Each against itself, too.
    for name in ["healthy_a.btsnoop", "broken_b.btsnoop"] {
      #expect(runCLI(["diff", "--no-cache", Self.path(name), Self.path(name)]).status == 0)
    }
  }

  @Test func eachInjectedDifferenceIsReportedOnce() throws {
    let (status, found) = try Self.differences([Self.path("healthy_a.btsnoop"), Self.path("broken_b.btsnoop")])
    #expect(status == 1)
    let injected = try Self.truth()
    #expect(found.count == injected.count, "\(found.map { $0["text"] as? String ?? "" })")
    func one(_ kind: String, _ contains: String) -> [String: Any]? {
      let matching = found.filter { $0["kind"] as? String == kind && ($0["text"] as? String)?.contains(contains) == true }
      #expect(matching.count == 1, "\(kind) \(contains): \(matching)")
      return matching.first
    }
    for difference in injected {
      switch difference["kind"] as? String {
      case "subscription_missing":
        #expect(one("procedure", "never enabled notifications on Battery Level") != nil)
      case "att_error":
        let details = difference["details"] as? [String: Any]
        let name = try #require(details?["error_name"] as? String)
        let entry = one("reads", "Read Body Sensor Location: Chest in A, \(name) in B")
        // Where it shows: A's Read Response (0B 01: Chest), B's Error Response, as the files hold them.
        #expect(Self.frame(entry, "a_at") == (try btsnoopFrames(path: Self.path("healthy_a.btsnoop"), pdu: [0x0B, 0x01])).first)
        let errorPDU = try #require(details?["error_response_pdu_b"] as? String)
        #expect(Self.frame(entry, "b_at") == (try btsnoopFrames(path: Self.path("broken_b.btsnoop"), pdu: hexBytes(errorPDU))).first)
      case "mtu":
        let entry = one("mtu", "ATT MTU")
        #expect(entry?["a_value"] as? String == "\(difference["a"]!)" && entry?["b_value"] as? String == "\(difference["b"]!)")
        // The Exchange MTU Requests: 247 (F7 00) in A, 185 (B9 00) in B.
        #expect(Self.frame(entry, "a_at") == (try btsnoopFrames(path: Self.path("healthy_a.btsnoop"), pdu: [0x02, 0xF7, 0x00])).first)
        #expect(Self.frame(entry, "b_at") == (try btsnoopFrames(path: Self.path("broken_b.btsnoop"), pdu: [0x02, 0xB9, 0x00])).first)
      case "connection_interval":
        let entry = one("parameters", "connection interval")
        #expect(entry?["a_value"] as? String == "\(Int(difference["a"] as! Double)) ms" && entry?["b_value"] as? String == "\(Int(difference["b"] as! Double)) ms")
      case "disconnect_reason":
        let entry = one("disconnect", "ended")
        #expect((entry?["a_value"] as? String)?.contains("Remote User Terminated Connection") == true)
        #expect((entry?["b_value"] as? String)?.contains("Connection Timeout") == true)
        // The Disconnection Complete events: each file's last record.
        #expect(Self.frame(entry, "a_at") == (try btsnoopRecords(path: Self.path("healthy_a.btsnoop"))).count)
        #expect(Self.frame(entry, "b_at") == (try btsnoopRecords(path: Self.path("broken_b.btsnoop"))).count)
      case "gatt_characteristic_missing":
        let details = difference["details"] as? [String: Any]
        let handle = try #require(details?["value_handle_a"] as? Int)
        #expect(one("gatt", "Heart Rate Control Point (\(String(format: "0x%04x", handle)) in A) is missing from B's GATT table; the handles after it moved by -2") != nil)
      case "notification_gap":
        let entry = one("timing", "Heart Rate Measurement: values stopped for")
        let details = difference["details"] as? [String: Any]
        let length = try #require(details?["length_s"] as? Double)
        let text = try #require(entry?["text"] as? String)
        #expect(text.contains("stopped for \(SummaryPartText.real(length, places: 1)) s"), "\(text)")
        #expect(text.contains("in B (A: at most \(SummaryPartText.real(try #require(details?["length_s_a_same_place"] as? Double), places: 1)) s)"), "\(text)")
      case let other:
        Issue.record("unexpected injected kind \(String(describing: other))")
      }
    }
  }

  @Test func ignoreSilencesAClassAndExitStatusFollows() throws {
    let ignored = try Self.differences(["--ignore", "parameters", "--ignore", "mtu", Self.path("healthy_a.btsnoop"), Self.path("broken_b.btsnoop")])
    #expect(ignored.list.count == 5 && !ignored.list.contains { ["parameters", "mtu"].contains($0["kind"] as? String) })
    let all = SessionDifference.Kind.allCases.flatMap { ["--ignore", $0.rawValue] }
    #expect(runCLI(["diff", "--no-cache"] + all + [Self.path("healthy_a.btsnoop"), Self.path("broken_b.btsnoop")]).status == 0)
    // A threshold raised past the gap silences it.
    let raised = try Self.differences(["--threshold", "gap_s=20", Self.path("healthy_a.btsnoop"), Self.path("broken_b.btsnoop")])
    #expect(raised.list.count == 6 && !raised.list.contains { $0["kind"] as? String == "timing" })
    #expect(runCLI(["diff", "--threshold", "gap=1", Self.path("healthy_a.btsnoop"), Self.path("broken_b.btsnoop")]).status == 64)
    let bad = runCLI(["diff", "--ignore", "colour", Self.path("healthy_a.btsnoop"), Self.path("broken_b.btsnoop")])
    #expect(bad.status == 64 && bad.stderr.contains("--ignore takes one of"))
    let missing = runCLI(["diff", Self.path("healthy_a.btsnoop"), "/nonexistent.btsnoop"])
    #expect(missing.status == 2 && missing.stderr.contains("/nonexistent.btsnoop"))
  }

  /// diff(1)'s trouble: a capture that cannot be read, or is damaged (compared only as far as
  /// it could be read), is status 2, never 1 (different) or 0 (equivalent).
  @Test func unreadableOrDamagedCapturesAreTrouble() throws {
    let broken = try Data(contentsOf: URL(fileURLWithPath: Self.path("broken_b.btsnoop")))
    // Cut inside its last record: the read stops there.
    let cut = temporaryFile(Array(broken.dropLast(3)))
    defer { unlink(cut) }
    let text = runCLI(["diff", "--no-cache", Self.path("healthy_a.btsnoop"), cut])
    #expect(text.status == 2)
    // The comparison of what was read is still shown…
    #expect(text.stdout.hasPrefix("A: \(Self.path("healthy_a.btsnoop"))\nB: \(cut)\n"))
    #expect(text.stdout.contains("Heart Rate Control Point"))
    // …with the damage and what it means for the answer on stderr.
    #expect(text.stderr == """
      bledissect: \(cut): damaged capture at frame 152 (byte offset 5883): truncated record: needs 7 bytes of packet data, only 4 remain
      bledissect: diff: B is damaged: the comparison covers only what could be read (status 2)

      """)
    // The same damaged capture on both sides: equivalent as far as read, still trouble.
    let both = runCLI(["diff", "--no-cache", cut, cut])
    #expect(both.status == 2 && both.stdout.hasSuffix("equivalent\n"))
    #expect(both.stderr.hasSuffix("bledissect: diff: A and B are damaged: the comparison covers only what could be read (status 2)\n"))
    // Damage skipped in the middle (btsnoop is read on from the next plausible record).
    var hurt = Array(try Data(contentsOf: URL(fileURLWithPath: Self.path("healthy_a.btsnoop"))))
    var record = 16
    while record < 3000 {
      record += 24 + (Int(hurt[record + 4]) << 24 | Int(hurt[record + 5]) << 16 | Int(hurt[record + 6]) << 8 | Int(hurt[record + 7]))
    }
    // An impossible included length in a record's header.
    hurt.replaceSubrange((record + 4)..<(record + 8), with: [0xFF, 0xFF, 0xFF, 0xF0])
    let skipped = temporaryFile(hurt)
    defer { unlink(skipped) }
    let json = runCLI(["diff", "--json", "--no-cache", skipped, Self.path("healthy_a.btsnoop")])
    #expect(json.status == 2)
    #expect(json.stderr.contains("skipped") && json.stderr.hasSuffix("bledissect: diff: A is damaged: the comparison covers only what could be read (status 2)\n"))
    #expect((try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])?["format"] as? String == "bledissect-diff")
    // --stop-at-damage: damage ends the read; trouble too.
    #expect(runCLI(["diff", "--stop-at-damage", "--no-cache", skipped, Self.path("healthy_a.btsnoop")]).status == 2)
    // Unreadable: not a capture, empty, missing; nothing compared.
    let notACapture = temporaryFile(Array("not a capture at all\n".utf8))
    let empty = temporaryFile([])
    defer { unlink(notACapture); unlink(empty) }
    for other in [notACapture, empty, "/nonexistent.btsnoop"] {
      let result = runCLI(["diff", "--no-cache", Self.path("healthy_a.btsnoop"), other])
      #expect(result.status == 2, "\(other)")
      #expect(result.stdout.isEmpty && result.stderr.hasPrefix("bledissect: \(other): ") && result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
    }
  }

  /// `help diff` says one thing about its statuses: diff(1)'s, with damage as trouble.
  @Test func helpStatesDiffsOwnExitStatuses() {
    let help = runCLI(["help", "diff"]).stdout
    let statuses = help.components(separatedBy: "EXIT STATUS").dropFirst()
    #expect(statuses.count == 1, "one EXIT STATUS section")
    let section = statuses.first ?? ""
    #expect(section.contains("\n  0   the sessions are equivalent\n  1   they differ\n  2   trouble: a capture is unreadable"))
    #expect(section.contains("or damaged"))
    #expect(!help.contains("the capture is damaged (truncated or corrupt record)"))
    #expect(help.contains("exit status is diff(1)'s: 0 equivalent, 1 different, 2 trouble (below)."))
  }

  @Test func edgeCases() throws {
    // Two empty captures: equivalent; one side without connections: the device is only in A.
    let empty = temporaryFile(Array("btsnoop\0".utf8) + [0, 0, 0, 1, 0, 0, 0x03, 0xEA])
    defer { unlink(empty) }
    #expect(runCLI(["diff", "--no-cache", empty, empty]).status == 0)
    let (status, found) = try Self.differences([Self.path("healthy_a.btsnoop"), empty])
    #expect(status == 1 && found.count == 1 && (found.first?["text"] as? String)?.contains("is only in A") == true)
    // Two straps in one capture against itself: devices matched by address, whatever the order.
    #expect(runCLI(["diff", "--no-cache", capturePath("two_straps.btsnoop"), capturePath("two_straps.btsnoop")]).status == 0)
  }

  /// Each text line says where the difference shows: frame and seconds in A and in B.
  @Test func textLinesCarryWhereTheyShow() throws {
    let result = runCLI(["diff", "--no-cache", Self.path("healthy_a.btsnoop"), Self.path("broken_b.btsnoop")])
    let lines = result.stdout.split(separator: "\n").dropFirst(3)
    #expect(lines.count == 7)
    let mtu = try #require(lines.first { $0.contains("ATT MTU") })
    let a = try #require(try btsnoopFrames(path: Self.path("healthy_a.btsnoop"), pdu: [0x02, 0xF7, 0x00]).first)
    let b = try #require(try btsnoopFrames(path: Self.path("broken_b.btsnoop"), pdu: [0x02, 0xB9, 0x00]).first)
    #expect(mtu.hasSuffix("(A #\(a) 0.077 s, B #\(b) 0.077 s)"), "\(mtu)")
    // Something only A did shows only in A.
    let subscription = try #require(lines.first { $0.contains("never enabled notifications on Battery Level") })
    #expect(subscription.contains("(A #") && !subscription.contains("B #"))
  }
}

enum SummaryPartText {
  static func real(_ value: Double, places: Int) -> String {
    let scale = pow(10.0, Double(places))
    let rounded = (value * scale).rounded() / scale
    return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
  }
}

/// Latencies compared like with like, and lines that point at the frame that differs.
extension DiffTests {
  static let hciThenAir = "ATT latency of the central's requests not compared: A timed them at the asking host (HCI: the round trip), "
    + "B on the air (sniffed: an answer comes a connection event or more after its request)"

  /// The strap session's HCI capture and a sniff of the same session: the same session, so
  /// equivalent; their latencies measure different things (the host's round trip, the air's
  /// connection events), so they are not compared, and a line says why.
  @Test func aSniffOfTheSessionIsEquivalentAndSaysWhyLatenciesAreNotCompared() throws {
    let (hci, air) = (capturePath("hr_strap_session.btsnoop"), capturePath("air/hr_strap_session_sniffed.pcap"))
    let text = runCLI(["diff", "--no-cache", hci, air])
    #expect(text.status == 0, "\(text.stdout)")
    #expect(text.stdout == "A: \(hci)\nB: \(air)\n\(Self.hciThenAir)\nequivalent\n")
    let json = try #require(try JSONSerialization.jsonObject(with: Data(runCLI(["diff", "--json", "--no-cache", hci, air]).stdout.utf8)) as? [String: Any])
    #expect(json["notes"] as? [String] == [Self.hciThenAir])
    #expect(json["equivalent"] as? Bool == true)
    // The other way round, the note turns with it.
    let reversed = runCLI(["diff", "--no-cache", air, hci])
    #expect(reversed.status == 0 && reversed.stdout.contains("A timed them on the air (sniffed: "))
    #expect(reversed.stdout.contains(", B at the asking host (HCI: the round trip)\n"))
    // The same capture twice: nothing to say.
    #expect(try #require(try JSONSerialization.jsonObject(with: Data(runCLI(["diff", "--json", "--no-cache", hci, hci]).stdout.utf8)) as? [String: Any])["notes"]
      as? [String] == [])
  }

  /// The phone's and the strap's capture of one session: the phone timed its round trips, the
  /// strap its own answers; equivalent, with the note.
  @Test func thePhonesAndTheStrapsLatenciesAreNotCompared() {
    let result = runCLI(["diff", "--no-cache", Self.path("roles_central.btsnoop"), Self.path("roles_peripheral.btsnoop")])
    #expect(result.status == 0)
    #expect(result.stdout.contains(
      "\nATT latency of the central's requests not compared: A timed them at the asking host (HCI: the round trip), B at the answering host (HCI: its own answer time)\nequivalent\n"))
  }

  /// Both clients asked for 247; B's server answered 185 (its Exchange MTU Response patched
  /// from 517): the line points at the responses, where the captures part, not the requests.
  @Test func anMTUTheServersSetPointsAtTheResponses() throws {
    let healthy = Self.path("healthy_a.btsnoop")
    var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: healthy)))
    let records = try btsnoopRecords(path: healthy)
    let response = try #require(try btsnoopFrames(path: healthy, pdu: [0x03, 0x05, 0x02]).first)
    #expect(try btsnoopFrames(path: healthy, pdu: [0x02, 0xF7, 0x00]).first == response - 2)
    // The response's server MTU: after the record headers before it, its own, and H4 + ACL + L2CAP + opcode.
    let offset = 16 + records[..<(response - 1)].reduce(0) { $0 + 24 + $1.bytes.count } + 24 + 10
    #expect(bytes[offset] == 0x05 && bytes[offset + 1] == 0x02)
    bytes[offset] = 0xB9
    bytes[offset + 1] = 0x00
    let patched = temporaryFile(bytes)
    defer { unlink(patched) }
    let (status, found) = try Self.differences([healthy, patched])
    #expect(status == 1 && found.count == 1, "\(found)")
    let mtu = try #require(found.first)
    #expect(mtu["kind"] as? String == "mtu" && mtu["text"] as? String == "ATT MTU 247 in A, 185 in B")
    #expect(Self.frame(mtu, "a_at") == response && Self.frame(mtu, "b_at") == response)
  }
}

