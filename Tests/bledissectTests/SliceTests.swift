import BLECapture
import BLECore
import BLEDecoder
import BLETestSupport
import Foundation
import Testing

@testable import bledissect

/// `annotate -w FILE` with filters: the chosen frames and the context they need to decode the
/// same (CaptureSlice.swift), and the filters it takes.
@Suite struct SliceTests {
  /// Writes a slice; returns the command's result and the slice's path (the caller unlinks it).
  static func slice(_ arguments: [String], _ capture: String, suffix: String = ".btsnoop") -> (CLIResult, String) {
    let path = NSTemporaryDirectory() + "bledissect-slice-\(UUID().uuidString)\(suffix)"
    return (runCLI(["--no-cache"] + arguments + ["-w", path, capture]), path)
  }

  /// `hr`'s rows by UTC time, without the frame column (frame numbers change in a slice).
  static func rows(_ capture: String) -> [String] {
    let result = runCLI(["hr", "--no-cache", "--csv", "-t", "abs", capture])
    return result.stdout.split(separator: "\n").map { $0.split(separator: ",", maxSplits: 1).last.map(String.init) ?? "" }
  }

  static func frameCount(_ capture: String) throws -> Int {
    let reader = try CaptureFile.open(path: capture)
    var count = 0
    while try reader.next() != nil { count += 1 }
    return count
  }

  /// The acceptance case: the heart-rate slice of a session gives the same `hr` rows with far
  /// fewer frames (the Reset Energy Expended write stays: without it a drop in energy would be
  /// flagged energy_backwards).
  @Test func heartRateSliceGivesTheSameRows() throws {
    let capture = capturePath("hr_strap_session.btsnoop")
    let (result, path) = Self.slice(["--uuid", "2a37"], capture)
    defer { unlink(path) }
    #expect(result.status == 0 && result.stdout.isEmpty)
    let whole = Self.rows(capture)
    #expect(whole.count == 22 && whole.contains { $0.contains(",150,detected,0,") })
    #expect(Self.rows(path) == whole)
    let frames = try Self.frameCount(path)
    let all = try Self.frameCount(capture)
    #expect(frames == 70 && frames * 2 < all)
    #expect(result.stderr.hasSuffix(
      "70 of 160 frames written to \(path): 23 chosen, 47 for context (connection events 7, ATT MTU exchange 2, GATT discovery 34, subscription 2, writes to their services 2)\n"))
    // Notifications alone (no CCCD write chosen) still decode: the subscription and the
    // discovery that names handle 0x0010 come as context.
    let (bare, barePath) = Self.slice(["--handle", "0x0010", "--opcode", "0x1b"], capture)
    defer { unlink(barePath) }
    #expect(bare.status == 0 && bare.stderr.contains("21 chosen, 49 for context (connection events 7, ATT MTU exchange 2, GATT discovery 34, subscription 4, writes to their services 2)"))
    #expect(Self.rows(barePath) == whole)
  }

  /// A later connection's notifications need the discovery the first connection made: kept, with
  /// that connection's events and MTU exchange (they name the device and size its PDUs).
  @Test func discoveryFromAnEarlierConnectionIsKept() throws {
    let capture = capturePath("reconnect_cached.btsnoop")
    let (result, path) = Self.slice(["--from", "0.33", "--uuid", "2a37"], capture)
    defer { unlink(path) }
    #expect(result.status == 0)
    #expect(Self.rows(path) == Array(Self.rows(capture).prefix(1)) + Array(Self.rows(capture).suffix(5)))
    let text = runCLI(["-1", "--no-cache", path]).stdout
    #expect(text.contains("0x0010: 79 bpm, contact — Heart Rate Measurement"))
    #expect(!text.contains(": 74 bpm"))  // the first connection's values are not chosen
    #expect(result.stderr.contains("7 chosen, 45 for context (connection events 7, ATT MTU exchange 4, GATT discovery 32, writes to their services 2)"))
  }

  /// Pairing and encryption come along, so the slice is still an encrypted link.
  @Test func pairingAndEncryptionAreKept() throws {
    let capture = capturePath("encrypted_hr_session.btsnoop")
    let (result, path) = Self.slice(["--uuid", "2a37"], capture, suffix: ".pcapng")
    defer { unlink(path) }
    #expect(result.stderr.contains("pairing and encryption 16"))
    #expect(Self.rows(path) == Self.rows(capture))
    let summary = runCLI(["summary", "--no-cache", path]).stdout
    #expect(summary.contains("encrypted"))
    #expect(runCLI(["summary", "--no-cache", capture]).stdout.contains("encrypted"))
  }

  /// pcapng says why each added frame is there; the chosen frames carry no comment.
  @Test(.enabled(if: which("tshark") != nil, "tshark is not installed"))
  func contextFramesSayWhyInWireshark() throws {
    let (result, path) = Self.slice(["--uuid", "2a37"], capture: capturePath("hr_strap_session.btsnoop"))
    defer { unlink(path) }
    #expect(result.status == 0)
    let (status, data) = try runProgram(which("tshark")!, ["-r", path, "-T", "fields", "-e", "frame.comment"])
    #expect(status == 0)
    let comments = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).dropLast()
    #expect(comments.count == 70)
    #expect(comments.filter(\.isEmpty).count == 23)
    #expect(comments.filter { $0 == "bledissect: kept for the chosen frames' GATT discovery" }.count == 34)
    #expect(comments.filter { $0 == "bledissect: kept for the chosen frames' connection events" }.count == 7)
  }

  static func slice(_ arguments: [String], capture: String) -> (CLIResult, String) { slice(arguments, capture, suffix: ".pcapng") }

  /// A sniffed link is kept whole (event counting, lost-packet tests and decryption need every
  /// packet): its ATT decodes the same, advertising of other devices left out.
  @Test(.enabled(if: sharedCorpusHas("ll_sniffer/bsniffhub_encrypted_packet_missing_dlt272.pcap"), "../shared/corpus is absent"))
  func sniffedLinkSliceDecodesTheSame() throws {
    let capture = corpusRoot!.appendingPathComponent("ll_sniffer/bsniffhub_encrypted_packet_missing_dlt272.pcap").path
    let (result, path) = Self.slice(["--layer", "att"], capture: capture)
    defer { unlink(path) }
    #expect(result.status == 0)
    #expect(result.stderr.contains("1519 of 1529 frames written to \(path): 18 chosen, 1501 for context (sniffed link 1501)"))
    func attLines(_ file: String) -> [Substring] {
      runCLI(["-1", "--no-cache", "--layer", "att", "-t", "abs", file]).stdout.split(separator: "\n").map { $0.drop { $0 != " " } }
    }
    let ours = attLines(path)
    #expect(ours.count == 18 && ours == attLines(capture))
    #expect(runCLI(["info", path]).stdout.contains("link type 256"))
    // An HCI format cannot carry air packets: said, not written empty.
    let (refused, btsnoop) = Self.slice(["--layer", "att"], capture)
    defer { unlink(btsnoop) }
    #expect(refused.status == 64 && refused.stderr.contains("needs a .pcapng or .pcap name"))
  }

  @Test func slicesRefuseWhatTheyCannotDo() {
    let capture = capturePath("hr_strap_session.btsnoop")
    let stdin = runCLI(["--uuid", "2a37", "-w", "/tmp/x.btsnoop", "-"])
    #expect(stdin.status == 64 && stdin.stderr.contains("-w reads the capture twice"))
    let over = runCLI(["--uuid", "2a37", "-w", capture, capture])
    #expect(over.status == 64 && over.stderr.contains("-w cannot write over its input"))
    let (nothing, path) = Self.slice(["--conn", "0x40"], capture)
    defer { unlink(path) }
    #expect(nothing.status == 0 && nothing.stderr.contains("no frame matched the filters (160 frames read)"))
    #expect((try? Self.frameCount(path)) == 0)
  }
}

/// The filters annotate and slices take: each by the frames it passes.
@Suite struct FrameFilterOptionTests {
  static func headers(_ arguments: [String]) -> [String] {
    runCLI(["-1", "--no-cache"] + arguments + [capturePath("hr_strap_session.btsnoop")]).stdout.split(separator: "\n").map {
      String($0.prefix { $0 != " " })
    }
  }

  /// --peer takes the device's own advertising and the connection request to it (#33 on).
  @Test func peerTakesAdvertisingAndTheConnectionRequest() {
    let frames = Self.headers(["--peer", "D0:B1:ED:00:48:52"])
    #expect(frames.prefix(4) == ["#33", "#34", "#37", "#39"])
    #expect(Self.headers(["--name", "BLEDISSECT"]) == frames)  // the advertised name, any case
    #expect(Self.headers(["--name", "no such strap"]).isEmpty)
  }

  @Test func opcodeByNumberOrName() {
    let notifications = Self.headers(["--opcode", "handle_value_notification"])
    #expect(notifications.count == 22)
    #expect(Self.headers(["--opcode", "0x1b"]) == notifications)
    #expect(Self.headers(["--opcode", "Handle Value Notification"]) == notifications)
    #expect(Self.headers(["--opcode", "0x02", "--opcode", "0x03"]) == ["#40", "#42"])
  }

  @Test func timeWindowInSecondsOrUTC() {
    #expect(Self.headers(["--from", "10", "--to", "10.5"]) == ["#140"])
    let utc = runCLI(["-1", "-t", "abs", capturePath("hr_strap_session.btsnoop")]).stdout.split(separator: "\n")
      .first { $0.hasPrefix("#140 ") }.map { $0.split(separator: " ")[1...2].joined(separator: "T") }
    let time = try! #require(utc)
    #expect(Self.headers(["--from", time + "Z", "--to", time]) == ["#140"])
    #expect(FilterTime("2026-12-06T05:37:27Z") == .absolute(1_796_535_447_000_000))
    #expect(FilterTime("2000-02-29T00:00:00.25") == .absolute(951_782_400_250_000))
    #expect(FilterTime("1970-01-01T00:00:01") == .absolute(1_000_000))
    #expect(FilterTime("2026-13-01T00:00:00") == nil && FilterTime("yesterday") == nil && FilterTime("nan") == nil)
    #expect(FilterTime.sinceStart(seconds: .infinity).microseconds(since: 5) == 9_000_000_000_000_000_005)  // clamped, not a trap
  }

  /// --errors: warnings, parts that did not decode, and frames proving a rule broken.
  @Test func errorsTakesWarningsAndFindings() {
    let broken = runCLI(["-1", "--no-cache", "--errors", capturePath("check/att_01.btsnoop")])
    #expect(broken.status == 0 && broken.stdout.contains("[! ATT-01]"))
    let clean = runCLI(["-1", "--no-cache", "--errors", capturePath("hr_strap_session.btsnoop")])
    #expect(clean.stdout.isEmpty && clean.stderr == "bledissect: \(capturePath("hr_strap_session.btsnoop")): no frame matched the filters (160 frames read)\n")
  }

  @Test func badValuesAreUsageErrors() {
    for (option, value, words) in [
      ("--opcode", "0x100", "--opcode needs an ATT opcode"), ("--opcode", "shout", "--opcode needs an ATT opcode"),
      ("--from", "noon", "--from needs seconds since the first frame"), ("--name", "", "--name needs a device name"),
    ] {
      let result = runCLI([option, value, capturePath("hr_strap_session.btsnoop")])
      #expect(result.status == 64 && result.stderr.contains(words), "\(option) \(value): \(result.stderr)")
    }
  }
}
