import BLECore
import BLEDecoder

extension CheckedLink {
  /// The ATT and GATT rules of one frame carrying an ATT PDU.
  mutating func att(_ frame: inout DissectedFrame, _ context: FrameContext, _ findings: inout FindingCollector, _ tables: inout TableChecks) {
    guard let att = frame.att else { return }
    let kind = att.kind
    let sentByLocal = context.direction == .hostToController
    let side: ConformanceFinding.Side = kind.isClientToServer ? .client : .server
    let cutShort = !frame.diagnostics.isEmpty && frame.diagnostics.contains { $0.kind == .hciDataTruncatedByWriter }
    let window = previousATT
    previousATT = context.frame
    transactions(frame.diagnostics, att, context, sentByLocal: sentByLocal, side: side, window: window, &findings)
    exchangeMTU(att, context, sentByLocal: sentByLocal, &findings)
    if let error = frame.malformed, error.layer == .att, !cutShort, !lostSince(window) {
      let rule: ConformanceRule
      switch att.opcode {
      case 0x01: rule = .att13
      case 0x05: rule = .att17
      case 0x07, 0x09, 0x11: rule = .att18
      default: rule = .att16
      }
      findings.add(rule, context, side: side, "\(ATTNames.opcode(att.opcode)) does not fit its format: \(error)")
    }
    if case let .error(_, _, code) = att.operation {
      if code == 0 {
        findings.add(.att13, context, side: .server, "Error Response with error code 0x00 (not an error code)")
      } else if (0x14...0x7F).contains(code) || (0xA0...0xDF).contains(code) {
        findings.add(.att13, context, side: .server, "Error Response with the reserved error code \(Hex.prefixed(UInt64(code), width: 2))", severity: .warning,
          assumption: "a later version of the specification may define the code")
      }
    }
    for diagnostic in frame.diagnostics {
      switch diagnostic.kind {
      case .attPDUExceedsMTU where seenFromStart || !mtuResponses.isEmpty:
        findings.add(.att06, context, side: side, "\(ATTNames.opcode(att.opcode)): \(diagnostic.message)")
      case .attPrepareResponseDiffers where !lostSince(window):
        findings.add(.att19, context, side: .server, frames: att.requestFrame.map { [$0] } ?? [], "Prepare Write Response: \(diagnostic.message)")
      case .attDiscoveryOutsideRange, .attDiscoveryOutOfOrder:
        findings.add(att.opcode == 0x05 ? .att17 : .att18, context, side: .server, frames: att.requestFrame.map { [$0] } ?? [],
          "\(ATTNames.opcode(att.opcode)): \(diagnostic.message)")
      default: break
      }
    }
    if att.opcode == 0x13 || att.opcode == 0x01, let request = att.requestFrame, let write = pendingWrites.removeValue(forKey: request) {
      acknowledged(write, response: att.opcode, request: request, context, &findings)
    }
    for index in frame.attributes.indices {
      let fact = frame.withAttribute(index) { fact in
        AttributeSummary(
          handle: fact.handle, operation: fact.operation, rawValue: fact.rawValue,
          // Only what the rules read, and only meanings this capture's discovery gave.
          meaning: fact.meaning.flatMap { $0.source == .capture ? Meaning(role: $0.role, service: $0.service, characteristic: $0.characteristic, descriptor: $0.descriptor) : nil })
      }
      let raw = fact.rawValue.map { frame.valueBytes($0) } ?? []
      attribute(fact, raw, att, context, sentByLocal: sentByLocal, &findings, &tables)
    }
  }

  /// What the rules read of one attribute fact (copied out: the fact is lent, not kept).
  struct AttributeSummary {
    var handle: UInt16
    var operation: GATTOperation
    var rawValue: Range<Int>?
    var meaning: Meaning?
  }
  /// What a handle is, as this capture's discovery said (no names: they are not read).
  struct Meaning {
    var role: ResolvedHandle.Role
    var service: BluetoothUUID?
    var characteristic: BluetoothUUID?
    var descriptor: BluetoothUUID?
  }

  /// ATT-01, ATT-03, ATT-04, ATT-05: the transactions of each bearer.
  mutating func transactions(
    _ diagnostics: [Diagnostic], _ att: ATTFact, _ context: FrameContext, sentByLocal: Bool, side: ConformanceFinding.Side, window: Int,
    _ findings: inout FindingCollector
  ) {
    // A rule is judged unless the capture's directions are wrong on this link (the bearers
    // below are told apart by direction) or the sniffer lost a packet since `since`.
    let contradict = directionsContradict
    let lastLoss = lossy ? self.lastLoss : -1
    let judged = { (since: Int) in !contradict && lastLoss < since }
    let has = { (kind: DiagnosticKind) in !diagnostics.isEmpty && diagnostics.contains { $0.kind == kind } }
    switch att.kind {
    case .request:
      let bearer = Bearer(channel: att.bearer, localAsks: sentByLocal)
      if has(.attRequestWhilePending), judged(openRequests[bearer]?.frame ?? window) {
        let open = openRequests[bearer]
        findings.add(.att01, context, side: .client, frames: open.map { [$0.frame] } ?? [],
          "\(ATTNames.opcode(att.opcode)) sent while \(open.map { "\(ATTNames.opcode($0.opcode)) #\($0.frame)" } ?? "an earlier request") is unanswered")
      }
      openRequests[bearer] = Open(frame: context.frame, time: context.time, opcode: att.opcode)
      oldestOpen = min(oldestOpen ?? context.time, context.time)
      owed[bearer, default: 0] += 1
      requestSeen.insert(bearer)
      if requestWays.count >= Self.maximumPending { requestWays.removeAll() }
      requestWays[context.frame] = sentByLocal
    case .response:
      let bearer = Bearer(channel: att.bearer, localAsks: !sentByLocal)
      let open = openRequests[bearer]
      // Responses owed before this one: after a client's second request (ATT-01) the server
      // owes two, answered in order, which a single pending request would call mismatched.
      let owedBefore = owed[bearer, default: 0]
      if owedBefore > 0 { owed[bearer] = owedBefore - 1 }
      if let request = att.requestFrame {
        openRequests[bearer] = nil
        if let way = requestWays.removeValue(forKey: request), way == sentByLocal { directionsContradict = true }
      } else if let sameWay = openRequests[Bearer(channel: att.bearer, localAsks: sentByLocal)], sameWay.opcode &+ 1 == att.opcode {
        // The response to a request sent the same way: one of the two directions is wrong.
        directionsContradict = true
      }
      guard seenFromStart || requestSeen.contains(bearer), !directionsContradict, judged(open?.frame ?? window) else { return }
      if has(.attResponseWithoutRequest), owedBefore == 0 {
        findings.add(.att03, context, side: .server, "\(ATTNames.opcode(att.opcode)) with no request outstanding")
      } else if has(.attResponseMismatch) || has(.attErrorNamesOtherRequest), owedBefore < 2 {
        let answered = att.requestOpcode ?? open?.opcode
        findings.add(.att03, context, side: .server, frames: open.map { [$0.frame] } ?? [],
          "\(ATTNames.opcode(att.opcode)) does not answer the outstanding \(answered.map(ATTNames.opcode) ?? "request")")
      }
    case .indication:
      let bearer = Bearer(channel: att.bearer, localAsks: sentByLocal)
      if has(.attIndicationWhileUnconfirmed), judged(openIndications[bearer]?.frame ?? window) {
        let open = openIndications[bearer]
        findings.add(.att05, context, side: .server, frames: open.map { [$0.frame] } ?? [],
          "an indication sent while \(open.map { "the one of #\($0.frame)" } ?? "an earlier one") is unconfirmed")
      }
      openIndications[bearer] = Open(frame: context.frame, time: context.time, opcode: att.opcode)
      oldestOpen = min(oldestOpen ?? context.time, context.time)
      owed[bearer, default: 0] += 1
      indicationSeen.insert(bearer)
    case .confirmation:
      let bearer = Bearer(channel: att.bearer, localAsks: !sentByLocal)
      let wasOpen = openIndications.removeValue(forKey: bearer) != nil
      let owedBefore = owed[bearer, default: 0]
      if owedBefore > 0 { owed[bearer] = owedBefore - 1 }
      if has(.attConfirmationWithoutIndication), !wasOpen, owedBefore == 0, seenFromStart || indicationSeen.contains(bearer), judged(window) {
        findings.add(.att04, context, side: .client, "Handle Value Confirmation with no indication outstanding")
      }
    default: break
    }
  }

  /// ATT-07, ATT-08, ATT-09: the MTU exchange.
  mutating func exchangeMTU(_ att: ATTFact, _ context: FrameContext, sentByLocal: Bool, _ findings: inout FindingCollector) {
    // Which device sent what is read from the capture's directions (ATT-07, ATT-09).
    let ways = context.direction != nil && !directionsContradict
    switch att.operation {
    case .exchangeMTU(let mtu):
      if !ways {
      } else if let earlier = mtuRequests[sentByLocal] {
        findings.add(.att07, context, side: .client, frames: [earlier.frame], "a second Exchange MTU Request (the first: #\(earlier.frame))")
      } else {
        mtuRequests[sentByLocal] = (context.frame, mtu)
      }
      if mtu < 23 { findings.add(.att08, context, side: .client, "Exchange MTU Request with Client Rx MTU \(mtu), below 23") }
      if ways, let own = mtuResponses[sentByLocal], own.mtu != mtu {
        findings.add(.att09, context, side: context.senderRole(local: localRole), frames: [own.frame],
          "this device asks with MTU \(mtu) but answered with \(own.mtu) (#\(own.frame))")
      }
    case .exchangeMTUResponse(let mtu, _):
      if mtuResponses[sentByLocal] == nil { mtuResponses[sentByLocal] = (context.frame, mtu) }
      if mtu < 23 { findings.add(.att08, context, side: .server, "Exchange MTU Response with Server Rx MTU \(mtu), below 23") }
      if ways, let own = mtuRequests[sentByLocal], own.mtu != mtu {
        findings.add(.att09, context, side: context.senderRole(local: localRole), frames: [own.frame],
          "this device answers with MTU \(mtu) but asked with \(own.mtu) (#\(own.frame))")
      }
    default: break
    }
  }

  /// A write's response came: a configuration now in force, or a control point's answer.
  mutating func acknowledged(_ write: PendingWrite, response: UInt8, request: Int, _ context: FrameContext, _ findings: inout FindingCollector) {
    guard response == 0x13 else { return }
    switch write {
    case let .configuration(characteristic, bits):
      turnedOff.removeAll { $0.characteristic == characteristic }
      if bits & 0x3 != 0x3, turnedOff.count < Self.maximumPending { turnedOff.append((characteristic, context.frame, bits)) }
    case .heartRateControl(let value):
      findings.add(.hrs07, context, side: .server, frames: [request],
        "Heart Rate Control Point write of \(Hex.string(value)) (#\(request)) answered with Write Response, not Error Response 0x80")
    }
  }

  /// The GATT and profile rules of one attribute a PDU carries.
  mutating func attribute(
    _ fact: AttributeSummary, _ raw: ArraySlice<UInt8>, _ att: ATTFact, _ context: FrameContext, sentByLocal: Bool,
    _ findings: inout FindingCollector, _ tables: inout TableChecks
  ) {
    let writes = fact.operation == .write || fact.operation == .writeWithoutResponse
    let side: ConformanceFinding.Side = writes ? .client : .server
    if fact.rawValue != nil, raw.count > 512 {
      findings.add(.att20, context, side: side, "a value of \(raw.count) octets")
    } else if case .longReadPart(let total, _) = att.operation, total > 512, total - raw.count <= 512 {
      findings.add(.att20, context, side: .server, "a long read reaches \(total) octets")
    }
    // The rules below read a value (a request, a Write Response, names the attribute without
    // one) and need to know what the handle is, from this capture's own discovery.
    guard fact.rawValue != nil, let meaning = fact.meaning else { return }
    let server = GATTConsumer.server(direction: context.direction, attOpcode: att.opcode, label)
    if meaning.role == .descriptor, meaning.descriptor?.uuid16 == 0x2902, let uuid = meaning.characteristic {
      configuration(fact, raw, Characteristic(service: meaning.service, uuid: uuid), server: server, context, &findings, &tables)
      return
    }
    guard meaning.role == .characteristicValue, let uuid = meaning.characteristic else { return }
    let characteristic = Characteristic(service: meaning.service, uuid: uuid)
    switch fact.operation {
    case .notification, .indication:
      let needed: UInt16 = fact.operation == .notification ? 0x1 : 0x2
      if !turnedOff.isEmpty, let off = turnedOff.first(where: { $0.characteristic == characteristic }), off.bits & needed == 0,
        !lostSince(off.frame)
      {
        findings.add(.gatt08, context, side: .server, frames: [off.frame],
          "\(fact.operation == .notification ? "notification" : "indication") of \(Self.name(uuid)) after the client turned it off (acknowledged at #\(off.frame))")
      }
    case .write, .writeWithoutResponse:
      tables.noteWrite(server: server, handle: fact.handle, opcode: att.opcode, context)
    case .read: break
    }
    switch uuid.uuid16 {
    case 0x2A37: heartRateMeasurement(raw, context, server: server, &findings, &tables)
    case 0x2A39 where fact.operation == .write:
      if !raw.elementsEqual([0x01]), pendingWrites.count < Self.maximumPending { pendingWrites[context.frame] = .heartRateControl(value: Array(raw)) }
    case 0x2A38 where fact.operation == .read: bodySensorLocation(raw, context, &findings)
    case 0x2A01 where !writes && raw.count != 2:
      findings.add(.gap01, context, side: .server, "Appearance of \(raw.count) octets (2)")
    case 0x2A04 where !writes && raw.count != 8:
      findings.add(.gap01, context, side: .server, "Peripheral Preferred Connection Parameters of \(raw.count) octets (8)")
    case 0x2A00 where raw.count > 248:
      findings.add(.gap01, context, side: side, "Device Name of \(raw.count) octets (at most 248)")
    case 0x2A23 where !writes && raw.count != 8:
      findings.add(.dis01, context, side: .server, "System ID of \(raw.count) octets (8)")
    case 0x2A50 where !writes:
      if raw.count != 7 {
        findings.add(.dis01, context, side: .server, "PnP ID of \(raw.count) octets (7)")
      } else if let source = raw.first, source != 1 && source != 2 {
        findings.add(.dis01, context, side: .server, "PnP ID with Vendor ID Source \(source) (1: Bluetooth SIG, 2: USB-IF)")
      }
    case 0x2A19 where !writes:
      if raw.count != 1 {
        findings.add(.bas01, context, side: .server, "Battery Level of \(raw.count) octets")
      } else if let level = raw.first, level > 100 {
        findings.add(.bas01, context, side: .server, "Battery Level \(level) %, above 100")
      }
    default: break
    }
  }

  static func name(_ uuid: BluetoothUUID) -> String { GATTDatabase.name(uuid).map { "\($0)" } ?? uuid.description }

  /// GATT-06, and what a configuration write turns on or off (GATT-07, GATT-08).
  mutating func configuration(
    _ fact: AttributeSummary, _ raw: ArraySlice<UInt8>, _ characteristic: Characteristic, server: GATTServerIdentity, _ context: FrameContext,
    _ findings: inout FindingCollector, _ tables: inout TableChecks
  ) {
    let writes = fact.operation == .write || fact.operation == .writeWithoutResponse
    guard raw.count == 2 else {
      findings.add(.gatt06, context, side: writes ? .client : .server,
        "Client Characteristic Configuration of \(Self.name(characteristic.uuid)) \(writes ? "written" : "read") with \(raw.count) octets")
      return
    }
    let bits = UInt16(raw[raw.startIndex]) | UInt16(raw[raw.startIndex + 1]) << 8
    if bits & 0xFFFC != 0 {
      findings.add(.gatt06, context, side: writes ? .client : .server,
        "Client Characteristic Configuration of \(Self.name(characteristic.uuid)) \(Hex.prefixed(UInt64(bits), width: 4)) sets reserved bits",
        severity: .warning, assumption: "a later version may define the bits")
    }
    guard writes else { return }
    tables.noteConfiguration(server: server, handle: fact.handle, bits: bits & 0x3, context)
    if fact.operation == .write, pendingWrites.count < Self.maximumPending {
      pendingWrites[context.frame] = .configuration(characteristic, bits: bits)
    }
  }

  /// HRS-01 (the fields the flags announce), HRS-04 (contact support static), and Energy
  /// Expended for HRS-06.
  mutating func heartRateMeasurement(
    _ raw: ArraySlice<UInt8>, _ context: FrameContext, server: GATTServerIdentity, _ findings: inout FindingCollector, _ tables: inout TableChecks
  ) {
    guard let flags = raw.first else {
      findings.add(.hrs01, context, side: .server, "an empty Heart Rate Measurement")
      return
    }
    let fixed = 1 + (flags & 0x01 != 0 ? 2 : 1) + (flags & 0x08 != 0 ? 2 : 0)
    let announcesRR = flags & 0x10 != 0
    if raw.count < fixed || (announcesRR && raw.count < fixed + 2) {
      findings.add(.hrs01, context, side: .server,
        "Heart Rate Measurement flags \(Hex.prefixed(UInt64(flags), width: 2)) announce at least \(fixed + (announcesRR ? 2 : 0)) octets; it has \(raw.count)")
      return
    }
    if announcesRR ? (raw.count - fixed) % 2 != 0 : raw.count != fixed {
      findings.add(.hrs01, context, side: .server,
        "Heart Rate Measurement flags \(Hex.prefixed(UInt64(flags), width: 2)) leave \(announcesRR ? "an odd octet after the RR-Intervals" : "\(raw.count - fixed) octets unannounced") (\(raw.count) octets)")
    }
    let supported = flags & 0x04 != 0
    if let earlier = contactSupport, earlier.supported != supported {
      findings.add(.hrs04, context, side: .server, frames: [earlier.frame],
        "Sensor Contact Supported \(supported ? "set" : "cleared") within the connection (\(earlier.supported ? "set" : "clear") at #\(earlier.frame))")
    }
    contactSupport = (supported, context.frame)
    // HRS-06 is about the server, once: the first Energy Expended of each is noted.
    if flags & 0x08 != 0, energyNoted != server {
      tables.noteEnergy(server: server, context)
      energyNoted = server
    }
  }

  /// HRS-09: one octet, not reserved, the same within a connection.
  mutating func bodySensorLocation(_ raw: ArraySlice<UInt8>, _ context: FrameContext, _ findings: inout FindingCollector) {
    guard raw.count == 1, let value = raw.first else {
      findings.add(.hrs09, context, side: .server, "Body Sensor Location of \(raw.count) octets", severity: .error)
      return
    }
    if value > 6 {
      findings.add(.hrs09, context, side: .server, "Body Sensor Location \(value) (7–255 are reserved)")
    }
    if let earlier = bodySensorLocation, earlier.value != value {
      findings.add(.hrs09, context, side: .server, frames: [earlier.frame],
        "Body Sensor Location changed within the connection: \(earlier.value) at #\(earlier.frame), now \(value)", severity: .error)
    }
    bodySensorLocation = (value, context.frame)
  }
}
