import BLECore
import BLEDecoder

/// The ATT side of a session: per-characteristic activity, errors, latency, subscriptions and
/// the values analyses keep (battery, heart rate).
extension SessionAnalyzer {
  // MARK: - ATT

  mutating func attFrame(_ att: ATTFact, frame: inout DissectedFrame, index: Int, time: Int64) {
    summary.connections[index].attPDUs = summary.connections[index].attPDUs.saturatingAdd(1)
    summary.connections[index].lastActivity = time
    if att.channel != 4, !summary.connections[index].eattChannels.contains(att.channel), summary.connections[index].eattChannels.count < 64 {
      summary.connections[index].eattChannels.append(att.channel)
    }
    // Whose attribute the PDU is about: the peer's, or the local side's (both may serve).
    let peerIsServer = att.serverIsLocal(frame.direction) != true
    var errorCode: UInt8?
    switch att.operation {
    case .plain:
      break
    case .exchangeMTU(let client):
      if att.channel == 4 {
        work[index].mtuRequests[frame.direction == .hostToController ? 0 : 1] = (frame.number, client)
      }
    case .exchangeMTUResponse(_, let mtu):
      if att.channel == 4 {
        summary.connections[index].mtu = mtu
        summary.connections[index].mtuFrame = frame.number
        summary.connections[index].mtuTime = time
        // The request it answers, whichever end asked.
        let request = work[index].mtuRequests.lazy.compactMap { $0 }.first { $0.frame == att.requestFrame }
        summary.connections[index].mtuRequested = request?.client
      }
    case .error(let request, let handle, let code):
      errorCode = code
      attError(request: request, handle: handle, code: code, servedLocally: !peerIsServer, frame: frame, index: index)
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
    // What a server says of itself (its name, appearance, maker) describes the peer only when
    // the peer is the server: a peripheral's capture answers the phone's reads itself.
    for position in frame.attributes.indices {
      attribute(position, opcode: att.opcode, kind: kind, operation: att.operation, peerIsServer: peerIsServer, frame: &frame, index: index, time: time)
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

  mutating func attError(request: UInt8, handle: UInt16, code: UInt8, servedLocally: Bool, frame: DissectedFrame, index: Int) {
    // Attribute Not Found ends every discovery procedure: not a problem worth counting.
    if Self.isDiscovery(request) && code == 0x0A { return }
    Self.count(&summary.connections[index].errors, request: request, code: code)
    guard !Self.isDiscovery(request), handle != 0 else { return }
    guard let activity = activity(handle, servedLocally: servedLocally, index: index) else { return }
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

  /// The activity of `handle` of the peer's table or the local side's on link `index`,
  /// created when new; nil past the limit.
  mutating func activity(_ handle: UInt16, servedLocally: Bool, index: Int) -> Int? {
    let key = UInt32(handle) | (servedLocally ? 0x1_0000 : 0)
    if key == work[index].lastHandle { return work[index].lastActivity }
    let found: Int
    if let known = work[index].activityIndex[key] {
      found = known
    } else {
      guard summary.connections[index].characteristics.count < SessionSummary.Limits.characteristics else {
        summary.connections[index].untrackedOperations = summary.connections[index].untrackedOperations.saturatingAdd(1)
        return nil
      }
      summary.connections[index].characteristics.append(
        CharacteristicActivity(handle: handle, servedLocally: servedLocally, uuid: nil, name: nil, isDescriptor: false))
      work[index].kinds.append(.other)
      work[index].unsubscribed.append(false)
      found = summary.connections[index].characteristics.count - 1
      work[index].activityIndex[key] = found
    }
    work[index].lastHandle = key
    work[index].lastActivity = found
    return found
  }

  /// Names an activity from what GATT says of its handle (once discovery has shown it).
  mutating func describe(_ activity: Int, meaning: ResolvedHandle, index: Int) {
    let isDescriptor = meaning.role != .characteristicValue
    let uuid = isDescriptor ? (meaning.descriptor ?? meaning.characteristic) : (meaning.characteristic ?? meaning.descriptor)
    summary.connections[index].characteristics[activity].uuid = uuid
    summary.connections[index].characteristics[activity].name = meaning.name
    summary.connections[index].characteristics[activity].source = meaning.source
    summary.connections[index].characteristics[activity].isDescriptor = isDescriptor
    var kind = ValueKind.other
    switch uuid?.uuid16 {
    case 0x2A37?: kind = .heartRate
    case 0x2A39?: kind = .heartRateControl
    case 0x2A19?: kind = .battery
    case 0x2A00?: kind = .deviceName
    case 0x2A01?: kind = .appearance
    case 0x2A29?: kind = .manufacturerName
    case 0x2902?: kind = .configuration
    default: break
    }
    work[index].kinds[activity] = kind
  }

  mutating func attribute(
    _ position: Int, opcode: UInt8, kind: ATTMethodKind, operation: ATTOperationFact, peerIsServer: Bool, frame: inout DissectedFrame, index: Int, time: Int64
  ) {
    let number = frame.number
    frame.withAttribute(position) { fact in
      attribute(fact, opcode: opcode, kind: kind, operation: operation, peerIsServer: peerIsServer, frameNumber: number, index: index, time: time)
    }
  }

  /// The fact is borrowed where it lies (a copy would retain its value and meaning).
  mutating func attribute(
    _ fact: borrowing AttributeFact, opcode: UInt8, kind: ATTMethodKind, operation: ATTOperationFact, peerIsServer: Bool, frameNumber: Int, index: Int,
    time: Int64
  ) {
    let handle = fact.handle
    guard let activity = activity(handle, servedLocally: !peerIsServer, index: index) else { return }
    if summary.connections[index].characteristics[activity].uuid == nil, let meaning = fact.meaning {
      describe(activity, meaning: meaning, index: index)
    }
    let valueKind = work[index].kinds[activity]
    switch fact.operation {
    case .notification, .indication:
      // A Handle Value Confirmation names the indicated handle too; it pushes no value.
      if kind != .confirmation { pushed(activity, indication: fact.operation == .indication, index: index, frame: frameNumber, time: time) }
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
    guard valueKind != .other, fact.hasValue else { return }
    let reading = fact.operation
    switch valueKind {
    case .other:
      break
    case .heartRate:
      if let measurement = fact.value(as: HeartRateMeasurement.self) { heartRate(measurement, index: index, time: time) }
    case .heartRateControl:
      // Reset Energy Expended: the energy may start again from zero (no fault).
      if reading == .write || reading == .writeWithoutResponse,
        fact.value(as: HeartRateControlPoint.self)?.command == .resetEnergyExpended
      {
        summary.connections[index].heartRate?.plausibility.energyWasReset()
      }
    case .battery:
      if let level = fact.value(as: BatteryLevel.self), reading != .write, reading != .writeWithoutResponse {
        battery(level.percent, index: index, frame: frameNumber, time: time)
      }
    case .deviceName:
      if let name = fact.value(as: DeviceName.self), reading == .read, peerIsServer, let slot = peerDevice(index) {
        summary.devices[slot].deviceName = Self.clipped(name.text)
      }
    case .appearance:
      if let appearance = fact.value(as: Appearance.self), reading == .read, peerIsServer, let slot = peerDevice(index) {
        summary.devices[slot].appearance = appearance.rawValue
      }
    case .manufacturerName:
      if let name = fact.value(as: ManufacturerNameString.self), reading == .read, peerIsServer, let slot = peerDevice(index) {
        summary.devices[slot].manufacturerName = Self.clipped(name.text)
      }
    case .configuration:
      if let configuration = fact.value(as: ClientCharacteristicConfiguration.self), reading == .write || reading == .writeWithoutResponse {
        subscribe(configuration.rawValue, handle: handle, meaning: fact.meaning, command: reading == .writeWithoutResponse,
          index: index, frame: frameNumber, time: time)
      }
    }
  }

  func peerDevice(_ index: Int) -> Int? {
    summary.connections[index].peer.flatMap { deviceIndex[$0] }
  }

  /// A notification or indication: counted, and the silence before it measured.
  mutating func pushed(_ activity: Int, indication: Bool, index: Int, frame: Int, time: Int64) {
    summary.connections[index].characteristics[activity].notePush(indication: indication, at: time, frame: frame)
    work[index].unsubscribed[activity] = false
  }

  /// At a link's end: the silence after the last value of each characteristic still subscribed
  /// counts as a gap (notifications that stopped), and an open contact loss ends.
  mutating func settleActivities(_ index: Int, at end: Int64) {
    for activity in summary.connections[index].characteristics.indices {
      guard let last = summary.connections[index].characteristics[activity].lastValue, !work[index].unsubscribed[activity] else { continue }
      summary.connections[index].characteristics[activity].noteGap(Gap(start: last, microseconds: Timestamp.elapsed(from: last, to: end), untilEnd: true))
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
    let flags = hr.plausibility.check(measurement)
    if !flags.isEmpty {
      for (position, entry) in HeartRateFlags.all.enumerated() where flags.contains(entry.flag) {
        hr.flagCounts[position] = hr.flagCounts[position].saturatingAdd(1)
      }
    }
    if measurement.bpm == 0 {
      hr.zeroReadings = hr.zeroReadings.saturatingAdd(1)
    } else if !flags.isDisjoint(with: .doubtfulRate) {
      hr.leftOutOfRate = hr.leftOutOfRate.saturatingAdd(1)
    } else {
      hr.bpm.add(Double(measurement.bpm))
    }
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
