import BLECore
import BLEDecoder

/// Air packets: the sniffer's header (`AirPacketHeader`), access address, on LE Coded the
/// coding indicator, the PDU, its CRC.
extension CaptureRedactor {
  mutating func air(_ id: Int, _ frame: inout DissectedFrame) {
    guard let fact = frame.air else { return }
    let bytes = frame.record.bytes
    let start = AirPacketHeader.size + 4 + (fact.header.phy == .leCoded ? 1 : 0)
    guard bytes.count >= start + 2 else { return }
    let length = Int(bytes[start + 1])
    let index = id - firstID
    if fact.isAdvertising {
      let end = min(bytes.count, start + 2 + length)
      queue[index].airPDU = start..<end
      queue[index].originalPDU = Array(bytes[start..<end])
      let pdu = Array(bytes[start..<end])
      let padded = pdu + [UInt8](repeating: 0, count: max(0, 2 + length - pdu.count))
      apply(id, at: start, scope.walk(padded, limit: pdu.count, .advertisingPDU))
      return
    }
    // A data PDU: LLID in the header's low bits; CP adds the CTEInfo byte.
    let headerLength = bytes[start] & 0x20 != 0 ? 3 : 2
    let llid = bytes[start] & 0x03
    let payloadStart = start + headerLength
    guard length > 0, payloadStart <= bytes.count else { return }
    let payloadEnd = min(bytes.count, payloadStart + length)
    queue[index].airPDU = start..<payloadEnd
    queue[index].originalPDU = Array(bytes[start..<payloadEnd])
    let payload = Array(bytes[payloadStart..<payloadEnd])
    if Self.isEncrypted(frame) {
      scope.tally.encryptedLeft += 1
      if fact.keySource != nil { scope.tally.encryptedOpened += 1 }
      return
    }
    let side = AssemblyKey(link: 1 << 40 | UInt64(fact.accessAddress), fromHost: (frame.direction ?? .hostToController) == .hostToController)
    // Bounded as the decoder bounds its links: a capture of many links forgets the oldest at once.
    if lastAirData[side] == nil && lastAirData.count >= 2 * Self.maximumAssemblies { lastAirData.removeAll() }
    queue[index].airSide = side
    queue[index].airPayload = payloadStart..<payloadEnd
    if fact.header.crc == .invalid || fact.isRetransmission {
      // Not decoded (a bad CRC) or not decoded again (a retransmission): a copy of the side's
      // last packet, or a damaged copy of a recent one, takes its redaction; anything else is
      // redacted alone.
      if !repeatLast(id, side: side, payload: payload, at: payloadStart)
        && !(fact.header.crc == .invalid && copyDamaged(id, link: fact.accessAddress, payload: payload, at: payloadStart))
      {
        redactPieceAlone(id, llid: llid, at: payloadStart, payload)
      }
      return
    }
    switch llid {
    case 3:
      apply(id, at: payloadStart, scope.walk(payload, limit: payload.count, .linkControl))
      lastAirData[side] = LastAirData(record: id, payload: payload, pduOffset: nil)
    case 1, 2:
      let offset = add(id, key: side, start: llid == 2, at: payloadStart, payload, frame: &frame)
      lastAirData[side] = LastAirData(record: id, payload: payload, pduOffset: offset)
    default:
      break
    }
  }

  /// Whether the record holds the payload encrypted: the link was encrypted and the packet was
  /// not stored decrypted (the decoder opened it with a key, or could not).
  static func isEncrypted(_ frame: DissectedFrame) -> Bool {
    if frame.air?.keySource != nil { return true }
    if case .dataPDU(_, _, true, _) = frame.header { return true }
    return false
  }

  /// A packet repeating the side's last one gets what that one got: its redacted bytes when
  /// written, or the same piece of the PDU still being reassembled. False when it repeats
  /// nothing known.
  mutating func repeatLast(_ id: Int, side: AssemblyKey, payload: [UInt8], at: Int) -> Bool {
    guard let last = lastAirData[side], last.payload == payload else { return false }
    if let written = last.written {
      apply(id, at: at, [RedactionEdit(offset: 0, bytes: written)])
      return true
    }
    guard last.record >= firstID else { return false }
    let original = queue[last.record - firstID]
    if let key = original.waitingOn, let pduOffset = last.pduOffset, assemblies[key] != nil {
      assemblies[key]!.pieces.append(Piece(record: id, at: at, pduOffset: pduOffset, count: payload.count))
      queue[id - firstID].waitingOn = key
      return true
    }
    if let range = original.airPayload {
      apply(id, at: at, [RedactionEdit(offset: 0, bytes: Array(original.record.bytes[range]))])
      return true
    }
    return false
  }

  /// A packet with a bad CRC that is mostly the same bytes as a recent packet of its link (a
  /// damaged copy of it) gets that packet's replacements where it had them.
  mutating func copyDamaged(_ id: Int, link: UInt32, payload: [UInt8], at: Int) -> Bool {
    guard let recent = recentAirData[link] else { return false }
    for (original, written) in recent.reversed() where original.count == payload.count && original != written {
      let same = zip(original, payload).reduce(0) { $0 + ($1.0 == $1.1 ? 1 : 0) }
      guard same * 2 >= payload.count else { continue }
      var copy = payload
      for index in copy.indices where original[index] != written[index] { copy[index] = written[index] }
      apply(id, at: at, [RedactionEdit(offset: 0, bytes: copy)])
      return true
    }
    return false
  }

  /// A data payload the decoder did not take up: an LL control PDU, or an L2CAP PDU that
  /// starts and ends in it, is redacted alone; a piece of one cannot be parsed.
  mutating func redactPieceAlone(_ id: Int, llid: UInt8, at: Int, _ payload: [UInt8]) {
    switch llid {
    case 3:
      apply(id, at: at, scope.walk(payload, limit: payload.count, .linkControl))
    case 2 where payload.count >= 4 && 4 + (Int(payload[0]) | Int(payload[1]) << 8) == payload.count:
      apply(id, at: at, scope.walk(payload, limit: payload.count, .l2cap(attChannel: nil, meanings: .none)))
    default:
      drop(id)
    }
  }

  /// As an air packet is handed out: its CRC follows its PDU's changes; a retransmission of
  /// it will copy its payload.
  mutating func finishAir(_ held: inout Held, id: Int) {
    guard let range = held.airPDU else { return }
    let current = held.record.bytes[range]
    if !current.elementsEqual(held.originalPDU), held.record.bytes.count >= range.upperBound + 3 {
      let crcAt = range.upperBound
      let bytes = held.record.bytes
      let stored = UInt32(bytes[crcAt]) | UInt32(bytes[crcAt + 1]) << 8 | UInt32(bytes[crcAt + 2]) << 16
      let updated = LinkLayerCRC.updated(stored, old: held.originalPDU[...], new: current)
      held.record.bytes[crcAt] = UInt8(updated & 0xFF)
      held.record.bytes[crcAt + 1] = UInt8((updated >> 8) & 0xFF)
      held.record.bytes[crcAt + 2] = UInt8((updated >> 16) & 0xFF)
    }
    guard let side = held.airSide, let payload = held.airPayload else { return }
    let written = Array(held.record.bytes[payload])
    if lastAirData[side]?.record == id { lastAirData[side]?.written = written }
    // The link's last few packets as captured and as written (damaged copies follow them).
    let start = payload.lowerBound - range.lowerBound
    let original = Array(held.originalPDU[start..<(start + payload.count)])
    let link = UInt32(truncatingIfNeeded: side.link)
    if recentAirData[link] == nil && recentAirData.count >= Self.maximumAssemblies { recentAirData.removeAll() }
    recentAirData[link, default: []].append((original, written))
    if recentAirData[link]!.count > Self.recentPackets { recentAirData[link]!.removeFirst() }
  }
}
