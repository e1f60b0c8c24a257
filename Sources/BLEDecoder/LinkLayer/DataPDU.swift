import BLECore

/// Data physical channel PDUs (Core Vol 6 Part B §2.4): a header of LLID(2 bits) NESN(1) SN(1)
/// MD(1) CP(1) RFU(2) and length(8), a CTEInfo byte when CP is set, then the payload: LLID 1 a
/// continuation of an L2CAP PDU (or, empty, nothing to send), 2 the start of one, 3 an LL
/// control PDU. Once a link's encryption has started, every payload that is not empty is
/// encrypted and ends with a 4-byte MIC.
///
/// L2CAP pieces go up through the same reassembly as HCI ACL data, the central's as
/// host-to-controller (the capture is read as the central's). A packet repeating the SN and
/// payload of the last one its side sent is a retransmission: shown, not decoded twice.
///
/// The link layer keeps its own state (`AirLinkState`: links, keys) and finds a link's
/// connection in the table by its handle; the L2CAP pieces go up with the state of L2CAP and
/// of the protocols above it, which it only passes on.
extension AirLinkState {
  mutating func dissectDataPDU(
    _ pdu: inout ByteReader, accessAddress: UInt32, group: Int,
    connections: inout ConnectionTable, l2cap: inout L2CAPState, gatt: inout GATTState, registry: DecoderRegistry, into frame: inout DissectedFrame
  ) throws(DecodeError) {
    let bits = try pdu.readUInt8()
    let length = Int(try pdu.readUInt8())
    let llid = bits & 0x03
    let sn = (bits >> 3) & 1
    frame.fields.code("llid", "LLID", llid, width: 1, name: DataPDU.llidName(llid, empty: length == 0))
    frame.fields.uint("nesn", "NESN", (bits >> 2) & 1)
    frame.fields.uint("sn", "SN", sn)
    frame.fields.flag("md", "More data", bits & 0x10 != 0)
    frame.fields.addVerbose("length", "Length", .unsigned(UInt64(length), .decimal))
    if bits & 0x20 != 0 { frame.fields.hex("cte_info", "CTEInfo", try pdu.readUInt8(), width: 2) }
    frame.header = .dataPDU(llid: llid, length: length, encrypted: false, reassembly: .none)
    guard length <= pdu.remaining else {
      throw DecodeError(.lengthMismatch(field: "PDU length", declared: length, actual: pdu.remaining), layer: .linkLayer, offset: pdu.offset - 1)
    }
    let payload = try pdu.readBytes(count: length)
    // One lookup of the link tells who sent it, whether it repeats its side's last packet, and
    // whether the link is encrypted.
    let fromCentral = frame.air?.header.fromCentral
    let seen = links.observe(
      accessAddress, frame: frame.number, time: frame.record.timestamp, fromCentral: fromCentral,
      eventCounter: frame.air?.header.eventCounter,
      coded: frame.air?.header.phy == .leCoded, sn: sn, nesn: (bits >> 2) & 1, digest: AirLinks.digest(llid: llid, payload), empty: length == 0 && llid == 1,
      attSender: fromCentral == nil && llid == 2 ? DataPDU.attSender(payload) : nil)
    let (handle, direction, repeated) = (seen.handle, seen.direction, seen.repeated)
    frame.direction = direction
    frame.air?.note(event: seen.event, directionSource: seen.directionSource)
    if seen.ended {
      // The acknowledgement of LL_TERMINATE_IND, or a late packet: the link is gone.
      if length > 0 { frame.fields.bytes("payload", "Payload", payload) }
      if length > 0 { frame.diagnostics.append(Diagnostic(.linkLayerAfterLinkEnd, "after the link ended: not decoded")) }
      return
    }
    // As HCI data finds its connection (`label`): the last link's slot is cached.
    let slot = connections.slot(ConnectionTable.Key(adapter: 0, handle: handle)) ?? connections.slot(adapter: 0, handle: handle, isLE: true).slot
    frame.connection = connections.entries[slot].label
    if seen.isNew {
      frame.diagnostics.append(Diagnostic(.linkLayerAccessAddressWithoutConnect, "access address \(Hex.prefixed(UInt64(accessAddress), width: 8)) first seen here without its CONNECT_IND (capture started mid-connection?)"))
    }
    if seen.directionSource != .sniffer {
      frame.fields.addVerbose(
        "inferred_direction", seen.directionSource == .att ? "Direction (from the ATT PDU)" : "Direction (inferred)",
        .staticText(direction == .hostToController ? "central → peripheral" : "peripheral → central"))
    }

    if repeated {
      frame.fields.flag("retransmission", "Retransmission", true)
      frame.air?.isRetransmission = true
    }
    let news = seen.hasNews ? links.takeNews(accessAddress) : AirLinks.News()
    if let gap = news.gap {
      frame.air?.silenceBefore = UInt32(clamping: max(1, gap.microseconds / 1000))
      frame.diagnostics.append(Diagnostic(
        .linkLayerSnifferGap,
        "the sniffer heard nothing on this link for \(DataPDU.words(microseconds: gap.microseconds)) (since #\(gap.lastFrame)), longer than it may be silent: it lost the link's hops, and the link went on"))
    }
    if let (parameters, updateFrame) = news.update {
      // What HCI's LE Connection Update Complete says, at the instant.
      frame.linkEvents.append(.parametersUpdated(status: 0, handle: handle, parameters: parameters))
      frame.diagnostics.append(Diagnostic(.linkLayerParametersTakeEffect, "the connection parameters of #\(updateFrame) take effect (event \(seen.event ?? 0))"))
    }
    if let (toPeripheral, toCentral) = news.phyUpdate {
      // The central's transmit is toward the peripheral (HCI's LE PHY Update Complete).
      frame.linkEvents.append(.phyUpdated(status: 0, handle: handle, transmit: toPeripheral, receive: toCentral))
    }
    // Encryption is a fact of the LL procedure, whether or not a key opens it: the link's
    // first packet after LL_START_ENC_REQ that is not empty was sent encrypted (Core Vol 6
    // Part B §5.1.3.1), so from it the link is encrypted — what HCI's Encryption Change says.
    if length > 0 && seen.encrypted && !repeated && links.announceEncryption(accessAddress) {
      frame.linkEvents.append(.encryptionChanged(status: 0, handle: handle, enabled: true))
    }
    var encrypted = length > 0 && seen.encrypted && frame.air?.header.decryptedBySniffer != true
    if encrypted && (links.storesPlaintext(accessAddress) || DataPDU.isStoredPlaintext(payload, llid: llid, link: accessAddress, links)) {
      // Written already decrypted (SweynTooth's and crackle's files): decoded as it is.
      if !links.storesPlaintext(accessAddress) {
        links.noteStoresPlaintext(accessAddress)
        frame.diagnostics.append(Diagnostic(
          .linkLayerStoredDecrypted,
          "this capture holds the link's encrypted packets already decrypted, MIC removed (this packet is too short for a MIC, or its L2CAP length fits it without one): decoded as plain text"))
      }
      frame.air?.storedDecrypted = true
      encrypted = false
    }
    // A packet opened with the link's key says by its counter what was missed (and by its MIC
    // who sent it); others by their SN and NESN.
    if !encrypted { Self.sequenceNotes(seen.missedBefore, seen.missedFromPeer, slot: slot, direction: direction, &connections, into: &frame) }
    if repeated && (llid != 3 || encrypted) {
      // Shown, not decoded again; an encrypted one keeps its counter, so it is not opened again.
      if encrypted { frame.fields.flag("encrypted", "Encrypted", true) }
      frame.fields.bytes("payload", encrypted ? "Encrypted payload" : "Payload", payload)
      frame.header = .dataPDU(llid: llid, length: length, encrypted: encrypted, reassembly: .retransmission)
      return
    }
    if encrypted {
      try dissectEncryptedPayload(
        payload, header: bits, llid: llid, accessAddress: accessAddress, handle: handle, slot: slot, direction: direction, group: group,
        seen: seen, connections: &connections, l2cap: &l2cap, gatt: &gatt, registry: registry, into: &frame)
      return
    }
    try dissectDataPayload(
      payload, llid: llid, length: length, repeated: repeated, accessAddress: accessAddress, handle: handle, slot: slot, direction: direction,
      group: group, connections: &connections, l2cap: &l2cap, gatt: &gatt, registry: registry, into: &frame)
  }

  /// An encrypted payload (then its MIC): opened with the link's key and decoded as plain
  /// text, or shown encrypted with why it was not opened.
  mutating func dissectEncryptedPayload(
    _ payload: ByteView, header bits: UInt8, llid: UInt8, accessAddress: UInt32, handle: UInt16, slot: Int, direction: Direction, group: Int,
    seen: AirLinks.Seen, connections: inout ConnectionTable, l2cap: inout L2CAPState, gatt: inout GATTState, registry: DecoderRegistry, into frame: inout DissectedFrame
  ) throws(DecodeError) {
    let length = payload.count
    frame.fields.flag("encrypted", "Encrypted", true)
    var opening = links.open(accessAddress, header: bits, sealed: payload, direction: direction, keys: keys.given, learned: keys.learned, trials: &keys.trialsLeft)
    if case .sealed(let reason) = opening, reason == .noKeys || reason == .noKeyFits,
      learnShortTermKeyByMIC(accessAddress, header: bits, sealed: payload, direction: direction, into: &frame)
    {
      opening = links.open(accessAddress, header: bits, sealed: payload, direction: direction, keys: keys.given, learned: keys.learned, trials: &keys.trialsLeft)
    }
    switch opening {
    case let .opened(plain, counter, missed, keySource, flipped):
      var direction = direction
      if flipped {
        // The MIC verifies only as sent by the other side: the sniffer's flag was wrong.
        direction = direction.opposite
        frame.direction = direction
        frame.air?.directionSource = .mic
        let renoted = links.renote(accessAddress, from: direction)
        let side = direction == .hostToController ? "central → peripheral" : "peripheral → central"
        frame.fields.add("corrected_direction", "Direction (from the MIC)", .text(side))
        frame.diagnostics.append(Diagnostic(
          .linkLayerDirectionFlagWrong, "the sniffer's direction flag is wrong: the MIC verifies only as sent \(side), which is used"))
        Self.sequenceNotes(false, renoted.missedFromPeer, slot: slot, direction: direction, &connections, into: &frame)
      } else {
        Self.sequenceNotes(false, seen.missedFromPeer, slot: slot, direction: direction, &connections, into: &frame)
      }
      frame.fields.add("key", "Decrypted with", .text(keySource))
      frame.air?.keySource = keySource
      if keys.decryptedBySource[keySource] == nil || !keys.openedKeys.contains(links.key(accessAddress)) {
        if keys.openedKeys.count < LinkKeyRing.maximumKeys { keys.openedKeys.insert(links.key(accessAddress)) }
      }
      keys.decryptedBySource[keySource, default: 0] += 1
      frame.fields.addVerbose("packet_counter", "Packet counter", .unsigned(counter, .decimal))
      var sealed = ByteReader(payload, layer: .linkLayer)
      _ = try sealed.readBytes(count: plain.count)
      frame.fields.addVerbose("mic", "MIC", .unsigned(UInt64(try sealed.readUInt32LE()), .hex(8)))
      if missed > 0 { Self.missedPackets(missed, encrypted: true, slot: slot, direction: direction, &connections, into: &frame) }
      try ByteReader.reading(plain, layer: .linkLayer) { (open: inout ByteReader) throws(DecodeError) in
        try dissectDataPayload(
          open.readRemaining(), llid: llid, length: plain.count, repeated: false, accessAddress: accessAddress, handle: handle, slot: slot,
          direction: direction, group: group, connections: &connections, l2cap: &l2cap, gatt: &gatt, registry: registry, into: &frame)
      }
    case .sealed(let reason):
      Self.sequenceNotes(seen.missedBefore, seen.missedFromPeer, slot: slot, direction: direction, &connections, into: &frame)
      frame.header = .dataPDU(llid: llid, length: length, encrypted: true, reassembly: .none)
      var sealed = ByteReader(payload, layer: .linkLayer)
      frame.fields.bytes("payload", "Encrypted payload", try sealed.readBytes(count: max(length - 4, 0)))
      if length >= 4 { frame.fields.hex("mic", "MIC", try sealed.readUInt32LE(), width: 8) }
      switch reason {
      case .micFailed:
        frame.diagnostics.append(Diagnostic(.linkLayerMICFailed, "the MIC does not verify with the link's key: damaged, or more than \(LinkEncryption.missedPacketWindow) packets missed"))
      case .noTrialsLeft:
        frame.diagnostics.append(Diagnostic(.linkLayerKeyTriesExhausted, "not decrypted: this capture used up the \(AirKeys.maximumKeyTrials) key tries it may spend"))
      case .noKeyFits where !keys.given.isEmpty || !keys.learned.isEmpty:
        // Said once, on the packet the keys were tried on.
        if !links.saidNoKeyFits(accessAddress) {
          frame.diagnostics.append(Diagnostic(.linkLayerNoKey, "no key given opens this link's packets"))
        }
      default:
        break
      }
    }
  }

  /// What a packet's SN and NESN say was missed (`AirLinks.Acknowledgements.note`): of its side, or of
  /// the other side.
  static func sequenceNotes(
    _ missedBefore: Bool, _ missedFromPeer: Bool, slot: Int, direction: Direction, _ connections: inout ConnectionTable, into frame: inout DissectedFrame
  ) {
    if missedFromPeer {
      let side = direction == .hostToController ? "central" : "peripheral"
      missedPackets(nil, encrypted: false, slot: slot, direction: direction.opposite, &connections, how: "the \(side)'s NESN acknowledges one not heard", into: &frame)
    }
    if missedBefore { missedPackets(nil, encrypted: false, slot: slot, direction: direction, &connections, into: &frame) }
  }

  /// Packets of one side the sniffer did not record (`count`, or at least one when nil): said,
  /// and an L2CAP PDU that side had in progress is dropped, since a piece of it may be lost.
  static func missedPackets(
    _ count: UInt64?, encrypted: Bool, slot: Int, direction: Direction, _ connections: inout ConnectionTable, how explained: String? = nil,
    into frame: inout DissectedFrame
  ) {
    let before = frame.air?.missedBefore ?? 0
    frame.air?.missedBefore = before.saturatingAdd(UInt16(clamping: count ?? 1))
    let side = direction == .hostToController ? "central" : "peripheral"
    let what = count.map { "\($0) packet\($0 == 1 ? "" : "s")" } ?? "a packet or more"
    let how = explained ?? (encrypted ? "the packet counter jumped" : "its SN repeats after an acknowledgement, or with other data")
    frame.diagnostics.append(Diagnostic(.linkLayerPacketsMissed, "\(what) from the \(side) missed by the sniffer before this one (\(how))"))
    if let lost = connections.entries[slot].link.l2cap.reassemblers[direction].reset("and is dropped: a piece of it may be among them") {
      frame.diagnostics.append(Diagnostic(.l2capPDUDropped, lost))
    }
  }

  /// A data PDU's payload in plain text: an LL control PDU, or a piece of an L2CAP PDU.
  mutating func dissectDataPayload(
    _ payload: ByteView, llid: UInt8, length: Int, repeated: Bool, accessAddress: UInt32, handle: UInt16, slot: Int, direction: Direction, group: Int,
    connections: inout ConnectionTable, l2cap: inout L2CAPState, gatt: inout GATTState, registry: DecoderRegistry, into frame: inout DissectedFrame
  ) throws(DecodeError) {
    switch llid {
    case 3:
      var control = ByteReader(payload, layer: .linkLayer)
      frame.header = .linkControl(.opcode(try control.peekUInt8()))
      let fact = try LinkControl.decode(&control, into: &frame.fields)
      frame.header = .linkControl(fact)
      // A repeated control PDU is shown again; what it changes happened once.
      if !repeated { noteLinkControl(fact, accessAddress: accessAddress, handle: handle, direction: direction, &connections, into: &frame) }
    case 1 where length > 0, 2 where length > 0:
      try l2cap.dissectLinkData(
        payload, isStart: llid == 2, slot: slot, direction: direction, origin: .air(llid: llid, length: length, group: group),
        connections: &connections, gatt: &gatt, air: &self, registry: registry, into: &frame)
    default:
      if length > 0 { frame.fields.bytes("payload", "Payload", payload) }
    }
  }

  /// What an LL control PDU changes: encryption starts or pauses, the link ends.
  mutating func noteLinkControl(
    _ fact: LinkControlFact, accessAddress: UInt32, handle: UInt16, direction: Direction, _ connections: inout ConnectionTable,
    into frame: inout DissectedFrame
  ) {
    switch fact {
    case .opcode(0x05):  // LL_START_ENC_REQ: what follows on this link is encrypted
      links.setEncrypted(accessAddress, true)
    case .opcode(0x0B):  // LL_PAUSE_ENC_RSP: no longer
      links.setEncrypted(accessAddress, false)
      frame.linkEvents.append(.encryptionChanged(status: 0, handle: handle, enabled: false))
    case let .version(version, company, subversion) where direction == .controllerToHost:
      // The peripheral's: what HCI's Read Remote Version Information Complete gives the central.
      frame.linkEvents.append(.remoteVersion(status: 0, handle: handle, version: version, manufacturer: company, subversion: subversion))
    case let .phyUpdate(toPeripheral, toCentral, instant):
      if let (transmit, receive) = links.schedulePHY(
        accessAddress, toPeripheral: toPeripheral, toCentral: toCentral, instant: instant, sniffersCount: frame.air?.header.eventCounter != nil)
      {
        frame.linkEvents.append(.phyUpdated(status: 0, handle: handle, transmit: transmit, receive: receive))
      }
    case let .length(_, receive, receiveTime, transmit, transmitTime):
      if let effective = links.noteLength(
        accessAddress, from: direction, receive: receive, receiveTime: receiveTime, transmit: transmit, transmitTime: transmitTime)
      {
        frame.linkEvents.append(.dataLengthChanged(
          handle: handle, maxTransmitOctets: effective.transmit, maxTransmitTime: effective.transmitTime, maxReceiveOctets: effective.receive,
          maxReceiveTime: effective.receiveTime))
      }
    case .encryptionRequest(let random, let ediv, _, _):
      links.noteEncryption(accessAddress, fact)
      // Rand and EDIV 0 with a legacy pairing just seen: the STK, which the pairing gives away.
      if random == 0 && ediv == 0 { learnShortTermKey(accessAddress, into: &frame) }
    case .encryptionResponse:
      links.noteEncryption(accessAddress, fact)
    case .terminate(let reason):
      // The central is the capture's local side: its LL_TERMINATE_IND is the host's Disconnect.
      if direction == .hostToController { frame.linkEvents.append(.disconnectRequested(handle: handle, reason: reason)) }
      closeAirLink(accessAddress, handle: handle, reason: reason, &connections, into: &frame)
    case let .connectionUpdate(interval, latency, timeout, instant):
      let parameters = ConnectionParameters(interval: interval, latency: latency, supervisionTimeout: timeout)
      let scheduled = links.scheduleUpdate(
        accessAddress, parameters, instant: instant, frame: frame.number, sniffersCount: frame.air?.header.eventCounter != nil)
      if !scheduled { frame.linkEvents.append(.parametersUpdated(status: 0, handle: handle, parameters: parameters)) }
    default:
      break
    }
  }

  /// Works out the STK of a sniffed legacy pairing: TK 0 (Just Works), the passkeys given
  /// (`--passkey`) and the TKs given (`--tk`) always; every passkey (`--find-passkey`: a million
  /// tries) for the first `maximumPasskeySearches` links. A search is opt-in: a capture alone
  /// must not cost seconds. Without the central's confirm, the TKs wait for the MIC of the
  /// link's first encrypted packet (`learnShortTermKeyByMIC`).
  mutating func learnShortTermKey(_ accessAddress: UInt32, into frame: inout DissectedFrame) {
    guard links.pairingWasSeen(accessAddress) else { return }
    let (found, searched) = findTemporaryKey(
      known: { links, known in links.shortTermKey(accessAddress, candidates: known) },
      search: { links in
        links.retryPairing(accessAddress)
        return links.shortTermKey(accessAddress, candidates: (0...999_999).lazy.map(TemporaryKey.passkey))
      })
    guard let (key, tk) = found else {
      frame.diagnostics.append(Diagnostic(
        .linkLayerTKOutOfBand,
        searched
          ? "no passkey 000000–999999 (nor a TK given) fits this legacy pairing: its TK came out of band (--tk HEX if you have it)"
          : "a legacy pairing whose TK is not 0 (nor a passkey or TK given): --passkey N if you know it, --find-passkey to try them all, --tk HEX for out-of-band data"))
      return
    }
    keys.learn(key, tk: tk, into: &frame)
  }

  /// The TK of a sniffed legacy pairing, the one way both checks look for it: the TKs known
  /// (TK 0, `--passkey`, `--tk`), then, with `--find-passkey` and a search left this capture,
  /// every passkey. Counts the pairing tried and a search that found nothing (said at the end).
  mutating func findTemporaryKey(
    known: (inout AirLinks, [TemporaryKey]) -> (key: LinkKeyRing.Key, tk: TemporaryKey)?,
    search: (inout AirLinks) -> (key: LinkKeyRing.Key, tk: TemporaryKey)?
  ) -> (found: (key: LinkKeyRing.Key, tk: TemporaryKey)?, searched: Bool) {
    let candidates = keys.given.knownTemporaryKeys
    var found = known(&links, candidates)
    var searched = false
    if found == nil, keys.given.searchesPasskeys, keys.passkeySearches < AirKeys.maximumPasskeySearches {
      keys.passkeySearches += 1
      searched = true
      found = search(&links)
    }
    keys.legacyPairingsTried += 1
    if found == nil && searched { keys.failedSearches += 1 }
    return (found, searched)
  }

  /// The first encrypted packet of a link whose legacy pairing was sniffed without the
  /// central's confirm: the TKs known (and every passkey with `--find-passkey`) tried against
  /// its MIC. True when one fits (the key is learned).
  mutating func learnShortTermKeyByMIC(_ accessAddress: UInt32, header: UInt8, sealed: ByteView, direction: Direction, into frame: inout DissectedFrame) -> Bool {
    guard links.awaitsMICCheck(accessAddress) else { return false }
    let number = frame.number
    let (found, searched) = findTemporaryKey(
      known: { links, known in
        links.shortTermKeyByMIC(accessAddress, header: header, sealed: sealed, direction: direction, frame: number, candidates: known)
      },
      search: { links in
        links.shortTermKeyByMIC(
          accessAddress, header: header, sealed: sealed, direction: direction, frame: number, candidates: (0...999_999).lazy.map(TemporaryKey.passkey))
      })
    guard let (key, tk) = found else {
      frame.diagnostics.append(Diagnostic(
        .linkLayerTKOutOfBand,
        searched
          ? "the pairing's confirms were not sniffed, and no passkey 000000–999999 (nor a TK given) makes this packet's MIC verify: its TK came out of band (--tk HEX)"
          : "the pairing's confirms were not sniffed, and no TK known makes this packet's MIC verify: --passkey N if you know it, --find-passkey to try them all, --tk HEX for out-of-band data"))
      return false
    }
    keys.learn(key, tk: tk, into: &frame)
    return true
  }

  /// The link on `accessAddress` ended (LL_TERMINATE_IND).
  mutating func closeAirLink(_ accessAddress: UInt32, handle: UInt16, reason: UInt8, _ connections: inout ConnectionTable, into frame: inout DissectedFrame) {
    links.end(accessAddress)
    frame.connection = Self.closeAirConnection(handle, reason: reason, &connections, into: &frame)
  }

  /// Links silent past the time they may be (`AirLinks.lossTime`, Core Vol 6 Part B §4.5.2)
  /// are said on this frame, not closed: a sniffer that lost a link's hops hears the same
  /// silence as one whose link was dropped. Later frames tell which (`closeLostAirLinks`, a
  /// packet on the link); the capture's end tells neither ("last heard at").
  mutating func closeSilentAirLinks(into frame: inout DissectedFrame) {
    for silent in links.takeSilentLinks(at: frame.record.timestamp) {
      frame.diagnostics.append(Diagnostic(
        .linkLayerLinkSilent,
        "conn \(silent.handle): nothing heard since #\(silent.lastFrame) for longer than it may be silent (\(silent.limit / 1000) ms): the devices dropped it, or the sniffer lost it"))
    }
  }

  /// One of an open link's devices is heard on the advertising channels (advertising to be
  /// connected, or in a CONNECT_IND). A link silent past the time it may be was lost
  /// (Connection Timeout, or Failed to be Established before any packet): closed on this frame.
  /// One quiet for six intervals or more may have ended unseen: said, as a link event.
  mutating func heardElsewhere(_ device: BDAddr, _ connections: inout ConnectionTable, into frame: inout DissectedFrame) {
    let (lost, quiet) = links.heardElsewhere(device, at: frame.record.timestamp)
    for link in lost {
      frame.diagnostics.append(Diagnostic(
        .linkLayerLinkLost,
        "conn \(link.handle): silent since #\(link.lastFrame) for longer than it may be (\(link.limit / 1000) ms), and \(device) is heard here: the link was lost"))
      _ = Self.closeAirConnection(link.handle, reason: link.established ? 0x08 : 0x3E, &connections, into: &frame)
    }
    for handle in quiet {
      frame.linkEvents.append(.heardElsewhere(handle: handle, device: device))
    }
  }

  /// Closes the connection of an air link: its disconnect as a link event, an L2CAP PDU left
  /// incomplete said; returns its label.
  static func closeAirConnection(_ handle: UInt16, reason: UInt8, _ connections: inout ConnectionTable, into frame: inout DissectedFrame) -> ConnectionLabel? {
    frame.linkEvents.append(.disconnected(status: 0, handle: handle, reason: reason))
    let key = ConnectionTable.Key(adapter: 0, handle: handle)
    for direction in [Direction.hostToController, .controllerToHost] {
      if let slot = connections.slot(key), let lost = connections.entries[slot].link.l2cap.reassemblers[direction].reset() {
        frame.diagnostics.append(Diagnostic(.l2capPDUDropped, lost))
      }
    }
    return connections.close(adapter: 0, handle: handle).label
  }

  /// A CONNECT_IND opens a link on its access address: a connection whose local side is the
  /// central, as an HCI capture on the central's host would show it.
  mutating func openAirLink(
    _ accessAddress: UInt32, central: (BDAddr, AddressType), peripheral: (BDAddr, AddressType), parameters: ConnectionParameters,
    window: (size: UInt8, offset: UInt16), _ connections: inout ConnectionTable, into frame: inout DissectedFrame
  ) {
    let (peripheral, peripheralType) = peripheral
    if let old = links.loseIfSilent(accessAddress) {
      // A new link on a silent one's access address (tools that reuse them): that one was lost.
      frame.diagnostics.append(Diagnostic(
        .linkLayerLinkReplaced, "conn \(old.handle): silent since #\(old.lastFrame), and a new link takes its access address here: it was lost"))
      _ = Self.closeAirConnection(old.handle, reason: old.established ? 0x08 : 0x3E, &connections, into: &frame)
    }
    if keys.devices.count < AirKeys.maximumDevices {
      keys.devices.insert(central.0)
      keys.devices.insert(peripheral)
    }
    let handle = links.open(
      accessAddress, central: central, peripheral: (peripheral, peripheralType), interval: parameters.interval,
      supervisionTimeout: parameters.supervisionTimeout, window: window,
      time: frame.record.timestamp, frame: frame.number)
    let connection = connections.opened(Connection(
      adapter: 0, handle: handle, generation: 0, peer: peripheral, peerType: peripheralType, role: .central,
      interval: parameters.interval, latency: parameters.latency, supervisionTimeout: parameters.supervisionTimeout, openedInFrame: frame.number, isLE: true,
      localAddress: central.0))
    frame.connection = connection.label
    frame.linkEvents.append(.connectRequested(peer: peripheral, peerType: peripheralType, isLE: true))
    frame.linkEvents.append(.connected(status: 0, handle: handle, peer: peripheral, peerType: peripheralType, role: .central, parameters: parameters))
  }
}

extension DataPDU {
  /// Whether a payload that should be encrypted was stored decrypted: too short for a MIC
  /// (every encrypted payload has one, 4 octets, and at least one octet before it), or, while no
  /// key has opened the link, an L2CAP start whose basic header gives exactly its length on a
  /// fixed channel (ATT, signaling, SMP), which cipher text matches about once in 2³⁰.
  static func isStoredPlaintext(_ payload: ByteView, llid: UInt8, link accessAddress: UInt32, _ links: AirLinks) -> Bool {
    if payload.count < 5 { return true }
    guard llid == 2, !links.wasOpened(accessAddress), let (channel, _) = wholeL2CAPPDU(payload) else { return false }
    return channel == 4 || channel == 5 || channel == 6
  }

  /// The side that sent an ATT PDU that starts (and fits) this LL payload, by its kind:
  /// requests, commands and confirmations come from the client, taken as the central;
  /// responses, notifications and indications from the server. Nil when it is no whole ATT PDU.
  static func attSender(_ payload: ByteView) -> Direction? {
    guard let (channel, body) = wholeL2CAPPDU(payload), channel == 4, let opcode = body.first else { return nil }
    switch ATTMethodKind(opcode: opcode) {
    case .request, .command, .confirmation: return .hostToController
    case .response, .notification, .indication: return .controllerToHost
    default: return nil
    }
  }

  /// A payload that is one whole basic L2CAP PDU (its header's length is the rest): its
  /// channel and body; nil otherwise.
  static func wholeL2CAPPDU(_ payload: ByteView) -> (channel: UInt16, body: ByteView)? {
    var reader = ByteReader(payload, layer: .linkLayer)
    guard let length = try? reader.readUInt16LE(), let channel = try? reader.readUInt16LE(), Int(length) == reader.remaining else { return nil }
    return (channel, reader.readRemaining())
  }

  /// A span as a reader says it: "850 ms", "3.2 s".
  static func words(microseconds: Int64) -> String {
    microseconds < 1_000_000 ? "\(microseconds / 1000) ms" : "\(microseconds / 1_000_000).\(microseconds % 1_000_000 / 100_000) s"
  }
}

enum DataPDU {
  static func llidName(_ llid: UInt8, empty: Bool) -> Name? {
    switch llid {
    case 1: return empty ? "empty PDU" : "continuation fragment"
    case 2: return "start of an L2CAP PDU"
    case 3: return "LL control PDU"
    default: return nil
    }
  }
}
