import Foundation
import Testing

@testable import BLECapture
@testable import BLECore
@testable import BLEDecoder
@testable import bledissect

/// The sniffed sessions in captures/air: link-layer captures made by
/// Scripts/captures/make_sniffed_sessions.py from Bumble HCI captures of the same sessions, with
/// a truth file of what was sent. What `hr`, `summary` and `diff` say of a sniffed capture must
/// be what they say of the HCI capture, but for what only the air shows (timing on connection
/// events, advertising) or only HCI shows (frames, commands).
@Suite struct SniffedSessionTests {
  /// `hr --csv` rows without their frame and time columns (the frames differ; the air's times
  /// are those of connection events).
  static func heartRateRows(_ arguments: [String]) -> [String] {
    let result = runCLI(["hr", "--csv", "--no-cache"] + arguments)
    #expect(result.status == 0, "\(arguments): \(result.stderr)")
    return result.stdout.split(separator: "\n").dropFirst().map { $0.split(separator: ",", maxSplits: 2, omittingEmptySubsequences: false).last.map(String.init) ?? "" }
  }

  static let keysFromTheHCICapture = ["--keys-from", capturePath("encrypted_hr_session.btsnoop")]

  @Test(arguments: [
    ("air/hr_strap_session_sniffed.pcap", "hr_strap_session.btsnoop", [String]()),
    ("air/hr_strap_session_sniffed_ll.pcap", "hr_strap_session.btsnoop", []),
    ("air/hr_strap_session_sniffed_impaired.pcap", "hr_strap_session.btsnoop", []),
    ("air/encrypted_hr_session_sniffed.pcap", "encrypted_hr_session.btsnoop", keysFromTheHCICapture),
    // No key given: the STK comes out of the sniffed Just Works pairing.
    ("air/encrypted_hr_session_sniffed.pcap", "encrypted_hr_session.btsnoop", []),
  ])
  func heartRateSeriesIsTheHCICaptures(sniffed: String, hci: String, options: [String]) {
    let expected = Self.heartRateRows([capturePath(hci)])
    #expect(expected.count >= 6)
    #expect(Self.heartRateRows([capturePath(sniffed)] + options) == expected)
  }

  /// `summary` lines that do not depend on timing (the air's requests are answered a connection
  /// event later, so times, rates and latencies differ) or on the capture's kind.
  static func summaryFacts(_ path: String, _ options: [String] = []) -> [String] {
    let result = runCLI(["summary", "--no-cache", path] + options)
    #expect(result.status == 0)
    var facts: [String] = []
    for line in result.stdout.split(separator: "\n").dropFirst(2) {
      if line.hasPrefix("ATT latency") { break }
      // What only one kind of capture shows: when seen, the span, what the air carried.
      if line.contains("seen  ") || line.contains("  time  ") || line.hasPrefix("  air  ") { continue }
      let masked = String(line)
        .replacingOccurrences(of: #"[0-9]+\.[0-9]+ s\b"#, with: "T", options: .regularExpression)
        .replacingOccurrences(of: #"[0-9.]+ /s"#, with: "R", options: .regularExpression)
        .replacingOccurrences(of: " +", with: " ", options: .regularExpression)
        // The air shows the peripheral's LL_VERSION_IND; the central's host never asked.
        .replacingOccurrences(of: #"; peer controller .*$"#, with: "", options: .regularExpression)
      facts.append(masked)
    }
    return facts
  }

  @Test func summaryStatesWhatTheHCICaptureDoes() {
    let expected = Self.summaryFacts(capturePath("hr_strap_session.btsnoop"))
    #expect(expected.contains(" heart rate 72 / 113.0 / 184 bpm (min / mean / max), 21 measurements"))
    #expect(expected.contains(" ended by the local host: Remote User Terminated Connection (0x13)"))
    #expect(Self.summaryFacts(capturePath("air/hr_strap_session_sniffed.pcap")) == expected)
    #expect(Self.summaryFacts(capturePath("air/hr_strap_session_sniffed_ll.pcap")) == expected)
    // Paired (Just Works) and encrypted, as the HCI capture's Encryption Change says.
    let encrypted = Self.summaryFacts(capturePath("encrypted_hr_session.btsnoop"))
    #expect(encrypted.contains(" security paired at T, legacy pairing, Just Works, keys distributed; encrypted from T"))
    #expect(Self.summaryFacts(capturePath("air/encrypted_hr_session_sniffed.pcap")) == encrypted)
  }

  @Test func gattTableIsTheHCICaptures() {
    // The same table, each entry learned in another frame.
    func table(_ path: String) -> String {
      runCLI(["gatt", "--no-cache", capturePath(path)]).stdout.replacingOccurrences(of: #" +#[0-9]+"#, with: "", options: .regularExpression)
    }
    let expected = table("hr_strap_session.btsnoop")
    #expect(expected.contains("0x0010 Heart Rate Measurement (2a37): notify"))
    #expect(table("air/hr_strap_session_sniffed.pcap") == expected)
    #expect(table("air/hr_strap_session_sniffed_ll.pcap") == expected)
  }

  /// A diff's difference lines without where they show (frames and times differ: a sniffed
  /// capture starts with the advertising before the connection).
  static func differences(_ a: String, _ b: String) -> [String] {
    let result = runCLI(["diff", "--no-cache", capturePath(a), capturePath(b)])
    // The difference lines (indented): not the A:/B: lines, notes or the count.
    return result.stdout.split(separator: "\n").filter { $0.hasPrefix("  ") }.map { line in
      String(line.split(separator: "  (A #", maxSplits: 1).first ?? line)
        .replacingOccurrences(of: #"  \(B #.*$"#, with: "", options: .regularExpression)
        .replacingOccurrences(of: #" at [0-9.]+ s"#, with: " at T", options: .regularExpression)
    }.sorted()
  }

  @Test func diffOfTheSniffedPairIsTheHCIPairs() {
    let expected = Self.differences("diff/healthy_a.btsnoop", "diff/broken_b.btsnoop")
    #expect(expected.count == 7)
    #expect(Self.differences("air/diff_healthy_a_sniffed.pcap.gz", "air/diff_broken_b_sniffed.pcap.gz") == expected)
  }

  @Test func diffFindsANoisyLinkAndOnlyThat() throws {
    let truth = try Self.truth("hr_strap_session_sniffed_noisy")
    let damaged = truth.packets.filter { $0.crc_ok == false }.count
    #expect(damaged == 31)
    let lines = Self.differences("air/hr_strap_session_sniffed.pcap", "air/hr_strap_session_sniffed_noisy.pcap")
    #expect(lines == ["  \"bledissect HR\": packets with a bad CRC 0.0 % of the link's packets in A, 3.3 % in B"])
    // A few damaged replies (0.3 %) are no difference; the Read By Type Response the sniffer
    // dropped is (B's capture does not show that discovery).
    #expect(
      Self.differences("air/hr_strap_session_sniffed.pcap", "air/hr_strap_session_sniffed_impaired.pcap")
        == ["  \"bledissect HR\": only A discovered the characteristics of Device Information"])
    #expect(runCLI(["diff", "--no-cache", "--ignore", "air", capturePath("air/hr_strap_session_sniffed.pcap"), capturePath("air/hr_strap_session_sniffed_noisy.pcap")]).status == 0)
  }

  @Test func sniffedAndHCICapturesOfOneSessionAreEquivalent() {
    // Bumble's in-process link answers at once; over the air a response waits for a
    // connection event (15 ms here, 50 ms once the interval grows). The two latencies measure
    // different things: not compared, and a line under A:/B: says so (was: the only
    // differences, "Write Request answered in 0.2 ms (median) in A, 50.2 ms in B").
    #expect(Self.differences("hr_strap_session.btsnoop", "air/hr_strap_session_sniffed.pcap").isEmpty)
    let text = runCLI(["diff", "--no-cache", capturePath("hr_strap_session.btsnoop"), capturePath("air/hr_strap_session_sniffed.pcap")])
    #expect(text.status == 0 && text.stdout.hasSuffix("\n\(DiffTests.hciThenAir)\nequivalent\n"))
  }

  // MARK: The frames against the truth

  struct Truth: Decodable {
    struct Packet: Decodable {
      var index: Int
      var direction: String
      var kind: String
      var llid: Int?
      var sn: Int?
      var nesn: Int?
      var retransmission_of: Int?
      var crc_ok: Bool?
      var payload_hex: String?
    }
    struct PDU: Decodable {
      var n: Int
      var direction: String
      var cid: Int
      var frames: [[Int]]
      var pdu_hex: String
      var dropped_fragments: [Int]?
    }
    var packets: [Packet]
    var l2cap_pdus: [PDU]
    var dropped: [[String: JSONValue]]
  }

  /// Any JSON value (the dropped packets' descriptions are only counted).
  enum JSONValue: Decodable {
    case value
    init(from decoder: any Decoder) throws { self = .value }
  }

  static func truth(_ name: String) throws -> Truth {
    let data = try Data(contentsOf: URL(fileURLWithPath: capturePath("air/" + name + ".truth.json")))
    return try JSONDecoder().decode(Truth.self, from: data)
  }

  static func frames(_ name: String, keys: LinkKeyRing = LinkKeyRing()) throws -> [DissectedFrame] {
    let reader = try CaptureFile.open(path: capturePath("air/" + name))
    var dissector = Dissector(keys: keys)
    var frames: [DissectedFrame] = []
    var number = 0
    while let record = try reader.next() {
      number += 1
      var frame = DissectedFrame()
      dissector.dissect(record, number: number, into: &frame)
      frames.append(frame)
    }
    return frames
  }

  @Test(arguments: [
    ("hr_strap_session_sniffed.pcap", "hr_strap_session_sniffed"),
    ("hr_strap_session_sniffed_ll.pcap", "hr_strap_session_sniffed_ll"),
    ("hr_strap_session_sniffed_impaired.pcap", "hr_strap_session_sniffed_impaired"),
    ("encrypted_hr_session_sniffed.pcap", "encrypted_hr_session_sniffed"),
  ])
  func framesAreWhatWasSent(file: String, truthName: String) throws {
    let truth = try Self.truth(truthName)
    let frames = try Self.frames(file)
    let damaged = Set(truth.packets.filter { $0.crc_ok == false }.map(\.index))
    var goodCopies: Set<Int> = []
    for packet in truth.packets {
      let frame = frames[packet.index - 1]
      #expect(frame.malformed == nil, "#\(packet.index)")
      if packet.crc_ok == false {
        // Not decoded: its receiver dropped it too.
        guard case .damagedAirPacket = frame.header else {
          Issue.record("#\(packet.index): a damaged packet decoded")
          continue
        }
        continue
      }
      if let llid = packet.llid {
        #expect(frame.fields.number("ll.llid") == UInt64(llid), "#\(packet.index)")
        #expect(frame.fields.number("ll.sn") == packet.sn.map(UInt64.init), "#\(packet.index)")
        // Who sent it: the sniffer's word on 256, the connection event's rhythm on 251.
        #expect(frame.direction == (packet.direction == "central" ? .hostToController : .controllerToHost), "#\(packet.index) direction")
        let ours = frame.fields.lookup("ll.retransmission") != nil
        // A copy of a packet that arrived damaged is the first good one: decoded, not a
        // retransmission to us.
        let repeatsAGoodCopy = packet.retransmission_of.map { goodCopies.contains($0) } ?? false
        // An empty PDU repeating the last empty one looks like its retransmission: that is not
        // told apart, and nothing is lost either way.
        if packet.kind != "empty" || packet.retransmission_of != nil {
          #expect(ours == repeatsAGoodCopy, "#\(packet.index) retransmission")
        }
        if packet.crc_ok != false { goodCopies.insert(packet.index) }
      }
    }
    // Every L2CAP PDU none of whose pieces was dropped is decoded in the frame of its last
    // piece, its ATT opcode as sent.
    var checked = 0
    for pdu in truth.l2cap_pdus where pdu.dropped_fragments == nil && pdu.cid == 4 {
      // Its last piece is decoded in the first copy of it that arrived whole.
      guard let last = pdu.frames.last?.first(where: { !damaged.contains($0) }) else { continue }
      let frame = frames[last - 1]
      let opcode = UInt64(pdu.pdu_hex.dropFirst(8).prefix(2), radix: 16)
      #expect(frame.attOpcode.map(UInt64.init) == opcode, "PDU \(pdu.n) at #\(last)")
      checked += 1
    }
    #expect(checked >= 40)
    // A dropped piece is said where the sniffer noticed it.
    if !truth.dropped.isEmpty {
      #expect(frames.contains { $0.diagnostics.contains { $0.kind == .linkLayerPacketsMissed } })
    }
  }

  /// Connection updates take effect at their instant: the events counted from the packets'
  /// times (link type 251 and 256 give no count) reach the instant the generator used.
  @Test(arguments: ["hr_strap_session_sniffed.pcap", "hr_strap_session_sniffed_ll.pcap"])
  func connectionUpdatesTakeEffectAtTheirInstant(file: String) throws {
    struct Events: Decodable {
      struct Packet: Decodable {
        var index: Int
        var event: Int?
      }
      struct Connection: Decodable {
        struct Parameters: Decodable {
          var interval: Int
          var instant: Int?
        }
        var parameters: [Parameters]
      }
      var packets: [Packet]
      var connection: Connection
    }
    let data = try Data(contentsOf: URL(fileURLWithPath: capturePath("air/" + file.replacingOccurrences(of: ".pcap", with: ".truth.json"))))
    let truth = try JSONDecoder().decode(Events.self, from: data)
    let instants = truth.connection.parameters.compactMap(\.instant)
    #expect(instants == [56, 452])
    let frames = try Self.frames(file)
    var applied: [(frame: Int, event: Int)] = []
    for frame in frames {
      for diagnostic in frame.diagnostics {
        guard let match = diagnostic.message.firstMatch(of: /take effect \(event ([0-9]+)\)/) else { continue }
        applied.append((frame.number, Int(match.1)!))
        #expect(frame.linkEvents.contains { if case .parametersUpdated = $0 { true } else { false } })
      }
    }
    #expect(applied.map(\.event) == instants)
    // Each is said on the first packet of the instant's event.
    for (frame, event) in applied {
      let packet = truth.packets.first { $0.index == frame }
      #expect(packet?.event == event, "#\(frame)")
      #expect(!truth.packets.contains { $0.index < frame && ($0.event ?? -1) >= event })
    }
  }

  /// `summary`'s air line counts what the generator did to the link.
  @Test func summaryCountsTheLinksPackets() throws {
    func air(_ file: String) throws -> [String: Any] {
      let result = runCLI(["summary", "--json", "--no-cache", capturePath("air/" + file)])
      let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
      let connections = try #require(object["connections"] as? [[String: Any]])
      #expect(connections.count == 1)
      return try #require(connections.first?["air"] as? [String: Any])
    }
    let truth = try Self.truth("hr_strap_session_sniffed_impaired")
    let damaged = Set(truth.packets.filter { $0.crc_ok == false }.map(\.index))
    let impaired = try air("hr_strap_session_sniffed_impaired.pcap")
    #expect(impaired["damaged"] as? Int == damaged.count)
    #expect(damaged.count == 3)
    // A copy of a damaged packet is the first good one, not a retransmission.
    let retransmissions = truth.packets.filter { packet in packet.retransmission_of.map { !damaged.contains($0) } ?? false && packet.crc_ok != false }
    // Two packets dropped, both found: the central's NESN moves on without the peripheral's
    // packet it acknowledges (§4.5.9). The empty PDU after the second, byte for byte the one
    // before it, is no retransmission: the central acknowledged that one.
    #expect(truth.dropped.count == 2 && impaired["missed"] as? Int == 2)
    #expect(impaired["retransmissions"] as? Int == retransmissions.count)
    let encrypted = try air("encrypted_hr_session_sniffed.pcap")
    #expect(encrypted["decrypted"] as? Int == 59 && encrypted["sealed"] as? Int == 0)
    #expect((encrypted["central_rssi"] as? [String: Any])?["mean"] as? Double == -50)
  }

  /// Keys a capture gives away stay with it: decoded after the encrypted session (whose Just
  /// Works pairing opens its link), the passkey pairing is not opened, and each file's summary
  /// is what it is alone.
  @Test func learnedKeysDoNotCarryToTheNextCapture() {
    let encrypted = capturePath("air/encrypted_hr_session_sniffed.pcap")
    let passkey = capturePath("air/passkey_pairing_sniffed.pcap")
    func lines(_ files: [String]) -> [Substring] {
      runCLI(["summary", "--json", "--no-cache", "-j", "1"] + files).stdout.split(separator: "\n")
    }
    let together = lines([encrypted, passkey, encrypted])
    #expect(together.count == 3)
    #expect(together == lines([encrypted]) + lines([passkey]) + lines([encrypted]))
    #expect(together[0].contains(#""decrypted":59"#) && together[1].contains(#""decrypted":0"#))
  }

  @Test func aPasskeyPairingGivesItsKeyAwayWhenAsked() {
    let path = capturePath("air/passkey_pairing_sniffed.pcap")
    for options in [["--passkey", "123"], ["--find-passkey"]] {
      let result = runCLI(["-1", "--no-cache", path] + options)
      #expect(result.status == 0)
      #expect(result.stdout.contains("Read Response 0x0018: 57"), "\(options)")
      #expect(result.stderr.contains(": 5 packets decrypted with the STK worked out from the pairing at #2–#7 (passkey 000123)"), "\(options)")
    }
    // Not asked: only TK 0 is tried (a search costs seconds), and the note says what to do.
    let unasked = runCLI(["--no-cache", path])
    #expect(!unasked.stdout.contains("Read Response"))
    #expect(unasked.stdout.contains("--passkey N if you know it, --find-passkey to try them all"))
    #expect(runCLI(["--no-cache", path, "--passkey", "1000000"]).status == 64)
  }

  @Test func theEncryptedSessionOpensWithTheKeyFromTheHCICaptureOrFromItsPairing() throws {
    var harvest = HCIKeyHarvest()
    let reader = try CaptureFile.open(path: capturePath("encrypted_hr_session.btsnoop"))
    var number = 0
    while let record = try reader.next() {
      number += 1
      harvest.take(record, number: number, capture: "phone")
    }
    // LE Enable Encryption #41 carries the STK of the Just Works pairing (captures/README.md).
    #expect(harvest.ring.keys.map(\.hex) == ["CE6093D700DA36128D5F4441D115D03D"])
    #expect(harvest.ring.keys.first?.source == "phone frame 41 (LE Enable Encryption)")
    let given = try Self.frames("encrypted_hr_session_sniffed.pcap", keys: harvest.ring)
    let worked = try Self.frames("encrypted_hr_session_sniffed.pcap")
    let decrypted = given.filter { $0.air?.keySource != nil }
    #expect(decrypted.count >= 50)
    #expect(decrypted.allSatisfy { $0.air?.keySource == "phone frame 41 (LE Enable Encryption)" })
    let recovered = worked.filter { $0.air?.keySource != nil }
    #expect(recovered.map(\.number) == decrypted.map(\.number))
    #expect(recovered.allSatisfy { $0.air?.keySource?.hasPrefix("the STK worked out from the pairing at #11–#22 (TK 0") == true })
    // Nothing encrypted is left unopened but retransmissions, which keep their packet's counter.
    let sealed = given.filter { $0.fields.lookup("ll.encrypted") != nil && $0.air?.keySource == nil }
    #expect(sealed.allSatisfy { $0.fields.lookup("ll.retransmission") != nil })
    #expect(given.map(\.attOpcode) == worked.map(\.attOpcode))
  }
}
