import BLECore
import BLEDecoder

/// Builds a `SessionSummary` from a capture's frames, one at a time, in bounded memory.
///
/// It reads facts only (link events, ATT facts, typed values), never fields. The common frame
/// (a notification on a known link and handle) costs a few comparisons: the last link and the
/// last handle are remembered, so no hashing happens until the frame names another one.
public struct SessionAnalyzer: Sendable {
  public internal(set) var summary = SessionSummary()

  /// What a connection's analysis needs while it is open; dropped when it closes.
  struct LinkWork: Sendable {
    var activityIndex: [UInt16: Int] = [:]
    /// How to read each activity's values, parallel to `characteristics`.
    var kinds: [ValueKind] = []
    /// Whether each activity's characteristic was turned off by a CCCD write after its last value.
    var unsubscribed: [Bool] = []
    var lastHandle: UInt16?
    var lastActivity = -1
    /// CCCD Write Requests waiting for their answer: request frame → subscription index.
    var pendingSubscriptions: [Int: Int] = [:]
    var disconnectRequested = false
    /// The pairing features of each side (Pairing Request, Pairing Response).
    var requestFeatures: (io: UInt8, oob: UInt8, auth: UInt8)?
    var responseFeatures: (io: UInt8, oob: UInt8, auth: UInt8)?
  }

  /// Which typed value an activity's values are, decided once per handle.
  enum ValueKind: Sendable {
    case other, heartRate, battery, deviceName, appearance, manufacturerName, configuration
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

  public init() {}

  // MARK: - Frames

  /// Takes in one frame's facts.
  public mutating func add(_ frame: inout DissectedFrame) {
    let time = frame.record.timestamp
    summary.frames += 1
    if summary.firstTimestamp == nil { summary.firstTimestamp = time }
    summary.lastTimestamp = time
    if case .command = frame.hci { summary.sawCommands = true }
    if !frame.linkEvents.isEmpty {
      for event in frame.linkEvents { linkEvent(event, frame: frame, time: time) }
    }
    guard let att = frame.att, let label = frame.connection else { return }
    let index = link(label, frame: frame.number, time: time)
    guard index >= 0 else { return }
    attFrame(att, frame: &frame, index: index, time: time)
  }

  /// Ends the analysis: open links and attempts are settled, services taken from `databases`.
  public mutating func finish(databases: [GATTServerIdentity: GATTDatabase]) {
    let end = summary.lastTimestamp ?? 0
    for (_, open) in open where open.index >= 0 {
      settleActivities(open.index, at: end)
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
        peerType: label.peerType, role: nil, parameters: nil, startSeen: false, frame: frame, time: time)
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
    adapter: UInt16, handle: UInt16, generation: Int, peer: BDAddr?, peerType: AddressType?, role: LinkRole?,
    parameters: ConnectionParameters?, startSeen: Bool, frame: Int, time: Int64
  ) -> Int {
    let key = Self.key(adapter: adapter, handle: handle)
    if let previous = open[key], previous.index >= 0 {
      // The handle was not seen closing: what is known of that link ends here.
      settleActivities(previous.index, at: summary.connections[previous.index].lastActivity)
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
      number: number, adapter: adapter, handle: handle, generation: generation, peer: peer, peerType: peerType, role: role,
      startSeen: startSeen, startFrame: frame, start: time, lastActivity: time, parameters: parameters, openingParameters: parameters))
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
          role: role, parameters: parameters, startSeen: true, frame: frame.number, time: time)
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
      summary.connections[index].disconnectReason = reason
      summary.connections[index].initiator = initiator(reason: reason, requested: work[index].disconnectRequested)
      settleActivities(index, at: time)
      work[index] = LinkWork()
      open[key] = nil
      lastKey = .max
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
      security(code: code, reason: reason, fromLocalHost: frame.record.direction == .hostToController, index: index, frame: frame.number, time: time)
    case .pairingFeatures(let code, let io, let oob, let auth):
      guard let label = frame.connection else { return }
      let index = link(label, frame: frame.number, time: time)
      guard index >= 0 else { return }
      if code == 0x01 { work[index].requestFeatures = (io, oob, auth) } else { work[index].responseFeatures = (io, oob, auth) }
      if let request = work[index].requestFeatures, let response = work[index].responseFeatures {
        let secure = request.auth & 0x08 != 0 && response.auth & 0x08 != 0
        summary.connections[index].security.secureConnections = secure
        summary.connections[index].security.method = Self.pairingMethod(initiator: request, responder: response, secure: secure)
      }
    case .identityAddress(let address, let type):
      // Only the peer's own identity (received) names the device; ours goes the other way.
      guard frame.record.direction == .controllerToHost, let label = frame.connection, let peer = label.peer,
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

  // MARK: - ATT

  mutating func attFrame(_ att: ATTFact, frame: inout DissectedFrame, index: Int, time: Int64) {
    summary.connections[index].attPDUs = summary.connections[index].attPDUs.saturatingAdd(1)
    summary.connections[index].lastActivity = time
    if att.channel != 4, !summary.connections[index].eattChannels.contains(att.channel), summary.connections[index].eattChannels.count < 64 {
      summary.connections[index].eattChannels.append(att.channel)
    }
    var errorCode: UInt8?
    switch att.operation {
    case .plain:
      break
    case .exchangeMTUResponse(_, let mtu):
      if att.channel == 4 {
        summary.connections[index].mtu = mtu
        summary.connections[index].mtuFrame = frame.number
      }
    case .error(let request, let handle, let code):
      errorCode = code
      attError(request: request, handle: handle, code: code, frame: frame, index: index)
    default:
      break
    }
    if let latency = att.latency, let request = att.requestOpcode {
      // Attribute Not Found ending a discovery is the procedure's normal end, not a failure.
      let failed = errorCode.map { !(Self.isDiscovery(request) && $0 == 0x0A) } ?? false
      addLatency(request, microseconds: latency, failed: failed)
    }
    if let request = att.requestFrame, !work[index].pendingSubscriptions.isEmpty,
      let position = work[index].pendingSubscriptions.removeValue(forKey: request)
    {
      summary.connections[index].subscriptions[position].responseFrame = frame.number
      if let errorCode {
        summary.connections[index].subscriptions[position].outcome = .rejected
        summary.connections[index].subscriptions[position].errorCode = errorCode
      } else {
        summary.connections[index].subscriptions[position].outcome = .accepted
      }
    }
    guard !frame.attributes.isEmpty else { return }
    let kind = att.kind
    for position in frame.attributes.indices {
      attribute(position, opcode: att.opcode, kind: kind, operation: att.operation, frame: &frame, index: index, time: time)
    }
  }

  mutating func addLatency(_ opcode: UInt8, microseconds: Int64, failed: Bool) {
    var slot = latencyIndex[Int(opcode)]
    if slot < 0 {
      summary.latencies.append(ProcedureLatency(opcode: opcode))
      slot = summary.latencies.count - 1
      latencyIndex[Int(opcode)] = slot
    }
    summary.latencies[slot].sketch.add(Double(microseconds))
    if failed { summary.latencies[slot].errors = summary.latencies[slot].errors.saturatingAdd(1) }
  }

  static func isDiscovery(_ request: UInt8) -> Bool { request == 0x04 || request == 0x06 || request == 0x08 || request == 0x10 }

  mutating func attError(request: UInt8, handle: UInt16, code: UInt8, frame: DissectedFrame, index: Int) {
    // Attribute Not Found ends every discovery procedure: not a problem worth counting.
    if Self.isDiscovery(request) && code == 0x0A { return }
    Self.count(&summary.connections[index].errors, request: request, code: code)
    guard !Self.isDiscovery(request), handle != 0 else { return }
    guard let activity = activity(handle, index: index) else { return }
    if summary.connections[index].characteristics[activity].uuid == nil, let meaning = frame.attributes.first(where: { $0.handle == handle })?.meaning {
      describe(activity, meaning: meaning, index: index)
    }
    Self.count(&summary.connections[index].characteristics[activity].errors, request: request, code: code)
  }

  static func count(_ errors: inout [ErrorCount], request: UInt8, code: UInt8) {
    if let position = errors.firstIndex(where: { $0.request == request && $0.code == code }) {
      errors[position].count = errors[position].count.saturatingAdd(1)
    } else if errors.count < SessionSummary.Limits.errorKinds {
      errors.append(ErrorCount(request: request, code: code, count: 1))
    }
  }

  /// The activity of `handle` on link `index`, created when new; nil past the limit.
  mutating func activity(_ handle: UInt16, index: Int) -> Int? {
    if handle == work[index].lastHandle { return work[index].lastActivity }
    let found: Int
    if let known = work[index].activityIndex[handle] {
      found = known
    } else {
      guard summary.connections[index].characteristics.count < SessionSummary.Limits.characteristics else {
        summary.connections[index].untrackedOperations = summary.connections[index].untrackedOperations.saturatingAdd(1)
        return nil
      }
      summary.connections[index].characteristics.append(CharacteristicActivity(handle: handle, uuid: nil, name: nil, isDescriptor: false))
      work[index].kinds.append(.other)
      work[index].unsubscribed.append(false)
      found = summary.connections[index].characteristics.count - 1
      work[index].activityIndex[handle] = found
    }
    work[index].lastHandle = handle
    work[index].lastActivity = found
    return found
  }

  /// Names an activity from what GATT says of its handle (once discovery has shown it).
  mutating func describe(_ activity: Int, meaning: ResolvedHandle, index: Int) {
    let isDescriptor = meaning.role != .characteristicValue
    let uuid = isDescriptor ? (meaning.descriptor ?? meaning.characteristic) : (meaning.characteristic ?? meaning.descriptor)
    summary.connections[index].characteristics[activity].uuid = uuid
    summary.connections[index].characteristics[activity].name = meaning.name
    summary.connections[index].characteristics[activity].isDescriptor = isDescriptor
    var kind = ValueKind.other
    switch uuid?.uuid16 {
    case 0x2A37?: kind = .heartRate
    case 0x2A19?: kind = .battery
    case 0x2A00?: kind = .deviceName
    case 0x2A01?: kind = .appearance
    case 0x2A29?: kind = .manufacturerName
    case 0x2902?: kind = .configuration
    default: break
    }
    work[index].kinds[activity] = kind
  }

  mutating func attribute(_ position: Int, opcode: UInt8, kind: ATTMethodKind, operation: ATTOperationFact, frame: inout DissectedFrame, index: Int, time: Int64) {
    let handle = frame.attributes[position].handle
    guard let activity = activity(handle, index: index) else { return }
    if summary.connections[index].characteristics[activity].uuid == nil, let meaning = frame.attributes[position].meaning {
      describe(activity, meaning: meaning, index: index)
    }
    let valueKind = work[index].kinds[activity]
    switch frame.attributes[position].operation {
    case .notification, .indication:
      pushed(activity, indication: frame.attributes[position].operation == .indication, index: index, time: time)
    case .read:
      // A read counts once, on its request (a long read's blobs continue it).
      if kind == .request && opcode != 0x0C {
        summary.connections[index].characteristics[activity].reads = summary.connections[index].characteristics[activity].reads.saturatingAdd(1)
      }
    case .write:
      var counts = kind == .request && opcode != 0x16
      if case .prepareWrite(let offset, _) = operation, offset == 0 { counts = true }
      if counts {
        summary.connections[index].characteristics[activity].writes = summary.connections[index].characteristics[activity].writes.saturatingAdd(1)
      }
    case .writeWithoutResponse:
      summary.connections[index].characteristics[activity].writeCommands = summary.connections[index].characteristics[activity].writeCommands.saturatingAdd(1)
    }
    guard valueKind != .other, let value = frame.attributes[position].value else { return }
    let reading = frame.attributes[position].operation
    switch valueKind {
    case .other:
      break
    case .heartRate:
      if let measurement = value as? HeartRateMeasurement { heartRate(measurement, index: index, time: time) }
    case .battery:
      if let level = value as? BatteryLevel, reading != .write, reading != .writeWithoutResponse {
        battery(level.percent, index: index, frame: frame.number, time: time)
      }
    case .deviceName:
      if let name = value as? DeviceName, reading == .read, let slot = peerDevice(index) {
        summary.devices[slot].deviceName = Self.clipped(name.text)
      }
    case .appearance:
      if let appearance = value as? Appearance, reading == .read, let slot = peerDevice(index) {
        summary.devices[slot].appearance = appearance.rawValue
      }
    case .manufacturerName:
      if let name = value as? ManufacturerNameString, reading == .read, let slot = peerDevice(index) {
        summary.devices[slot].manufacturerName = Self.clipped(name.text)
      }
    case .configuration:
      if let configuration = value as? ClientCharacteristicConfiguration, reading == .write || reading == .writeWithoutResponse {
        subscribe(configuration.rawValue, handle: handle, meaning: frame.attributes[position].meaning, command: reading == .writeWithoutResponse,
          index: index, frame: frame.number, time: time)
      }
    }
  }

  func peerDevice(_ index: Int) -> Int? {
    summary.connections[index].peer.flatMap { deviceIndex[$0] }
  }

  /// A notification or indication: counted, and the silence before it measured.
  mutating func pushed(_ activity: Int, indication: Bool, index: Int, time: Int64) {
    if indication {
      summary.connections[index].characteristics[activity].indications = summary.connections[index].characteristics[activity].indications.saturatingAdd(1)
    } else {
      summary.connections[index].characteristics[activity].notifications = summary.connections[index].characteristics[activity].notifications.saturatingAdd(1)
    }
    if let last = summary.connections[index].characteristics[activity].lastValue {
      noteGap(activity, Gap(start: last, microseconds: Timestamp.elapsed(from: last, to: time), untilEnd: false), index: index)
    } else {
      summary.connections[index].characteristics[activity].firstValue = time
    }
    summary.connections[index].characteristics[activity].lastValue = time
    work[index].unsubscribed[activity] = false
  }

  /// Keeps `gap` if it is among the longest of the activity.
  mutating func noteGap(_ activity: Int, _ gap: Gap, index: Int) {
    guard gap.microseconds > 0 else { return }
    let limit = SessionSummary.Limits.gaps
    let gaps = summary.connections[index].characteristics[activity].longestGaps
    if gaps.count == limit, let shortest = gaps.last, shortest.microseconds >= gap.microseconds { return }
    var kept = gaps
    let position = kept.firstIndex { $0.microseconds < gap.microseconds } ?? kept.count
    kept.insert(gap, at: position)
    if kept.count > limit { kept.removeLast() }
    summary.connections[index].characteristics[activity].longestGaps = kept
  }

  /// At a link's end: the silence after the last value of each characteristic still subscribed
  /// counts as a gap (notifications that stopped), and an open contact loss ends.
  mutating func settleActivities(_ index: Int, at end: Int64) {
    for activity in summary.connections[index].characteristics.indices {
      guard let last = summary.connections[index].characteristics[activity].lastValue, !work[index].unsubscribed[activity] else { continue }
      noteGap(activity, Gap(start: last, microseconds: Timestamp.elapsed(from: last, to: end), untilEnd: true), index: index)
    }
    if let start = summary.connections[index].heartRate?.lossStart {
      let end = summary.connections[index].heartRate?.lastTime ?? start
      Self.endContactLoss(&summary.connections[index].heartRate!, start: start, end: end)
    }
  }

  mutating func subscribe(_ value: UInt16, handle: UInt16, meaning: ResolvedHandle?, command: Bool, index: Int, frame: Int, time: Int64) {
    if value & 0x03 == 0, let characteristic = meaning?.characteristic {
      // Turned off: a silence after this is not data lost.
      for activity in summary.connections[index].characteristics.indices
      where summary.connections[index].characteristics[activity].uuid == characteristic && !summary.connections[index].characteristics[activity].isDescriptor {
        work[index].unsubscribed[activity] = true
      }
    }
    guard summary.connections[index].subscriptions.count < SessionSummary.Limits.subscriptions else {
      summary.connections[index].subscriptionsNotListed = summary.connections[index].subscriptionsNotListed.saturatingAdd(1)
      return
    }
    summary.connections[index].subscriptions.append(Subscription(
      frame: frame, time: time, handle: handle, characteristic: meaning?.characteristic, characteristicName: meaning?.characteristicName,
      value: value, outcome: command ? .unacknowledged : .noResponse))
    if !command { work[index].pendingSubscriptions[frame] = summary.connections[index].subscriptions.count - 1 }
  }

  mutating func battery(_ percent: UInt8, index: Int, frame: Int, time: Int64) {
    let reading = BatteryTrend.Reading(percent: percent, time: time, frame: frame)
    guard var trend = summary.connections[index].battery else {
      summary.connections[index].battery = BatteryTrend(first: reading, last: reading, minimum: reading, maximum: reading)
      return
    }
    trend.last = reading
    if percent < trend.minimum.percent { trend.minimum = reading }
    if percent > trend.maximum.percent { trend.maximum = reading }
    trend.readings = trend.readings.saturatingAdd(1)
    summary.connections[index].battery = trend
  }

  /// A silence of this much breaks a run of RR intervals, and may be a dropout.
  static let dropoutFloor: Int64 = 2_000_000

  mutating func heartRate(_ measurement: HeartRateMeasurement, index: Int, time: Int64) {
    if summary.connections[index].heartRate == nil { summary.connections[index].heartRate = HeartRateSummary() }
    // Changed in place: a copy would retain and release its arrays on every measurement.
    Self.add(measurement, time: time, to: &summary.connections[index].heartRate!)
  }

  static func add(_ measurement: HeartRateMeasurement, time: Int64, to hr: inout HeartRateSummary) {
    hr.measurements = hr.measurements.saturatingAdd(1)
    if measurement.bpm == 0 { hr.zeroReadings = hr.zeroReadings.saturatingAdd(1) } else { hr.bpm.add(Double(measurement.bpm)) }
    switch measurement.sensorContact {
    case .notDetected:
      hr.contactNotDetected = hr.contactNotDetected.saturatingAdd(1)
      if hr.lossStart == nil { hr.lossStart = time }
    case .detected:
      hr.contactDetected = hr.contactDetected.saturatingAdd(1)
      if let start = hr.lossStart { endContactLoss(&hr, start: start, end: time) }
    case .unsupported:
      if let start = hr.lossStart { endContactLoss(&hr, start: start, end: time) }
    }
    if let last = hr.lastTime {
      let interval = Timestamp.elapsed(from: last, to: time)
      if interval >= 0 {
        if interval >= dropoutFloor {
          hr.successive.reset()
          // The dropout rule: longer than max(2 s, 3 × the median interval so far).
          let median = (hr.intervals.quantile(0.5) ?? 0) * 1000
          if Double(interval) > max(Double(dropoutFloor), 3 * median) {
            hr.dropoutCount = hr.dropoutCount.saturatingAdd(1)
            keepLongest(&hr.dropouts, ClosedTimeSpan(start: last, end: time))
          }
        }
        // In ms, at most an hour: the sketch then stays under 2100 buckets (16 KiB).
        hr.intervals.add(min(Double(interval) / 1000, 3_600_000))
      }
    } else {
      hr.firstTime = time
    }
    for raw in measurement.rrIntervals {
      let milliseconds = HeartRateMeasurement.milliseconds(raw)
      hr.rr.add(milliseconds)
      hr.successive.add(milliseconds)
    }
    if let energy = measurement.energyExpended { hr.energyExpended = energy }
    hr.lastTime = time
  }

  static func endContactLoss(_ hr: inout HeartRateSummary, start: Int64, end: Int64) {
    hr.lossStart = nil
    hr.contactLossSpans = hr.contactLossSpans.saturatingAdd(1)
    hr.contactLossMicroseconds = hr.contactLossMicroseconds.saturatingAdd(max(Timestamp.elapsed(from: start, to: end), 0))
    if hr.contactLoss.count < SessionSummary.Limits.spans { hr.contactLoss.append(ClosedTimeSpan(start: start, end: end)) }
  }

  /// Keeps the longest spans, in time order.
  static func keepLongest(_ spans: inout [ClosedTimeSpan], _ span: ClosedTimeSpan) {
    spans.append(span)
    guard spans.count > SessionSummary.Limits.spans else { return }
    if let shortest = spans.indices.min(by: { spans[$0].microseconds < spans[$1].microseconds }) { spans.remove(at: shortest) }
  }
}
