import BLECore

/// LE link-layer packets sniffed over the air (records of kind `.airPacket`): the sniffer's
/// header (`AirPacketHeader`), then the packet: access address(4) PDU header(2) payload CRC(3).
/// Advertising physical channel PDUs travel on the advertising access address; every other
/// access address is a connection's, carrying data physical channel PDUs.
///
/// The corresponding specification is Core Vol 6 Part B §2.1 (packet), §2.3 (advertising PDUs),
/// §2.4 (data PDUs and LL control).
enum AirPacket {
  /// The link layer's entry point: `air` is its own state; a connection's packets find their
  /// connection in `connections`, and carry L2CAP pieces up with the state of L2CAP and the
  /// protocols above it (`l2cap`, `gatt`), which it passes on.
  static func decode(
    _ reader: inout ByteReader, into frame: inout DissectedFrame, _ air: inout AirLinkState, connections: inout ConnectionTable,
    l2cap: inout L2CAPState, gatt: inout GATTState, registry: DecoderRegistry
  ) throws(DecodeError) {
    reader.layer = .linkLayer
    frame.deepestLayer = .linkLayer
    if frame.record.timestamp >= air.links.nextTimeoutCheck { air.closeSilentAirLinks(into: &frame) }
    let header = try AirPacketHeader(parsing: &reader)
    describe(header, &frame.fields)
    frame.fields.end()  // air
    let accessAddress = try reader.readUInt32LE()
    frame.air = AirFact(header: header, accessAddress: accessAddress)
    let group = frame.fields.count
    frame.fields.beginObject("ll", "Link layer", inline: true)
    frame.fields.hex("access_address", "Access address", accessAddress, width: 8)
    // On LE Coded, the coding indicator (S=8 or S=2) travels after the access address.
    if header.phy == .leCoded {
      let indicator = try reader.readUInt8() & 0x03
      frame.fields.code("coding", "Coding", indicator, width: 1, name: indicator == 0 ? "S=8" : (indicator == 1 ? "S=2" : nil))
    }
    // The PDU, and the CRC after it: the PDU's length says where one ends.
    var look = reader
    _ = try look.readUInt8()
    let length = Int(try look.readUInt8())
    var pdu = try reader.readReader(count: min(reader.remaining, 2 + length))
    // The CRC is the link layer's, shown in its group, before the layers above close it.
    if reader.remaining >= 3 {
      frame.fields.addVerbose("crc", "CRC", .unsigned(UInt64(try reader.readUInt24LE()), .hex(6)))
    }
    if header.crc == .invalid {
      // Its receiver ignored it and a good copy follows: nothing in it is taken as said.
      frame.diagnostics.append(Diagnostic(.linkLayerCRCBad, "the sniffer found the CRC wrong: the packet is not decoded"))
      frame.header = .damagedAirPacket(advertising: accessAddress == AirFact.advertisingAccessAddress, length: length)
      // Named by its link when it has one (summaries count a link's damaged packets).
      if let handle = air.links.links[accessAddress]?.handle, let connection = connections.connection(adapter: 0, handle: handle) {
        frame.connection = connection.label
      }
      frame.fields.hex("header", "PDU header", try pdu.readUInt16LE(), width: 4)
      frame.fields.bytes("payload", "Payload (not decoded)", pdu.readRemaining())
    } else if accessAddress == AirFact.advertisingAccessAddress {
      let request = try AdvertisingPDU.decode(&pdu, into: &frame, registry: registry)
      // A silent link's device heard again here: advertising to be connected (ADV_IND,
      // ADV_DIRECT_IND), or in a CONNECT_IND. Others may advertise or scan while connected.
      if !air.links.byDevice.isEmpty {
        switch frame.header {
        case let .advertisingPDU(type, advertiser?, _, _) where type == 0 || type == 1:
          air.heardElsewhere(advertiser, &connections, into: &frame)
        case let .connectIndication(initiator, advertiser, _, _, _):
          air.heardElsewhere(initiator, &connections, into: &frame)
          air.heardElsewhere(advertiser, &connections, into: &frame)
        default: break
        }
      }
      if case let .connectIndication(initiator, advertiser, advertiserType, linkAddress, _) = frame.header, let request {
        air.openAirLink(
          linkAddress, central: (initiator, request.initiatorType), peripheral: (advertiser, advertiserType), parameters: request.parameters,
          window: request.window, &connections, into: &frame)
      }
    } else {
      try air.dissectDataPDU(
        &pdu, accessAddress: accessAddress, group: group, connections: &connections, l2cap: &l2cap, gatt: &gatt, registry: registry, into: &frame)
    }
    if !reader.isAtEnd {
      frame.diagnostics.append(Diagnostic(.linkLayerTrailingBytes, "\(reader.remaining) bytes after the CRC"))
    }
  }

  /// The `air` group: what the sniffer knew of how the packet travelled.
  static func describe(_ header: AirPacketHeader, _ fields: inout FieldList) {
    if let channel = header.channel { fields.uint("channel", "Channel index", channel) }
    if let signal = header.signal { fields.measure("rssi", "RSSI", signal, scale: 1, unit: "dBm") }
    if let phy = header.phy { fields.code("phy", "PHY", phy.rawValue, width: 2, name: phyName(phy)) }
    if let fromCentral = header.fromCentral {
      fields.add("direction", "Direction", .staticText(fromCentral ? "central → peripheral" : "peripheral → central"))
    }
    if header.crc != .notChecked { fields.flag("crc_valid", "CRC valid", header.crc == .valid) }
    if header.mic != .notChecked { fields.flag("mic_valid", "MIC valid", header.mic == .valid) }
    if header.decryptedBySniffer { fields.flag("decrypted", "Decrypted by the sniffer", true) }
    if let counter = header.eventCounter { fields.uint("event_counter", "Connection event", counter) }
  }

  static func phyName(_ phy: AirPacketHeader.PHY) -> Name {
    switch phy {
    case .le1M: return "LE 1M"
    case .le2M: return "LE 2M"
    case .leCoded: return "LE Coded"
    }
  }
}

/// What the link layer keeps of each connection sniffed, by access address: the connection
/// handle it is given (connections sniffed over the air are numbered from 1, on controller
/// index 0, so every layer above finds them as it finds HCI ones), whether its payloads are
/// encrypted, and what tells a retransmission. Bounded: past `maximumLinks` the oldest is
/// forgotten.
struct AirLinks: Sendable {
  /// A side's last data packet, as `Link.last` keeps it.
  struct SentPacket: Sendable {
    var sn: UInt8
    var digest: UInt32
    var acknowledged = false
  }

  /// The acknowledgement scheme of a link's packets (Core Vol 6 Part B §4.5.9), as heard. Each
  /// side's state in its own fields, index 0 the central's: this runs on every packet, and
  /// plain fields cost less than a pair's accessors.
  struct Acknowledgements: Sendable {
    /// Each side's last data packet: its SN, what it carried (a retransmission repeats both),
    /// and whether the other side acknowledged it since (its NESN moved past that SN), after
    /// which the same SN is a new packet.
    var lastFromCentral: SentPacket?
    var lastFromPeripheral: SentPacket?
    /// Each side's last NESN, and whether a packet of the other side with that SN (the one it
    /// waits for) was heard since: a NESN that moves on without it says one went unheard.
    var nesnOfCentral: UInt8?
    var nesnOfPeripheral: UInt8?
    var centralHeardAwaited = false
    var peripheralHeardAwaited = false

    func last(_ direction: Direction) -> SentPacket? { direction == .hostToController ? lastFromCentral : lastFromPeripheral }

    /// Notes a packet of `direction`'s side: whether it is a retransmission (its side's last SN
    /// and payload, not acknowledged), whether an odd number of its side's packets went unheard
    /// before it (its side's last SN again after an acknowledgement, or with other data), and
    /// whether one of the other side's did (its NESN moved on with no packet of the awaited SN
    /// heard). `filtered`: an export with packets taken out, of which none of that is claimed.
    @inline(__always)
    mutating func note(from direction: Direction, sn: UInt8, nesn: UInt8, digest: UInt32, filtered: Bool) -> (repeated: Bool, missedBefore: Bool, missedFromPeer: Bool) {
      let fromCentral = direction == .hostToController
      var mine = fromCentral ? lastFromCentral : lastFromPeripheral
      var theirs = fromCentral ? lastFromPeripheral : lastFromCentral
      let myNESN = fromCentral ? nesnOfCentral : nesnOfPeripheral
      let theirNESN = fromCentral ? nesnOfPeripheral : nesnOfCentral
      let heardAwaited = fromCentral ? centralHeardAwaited : peripheralHeardAwaited
      var missedFromPeer = false
      if let previous = myNESN, nesn != previous, !heardAwaited {
        missedFromPeer = true
        theirs = SentPacket(sn: previous, digest: 0, acknowledged: true)
      }
      if let peerLast = theirs, nesn == peerLast.sn ^ 1 { theirs?.acknowledged = true }
      let previous = mine
      mine = SentPacket(sn: sn, digest: digest)
      let theyHeardAwaited = theirNESN == sn
      if fromCentral {
        lastFromCentral = mine
        lastFromPeripheral = theirs
        nesnOfCentral = nesn
        centralHeardAwaited = false
        if theyHeardAwaited { peripheralHeardAwaited = true }
      } else {
        lastFromPeripheral = mine
        lastFromCentral = theirs
        nesnOfPeripheral = nesn
        peripheralHeardAwaited = false
        if theyHeardAwaited { centralHeardAwaited = true }
      }
      guard !filtered, let previous else { return (false, false, filtered ? false : missedFromPeer) }
      let repeated = previous.sn == sn && previous.digest == digest && !previous.acknowledged
      let missedBefore = previous.sn == sn && (previous.digest != digest || previous.acknowledged)
      return (repeated, missedBefore, missedFromPeer)
    }
  }

  struct Link: Sendable {
    var handle: UInt16
    /// The two devices, from the CONNECT_IND (nil when the capture began after it).
    var central: BDAddr?
    var peripheral: BDAddr?
    /// Whether each address is random (CONNECT_IND's TxAdd and RxAdd): legacy pairing's c1 uses it.
    var centralIsRandom = false
    var peripheralIsRandom = false
    var encrypted = false
    var encryption = LinkEncryption()
    /// The link's legacy pairing as sniffed, to work out its keys.
    var pairing = PairingTranscript()
    /// The supervision timeout in microseconds (CONNECT_IND, LL_CONNECTION_UPDATE_IND).
    var supervisionTimeout: Int64?
    /// Until its first data packet, a link is lost after six connection intervals, not the
    /// supervision timeout (Core Vol 6 Part B §4.5.2: it failed to be established).
    var establishmentTimeout: Int64?
    /// Whether it carried a data packet yet.
    var established: Bool { lastTime != nil }
    /// The connection event the link is in (connEventCounter, Core Vol 6 Part B §4.5.1), from
    /// 0 at its first packet: a packet that opens an event moves it on by the intervals since
    /// the last event's anchor (the sniffer's own count wins when it gives one). Counted only
    /// when the interval is known (from the CONNECT_IND).
    var event: UInt16 = 0
    var anchor: Int64?
    /// Whether `anchor` is the middle of the CONNECT_IND's transmit window (event 0 expected
    /// there), not a packet's time.
    var anchorIsWindow = false
    /// The interval in microseconds.
    var interval: Int64?
    /// An LL_CONNECTION_UPDATE_IND waiting for its instant, and its frame.
    var pendingUpdate: (parameters: ConnectionParameters, instant: UInt16, frame: Int)?
    /// The PHY each way (HCI's numbering: 1 LE 1M, 2 LE 2M, 3 LE Coded), and an
    /// LL_PHY_UPDATE_IND waiting for its instant.
    var phy: (toPeripheral: UInt8, toCentral: UInt8) = (1, 1)
    var pendingPHY: (toPeripheral: UInt8, toCentral: UInt8, instant: UInt16)?
    /// Each side's last LL_LENGTH_REQ or _RSP: what it may send and receive (octets, µs).
    var lengths = DirectionalPair<(receive: UInt16, receiveTime: UInt16, transmit: UInt16, transmitTime: UInt16)?>(nil)
    /// When the link was last heard from, and in which frame (its CONNECT_IND to begin with).
    var lastHeard: Int64?
    var lastFrame = 0
    /// Whether the link ended: LL_TERMINATE_IND, or silence past its supervision timeout
    /// while one of its devices was heard advertising or connecting again (`takeLostLinks`).
    var ended = false
    var endedBySilence = false
    /// Whether nothing has been heard on it for longer than it may be silent (`lossTime`): the
    /// devices dropped it, or the sniffer lost its hops. Which one, later frames tell: a packet
    /// on its access address (the link went on), or one of its devices advertising or in a new
    /// CONNECT_IND (it was lost); the capture's end tells neither.
    var silent = false
    /// Whether one of its devices was said heard advertising during this quiet spell.
    var saidHeardElsewhere = false
    /// Whether the link's encryption start was announced (its first encrypted packet).
    var encryptionAnnounced = false
    /// Whether the capture holds the link's encrypted packets already decrypted, MIC stripped
    /// (a packet after LL_START_ENC_REQ too short to carry a MIC, or an L2CAP header that
    /// fits the plain length).
    var storesPlaintext = false
    /// What the SN and NESN bits of the link's packets have shown (`Acknowledgements`); before
    /// its last packet, and what that one was noted with, to note it again when its direction
    /// turns out wrong.
    var sequence = Acknowledgements()
    var sequenceBeforeLast = Acknowledgements()
    var lastSequenceInput: (sn: UInt8, nesn: UInt8, digest: UInt32, filtered: Bool) = (0, 0, 0, false)
    /// What its last packet brought about (`News`), until taken.
    var news = News()
    /// Whether an empty PDU was heard on it: every link the sniffer follows carries them.
    var carriedEmptyPDU = false
    /// Who sent the last data packet, and when, to tell who sent the next when the sniffer
    /// does not say.
    var lastDirection: Direction?
    var lastTime: Int64?
  }
  /// Microseconds between packets beyond which the next opens a connection event (packets of
  /// one event are under 2.2 ms apart: 150 µs plus the longest LE 1M packet, 2.12 ms at 251 bytes).
  static let eventGap: Int64 = 2_500
  static let maximumLinks = 1024
  var links = BoundedDictionary<UInt32, Link>(capacity: maximumLinks)
  var nextHandle: UInt16 = 1
  /// When (capture time) to look next for links silent past their supervision timeout.
  var nextTimeoutCheck = Int64.max
  /// How often (capture time, µs) links are checked for silence: timeouts are 100 ms or more.
  static let timeoutCheckInterval: Int64 = 50_000

  /// When the devices would drop the link if nothing more is heard on it (Core Vol 6 Part B
  /// §4.5.2), by the parameters in force: six intervals after the CONNECT_IND until its first
  /// packet, else the supervision timeout after the last packet — unless an update's instant
  /// comes first: the timer restarts there with the new timeout, and the first event under the
  /// new parameters may come up to a new interval later (§5.1.1). Nil when not known.
  static func lossTime(_ link: Link) -> Int64? {
    guard let last = link.lastHeard else { return nil }
    let limit = link.established ? link.supervisionTimeout : link.establishmentTimeout ?? link.supervisionTimeout
    guard let limit else { return nil }
    let loss = last.saturatingAdd(limit)
    guard let pending = link.pendingUpdate, let interval = link.interval, let anchor = link.anchor else { return loss }
    let eventsAhead = Int64(max(0, Int16(bitPattern: pending.instant &- link.event)))
    let instant = anchor.saturatingAdd(eventsAhead.saturatingMultiply(interval))
    guard instant <= loss else { return loss }
    let newTimeout = Int64(pending.parameters.supervisionTimeout) * 10_000
    let newInterval = Int64(pending.parameters.interval) * 1_250
    return instant.saturatingAdd(newTimeout).saturatingAdd(newInterval)
  }

  /// Links silent at `time` for longer than they may be (`lossTime`), not yet said: each is
  /// marked silent, not ended (the sniffer may have lost it; later frames tell). Returns its
  /// handle, its last frame and how long it could be silent. Scans at most every
  /// `timeoutCheckInterval`.
  mutating func takeSilentLinks(at time: Int64) -> [SilentLink] {
    nextTimeoutCheck = time.saturatingAdd(Self.timeoutCheckInterval)
    var silent: [(accessAddress: UInt32, link: SilentLink)] = []
    var anyOpen = false
    for (accessAddress, link) in links.storage where !link.ended && !link.silent {
      guard let loss = Self.lossTime(link), let last = link.lastHeard else { continue }
      if time > loss {
        silent.append((accessAddress, SilentLink(handle: link.handle, lastFrame: link.lastFrame, limit: loss.saturatingSubtract(last), established: link.established)))
      } else {
        anyOpen = true
      }
    }
    if !anyOpen { nextTimeoutCheck = .max }
    guard !silent.isEmpty else { return [] }
    for (accessAddress, _) in silent { _ = links.modify(accessAddress) { $0.silent = true } }
    silentLinks += silent.count
    return silent.map(\.link).sorted { $0.lastFrame < $1.lastFrame }
  }

  struct SilentLink {
    var handle: UInt16
    /// The last frame heard on it.
    var lastFrame: Int
    /// How long it could be silent, in microseconds.
    var limit: Int64
    /// Whether it had carried a data packet (else it failed to be established).
    var established: Bool
  }

  /// Links marked silent (`silent`, not ended), so advertising needs no scan while there are none.
  var silentLinks = 0

  /// The access addresses of the links each device is in (from their CONNECT_INDs), to find a
  /// device's links when it is heard advertising without a scan. Bounded: cleared when full
  /// (links are then not found by device, only by access address).
  var byDevice: [BDAddr: [UInt32]] = [:]
  static let maximumDevices = 2 * maximumLinks

  mutating func index(_ accessAddress: UInt32, devices: BDAddr...) {
    if byDevice.count >= Self.maximumDevices { byDevice.removeAll() }
    for device in devices {
      var addresses = byDevice[device, default: []].filter { links[$0] != nil && $0 != accessAddress }
      addresses.append(accessAddress)
      byDevice[device] = Array(addresses.suffix(8))
    }
  }

  /// What hearing `device` on the advertising channels (advertising to be connected, or in a
  /// CONNECT_IND) at `time` says of its open links: a silent one was lost (each is marked
  /// ended and returned); one quiet for six intervals or more (the central sends in every
  /// event, §4.5.1) may have ended unseen — its handle is returned once a quiet spell.
  mutating func heardElsewhere(_ device: BDAddr, at time: Int64) -> (lost: [SilentLink], quiet: [UInt16]) {
    // Looked at most every `timeoutCheckInterval` (capture time): what it decides is about
    // silences of six intervals or more, and advertising comes many times a second.
    guard time >= nextHeardCheck || time < lastHeardCheck else { return ([], []) }
    guard let addresses = byDevice[device] else { return ([], []) }
    lastHeardCheck = time
    nextHeardCheck = time.saturatingAdd(Self.timeoutCheckInterval)
    var lost: [SilentLink] = []
    var quiet: [UInt16] = []
    for accessAddress in addresses {
      _ = links.modify(accessAddress) { link in
        guard !link.ended, link.central == device || link.peripheral == device, let last = link.lastHeard else { return }
        if link.silent {
          lost.append(Self.lose(&link))
        } else if !link.saidHeardElsewhere, let interval = link.interval, time.saturatingSubtract(last) >= interval.saturatingMultiply(6) {
          link.saidHeardElsewhere = true
          quiet.append(link.handle)
        }
      }
    }
    guard !lost.isEmpty else { return ([], quiet) }
    silentLinks = max(0, silentLinks - lost.count)
    return (lost.sorted { $0.lastFrame < $1.lastFrame }, quiet)
  }

  /// A silent link taken as lost: marked ended by its silence.
  static func lose(_ link: inout Link) -> SilentLink {
    let limit = lossTime(link).map { $0.saturatingSubtract(link.lastHeard ?? $0) } ?? 0
    link.silent = false
    link.ended = true
    link.endedBySilence = true
    return SilentLink(handle: link.handle, lastFrame: link.lastFrame, limit: limit, established: link.established)
  }

  /// The link on `accessAddress`, when it is silent, taken as lost (a new link takes its
  /// access address).
  mutating func loseIfSilent(_ accessAddress: UInt32) -> SilentLink? {
    let lost = links.modify(accessAddress) { link -> SilentLink? in link.silent && !link.ended ? Self.lose(&link) : nil } ?? nil
    if lost != nil { silentLinks = max(0, silentLinks - 1) }
    return lost
  }

  /// When a device heard advertising was last looked up, and when the next may be.
  var lastHeardCheck: Int64 = .min
  var nextHeardCheck: Int64 = .min

  /// Whether the link's encryption start is still to be announced; from now on it is not.
  mutating func announceEncryption(_ accessAddress: UInt32) -> Bool {
    links.modify(accessAddress) { link in
      defer { link.encryptionAnnounced = true }
      return !link.encryptionAnnounced
    } ?? false
  }

  /// Whether the capture stores this link's packets decrypted (`Link.storesPlaintext`).
  func storesPlaintext(_ accessAddress: UInt32) -> Bool { links[accessAddress]?.storesPlaintext ?? false }

  mutating func noteStoresPlaintext(_ accessAddress: UInt32) {
    _ = links.modify(accessAddress) { $0.storesPlaintext = true }
  }

  /// The key that opens the link's packets (empty before one does).
  func key(_ accessAddress: UInt32) -> [UInt8] { links[accessAddress]?.encryption.key ?? [] }

  /// Whether a packet of the link was opened with a key yet.
  func wasOpened(_ accessAddress: UInt32) -> Bool { links[accessAddress]?.encryption.cipher != nil }

  /// Marks the link ended (LL_TERMINATE_IND); its last packets (the acknowledgement) still
  /// come on its access address.
  mutating func end(_ accessAddress: UInt32) {
    _ = links.modify(accessAddress) { $0.ended = true }
  }


  mutating func setEncrypted(_ accessAddress: UInt32, _ value: Bool) {
    _ = links.modify(accessAddress) {
      $0.encrypted = value
      // A restart after a pause is a new start to announce.
      if !value { $0.encryptionAnnounced = false }
    }
  }

  /// LL_ENC_REQ and LL_ENC_RSP: the halves of the session key diversifier and IV.
  mutating func noteEncryption(_ accessAddress: UInt32, _ fact: LinkControlFact) {
    _ = links.modify(accessAddress) { link in
      switch fact {
      case let .encryptionRequest(random, ediv, skd, iv): link.encryption.requested(random: random, ediv: ediv, skd: skd, iv: iv)
      case let .encryptionResponse(skd, iv): link.encryption.response = (skd, iv)
      default: break
      }
    }
  }

  /// Opens an encrypted packet of the link with its key, chosen on the first from the keys
  /// given (`keys`), then those the capture itself gave away (`learned`).
  mutating func open(
    _ accessAddress: UInt32, header: UInt8, sealed: ByteView, direction: Direction, keys: LinkKeyRing, learned: LinkKeyRing, trials: inout Int
  ) -> LinkEncryption.Opening {
    links.modify(accessAddress) { link in
      let (central, peripheral, random, ediv) = (link.central, link.peripheral, link.encryption.request?.random ?? 0, link.encryption.request?.ediv ?? 0)
      return link.encryption.open(header: header, sealed: sealed, direction: direction, trials: &trials) {
        keys.candidates(central: central, peripheral: peripheral, random: random, ediv: ediv)
          + learned.candidates(central: central, peripheral: peripheral, random: random, ediv: ediv)
      }
    } ?? .sealed(.noKeyExchange)
  }

  /// Whether "no key fits" was said of the link already; from now on it has been.
  mutating func saidNoKeyFits(_ accessAddress: UInt32) -> Bool {
    links.modify(accessAddress) { link in
      defer { link.encryption.saidNoKeyFits = true }
      return link.encryption.saidNoKeyFits
    } ?? true
  }

  /// Notes an SMP command on the link; returns an LTK it distributes, for the link's devices.
  mutating func notePairing(_ accessAddress: UInt32, _ command: [UInt8], direction: Direction, frame: Int) -> LinkKeyRing.Key? {
    links.modify(accessAddress) { link in
      guard let key = link.pairing.note(command, direction: direction, frame: frame) else { return nil }
      return LinkKeyRing.Key(key: key, address: link.peripheral, source: "the LTK distributed at #\(frame) (Encryption Information)")
    } ?? nil
  }

  /// Whether the link's legacy pairing was sniffed whole, so a TK would give its key.
  func pairingWasSeen(_ accessAddress: UInt32) -> Bool {
    links[accessAddress]?.pairing.isWhole ?? false
  }

  /// The short-term key of the link's legacy pairing, worked out from the sniffed pairing with
  /// the TKs `candidates` (once per link); nil when the pairing was not seen whole, or no TK fits.
  mutating func shortTermKey(_ accessAddress: UInt32, candidates: some Sequence<TemporaryKey>) -> (key: LinkKeyRing.Key, tk: TemporaryKey)? {
    links.modify(accessAddress) { link in
      guard !link.pairing.tried, let central = link.central, let peripheral = link.peripheral else { return nil }
      link.pairing.tried = true
      guard let found = link.pairing.shortTermKey(central: (central, link.centralIsRandom), peripheral: (peripheral, link.peripheralIsRandom), candidates: candidates) else {
        return nil
      }
      let key = LinkKeyRing.Key(
        key: (0..<16).map { found.stk[$0] }, address: peripheral, random: 0, ediv: 0,
        source: "the STK worked out from the pairing at #\(link.pairing.firstFrame)–#\(link.pairing.lastFrame) (\(found.tk.words))")
      return (key, found.tk)
    } ?? nil
  }

  /// Lets the link's pairing be tried again (with more TKs: a passkey search after the TKs known).
  mutating func retryPairing(_ accessAddress: UInt32) {
    _ = links.modify(accessAddress) { $0.pairing.tried = false }
  }

  /// Whether the link's legacy pairing left its TK to be checked by the MIC of its first
  /// encrypted packet: both randoms sniffed, the central's confirm not, the STK (Rand and EDIV
  /// 0) in use, and no MIC check yet.
  func awaitsMICCheck(_ accessAddress: UInt32) -> Bool {
    guard let link = links[accessAddress], link.encryption.cipher == nil, !link.pairing.triedMIC, link.pairing.hasRandoms, !link.pairing.isWhole,
      let request = link.encryption.request, request.random == 0, request.ediv == 0, link.encryption.response != nil
    else { return false }
    return true
  }

  /// The STK of the link's legacy pairing found by trying `candidates` against the MIC of its
  /// first encrypted packet (`header`, `sealed`, sent by `direction`'s side, its counter 0 to 2):
  /// TK → s1 with the sniffed randoms → session key → CCM (as crackle does when the confirms
  /// are missing). Once a link.
  mutating func shortTermKeyByMIC(
    _ accessAddress: UInt32, header: UInt8, sealed: ByteView, direction: Direction, frame: Int, candidates: some Sequence<TemporaryKey>
  ) -> (key: LinkKeyRing.Key, tk: TemporaryKey)? {
    links.modify(accessAddress) { link in
      link.pairing.triedMIC = true
      guard let request = link.encryption.request, let response = link.encryption.response else { return nil }
      let sealedBytes = Array(sealed)
      for tk in candidates {
        guard let stk = link.pairing.shortTermKey(tk) else { return nil }
        let cipher = LinkCipher(longTermKey: stk, skdCentral: request.skd, skdPeripheral: response.skd, ivCentral: request.iv, ivPeripheral: response.iv)
        for counter: UInt64 in 0...2 where cipher.open(header: header, sealed: sealedBytes, counter: counter, fromCentral: direction == .hostToController) != nil {
          let key = LinkKeyRing.Key(
            key: (0..<16).map { stk[$0] }, address: link.peripheral, random: 0, ediv: 0,
            source: "the STK worked out from the pairing's randoms at #\(link.pairing.lastFrame) and the MIC of #\(frame) (\(tk.words))")
          link.encryption.noKeyFits = false
          link.encryption.triedFlipped = false
          return (key, tk)
        }
      }
      return nil
    } ?? nil
  }

  /// What a data PDU tells of its link, found in one lookup.
  struct Seen {
    var handle: UInt16
    /// Whether the link was first seen with this packet (no CONNECT_IND before it).
    var isNew: Bool
    var direction: Direction
    /// How the direction is known (the sniffer's word, or worked out).
    var directionSource: AirFact.DirectionSource
    /// Whether the packet repeats its side's last one: a retransmission.
    var repeated: Bool
    /// Whether it has its side's last SN with other data: a packet or more of that side (an
    /// odd number) went by unrecorded, since a new packet flips the SN (Core Vol 6 Part B §4.5.9).
    var missedBefore: Bool
    /// Whether its NESN acknowledges a packet of the other side that was not heard: the sniffer
    /// missed one (or more) of that side's packets.
    var missedFromPeer: Bool
    var encrypted: Bool
    /// Whether the link had ended before it (the acknowledgement of LL_TERMINATE_IND).
    var ended: Bool
    /// The connection event it is in, when counted.
    var event: UInt16?
    /// Whether the link has news for this packet (`News`, taken with `takeNews`): rare, so
    /// kept out of this value, which every packet's lookup returns.
    var hasNews: Bool
  }

  /// What a packet brings about now and then: an update's or PHY update's instant reached, a
  /// silence ended.
  struct News: Sendable {
    /// An update whose instant this packet's event reached: the parameters now in force, and
    /// the frame of its LL_CONNECTION_UPDATE_IND.
    var update: (parameters: ConnectionParameters, frame: Int)?
    /// A PHY update whose instant it reached: the PHY each way now (HCI's numbering).
    var phyUpdate: (toPeripheral: UInt8, toCentral: UInt8)?
    /// When the link had been silent for longer than it may be and this packet goes on with
    /// it: the silence (µs) and the last frame before it — the sniffer lost it, the devices did
    /// not.
    var gap: (microseconds: Int64, lastFrame: Int)?

    var isEmpty: Bool { update == nil && phyUpdate == nil && gap == nil }
  }

  /// The news the link's last packet brought (`Seen.hasNews`), taken.
  mutating func takeNews(_ accessAddress: UInt32) -> News {
    links.modify(accessAddress) { link in
      defer { link.news = News() }
      return link.news
    } ?? News()
  }

  /// Notes a data PDU on `accessAddress` sent at `time` with `sn` and `digest`
  /// (`AirLinks.digest`): which side sent it — the sniffer's word (`fromCentral`), else the
  /// connection event's rhythm (Core Vol 6 Part B §4.5.1: the central opens each event, then
  /// the sides alternate; a packet more than `eventGap` after the last on its link opens an
  /// event, eight times that on LE Coded, whose packets last eight times longer) — and whether
  /// it repeats that side's last packet (same SN, same payload).
  mutating func observe(
    _ accessAddress: UInt32, frame: Int, time: Int64, fromCentral: Bool?, eventCounter: UInt16?, coded: Bool, sn: UInt8, nesn: UInt8, digest: UInt32,
    empty: Bool, attSender: Direction?
  ) -> Seen {
    let gap = coded ? Self.eventGap * 8 : Self.eventGap
    func note(_ link: inout Link, isNew: Bool) -> Seen {
      var silence: (microseconds: Int64, lastFrame: Int)?
      link.saidHeardElsewhere = false
      if link.silent {
        // Heard again on its access address: it went on while the sniffer heard nothing.
        link.silent = false
        silence = (time.saturatingSubtract(link.lastHeard ?? time), link.lastFrame)
      }
      let direction: Direction
      let source: AirFact.DirectionSource
      let opensEvent = link.lastTime.map { time.saturatingSubtract($0) > gap || time < $0 } ?? true
      if let fromCentral {
        direction = fromCentral ? .hostToController : .controllerToHost
        source = .sniffer
      } else if let attSender, link.central == nil {
        // No CONNECT_IND and no sniffer's word (an export of ATT packets alone): the ATT PDU
        // says which side sent it, the client taken as the central.
        direction = attSender
        source = .att
      } else {
        direction = opensEvent || link.lastDirection == .controllerToHost ? .hostToController : .controllerToHost
        source = .timing
      }
      // Any packet after a gap opens an event: the central's may have gone unheard.
      if let update = Self.countEvent(&link, time: time, opens: opensEvent, sniffersCount: eventCounter) { link.news.update = update }
      if let phyUpdate = Self.applyPHY(&link) { link.news.phyUpdate = phyUpdate }
      if let silence { link.news.gap = silence }
      link.lastTime = time
      link.lastHeard = time
      link.lastFrame = frame
      link.lastDirection = direction
      if empty { link.carriedEmptyPDU = true }
      link.sequenceBeforeLast = link.sequence
      // An export of chosen packets (no CONNECT_IND, no sniffer's direction, no empty PDU yet)
      // had packets taken out: its SN and NESN bits tell nothing of retransmissions or misses.
      let filtered = link.central == nil && fromCentral == nil && !link.carriedEmptyPDU
      link.lastSequenceInput = (sn, nesn, digest, filtered)
      let (repeated, missedBefore, missedFromPeer) = link.sequence.note(from: direction, sn: sn, nesn: nesn, digest: digest, filtered: filtered)
      return Seen(
        handle: link.handle, isNew: isNew, direction: direction, directionSource: source, repeated: repeated,
        missedBefore: missedBefore, missedFromPeer: missedFromPeer, encrypted: link.encrypted, ended: link.ended,
        event: link.interval == nil && eventCounter == nil ? nil : link.event, hasNews: !link.news.isEmpty)
    }
    // A packet on the access address of a link that ended by silence, or long after its
    // LL_TERMINATE_IND, belongs to a new connection whose CONNECT_IND went unseen (tools that
    // reuse access addresses do this).
    // The link noted where it lies: the closure writes its answer out rather than return it
    // (a returned optional of an optional costs an outlined copy on every packet).
    var noted = Seen(
      handle: 0, isNew: false, direction: .hostToController, directionSource: .sniffer, repeated: false, missedBefore: false,
      missedFromPeer: false, encrypted: false, ended: false, event: nil, hasNews: false)
    var found = false
    _ = links.modify(accessAddress) { link in
      let reused = link.ended && (link.endedBySilence || time.saturatingSubtract(link.lastHeard ?? time) > (link.supervisionTimeout ?? 0))
      if !reused {
        noted = note(&link, isNew: false)
        found = true
      }
    }
    if found {
      let seen = noted
      if seen.hasNews, links[accessAddress]?.news.gap != nil {
        silentLinks = max(0, silentLinks - 1)
        nextTimeoutCheck = min(nextTimeoutCheck, time.saturatingAdd(Self.timeoutCheckInterval))
      }
      return seen
    }
    var fresh = Link(handle: takeHandle())
    let seen = note(&fresh, isNew: true)
    links[accessAddress] = fresh
    return seen
  }

  /// The packet last noted on the link was sent by `direction`'s side after all (its MIC says
  /// so, against the sniffer's flag): its SN and NESN are noted again from the state before it,
  /// as that side's. Returns what they now say.
  mutating func renote(_ accessAddress: UInt32, from direction: Direction) -> (repeated: Bool, missedBefore: Bool, missedFromPeer: Bool) {
    links.modify(accessAddress) { link in
      link.sequence = link.sequenceBeforeLast
      link.lastDirection = direction
      let input = link.lastSequenceInput
      return link.sequence.note(from: direction, sn: input.sn, nesn: input.nesn, digest: input.digest, filtered: input.filtered)
    } ?? (false, false, false)
  }

  /// Moves the link's event count on when a packet opens an event (by the intervals since the
  /// last anchor, at least one), and applies a pending update whose instant is reached (the
  /// count wraps at 16 bits; an instant is at most 32 767 events ahead, §5.5.1).
  static func countEvent(_ link: inout Link, time: Int64, opens: Bool, sniffersCount: UInt16?) -> (parameters: ConnectionParameters, frame: Int)? {
    // Counted from the times when the interval is known: a sniffer's own count was found wrong
    // (bsniffhub's nRF file gives the peripheral's packets 0, the central's one ahead, where
    // the channels heard follow the times). The sniffer's count serves links first seen
    // mid-connection.
    if opens, let interval = link.interval, interval > 0 {
      if let anchor = link.anchor {
        let elapsed = time.saturatingSubtract(anchor)
        // From the CONNECT_IND's transmit window, the first event may be event 0 itself.
        let intervals = max(link.anchorIsWindow ? 0 : 1, elapsed.saturatingAdd(interval / 2) / interval)
        link.event &+= UInt16(truncatingIfNeeded: intervals)
      } else {
        link.event = 0
      }
      link.anchor = time
      link.anchorIsWindow = false
    } else if link.interval == nil, let sniffersCount {
      link.event = sniffersCount
    }
    guard let pending = link.pendingUpdate, Int16(bitPattern: link.event &- pending.instant) >= 0 else { return nil }
    link.pendingUpdate = nil
    link.interval = Int64(pending.parameters.interval) * 1_250
    link.supervisionTimeout = Int64(pending.parameters.supervisionTimeout) * 10_000
    return (pending.parameters, pending.frame)
  }

  /// A PHY update whose instant the link's event count reached, now in force.
  static func applyPHY(_ link: inout Link) -> (toPeripheral: UInt8, toCentral: UInt8)? {
    guard let pending = link.pendingPHY, Int16(bitPattern: link.event &- pending.instant) >= 0 else { return nil }
    link.pendingPHY = nil
    link.phy = (pending.toPeripheral, pending.toCentral)
    return link.phy
  }

  /// LL_PHY_UPDATE_IND (PHY bits each way, 0 unchanged): in force at `instant`, or at once when
  /// the link's events are not counted; returns the PHYs when at once.
  mutating func schedulePHY(_ accessAddress: UInt32, toPeripheral: UInt8, toCentral: UInt8, instant: UInt16, sniffersCount: Bool) -> (UInt8, UInt8)? {
    links.modify(accessAddress) { link in
      // Bit 0 LE 1M, 1 LE 2M, 2 LE Coded → HCI's 1, 2, 3; none: as it was.
      func number(_ bits: UInt8, _ current: UInt8) -> UInt8 { bits & 0x01 != 0 ? 1 : bits & 0x02 != 0 ? 2 : bits & 0x04 != 0 ? 3 : current }
      let next = (number(toPeripheral, link.phy.toPeripheral), number(toCentral, link.phy.toCentral))
      guard link.interval != nil || sniffersCount else {
        link.phy = next
        return next
      }
      link.pendingPHY = (next.0, next.1, instant)
      return nil
    } ?? nil
  }

  /// LL_LENGTH_REQ or _RSP sent by `direction`'s side; once both sides said theirs, what the
  /// central may send and receive (HCI's LE Data Length Change, on the central's host): each
  /// way the smaller of the sender's transmit and the receiver's receive limits.
  mutating func noteLength(
    _ accessAddress: UInt32, from direction: Direction, receive: UInt16, receiveTime: UInt16, transmit: UInt16, transmitTime: UInt16
  ) -> (transmit: UInt16, transmitTime: UInt16, receive: UInt16, receiveTime: UInt16)? {
    links.modify(accessAddress) { link in
      link.lengths[direction] = (receive, receiveTime, transmit, transmitTime)
      guard let central = link.lengths.hostToController, let peripheral = link.lengths.controllerToHost else { return nil }
      return (
        min(central.transmit, peripheral.receive), min(central.transmitTime, peripheral.receiveTime),
        min(peripheral.transmit, central.receive), min(peripheral.transmitTime, central.receiveTime)
      )
    } ?? nil
  }

  /// LL_CONNECTION_UPDATE_IND: the parameters take effect at `instant`; false when the link's
  /// events are not counted (its CONNECT_IND was not seen, and the sniffer gives no count), so
  /// the caller applies them at once.
  mutating func scheduleUpdate(_ accessAddress: UInt32, _ parameters: ConnectionParameters, instant: UInt16, frame: Int, sniffersCount: Bool) -> Bool {
    links.modify(accessAddress) { link in
      guard link.interval != nil || sniffersCount else {
        link.supervisionTimeout = Int64(parameters.supervisionTimeout) * 10_000
        return false
      }
      link.pendingUpdate = (parameters, instant, frame)
      return true
    } ?? false
  }

  /// FNV-1a over a data PDU's LLID and payload: a retransmission carries the same.
  static func digest(llid: UInt8, _ payload: ByteView) -> UInt32 {
    var digest: UInt32 = 2_166_136_261
    digest = (digest ^ UInt32(llid)) &* 16_777_619
    for byte in payload { digest = (digest ^ UInt32(byte)) &* 16_777_619 }
    return digest
  }

  /// A new link on `accessAddress` (a CONNECT_IND opens one, also over an old one with that
  /// address); returns its handle.
  mutating func open(
    _ accessAddress: UInt32, central: (BDAddr, AddressType), peripheral: (BDAddr, AddressType), interval: UInt16, supervisionTimeout: UInt16,
    window: (size: UInt8, offset: UInt16), time: Int64, frame: Int
  ) -> UInt16 {
    let handle = takeHandle()
    var link = Link(handle: handle, central: central.0, peripheral: peripheral.0)
    link.centralIsRandom = central.1 == .randomDevice
    link.peripheralIsRandom = peripheral.1 == .randomDevice
    link.supervisionTimeout = Int64(supervisionTimeout) * 10_000
    link.establishmentTimeout = Int64(interval) * 1_250 * 6
    link.interval = Int64(interval) * 1_250
    // The first event's anchor: in the transmit window, 1.25 ms plus the offset after the
    // CONNECT_IND (Core Vol 6 Part B §4.5.3); its middle, since the packet's time is not exact.
    link.anchor = time.saturatingAdd(1_250 + Int64(window.offset) * 1_250 + Int64(window.size) * 625)
    link.anchorIsWindow = true
    link.lastHeard = time
    link.lastFrame = frame
    links[accessAddress] = link
    index(accessAddress, devices: central.0, peripheral.0)
    nextTimeoutCheck = min(nextTimeoutCheck, time.saturatingAdd(Self.timeoutCheckInterval))
    return handle
  }

  /// The next handle, from 1 to 0x0EFF (the range of HCI connection handles) and round again.
  mutating func takeHandle() -> UInt16 {
    let handle = nextHandle
    nextHandle = nextHandle == 0x0EFF ? 1 : nextHandle + 1
    return handle
  }

}
