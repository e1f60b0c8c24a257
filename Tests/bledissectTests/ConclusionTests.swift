import Foundation
import Testing

@testable import BLEAnalysis
@testable import BLERender
@testable import bledissect

/// What summary, hr and gatt conclude of real and generated captures (issue 26): each finding
/// tested on the corpus file that showed it and on a generated capture that reproduces it,
/// against the generator's truth (captures/README.md says how each was made).
@Suite struct ConclusionTests {
  // MARK: - Helpers

  static func json(_ path: String, _ options: [String] = []) throws -> [String: Any] {
    let result = runCLI(["summary", "--json", "--no-cache"] + options + [path])
    #expect(result.status == 0, "\(path): \(result.stderr)")
    return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
  }

  static func connections(_ path: String, _ options: [String] = []) throws -> [[String: Any]] {
    try #require(try json(path, options)["connections"] as? [[String: Any]])
  }

  static func truth(_ name: String) throws -> [String: Any] {
    let data = try Data(contentsOf: URL(fileURLWithPath: capturePath(name + ".truth.json")))
    return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
  }

  static func corpus(_ name: String) -> String { corpusRoot!.appendingPathComponent("ll_sniffer/" + name).path }

  /// JSON Lines of annotate, one object a frame.
  static func frames(_ path: String, _ options: [String] = []) throws -> [[String: Any]] {
    let result = runCLI(["--json", "--empty", "--no-cache"] + options + [path])
    #expect(result.status == 0, "\(result.stderr)")
    return try result.stdout.split(separator: "\n").map { line in
      try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }
  }

  static func security(_ connection: [String: Any]) -> [String: Any] { connection["security"] as? [String: Any] ?? [:] }
  static func air(_ connection: [String: Any]) -> [String: Any] { connection["air"] as? [String: Any] ?? [:] }

  // MARK: 1. Encryption is a fact of the LL procedure

  @Test(.enabled(if: corpusRoot != nil, "../shared/corpus is absent"))
  func sniffedLinksThatRanTheEncryptionProcedureAreEncryptedWithOrWithoutAKey() throws {
    for (file, sealed) in [("bsniffhub_sc_justworks_fragments_dlt256.pcap", 11), ("crackle_le_secure_connections_dlt256.pcapng", 70)] {
      let connection = try #require(try Self.connections(Self.corpus(file)).first)
      #expect(Self.security(connection)["encrypted"] as? Bool == true, "\(file)")
      #expect(Self.air(connection)["sealed"] as? Int == sealed && Self.air(connection)["decrypted"] as? Int == 0)
      let text = runCLI(["summary", "--no-cache", Self.corpus(file)]).stdout
      #expect(text.contains("(no key: \(sealed) packets left encrypted; try --ltk or --keys-from; LE Secure Connections keys cannot be worked out"), "\(text)")
      #expect(!text.contains("not encrypted"))
    }
    // Its own pairing gave the key; the peripheral's LL_START_ENC_RSP was not heard, the
    // central's was: encrypted from that one.
    let crackle = try #require(try Self.connections(Self.corpus("crackle_pairing_and_ltk_exchange_ppi192.pcap")).first)
    #expect(Self.security(crackle)["encrypted"] as? Bool == true && Self.security(crackle)["keys_distributed"] as? Bool == true)
  }

  @Test func aSniffedPasskeyPairingWithoutItsPasskeyIsEncryptedAndSaysWhatWouldOpenIt() throws {
    let text = runCLI(["summary", "--no-cache", capturePath("air/passkey_pairing_sniffed.pcap")]).stdout
    #expect(text.contains("legacy pairing, Passkey Entry; encrypted from "), "\(text)")
    #expect(text.contains("(no key: 5 packets left encrypted; try --ltk, --keys-from, --passkey N or --find-passkey)"))
  }

  // MARK: 2, 13. Ends and durations

  @Test(.enabled(if: corpusRoot != nil, "../shared/corpus is absent"))
  func aSniffedLinkEndsWhereItsFramesShow() throws {
    // Ran about 15 s; then the strap advertised to be connected again, 777 ms after the last
    // packet, within the 20 s timeout: ended unseen (its last packets were encrypted).
    let fragments = try #require(try Self.connections(Self.corpus("bsniffhub_sc_justworks_fragments_dlt256.pcap")).first)
    #expect(fragments["ending"] as? String == "ended_unseen")
    #expect(fragments["heard_elsewhere_device"] as? String == fragments["peer"] as? String)
    #expect(fragments["last_heard_frame"] as? Int == 347)
    let span = try #require(fragments["last_heard_s"] as? Double) - (try #require(fragments["start_s"] as? Double))
    #expect(abs(try #require(fragments["duration_s"] as? Double) - span) < 0.001 && span > 14.8 && span < 15)
    // Heard until 76.959 s.
    let missing = try #require(try Self.connections(Self.corpus("bsniffhub_encrypted_packet_missing_dlt272.pcap")).first)
    #expect(abs(try #require(missing["last_heard_s"] as? Double) - 76.959) < 0.001)
    #expect(abs(try #require(missing["duration_s"] as? Double) - (76.959 - 0.574)) < 0.002)
    // Heard to the capture's end: open there, for as long as the capture ran on.
    let summary = try Self.json(Self.corpus("crackle_le_secure_connections_dlt256.pcapng"))
    let crackle = try #require((summary["connections"] as? [[String: Any]])?.first)
    #expect(crackle["ending"] as? String == "open_at_end")
    let toEnd = try #require(summary["duration_s"] as? Double) - (try #require(crackle["start_s"] as? Double))
    #expect(abs(try #require(crackle["duration_s"] as? Double) - toEnd) < 0.001 && toEnd > 7)
    let text = runCLI(["summary", "--no-cache", Self.corpus("crackle_le_secure_connections_dlt256.pcapng")]).stdout
    #expect(text.contains("1.306 s → still open at the end (7.611 s)"), "\(text)")
    // 42 499 packets over half an hour: no longer "(0.0 ms)".
    let long = try #require(try Self.connections(Self.corpus("bsniffhub_sc_justworks_ltk_dlt256.pcapng")).first)
    #expect(try #require(long["duration_s"] as? Double) > 1900)
  }

  @Test func aLinkLossIsSaidOnlyWhenTheStrapAdvertisesAgain() throws {
    // broken_b: the peripheral goes silent, the central retransmits for the timeout, then the
    // strap advertises again (the truth's after_link_loss).
    let connection = try #require(try Self.connections(capturePath("air/diff_broken_b_sniffed.pcap.gz")).first)
    #expect(connection["ending"] as? String == "ended" && connection["disconnected_by"] as? String == "link_lost")
    #expect((connection["disconnect_reason"] as? Int) == 0x08)
  }

  @Test(.enabled(if: corpusRoot != nil, "../shared/corpus is absent"))
  func hciConnectionsEndWhereTheirHandleIsTakenAndRunToTheCapturesEnd() throws {
    let root = corpusRoot!.appendingPathComponent("miband3_blproject")
    // Connection 6 opens on connection 5's handle: 5 had ended by then.
    let band = try Self.connections(root.appendingPathComponent("miband3_a1wcap.pcapng").path)
    let fifth = try #require(band.first { $0["number"] as? Int == 5 })
    #expect(fifth["ending"] as? String == "handle_reused" && fifth["reused_by_connection"] as? Int == 6)
    let sixth = try #require(band.first { $0["number"] as? Int == 6 })
    #expect(fifth["reused_frame"] as? Int == sixth["start_frame"] as? Int)
    // An A2DP link with ACL traffic until 520 s, open at the end: its span is the capture's.
    let path = root.appendingPathComponent("ue_boom_classic_nopairing.pcapng").path
    let summary = try Self.json(path)
    let boom = try #require((summary["connections"] as? [[String: Any]])?.first)
    #expect(boom["ending"] as? String == "open_at_end")
    #expect(try #require(boom["duration_s"] as? Double) > 500)
    let text = runCLI(["summary", "--no-cache", path]).stdout
    #expect(!text.contains("ATT MTU 23 (no exchange seen)") && text.contains("no ATT"), "\(text)")
  }

  // MARK: 3. Connection updates

  @Test func aSlowerIntervalAfterAnUpdateIsNoLostLink() throws {
    let truth = try Self.truth("air/hr_strap_slow_update_sniffed")
    let scenario = try #require(truth["scenario"] as? [String: Any])
    let update = try #require((scenario["connection_updates"] as? [[String: Any]])?.first)
    let connections = try Self.connections(capturePath("air/hr_strap_slow_update_sniffed.pcap"))
    #expect(connections.count == 1)
    let connection = try #require(connections.first)
    #expect(connection["ending"] as? String == "ended" && connection["disconnected_by"] as? String == "local_host")
    let updates = try #require(connection["updates"] as? [[String: Any]])
    #expect(updates.count == 1)
    #expect(updates.first?["frame"] as? Int == update["first_frame_with_new_parameters"] as? Int)
    #expect(updates.first?["interval_ms"] as? Double == 1020 && updates.first?["supervision_timeout_ms"] as? Double == 6000)
    // Every heart rate the strap sent is the strap's, on its own address.
    let notifications = try #require((scenario["hr_notifications"] as? [String: Any])?["count"] as? Int)
    #expect((connection["heart_rate"] as? [String: Any])?["measurements"] as? Int == notifications)
    let rows = runCLI(["hr", "--no-cache", capturePath("air/hr_strap_slow_update_sniffed.pcap")]).stdout.split(separator: "\n").dropFirst()
    #expect(rows.count == notifications && rows.allSatisfy { $0.contains("D0:B1:ED:00:48:52") })
  }

  // MARK: 4. Sniffer gaps

  @Test func aSnifferGapLongerThanTheTimeoutIsOneLinkWithANote() throws {
    let truth = try Self.truth("air/hr_strap_sniffer_gap_sniffed")
    let gap = try #require((truth["scenario"] as? [String: Any])?["sniffer_gap"] as? [String: Any])
    let connections = try Self.connections(capturePath("air/hr_strap_sniffer_gap_sniffed.pcap"))
    #expect(connections.count == 1)
    let connection = try #require(connections.first)
    #expect(connection["peer"] as? String == "D0:B1:ED:00:48:52" && connection["mtu"] as? Int == 247)
    let air = Self.air(connection)
    #expect(air["sniffer_gaps"] as? Int == 1 && air["longest_sniffer_gap_frame"] as? Int == gap["first_frame_after"] as? Int)
    let silence = try #require(gap["silence_in_file_us"] as? Int)
    #expect(abs(try #require(air["longest_sniffer_gap_s"] as? Double) - Double(silence) / 1e6) < 1e-3)
    // The same notification on both sides of the gap: one retransmission, the second copy.
    let pair = try #require((gap["retransmission_pair"] as? [String: Any])?["frames"] as? [Int])
    #expect(air["retransmissions"] as? Int == 1)
    let frames = try Self.frames(capturePath("air/hr_strap_sniffer_gap_sniffed.pcap"))
    let second = try #require(frames.first { $0["frame"] as? Int == pair[1] })
    #expect(((second["ll"] as? [String: Any])?["retransmission"] as? Bool) == true)
    // The gap ran mid-capture and values came after it: notifications did not stop.
    #expect(!runCLI(["summary", "--no-cache", capturePath("air/hr_strap_sniffer_gap_sniffed.pcap")]).stdout.contains("notifications stopped"))
  }

  @Test(.enabled(if: corpusRoot != nil, "../shared/corpus is absent"))
  func aRealSnifferGapKeepsTheLinksPeer() throws {
    // The Zephyr target's first data packets come 130 ms after its CONNECT_IND (past the
    // 120 ms of six intervals): the link goes on, its peer known.
    let connections = try Self.connections(Self.corpus("sweyntooth_zephyr_invalid_sequence_dlt272.pcap"))
    #expect(connections.count == 1)
    #expect(connections.first?["peer"] as? String == "F5:9B:D4:48:6D:94")
    #expect(Self.air(try #require(connections.first))["sniffer_gaps"] as? Int == 1)
  }

  // MARK: 5. Both sides serve GATT

  @Test func bothEndsServingGATTAreKeptApart() throws {
    let path = capturePath("air/both_sides_serve_gatt_sniffed.pcap")
    let truth = try Self.truth("air/both_sides_serve_gatt_sniffed")
    let phoneHandles = Set(try #require(truth["phone_attributes"] as? [[String: Any]]).compactMap { ($0["handle"] as? String).flatMap { Int($0.dropFirst(2), radix: 16) } })
    let connection = try #require(try Self.connections(path).first)
    let characteristics = try #require(connection["characteristics"] as? [[String: Any]])
    let local = characteristics.filter { $0["served_by"] as? String == "local" }.compactMap { $0["handle"] as? Int }
    #expect(Set(local) == [0x0033, 0x0045])
    #expect(local.allSatisfy(phoneHandles.contains))
    #expect(connection["local_address"] as? String == "C0:B1:ED:00:50:48")
    let text = runCLI(["summary", "--no-cache", path]).stdout
    #expect(text.contains("  served by the central C0:B1:ED:00:50:48"))
    let gatt = runCLI(["gatt", "--no-cache", path]).stdout
    #expect(gatt.contains("C0:B1:ED:00:50:48: 4 services, 8 characteristics") && !gatt.contains("local device"), "\(gatt)")
    #expect(gatt.contains("D0:B1:ED:00:4D:53 (random) \"bledissect Mouse\": 5 services, 13 characteristics"))
    // The phone's Manufacturer Name "Apple Inc." is not the mouse's maker.
    #expect(text.contains("maker     bledissect labs"))
  }

  // MARK: 6, 7. Who sent each packet

  @Test(.enabled(if: corpusRoot != nil, "../shared/corpus is absent"))
  func everySniffedPacketLineSaysWhoSentIt() throws {
    let lines = runCLI(["-1", "--no-cache", Self.corpus("bsniffhub_sc_justworks_fragments_dlt256.pcap")]).stdout.split(separator: "\n")
    let data = lines.filter { $0.contains(" conn 1 ") && !$0.contains("CONNECT_IND") }
    #expect(!data.isEmpty && data.allSatisfy { $0.contains(" C→ ") || $0.contains(" P→ ") })
    let randoms = data.filter { $0.contains("Pairing Random") }
    #expect(randoms.count == 2 && randoms[0].contains(" C→ SMP") && randoms[1].contains(" P→ SMP"), "\(randoms)")
    // No flags (link type 251): worked out from the events' rhythm, in lower case.
    let plain = runCLI(["-1", "--no-cache", capturePath("air/hr_strap_session_sniffed_ll.pcap")]).stdout
    #expect(plain.contains(" c→ ATT ") && plain.contains(" p→ ATT ") && !plain.contains(" C→ "))
  }

  @Test func anATTOnlyExportTakesEachSenderFromItsPDU() throws {
    let truth = try #require(try Self.truth("air/att_only_export")["packets"] as? [[String: Any]])
    let frames = try Self.frames(capturePath("air/att_only_export.pcap"))
    #expect(frames.count == truth.count)
    for (frame, packet) in zip(frames, truth) {
      #expect(frame["from"] as? String == packet["sender"] as? String, "#\(frame["frame"] ?? 0)")
      #expect(frame["from_source"] as? String == "att")
      // Every ATT PDU decoded (none taken for a retransmission), with the opcode sent.
      let opcode = try #require((frame["att"] as? [String: Any])?["opcode"] as? Int, "#\(frame["frame"] ?? 0)")
      #expect("0x" + String(format: "%02x", opcode) == (packet["opcode"] as? String)?.lowercased())
    }
    let connection = try #require(try Self.connections(capturePath("air/att_only_export.pcap")).first)
    #expect(Self.air(connection)["retransmissions"] as? Int == 0 && Self.air(connection)["missed"] as? Int == 0)
    // Responses find their requests (and so their handles): the Read Responses name theirs.
    let reads = frames.filter { ($0["att"] as? [String: Any])?["opcode"] as? Int == 0x0B }
    #expect(!reads.isEmpty && reads.allSatisfy { ($0["att"] as? [String: Any])?["handle"] != nil })
  }

  // MARK: 8, 9, 10. Sniffers that get things wrong

  @Test func aWrongDirectionFlagIsCorrectedByTheMIC() throws {
    let truth = try Self.truth("air/encrypted_hr_session_flipped_sniffed")
    let wrong = try #require((truth["scenario"] as? [String: Any])?["direction_flag_wrong"] as? [[String: Any]])
    let frames = try Self.frames(capturePath("air/encrypted_hr_session_flipped_sniffed.pcap"))
    for entry in wrong {
      let frame = try #require(frames.first { $0["frame"] as? Int == entry["frame"] as? Int })
      #expect(frame["from"] as? String == entry["true_direction"] as? String && frame["from_source"] as? String == "mic")
    }
    let connection = try #require(try Self.connections(capturePath("air/encrypted_hr_session_flipped_sniffed.pcap")).first)
    #expect(Self.air(connection)["decrypted"] as? Int == 59 && Self.air(connection)["sealed"] as? Int == 0)
    #expect(Self.air(connection)["missed"] as? Int == 0)
    #expect(SniffedSessionTests.summaryFacts(capturePath("air/encrypted_hr_session_flipped_sniffed.pcap"))
      == SniffedSessionTests.summaryFacts(capturePath("encrypted_hr_session.btsnoop")))
  }

  @Test func packetsStoredAlreadyDecryptedAreDecodedAsPlainText() throws {
    let truth = try Self.truth("air/encrypted_hr_session_plaintext_sniffed")
    let stored = try #require(((truth["scenario"] as? [String: Any])?["stored_decrypted"] as? [String: Any])?["frames"] as? [Int])
    let path = capturePath("air/encrypted_hr_session_plaintext_sniffed.pcap")
    let connection = try #require(try Self.connections(path).first)
    // All but the one stored with a bad CRC (#91: not decoded at all).
    #expect(Self.air(connection)["stored_decrypted"] as? Int == stored.count - 1)
    #expect(Self.air(connection)["sealed"] as? Int == 0 && Self.security(connection)["encrypted"] as? Bool == true)
    #expect(SniffedSessionTests.summaryFacts(path) == SniffedSessionTests.summaryFacts(capturePath("encrypted_hr_session.btsnoop")))
    #expect(SniffedSessionTests.heartRateRows([path]) == SniffedSessionTests.heartRateRows([capturePath("encrypted_hr_session.btsnoop")]))
  }

  @Test func aBrokenRecordClockNeitherEndsTheLinkNorCutsThePairingOff() throws {
    let path = capturePath("air/hr_strap_clock_back_sniffed.pcap")
    let connections = try Self.connections(path)
    #expect(connections.count == 1)
    let connection = try #require(connections.first)
    // The pairing (Just Works) stays on the link, so its key opens the link.
    #expect(Self.security(connection)["pairing_frame"] != nil && Self.air(connection)["decrypted"] as? Int == 59)
    #expect(SniffedSessionTests.summaryFacts(path) == SniffedSessionTests.summaryFacts(capturePath("encrypted_hr_session.btsnoop")))
    // Said once.
    let verbose = runCLI(["-v", "--no-cache", path]).stdout
    #expect(verbose.components(separatedBy: "the capture's record clock is broken").count == 2)
    #expect(verbose.contains("records are timed by the sniffer's own clock"))
  }

  // MARK: 11. Key recovery

  @Test func aLegacyPairingWithoutItsConfirmsGivesItsKeyByTheMIC() throws {
    let truth = try Self.truth("air/legacy_pairing_no_confirms_sniffed")
    let stk = try #require((truth["encryption"] as? [String: Any])?["stk"] as? String ?? (truth["pairing"] as? [String: Any])?["stk"] as? String)
    let result = runCLI(["summary", "--no-cache", capturePath("air/legacy_pairing_no_confirms_sniffed.pcap")])
    #expect(result.stderr.contains("5 packets decrypted with the STK worked out from the pairing's randoms"), "\(result.stderr)")
    #expect(result.stderr.contains("(TK 0, as Just Works uses), key " + stk.uppercased()))
    // The passkey one: by --passkey, or by a search.
    let passkey = capturePath("air/legacy_pairing_no_confirms_passkey_sniffed.pcap")
    let sealed = try #require(try Self.connections(passkey).first)
    #expect(Self.air(sealed)["sealed"] as? Int == 5)
    for options in [["--passkey", "123"], ["--find-passkey"]] {
      let opened = try #require(try Self.connections(passkey, options).first)
      #expect(Self.air(opened)["decrypted"] as? Int == 5 && Self.air(opened)["sealed"] as? Int == 0, "\(options)")
    }
    #expect(runCLI(["summary", "--no-cache", "--passkey", "123", passkey]).stderr.contains("(passkey 000123), key "))
  }

  @Test func anOutOfBandTKIsTakenAndWhatFitsNothingIsSaid() throws {
    let path = capturePath("air/oob_pairing_sniffed.pcap")
    let truth = try Self.truth("air/oob_pairing_sniffed")
    let tk = try #require((truth["pairing"] as? [String: Any])?["tk"] as? String)
    let opened = try #require(try Self.connections(path, ["--tk", tk]).first)
    #expect(Self.air(opened)["decrypted"] as? Int == 5)
    #expect(runCLI(["summary", "--no-cache", path]).stdout.contains("try --ltk, --keys-from or --tk HEX"))
    // A key for a device not in the capture, a passkey that fits no pairing.
    let result = runCLI(["summary", "--no-cache", "--passkey", "5", "--ltk", "00112233445566778899AABBCCDDEEFF@11:22:33:44:55:66", capturePath("air/encrypted_hr_session_sniffed.pcap")])
    #expect(result.stderr.contains("the key 00112233445566778899AABBCCDDEEFF (--ltk) opened no link: no sniffed link of 11:22:33:44:55:66 in this capture"), "\(result.stderr)")
    #expect(result.stderr.contains("--passkey: passkey 000005 fits nothing: no legacy pairing of this capture fits it"))
    #expect(runCLI(["summary", "--no-cache", "--tk", "zz", path]).status == 64)
  }

  // MARK: 12. Packets the sniffer missed

  @Test func theMissedFindInformationResponseIsSaidOnTheNextPacket() throws {
    let frames = try Self.frames(capturePath("air/hr_strap_session_sniffed_impaired.pcap"))
    // #132 asks; the peripheral's response went unheard; the central's NESN at #135 says so.
    let notes = frames.filter { ($0["frame"] as? Int ?? 0) > 132 && ($0["frame"] as? Int ?? 0) <= 135 }
      .flatMap { ($0["diagnostics"] as? [[String: Any]]) ?? [] }.compactMap { $0["message"] as? String }
    #expect(notes.contains { $0.contains("from the peripheral missed by the sniffer") && $0.contains("NESN acknowledges one not heard") }, "\(notes)")
  }

  // MARK: 14. Vendor debug records

  @Test func androidDebugRecordsOnHandle0x0EDCAreNoConnection() throws {
    let truth = try Self.truth("android_debug_records")
    let debug = Set(try #require(truth["debug"] as? [[String: Any]]).compactMap { $0["frame"] as? Int })
    #expect(debug.count == truth["debug_records"] as? Int)
    let connections = try Self.connections(capturePath("android_debug_records.btsnoop"))
    #expect(connections.count == 1 && connections.first?["handle"] as? Int == 1)
    let frames = try Self.frames(capturePath("android_debug_records.btsnoop"))
    let named = Set(frames.filter { $0["name"] as? String == "Vendor debug record" }.compactMap { $0["frame"] as? Int })
    #expect(named == debug)
    #expect(frames.filter { debug.contains($0["frame"] as? Int ?? 0) }.allSatisfy { $0["att"] == nil && $0["l2cap"] == nil && $0["conn"] == nil })
  }
}

extension ConclusionTests {
  // MARK: 18. Unknown peers are named as what they are

  @Test func aLateStartConnectionIsNamedAsAPeerUnknownAndItsMeaningAsInferred() throws {
    let path = capturePath("late_midstream.btsnoop")
    let result = runCLI(["hr", "--no-cache", path])
    let rows = result.stdout.split(separator: "\n").dropFirst()
    #expect(!rows.isEmpty && rows.allSatisfy { $0.contains(" conn 1 (peer unknown) ") } && !result.stdout.contains("hci0 conn"), "\(result.stdout.prefix(300))")
    #expect(result.stderr.contains("conn 1 (peer unknown): handle 0x0010 is taken as Heart Rate Measurement by inference from the values"), "\(result.stderr)")
    #expect(result.stderr.components(separatedBy: "is taken as Heart Rate Measurement").count == 2)
    let json = runCLI(["hr", "--json", "--no-cache", path]).stdout.split(separator: "\n")
    let line = try #require(json.first)
    let first = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    #expect(first["device"] as? String == "conn 1 (peer unknown)" && first["meaning"] as? String == "inferred")
    // Known from the capture's discovery: no such key.
    let known = runCLI(["hr", "--json", "--no-cache", capturePath("hr_strap_session.btsnoop")]).stdout
    #expect(!known.contains("\"meaning\""))
  }

  // MARK: Acceptance: what the generated sniffed sessions say is the HCI capture's

  @Test(arguments: ["encrypted_hr_session_flipped_sniffed", "encrypted_hr_session_plaintext_sniffed", "hr_strap_clock_back_sniffed"])
  func aVariantOfTheEncryptedSessionReadsAsItsHCICapture(name: String) throws {
    let sniffed = capturePath("air/\(name).pcap")
    let hci = capturePath("encrypted_hr_session.btsnoop")
    #expect(SniffedSessionTests.heartRateRows([sniffed]) == SniffedSessionTests.heartRateRows([hci]))
    func table(_ path: String) -> String {
      runCLI(["gatt", "--no-cache", path]).stdout.replacingOccurrences(of: #" +#[0-9]+"#, with: "", options: .regularExpression)
    }
    #expect(table(sniffed) == table(hci))
    let diff = runCLI(["diff", "--no-cache", hci, sniffed])
    #expect(diff.status == 0, "\(diff.stdout)")
  }
}

extension ConclusionTests {
  // MARK: 15. "notifications stopped"

  /// Said only of a silence no value followed: broken_b's strap is silent for 16 s mid-link and
  /// then notifies again (it used to be called stopped); a silence to the link's end still is.
  @Test func notificationsStoppedOnlyWhenNoValueCameAfter() throws {
    let summary = runCLI(["summary", "--no-cache", capturePath("diff/broken_b.btsnoop")]).stdout
    let row = try #require(summary.split(separator: "\n").first { $0.contains("Heart Rate Measurement  0x0010") })
    #expect(row.contains("16.005 s after 29.489 s") && !row.contains("stopped"), "\(row)")
    var activity = CharacteristicActivity(handle: 0x10, uuid: nil, name: nil, isDescriptor: false)
    for second in 0..<10 { activity.notePush(indication: false, at: Int64(second) * 1_000_000, frame: second + 1) }
    let atTheEnd = Gap(start: 9_000_000, microseconds: 10_000_000, untilEnd: true)
    let midway = Gap(start: 4_000_000, microseconds: 10_000_000, untilEnd: false, endFrame: 6)
    #expect(SummaryText.stopped(atTheEnd, activity) && !SummaryText.stopped(midway, activity))
  }
}
