import Testing

@testable import BLEAnalysis
import BLECore
import BLEDecoder

/// The link-layer and controller rules of `check`, on facts made by hand: no generated capture
/// breaks them yet (the corpus's sniffed links keep them).
@Suite struct CheckedLinkTests {
  static let label = ConnectionLabel(adapter: 0, handle: 1, generation: 1, peer: BDAddr(rawValue: 0xD0B1_ED00_4852), peerType: .randomDevice)

  /// A packet of event `event`, sent by the central or the peripheral as the sniffer says.
  static func air(event: UInt16?, fromCentral: Bool, retransmission: Bool = false) -> AirFact {
    var fact = AirFact(header: AirPacketHeader(fromCentral: fromCentral), accessAddress: 0x8E3A_7C5A)
    fact.event = event
    fact.isRetransmission = retransmission
    return fact
  }

  static func run(_ control: LinkControlFact, _ air: AirFact, lossy: Bool = false) -> [ConformanceGroup] {
    var link = CheckedLink(label: label, seenFromStart: true, localRole: .central)
    link.lossy = lossy
    var findings = FindingCollector()
    let context = FrameContext(
      frame: 42, time: 1.5, direction: air.header.fromCentral == true ? .hostToController : .controllerToHost, label: label)
    link.linkControl(control, air: air, context, &findings)
    return findings.groups
  }

  @Test func instantsInThePast() {
    let update = LinkControlFact.connectionUpdate(interval: 24, latency: 0, timeout: 400, instant: 100)
    #expect(Self.run(update, Self.air(event: 94, fromCentral: true)).isEmpty)  // 6 ahead
    #expect(Self.run(update, Self.air(event: 99, fromCentral: true)).isEmpty)  // 1 ahead: LL-02's, a should
    let now = Self.run(update, Self.air(event: 100, fromCentral: true))
    #expect(now.map(\.first.rule.id) == ["LL-01"] && now.first?.first.side == .central)
    #expect(now.first?.first.message == "instant 100 is not ahead of the connection event 100 that carries it (0 events past)")
    #expect(Self.run(update, Self.air(event: 103, fromCentral: true)).map(\.first.rule.id) == ["LL-01"])
    // Across the counter's wrap: 65535 → 4 is ahead, 4 → 65535 has passed.
    #expect(Self.run(.channelMap(used: 37, instant: 4), Self.air(event: 65535, fromCentral: true)).isEmpty)
    #expect(Self.run(.channelMap(used: 37, instant: 65535), Self.air(event: 4, fromCentral: true)).map(\.first.rule.id) == ["LL-01"])
    // Not judged: events not counted, a retransmission, a link the sniffer lost packets of.
    #expect(Self.run(update, Self.air(event: nil, fromCentral: true)).isEmpty)
    #expect(Self.run(update, Self.air(event: 103, fromCentral: true, retransmission: true)).isEmpty)
    #expect(Self.run(update, Self.air(event: 103, fromCentral: true), lossy: true).isEmpty)
  }

  @Test func centralOnlyPDUsAndRanges() {
    let fromPeripheral = Self.run(.connectionUpdate(interval: 24, latency: 0, timeout: 400, instant: 100), Self.air(event: 90, fromCentral: false))
    #expect(fromPeripheral.map(\.first.rule.id) == ["LL-03"] && fromPeripheral.first?.first.side == .peripheral)
    // 400 ms is not more than (1 + 4) × 40 ms × 2.
    let tight = Self.run(.connectionUpdate(interval: 32, latency: 4, timeout: 40, instant: 100), Self.air(event: 90, fromCentral: true))
    #expect(tight.map(\.first.rule.id) == ["LL-04"])
    #expect(Self.run(.channelMap(used: 1, instant: 100), Self.air(event: 90, fromCentral: true)).map(\.first.rule.id) == ["LL-04"])
    let request = Self.run(.connectionParameters(opcode: 0x0F, minimum: 6, maximum: 3201, latency: 0, timeout: 100), Self.air(event: 90, fromCentral: false))
    #expect(request.map(\.first.rule.id) == ["LL-04"] && request.first?.first.side == .peripheral)
  }

  @Test func controllerReportsAPeerFailure() {
    var link = CheckedLink(label: Self.label, seenFromStart: true, localRole: .central)
    var findings = FindingCollector()
    let context = FrameContext(frame: 7, time: 0.5, direction: .controllerToHost, label: Self.label)
    link.linkEvent(.disconnected(status: 0, handle: 1, reason: 0x28), context, &findings)
    link.linkEvent(.disconnected(status: 0, handle: 1, reason: 0x13), context, &findings)  // the user ended it: no finding
    #expect(findings.groups.map(\.first.rule.id) == ["HCI-04"])
    #expect(findings.groups.first?.first.side == .peripheral && findings.groups.first?.first.severity == .warning)
    #expect(findings.groups.first?.first.message == "the controller ended the link with Instant Passed (0x28)")
  }
}
