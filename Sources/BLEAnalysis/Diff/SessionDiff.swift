import BLECore
import BLEDecoder

/// What one capture gives a comparison: its summary, the GATT tables its connections were
/// about (by the peer's address), and each connection's procedure steps and exchanges.
package struct DiffSide: Sendable {
  package var summary: SessionSummary
  package var tables: [BDAddr: GATTAttributeTree]
  package var operations: OperationLog
  /// Where a table came from when not from this capture's own discovery (a map, the cache).
  package var tableSources: [BDAddr: GATTMapProvenance]
  /// The rules the capture breaks (`check`'s findings); nil: not looked for.
  package var findings: ConformanceReport?

  package init(
    summary: SessionSummary, tables: [BDAddr: GATTAttributeTree], operations: OperationLog, tableSources: [BDAddr: GATTMapProvenance] = [:],
    findings: ConformanceReport? = nil
  ) {
    self.findings = findings
    self.summary = summary
    self.tables = tables
    self.operations = operations
    self.tableSources = tableSources
  }

  /// Seconds from the capture's first frame.
  func seconds(_ time: Int64) -> Double {
    Double(Timestamp.elapsed(from: summary.firstTimestamp ?? time, to: time)) / 1_000_000
  }

  func place(_ occurrence: Occurrence?) -> DifferencePlace? {
    occurrence.map { DifferencePlace(frame: $0.frame, seconds: seconds($0.time)) }
  }

  func place(frame: Int?, time: Int64?) -> DifferencePlace? {
    guard let frame, let time else { return nil }
    return DifferencePlace(frame: frame, seconds: seconds(time))
  }

  /// The requests of the connections to `device`, in order: the central's (`centralIsClient`),
  /// or the peripheral's on links where it also used the central's table.
  func operations(of device: BDAddr, centralIsClient: Bool = true) -> [OperationLog.Connection] {
    operations.connections.filter { $0.label.peer == device && $0.centralIsClient == centralIsClient }
  }
}

/// Compares two sessions: devices matched by address (then by name), their GATT tables (as far
/// as both captures saw them), what the client discovered, subscribed to, read and wrote (by
/// characteristic, repeated exchanges counted), each connection's parameters and ending, and
/// values beyond thresholds. The two captures may be of either end of a link: a phone's and a
/// strap's capture of one session compare equal (tables, steps and endings are taken as the
/// client and server saw them, not as local and remote).
package struct SessionDiff: Sendable {
  package struct Thresholds: Sendable {
    /// A silence between pushed values reported when longer than this many times the other
    /// side's longest, and by at least `gapSeconds`.
    package var gapFactor = 3.0
    package var gapSeconds = 5.0
    /// Mean heart rates this far apart (bpm).
    package var bpm = 10.0
    /// Counts and rates differing by more than this share.
    package var share = 0.5
    /// Mean RR intervals this far apart (ms).
    package var rrMilliseconds = 100.0
    /// A procedure's median ATT latency this many times the other side's, and by at least
    /// `latencyMilliseconds`.
    package var latencyFactor = 3.0
    package var latencyMilliseconds = 50.0
    package init() {}
  }

  package var thresholds = Thresholds()
  package init() {}

  /// One device on both sides, and the name differences about it go under.
  struct DevicePair {
    var a: DeviceSummary
    var b: DeviceSummary
    var subject: String
    /// Whose requests are compared: the central's (a phone's use of a strap), or the
    /// peripheral's (a band discovering the phone's table).
    var centralIsClient = true
  }

  package func compare(_ a: DiffSide, _ b: DiffSide) -> [SessionDifference] {
    var differences: [SessionDifference] = []
    let (pairs, onlyA, onlyB) = matchDevices(a, b)
    for device in onlyA {
      differences.append(SessionDifference(kind: .devices, subject: "\(device.address)", text: "\(describe(device)) is only in A",
        inA: a.place(frame: a.summary.connections.first { $0.peer == device.address }?.startFrame, time: device.firstSeen), a: "present"))
    }
    for device in onlyB {
      differences.append(SessionDifference(kind: .devices, subject: "\(device.address)", text: "\(describe(device)) is only in B",
        inB: b.place(frame: b.summary.connections.first { $0.peer == device.address }?.startFrame, time: device.firstSeen), b: "present"))
    }
    for (deviceA, deviceB) in pairs {
      let name = deviceA.name ?? deviceB.name
      let pair = DevicePair(a: deviceA, b: deviceB, subject: name.map { "\"\($0)\"" } ?? "\(deviceA.address)")
      let subject = pair.subject
      // What each side's discovery covered: tables are compared only that far.
      let seen = (a: coverage(a, deviceA.address), b: coverage(b, deviceB.address))
      if let tableA = a.tables[deviceA.address], let tableB = b.tables[deviceB.address] {
        differences += compareTables(tableA, tableB, a, b, pair, seen: seen)
      }
      differences += compareDiscovery(a, b, pair, seen: seen)
      let silenced = compareSubscriptions(a, b, pair, into: &differences)
      differences += compareExchanges(a, b, pair)
      // The peripheral as a client of the central's table, where either side shows it.
      var reverse = pair
      reverse.centralIsClient = false
      reverse.subject = "\(pair.subject) as client"
      if !a.operations(of: deviceA.address, centralIsClient: false).isEmpty || !b.operations(of: deviceB.address, centralIsClient: false).isEmpty {
        let seenReverse = (a: coverage(a, deviceA.address, centralIsClient: false), b: coverage(b, deviceB.address, centralIsClient: false))
        differences += compareDiscovery(a, b, reverse, seen: seenReverse)
        _ = compareSubscriptions(a, b, reverse, into: &differences)
        differences += compareExchanges(a, b, reverse)
      }
      let connectionsA = a.summary.connections.filter { $0.peer == deviceA.address }
      let connectionsB = b.summary.connections.filter { $0.peer == deviceB.address }
      if connectionsA.count != connectionsB.count {
        // Where the side with more connections opened the first the other lacks.
        let extraA = connectionsA.count > connectionsB.count ? connectionsA[connectionsB.count] : nil
        let extraB = connectionsB.count > connectionsA.count ? connectionsB[connectionsA.count] : nil
        var difference = SessionDifference(kind: .parameters, subject: subject,
          text: "\(connectionsA.count) connection\(connectionsA.count == 1 ? "" : "s") in A, \(connectionsB.count) in B",
          inA: extraA.flatMap { a.place(frame: $0.startFrame, time: $0.start) }, inB: extraB.flatMap { b.place(frame: $0.startFrame, time: $0.start) },
          a: "\(connectionsA.count)", b: "\(connectionsB.count)")
        difference.everyA = connectionsA.compactMap { a.place(frame: $0.startFrame, time: $0.start) }
        difference.everyB = connectionsB.compactMap { b.place(frame: $0.startFrame, time: $0.start) }
        differences.append(difference)
      }
      for (number, (connectionA, connectionB)) in zip(connectionsA, connectionsB).enumerated() {
        // Several links to one device: say which pair of them a line is about.
        let about = max(connectionsA.count, connectionsB.count) > 1 ? "\(subject) connection \(number + 1)" : subject
        differences += compareConnections(connectionA, connectionB, a, b, subject: about)
        differences += compareValues(connectionA, connectionB, a, b, subject: about, silenced: silenced)
      }
      differences += compareAttempts(deviceA.address, deviceB.address, a, b, subject: subject)
    }
    differences += compareLatencies(a.operations.latencies, b.operations.latencies)
    differences += compareFindings(a, b)
    return Self.ordered(differences)
  }

  /// A rule of the specifications one capture shows broken and the other does not (`check`'s
  /// findings, by rule id): where it first shows, and how often.
  func compareFindings(_ a: DiffSide, _ b: DiffSide) -> [SessionDifference] {
    guard let findingsA = a.findings, let findingsB = b.findings else { return [] }
    func firsts(_ report: ConformanceReport) -> [String: (group: ConformanceGroup, count: Int)] {
      var byRule: [String: (group: ConformanceGroup, count: Int)] = [:]
      for group in report.groups {
        let id = group.first.rule.id
        if let known = byRule[id] { byRule[id] = (known.group, known.count + group.count) } else { byRule[id] = (group, group.count) }
      }
      return byRule
    }
    let (inA, inB) = (firsts(findingsA), firsts(findingsB))
    var differences: [SessionDifference] = []
    for rule in ConformanceRule.all {
      switch (inA[rule.id], inB[rule.id]) {
      case (let found?, nil):
        let finding = found.group.first
        differences.append(SessionDifference(kind: .rules, subject: rule.id,
          text: "broken in A only (\(found.count)×, \(finding.side.rawValue)): \(finding.message)",
          inA: DifferencePlace(frame: finding.frame, seconds: finding.time), a: "\(found.count)", b: "0"))
      case (nil, let found?):
        let finding = found.group.first
        differences.append(SessionDifference(kind: .rules, subject: rule.id,
          text: "broken in B only (\(found.count)×, \(finding.side.rawValue)): \(finding.message)",
          inB: DifferencePlace(frame: finding.frame, seconds: finding.time), a: "0", b: "\(found.count)"))
      default: break
      }
    }
    return differences
  }

  /// In the order they show in B; then what shows only in A, in A's order; then what has no
  /// place (whole-session figures). Stable otherwise.
  static func ordered(_ differences: [SessionDifference]) -> [SessionDifference] {
    func rank(_ difference: SessionDifference) -> (Int, Double) {
      if let b = difference.inB { return (0, b.seconds) }
      if let a = difference.inA { return (1, a.seconds) }
      return (2, 0)
    }
    return differences.enumerated().sorted { x, y in
      let (rx, ry) = (rank(x.element), rank(y.element))
      return rx != ry ? rx < ry : x.offset < y.offset
    }.map(\.element)
  }

  // MARK: - Devices

  func matchDevices(_ sideA: DiffSide, _ sideB: DiffSide) -> ([(DeviceSummary, DeviceSummary)], [DeviceSummary], [DeviceSummary]) {
    let (a, b) = (sideA.summary, sideB.summary)
    // Only devices something connected to: a scan's passers-by differ from run to run.
    let connectedA = a.devices.filter { $0.connectionCount > 0 }
    var remainingB = b.devices.filter { $0.connectionCount > 0 }
    var pairs: [(DeviceSummary, DeviceSummary)] = []
    var onlyA: [DeviceSummary] = []
    for device in connectedA {
      let identity = device.identity ?? device.address
      if let index = remainingB.firstIndex(where: { ($0.identity ?? $0.address) == identity }) ?? remainingB.firstIndex(where: { $0.name != nil && $0.name == device.name }) {
        pairs.append((device, remainingB.remove(at: index)))
      } else {
        onlyA.append(device)
      }
    }
    // Then by appearance, then by the shape of their GATT tables (the same services and
    // characteristics), each when it singles out one device.
    for device in onlyA {
      let byAppearance = device.appearance.map { appearance in remainingB.indices.filter { remainingB[$0].appearance == appearance } } ?? []
      let shape = sideA.tables[device.address].map(Self.shape)
      let byShape = shape.map { shape in remainingB.indices.filter { sideB.tables[remainingB[$0].address].map(Self.shape) == shape } } ?? []
      if let index = byAppearance.count == 1 ? byAppearance.first : (byShape.count == 1 ? byShape.first : nil) {
        pairs.append((device, remainingB.remove(at: index)))
        onlyA.removeAll { $0.address == device.address }
      }
    }
    // One device on each side, under different addresses: the same device (a new private
    // address), when nothing says otherwise.
    if pairs.isEmpty, onlyA.count == 1, remainingB.count == 1 {
      return ([(onlyA[0], remainingB[0])], [], [])
    }
    return (pairs, onlyA, remainingB)
  }

  /// A table's services and characteristics by UUID, in handle order (handles aside).
  static func shape(_ tree: GATTAttributeTree) -> [String] {
    tree.services.flatMap { service in ["\(service.uuid)"] + service.characteristics.map { "\(service.uuid)/\($0.uuid)" } }
  }

  func describe(_ device: DeviceSummary) -> String {
    device.name.map { "\"\($0)\" (\(device.address))" } ?? "\(device.address)"
  }

  // MARK: - Connections

  func compareConnections(_ a: ConnectionSummary, _ b: ConnectionSummary, _ sideA: DiffSide, _ sideB: DiffSide, subject: String) -> [SessionDifference] {
    var differences: [SessionDifference] = []
    let startA = sideA.place(frame: a.startFrame, time: a.start)
    let startB = sideB.place(frame: b.startFrame, time: b.start)
    func add(_ kind: SessionDifference.Kind, _ text: String, _ valueA: String?, _ valueB: String?, _ inA: DifferencePlace? = nil, _ inB: DifferencePlace? = nil) {
      differences.append(SessionDifference(kind: kind, subject: subject, text: text, inA: inA ?? startA, inB: inB ?? startB, a: valueA, b: valueB))
    }
    if let pa = a.openingParameters, let pb = b.openingParameters {
      if pa.interval != pb.interval {
        add(.parameters, "connection interval \(milliseconds(pa.interval, 1.25)) in A, \(milliseconds(pb.interval, 1.25)) in B",
          milliseconds(pa.interval, 1.25), milliseconds(pb.interval, 1.25))
      }
      if pa.latency != pb.latency {
        add(.parameters, "peripheral latency \(pa.latency) in A, \(pb.latency) in B", "\(pa.latency)", "\(pb.latency)")
      }
      if pa.supervisionTimeout != pb.supervisionTimeout {
        add(.parameters, "supervision timeout \(milliseconds(pa.supervisionTimeout, 10)) in A, \(milliseconds(pb.supervisionTimeout, 10)) in B",
          milliseconds(pa.supervisionTimeout, 10), milliseconds(pb.supervisionTimeout, 10))
      }
    }
    if a.updates.count != b.updates.count {
      let fewer = min(a.updates.count, b.updates.count)
      add(.parameters, "\(a.updates.count) parameter updates in A, \(b.updates.count) in B", "\(a.updates.count)", "\(b.updates.count)",
        a.updates.count > fewer ? sideA.place(frame: a.updates[fewer].frame, time: a.updates[fewer].time) : nil,
        b.updates.count > fewer ? sideB.place(frame: b.updates[fewer].frame, time: b.updates[fewer].time) : nil)
    }
    if a.mtu != b.mtu {
      // Where the MTUs part: the responses when both clients asked for the same MTU (the
      // servers answered differently), else the requests.
      let answered = a.mtuRequested != nil && a.mtuRequested == b.mtuRequested
      add(.mtu, "ATT MTU \(a.mtu.map(String.init) ?? "23 (no exchange)") in A, \(b.mtu.map(String.init) ?? "23 (no exchange)") in B",
        a.mtu.map(String.init), b.mtu.map(String.init), exchangeMTU(a, sideA, response: answered), exchangeMTU(b, sideB, response: answered))
    }
    if a.transmitPHY != b.transmitPHY || a.receivePHY != b.receivePHY {
      add(.phy, "PHY \(phy(a)) in A, \(phy(b)) in B", phy(a), phy(b))
    }
    if a.maxTransmitOctets != b.maxTransmitOctets || a.maxReceiveOctets != b.maxReceiveOctets {
      // Transmit and receive are the capturing host's: across roles they swap.
      let octets = { (c: ConnectionSummary) in c.maxTransmitOctets.map { "\($0)/\(c.maxReceiveOctets ?? 27) octets" } ?? "27 octets (no change)" }
      add(.parameters, "data length \(octets(a)) in A, \(octets(b)) in B", octets(a), octets(b))
    }
    let pairingA = sideA.place(frame: a.security.pairingFrame, time: a.security.pairingTime)
    let pairingB = sideB.place(frame: b.security.pairingFrame, time: b.security.pairingTime)
    if a.security.method != b.security.method {
      let method = { (c: ConnectionSummary) in c.security.method?.rawValue.replacingUnderscores ?? "no pairing" }
      add(.security, "pairing \(method(a)) in A, \(method(b)) in B", method(a), method(b), pairingA, pairingB)
    }
    if a.security.encrypted != b.security.encrypted || a.security.failureReason != b.security.failureReason {
      add(.security, "link \(security(a)) in A, \(security(b)) in B", security(a), security(b), pairingA, pairingB)
    }
    if let airA = a.air, let airB = b.air { differences += compareAir(airA, airB, subject: subject, sideA, sideB, startA, startB) }
    // Roles name the ends only when both captures know them.
    let byRole = a.role != nil && b.role != nil
    let (endA, endB) = (ending(a, byRole: byRole), ending(b, byRole: byRole))
    if endA != endB {
      add(.disconnect, "ended \(endA) in A, \(endB) in B", endA, endB,
        sideA.place(frame: a.endFrame, time: a.end), sideB.place(frame: b.endFrame, time: b.end))
    }
    return differences
  }

  /// Two sniffed links' air: the share of packets sent again or damaged, when one is at least
  /// twice the other and 2 points apart (a noisy link, not noise); each side's mean signal, when
  /// 10 dB apart (the sniffer may have moved, but a strap worn loose shows so too).
  /// A share of packets differs where the first of them shows; the signal, from the start.
  func compareAir(
    _ a: AirLinkSummary, _ b: AirLinkSummary, subject: String, _ sideA: DiffSide, _ sideB: DiffSide, _ startA: DifferencePlace?,
    _ startB: DifferencePlace?
  ) -> [SessionDifference] {
    var differences: [SessionDifference] = []
    func add(_ text: String, _ valueA: String, _ valueB: String, _ firstA: (frame: Int, time: Int64)? = nil, _ firstB: (frame: Int, time: Int64)? = nil) {
      let inA = firstA.map { sideA.place(frame: $0.frame, time: $0.time) } ?? startA
      let inB = firstB.map { sideB.place(frame: $0.frame, time: $0.time) } ?? startB
      differences.append(SessionDifference(kind: .air, subject: subject, text: text, inA: inA, inB: inB, a: valueA, b: valueB))
    }
    func share(_ count: Int, _ of: Int) -> Double { of == 0 ? 0 : Double(count) / Double(of) * 100 }
    func percent(_ value: Double) -> String {
      let tenths = Int((value * 10).rounded())
      return value < 10 ? "\(tenths / 10).\(tenths % 10) %" : "\(Int(value.rounded())) %"
    }
    let shares = [
      ("retransmissions", a.retransmissions, b.retransmissions, a.firstRetransmission, b.firstRetransmission),
      ("packets with a bad CRC", a.damaged, b.damaged, a.firstDamaged, b.firstDamaged),
    ]
    for (what, countA, countB, firstA, firstB) in shares {
      let (shareA, shareB) = (share(countA, a.packets), share(countB, b.packets))
      guard abs(shareA - shareB) >= 2, max(shareA, shareB) >= 2 * min(shareA, shareB) else { continue }
      add("\(what) \(percent(shareA)) of the link's packets in A, \(percent(shareB)) in B", percent(shareA), percent(shareB), firstA, firstB)
    }
    for (index, side) in ["central", "peripheral"].enumerated() {
      guard let meanA = a.signal[index].mean, let meanB = b.signal[index].mean, abs(meanA - meanB) >= 10 else { continue }
      let (dbmA, dbmB) = ("\(Int(meanA.rounded())) dBm", "\(Int(meanB.rounded())) dBm")
      add("the \(side) heard at \(dbmA) in A, \(dbmB) in B (mean signal at the sniffer)", dbmA, dbmB)
    }
    return differences
  }

  /// Where a connection's MTU exchange was: the response that agreed the MTU (`response`),
  /// else the connection's first Exchange MTU Request.
  func exchangeMTU(_ connection: ConnectionSummary, _ side: DiffSide, response: Bool) -> DifferencePlace? {
    if response, let place = side.place(frame: connection.mtuFrame, time: connection.mtuTime) { return place }
    let steps = side.operations.connections.first { $0.label.handle == connection.handle && $0.label.generation == connection.generation && $0.label.adapter == connection.adapter }?.steps
    return steps?.first { $0.kind == .exchangeMTU }.flatMap { side.place(frame: $0.frame, time: $0.time) }
  }

  func milliseconds(_ units: UInt16, _ step: Double) -> String {
    let value = Double(units) * step
    return value == value.rounded() ? "\(Int(value)) ms" : "\(value) ms"
  }

  func phy(_ connection: ConnectionSummary) -> String {
    func name(_ phy: UInt8?) -> String {
      switch phy {
      case 1?: return "1M"
      case 2?: return "2M"
      case 3?: return "Coded"
      default: return "1M (no update)"
      }
    }
    return connection.transmitPHY == connection.receivePHY ? name(connection.transmitPHY) : "\(name(connection.transmitPHY)) out, \(name(connection.receivePHY)) in"
  }

  func security(_ connection: ConnectionSummary) -> String {
    if let failure = connection.security.failureReason { return "pairing failed (0x\(Hex.string([failure])))" }
    return connection.security.encrypted ? "encrypted" : "not encrypted"
  }

  /// How a link ended, told by role (central, peripheral) rather than by which end captured
  /// it, with the reason that went over the air: the end that disconnects reports 0x16
  /// (Terminated By Local Host) to its own host and sends the reason its host gave, which the
  /// other end reports. So a phone's and a strap's capture of one ending read the same.
  func ending(_ connection: ConnectionSummary, byRole: Bool) -> String {
    let role = byRole ? connection.role : nil
    guard var reason = connection.disconnectReason else { return "open at the capture's end" }
    var who: String?
    switch connection.initiator {
    case .localHost?:
      if let sent = connection.disconnectRequestReason { reason = sent }
      who = roleName(role, local: true).map { "by the \($0)" } ?? "by the local host"
    case .peer?:
      who = roleName(role, local: false).map { "by the \($0)" } ?? "by the peer"
    case .linkLost?:
      who = "link lost"
    default:
      who = nil
    }
    let name = AssignedNumbers.hciErrorName(reason).map { "\($0)" } ?? "reason 0x\(Hex.string([reason]))"
    return who.map { "\($0): \(name)" } ?? name
  }

  /// The role of the capturing host's end (`local`) or of the other end.
  func roleName(_ role: LinkRole?, local: Bool) -> String? {
    switch (role, local) {
    case (.central?, true), (.peripheral?, false): return "central"
    case (.peripheral?, true), (.central?, false): return "peripheral"
    default: return nil
    }
  }

  // MARK: - Values and timing

  func compareValues(_ a: ConnectionSummary, _ b: ConnectionSummary, _ sideA: DiffSide, _ sideB: DiffSide, subject: String, silenced: Set<String>) -> [SessionDifference] {
    var differences: [SessionDifference] = []
    let startA = sideA.place(frame: a.startFrame, time: a.start)
    let startB = sideB.place(frame: b.startFrame, time: b.start)
    // Characteristics by UUID, the k-th of one UUID in A against the k-th in B (a table may
    // name two handles alike).
    var inB: [BluetoothUUID: [CharacteristicActivity]] = [:]
    for activity in b.characteristics where !activity.isDescriptor {
      if let uuid = activity.uuid { inB[uuid, default: []].append(activity) }
    }
    var seen: [BluetoothUUID: Int] = [:]
    for activityA in a.characteristics where !activityA.isDescriptor {
      guard let uuid = activityA.uuid else { continue }
      let copy = seen[uuid, default: 0]
      seen[uuid] = copy + 1
      guard !silenced.contains(uuid.description), let others = inB[uuid], copy < others.count else { continue }
      let activityB = others[copy]
      let pushedA = activityA.notifications + activityA.indications
      let pushedB = activityB.notifications + activityB.indications
      if max(pushedA, pushedB) >= 4, Double(abs(pushedA - pushedB)) > thresholds.share * Double(max(pushedA, pushedB)) {
        var difference = SessionDifference(kind: .values, subject: subject, text: "\(name(uuid)): \(pushedA) value\(pushedA == 1 ? "" : "s") pushed in A, \(pushedB) in B",
          inA: startA, inB: startB, a: "\(pushedA)", b: "\(pushedB)")
        difference.countA = pushedA
        difference.countB = pushedB
        differences.append(difference)
      }
      let gapA = activityA.longestGaps.filter { !$0.untilEnd }.max { $0.microseconds < $1.microseconds }
      let gapB = activityB.longestGaps.filter { !$0.untilEnd }.max { $0.microseconds < $1.microseconds }
      let (lengthA, lengthB) = (gapA?.microseconds ?? 0, gapB?.microseconds ?? 0)
      let (longer, shorter, inB) = lengthB >= lengthA ? (lengthB, lengthA, true) : (lengthA, lengthB, false)
      // A silence is judged against the other side's rhythm: both need a few values to have one.
      if min(pushedA, pushedB) >= 3, Double(longer) > thresholds.gapFactor * Double(shorter),
        Double(longer.saturatingSubtract(shorter)) > thresholds.gapSeconds * 1_000_000
      {
        let gap = inB ? gapB : gapA
        let side = inB ? sideB : sideA
        let at = gap.map { side.seconds($0.start) } ?? 0
        // Where the values came back.
        let place = gap.flatMap { gap in gap.endFrame.map { DifferencePlace(frame: $0, seconds: side.seconds(gap.start.saturatingAdd(gap.microseconds))) } }
        differences.append(SessionDifference(kind: .timing, subject: subject,
          text: "\(name(uuid)): values stopped for \(fixed(Double(longer) / 1e6)) s at \(fixed(at)) s in \(inB ? "B" : "A") (\(inB ? "A" : "B"): at most \(fixed(Double(shorter) / 1e6)) s)",
          inA: inB ? nil : place, inB: inB ? place : nil, a: fixed(Double(lengthA) / 1e6) + " s", b: fixed(Double(lengthB) / 1e6) + " s"))
      }
    }
    if let hrA = a.heartRate?.bpm.mean, let hrB = b.heartRate?.bpm.mean, abs(hrA - hrB) > thresholds.bpm {
      differences.append(SessionDifference(kind: .values, subject: subject, text: "mean heart rate \(fixed(hrA)) bpm in A, \(fixed(hrB)) bpm in B",
        inA: startA, inB: startB, a: fixed(hrA), b: fixed(hrB)))
    }
    if let flags = compareFlags(a.heartRate, b.heartRate) {
      differences.append(SessionDifference(kind: .values, subject: subject, text: "flagged heart-rate values: \(flags.a) in A, \(flags.b) in B",
        inA: startA, inB: startB, a: flags.a, b: flags.b))
    }
    if let rrA = a.heartRate?.rr.mean, let rrB = b.heartRate?.rr.mean, abs(rrA - rrB) > thresholds.rrMilliseconds {
      differences.append(SessionDifference(kind: .values, subject: subject, text: "mean RR interval \(fixed(rrA)) ms in A, \(fixed(rrB)) ms in B",
        inA: startA, inB: startB, a: fixed(rrA), b: fixed(rrB)))
    }
    return differences
  }

  /// Measurements flagged as implausible (`HeartRateFlags`), when one side has a kind the other
  /// never had, or counts differing by more than `share`: "none" or "12 bpm_out_of_range, 3
  /// no_contact".
  func compareFlags(_ a: HeartRateSummary?, _ b: HeartRateSummary?) -> (a: String, b: String)? {
    guard a != nil || b != nil else { return nil }
    let countsA = a?.flagCounts ?? [Int](repeating: 0, count: HeartRateFlags.all.count)
    let countsB = b?.flagCounts ?? [Int](repeating: 0, count: HeartRateFlags.all.count)
    let differ = zip(countsA, countsB).contains { x, y in
      (x == 0) != (y == 0) || (max(x, y) >= 4 && Double(abs(x - y)) > thresholds.share * Double(max(x, y)))
    }
    guard differ else { return nil }
    func text(_ counts: [Int]) -> String {
      let parts = zip(counts, HeartRateFlags.all).filter { $0.0 > 0 }.map { "\($0.0) \($0.1.word)" }
      return parts.isEmpty ? "none" : parts.joined(separator: ", ")
    }
    return (text(countsA), text(countsB))
  }

  func fixed(_ value: Double) -> String { SummaryPart.formatReal(value, places: 1) }

  // MARK: - Attempts and latency

  /// Connection attempts that did not end in a connection, by outcome.
  func compareAttempts(_ addressA: BDAddr, _ addressB: BDAddr, _ a: DiffSide, _ b: DiffSide, subject: String) -> [SessionDifference] {
    func failures(_ summary: SessionSummary, _ address: BDAddr) -> (counts: [String: Int], first: ConnectionAttempt?) {
      var counts: [String: Int] = [:]
      var first: ConnectionAttempt?
      for attempt in summary.attempts where attempt.peer == address {
        switch attempt.outcome {
        case .connected: continue
        case .rejected(let status), .failed(let status): counts["failed (\(AssignedNumbers.hciErrorName(status).map { "\($0)" } ?? "0x" + Hex.string([status])))", default: 0] += 1
        case .cancelled: counts["cancelled", default: 0] += 1
        case .neverCompleted: counts["never completed", default: 0] += 1
        }
        first = first ?? attempt
      }
      return (counts, first)
    }
    let failedA = failures(a.summary, addressA)
    let failedB = failures(b.summary, addressB)
    guard failedA.counts != failedB.counts else { return [] }
    let text = { (counts: [String: Int]) in counts.isEmpty ? "none" : counts.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ") }
    return [SessionDifference(kind: .parameters, subject: subject,
      text: "connection attempts that did not connect: \(text(failedA.counts)) in A, \(text(failedB.counts)) in B",
      inA: failedA.first.flatMap { a.place(frame: $0.frame, time: $0.time) }, inB: failedB.first.flatMap { b.place(frame: $0.frame, time: $0.time) },
      a: text(failedA.counts), b: text(failedB.counts))]
  }

  /// Procedures answered much more slowly on one side: median ATT latencies of the same
  /// procedure asked by the same end (the central's requests, the peripheral's) and timed the
  /// same way (`LatencyClock`: a host's round trip, a host's own answers, the air), when each
  /// side has the values to carry a median (3; `QuantileSketch.minimumCount`).
  func compareLatencies(_ a: LatencyTimings, _ b: LatencyTimings) -> [SessionDifference] {
    var differences: [SessionDifference] = []
    for (key, timingA) in a.timings.sorted(by: { Self.order($0.key, $1.key) }) {
      guard let timingB = b.timings[key], let medianA = timingA.sketch.carriedQuantile(0.5), let medianB = timingB.sketch.carriedQuantile(0.5)
      else { continue }
      let (slower, faster) = (max(medianA, medianB) / 1000, min(medianA, medianB) / 1000)
      guard slower > thresholds.latencyFactor * faster, slower - faster > thresholds.latencyMilliseconds else { continue }
      let name = AssignedNumbers.attOpcodeName(key.opcode).map { "\($0)" } ?? "opcode 0x\(Hex.string([key.opcode]))"
      let (textA, textB) = (fixed(medianA / 1000) + " ms", fixed(medianB / 1000) + " ms")
      differences.append(SessionDifference(kind: .timing, subject: "ATT",
        text: "\(name) from the \(key.centralAsked ? "central" : "peripheral") answered in \(textA) (median of \(timingA.sketch.count)) in A, "
          + "\(textB) (median of \(timingB.sketch.count)) in B, both timed \(key.clock.words)",
        a: textA, b: textB))
    }
    return differences
  }

  /// Latencies the comparison left alone because the captures timed them differently (an HCI
  /// capture and a sniffer, the asking and the answering host): one sentence per end that
  /// asked, when both captures timed its requests but never the same way.
  package func notes(_ a: DiffSide, _ b: DiffSide) -> [String] {
    var notes: [String] = []
    for central in [true, false] {
      let clocksA = Set(a.operations.latencies.asked(byCentral: central).keys.map(\.clock))
      let clocksB = Set(b.operations.latencies.asked(byCentral: central).keys.map(\.clock))
      guard !clocksA.isEmpty, !clocksB.isEmpty, clocksA.isDisjoint(with: clocksB) else { continue }
      func words(_ clocks: Set<LatencyClock>) -> String {
        LatencyClock.allCases.filter(clocks.contains).map(\.words).joined(separator: " and ")
      }
      notes.append("ATT latency of the \(central ? "central" : "peripheral")'s requests not compared: A timed them \(words(clocksA)), B \(words(clocksB))")
    }
    return notes
  }

  /// Latency groups in a stable order: by opcode, the central's first, then by clock.
  static func order(_ x: LatencyTimings.Key, _ y: LatencyTimings.Key) -> Bool {
    let clocks = LatencyClock.allCases
    return (x.opcode, x.centralAsked ? 0 : 1, clocks.firstIndex(of: x.clock) ?? 0) < (y.opcode, y.centralAsked ? 0 : 1, clocks.firstIndex(of: y.clock) ?? 0)
  }

  func name(_ uuid: BluetoothUUID?) -> String {
    guard let uuid else { return "an unnamed attribute" }
    return GATTDatabase.name(uuid).map { "\($0)" } ?? uuid.description
  }
}

extension String {
  fileprivate var replacingUnderscores: String { String(map { $0 == "_" ? " " : $0 }) }
}
