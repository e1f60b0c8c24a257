import BLECapture
import BLECore
import BLEDecoder
import BLEEngine
import BLERender
import Foundation
import Testing

let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

func capturePath(_ name: String) -> String { repositoryRoot.appendingPathComponent("captures/\(name)").path }

func snapshot(_ name: String) throws -> String {
  try String(contentsOf: repositoryRoot.appendingPathComponent("Tests/BLERenderTests/Snapshots/\(name)"), encoding: .utf8)
}

/// Renders every frame into memory, and keeps each frame's facts as a line of text.
final class RecordingConsumer<Renderer: FrameRenderer>: FrameConsumer {
  var renderer: Renderer
  var out = OutputBuffer(fd: nil)
  var facts: [String] = []
  var end: FrameStream.End?
  var idleCalls = 0
  let stopAfter: Int

  init(_ renderer: Renderer, stopAfter: Int = .max) {
    self.renderer = renderer
    self.stopAfter = stopAfter
  }

  func consume(_ frame: inout DissectedFrame) -> Bool {
    facts.append(describeFacts(frame))
    renderer.render(&frame, to: &out)
    return facts.count < stopAfter
  }

  func inputIdle() { idleCalls += 1 }

  func finish(_ end: FrameStream.End) {
    renderer.finish(to: &out)
    self.end = end
  }
}

/// A frame's typed facts in words: what any consumer sees, whatever it renders.
func describeFacts(_ frame: DissectedFrame) -> String {
  var text = "#\(frame.number) \(frame.hci)"
  if let connection = frame.connection { text += " conn \(connection.handle)/\(connection.generation) \(connection.peer.map { "\($0)" } ?? "-")" }
  for event in frame.linkEvents { text += " event \(event)" }
  if let att = frame.att {
    text += " att \(att.opcode) ch \(att.channel) \(att.operation) req \(att.requestFrame ?? -1) lat \(att.latency ?? -1)"
  }
  for fact in frame.attributes {
    text += " [\(fact.handle) \(fact.operation) \(fact.meaning?.name.map { "\($0)" } ?? "?")"
    if let value = fact.value {
      var words = SummaryLine()
      value.summarize(into: &words, context: fact.valueContext)
      text += " \(type(of: value)): " + words.text
    }
    if fact.isMalformed { text += " malformed" }
    text += "]"
  }
  if let malformed = frame.malformed { text += " malformed \(malformed)" }
  return text
}

func stream<R: FrameRenderer>(_ name: String, _ renderer: R, threading: FrameStream.Threading, share: FrameStream.ValueShare, limit: Int = .max) throws -> RecordingConsumer<R> {
  var options = FrameStream.Options()
  options.threading = threading
  options.valueShare = share
  options.limit = limit
  let consumer = RecordingConsumer(renderer)
  FrameStream(source: try CaptureFile.open(path: capturePath(name)), options: options).run(into: consumer)
  return consumer
}

@Suite struct FrameStreamTests {
  static let arrangements: [(FrameStream.Threading, FrameStream.ValueShare)] = [
    (.one, .adaptive), (.two, .fixed(0)), (.two, .fixed(8)), (.two, .fixed(3)), (.two, .adaptive),
  ]

  /// The stream every command runs on gives the golden files, on one thread or two, whichever
  /// thread decodes the values.
  @Test(arguments: 0..<5)
  func streamsGiveTheGoldens(arrangement: Int) throws {
    let (threading, share) = Self.arrangements[arrangement]
    let text = try stream("hr_strap_session.btsnoop", TextRenderer(time: .relative, color: false), threading: threading, share: share)
    #expect(text.out.text == (try snapshot("hr_strap_session.txt")))
    let verbose = try stream("hr_strap_peripheral.btsnoop", TextRenderer(time: .delta, color: false, verbose: true), threading: threading, share: share)
    #expect(verbose.out.text == (try snapshot("hr_strap_peripheral.verbose.txt")))
    let long = try stream("long_values.btsnoop", TextRenderer(time: .relative, color: false), threading: threading, share: share)
    #expect(long.out.text == (try snapshot("long_values.txt")))
    for name in ["hr_strap_session", "two_straps", "reconnect_cached", "long_values_peripheral", "vendor_services", "le_coc", "eatt"] {
      let json = try stream(name + ".btsnoop", JSONLinesRenderer(), threading: threading, share: share)
      #expect(json.out.text == (try snapshot(name + ".jsonl")), "\(name)")
    }
  }

  /// Text and JSON consumers see the same facts, frame by frame, whichever thread decodes values.
  @Test(arguments: ["hr_strap_session.btsnoop", "long_values.btsnoop", "two_straps.btsnoop", "eatt.btsnoop"])
  func textAndJSONSeeTheSameFacts(name: String) throws {
    let text = try stream(name, TextRenderer(), threading: .two, share: .fixed(8))
    let json = try stream(name, JSONLinesRenderer(), threading: .two, share: .fixed(0))
    let oneThread = try stream(name, JSONLinesRenderer(), threading: .one, share: .adaptive)
    #expect(text.facts.count > 50)
    #expect(text.facts == json.facts)
    #expect(json.facts == oneThread.facts)
  }

  /// Frames are cleared by the consumer's thread (`recycle`); a frame reused without it (a
  /// consumer that stopped) is cleared when the next record is dissected into it. Both give
  /// what a new frame for every record gives, fields included.
  @Test(arguments: ["hr_strap_session.btsnoop", "long_values.btsnoop"])
  func reusedFramesStartClear(name: String) throws {
    enum Reuse { case recycled, asLeft, fresh }
    func dissectAll(_ reuse: Reuse) throws -> [String] {
      let reader = try CaptureFile.open(path: capturePath(name))
      var dissector = Dissector()
      var frame = DissectedFrame()
      var lines: [String] = []
      var number = 0
      while try reader.next(into: &frame.record) {
        number += 1
        dissector.dissect(number: number, into: &frame)
        lines.append(describeFacts(frame) + " \(frame.fields.count) fields, \(frame.diagnostics.count) notes, \(frame.summaryText)")
        switch reuse {
        case .recycled: frame.recycle()
        case .asLeft: break
        case .fresh: frame = DissectedFrame()
        }
      }
      return lines
    }
    let fresh = try dissectAll(.fresh)
    #expect(fresh.count > 50)
    #expect(try dissectAll(.recycled) == fresh)
    #expect(try dissectAll(.asLeft) == fresh)
  }

  /// The typed value of every heart-rate notification, as analyses read it.
  @Test func typedValuesReachTheConsumer() throws {
    let consumer = try stream("two_straps.btsnoop", JSONLinesRenderer(), threading: .two, share: .fixed(4))
    let lines = consumer.facts.filter { $0.contains("HeartRateMeasurement") }
    #expect(lines.count == 42)
    // A = 60 … 80 on D0:B1:ED:00:48:52, B = 140 … 160 on …:53, alternating.
    #expect(lines[0].contains("D0:B1:ED:00:48:52") && lines[0].contains("HeartRateMeasurement: 60 bpm"))
    #expect(lines[1].contains("D0:B1:ED:00:48:53") && lines[1].contains("HeartRateMeasurement: 140 bpm"))
    #expect(lines[41].contains("HeartRateMeasurement: 160 bpm"))
  }

  @Test(arguments: [FrameStream.Threading.one, .two])
  func aConsumerCanStopTheStream(threading: FrameStream.Threading) throws {
    var options = FrameStream.Options()
    options.threading = threading
    let consumer = RecordingConsumer(JSONLinesRenderer(), stopAfter: 10)
    let end = FrameStream(source: try CaptureFile.open(path: capturePath("hr_strap_session.btsnoop")), options: options).run(into: consumer)
    #expect(consumer.facts.count == 10)
    #expect(consumer.end != nil)
    #expect(end.frames >= 10)
  }

  /// The final state: the strap's GATT database, learned from discovery, and no open link.
  @Test(arguments: [FrameStream.Threading.one, .two])
  func theEndCarriesTheEngineState(threading: FrameStream.Threading) throws {
    let consumer = try stream("hr_strap_session.btsnoop", JSONLinesRenderer(), threading: threading, share: .adaptive)
    let end = try #require(consumer.end)
    #expect(end.frames == 160)
    #expect(end.failure == nil)
    #expect(end.dissector.connections.openConnections.isEmpty)
    var database = try #require(end.dissector.databases[.peer(BDAddr("D0:B1:ED:00:48:52")!)])
    #expect(database.resolve(0x0010)?.characteristic == BluetoothUUID(uuid16: 0x2A37))
  }

  /// A stream stops after `limit` records.
  @Test func limitStopsTheStream() throws {
    let consumer = try stream("hr_strap_session.btsnoop", JSONLinesRenderer(), threading: .two, share: .adaptive, limit: 7)
    #expect(consumer.facts.count == 7)
    #expect(consumer.end?.frames == 7)
  }
}

/// Collects the link story of a capture: every link event and the frame it is on.
final class LinkStoryConsumer: FrameConsumer {
  var events: [(frame: Int, event: LinkEvent)] = []
  var hci: [Int: HCIFact] = [:]
  var fieldsKept = 0
  var fieldDetail: FieldDetail { .none }

  func consume(_ frame: inout DissectedFrame) -> Bool {
    for event in frame.linkEvents { events.append((frame.number, event)) }
    hci[frame.number] = frame.hci
    fieldsKept += frame.fields.count
    return true
  }
}

@Suite struct LinkStoryTests {
  /// The phone's side of the strap session (captures/README.md): scan, connect by address,
  /// parameters updated, disconnect; an analysis keeps no fields and still gets every fact.
  @Test func theStrapSessionTellsItsStory() throws {
    let consumer = LinkStoryConsumer()
    FrameStream(source: try CaptureFile.open(path: capturePath("hr_strap_session.btsnoop"))).run(into: consumer)
    #expect(consumer.fieldsKept == 0)
    let strap = BDAddr("D0:B1:ED:00:48:52")!
    let adverts = consumer.events.compactMap { if case .advertisement(let fact) = $0.event { return fact } else { return nil } }
    #expect(adverts.count == 2)
    #expect(adverts.allSatisfy { $0.address == strap && $0.rssi == -50 })
    #expect(adverts.contains { $0.name == "bledissect HR" })
    #expect(consumer.events.contains { $0.frame == 37 && $0.event == LinkEvent.connectRequested(peer: strap, peerType: .randomDevice, isLE: true) })
    guard let connected = consumer.events.first(where: { if case .connected = $0.event { return true } else { return false } }),
      case let .connected(status, handle, peer, _, role, parameters) = connected.event
    else {
      Issue.record("no connection")
      return
    }
    #expect(connected.frame == 39 && status == 0 && handle == 1 && peer == strap && role == .central)
    #expect(parameters?.intervalMilliseconds == 15 && parameters?.supervisionTimeoutMilliseconds == 720)
    #expect(consumer.events.contains { if case .parametersUpdated(0, 1, _) = $0.event { return true } else { return false } })
    #expect(consumer.events.contains { if case .disconnectRequested(1, _) = $0.event { return true } else { return false } })
    #expect(consumer.events.contains { if case .disconnected(0, 1, _) = $0.event { return true } else { return false } })
    #expect(consumer.hci[37] == .command(opcode: 0x200D))
    #expect(consumer.hci[39] == .event(code: 0x3E, subevent: 0x01))
  }
}
