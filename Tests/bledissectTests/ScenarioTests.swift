import Foundation
import Testing
import BLECapture
import BLECore
import BLERender
import BLEDecoder
import BLETestSupport

/// End-to-end decoding of the Bumble-made captures (captures/README.md), in every container
/// format: btsnoop as written, and pklg, pcap and pcapng written by our own writers.
@Suite struct ScenarioTests {
  /// pcap link type 187 carries no direction: ACL direction is inferred from the packet boundary flags.
  static let containers: [CaptureWriteFormat?] = [nil, .packetLogger(bigEndian: true), .pcapH4WithDirection, .pcapngH4WithDirection, .pcapH4]

  /// Every frame of a capture, dissected, after conversion to `container` (nil: as it is).
  static func frames(_ name: String, _ container: CaptureWriteFormat?) throws -> [DissectedFrame] {
    var path = capturePath(name)
    if let container {
      let records = try readRecords(path)
      var writer = CaptureWriter(format: container)
      for record in records { writer.write(record) }
      #expect(writer.skipped == 0)
      path = temporaryFile(writer.output)
    }
    let reader = try CaptureFile.open(path: path)
    var dissector = Dissector()
    var result: [DissectedFrame] = []
    var number = 0
    while let record = try reader.next() {
      number += 1
      var frame = DissectedFrame()
      dissector.dissect(record, number: number, into: &frame)
      result.append(frame)
    }
    return result
  }

  static func readRecords(_ path: String) throws -> [CaptureRecord] {
    let reader = try CaptureFile.open(path: path)
    var records: [CaptureRecord] = []
    while let record = try reader.next() { records.append(record) }
    return records
  }

  struct Measurement: Equatable, CustomStringConvertible {
    var bpm: UInt64
    var contact: String
    var energy: UInt64?
    var rr: [UInt64]
    var description: String { "\(bpm) \(contact) \(energy.map(String.init) ?? "-") \(rr)" }
  }

  /// The heart-rate measurements of the frames, in order, from their `decoded` fields.
  static func measurements(_ frames: [DissectedFrame], peer: String? = nil) -> [Measurement] {
    frames.compactMap { frame -> Measurement? in
      if let peer, frame.connection?.peer?.description != peer { return nil }
      let fields = frame.fields
      guard let bpm = fields.number("decoded.heart_rate_measurement.bpm") else { return nil }
      return Measurement(
        bpm: bpm, contact: fields.string("decoded.heart_rate_measurement.sensor_contact") ?? "?",
        energy: fields.number("decoded.heart_rate_measurement.energy_expended_kj"),
        rr: fields.numbers("decoded.heart_rate_measurement.rr_intervals"))
    }
  }

  /// Scripts/captures/make_hr_session.py HR_MEASUREMENTS (bpm, contact, energy kJ, RR in 1/1024 s).
  static let strapSession: [Measurement] = [
    .init(bpm: 72, contact: "not_detected", energy: nil, rr: []),
    .init(bpm: 73, contact: "not_detected", energy: nil, rr: []),
    .init(bpm: 74, contact: "detected", energy: nil, rr: [830]),
    .init(bpm: 75, contact: "detected", energy: 12, rr: [819]),
    .init(bpm: 78, contact: "detected", energy: nil, rr: [790, 785]),
    .init(bpm: 80, contact: "detected", energy: nil, rr: []),
    .init(bpm: 82, contact: "detected", energy: 15, rr: [750]),
    .init(bpm: 90, contact: "detected", energy: 18, rr: []),
    .init(bpm: 96, contact: "not_detected", energy: 20, rr: []),
    .init(bpm: 99, contact: "detected", energy: nil, rr: [620]),
    .init(bpm: 101, contact: "not_detected", energy: nil, rr: [610, 605, 600]),
    .init(bpm: 118, contact: "not_detected", energy: 27, rr: []),
    .init(bpm: 135, contact: "detected", energy: 31, rr: [520, 515, 510]),
    .init(bpm: 150, contact: "detected", energy: 0, rr: [410, 408]),
    .init(bpm: 160, contact: "detected", energy: 1, rr: [384]),
    .init(bpm: 184, contact: "detected", energy: nil, rr: [335, 334, 333, 334, 335, 336, 334, 333, 332]),
    .init(bpm: 180, contact: "detected", energy: 2, rr: [341, 340, 342, 341, 340, 339, 341, 342]),
    .init(bpm: 170, contact: "not_detected", energy: nil, rr: [361, 362]),
    .init(bpm: 140, contact: "not_detected", energy: nil, rr: []),
    .init(bpm: 120, contact: "not_detected", energy: 3, rr: [512]),
    .init(bpm: 95, contact: "detected", energy: 4, rr: [647, 650]),
  ]

  @Test(arguments: 0..<containers.count)
  func strapSessionDecodesEveryMeasurement(container: Int) throws {
    for name in ["hr_strap_session.btsnoop", "hr_strap_peripheral.btsnoop"] {
      let frames = try Self.frames(name, Self.containers[container])
      #expect(Self.measurements(frames) == Self.strapSession, "\(name)")
      // Battery: read 87 % (hr_strap_session.btsnoop frame 111 as `57`), later notified 86 %.
      let battery = frames.compactMap { $0.fields.number("decoded.battery_level.percent") }
      #expect(battery == [87, 86], "\(name)")
      #expect(frames.allSatisfy { $0.malformed == nil })
    }
  }

  @Test(arguments: 0..<containers.count)
  func twoStrapsAtOnceKeepTheirOwnValues(container: Int) throws {
    let frames = try Self.frames("two_straps.btsnoop", Self.containers[container])
    // Strap A notifies 60…80 bpm, strap B 140…160, interleaved, with identical handles.
    #expect(Self.measurements(frames, peer: "D0:B1:ED:00:48:52").map(\.bpm) == Array(60...80))
    #expect(Self.measurements(frames, peer: "D0:B1:ED:00:48:53").map(\.bpm) == Array(140...160))
    let names = frames.compactMap { frame -> String? in
      guard let name = frame.fields.string("decoded.device_name.value") else { return nil }
      return "\(frame.connection!.handle) \(name)"
    }
    #expect(names == ["1 bledissect HR A", "2 bledissect HR B"])
  }

  @Test(arguments: 0..<containers.count)
  func reconnectWithoutDiscoveryUsesCachedHandles(container: Int) throws {
    let frames = try Self.frames("reconnect_cached.btsnoop", Self.containers[container])
    let first = frames.filter { $0.connection?.generation == 1 }
    let second = frames.filter { $0.connection?.generation == 2 }
    #expect(Self.measurements(first).map(\.bpm) == Array(70...74))
    #expect(Self.measurements(second).map(\.bpm) == Array(75...79))
    // The second connection never discovers: its reads and writes still have their meaning.
    #expect(second.contains { $0.fields.number("decoded.battery_level.percent") == 86 })
    #expect(second.contains { $0.summaryText.contains("notifications enabled on Heart Rate Measurement") })
    #expect(!second.contains { $0.att?.opcode == 0x10 })
  }

  @Test(arguments: 0..<containers.count)
  func longValuesAreReassembled(container: Int) throws {
    for name in ["long_values.btsnoop", "long_values_peripheral.btsnoop"] {
      let frames = try Self.frames(name, Self.containers[container])
      let names = frames.compactMap { $0.fields.string("decoded.manufacturer_name_string.value") }
      let expected = "bledissect labs long manufacturer name: " + String(repeating: "0123456789", count: 8)
      // Read + 5 Read Blobs at MTU 23, then Read + 1 Read Blob at MTU 100: decoded once each.
      #expect(names == [expected, expected], "\(name)")
      // The prepared write of 50 bytes to 0x001b, applied at Execute Write.
      let written = frames.compactMap { $0.fields.string("att.written.0.value") }
      #expect(written == [Hex.string(Array("prepared write, fifty bytes: ABCDEFGHIJKLMNOPQRSTU".utf8))], "\(name)")
      #expect(frames.contains { $0.summaryText == "cancel 2 prepared writes" })
      // Read Multiple Variable, split per handle.
      #expect(frames.contains { $0.fields.string("att.values.0.decoded.model_number_string.value") == "LV-1" })
      // Notifications of 40 and 97 bytes: on the peripheral side the host fragments them.
      let long = frames.filter { $0.att?.opcode == 0x1B && ($0.fields.string("att.value")?.count ?? 0) >= 80 }
      #expect(long.map { $0.fields.string("att.value")!.count / 2 } == [40, 97], "\(name)")
      if name == "long_values_peripheral.btsnoop" {
        #expect(long.map { $0.fields.number("l2cap.fragments") } == [2, 4])
      }
    }
  }

  @Test(arguments: 0..<containers.count)
  func leCreditBasedChannel(container: Int) throws {
    let frames = try Self.frames("le_coc.btsnoop", Self.containers[container])
    let sdus = frames.compactMap { $0.fields.string("l2cap.sdu") }
    // The phone's 300-byte SDU (i & 0xff) in 5 K-frames, the strap's 300-byte answer ((0xff - i) & 0xff).
    #expect(sdus.contains(Hex.string((0..<300).map { UInt8($0 & 0xFF) })))
    #expect(sdus.contains(Hex.string((0..<300).map { UInt8((0xFF - $0) & 0xFF) })))
    #expect(frames.contains { $0.fields.number("l2cap.sdu_frames") == 5 })
    #expect(frames.allSatisfy { $0.malformed == nil })
  }

  @Test(arguments: 0..<containers.count)
  func eattBearersCarryATT(container: Int) throws {
    let frames = try Self.frames("eatt.btsnoop", Self.containers[container])
    // Heart-rate notifications 100…104 bpm arrive on the EATT bearer, not CID 4.
    let eatt = frames.filter { $0.fields.number("l2cap.cid") != 4 && $0.fields.number("decoded.heart_rate_measurement.bpm") != nil }
    #expect(Self.measurements(eatt).map(\.bpm) == Array(100...104))
  }
}

/// pcap link type 187 from a host that starts its ACL PDUs with packet boundary 10, as
/// controllers do: ATT semantics and the link's role place each PDU (issue 7).
@Suite struct DirectionInferenceTests {
  /// The records of `name` with every host ACL start marked 10, and no direction.
  static func hostStartsMarkedAsController(_ name: String) throws -> [CaptureRecord] {
    try ScenarioTests.readRecords(capturePath(name)).map { record in
      var copy = record
      if record.kind == .acl, record.direction == .hostToController, record.bytes.count >= 2, record.bytes[1] & 0x30 == 0x00 {
        copy.bytes[1] |= 0x20
      }
      return copy
    }
  }

  @Test(arguments: ["hr_strap_session.btsnoop", "two_straps.btsnoop", "reconnect_cached.btsnoop", "long_values.btsnoop"])
  func attDirectionsAreRecoveredWhenTheHostMarksStartsAsTheController(name: String) throws {
    let original = try ScenarioTests.frames(name, nil)
    var writer = CaptureWriter(format: .pcapH4)
    for record in try Self.hostStartsMarkedAsController(name) { writer.write(record) }
    let path = temporaryFile(writer.output)
    defer { unlink(path) }
    let reader = try CaptureFile.open(path: path)
    var dissector = Dissector()
    var inferred: [DissectedFrame] = []
    while let record = try reader.next() {
      var frame = DissectedFrame()
      dissector.dissect(record, number: inferred.count + 1, into: &frame)
      inferred.append(frame)
    }
    #expect(inferred.count == original.count)
    var attFrames = 0
    for (before, after) in zip(original, inferred) where before.fields.string("att.op") != nil || before.att != nil {
      attFrames += 1
      #expect(after.fields.string("inferred_direction") == (before.record.direction == .hostToController ? "tx" : "rx"), "\(name) #\(before.number)")
      #expect(after.summaryText == before.summaryText, "\(name) #\(before.number)")
    }
    #expect(attFrames > 20)
    #expect(!inferred.contains { frame in frame.diagnostics.contains { $0.kind == .attResponseWithoutRequest } })
    if name == "hr_strap_session.btsnoop" {
      #expect(ScenarioTests.measurements(inferred) == ScenarioTests.strapSession)
    }
  }
}
