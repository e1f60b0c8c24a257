import BLETestSupport
import Foundation
import Testing

#if canImport(FoundationXML)
  import FoundationXML  // XMLParser on Linux
#endif

@testable import bledissect

/// An SVG plot read back with Foundation's XML parser, each element with the classes around it
/// and the panel (`<g class="panel">`, counted from 0) it is in; nil when not well-formed.
struct PlotElements {
  struct Element {
    var name: String
    var attributes: [String: String]
    var text: String
    var classesAround: [String]
    var panel: Int?

    func number(_ attribute: String) -> Double? { attributes[attribute].flatMap(Double.init) }
    var className: String? { attributes["class"] }
  }

  final class Collector: NSObject, XMLParserDelegate {
    var elements: [Element] = []
    var open: [Int] = []
    var panels = 0

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
      let around = open.map { elements[$0] }
      var panel = around.last?.panel
      if name == "g", attributes["class"] == "panel" {
        panel = panels
        panels += 1
      }
      elements.append(Element(name: name, attributes: attributes, text: "", classesAround: around.compactMap(\.className), panel: panel))
      open.append(elements.count - 1)
    }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) { _ = open.popLast() }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
      if let index = open.last { elements[index].text += string }
    }
  }

  var elements: [Element]

  init?(_ svg: String) {
    let collector = Collector()
    let parser = XMLParser(data: Data(svg.utf8))
    parser.delegate = collector
    guard parser.parse() else { return nil }
    elements = collector.elements
  }

  func all(_ name: String, class className: String? = nil, panel: Int? = nil) -> [Element] {
    elements.filter { $0.name == name && (className == nil || $0.className == className) && (panel == nil || $0.panel == panel) }
  }

  func texts(inGroup group: String, panel: Int? = nil) -> [String] {
    elements.filter { ($0.name == "text" || $0.name == "tspan") && $0.classesAround.contains(group) && (panel == nil || $0.panel == panel) }
      .filter { !$0.text.isEmpty && $0.text != " · " }.map(\.text)
  }

  /// The words of a panel's mark labels, part by part.
  func markWords(panel: Int = 0) -> [String] {
    all("tspan", panel: panel).filter { $0.classesAround.contains("mark-labels") }.map(\.text)
  }

  /// The x of each vertical line of a path of `M x y V y` segments.
  static func lineXs(_ element: Element?) -> [Double] {
    (element?.attributes["d"] ?? "").split(separator: "M").compactMap { Double($0.split(separator: " ").first ?? "") }
  }

  /// Time → x on a panel, from two of its tick labels (the inner ones: the outer ones may be
  /// pushed inward to stay inside the document). Both are written with one decimal, so a time
  /// outside them is found to within about 0.2 px.
  func timeToX(panel: Int = 0) throws -> (Double) -> Double {
    let ticks = all("text", panel: panel).filter { $0.classesAround.contains("time-labels") }.compactMap { label in
      Double(label.text).flatMap { time in label.number("x").map { (time, $0) } }
    }
    try #require(ticks.count >= 4)
    let (a, b) = (ticks[1], ticks[ticks.count - 2])
    return { a.1 + ($0 - a.0) * (b.1 - a.1) / (b.0 - a.0) }
  }
}

/// `hr --svg` on the sample captures: straps named, their links' events marked at the frames'
/// times, flagged values marked and kept off the axes, and the whole document equal to its
/// golden file (Tests/BLERenderTests/Snapshots/*.hr.svg; `RECORD_SNAPSHOTS=1` rewrites them).
@Suite struct HRPlotTests {
  /// The strap session with one 300 bpm value (frame 135: `07 50 00` → `07 2c 01`, 16-bit bpm) and
  /// one RR interval of 181/1024 s = 176.8 ms (frame 134: `16 4e 16 03 11 03` → `16 4e b5 00 11 03`).
  static func strapSessionWithSpikes() throws -> String {
    try btsnoopPatched("hr_strap_session.btsnoop", [
      134: (hexBytes("164e16031103"), hexBytes("164eb5001103")),
      135: (hexBytes("075000"), hexBytes("072c01")),
    ])
  }

  /// A copy of a capture whose records (numbered from 1) end in other bytes.
  static func btsnoopPatched(_ capture: String, _ patches: [Int: (old: [UInt8], new: [UInt8])]) throws -> String {
    var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: capturePath(capture))))
    var offset = 16
    var number = 1
    while offset + 24 <= bytes.count {
      let included = bytes[offset + 4..<offset + 8].reduce(0) { $0 << 8 | Int($1) }
      if let patch = patches[number] {
        let end = offset + 24 + included
        try #require(Array(bytes[end - patch.old.count..<end]) == patch.old, "record \(number)")
        bytes.replaceSubrange(end - patch.old.count..<end, with: patch.new)
      }
      offset += 24 + included
      number += 1
    }
    return temporaryFile(bytes)
  }

  /// `hr --svg` of `path` (without the GATT cache, which other tests fill), and the document.
  static func plot(_ path: String) throws -> String {
    let svg = NSTemporaryDirectory() + "bledissect-plot-\(UUID().uuidString).svg"
    defer { try? FileManager.default.removeItem(atPath: svg) }
    let result = runCLI(["hr", "--no-cache", "--svg", svg, path])
    try #require(result.status == 0, "\(result.stderr)")
    return try String(contentsOfFile: svg, encoding: .utf8)
  }

  @Test func theStrapIsNamedAndItsLinkMarkedAtItsFramesTimes() throws {
    let plot = try #require(PlotElements(try Self.plot(capturePath("hr_strap_session.btsnoop"))))
    #expect(plot.all("text", class: "device-label").map(\.text) == ["bledissect HR (D0:B1:ED:00:48:52)"])
    #expect(plot.all("text", class: "device-detail").map(\.text) == ["21 measurements"])
    // Frames 39, 42, 112, 117, 121 share a label (within 4 px); 157 and 160 another.
    #expect(plot.markWords() == [
      "connected", "MTU 247", "parameters requested", "interval 50 ms", "subscribed HR",
      "interval 60 ms, latency 4", "disconnected: Remote User Terminated Connection",
    ])
    let x = try plot.timeToX()
    for (kind, times) in [
      ("mark-connected", [0.323431]), ("mark-mtu", [0.324087]), ("mark-parameters-requested", [0.331014]),
      ("mark-parameters", [0.331339, 20.567823]), ("mark-subscribed", [0.331763]), ("mark-disconnected", [20.568189]),
    ] {
      let xs = PlotElements.lineXs(plot.all("path", class: kind).first)
      #expect(xs.count == times.count, "\(kind)")
      for (drawn, time) in zip(xs, times) { #expect(abs(drawn - x(time)) <= 0.3, "\(kind) at \(time) s: \(drawn)") }
    }
    #expect(plot.all("path", class: "mark-unsubscribed").isEmpty)
    let legend = plot.texts(inGroup: "legend")
    #expect(legend.suffix(5) == ["connected", "disconnected", "subscribed / unsubscribed", "MTU exchange", "connection parameters"])
    #expect(!legend.contains { $0.contains("out of range") || $0.contains("inconsistent") })
  }

  @Test func aCaptureTakenOnTheStrapNamesTheLocalDevice() throws {
    let plot = try #require(PlotElements(try Self.plot(capturePath("hr_strap_peripheral.btsnoop"))))
    #expect(plot.all("text", class: "device-label").map(\.text) == ["bledissect HR (hci0)"])
    let words = plot.markWords()
    #expect(words.first == "connected" && words.last == "disconnected: Remote User Terminated Connection", "\(words)")
    #expect(words.contains("subscribed HR"))
  }

  /// Each strap's panel has its own link's events, by name, and none of the other's.
  @Test func twoStrapsGetTheirOwnMarks() throws {
    let plot = try #require(PlotElements(try Self.plot(capturePath("two_straps.btsnoop"))))
    #expect(plot.all("text", class: "device-label").map(\.text) == ["bledissect HR A (D0:B1:ED:00:48:52)", "bledissect HR B (D0:B1:ED:00:48:53)"])
    // LE Connection Complete in frames 31 and 94, Disconnection Complete in 199 and 202.
    for (panel, connected, disconnected) in [(0, 0.162890, 0.343974), (1, 0.331573, 0.344250)] {
      let x = try plot.timeToX(panel: panel)
      let connections = PlotElements.lineXs(plot.all("path", class: "mark-connected", panel: panel).first)
      #expect(connections.count == 1 && abs(connections[0] - x(connected)) <= 0.3, "panel \(panel): \(connections)")
      let disconnections = PlotElements.lineXs(plot.all("path", class: "mark-disconnected", panel: panel).first)
      #expect(disconnections.count == 1 && abs(disconnections[0] - x(disconnected)) <= 0.3, "panel \(panel)")
      #expect(plot.markWords(panel: panel).filter { $0 == "subscribed HR" }.count == 1)
    }
  }

  /// Without discovery the CCCD written in frame 35 is only "probably" one, of no known
  /// characteristic; the notifications on 0x0010 show it was Heart Rate Measurement's (0x0011),
  /// and the Battery Level one (0x0019, frame 41) is not taken for it. No name was seen.
  @Test func aSubscriptionWithoutDiscoveryIsRecognisedFromTheNotifications() throws {
    let plot = try #require(PlotElements(try Self.plot(capturePath("late_reconnect.btsnoop"))))
    #expect(plot.all("text", class: "device-label").map(\.text) == ["D0:B1:ED:00:48:52"])
    #expect(plot.markWords() == ["connected", "MTU 247", "subscribed HR", "disconnected: Remote User Terminated Connection"])
    let x = try plot.timeToX()
    let subscriptions = PlotElements.lineXs(plot.all("path", class: "mark-subscribed").first)
    #expect(subscriptions.count == 1 && abs(subscriptions[0] - x(0.0855)) <= 0.3, "\(subscriptions)")
  }

  /// One 300 bpm value and one 176.8 ms interval: the axes keep to plausible values, and both
  /// are drawn at the plots' edges with their values.
  @Test func spikesAreMarkedAndDoNotStretchTheAxes() throws {
    let capture = try Self.strapSessionWithSpikes()
    defer { unlink(capture) }
    let rows = runCLI(["hr", "--no-cache", capture]).stdout
    #expect(rows.contains("  300 detected             -  ! bpm_out_of_range\n"))
    #expect(rows.contains(" 176.8 766.6  ! rr_out_of_range rr_inconsistent\n"))
    let plot = try #require(PlotElements(try Self.plot(capture)))
    let labels = plot.texts(inGroup: "value-labels").compactMap(Double.init)
    // Heart rate 50–200 (values 72–184), RR 200–1000 (values 332–810.5): not 0–400 and 0–1000.
    #expect(labels == [50, 100, 150, 200, 200, 400, 600, 800, 1000], "\(labels)")
    #expect(plot.texts(inGroup: "clipped-values") == ["300", "176.8"])
    for kind in ["flag-bpm-out-of-range", "flag-rr-out-of-range", "flag-rr-inconsistent"] {
      #expect(plot.all("path", class: kind).count == (kind == "flag-rr-inconsistent" ? 2 : 1), "\(kind)")
    }
    #expect(plot.all("path", class: "flag-energy-backwards").isEmpty)
    let legend = plot.texts(inGroup: "legend")
    #expect(legend.contains("bpm out of range (30–220)") && legend.contains("RR out of range (250–2000 ms)"))
    #expect(legend.contains("RR inconsistent with bpm") && !legend.contains("energy expended went back"))
  }

  /// Whole documents, as committed: a change to the plot shows here first.
  @Test(arguments: ["hr_strap_session", "late_reconnect", "two_straps", "hr_strap_session_spikes"])
  func documentsEqualTheirGoldens(name: String) throws {
    let capture = name.hasSuffix("_spikes") ? try Self.strapSessionWithSpikes() : capturePath(name + ".btsnoop")
    defer { if name.hasSuffix("_spikes") { unlink(capture) } }
    // The title names the file as given: the same words wherever the repository is.
    let svg = try Self.plot(capture).replacingOccurrences(of: capture, with: "captures/\(name).btsnoop")
    let url = repositoryRoot.appendingPathComponent("Tests/BLERenderTests/Snapshots/\(name).hr.svg")
    if ProcessInfo.processInfo.environment["RECORD_SNAPSHOTS"] != nil {
      try svg.write(to: url, atomically: true, encoding: .utf8)
      return
    }
    let golden = try String(contentsOf: url, encoding: .utf8)
    let first = zip(golden.split(separator: "\n"), svg.split(separator: "\n")).enumerated().first { $0.element.0 != $0.element.1 }
    let same = svg == golden
    #expect(same, "\(name).hr.svg differs at line \((first?.offset ?? 0) + 1): \(first.map { "\($0.element.1)" } ?? "in length")")
  }
}
