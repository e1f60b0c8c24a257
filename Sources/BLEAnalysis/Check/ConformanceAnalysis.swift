import BLECore
import BLEDecoder
import BLEEngine

/// The `check` analysis: reads the frames' facts and finds the rules of the specifications
/// (`ConformanceRule`) the devices broke, each with the frames that prove it and the side at
/// fault. Decoders already flag what one PDU shows against its request (a response without a
/// request, a PDU over the ATT_MTU); this adds what needs the link's history (an MTU exchange
/// twice, a transaction timed out, a notification the client turned off) and the gates that
/// keep a capture's gaps (a late start, a lossy sniff, a cut record) from passing for
/// violations. A struct, run with `run(into: &analysis)`. Memory is bounded: per link a few
/// fields, per server a capped table of the writes seen.
package struct ConformanceAnalysis: FrameConsumer {
  var links: [ConnectionKey: CheckedLink] = [:]
  /// Connections whose start (a connect event) the capture showed, until their first frame.
  var startsSeen: [UInt32: LinkRole?] = [:]
  var findings = FindingCollector()
  var tableChecks = TableChecks()
  var firstTimestamp: Int64?
  package private(set) var frames = 0

  package init() {}

  package var fieldDetail: FieldDetail { .none }

  /// The link of the previous frame, kept out of `links`: most frames are on the same link
  /// as the one before, which then costs no lookup and no copy.
  var current: CheckedLink?
  var currentKey: ConnectionKey?

  /// Whether each finding is also kept whole, as it is found, in `fresh` (annotate --check
  /// marks frames with them): off, repeats of a group cost a count only.
  package var keepsEachFinding: Bool {
    get { findings.keepsEach }
    set { findings.keepsEach = newValue }
  }

  /// The findings made while consuming the last frame (with `keepsEachFinding`): those about
  /// that frame, and those it revealed about an earlier one (ATT-02).
  package var fresh: [ConformanceFinding] { findings.fresh }

  package mutating func consume(_ frame: inout DissectedFrame) -> Bool {
    if findings.keepsEach && !findings.fresh.isEmpty { findings.fresh.removeAll(keepingCapacity: true) }
    frames += 1
    if firstTimestamp == nil { firstTimestamp = frame.record.timestamp }
    let time = Double(Timestamp.elapsed(from: firstTimestamp ?? 0, to: frame.record.timestamp)) / 1_000_000
    if !frame.linkEvents.isEmpty { noteStarts(frame) }
    if let error = frame.malformed, error.layer == .advertising,
      !frame.diagnostics.contains(where: { $0.kind == .hciDataTruncatedByWriter || $0.kind == .linkLayerCRCBad }) {
      // An advertiser's data that does not parse: its own fault, on no connection.
      let context = FrameContext(frame: frame.number, time: time, direction: frame.direction, label: frame.connection)
      // Sniffed, these are the advertiser's own bytes; in an HCI report, the controller's
      // account of them.
      let heard = frame.air != nil
      findings.add(.adv03, context, side: .peripheral, "advertising data does not fit its format: \(error)",
        severity: heard ? .error : .warning, assumption: heard ? nil : "the controller reported the data as the advertiser sent it")
    }
    guard let label = frame.connection else { return true }
    let key = ConnectionKey(label)
    if currentKey != key { switchLink(to: key, label, isAir: frame.air != nil) }
    var context = FrameContext(frame: frame.number, time: time, direction: frame.direction, label: label)
    current!.label = label
    current!.checkTimeouts(context, &findings)
    if !frame.diagnostics.isEmpty { current!.noteQuality(frame) }
    context.lossy = current!.lossy
    for event in frame.linkEvents { current!.linkEvent(event, context, &findings) }
    if case .linkControl(let control) = frame.header, let air = frame.air { current!.linkControl(control, air: air, context, &findings) }
    if frame.attOpcode != nil { current!.att(&frame, context, &findings, &tableChecks) }
    for event in frame.linkEvents {
      if case .disconnected(let status, _, _) = event, status == 0 {
        current = nil
        currentKey = nil
      }
    }
    return true
  }

  /// Puts the current link back and takes out (or opens) the link of `key`.
  mutating func switchLink(to key: ConnectionKey, _ label: ConnectionLabel, isAir: Bool) {
    if let currentKey, let current {
      if links.count >= Self.maximumLinks { links.removeAll() }
      links[currentKey] = current
    }
    currentKey = key
    if let known = links.removeValue(forKey: key) {
      current = known
      return
    }
    let startKey = UInt32(label.adapter) << 16 | UInt32(label.handle)
    let role = startsSeen.removeValue(forKey: startKey)
    // A sniffed link's "local" side is its central (Direction: central to peripheral is
    // host to controller), whether or not its CONNECT_IND was heard.
    let localRole = isAir ? .central : (role ?? nil)
    current = CheckedLink(label: label, seenFromStart: role != nil, localRole: localRole)
  }

  /// Connect events: the link they open is seen from its start.
  mutating func noteStarts(_ frame: DissectedFrame) {
    for event in frame.linkEvents {
      guard case let .connected(status, handle, _, _, role, _) = event, status == 0 else { continue }
      if startsSeen.count >= Self.maximumLinks { startsSeen.removeAll() }
      startsSeen[UInt32(frame.record.adapter) << 16 | UInt32(handle)] = .some(role)
    }
  }

  package mutating func finish(_ end: FrameStream.End) {
    tableChecks.finish(databases: end.dissector.databases, &findings)
  }

  /// The findings, grouped, in frame order.
  package func report(file: String) -> ConformanceReport {
    ConformanceReport(file: file, groups: findings.groups.sorted { $0.first.frame < $1.first.frame }, frames: frames)
  }

  /// Links followed at once; past it the table starts again (a hostile capture's million
  /// handles cost no more than this).
  static let maximumLinks = 4096
}

/// What every rule needs to know of the frame it looks at.
struct FrameContext {
  var frame: Int
  var time: Double
  var direction: Direction?
  /// The link (nil for an advertising report).
  var label: ConnectionLabel?
  /// The link lost packets to the sniffer (or could not be decrypted): state rules only warn.
  var lossy = false

  /// The link role of the device that sent the frame, given the capturing device's role.
  func senderRole(local: LinkRole?) -> ConformanceFinding.Side {
    guard let direction, let local else { return .unknown }
    let sentByLocal = direction == .hostToController
    switch (local, sentByLocal) {
    case (.central, true), (.peripheral, false): return .central
    case (.peripheral, true), (.central, false): return .peripheral
    }
  }
}

/// Findings grouped as they come: one group per rule, link, side and severity.
struct FindingCollector {
  var groups: [ConformanceGroup] = []
  var index: [GroupKey: Int] = [:]
  var keepsEach = false
  var fresh: [ConformanceFinding] = []
  /// The group added to last: a rule broken on every notification finds its group without a
  /// lookup.
  var last: (key: GroupKey, at: Int)?

  struct GroupKey: Hashable {
    var rule: String
    var link: ConnectionKey?
    var side: ConformanceFinding.Side
    var severity: ConformanceFinding.Severity
  }

  /// Distinct groups kept; past it further kinds of finding are counted in the last group
  /// seen of their rule (a hostile capture can make millions of links).
  static let maximumGroups = 10_000

  /// One finding (`repeats`: how many times the same thing happened, noted once).
  mutating func add(_ finding: ConformanceFinding, repeats: Int = 1) {
    let key = GroupKey(rule: finding.rule.id, link: finding.connection.map(ConnectionKey.init), side: finding.side, severity: finding.severity)
    if let at = index[key] {
      groups[at].count += repeats
      if groups[at].frames.count < ConformanceGroup.listedFrames { groups[at].frames.append(finding.frame) }
      return
    }
    guard groups.count < Self.maximumGroups else {
      if let at = groups.lastIndex(where: { $0.first.rule == finding.rule }) { groups[at].count += repeats }
      return
    }
    index[key] = groups.count
    groups.append(ConformanceGroup(first: finding, count: repeats, frames: [finding.frame]))
  }

  /// A finding at `context`'s frame. The message is worded only for the first of its group:
  /// a strap that breaks a rule on every notification costs a count, not a sentence, each time.
  mutating func add(
    _ rule: ConformanceRule, _ context: FrameContext, side: ConformanceFinding.Side, frames: [Int] = [], _ message: @autoclosure () -> String,
    severity: ConformanceFinding.Severity? = nil, assumption: String? = nil, repeats: Int = 1
  ) {
    var chosen = severity ?? rule.severity
    var why = assumption
    if context.lossy, ConformanceRule.lossSensitive.contains(rule), chosen == .error {
      chosen = .warning
      why = why ?? "the sniffer missed packets on this link (or could not decrypt them): a missing PDU may explain it"
    }
    let key = GroupKey(rule: rule.id, link: context.label.map(ConnectionKey.init), side: side, severity: chosen)
    if keepsEach {
      let finding = ConformanceFinding(
        rule: rule, severity: chosen, side: side, frames: [context.frame] + frames.filter { $0 != context.frame }, time: context.time,
        connection: context.label, message: message(), assumption: why)
      fresh.append(finding)
      add(finding, repeats: repeats)
      return
    }
    if let last, last.key == key {
      groups[last.at].count += repeats
      if groups[last.at].frames.count < ConformanceGroup.listedFrames { groups[last.at].frames.append(context.frame) }
      return
    }
    if let at = index[key] {
      last = (key, at)
      groups[at].count += repeats
      if groups[at].frames.count < ConformanceGroup.listedFrames { groups[at].frames.append(context.frame) }
      return
    }
    add(ConformanceFinding(
      rule: rule, severity: chosen, side: side, frames: [context.frame] + frames.filter { $0 != context.frame }, time: context.time,
      connection: context.label, message: message(), assumption: why), repeats: repeats)
  }
}

extension ConformanceRule {
  /// Rules a packet the sniffer missed could make appear broken.
  static let lossSensitive: Set<ConformanceRule> = [.att01, .att03, .att04, .att05, .att16, .att19, .gatt08]
}
