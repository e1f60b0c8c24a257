import Foundation
import Testing
import BLECapture
import BLECore
import BLEDecoder
import BLERender
import BLETestSupport

/// Seeded random damage through the whole pipeline: nothing may trap, hang or grow without bound.
/// Each case names its seed, so a failure replays.
@Suite struct FuzzSmokeTests {
  static let samples = ["hr_strap_session.btsnoop", "long_values_peripheral.btsnoop", "eatt.btsnoop", "le_coc.btsnoop"]

  /// Flips bytes inside the records of real captures (headers intact), then decodes and renders
  /// every frame in both formats.
  @Test(arguments: samples)
  func mutatedCapturesDecodeWithoutTrapping(name: String) throws {
    let records = try ScenarioTests.readRecords(capturePath(name))
    var generator = SeededGenerator(seed: 0xF022 &+ UInt64(name.utf8.count))
    for round in 0..<40 {
      var dissector = Dissector()
      var frame = DissectedFrame()
      var text = TextRenderer(verbose: true)
      var json = JSONLinesRenderer()
      var textOut = OutputBuffer(fd: nil)
      var jsonOut = OutputBuffer(fd: nil)
      var damaged = 0
      for (index, original) in records.enumerated() {
        var record = original
        if !record.bytes.isEmpty, Int.random(in: 0..<4, using: &generator) == 0 {
          damaged += 1
          for _ in 0..<Int.random(in: 1...3, using: &generator) {
            let position = Int.random(in: 0..<record.bytes.count, using: &generator)
            record.bytes[position] = UInt8.random(in: 0...255, using: &generator)
          }
          if Int.random(in: 0..<8, using: &generator) == 0 {
            record.bytes = Array(record.bytes.prefix(Int.random(in: 0..<record.bytes.count, using: &generator)))
          }
        }
        dissector.dissect(record, number: index + 1, into: &frame)
        text.render(&frame, to: &textOut)
        json.render(&frame, to: &jsonOut)
      }
      // Every frame, damaged or not, got its header line and one JSON object numbered in order.
      let headers = textOut.text.split(separator: "\n").filter { $0.hasPrefix("#") }
      #expect(headers.count == records.count, "seed round \(round) of \(name)")
      let lines = jsonOut.text.split(separator: "\n")
      #expect(lines.count == records.count, "seed round \(round) of \(name)")
      for (index, line) in lines.enumerated() {
        let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        #expect(object?["frame"] as? Int == index + 1, "seed round \(round) of \(name), line \(index + 1)")
      }
      // Each sample has one connection, closed at its end: only a damaged record can leave one
      // open (its handle changed, its disconnect lost).
      #expect(dissector.connections.openConnections.count <= damaged, "seed round \(round) of \(name)")
    }
  }

  /// Random HCI packets of every kind, including random ATT and L2CAP on an open connection.
  @Test func randomPacketsDecodeWithoutTrapping() {
    var generator = SeededGenerator(seed: 0xB1ED)
    var dissector = Dissector()
    var frame = DissectedFrame()
    var out = OutputBuffer(fd: nil)
    var json = JSONLinesRenderer()
    // A connection for handle 0x0040 so ACL reaches L2CAP and ATT.
    let connect = CaptureRecord(timestamp: 0, direction: .controllerToHost, kind: .event,
      bytes: [0x3E, 0x13, 0x01, 0x00, 0x40, 0x00, 0x00, 0x01, 0x52, 0x48, 0x00, 0xED, 0xB1, 0xD0, 0x18, 0x00, 0x00, 0x00, 0x48, 0x00, 0x00])
    dissector.dissect(connect, number: 1, into: &frame)
    let kinds: [PacketKind] = [.command, .event, .acl, .sco, .iso, .note(.system), .note(.userLogging), .indexAdded, .indexInfo, .control(14), .other(9)]
    for number in 2..<20_000 {
      let kind = kinds[Int.random(in: 0..<kinds.count, using: &generator)]
      var bytes = (0..<Int.random(in: 0..<64, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
      if kind == .acl, bytes.count >= 8, Bool.random(using: &generator) {
        // Mostly well-formed headers on the open connection, to exercise the upper layers.
        let payload = bytes.count - 4
        bytes[0] = 0x40
        bytes[1] = UInt8([0x00, 0x10, 0x20][Int.random(in: 0..<3, using: &generator)])
        bytes[2] = UInt8(payload)
        bytes[3] = 0
        bytes[4] = UInt8(payload - 4)
        bytes[5] = 0
        bytes[6] = [0x04, 0x05, 0x06, 0x40, 0x41][Int.random(in: 0..<5, using: &generator)]
        bytes[7] = 0
      }
      let record = CaptureRecord(timestamp: Int64(number), direction: Bool.random(using: &generator) ? .hostToController : .controllerToHost, kind: kind, bytes: bytes)
      dissector.dissect(record, number: number, into: &frame)
      json.render(&frame, to: &out)
      if out.count > 1 << 22 { out = OutputBuffer(fd: nil) }
    }
    #expect(dissector.connections.openConnections.count < 5000)
  }
}
