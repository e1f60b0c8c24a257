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
extension Dissector {
  mutating func dissectDataPDU(_ pdu: inout ByteReader, accessAddress: UInt32, group: Int, into frame: inout DissectedFrame) throws(DecodeError) {
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
    let seen = airLinks.observe(
      accessAddress, time: frame.record.timestamp, fromCentral: frame.air?.header.fromCentral,
      coded: frame.air?.header.phy == .leCoded, sn: sn, digest: AirLinks.digest(llid: llid, payload))
    let (handle, direction, repeated) = (seen.handle, seen.direction, seen.repeated)
    // As HCI data finds its connection (`label`): the last link's slot is cached.
    let slot = connections.slot(ConnectionTable.Key(adapter: 0, handle: handle)) ?? connections.slot(adapter: 0, handle: handle, isLE: true).slot
    frame.connection = connections.entries[slot].label
    if seen.isNew {
      frame.diagnostics.append(Diagnostic(.note, .linkLayer, "access address \(Hex.prefixed(UInt64(accessAddress), width: 8)) first seen here without its CONNECT_IND (capture started mid-connection?)"))
    }
    if seen.inferred {
      frame.fields.addVerbose(
        "inferred_direction", "Direction (inferred)", .staticText(direction == .hostToController ? "central → peripheral" : "peripheral → central"))
    }
    if repeated { frame.fields.flag("retransmission", "Retransmission", true) }
    if repeated && llid != 3 {
      frame.fields.bytes("payload", "Payload", payload)
      frame.header = .dataPDU(llid: llid, length: length, encrypted: false, reassembly: .retransmission)
      return
    }
    if length > 0 && seen.encrypted && frame.air?.header.decryptedBySniffer != true {
      frame.header = .dataPDU(llid: llid, length: length, encrypted: true, reassembly: .none)
      frame.fields.flag("encrypted", "Encrypted", true)
      var sealed = ByteReader(payload, layer: .linkLayer)
      frame.fields.bytes("payload", "Encrypted payload", try sealed.readBytes(count: max(length - 4, 0)))
      if length >= 4 { frame.fields.hex("mic", "MIC", try sealed.readUInt32LE(), width: 8) }
      return
    }
    switch llid {
    case 3:
      var control = ByteReader(payload, layer: .linkLayer)
      frame.header = .linkControl(.opcode(try control.peekUInt8()))
      let fact = try LinkControl.decode(&control, into: &frame.fields)
      frame.header = .linkControl(fact)
      // A repeated control PDU is shown again; what it changes happened once.
      if !repeated { noteLinkControl(fact, accessAddress: accessAddress, handle: handle, into: &frame) }
    case 1 where length > 0, 2 where length > 0:
      try dissectLinkData(payload, isStart: llid == 2, slot: slot, direction: direction, origin: .air(llid: llid, length: length, group: group), into: &frame)
    default:
      if length > 0 { frame.fields.bytes("payload", "Payload", payload) }
    }
  }

  /// What an LL control PDU changes: encryption starts or pauses, the link ends.
  mutating func noteLinkControl(_ fact: LinkControlFact, accessAddress: UInt32, handle: UInt16, into frame: inout DissectedFrame) {
    switch fact {
    case .opcode(0x05):  // LL_START_ENC_REQ: what follows on this link is encrypted
      airLinks.setEncrypted(accessAddress, true)
    case .opcode(0x0B):  // LL_PAUSE_ENC_RSP: no longer
      airLinks.setEncrypted(accessAddress, false)
    case .terminate(let reason):
      frame.linkEvents.append(.disconnected(status: 0, handle: handle, reason: reason))
    case let .connectionUpdate(interval, latency, timeout, _):
      frame.linkEvents.append(.parametersUpdated(status: 0, handle: handle, parameters: ConnectionParameters(interval: interval, latency: latency, supervisionTimeout: timeout)))
    default:
      break
    }
  }

  /// A CONNECT_IND opens a link on its access address: a connection whose local side is the
  /// central, as an HCI capture on the central's host would show it.
  mutating func openAirLink(
    _ accessAddress: UInt32, peripheral: BDAddr, peripheralType: AddressType, interval: UInt16, into frame: inout DissectedFrame
  ) {
    let handle = airLinks.open(accessAddress)
    let connection = connections.opened(Connection(
      adapter: 0, handle: handle, generation: 0, peer: peripheral, peerType: peripheralType, role: .central,
      interval: interval, latency: nil, supervisionTimeout: nil, openedInFrame: frame.number, isLE: true))
    frame.connection = connection.label
    frame.linkEvents.append(.connectRequested(peer: peripheral, peerType: peripheralType, isLE: true))
    frame.linkEvents.append(.connected(status: 0, handle: handle, peer: peripheral, peerType: peripheralType, role: .central, parameters: nil))
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
