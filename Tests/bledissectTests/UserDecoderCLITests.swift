import Foundation
import Testing

import BLETestSupport
@testable import bledissect

/// `--decoders FILE` and the config directory, through the command line.
@Suite struct UserDecoderCLITests {
  static let example = repositoryRoot.appendingPathComponent("docs/examples/heart-rate.decoders.json").path

  @Test func aDecoderFileReplacesTheBuiltInDecoder() {
    let result = runCLI(["--no-cache", "-1", "--decoders", Self.example, capturePath("hr_strap_session.btsnoop")])
    #expect(result.status == 0)
    // Frame 132 of the session: flags 0x16, 74 bpm, one RR interval of 830/1024 s.
    #expect(result.stdout.contains("0x0010: bpm 74, sensor contact detected, rr intervals 810.5 ms — Heart Rate Measurement"))
    let json = runCLI(["--no-cache", "--json", "--decoders", Self.example, capturePath("hr_strap_session.btsnoop")])
    #expect(json.stdout.contains(#""decoded":{"hrm":{"flags":22,"bpm":74,"sensor_contact":3,"sensor_contact_name":"detected","rr_intervals":[810.546875]}}"#))
  }

  @Test func aHandleDecoderNamesAnUnknownHandle() {
    let text = #"{"format":"bledissect-decoders","version":1,"decoders":[{"handle":24,"name":"Strap Battery","fields":[{"name":"charge","type":"u8","unit":"%"}]}]}"#
    let path = temporaryFile(Array(text.utf8))
    defer { unlink(path) }
    let result = runCLI(["--no-cache", "-1", "--decoders", path, capturePath("late_midstream.btsnoop")])
    #expect(result.stdout.contains("Notify 0x0018: charge 90 % — Strap Battery"))
  }

  @Test func theConfigDirectoryIsRead() throws {
    let config = NSTemporaryDirectory() + "bledissect-config-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    defer { try? FileManager.default.removeItem(atPath: config) }
    try FileManager.default.createDirectory(atPath: config + "/bledissect/decoders", withIntermediateDirectories: true)
    try FileManager.default.copyItem(atPath: Self.example, toPath: config + "/bledissect/decoders/hr.json")
    let result = runCLI(["--no-cache", "-1", capturePath("hr_strap_session.btsnoop")], environment: ["XDG_CONFIG_HOME": config])
    #expect(result.stdout.contains("0x0010: bpm 74, sensor contact detected"))
  }

  @Test func aBadDecoderFileIsOneLine() {
    let path = temporaryFile(Array(#"{"format":"bledissect-decoders","version":1,"decoders":[{"uuid":"2a37","fields":[{"name":"x","type":"u9"}]}]}"#.utf8))
    defer { unlink(path) }
    let result = runCLI(["--decoders", path, capturePath("hr_strap_session.btsnoop")])
    #expect(result.status == 64)
    #expect(result.stderr.hasPrefix("bledissect: \(path):1: decoders[0].fields[0].type: unknown type 'u9'"))
    #expect(result.stdout.isEmpty)
  }

  /// A user's decoder of a standard characteristic changes what annotate shows, not what the
  /// analyses read: hr, summary (text and JSON) give the same heart-rate and battery figures
  /// with the example file as without it (the built-in value is still decoded beside it).
  @Test func aUserDecoderOfAStandardCharacteristicLeavesTheAnalysesTheirFacts() {
    let session = capturePath("hr_strap_session.btsnoop")
    for view in [["hr"], ["hr", "--csv"], ["summary"], ["summary", "--json"]] {
      let plain = runCLI(view + ["--no-cache", session])
      let declared = runCLI(view + ["--no-cache", "--decoders", Self.example, session])
      #expect(plain.status == 0 && plain.stdout.count > 500, "\(view)")
      #expect(declared.stdout == plain.stdout, "\(view)")
      #expect(declared.stderr == plain.stderr, "\(view)")
      #expect(declared.status == plain.status)
    }
    let hr = runCLI(["hr", "--no-cache", "--decoders", Self.example, session]).stdout.split(separator: "\n")
    #expect(hr.count == 22)
    #expect(hr.contains { $0.hasPrefix("#132 ") && $0.contains(" 74 detected ") && $0.hasSuffix(" 810.5") })
    let summary = runCLI(["summary", "--no-cache", "--decoders", Self.example, session]).stdout
    #expect(summary.contains("  heart rate  72 / 113.0 / 184 bpm (min / mean / max), 21 measurements\n"))
    #expect(summary.contains("  battery     87 % at 0.331 s → 86 % at 16.360 s"))
  }

  /// A user's format that does not fit a value the built-in decoder reads (Battery Level
  /// declared as two bytes): annotate flags it malformed, as the user's format says; the
  /// analyses still read the built-in value.
  @Test func aUserFormatThatDoesNotFitLeavesTheBuiltInValue() {
    let text = #"{"format":"bledissect-decoders","version":1,"decoders":[{"uuid":"2a19","name":"Battery Level","fields":[{"name":"percent","type":"u16","unit":"%"}]}]}"#
    let path = temporaryFile(Array(text.utf8))
    defer { unlink(path) }
    let session = capturePath("hr_strap_session.btsnoop")
    #expect(runCLI(["--no-cache", "-1", "--decoders", path, session]).stdout.contains("Read Response 0x0018: malformed value 57 — Battery Level  [malformed]"))
    let summary = runCLI(["summary", "--no-cache", "--decoders", path, session]).stdout
    #expect(summary.contains("  battery     87 % at 0.331 s → 86 % at 16.360 s"))
    #expect(summary == runCLI(["summary", "--no-cache", session]).stdout)
  }
}
