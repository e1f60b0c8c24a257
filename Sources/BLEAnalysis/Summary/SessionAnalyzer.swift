import BLECore
import BLEDecoder

/// Builds a `SessionSummary` from a capture's frames, one at a time, in bounded memory.
///
/// It reads facts only (link events, ATT facts, typed values), never fields. The common frame
/// (a notification on a known link and handle) costs a few comparisons: the last link and the
/// last handle are remembered, so no hashing happens until the frame names another one.
package struct SessionAnalyzer: Sendable {
  package internal(set) var summary = SessionSummary()

  /// What a connection's analysis needs while it is open; dropped when it closes.
  struct LinkWork: Sendable {
    /// Activities by handle, the local side's with bit 16 set.
    var activityIndex: [UInt32: Int] = [:]
    /// How to read each activity's values, parallel to `characteristics`.
    var kinds: [ValueKind] = []
    /// Whether each activity's characteristic was turned off by a CCCD write after its last value.
    var unsubscribed: [Bool] = []
    var lastHandle: UInt32?
    var lastActivity = -1
    /// CCCD Write Requests waiting for their answer: request frame → subscription index.
    var pendingSubscriptions: [Int: Int] = [:]
    var disconnectRequested = false
    /// The pairing features of each side (Pairing Request, Pairing Response).
    var requestFeatures: (io: UInt8, oob: UInt8, auth: UInt8)?
    var responseFeatures: (io: UInt8, oob: UInt8, auth: UInt8)?
    /// The last Exchange MTU Request each way on the fixed channel (the capturing host's, the
    /// peer's): its frame and client MTU, for the response that answers it.
    var mtuRequests: [(frame: Int, client: UInt16)?] = [nil, nil]
  }

  /// Which typed value an activity's values are, decided once per handle.
  enum ValueKind: Sendable {
    case other, heartRate, heartRateControl, battery, deviceName, appearance, manufacturerName, configuration
  }

  /// An open link: its generation and where its summary is (-1: beyond the limit).
  struct OpenLink: Sendable {
    var generation: Int
    var index: Int
  }

  struct PendingAttempt: Sendable {
    var adapter: UInt16
    var peer: BDAddr?
    var isLE: Bool
    var cancelRequested = false
    /// In `summary.attempts`, or nil beyond the limit.
    var index: Int?
  }

  var deviceIndex: [BDAddr: Int] = [:]
  var open: [UInt32: OpenLink] = [:]
  /// Working state of each summarized connection, parallel to `summary.connections`.
  var work: [LinkWork] = []
  var pendingAttempts: [PendingAttempt] = []
  /// Position in `summary.latencies` per opcode (-1: none yet).
  var latencyIndex = [Int](repeating: -1, count: 256)
  /// The link of the last ATT frame, so a run of frames on one link is not hashed again.
  var lastKey: UInt32 = .max
  var lastGeneration = -1
  var lastIndex = -1

  /// Open links followed at once; past it the table starts afresh (a hostile capture opening
  /// handles without ever closing them). Links open later are found again as mid-capture links.
  static let maximumOpenLinks = 4096
  /// Connection attempts waiting for their completion.
  static let maximumPendingAttempts = 64

  package init() {}

  // MARK: - Frames

  /// Takes in one frame's facts.
  package mutating func add(_ frame: inout DissectedFrame) {
    let time = frame.record.timestamp
    summary.frames += 1
    if summary.firstTimestamp == nil { summary.firstTimestamp = time }
    summary.lastTimestamp = time
    if case .command = frame.hci { summary.sawCommands = true }
    // Before the link events: the packet that ends a link (LL_TERMINATE_IND) is still its own.
    if let air = frame.air, !air.isAdvertising, let label = frame.connection { airPacket(air, frame: frame, label: label, time: time) }
    if !frame.linkEvents.isEmpty {
      for event in frame.linkEvents { linkEvent(event, frame: frame, time: time) }
    }
    // Data on a link is the link heard (air packets above; ACL here).
    if case .acl = frame.record.kind, let label = frame.connection { heard(label, frame: frame.number, time: time) }
    guard let att = frame.att, let label = frame.connection else { return }
    let index = link(label, frame: frame.number, time: time)
    guard index >= 0 else { return }
    attFrame(att, frame: &frame, index: index, time: time)
  }

  /// A packet on the link: when it was last heard.
  mutating func heard(_ label: ConnectionLabel, frame: Int, time: Int64) {
    let index = link(label, frame: frame, time: time)
    guard index >= 0 else { return }
    summary.connections[index].lastHeard = time
    summary.connections[index].lastHeardFrame = frame
    summary.connections[index].heardElsewhere = nil
  }

  /// A data PDU sniffed on a link: counted with what became of it, its signal by side.
  mutating func airPacket(_ air: AirFact, frame: DissectedFrame, label: ConnectionLabel, time: Int64) {
    let index = link(label, frame: frame.number, time: time)
    guard index >= 0 else { return }
    summary.connections[index].lastHeard = time
    summary.connections[index].lastHeardFrame = frame.number
    summary.connections[index].heardElsewhere = nil
    var counts = summary.connections[index].air ?? AirLinkSummary()
    counts.packets += 1
    counts.missed = counts.missed.saturatingAdd(Int(air.missedBefore))
    if air.isRetransmission {
      counts.retransmissions += 1
      if counts.firstRetransmission == nil { counts.firstRetransmission = (frame.number, time) }
    }
    if air.keySource != nil { counts.decrypted += 1 }
    if air.storedDecrypted { counts.storedDecrypted += 1 }
    if air.silenceBefore > 0 {
      let silence = Int64(air.silenceBefore) * 1000
      counts.snifferGaps += 1
      if silence > counts.longestSnifferGap?.microseconds ?? 0 { counts.longestSnifferGap = (silence, frame.number) }
    }
    switch frame.header {
    case .damagedAirPacket:
      counts.damaged += 1
      if counts.firstDamaged == nil { counts.firstDamaged = (frame.number, time) }
    case let .dataPDU(llid, length, encrypted, reassembly):
      if llid == 1 && length == 0 { counts.empty += 1 }
      if encrypted && reassembly != .retransmission { counts.sealed += 1 }
    default: break
    }
    if let signal = air.header.signal, let direction = frame.direction {
      counts.signal[direction == .hostToController ? 0 : 1].add(signal)
    }
    summary.connections[index].air = counts
  }

  /// Ends the analysis: open links and attempts are settled, services taken from `databases`.
  package mutating func finish(databases: [GATTServerIdentity: GATTDatabase]) {
    let end = summary.lastTimestamp ?? 0
    for (_, open) in open where open.index >= 0 {
      settleActivities(open.index, at: end)
      summary.connections[open.index].captureEnd = end
      summary.connections[open.index].ending = Self.ending(ofOpen: summary.connections[open.index], captureEnd: end)
    }
    open.removeAll()
    for attempt in pendingAttempts {
      guard let index = attempt.index else { continue }
      summary.attempts[index].outcome = attempt.cancelRequested ? .cancelled : .neverCompleted
    }
    pendingAttempts.removeAll()
    work.removeAll()
    for index in summary.devices.indices {
      guard let database = databases[.peer(summary.devices[index].address)] else { continue }
      summary.devices[index].services = database.serviceList.map { ServiceEntry(start: $0.start, end: $0.end, uuid: $0.uuid, primary: $0.primary) }
    }
  }

  /// How the capture leaves a link still open at its end. An HCI capture is its host's, which
  /// hears every link it has: open at the end. A sniffed link heard within its supervision
  /// timeout (the one in force) of the end is open at the end; one silent for longer is "last
  /// heard at": the devices may have dropped it, or the sniffer lost its hops.
  static func ending(ofOpen connection: ConnectionSummary, captureEnd: Int64) -> ConnectionSummary.Ending {
    guard connection.air != nil else { return .openAtEnd }
    if let heard = connection.heardElsewhere { return .endedUnseen(frame: heard.frame, time: heard.time, device: heard.device) }
    let silence = Timestamp.elapsed(from: connection.lastHeard, to: captureEnd)
    return silence > quietLimit(connection) ? .lastHeard : .openAtEnd
  }

  /// How long a sniffed link may go unheard and still be called open: six connection
  /// intervals (the central sends in every event, Core Vol 6 Part B §4.5.1, so a sniffer
  /// following the link hears it at least once an interval); 4 s, the longest interval, when
  /// the interval is not known.
  package static func quietLimit(_ connection: ConnectionSummary) -> Int64 {
    guard let interval = connection.parameters?.interval else { return 4_000_000 }
    return Int64(interval) * 1_250 * 6
  }

  // MARK: - Devices

  /// The device at `address`, created when new; nil past `Limits.devices`.
  mutating func device(_ address: BDAddr, type: AddressType?, time: Int64) -> Int? {
    if let index = deviceIndex[address] {
      summary.devices[index].lastSeen = time
      if let type { summary.devices[index].addressType = type }
      return index
    }
    guard summary.devices.count < SessionSummary.Limits.devices else {
      summary.untrackedDeviceReports = summary.untrackedDeviceReports.saturatingAdd(1)
      return nil
    }
    summary.devices.append(DeviceSummary(address: address, addressType: type, time: time))
    deviceIndex[address] = summary.devices.count - 1
    return summary.devices.count - 1
  }

  static func clipped(_ text: String) -> String {
    text.count > SessionSummary.Limits.nameLength ? String(text.prefix(SessionSummary.Limits.nameLength)) + "…" : text
  }

  mutating func advertisement(_ fact: AdvertisementFact, time: Int64) {
    guard let index = device(fact.address, type: fact.addressType, time: time) else { return }
    summary.devices[index].advertisingReports = summary.devices[index].advertisingReports.saturatingAdd(1)
    if let name = fact.name, summary.devices[index].advertisedName == nil || fact.name != summary.devices[index].advertisedName {
      // A complete name is not replaced by a shorter (shortened) one.
      if (summary.devices[index].advertisedName?.count ?? 0) <= name.count { summary.devices[index].advertisedName = Self.clipped(name) }
    }
    if let appearance = fact.appearance { summary.devices[index].appearance = appearance }
    if let company = fact.company { summary.devices[index].company = company }
    if let rssi = fact.rssi {
      summary.devices[index].strongestRSSI = max(summary.devices[index].strongestRSSI ?? rssi, rssi)
      summary.devices[index].weakestRSSI = min(summary.devices[index].weakestRSSI ?? rssi, rssi)
    }
  }

  // MARK: - Links

  static func key(adapter: UInt16, handle: UInt16) -> UInt32 { UInt32(adapter) << 16 | UInt32(handle) }

  /// The summary index of the link a frame belongs to, opening a mid-capture link when it is
  /// new; -1 when the link is beyond the limit.
  mutating func link(_ label: ConnectionLabel, frame: Int, time: Int64) -> Int {
    let key = Self.key(adapter: label.adapter, handle: label.handle)
    if key == lastKey && label.generation == lastGeneration { return lastIndex }
    let index: Int
    if let known = open[key], known.generation == label.generation {
      index = known.index
    } else {
      index = openLink(adapter: label.adapter, handle: label.handle, generation: label.generation, peer: label.peer,
        peerType: label.peerType, localAddress: label.localAddress, role: nil, parameters: nil, startSeen: false, frame: frame, time: time)
    }
    lastKey = key
    lastGeneration = label.generation
    lastIndex = index
    return index
  }

  /// The open link on `handle`, for events that name a handle (nil when none is open: such an
  /// event then opens one as mid-capture when `label` says which).
  mutating func openIndex(adapter: UInt16, handle: UInt16, label: ConnectionLabel?, frame: Int, time: Int64) -> Int? {
    if let label, label.adapter == adapter, label.handle == handle {
      let index = link(label, frame: frame, time: time)
      return index >= 0 ? index : nil
    }
    guard let known = open[Self.key(adapter: adapter, handle: handle)], known.index >= 0 else { return nil }
    return known.index
  }

  mutating func openLink(
    adapter: UInt16, handle: UInt16, generation: Int, peer: BDAddr?, peerType: AddressType?, localAddress: BDAddr? = nil, role: LinkRole?,
    parameters: ConnectionParameters?, startSeen: Bool, frame: Int, time: Int64
  ) -> Int {
    let key = Self.key(adapter: adapter, handle: handle)
    if let previous = open[key], previous.index >= 0 {
      // The handle was not seen closing: it had closed by the time a new link took it.
      settleActivities(previous.index, at: summary.connections[previous.index].lastActivity)
      summary.connections[previous.index].ending = .handleReused(connection: summary.connections.count + 1, frame: frame)
    }
    if open.count >= Self.maximumOpenLinks { open.removeAll() }
    lastKey = .max
    var deviceSlot: Int?
    if let peer { deviceSlot = device(peer, type: peerType, time: time) }
    if let deviceSlot { summary.devices[deviceSlot].connectionCount = summary.devices[deviceSlot].connectionCount.saturatingAdd(1) }
    guard summary.connections.count < SessionSummary.Limits.connections else {
      summary.connectionsNotListed = summary.connectionsNotListed.saturatingAdd(1)
      open[key] = OpenLink(generation: generation, index: -1)
      return -1
    }
    let number = summary.connections.count + 1
    summary.connections.append(ConnectionSummary(
      number: number, adapter: adapter, handle: handle, generation: generation, peer: peer, peerType: peerType, localAddress: localAddress, role: role,
      startSeen: startSeen, startFrame: frame, start: time, lastActivity: time, lastHeard: time, lastHeardFrame: frame, parameters: parameters,
      openingParameters: parameters))
    work.append(LinkWork())
    open[key] = OpenLink(generation: generation, index: number - 1)
    return number - 1
  }

  mutating func linkEvent(_ event: LinkEvent, frame: DissectedFrame, time: Int64) {
    let adapter = frame.record.adapter
    switch event {
    case .advertisement(let fact):
      advertisement(fact, time: time)
    case .connectRequested(let peer, let peerType, let isLE):
      var attempt = PendingAttempt(adapter: adapter, peer: peer, isLE: isLE)
      if summary.attempts.count < SessionSummary.Limits.attempts {
        summary.attempts.append(ConnectionAttempt(frame: frame.number, time: time, peer: peer, peerType: peerType, isLE: isLE, outcome: .neverCompleted))
        attempt.index = summary.attempts.count - 1
      } else {
        summary.attemptsNotListed = summary.attemptsNotListed.saturatingAdd(1)
      }
      if pendingAttempts.count >= Self.maximumPendingAttempts { pendingAttempts.removeFirst() }
      pendingAttempts.append(attempt)
    case .connectRejected(let status):
      // The Command Status answers the latest request on this controller.
      guard let position = pendingAttempts.lastIndex(where: { $0.adapter == adapter }) else { return }
      if let index = pendingAttempts[position].index {
        summary.attempts[index].outcome = .rejected(status: status)
        summary.attempts[index].endFrame = frame.number
      }
      pendingAttempts.remove(at: position)
    case .connectCancelRequested:
      if let position = pendingAttempts.lastIndex(where: { $0.adapter == adapter }) {
        pendingAttempts[position].cancelRequested = true
        if let index = pendingAttempts[position].index { summary.attempts[index].cancelRequested = true }
      }
    case .connected(let status, let handle, let peer, let peerType, let role, let parameters):
      var number: Int?
      if status == 0 {
        let index = openLink(
          adapter: adapter, handle: handle, generation: frame.connection?.generation ?? 0, peer: peer, peerType: peerType,
          localAddress: frame.connection?.localAddress, role: role, parameters: parameters, startSeen: true, frame: frame.number, time: time)
        number = index >= 0 ? index + 1 : nil
      }
      settleAttempt(adapter: adapter, peer: peer, peerType: peerType, status: status, connection: number, frame: frame.number, time: time)
    case .parametersUpdated(let status, let handle, let parameters):
      guard let index = openIndex(adapter: adapter, handle: handle, label: frame.connection, frame: frame.number, time: time) else { return }
      if status == 0 { summary.connections[index].parameters = parameters }
      if summary.connections[index].updates.count < SessionSummary.Limits.parameterUpdates {
        summary.connections[index].updates.append(ParameterChange(frame: frame.number, time: time, status: status, parameters: parameters))
      } else {
        summary.connections[index].updatesNotListed = summary.connections[index].updatesNotListed.saturatingAdd(1)
      }
    case .disconnectRequested(let handle, let reason):
      guard let index = openIndex(adapter: adapter, handle: handle, label: frame.connection, frame: frame.number, time: time) else { return }
      work[index].disconnectRequested = true
      summary.connections[index].disconnectRequestReason = reason
    case .disconnected(let status, let handle, let reason):
      guard status == 0 else { return }
      let key = Self.key(adapter: adapter, handle: handle)
      guard let index = openIndex(adapter: adapter, handle: handle, label: frame.connection, frame: frame.number, time: time) else {
        open[key] = nil
        return
      }
      summary.connections[index].end = time
      summary.connections[index].endFrame = frame.number
      summary.connections[index].lastActivity = time
      summary.connections[index].ending = .ended
      summary.connections[index].disconnectReason = reason
      summary.connections[index].initiator = initiator(reason: reason, requested: work[index].disconnectRequested)
      settleActivities(index, at: time)
      work[index] = LinkWork()
      open[key] = nil
      lastKey = .max
    case .heardElsewhere(let handle, let device):
      guard let known = open[Self.key(adapter: adapter, handle: handle)], known.index >= 0 else { return }
      if summary.connections[known.index].heardElsewhere == nil { summary.connections[known.index].heardElsewhere = (frame.number, time, device) }
    case .encryptionChanged(let status, let handle, let enabled):
      guard let index = openIndex(adapter: adapter, handle: handle, label: frame.connection, frame: frame.number, time: time) else { return }
      if status == 0 {
        summary.connections[index].security.encrypted = enabled
        if enabled && summary.connections[index].security.encryptedSince == nil { summary.connections[index].security.encryptedSince = time }
      } else {
        summary.connections[index].security.encryptionFailures = summary.connections[index].security.encryptionFailures.saturatingAdd(1)
        summary.connections[index].security.lastEncryptionStatus = status
      }
    case .phyUpdated(let status, let handle, let transmit, let receive):
      guard status == 0, let index = openIndex(adapter: adapter, handle: handle, label: frame.connection, frame: frame.number, time: time) else { return }
      summary.connections[index].transmitPHY = transmit
      summary.connections[index].receivePHY = receive
    case .dataLengthChanged(let handle, let maxTransmitOctets, let maxTransmitTime, let maxReceiveOctets, let maxReceiveTime):
      guard let index = openIndex(adapter: adapter, handle: handle, label: frame.connection, frame: frame.number, time: time) else { return }
      summary.connections[index].maxTransmitOctets = maxTransmitOctets
      summary.connections[index].maxTransmitTime = maxTransmitTime
      summary.connections[index].maxReceiveOctets = maxReceiveOctets
      summary.connections[index].maxReceiveTime = maxReceiveTime
    case .remoteVersion(let status, let handle, let version, let manufacturer, _):
      guard status == 0, let index = openIndex(adapter: adapter, handle: handle, label: frame.connection, frame: frame.number, time: time) else { return }
      summary.connections[index].remoteVersion = version
      summary.connections[index].remoteManufacturer = manufacturer
    case .securityManager(let code, let reason):
      guard let label = frame.connection else { return }
      let index = link(label, frame: frame.number, time: time)
      guard index >= 0 else { return }
      security(code: code, reason: reason, fromLocalHost: frame.direction == .hostToController, index: index, frame: frame.number, time: time)
    case .pairingFeatures(let code, let io, let oob, let auth, _, _, _):
      guard let label = frame.connection else { return }
      let index = link(label, frame: frame.number, time: time)
      guard index >= 0 else { return }
      if code == 0x01 { work[index].requestFeatures = (io, oob, auth) } else { work[index].responseFeatures = (io, oob, auth) }
      if let request = work[index].requestFeatures, let response = work[index].responseFeatures {
        let secure = request.auth & 0x08 != 0 && response.auth & 0x08 != 0
        summary.connections[index].security.secureConnections = secure
        summary.connections[index].security.method = Self.pairingMethod(initiator: request, responder: response, secure: secure)
      }
    case .parametersRequested:
      // The answer (an LE Connection Update) is what the summary lists.
      break
    case .identityAddress(let address, let type):
      // Only the peer's own identity (received) names the device; ours goes the other way.
      guard frame.direction == .controllerToHost, let label = frame.connection, let peer = label.peer,
        let slot = deviceIndex[peer]
      else { return }
      summary.devices[slot].identity = address
      summary.devices[slot].identityType = type
    }
  }

  func initiator(reason: UInt8, requested: Bool) -> DisconnectInitiator {
    if requested || reason == 0x16 { return .localHost }
    if reason == 0x08 || reason == 0x22 || reason == 0x3E { return .linkLost }
    return summary.sawCommands ? .peer : .unknown
  }

  mutating func settleAttempt(adapter: UInt16, peer: BDAddr?, peerType: AddressType?, status: UInt8, connection: Int?, frame: Int, time: Int64) {
    // The oldest attempt on this controller for this peer (or through the accept list).
    let position = pendingAttempts.firstIndex { $0.adapter == adapter && ($0.peer == nil || peer == nil || $0.peer == peer) }
    guard let position else {
      // A failed completion without a request seen (an advertising timeout, a capture started late).
      guard status != 0 else { return }
      if summary.attempts.count < SessionSummary.Limits.attempts {
        summary.attempts.append(ConnectionAttempt(frame: nil, time: time, peer: peer, peerType: peerType, isLE: true, outcome: .failed(status: status), endFrame: frame))
      } else {
        summary.attemptsNotListed = summary.attemptsNotListed.saturatingAdd(1)
      }
      return
    }
    let attempt = pendingAttempts.remove(at: position)
    guard let index = attempt.index else { return }
    summary.attempts[index].endFrame = frame
    if status == 0 {
      summary.attempts[index].outcome = .connected(connection: connection)
    } else if attempt.cancelRequested {
      summary.attempts[index].outcome = .cancelled
    } else {
      summary.attempts[index].outcome = .failed(status: status)
    }
  }

  mutating func security(code: UInt8, reason: UInt8?, fromLocalHost: Bool, index: Int, frame: Int, time: Int64) {
    switch code {
    case 0x01, 0x0B:  // Pairing Request, Security Request: pairing starts
      if summary.connections[index].security.pairingFrame == nil {
        summary.connections[index].security.pairingFrame = frame
        summary.connections[index].security.pairingTime = time
      }
    case 0x05:
      summary.connections[index].security.failureReason = reason
      summary.connections[index].security.failureSentByLocalHost = fromLocalHost
    case 0x06, 0x07, 0x08, 0x09, 0x0A:
      summary.connections[index].security.keysDistributed = true
    default:
      break
    }
  }

  /// The pairing method both sides' features select (Core Vol 3 Part H §2.3.5.1, tables 2.6–2.8).
  static func pairingMethod(initiator: (io: UInt8, oob: UInt8, auth: UInt8), responder: (io: UInt8, oob: UInt8, auth: UInt8), secure: Bool) -> SecuritySummary.Method {
    if secure ? (initiator.oob == 1 || responder.oob == 1) : (initiator.oob == 1 && responder.oob == 1) { return .outOfBand }
    if initiator.auth & 0x04 == 0 && responder.auth & 0x04 == 0 { return .justWorks }
    // IO capabilities: 0 DisplayOnly, 1 DisplayYesNo, 2 KeyboardOnly, 3 NoInputNoOutput, 4 KeyboardDisplay.
    let (a, b) = (initiator.io, responder.io)
    guard a <= 4, b <= 4, a != 3, b != 3 else { return .justWorks }
    let displays: Set<UInt8> = [0, 1]
    if displays.contains(a) && displays.contains(b) {
      return secure && a == 1 && b == 1 ? .numericComparison : .justWorks
    }
    // Both able to show and confirm a number: numeric comparison under Secure Connections.
    if secure && (a == 1 || a == 4) && (b == 1 || b == 4) { return .numericComparison }
    return .passkeyEntry
  }
}
