import BLECore
import BLEDecoder

/// What one capture gives a comparison: its summary, the GATT tables of its peers, and each
/// connection's procedure steps.
public struct DiffSide: Sendable {
  public var summary: SessionSummary
  public var tables: [BDAddr: GATTAttributeTree]
  public var operations: OperationLog

  public init(summary: SessionSummary, tables: [BDAddr: GATTAttributeTree], operations: OperationLog) {
    self.summary = summary
    self.tables = tables
    self.operations = operations
  }
}

/// One difference between two sessions, in words, with the class `--ignore` silences.
public struct SessionDifference: Sendable {
  public enum Kind: String, Sendable, CaseIterable {
    case devices, gatt, parameters, mtu, phy, security, disconnect, procedure, values, timing
  }
  public var kind: Kind
  /// The device (or connection) it is about.
  public var subject: String
  public var text: String
  /// Where in B (or A) it shows, for ordering: seconds from the capture's start.
  public var time: Double
  public var a: String?
  public var b: String?
}

/// Compares two sessions: devices matched by address (then by name), their GATT tables,
/// connections paired in order, procedure steps aligned, and values beyond thresholds.
public struct SessionDiff: Sendable {
  public struct Thresholds: Sendable {
    /// A silence between pushed values reported when longer than this many times the other
    /// side's longest, and by at least `gapSeconds`.
    public var gapFactor = 3.0
    public var gapSeconds = 5.0
    /// Mean heart rates this far apart (bpm).
    public var bpm = 10.0
    /// Counts and rates differing by more than this share.
    public var share = 0.5
    /// Mean RR intervals this far apart (ms).
    public var rrMilliseconds = 100.0
    /// A procedure's median ATT latency this many times the other side's, and by at least
    /// `latencyMilliseconds`.
    public var latencyFactor = 3.0
    public var latencyMilliseconds = 50.0
    public init() {}
  }

  public var thresholds = Thresholds()
  public init() {}

  public func compare(_ a: DiffSide, _ b: DiffSide) -> [SessionDifference] {
    var differences: [SessionDifference] = []
    let (pairs, onlyA, onlyB) = matchDevices(a, b)
    for device in onlyA {
      differences.append(SessionDifference(kind: .devices, subject: "\(device.address)", text: "\(describe(device)) is only in A", time: seconds(device.firstSeen, a.summary), a: "present", b: nil))
    }
    for device in onlyB {
      differences.append(SessionDifference(kind: .devices, subject: "\(device.address)", text: "\(describe(device)) is only in B", time: seconds(device.firstSeen, b.summary), a: nil, b: "present"))
    }
    for (deviceA, deviceB) in pairs {
      let subject = deviceA.name.map { "\"\($0)\"" } ?? "\(deviceA.address)"
      if let tableA = a.tables[deviceA.address], let tableB = b.tables[deviceB.address] {
        differences += compareTables(tableA, tableB, subject: subject)
      }
      let connectionsA = a.summary.connections.filter { $0.peer == deviceA.address }
      let connectionsB = b.summary.connections.filter { $0.peer == deviceB.address }
      if connectionsA.count != connectionsB.count {
        differences.append(SessionDifference(kind: .parameters, subject: subject,
          text: "\(connectionsA.count) connection\(connectionsA.count == 1 ? "" : "s") in A, \(connectionsB.count) in B", time: 0,
          a: "\(connectionsA.count)", b: "\(connectionsB.count)"))
      }
      for (connectionA, connectionB) in zip(connectionsA, connectionsB) {
        differences += compareConnections(connectionA, connectionB, a, b, subject: subject)
      }
      differences += compareAttempts(deviceA.address, deviceB.address, a.summary, b.summary, subject: subject)
    }
    differences += compareLatencies(a.summary, b.summary)
    return differences.sorted { $0.time < $1.time }
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

  func seconds(_ time: Int64, _ summary: SessionSummary) -> Double {
    Double(Timestamp.elapsed(from: summary.firstTimestamp ?? time, to: time)) / 1_000_000
  }

  // MARK: - GATT tables

  func compareTables(_ a: GATTAttributeTree, _ b: GATTAttributeTree, subject: String) -> [SessionDifference] {
    var differences: [SessionDifference] = []
    func key(_ service: GATTServiceEntry, _ characteristic: GATTCharacteristicEntry) -> String { "\(service.uuid)/\(characteristic.uuid)" }
    var inB: [String: (GATTServiceEntry, GATTCharacteristicEntry)] = [:]
    for service in b.services { for characteristic in service.characteristics { inB[key(service, characteristic)] = (service, characteristic) } }
    var inA: Set<String> = []
    var shifts: [Int: Int] = [:]
    for service in a.services {
      if !b.services.contains(where: { $0.uuid == service.uuid }) {
        differences.append(SessionDifference(kind: .gatt, subject: subject, text: "service \(name(service.uuid)) is missing from B's GATT table", time: 0, a: "present", b: nil))
        continue
      }
      for characteristic in service.characteristics {
        inA.insert(key(service, characteristic))
        guard let (_, other) = inB[key(service, characteristic)] else {
          var text = "\(name(characteristic.uuid)) (\(Hex.prefixed(UInt64(characteristic.valueHandle), width: 4)) in A) is missing from B's GATT table"
          if let (delta, from) = handleShift(a, b) { text += "; the handles after it moved by \(delta) (from \(Hex.prefixed(UInt64(from), width: 4)))" }
          differences.append(SessionDifference(kind: .gatt, subject: subject, text: text, time: 0, a: "present", b: nil))
          continue
        }
        for descriptor in characteristic.descriptors where !other.descriptors.contains(where: { $0.uuid == descriptor.uuid }) {
          differences.append(SessionDifference(kind: .gatt, subject: subject,
            text: "\(name(characteristic.uuid)) has no \(name(descriptor.uuid)) in B's GATT table", time: 0, a: "present", b: nil))
        }
        for descriptor in other.descriptors where !characteristic.descriptors.contains(where: { $0.uuid == descriptor.uuid }) {
          differences.append(SessionDifference(kind: .gatt, subject: subject,
            text: "\(name(characteristic.uuid)) has \(name(descriptor.uuid)) only in B's GATT table", time: 0, a: nil, b: "present"))
        }
        if other.properties != characteristic.properties {
          differences.append(SessionDifference(kind: .gatt, subject: subject,
            text: "\(name(characteristic.uuid)): properties \(GATTCharacteristicEntry.propertyNames(characteristic.properties).map(\.description).joined(separator: ", ")) in A, \(GATTCharacteristicEntry.propertyNames(other.properties).map(\.description).joined(separator: ", ")) in B",
            time: 0, a: "\(characteristic.properties)", b: "\(other.properties)"))
        }
        let delta = Int(other.valueHandle) - Int(characteristic.valueHandle)
        if delta != 0 { shifts[delta, default: 0] += 1 }
      }
    }
    for service in b.services where !a.services.contains(where: { $0.uuid == service.uuid }) {
      differences.append(SessionDifference(kind: .gatt, subject: subject, text: "service \(name(service.uuid)) is only in B's GATT table", time: 0, a: nil, b: "present"))
    }
    for service in b.services where a.services.contains(where: { $0.uuid == service.uuid }) {
      for characteristic in service.characteristics where !inA.contains(key(service, characteristic)) {
        differences.append(SessionDifference(kind: .gatt, subject: subject,
          text: "\(name(characteristic.uuid)) is only in B's GATT table (\(Hex.prefixed(UInt64(characteristic.valueHandle), width: 4)))", time: 0, a: nil, b: "present"))
      }
    }
    // Handles that moved with nothing missing: one line, not one per handle.
    if differences.isEmpty, let (delta, from) = handleShift(a, b) {
      differences.append(SessionDifference(kind: .gatt, subject: subject, text: "the same GATT table, its handles from \(Hex.prefixed(UInt64(from), width: 4)) on moved by \(delta) in B", time: 0, a: nil, b: nil))
    }
    return differences
  }

  /// The shift of the first characteristic (by UUID) whose value handle differs, and where.
  func handleShift(_ a: GATTAttributeTree, _ b: GATTAttributeTree) -> (Int, UInt16)? {
    for service in a.services {
      guard let other = b.services.first(where: { $0.uuid == service.uuid }) else { continue }
      for characteristic in service.characteristics {
        guard let match = other.characteristics.first(where: { $0.uuid == characteristic.uuid }) else { continue }
        if match.valueHandle != characteristic.valueHandle {
          return (Int(match.valueHandle) - Int(characteristic.valueHandle), characteristic.valueHandle)
        }
      }
    }
    return nil
  }

  func name(_ uuid: BluetoothUUID?) -> String {
    guard let uuid else { return "an unnamed attribute" }
    return GATTDatabase.name(uuid).map { "\($0)" } ?? uuid.description
  }

  // MARK: - Connections

  func compareConnections(_ a: ConnectionSummary, _ b: ConnectionSummary, _ sideA: DiffSide, _ sideB: DiffSide, subject: String) -> [SessionDifference] {
    var differences: [SessionDifference] = []
    let when = seconds(b.start, sideB.summary)
    if let pa = a.openingParameters, let pb = b.openingParameters {
      if pa.interval != pb.interval {
        differences.append(SessionDifference(kind: .parameters, subject: subject,
          text: "connection interval \(milliseconds(pa.interval, 1.25)) in A, \(milliseconds(pb.interval, 1.25)) in B", time: when,
          a: milliseconds(pa.interval, 1.25), b: milliseconds(pb.interval, 1.25)))
      }
      if pa.latency != pb.latency {
        differences.append(SessionDifference(kind: .parameters, subject: subject, text: "peripheral latency \(pa.latency) in A, \(pb.latency) in B", time: when, a: "\(pa.latency)", b: "\(pb.latency)"))
      }
      if pa.supervisionTimeout != pb.supervisionTimeout {
        differences.append(SessionDifference(kind: .parameters, subject: subject,
          text: "supervision timeout \(milliseconds(pa.supervisionTimeout, 10)) in A, \(milliseconds(pb.supervisionTimeout, 10)) in B", time: when,
          a: milliseconds(pa.supervisionTimeout, 10), b: milliseconds(pb.supervisionTimeout, 10)))
      }
    }
    if a.updates.count != b.updates.count {
      differences.append(SessionDifference(kind: .parameters, subject: subject, text: "\(a.updates.count) parameter updates in A, \(b.updates.count) in B", time: when, a: "\(a.updates.count)", b: "\(b.updates.count)"))
    }
    if a.mtu != b.mtu {
      differences.append(SessionDifference(kind: .mtu, subject: subject, text: "ATT MTU \(a.mtu.map(String.init) ?? "23 (no exchange)") in A, \(b.mtu.map(String.init) ?? "23 (no exchange)") in B", time: when,
        a: a.mtu.map(String.init), b: b.mtu.map(String.init)))
    }
    if a.transmitPHY != b.transmitPHY || a.receivePHY != b.receivePHY {
      differences.append(SessionDifference(kind: .phy, subject: subject, text: "PHY \(phy(a)) in A, \(phy(b)) in B", time: when, a: phy(a), b: phy(b)))
    }
    if a.maxTransmitOctets != b.maxTransmitOctets || a.maxReceiveOctets != b.maxReceiveOctets {
      let octets = { (c: ConnectionSummary) in c.maxTransmitOctets.map { "\($0)/\(c.maxReceiveOctets ?? 27) octets" } ?? "27 octets (no change)" }
      differences.append(SessionDifference(kind: .parameters, subject: subject, text: "data length \(octets(a)) in A, \(octets(b)) in B", time: when, a: octets(a), b: octets(b)))
    }
    if a.security.method != b.security.method {
      let method = { (c: ConnectionSummary) in c.security.method?.rawValue.replacingUnderscores ?? "no pairing" }
      differences.append(SessionDifference(kind: .security, subject: subject, text: "pairing \(method(a)) in A, \(method(b)) in B", time: when, a: method(a), b: method(b)))
    }
    if a.security.encrypted != b.security.encrypted || a.security.failureReason != b.security.failureReason {
      differences.append(SessionDifference(kind: .security, subject: subject, text: "link \(security(a)) in A, \(security(b)) in B", time: when, a: security(a), b: security(b)))
    }
    if a.disconnectReason != b.disconnectReason || a.initiator != b.initiator {
      let end = b.end.map { seconds($0, sideB.summary) } ?? when
      differences.append(SessionDifference(kind: .disconnect, subject: subject, text: "ended \(ending(a)) in A, \(ending(b)) in B", time: end, a: ending(a), b: ending(b)))
    }
    let stepsA = steps(of: a, in: sideA)
    let stepsB = steps(of: b, in: sideB)
    let (procedure, subscriptionsMissing) = compareSteps(stepsA, stepsB, sideB, subject: subject)
    differences += procedure
    differences += compareValues(a, b, sideA, sideB, subject: subject, silenced: subscriptionsMissing)
    return differences
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

  func ending(_ connection: ConnectionSummary) -> String {
    guard let reason = connection.disconnectReason else { return "open at the capture's end" }
    let name = AssignedNumbers.hciErrorName(reason).map { "\($0)" } ?? "reason 0x\(Hex.string([reason]))"
    switch connection.initiator {
    case .localHost?: return "by the local host: \(name)"
    case .peer?: return "by the peer: \(name)"
    case .linkLost?: return "link lost: \(name)"
    default: return "\(name)"
    }
  }

  func steps(of connection: ConnectionSummary, in side: DiffSide) -> [ProcedureStep] {
    side.operations.connections.first { $0.label.handle == connection.handle && $0.label.generation == connection.generation && $0.label.adapter == connection.adapter }?.steps ?? []
  }

  // MARK: - Procedure steps

  func compareSteps(_ a: [ProcedureStep], _ b: [ProcedureStep], _ sideB: DiffSide, subject: String) -> ([SessionDifference], Set<String>) {
    let pairs = SequenceAlignment.align(a, b) { x, y in x.isSameStep(as: y) ? x.outcome == y.outcome : nil }
    var differences: [SessionDifference] = []
    var silenced: Set<String> = []
    // A subscription missing or added is one difference, whatever steps it took.
    var missingSubscriptions: [String: ProcedureStep] = [:]
    var addedSubscriptions: [String: ProcedureStep] = [:]
    for pair in pairs {
      switch (pair.a, pair.b) {
      case let (i?, j?):
        if a[i].outcome != b[j].outcome {
          differences.append(SessionDifference(kind: .procedure, subject: subject,
            text: "\(stepText(a[i])) → \(outcomeText(a[i].outcome)) in A, → \(outcomeText(b[j].outcome)) in B", time: seconds(b[j].time, sideB.summary),
            a: outcomeText(a[i].outcome), b: outcomeText(b[j].outcome)))
        }
      case let (i?, nil):
        if a[i].kind == .subscribe {
          missingSubscriptions[a[i].uuid?.description ?? "?"] = missingSubscriptions[a[i].uuid?.description ?? "?"] ?? a[i]
          continue
        }
        differences.append(SessionDifference(kind: .procedure, subject: subject, text: "B never did: \(stepText(a[i]))", time: position(pair, b, sideB), a: stepText(a[i]), b: nil))
      case let (nil, j?):
        if b[j].kind == .subscribe {
          addedSubscriptions[b[j].uuid?.description ?? "?"] = addedSubscriptions[b[j].uuid?.description ?? "?"] ?? b[j]
          continue
        }
        differences.append(SessionDifference(kind: .procedure, subject: subject, text: "only B did: \(stepText(b[j]))", time: seconds(b[j].time, sideB.summary), a: nil, b: stepText(b[j])))
      case (nil, nil):
        break
      }
    }
    for (key, step) in missingSubscriptions.sorted(by: { $0.value.frame < $1.value.frame }) {
      silenced.insert(key)
      differences.append(SessionDifference(kind: .procedure, subject: subject, text: "B never enabled notifications on \(name(step.uuid))", time: 0, a: "subscribed", b: nil))
    }
    for (key, step) in addedSubscriptions.sorted(by: { $0.value.frame < $1.value.frame }) where missingSubscriptions[key] == nil {
      silenced.insert(key)
      differences.append(SessionDifference(kind: .procedure, subject: subject, text: "only B enabled notifications on \(name(step.uuid))", time: seconds(step.time, sideB.summary), a: nil, b: "subscribed"))
    }
    return (differences, silenced)
  }

  func position(_ pair: SequenceAlignment.Pair, _ b: [ProcedureStep], _ side: DiffSide) -> Double {
    b.first.map { seconds($0.time, side.summary) } ?? 0
  }

  public func stepText(_ step: ProcedureStep) -> String {
    switch step.kind {
    case .exchangeMTU: return "Exchange MTU"
    case .discoverServices: return "discover services"
    case .discoverCharacteristics: return "discover the characteristics of \(name(step.uuid))"
    case .discoverDescriptors: return "discover the descriptors of \(name(step.uuid))"
    case .read: return "Read \(name(step.uuid))"
    case .write: return "Write \(name(step.uuid))"
    case .writeCommand: return "Write Command \(name(step.uuid))"
    case .subscribe: return "Write CCCD \(name(step.uuid)) (\(step.detail?.description ?? "?"))"
    }
  }

  public func outcomeText(_ outcome: ProcedureStep.Outcome) -> String {
    switch outcome {
    case .ok: return "success"
    case .noAnswer: return "no answer"
    case .error(let code): return AssignedNumbers.attErrorName(code).map { "\($0)" } ?? "error 0x\(Hex.string([code]))"
    }
  }

  // MARK: - Values and timing

  func compareValues(_ a: ConnectionSummary, _ b: ConnectionSummary, _ sideA: DiffSide, _ sideB: DiffSide, subject: String, silenced: Set<String>) -> [SessionDifference] {
    var differences: [SessionDifference] = []
    for activityA in a.characteristics where !activityA.isDescriptor {
      guard let uuid = activityA.uuid, !silenced.contains(uuid.description) else { continue }
      guard let activityB = b.characteristics.first(where: { $0.uuid == uuid && !$0.isDescriptor }) else { continue }
      let pushedA = activityA.notifications + activityA.indications
      let pushedB = activityB.notifications + activityB.indications
      if max(pushedA, pushedB) >= 4, Double(abs(pushedA - pushedB)) > thresholds.share * Double(max(pushedA, pushedB)) {
        differences.append(SessionDifference(kind: .values, subject: subject, text: "\(name(uuid)): \(pushedA) values pushed in A, \(pushedB) in B", time: 0, a: "\(pushedA)", b: "\(pushedB)"))
      }
      let gapA = activityA.longestGaps.filter { !$0.untilEnd }.map(\.microseconds).max() ?? 0
      let gapB = activityB.longestGaps.filter { !$0.untilEnd }.map(\.microseconds).max() ?? 0
      let (longer, shorter, inB) = gapB >= gapA ? (gapB, gapA, true) : (gapA, gapB, false)
      if Double(longer) > thresholds.gapFactor * Double(shorter), Double(longer - shorter) > thresholds.gapSeconds * 1_000_000 {
        let gap = (inB ? activityB : activityA).longestGaps.first { $0.microseconds == longer }
        let side = inB ? sideB : sideA
        let at = gap.map { seconds($0.start, side.summary) } ?? 0
        differences.append(SessionDifference(kind: .timing, subject: subject,
          text: "\(name(uuid)): values stopped for \(fixed(Double(longer) / 1e6)) s at \(fixed(at)) s in \(inB ? "B" : "A") (\(inB ? "A" : "B"): at most \(fixed(Double(shorter) / 1e6)) s)",
          time: at, a: fixed(Double(gapA) / 1e6) + " s", b: fixed(Double(gapB) / 1e6) + " s"))
      }
    }
    if let hrA = a.heartRate?.bpm.mean, let hrB = b.heartRate?.bpm.mean, abs(hrA - hrB) > thresholds.bpm {
      differences.append(SessionDifference(kind: .values, subject: subject, text: "mean heart rate \(fixed(hrA)) bpm in A, \(fixed(hrB)) bpm in B", time: 0, a: fixed(hrA), b: fixed(hrB)))
    }
    if let rrA = a.heartRate?.rr.mean, let rrB = b.heartRate?.rr.mean, abs(rrA - rrB) > thresholds.rrMilliseconds {
      differences.append(SessionDifference(kind: .values, subject: subject, text: "mean RR interval \(fixed(rrA)) ms in A, \(fixed(rrB)) ms in B", time: 0, a: fixed(rrA), b: fixed(rrB)))
    }
    return differences
  }

  func fixed(_ value: Double) -> String { SummaryPart.formatReal(value, places: 1) }

  // MARK: - Attempts and latency

  /// Connection attempts that did not end in a connection, by outcome.
  func compareAttempts(_ addressA: BDAddr, _ addressB: BDAddr, _ a: SessionSummary, _ b: SessionSummary, subject: String) -> [SessionDifference] {
    func failures(_ summary: SessionSummary, _ address: BDAddr) -> [String: Int] {
      var counts: [String: Int] = [:]
      for attempt in summary.attempts where attempt.peer == address {
        switch attempt.outcome {
        case .connected: continue
        case .rejected(let status), .failed(let status): counts["failed (\(AssignedNumbers.hciErrorName(status).map { "\($0)" } ?? "0x" + Hex.string([status])))", default: 0] += 1
        case .cancelled: counts["cancelled", default: 0] += 1
        case .neverCompleted: counts["never completed", default: 0] += 1
        }
      }
      return counts
    }
    let failedA = failures(a, addressA)
    let failedB = failures(b, addressB)
    guard failedA != failedB else { return [] }
    let text = { (counts: [String: Int]) in counts.isEmpty ? "none" : counts.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ") }
    return [SessionDifference(kind: .parameters, subject: subject, text: "connection attempts that did not connect: \(text(failedA)) in A, \(text(failedB)) in B", time: 0, a: text(failedA), b: text(failedB))]
  }

  /// Procedures answered much more slowly on one side (median ATT latency).
  func compareLatencies(_ a: SessionSummary, _ b: SessionSummary) -> [SessionDifference] {
    var differences: [SessionDifference] = []
    for latencyA in a.latencies {
      guard let latencyB = b.latencies.first(where: { $0.opcode == latencyA.opcode }),
        let medianA = latencyA.sketch.quantile(0.5), let medianB = latencyB.sketch.quantile(0.5)
      else { continue }
      let (slower, faster) = (max(medianA, medianB) / 1000, min(medianA, medianB) / 1000)
      guard slower > thresholds.latencyFactor * faster, slower - faster > thresholds.latencyMilliseconds else { continue }
      let name = AssignedNumbers.attOpcodeName(latencyA.opcode).map { "\($0)" } ?? "opcode 0x\(Hex.string([latencyA.opcode]))"
      differences.append(SessionDifference(kind: .timing, subject: "ATT", text: "\(name) answered in \(fixed(medianA / 1000)) ms (median) in A, \(fixed(medianB / 1000)) ms in B", time: 0,
        a: fixed(medianA / 1000) + " ms", b: fixed(medianB / 1000) + " ms"))
    }
    return differences
  }
}

extension String {
  fileprivate var replacingUnderscores: String { String(map { $0 == "_" ? " " : $0 }) }
}
