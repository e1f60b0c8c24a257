import Foundation
import BLETestSupport
import Testing

#if canImport(FoundationXML)
  import FoundationXML  // XMLParser on Linux
#endif

@testable import bledissect

/// The strap session's 21 notifications (Tests/BLEDecoderTests/Profiles/HeartRateProfileTests
/// `bumbleNotifications`): bpm, contact, energy, RR in 1/1024 s.
let strapNotifications: [(bpm: Int, contact: String, energy: Int?, rr: [Int])] = [
  (72, "not_detected", nil, []), (73, "not_detected", nil, []), (74, "detected", nil, [830]),
  (75, "detected", 12, [819]), (78, "detected", nil, [790, 785]), (80, "detected", nil, []),
  (82, "detected", 15, [750]), (90, "detected", 18, []), (96, "not_detected", 20, []),
  (99, "detected", nil, [620]), (101, "not_detected", nil, [610, 605, 600]), (118, "not_detected", 27, []),
  (135, "detected", 31, [520, 515, 510]), (150, "detected", 0, [410, 408]), (160, "detected", 1, [384]),
  (184, "detected", nil, [335, 334, 333, 334, 335, 336, 334, 333, 332]),
  (180, "detected", 2, [341, 340, 342, 341, 340, 339, 341, 342]), (170, "not_detected", nil, [361, 362]),
  (140, "not_detected", nil, []), (120, "not_detected", 3, [512]), (95, "detected", 4, [647, 650]),
]

/// A copy of a btsnoop capture whose records from `frame` on are `seconds` later: a gap in
/// whatever was being notified.
func btsnoopWithGap(_ capture: String, from frame: Int, seconds: UInt64) throws -> String {
  var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: capturePath(capture))))
  var offset = 16
  var number = 1
  while offset + 24 <= bytes.count {
    let included = bytes[offset + 4..<offset + 8].reduce(0) { $0 << 8 | Int($1) }
    if number >= frame {
      var timestamp = bytes[offset + 16..<offset + 24].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
      timestamp += seconds * 1_000_000
      for index in 0..<8 { bytes[offset + 16 + index] = UInt8(truncatingIfNeeded: timestamp >> (56 - 8 * UInt64(index))) }
    }
    offset += 24 + included
    number += 1
  }
  return temporaryFile(bytes)
}

/// Rows of text output after the header row.
func textRows(_ output: String) -> [[Substring]] {
  output.split(separator: "\n").dropFirst().map { $0.split(separator: " ", omittingEmptySubsequences: true) }
}

@Suite struct HRCommandTests {
  @Test func twoStrapsAlternate() {
    let result = runCLI(["hr", capturePath("two_straps.btsnoop")])
    #expect(result.status == 0 && result.stderr.isEmpty)
    #expect(result.stdout.hasPrefix("frame           time device             bpm contact      energy_kj rr_ms\n"))
    let rows = textRows(result.stdout)
    #expect(rows.count == 42)
    for (index, row) in rows.enumerated() {
      let strapA = index % 2 == 0
      #expect(row[2] == (strapA ? "D0:B1:ED:00:48:52" : "D0:B1:ED:00:48:53"))
      #expect(Int(row[3]) == (strapA ? 60 : 140) + index / 2)
      #expect(row[4] == "detected" && row[5] == "-" && row.count == 6)
    }
    #expect(result.stdout.contains("#155        0.338397 D0:B1:ED:00:48:52   60 detected             -\n"))
  }

  @Test func peerFilterKeepsOneStrap() {
    let result = runCLI(["hr", "--peer", "d0:b1:ed:00:48:53", capturePath("two_straps.btsnoop")])
    let rows = textRows(result.stdout)
    #expect(rows.map { Int($0[3]) } == Array(140...160))
    #expect(rows.allSatisfy { $0[2] == "D0:B1:ED:00:48:53" })
    let both = runCLI(["hr", "--csv", "--peer", "D0:B1:ED:00:48:53", "--peer", "D0:B1:ED:00:48:52", capturePath("two_straps.btsnoop")])
    #expect(both.stdout.split(separator: "\n").count == 43)
    #expect(runCLI(["hr", "--peer", "nope", capturePath("two_straps.btsnoop")]).status == 64)
  }

  @Test func everyFlagCombinationAsText() {
    let result = runCLI(["hr", capturePath("hr_strap_session.btsnoop")])
    #expect(result.status == 0)
    let rows = textRows(result.stdout)
    #expect(rows.count == 21)
    for (row, expected) in zip(rows, strapNotifications) {
      #expect(Int(row[3]) == expected.bpm && String(row[4]) == expected.contact)
      #expect(row[5] == (expected.energy.map(String.init) ?? "-"))
      // RR intervals, then the flags after "!" (contact lost on eight rows).
      let rr = row.dropFirst(6).prefix { $0 != "!" }
      #expect(rr.map { Double($0) } == expected.rr.map { (Double($0) * 1000 / 1024 * 10).rounded() / 10 })
      #expect(Array(row.drop { $0 != "!" }.dropFirst()) == (expected.contact == "not_detected" ? ["no_contact"] : []))
    }
    #expect(result.stdout.contains("#132        2.335818 D0:B1:ED:00:48:52   74 detected             - 810.5\n"))
    #expect(result.stdout.contains("#131        1.334184 D0:B1:ED:00:48:52   73 not_detected         -  ! no_contact\n"))
  }

  @Test func csvHasOneHeaderAndExactRR() {
    let result = runCLI(["hr", "--csv", capturePath("hr_strap_session.btsnoop")])
    let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
    #expect(lines.first == "frame,time,device,bpm,contact,energy_kj,rr_ms,flags")
    #expect(lines.count == 22)
    for (line, expected) in zip(lines.dropFirst(), strapNotifications) {
      let cells = line.split(separator: ",", omittingEmptySubsequences: false)
      #expect(cells.count == 8)
      #expect(cells[7] == (expected.contact == "not_detected" ? "no_contact" : ""))
      #expect(cells[2] == "D0:B1:ED:00:48:52" && Int(cells[3]) == expected.bpm && String(cells[4]) == expected.contact)
      #expect(Int(cells[5]) == expected.energy)
      let rr = cells[6].split(separator: " ").map { Double($0)! }
      #expect(rr == expected.rr.map { Double($0) * 1000 / 1024 })
    }
    #expect(lines[3] == "132,2.335818,D0:B1:ED:00:48:52,74,detected,,810.546875,")
  }

  @Test func jsonLinesParse() throws {
    let result = runCLI(["hr", "--json", capturePath("hr_strap_session.btsnoop")])
    let lines = result.stdout.split(separator: "\n")
    #expect(lines.count == 21)
    for (line, expected) in zip(lines, strapNotifications) {
      #expect(JSONKeyChecker.check(line) == nil)
      let object = try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
      #expect(object["bpm"] as? Int == expected.bpm && object["sensor_contact"] as? String == expected.contact)
      #expect(object["device"] as? String == "D0:B1:ED:00:48:52")
      if let energy = expected.energy { #expect(object["energy_expended_kj"] as? Int == energy) } else { #expect(object["energy_expended_kj"] is NSNull) }
      #expect(object["rr_intervals_ms"] as? [Double] == expected.rr.map { Double($0) * 1000 / 1024 })
      #expect(object["file"] == nil)
    }
    #expect(lines[2] == #"{"frame":132,"time":2.335818,"ts":1796020014.486983,"device":"D0:B1:ED:00:48:52","bpm":74,"sensor_contact":"detected","energy_expended_kj":null,"rr_intervals_ms":[810.546875],"flags":[]}"#)
  }

  @Test func absoluteTime() {
    let result = runCLI(["hr", "--csv", "--time", "abs", capturePath("hr_strap_session.btsnoop")])
    #expect(result.stdout.split(separator: "\n")[3].hasPrefix("132,2026-11-30 "))
  }

  @Test func peripheralSideNamesTheLocalStrap() {
    let rows = textRows(runCLI(["hr", capturePath("hr_strap_peripheral.btsnoop")]).stdout)
    #expect(rows.count == 21 && rows.allSatisfy { $0[2] == "hci0" })
  }

  /// The SVG is well-formed, has a panel per strap, and a dropout rectangle only where the
  /// capture has a gap (10 s in the middle of the two straps' notifications).
  @Test func svgPlotsEachDeviceAndShadesAGap() throws {
    let plain = NSTemporaryDirectory() + "bledissect-hr-\(UUID().uuidString).svg"
    defer { try? FileManager.default.removeItem(atPath: plain) }
    let result = runCLI(["hr", "--svg", plain, capturePath("two_straps.btsnoop")])
    #expect(result.status == 0)
    let svg = try String(contentsOfFile: plain, encoding: .utf8)
    let elements = try #require(SVGElements(svg))
    #expect(elements.texts(class: "device-label") == ["bledissect HR A (D0:B1:ED:00:48:52)", "bledissect HR B (D0:B1:ED:00:48:53)"])
    #expect(elements.texts(class: "device-detail") == ["21 measurements", "21 measurements"])
    #expect(elements.count("rect", class: "dropout") == 0)
    #expect(elements.texts(class: nil).contains("time (s)"))

    let gapped = try btsnoopWithGap("two_straps.btsnoop", from: 175, seconds: 10)
    let gappedSVG = NSTemporaryDirectory() + "bledissect-hr-\(UUID().uuidString).svg"
    defer {
      try? FileManager.default.removeItem(atPath: gappedSVG)
      try? FileManager.default.removeItem(atPath: gapped)
    }
    #expect(runCLI(["hr", "--svg", gappedSVG, gapped]).status == 0)
    let withGap = try #require(SVGElements(try String(contentsOfFile: gappedSVG, encoding: .utf8)))
    // One dropout per strap, drawn in both of its plots (heart rate and RR).
    #expect(withGap.count("rect", class: "dropout") == 4)
    #expect(runCLI(["hr", "--svg", plain, gapped, gapped]).status == 64)
  }
}

/// Elements of an SVG read back with Foundation's XML parser; nil when not well-formed.
struct SVGElements {
  final class Collector: NSObject, XMLParserDelegate {
    var elements: [(name: String, attributes: [String: String], text: String)] = []
    var open: [Int] = []
    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
      elements.append((name, attributes, ""))
      open.append(elements.count - 1)
    }
    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) { _ = open.popLast() }
    func parser(_ parser: XMLParser, foundCharacters string: String) {
      if let index = open.last { elements[index].text += string }
    }
  }
  var elements: [(name: String, attributes: [String: String], text: String)]

  init?(_ svg: String) {
    let collector = Collector()
    let parser = XMLParser(data: Data(svg.utf8))
    parser.delegate = collector
    guard parser.parse() else { return nil }
    elements = collector.elements
  }

  func count(_ name: String, class className: String) -> Int {
    elements.filter { $0.name == name && $0.attributes["class"] == className }.count
  }

  func texts(class className: String?) -> [String] {
    elements.filter { $0.name == "text" && (className == nil || $0.attributes["class"] == className) }.map(\.text)
  }
}

/// When `hr` finds no measurement it says why on stderr: nothing of Heart Rate Measurement in
/// the capture, a measurement characteristic never subscribed to, a subscription without
/// notifications, or measurements only from devices --peer left out.
@Suite struct HRAbsenceTests {
  /// The strap session's first `count` records, as a btsnoop file.
  static func strapSession(firstRecords count: Int) throws -> String {
    let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: capturePath("hr_strap_session.btsnoop"))))
    var end = 16
    for _ in 0..<count {
      let included = Int(bytes[end + 4]) << 24 | Int(bytes[end + 5]) << 16 | Int(bytes[end + 6]) << 8 | Int(bytes[end + 7])
      end += 24 + included
    }
    return temporaryFile(Array(bytes[..<end]))
  }

  static func reason(_ arguments: [String]) -> (stdout: String, stderr: String, status: Int32) {
    let result = runCLI(["hr", "--no-cache"] + arguments)
    return (result.stdout, result.stderr, result.status)
  }

  @Test func aCaptureWithoutHeartRateSaysSo() {
    let result = Self.reason([capturePath("beacons.btsnoop")])
    #expect(result.status == 0)
    #expect(result.stdout.split(separator: "\n").count == 1)
    #expect(result.stderr == "bledissect: \(capturePath("beacons.btsnoop")): no heart-rate measurement: the capture shows no Heart Rate Measurement (no discovery of it, no table from --gatt or the cache, no notifications that look like heart rates)\n")
  }

  @Test func aMeasurementNeverSubscribedToIsNamed() throws {
    // Up to frame 120: discovery done, the CCCD write (frame 121) not yet.
    let path = try Self.strapSession(firstRecords: 120)
    defer { unlink(path) }
    #expect(Self.reason([path]).stderr == "bledissect: \(path): no heart-rate measurement: D0:B1:ED:00:48:52's Heart Rate Measurement (handle 0x0010; its Client Characteristic Configuration is 0x0011) was never subscribed to in the capture\n")
  }

  @Test func aSubscriptionWithoutNotificationsIsNamed() throws {
    // Up to frame 129: notifications enabled in frame 121, the first one (frame 130) not yet.
    let path = try Self.strapSession(firstRecords: 129)
    defer { unlink(path) }
    #expect(Self.reason([path]).stderr == "bledissect: \(path): no heart-rate measurement: notifications of Heart Rate Measurement were enabled in frame 121, but none arrived\n")
  }

  @Test func measurementsOfOtherDevicesAreCounted() {
    let result = Self.reason(["--peer", "11:22:33:44:55:66", capturePath("hr_strap_session.btsnoop")])
    #expect(result.stderr == "bledissect: \(capturePath("hr_strap_session.btsnoop")): no heart-rate measurement from 11:22:33:44:55:66: 21 from other devices (--peer)\n")
  }

  @Test func rowsNeedNoReason() throws {
    let result = Self.reason([capturePath("hr_strap_session.btsnoop")])
    #expect(result.stdout.split(separator: "\n").count == 22)
    #expect(result.stderr.isEmpty)
    // From the first notification on, a row: no reason.
    let path = try Self.strapSession(firstRecords: 130)
    defer { unlink(path) }
    let first = Self.reason([path])
    #expect(first.stdout.split(separator: "\n").count == 2)
    #expect(first.stderr.isEmpty)
  }

  /// Real captures: the Mi Band 3's measurement characteristic is discovered, never subscribed.
  @Test(.enabled(if: sharedCorpusHas("miband3_blproject/miband3_lescan_cap.pcapng"), "../shared/corpus/miband3_blproject/miband3_lescan_cap.pcapng is absent"))
  func aRealBandThatWasNeverSubscribed() throws {
    let path = try #require(corpusRoot).appendingPathComponent("miband3_blproject/miband3_lescan_cap.pcapng").path
    #expect(Self.reason([path]).stderr.hasSuffix("no heart-rate measurement: F0:2A:9A:A0:86:F4's Heart Rate Measurement (handle 0x0029; its Client Characteristic Configuration is 0x002a) was never subscribed to in the capture\n"))
  }
}

/// Flags on the rows: facts about doubtful values, in every format.
@Suite struct HRFlagTests {
  /// The strap session without record `index` (0-based), as a btsnoop file.
  static func strapSession(without index: Int) throws -> String {
    let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: capturePath("hr_strap_session.btsnoop"))))
    var kept = Array(bytes[..<16])
    var offset = 16
    var record = 0
    while offset + 24 <= bytes.count {
      let included = Int(bytes[offset + 4]) << 24 | Int(bytes[offset + 5]) << 16 | Int(bytes[offset + 6]) << 8 | Int(bytes[offset + 7])
      if record != index { kept += bytes[offset..<offset + 24 + included] }
      offset += 24 + included
      record += 1
    }
    return temporaryFile(kept)
  }

  @Test func theStrapSessionIsFlaggedOnlyWhereContactWasLost() {
    let csv = runCLI(["hr", "--csv", "--no-cache", capturePath("hr_strap_session.btsnoop")]).stdout.split(separator: "\n", omittingEmptySubsequences: false)
    let flags = csv.dropFirst().filter { !$0.isEmpty }.map { String($0.split(separator: ",", omittingEmptySubsequences: false).last!) }
    #expect(flags.count == strapNotifications.count)
    #expect(flags == strapNotifications.map { $0.contact == "not_detected" ? "no_contact" : "" })
    // The energy starts again after the Reset Energy Expended written in frame 143: no flag.
    let json = runCLI(["hr", "--json", "--no-cache", capturePath("hr_strap_session.btsnoop")]).stdout
    #expect(!json.contains("energy_backwards"))
    #expect(json.components(separatedBy: #""flags":["no_contact"]"#).count - 1 == 8)
  }

  @Test func energyGoingBackwardsWithoutTheResetIsFlagged() throws {
    // Frame 143 (record 142) is the write of Reset Energy Expended.
    let path = try Self.strapSession(without: 142)
    defer { unlink(path) }
    let rows = runCLI(["hr", "--no-cache", path]).stdout.split(separator: "\n")
    let flagged = rows.filter { $0.contains("energy_backwards") }
    // 31 kJ, then 0 kJ with no reset: that row (135 bpm → 150 bpm) is the one.
    #expect(flagged.count == 1)
    #expect(flagged.first?.contains(" 150 detected") == true)
    #expect(flagged.first?.hasSuffix("  ! energy_backwards") == true)
    // summary counts it; with the reset, it has nothing to count.
    let summary = runCLI(["summary", "--no-cache", path]).stdout
    #expect(summary.contains("    flagged   1 energy_backwards, 8 no_contact\n"))
    let whole = runCLI(["summary", "--no-cache", capturePath("hr_strap_session.btsnoop")]).stdout
    #expect(whole.contains("    flagged   8 no_contact\n"))
  }
}
