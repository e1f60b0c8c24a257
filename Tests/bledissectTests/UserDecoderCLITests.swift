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
    #expect(result.stdout.contains("Heart Rate Measurement: bpm 74, sensor contact detected, rr intervals 810.5 ms"))
    let json = runCLI(["--no-cache", "--json", "--decoders", Self.example, capturePath("hr_strap_session.btsnoop")])
    #expect(json.stdout.contains(#""decoded":{"hrm":{"flags":22,"bpm":74,"sensor_contact":3,"sensor_contact_name":"detected","rr_intervals":[810.546875]}}"#))
  }

  @Test func aHandleDecoderNamesAnUnknownHandle() {
    let text = #"{"format":"bledissect-decoders","version":1,"decoders":[{"handle":24,"name":"Strap Battery","fields":[{"name":"charge","type":"u8","unit":"%"}]}]}"#
    let path = temporaryFile(Array(text.utf8))
    defer { unlink(path) }
    let result = runCLI(["--no-cache", "-1", "--decoders", path, capturePath("late_midstream.btsnoop")])
    #expect(result.stdout.contains("Notify 0x0018 Strap Battery: charge 90 %"))
  }

  @Test func theConfigDirectoryIsRead() throws {
    let config = NSTemporaryDirectory() + "bledissect-config-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    defer { try? FileManager.default.removeItem(atPath: config) }
    try FileManager.default.createDirectory(atPath: config + "/bledissect/decoders", withIntermediateDirectories: true)
    try FileManager.default.copyItem(atPath: Self.example, toPath: config + "/bledissect/decoders/hr.json")
    let result = runCLI(["--no-cache", "-1", capturePath("hr_strap_session.btsnoop")], environment: ["XDG_CONFIG_HOME": config])
    #expect(result.stdout.contains("Heart Rate Measurement: bpm 74, sensor contact detected"))
  }

  @Test func aBadDecoderFileIsOneLine() {
    let path = temporaryFile(Array(#"{"format":"bledissect-decoders","version":1,"decoders":[{"uuid":"2a37","fields":[{"name":"x","type":"u9"}]}]}"#.utf8))
    defer { unlink(path) }
    let result = runCLI(["--decoders", path, capturePath("hr_strap_session.btsnoop")])
    #expect(result.status == 64)
    #expect(result.stderr.hasPrefix("bledissect: \(path):1: decoders[0].fields[0].type: unknown type 'u9'"))
    #expect(result.stdout.isEmpty)
  }
}
