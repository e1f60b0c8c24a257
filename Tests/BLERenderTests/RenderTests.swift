import Foundation
import Testing
import BLECapture
import BLECore
import BLEDecoder
import BLERender

@Suite struct RenderTests {
  @Test func textGoldenOfTheStrapSession() throws {
    let records = try readAll(path: capturePath("hr_strap_session.btsnoop"))
    var renderer = TextRenderer(time: .relative, color: false)
    assertSnapshot(render(records: records, with: &renderer), named: "hr_strap_session.txt")
  }

  @Test func verboseTextGoldenOfThePeripheralSide() throws {
    let records = try readAll(path: capturePath("hr_strap_peripheral.btsnoop"))
    var renderer = TextRenderer(time: .delta, color: false, verbose: true)
    assertSnapshot(render(records: records, with: &renderer), named: "hr_strap_peripheral.verbose.txt")
  }

  @Test func jsonGoldenOfTheStrapSession() throws {
    let records = try readAll(path: capturePath("hr_strap_session.btsnoop"))
    assertSnapshot(jsonLines(records), named: "hr_strap_session.jsonl")
  }

  /// Golden JSON Lines for every scenario capture: any change in what is decoded shows up here.
  @Test(arguments: [
    "hr_strap_peripheral.btsnoop", "two_straps.btsnoop", "reconnect_cached.btsnoop", "long_values.btsnoop",
    "long_values_peripheral.btsnoop", "vendor_services.btsnoop", "le_coc.btsnoop", "eatt.btsnoop",
  ])
  func jsonGoldenOfEveryScenario(name: String) throws {
    let records = try readAll(path: capturePath(name))
    assertSnapshot(jsonLines(records), named: name.replacingOccurrences(of: ".btsnoop", with: ".jsonl"))
  }

  @Test func textGoldenOfLongValues() throws {
    let records = try readAll(path: capturePath("long_values.btsnoop"))
    var renderer = TextRenderer(time: .relative, color: false)
    assertSnapshot(render(records: records, with: &renderer), named: "long_values.txt")
  }

  @Test func everyJSONLineIsValidJSONWithTheRequiredKeys() throws {
    let records = try readAll(path: capturePath("hr_strap_session.btsnoop"))
    let lines = jsonLines(records).split(separator: "\n")
    #expect(lines.count == 160)
    for (index, line) in lines.enumerated() {
      let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "line \(index + 1)")
      #expect(object["v"] as? Int == JSONLinesRenderer.schemaVersion)
      #expect(object["frame"] as? Int == index + 1)
      #expect(object["ts"] is Double)
      #expect(["tx", "rx"].contains(object["dir"] as? String))
      #expect(["command", "event", "acl"].contains(object["type"] as? String))
      #expect(object["index"] as? Int == 0)
      if object["type"] as? String == "acl" {
        #expect(object["conn"] as? Int == 1, "line \(index + 1)")
        #expect(object["peer"] as? String == "D0:B1:ED:00:48:52", "line \(index + 1)")
      }
    }
  }

  @Test func timestampsKeepMicroseconds() throws {
    let records = try readAll(path: capturePath("hr_strap_session.btsnoop"))
    let first = jsonLines([records[0]])
    let seconds = records[0].timestamp / 1_000_000
    let micros = records[0].timestamp % 1_000_000
    let fraction = String(micros).count < 6 ? String(repeating: "0", count: 6 - String(micros).count) + String(micros) : String(micros)
    #expect(first.contains("\"ts\":\(seconds).\(fraction),"))
  }

  /// The committed conversions (our PacketLogger writer, editcap's pcapng) and every format we
  /// write must decode to the same JSON as the original btsnoop, apart from what a format
  /// cannot carry (none of it applies to this session: one controller, no SCO, no notes).
  @Test(arguments: ["hr_strap_session.pklg", "hr_strap_session.pcapng"])
  func committedConversionsDecodeIdentically(name: String) throws {
    let original = jsonLines(try readAll(path: capturePath("hr_strap_session.btsnoop")))
    let converted = jsonLines(try readAll(path: capturePath(name)))
    #expect(converted == original)
  }

  @Test func everyWritableFormatDecodesIdentically() throws {
    let records = try readAll(path: capturePath("hr_strap_session.btsnoop"))
    let original = jsonLines(records)
    let formats: [CaptureWriteFormat] = [
      .btsnoopH4, .btsnoopH1, .btsnoopMonitor, .packetLogger(bigEndian: true), .packetLogger(bigEndian: false),
      .pcapH4WithDirection, .pcapMonitor, .pcapngH4WithDirection,
    ]
    for format in formats {
      var writer = CaptureWriter(format: format)
      for record in records { writer.write(record) }
      #expect(writer.skipped == 0)
      let decoded = jsonLines(try readAll(bytes: writer.output))
      #expect(decoded == original, "\(format)")
    }
  }

  @Test func jsonEscapesTextAndNestsArrays() {
    // A System Note with a quote, a backslash and a control character.
    let record = CaptureRecord(timestamp: 1_500_000, adapter: CaptureRecord.noController, direction: nil, kind: .note(.system), bytes: Array("say \"hi\"\\\u{1}\0".utf8))
    let line = jsonLines([record])
    #expect(line == #"{"v":3,"frame":1,"ts":1.500000,"type":"note","note_kind":"system","len":11,"name":"System Note","info":{"text":"say \"hi\"\\\u0001"}}"# + "\n")
  }

  @Test func jsonOfNumberOfCompletedPackets() {
    let record = CaptureRecord(timestamp: 0, direction: .controllerToHost, kind: .event, bytes: [0x13, 0x05, 0x01, 0x40, 0x00, 0x02, 0x00])
    let line = jsonLines([record])
    #expect(line.contains(#""name":"Number of Completed Packets","hci":{"event":19,"event_name":"Number of Completed Packets","plen":5,"params":{"num_handles":1,"handles":[{"handle":64,"count":2}]}}"#), "\(line)")
    #expect(line.contains(#""conn":64"#))
  }

  @Test func textShowsUnitsNamesAndMalformed() {
    let records = [
      // LE Connection Update Complete: handle 1, interval 40 (50 ms), latency 0, timeout 400.
      CaptureRecord(timestamp: 0, direction: .controllerToHost, kind: .event, bytes: [0x3E, 0x0A, 0x03, 0x00, 0x01, 0x00, 0x28, 0x00, 0x00, 0x00, 0x90, 0x01]),
      // A Disconnection Complete cut short.
      CaptureRecord(timestamp: 1_000, direction: .controllerToHost, kind: .event, bytes: [0x05, 0x04, 0x00]),
    ]
    var renderer = TextRenderer()
    let text = render(records: records, with: &renderer)
    #expect(text.contains("    Connection interval: 50.00 ms (40)\n"))
    #expect(text.contains("    Supervision timeout: 4000.00 ms (400)\n"))
    #expect(text.contains("#2         0.001000 rx EVT   Disconnect Complete  [malformed]\n"))
    #expect(text.contains("    malformed: hci: parameter length says 4 bytes but 1 are present (byte 1)\n"))
  }

  @Test func absoluteTimeIsUTC() {
    // 2025-11-30 05:20:00.000001 UTC.
    let record = CaptureRecord(timestamp: 1_764_480_000_000_001, direction: .hostToController, kind: .command, bytes: [0x03, 0x0C, 0x00])
    var renderer = TextRenderer(time: .absolute)
    let text = render(records: [record], with: &renderer)
    #expect(text.hasPrefix("#1     2025-11-30 05:20:00.000001 tx CMD   Reset\n"))
  }
}
