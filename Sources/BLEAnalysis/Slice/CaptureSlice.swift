import BLECore
import BLEDecoder
import BLEEngine

/// A slice of a capture (`annotate -w FILE` with filters): the frames the filter chooses, and
/// the frames they need to decode the same in the slice as in the whole capture. Two passes
/// over the capture, each a consumer: `SlicePlan` finds which links and devices the chosen
/// frames belong to (and learns the names and the first time the filter needs), then
/// `SliceSelection` goes through the frames again and hands each one to keep to its writer,
/// saying why when it was not chosen. Memory holds the links and devices, never frames.
///
/// What a chosen frame needs (`SliceContext`), from its link: the connection's events
/// (request, complete, parameter, PHY and data length changes, version, disconnection), the
/// ATT MTU exchange, the subscriptions (CCCD writes and their responses), the writes to
/// characteristics of the chosen frames' services (a Heart Rate Control Point's Reset Energy
/// Expended tells `hr` that energy may go back), pairing and encryption (SMP, LE Start Encryption, the long-term key request and reply, Encryption
/// Change); from its device, on any of its links: the discovery that defines the handles.
/// A sniffed link is kept whole: counting connection events, telling lost packets by their
/// sequence numbers and decrypting all need every packet of it.
package enum SliceContext: String, Sendable, CaseIterable {
  case connection = "connection events"
  case mtu = "ATT MTU exchange"
  case discovery = "GATT discovery"
  case subscription = "subscription"
  case serviceWrite = "writes to their services"
  case security = "pairing and encryption"
  case link = "sniffed link"
}

/// Whose GATT table a link's discovery shows: the peer's address, else (a capture that does not
/// show it) the link itself.
package enum SliceDevice: Hashable, Sendable {
  case peer(BDAddr)
  case link(ConnectionKey)

  init(_ label: ConnectionLabel) {
    self = label.peer.map(SliceDevice.peer) ?? .link(ConnectionKey(label))
  }
}

/// The first pass: which frames the filter chooses, by link and device.
package struct SlicePlan: FrameConsumer {
  package var filter: FrameFilter
  /// `--errors`: check's findings choose the frames that prove a rule broken.
  var conformance: ConformanceAnalysis?
  package private(set) var links: Set<ConnectionKey> = []
  package private(set) var devices: Set<SliceDevice> = []
  /// The peers of the chosen links: a connection request to one of them is context.
  package private(set) var peers: Set<BDAddr> = []
  /// The services of the chosen frames' attributes (at most `maximumServices`).
  package private(set) var services: Set<BluetoothUUID> = []
  static let maximumServices = 256
  package private(set) var chosen = 0
  /// Air packets read: the slice must be written in a format that carries them.
  package private(set) var airPackets = 0
  /// Links past this many are not given their context (said by `linksLeftOut`).
  package static let maximumLinks = 1 << 16
  package private(set) var linksLeftOut = 0
  /// The links that showed discovery (of any device; at most `maximumLinks`).
  package private(set) var discoveringLinks: Set<ConnectionKey> = []

  package init(filter: FrameFilter, findings: Bool) {
    self.filter = filter
    conformance = findings ? ConformanceAnalysis.eachFinding() : nil
  }

  package var fieldDetail: FieldDetail { .none }

  package mutating func consume(_ frame: inout DissectedFrame) -> Bool {
    if frame.record.kind == .airPacket { airPackets += 1 }
    if let connection = frame.connection, SliceSelection.isDiscovery(frame), discoveringLinks.count < Self.maximumLinks {
      discoveringLinks.insert(ConnectionKey(connection))
    }
    guard SliceSelection.chooses(&frame, filter: &filter, conformance: &conformance) else { return true }
    chosen += 1
    guard let connection = frame.connection else { return true }
    guard links.count < Self.maximumLinks || links.contains(ConnectionKey(connection)) else {
      linksLeftOut += 1
      return true
    }
    links.insert(ConnectionKey(connection))
    devices.insert(SliceDevice(connection))
    if let peer = connection.peer { peers.insert(peer) }
    for fact in frame.attributes where services.count < Self.maximumServices {
      if let service = fact.meaning?.service { services.insert(service) }
    }
    return true
  }

  package mutating func finish(_ end: FrameStream.End) {}
}

/// The second pass: each frame to keep, handed to `keep` with the context it is kept for (nil:
/// the filter chose it).
package struct SliceSelection: FrameConsumer {
  var filter: FrameFilter
  var conformance: ConformanceAnalysis?
  let plan: SlicePlan
  let keep: (CaptureRecord, SliceContext?) -> Void
  /// Frames kept, by why: chosen, or each context.
  package private(set) var chosen = 0
  package private(set) var context: [SliceContext: Int] = [:]
  /// The last kept write of each chosen link, whose response is kept too.
  var writes: [ConnectionKey: (frame: Int, reason: SliceContext)] = [:]

  /// `plan`: the first pass, whose filter has learned the names and the first frame's time.
  package init(plan: SlicePlan, keep: @escaping (CaptureRecord, SliceContext?) -> Void) {
    self.plan = plan
    filter = plan.filter
    conformance = plan.conformance == nil ? nil : ConformanceAnalysis.eachFinding()
    self.keep = keep
  }

  package var fieldDetail: FieldDetail { .none }

  package mutating func consume(_ frame: inout DissectedFrame) -> Bool {
    if Self.chooses(&frame, filter: &filter, conformance: &conformance) {
      chosen += 1
      keep(frame.record, nil)
    } else if let reason = why(&frame) {
      context[reason, default: 0] += 1
      keep(frame.record, reason)
    }
    return true
  }

  package mutating func finish(_ end: FrameStream.End) {}

  /// Whether the filter chooses a frame (both passes ask the same way).
  static func chooses(_ frame: inout DissectedFrame, filter: inout FrameFilter, conformance: inout ConformanceAnalysis?) -> Bool {
    var proves = false
    if conformance != nil {
      _ = conformance!.consume(&frame)
      proves = conformance!.fresh.contains { $0.frame == frame.number }
    }
    if filter.observes { filter.observe(&frame) }
    if proves && filter.errorsOnly {
      // A finding is a warning of its frame: the filter's other kinds still apply.
      var others = filter
      others.errorsOnly = false
      return others.matches(frame)
    }
    return filter.matches(frame)
  }

  /// Why a frame the filter did not choose is needed, if it is.
  mutating func why(_ frame: inout DissectedFrame) -> SliceContext? {
    guard let connection = frame.connection else {
      for case .connectRequested(let peer?, _, _) in frame.linkEvents where plan.peers.contains(peer) { return .connection }
      return nil
    }
    let link = ConnectionKey(connection)
    if plan.links.contains(link) {
      if frame.record.kind == .airPacket { return .link }
      if frame.linkEvents.array.contains(where: Self.isSecurity) || Self.isEncryptionCommand(frame.hci) { return .security }
      if !frame.linkEvents.isEmpty { return .connection }
      if let opcode = frame.attOpcode {
        if opcode == 0x02 || opcode == 0x03 { return .mtu }
        if let reason = writeReason(frame) {
          writes[link] = (frame.number, reason)
          return reason
        }
        if let write = writes[link], let request = frame.att?.requestFrame, write.frame == request { return write.reason }
      }
    }
    guard plan.devices.contains(SliceDevice(connection)) else { return nil }
    if Self.isDiscovery(frame) { return .discovery }
    if plan.discoveringLinks.contains(link) {
      if frame.linkEvents.array.contains(where: Self.opensOrCloses) { return .connection }
      if frame.attOpcode == 0x02 || frame.attOpcode == 0x03 { return .mtu }
    }
    return nil
  }

  static func isDiscovery(_ frame: borrowing DissectedFrame) -> Bool {
    guard let att = frame.att else { return false }
    return discoveryRequests.contains(att.opcode) || att.requestOpcode.map(discoveryRequests.contains) == true
  }

  static func opensOrCloses(_ event: LinkEvent) -> Bool {
    switch event {
    case .connected, .disconnected: return true
    default: return false
    }
  }

  /// A write kept for the chosen frames: a subscription, or a write to one of their services.
  func writeReason(_ frame: DissectedFrame) -> SliceContext? {
    var reason: SliceContext?
    for fact in frame.attributes where fact.operation == .write || fact.operation == .writeWithoutResponse {
      guard let meaning = fact.meaning else { continue }
      if meaning.role == .descriptor && meaning.descriptor == BluetoothUUID(uuid16: 0x2902) { return .subscription }
      if let service = meaning.service, plan.services.contains(service) { reason = .serviceWrite }
    }
    return reason
  }

  /// Find Information, Find By Type Value, Read By Type and Read By Group Type: the requests
  /// that find services, characteristics and descriptors (their responses and errors follow).
  static let discoveryRequests: Set<UInt8> = [0x04, 0x06, 0x08, 0x10]

  static func isSecurity(_ event: LinkEvent) -> Bool {
    switch event {
    case .securityManager, .pairingFeatures, .identityAddress, .encryptionChanged: return true
    default: return false
    }
  }

  /// LE Enable Encryption, LE Long Term Key Request Reply and Negative Reply, the LE Long Term
  /// Key Request event and Encryption Key Refresh Complete.
  static func isEncryptionCommand(_ fact: HCIFact) -> Bool {
    switch fact {
    case .command(let opcode): return opcode == 0x2019 || opcode == 0x201A || opcode == 0x201B
    case .event(0x3E, 0x05?), .event(0x30, _): return true
    default: return false
    }
  }

}

extension ConformanceAnalysis {
  /// An analysis that tells each frame's findings as it is consumed (`fresh`).
  static func eachFinding() -> ConformanceAnalysis {
    var analysis = ConformanceAnalysis()
    analysis.keepsEachFinding = true
    return analysis
  }
}
