import BLECore
import BLEDecoder

/// What `check` keeps of one connection: the gates' facts (seen from its start, lossy,
/// encrypted), the ATT transactions open on each bearer, the MTU exchanges, the Client
/// Characteristic Configuration each write left, and the profile values that must not change.
struct CheckedLink {
  var label: ConnectionLabel
  /// The capture holds the connect event: history rules may speak from the first frame.
  var seenFromStart: Bool
  /// The capturing device's role (an air capture's "local" side is the central).
  var localRole: LinkRole?
  var lossy = false
  /// The last frame of the link where the sniffer said it lost something: a finding that a
  /// lost PDU could explain is not made across it.
  var lastLoss = 0
  /// The link's previous ATT PDU (the start of the window a response's missing request fell in).
  var previousATT = 0
  var encrypted = false
  /// A response went the same way as the request it answers: the capture's directions are
  /// wrong on this link (a sniffer's flags), so rules that name a sender by direction keep quiet.
  var directionsContradict = false
  /// Which way each open request went (true: sent by the capturing device), by frame.
  var requestWays: [Int: Bool] = [:]

  /// An ATT bearer and the way its transactions go: the channel and whether the capturing
  /// device is the one that asks (client for requests, server for indications).
  struct Bearer: Hashable {
    var channel: UInt32
    var localAsks: Bool
  }
  struct Open {
    var frame: Int
    var time: Double
    var opcode: UInt8
  }
  /// Requests awaiting their response, indications awaiting their confirmation.
  var openRequests: [Bearer: Open] = [:]
  var openIndications: [Bearer: Open] = [:]
  /// No request or indication open now was opened before this (nil: none open), so most
  /// frames need not look at them for ATT-02.
  var oldestOpen: Double?
  /// Bearers on which a request (indication) was seen: before that, on a link seen late, a
  /// response (confirmation) may answer one sent before the capture began.
  var requestSeen: Set<Bearer> = []
  /// Responses (confirmations) the bearer still owes: requests (indications) sent, less those
  /// answered.
  var owed: [Bearer: Int] = [:]
  var indicationSeen: Set<Bearer> = []

  /// Exchange MTU Requests and Responses by the device that sent them (true: the capturing one).
  var mtuRequests: [Bool: (frame: Int, mtu: UInt16)] = [:]
  var mtuResponses: [Bool: (frame: Int, mtu: UInt16)] = [:]

  /// A characteristic, as a frame's GATT meaning names it.
  struct Characteristic: Hashable {
    var service: BluetoothUUID?
    var uuid: BluetoothUUID
  }
  /// Writes awaiting their Write Response: what they said (request frame → write).
  enum PendingWrite {
    case configuration(Characteristic, bits: UInt16)
    case heartRateControl(value: [UInt8])
  }
  var pendingWrites: [Int: PendingWrite] = [:]
  /// Configurations the server acknowledged with notifications or indications off: the
  /// acknowledging frame.
  /// A few entries, searched in order (a hash of two UUIDs per notification cost more than the
  /// rest of the rules together).
  var turnedOff: [(characteristic: Characteristic, frame: Int, bits: UInt16)] = []
  /// Heart Rate Measurement's Sensor Contact Supported bit, and where it was first seen so.
  var contactSupport: (supported: Bool, frame: Int)?
  /// The server whose Energy Expended was noted last (HRS-06), so the next is only counted.
  var energyNoted: GATTServerIdentity?
  var bodySensorLocation: (value: UInt8, frame: Int)?
  /// The link's last Pairing Request: its frame and Key Distribution bits.
  var pairingRequest: (frame: Int, initiatorKeys: UInt8, responderKeys: UInt8)?

  static let transactionTimeout = 30.0
  /// Bounds on what one link keeps (a hostile capture's stream of writes).
  static let maximumPending = 256

  // MARK: Gates

  /// Diagnostics that say the sniffer did not get every packet of the link.
  mutating func noteQuality(_ frame: DissectedFrame) {
    for diagnostic in frame.diagnostics {
      switch diagnostic.kind {
      case .linkLayerCRCBad, .linkLayerPacketsMissed, .linkLayerMICFailed, .linkLayerNoKey, .linkLayerSnifferGap,
        .linkLayerKeyTriesExhausted, .linkLayerLinkSilent, .linkLayerAccessAddressWithoutConnect:
        lossy = true
        lastLoss = frame.number
      default: break
      }
    }
  }

  /// ATT-02: a request or indication open for more than 30 s while the link is still heard
  /// (this frame is on it).
  mutating func checkTimeouts(_ context: FrameContext, _ findings: inout FindingCollector) {
    guard let oldestOpen, context.time - oldestOpen > Self.transactionTimeout else { return }
    defer {
      let open = openRequests.values.map(\.time) + openIndications.values.map(\.time)
      self.oldestOpen = open.min()
    }
    timeOut(&openRequests, context, side: .server, &findings) { open, waited in
      "\(ATTNames.opcode(open.opcode)) not answered in \(waited)"
    }
    timeOut(&openIndications, context, side: .client, &findings) { _, waited in "indication not confirmed in \(waited)" }
  }

  /// The transactions of `open` older than the timeout: each a finding at its own frame,
  /// proved by this one (the link is still heard).
  func timeOut(
    _ open: inout [Bearer: Open], _ context: FrameContext, side: ConformanceFinding.Side, _ findings: inout FindingCollector,
    _ what: (Open, String) -> String
  ) {
    for (bearer, transaction) in open where context.time - transaction.time > Self.transactionTimeout {
      open[bearer] = nil
      var late = context
      late.frame = transaction.frame
      late.time = transaction.time
      let waited = Self.seconds(context.time - transaction.time)
      findings.add(.att02, late, side: side, frames: [context.frame], what(transaction, waited) + "; the link is still up at #\(context.frame)")
    }
  }

  static func seconds(_ value: Double) -> String {
    let tenths = (value * 10).rounded()
    return "\(Int(tenths) / 10).\(Int(tenths) % 10) s"
  }

  /// Whether the sniffer lost something on this link since `frame` (the window in which a
  /// missing PDU would explain what follows).
  func lostSince(_ frame: Int) -> Bool { lossy && lastLoss >= frame }

  // MARK: Link events

  mutating func linkEvent(_ event: LinkEvent, _ context: FrameContext, _ findings: inout FindingCollector) {
    switch event {
    case let .encryptionChanged(status, _, enabled) where status == 0:
      encrypted = enabled
    case let .parametersRequested(_, minimum, maximum, latency, timeout):
      let sender = directionsContradict ? .unknown : context.senderRole(local: localRole)
      if sender == .central {
        findings.add(.l2c02, context, side: .central, "the central sent a Connection Parameter Update Request (only the peripheral may)")
      }
      if let problem = Self.parameterProblem(minimum: minimum, maximum: maximum, latency: latency, timeout: timeout) {
        findings.add(.l2c03, context, side: sender == .unknown ? .peripheral : sender, "Connection Parameter Update Request \(problem)")
      }
    case let .pairingFeatures(code, _, _, _, keySize, initiatorKeys, responderKeys):
      let side = directionsContradict ? .unknown : context.senderRole(local: localRole)
      let command = code == 0x01 ? "Pairing Request" : "Pairing Response"
      if !(7...16).contains(keySize) {
        findings.add(.smp02, context, side: side, "\(command) with Maximum Encryption Key Size \(keySize), outside 7–16")
      }
      if code == 0x01 {
        pairingRequest = (context.frame, initiatorKeys, responderKeys)
      } else if let request = pairingRequest {
        let added = (initiatorKeys & ~request.initiatorKeys & 0x0F, responderKeys & ~request.responderKeys & 0x0F)
        if added.0 != 0 || added.1 != 0 {
          findings.add(.smp03, context, side: side, frames: [request.frame],
            "Pairing Response asks for keys the Pairing Request (#\(request.frame)) left out: initiator \(Hex.prefixed(UInt64(added.0), width: 2)), responder \(Hex.prefixed(UInt64(added.1), width: 2))")
        }
      }
    case let .disconnected(status, _, reason) where status == 0 && Self.peerFailures[reason] != nil:
      findings.add(.hci04, context, side: Self.peerSide(localRole),
        "the controller ended the link with \(Self.peerFailures[reason]!) (\(Hex.prefixed(UInt64(reason), width: 2)))")
    case let .parametersUpdated(status, _, _) where Self.peerFailures[status] != nil:
      findings.add(.hci04, context, side: Self.peerSide(localRole),
        "the connection update failed with \(Self.peerFailures[status]!) (\(Hex.prefixed(UInt64(status), width: 2)))")
    case let .securityManager(code, _) where (0x06...0x0A).contains(code):
      // Keys travel only over a link the pairing encrypted; on a link seen late the
      // encryption may predate the capture.
      guard seenFromStart, !encrypted, !lossy else { break }
      let side = directionsContradict ? .unknown : context.senderRole(local: localRole)
      findings.add(.smp05, context, side: side, "\(Self.keyName(code)) sent before the link was encrypted: the key travels in the clear")
    default: break
    }
  }

  /// HCI error codes by which a controller says the peer broke the link layer's protocol.
  static let peerFailures: [UInt8: String] = [
    0x1E: "Invalid LL Parameters", 0x22: "LL Response Timeout", 0x23: "LL Procedure Collision", 0x28: "Instant Passed",
    0x2A: "Different Transaction Collision", 0x3B: "Unacceptable Connection Parameters", 0x3D: "Connection Terminated due to MIC Failure",
  ]

  /// The other device's link role.
  static func peerSide(_ local: LinkRole?) -> ConformanceFinding.Side {
    switch local {
    case .central: return .peripheral
    case .peripheral: return .central
    case nil: return .unknown
    }
  }

  static func keyName(_ code: UInt8) -> String {
    switch code {
    case 0x06: return "Encryption Information (LTK)"
    case 0x07: return "Central Identification (EDIV, Rand)"
    case 0x08: return "Identity Information (IRK)"
    case 0x09: return "Identity Address Information"
    default: return "Signing Information (CSRK)"
    }
  }

  /// LL-01, LL-03, LL-04: an LL control PDU of a sniffed link.
  mutating func linkControl(_ control: LinkControlFact, air: AirFact, _ context: FrameContext, _ findings: inout FindingCollector) {
    guard !air.isRetransmission else { return }
    let sender: ConformanceFinding.Side =
      directionsContradict || air.directionSource != .sniffer ? .unknown : context.senderRole(local: localRole)
    var instant: UInt16?
    switch control {
    case let .connectionUpdate(interval, latency, timeout, at):
      instant = at
      if sender == .peripheral { findings.add(.ll03, context, side: .peripheral, "the peripheral sent LL_CONNECTION_UPDATE_IND") }
      if let problem = Self.parameterProblem(minimum: interval, maximum: interval, latency: latency, timeout: timeout) {
        findings.add(.ll04, context, side: .central, "LL_CONNECTION_UPDATE_IND \(problem)")
      }
    case let .channelMap(used, at):
      instant = at
      if sender == .peripheral { findings.add(.ll03, context, side: .peripheral, "the peripheral sent LL_CHANNEL_MAP_IND") }
      if used < 2 { findings.add(.ll04, context, side: .central, "LL_CHANNEL_MAP_IND uses \(used) channel\(used == 1 ? "" : "s") (at least 2)") }
    case let .phyUpdate(_, _, at):
      instant = at
    case let .connectionParameters(opcode, minimum, maximum, latency, timeout):
      if let problem = Self.parameterProblem(minimum: minimum, maximum: maximum, latency: latency, timeout: timeout) {
        findings.add(.ll04, context, side: sender, "\(opcode == 0x0F ? "LL_CONNECTION_PARAM_REQ" : "LL_CONNECTION_PARAM_RSP") \(problem)")
      }
    default: break
    }
    // The instant against the event that carries it, counted: it has passed when
    // (event − instant) mod 65536 < 32767 (§5.5), the event itself included.
    if let instant, let event = air.event, !lossy, event &- instant < 32767 {
      findings.add(.ll01, context, side: .central,
        "instant \(instant) is not ahead of the connection event \(event) that carries it (\(UInt16(event &- instant)) events past)")
    }
  }

  /// What is out of range in a parameter request (units: 1.25 ms, events, 10 ms), or nil.
  static func parameterProblem(minimum: UInt16, maximum: UInt16, latency: UInt16, timeout: UInt16) -> String? {
    if !(6...3200).contains(minimum) || !(6...3200).contains(maximum) {
      return "asks for an interval of \(minimum)–\(maximum) (× 1.25 ms), outside 6–3200"
    }
    if minimum > maximum { return "asks for a minimum interval \(minimum) above its maximum \(maximum)" }
    if latency > 499 { return "asks for a peripheral latency of \(latency), above 499" }
    if !(10...3200).contains(timeout) { return "asks for a supervision timeout of \(timeout) (× 10 ms), outside 10–3200" }
    // timeout × 10 ms > (1 + latency) × maximum × 1.25 ms × 2, in 0.25 ms units on both sides.
    let timeoutQuarters = Int(timeout) * 40
    let neededQuarters = (1 + Int(latency)) * Int(maximum) * 5 * 2
    if timeoutQuarters <= neededQuarters {
      return "asks for a supervision timeout of \(Int(timeout) * 10) ms, not more than (1 + latency \(latency)) × \(Self.milliseconds(maximum)) × 2 = \(Double(neededQuarters) / 4) ms"
    }
    return nil
  }

  static func milliseconds(_ interval: UInt16) -> String {
    let quarters = Int(interval) * 5
    return quarters % 4 == 0 ? "\(quarters / 4) ms" : "\(Double(quarters) / 4) ms"
  }
}

/// Opcode names for messages.
enum ATTNames {
  static func opcode(_ opcode: UInt8) -> String {
    AssignedNumbers.attOpcodeName(opcode).map { "\($0)" } ?? "ATT opcode " + Hex.prefixed(UInt64(opcode), width: 2)
  }
}
