import BLECore

/// L2CAP's state of one link (its connection's `link.l2cap`): ACL reassembly each way, and the
/// dynamic channels signaling opened.
struct L2CAPLinkState: Sendable {
  var reassemblers = DirectionalPair(ACLReassembler())
  var channels = L2CAPChannels()

  /// Bytes held by incomplete PDUs: ACL reassembly and channel SDUs (capacity, not count).
  var reassemblyBytes: Int {
    var bytes = reassemblers.hostToController.buffer.capacity + reassemblers.controllerToHost.buffer.capacity
    for channel in channels.channels.storage.values { bytes += channel.sdu.buffer.capacity }
    return bytes
  }

  /// Forgets every incomplete PDU of the link; returns how many there were.
  mutating func dropIncompletePDUs() -> Int {
    var dropped = 0
    for direction in [Direction.hostToController, .controllerToHost] where reassemblers[direction].reset() != nil { dropped += 1 }
    for key in Array(channels.channels.keys) where channels.channels[key]?.sdu.isInProgress == true {
      channels.channels.modify(key) { $0.sdu = SDUReassembler() }
      dropped += 1
    }
    return dropped
  }
}

/// The L2CAP layer: pieces of PDUs from either link (HCI ACL data, or data PDUs sniffed over
/// the air) reassembled per connection and direction, each whole PDU's basic header, then its
/// channel's protocol. Its state across links is the fixed channel table and the reassembly
/// budget; each link's is in its connection (`L2CAPLinkState`). It hands a channel's protocol
/// the connection and that protocol's state (`gatt` for ATT, `air` for SMP on sniffed links).
struct L2CAPState: Sendable {
  /// `L2CAPFixedChannels.byCID`, held here: reading the static table costs a lazy
  /// initialization check on every PDU.
  let fixedChannels = L2CAPFixedChannels.byCID
  /// Bytes put into reassembly buffers (ACL and SDU) since their total was last measured.
  var reassemblyGrowth = 0
  /// What incomplete PDUs may hold in all, and how often (in bytes added) that is checked.
  static let reassemblyBudget = 16 << 20
  static let reassemblyCheckInterval = 4 << 20

  /// Counts bytes an incomplete PDU now holds; every few MiB, measures all links, and when they
  /// hold more than the budget, drops the incomplete PDUs of every link but `slot`.
  mutating func reassemblyGrew(by bytes: Int, slot: Int, _ connections: inout ConnectionTable, _ frame: inout DissectedFrame) {
    reassemblyGrowth += bytes
    guard reassemblyGrowth >= Self.reassemblyCheckInterval else { return }
    reassemblyGrowth = 0
    var held = 0
    for entry in connections.entries { held += entry.link.l2cap.reassemblyBytes + entry.link.classic.heldBytes }
    guard held > Self.reassemblyBudget else { return }
    var dropped = 0
    for other in connections.entries.indices where other != slot {
      dropped += connections.entries[other].link.l2cap.dropIncompletePDUs()
      dropped += connections.entries[other].link.classic.dropPartialResponses()
    }
    frame.diagnostics.append(Diagnostic(.l2capReassemblyMemoryDropped, "incomplete PDUs held \(held) bytes: \(dropped) of them on other links dropped"))
  }

  /// Where a piece of an L2CAP PDU came from: an HCI ACL packet, or a data PDU sniffed over the
  /// air (LLID 2 starts a PDU, 1 continues one). The frame's open group is that link's.
  enum LinkDataOrigin {
    case acl(HCIDataPacket.ACLHeader)
    /// `group`: where the frame's `ll` group starts (it is hidden in plain text once L2CAP decodes).
    case air(llid: UInt8, length: Int, group: Int)
  }

  /// The layer's entry point. A piece of an L2CAP PDU from either link, on the connection in
  /// `slot`: reassembled per connection and direction, then the PDU decoded when complete.
  /// Inlined: HCI ACL data, nearly every frame of a capture, takes it.
  @inline(__always)
  mutating func dissectLinkData(
    _ payload: ByteView, isStart: Bool, slot: Int, direction: Direction, origin: LinkDataOrigin,
    connections: inout ConnectionTable, gatt: inout GATTState, air: inout AirLinkState, registry: DecoderRegistry, into frame: inout DissectedFrame
  ) throws(DecodeError) {
    // Fast path: a whole PDU in one packet with nothing pending is decoded in place.
    let pending = connections.entries[slot].link.l2cap.reassemblers[direction].isInProgress
    if isStart && !pending && payload.count >= 4 {
      let length = Int(payload[payload.startIndex]) | Int(payload[payload.startIndex + 1]) << 8
      if length + 4 == payload.count {
        Self.hideLinkGroup(origin, &frame)
        var pdu = ByteReader(payload, layer: .l2cap)
        try dissectL2CAP(
          &pdu, slot: slot, direction: direction, firstFrame: nil, fragments: 1, connections: &connections, gatt: &gatt, air: &air,
          registry: registry, into: &frame)
        return
      }
    }
    let outcome = connections.entries[slot].link.l2cap.reassemblers[direction].append(payload, isStart: isStart, frame: frame.number, diagnostics: &frame.diagnostics)
    switch outcome {
    case .dropped:
      frame.fields.bytes("data", "Data", payload)
      Self.describe(origin, .dropped, &frame)
    case let .incomplete(have, expected, firstFrame):
      reassemblyGrew(by: payload.count, slot: slot, &connections, &frame)
      frame.fields.bytes("data", "Data", payload)
      frame.fields.end()  // hci or ll
      frame.deepestLayer = .l2cap
      frame.fields.beginObject("l2cap", "L2CAP", inline: true)
      frame.fields.flag("fragment", "Fragment", true)
      frame.fields.uint("first_frame", "PDU starts at frame", firstFrame)
      frame.fields.uint("have", "Bytes so far", have)
      if let expected { frame.fields.uint("expected", "PDU length", expected) }
      frame.fields.end()
      Self.describe(origin, .fragment(have: have, expected: expected), &frame)
    case let .complete(bytes, firstFrame, fragments):
      Self.hideLinkGroup(origin, &frame)
      try ByteReader.reading(bytes, layer: .l2cap) { (pdu: inout ByteReader) throws(DecodeError) in
        try dissectL2CAP(
          &pdu, slot: slot, direction: direction, firstFrame: fragments > 1 ? firstFrame : nil, fragments: fragments,
          connections: &connections, gatt: &gatt, air: &air, registry: registry, into: &frame)
      }
    }
  }

  /// What the header line says of link data no upper layer describes.
  static func describe(_ origin: LinkDataOrigin, _ reassembly: ACLReassemblyFact, _ frame: inout DissectedFrame) {
    switch origin {
    case .acl(let header): HCIDataPacket.describe(header, reassembly, &frame)
    case let .air(llid, length, _): frame.header = .dataPDU(llid: llid, length: length, encrypted: false, reassembly: reassembly)
    }
  }

  /// Closes the link's group of a frame whose PDU decodes: the upper layers say more, so text
  /// shows it only with `-v`.
  static func hideLinkGroup(_ origin: LinkDataOrigin, _ frame: inout DissectedFrame) {
    frame.fields.end()
    switch origin {
    case .acl: frame.fields.markVerbose(at: 0)
    // A decrypted packet keeps its link-layer group in sight: it names the key.
    case .air(_, _, let group): if frame.air?.keySource == nil { frame.fields.markVerbose(at: group) }
    }
  }

  /// One complete L2CAP PDU: basic header, then the channel's protocol.
  mutating func dissectL2CAP(
    _ pdu: inout ByteReader, slot: Int, direction: Direction, firstFrame: Int?, fragments: Int,
    connections: inout ConnectionTable, gatt: inout GATTState, air: inout AirLinkState, registry: DecoderRegistry, into frame: inout DissectedFrame
  ) throws(DecodeError) {
    frame.deepestLayer = .l2cap
    let length = Int(try pdu.readUInt16LE())
    let cid = try pdu.readUInt16LE()
    frame.fields.beginObject("l2cap", "L2CAP", inline: true)
    frame.fields.addVerbose("length", "Length", .unsigned(UInt64(length), .decimal))
    let fixed = cid < L2CAPFixedChannels.dynamicStart ? fixedChannels[Int(cid)] : nil
    frame.fields.addVerbose("cid", "Channel", .code(UInt64(cid), width: 4, name: fixed?.name ?? Self.unfixedChannelName(cid)))
    if let firstFrame {
      frame.fields.add("reassembled_from", "Reassembled from", .text("#\(firstFrame)–#\(frame.number) (\(fragments) fragments)"))
      frame.fields.addVerbose("first_frame", "First fragment", .unsigned(UInt64(firstFrame), .decimal))
      frame.fields.addVerbose("fragments", "Fragments", .unsigned(UInt64(fragments), .decimal))
    }
    var payload = try pdu.readReader(count: min(length, pdu.remaining), layer: .l2cap)
    // A fixed channel's protocol (L2CAPFixedChannels.registered), else a dynamic channel's.
    switch fixed?.channel {
    case let channel?:
      frame.fields.end()
      try channel.decode(
        &payload, direction: direction, connection: &connections.entries[slot], gatt: &gatt, air: &air, registry: registry, into: &frame)
    case nil:
      let channelKey = L2CAPChannels.Key(direction: direction, cid: cid)
      // A copy without the SDU buffer: the buffer is then grown in place, not copied per K-frame.
      guard let channel = connections.entries[slot].link.l2cap.channels.channels[channelKey].map(DynamicChannel.Settings.init) else {
        frame.fields.bytes("payload", "Payload", payload.readRemaining())
        frame.fields.end()
        frame.header = .channelData(cid: cid, length: length)
        return
      }
      frame.fields.uint("psm", "PSM", channel.psm)
      if channel.basic {
        // BR/EDR basic mode: the payload is the upper layer's PDU as it is.
        if let bearer = channel.bearerKey {
          frame.fields.end()
          if connections.entries[slot].link.att.bearers[bearer] == nil {
            // The MTU was set by L2CAP configuration, which is not tracked: do not check it.
            connections.entries[slot].link.att.bearers[bearer] = ATTBearer(mtu: 65535)
          }
          try ATTLayer.dissect(
            &payload, bearerKey: bearer, channel: cid, direction: direction, connection: connections.entries[slot].label,
            link: &connections.entries[slot].link.att, gatt: &gatt, registry: registry, into: &frame)
          return
        }
        // SDP and RFCOMM, unless a decoder given for the PSM takes it.
        if channel.psm == SDP.psm || channel.psm == RFCOMM.psm, registry.psm(channel.psm) == nil {
          frame.fields.end()
          if channel.psm == SDP.psm {
            let held = try SDP.dissect(&payload, direction: direction, link: &connections.entries[slot].link.classic.sdp, into: &frame)
            if held > 0 { reassemblyGrew(by: held, slot: slot, &connections, &frame) }
          } else {
            try RFCOMM.dissect(&payload, direction: direction, link: &connections.entries[slot].link.classic, into: &frame)
          }
          return
        }
        Self.decodePayload(&payload, psm: channel.psm, registry: registry, &frame)
        frame.fields.bytes("payload", "Payload", payload.readRemaining())
        frame.fields.end()
        frame.header = .psmData(psm: channel.psm, length: length)
        return
      }
      let bytes = payload.readRemaining()
      if bytes.count > Int(channel.mps) {
        frame.diagnostics.append(Diagnostic(.l2capKFrameExceedsMPS, "K-frame of \(bytes.count) bytes exceeds the MPS \(channel.mps)"))
      }
      let number = frame.number
      let outcome = connections.entries[slot].link.l2cap.channels.channels.modify(channelKey) {
        $0.sdu.append(bytes, frame: number, mtu: Int(channel.mtu), diagnostics: &frame.diagnostics)
      } ?? nil
      frame.header = .unplacedKFrame
      switch outcome {
      case nil:
        frame.fields.bytes("payload", "Payload", bytes)
        frame.fields.end()
      case let .incomplete(have, expected)?:
        reassemblyGrew(by: bytes.count, slot: slot, &connections, &frame)
        frame.fields.bytes("payload", "Payload", bytes)
        frame.fields.uint("sdu_have", "SDU bytes so far", have)
        frame.fields.uint("sdu_length", "SDU length", expected)
        frame.fields.end()
        frame.header = .kFrame(have: have, expected: expected)
      case let .complete(sdu, first, frames)?:
        frame.fields.uint("sdu_length", "SDU length", sdu.count)
        if frames > 1 {
          frame.fields.uint("sdu_first_frame", "SDU from frame", first)
          frame.fields.uint("sdu_frames", "K-frames", frames)
        }
        if let bearer = channel.bearerKey {
          frame.fields.end()
          if connections.entries[slot].link.att.bearers[bearer] == nil {
            connections.entries[slot].link.att.bearers[bearer] = ATTBearer(mtu: Int(channel.mtu))
          }
          try ByteReader.reading(sdu, layer: .att) { (reader: inout ByteReader) throws(DecodeError) in
            try ATTLayer.dissect(
              &reader, bearerKey: bearer, channel: cid, direction: direction, connection: connections.entries[slot].label,
              link: &connections.entries[slot].link.att, gatt: &gatt, registry: registry, into: &frame)
          }
          return
        }
        if registry.psm(channel.psm) != nil {
          ByteReader.reading(sdu, layer: .l2cap) { (reader: inout ByteReader) in Self.decodePayload(&reader, psm: channel.psm, registry: registry, &frame) }
        }
        frame.fields.bytes("sdu", "SDU", sdu[...])
        frame.fields.end()
        frame.header = .sdu(psm: channel.psm, bytes: frame.valueBytes.append(contentsOf: sdu))
      }
    }
    if !payload.isAtEnd {
      frame.diagnostics.append(Diagnostic(.l2capChannelTrailingBytes, "\(payload.remaining) bytes after the channel's PDU"))
    }
  }

  /// Runs the decoder registered for a dynamic channel's PSM over its payload (or SDU): its
  /// fields in their group; a payload that does not fit is flagged, its bytes kept.
  static func decodePayload(_ payload: inout ByteReader, psm: UInt16, registry: DecoderRegistry, _ frame: inout DissectedFrame) {
    guard let decoder = registry.psm(psm) else { return }
    var copy = payload
    if let error = decoder.run(&copy, into: &frame.fields) {
      if frame.malformed == nil { frame.malformed = error }
      return
    }
    payload = copy
  }

  /// The name of a channel no fixed channel entry names.
  static func unfixedChannelName(_ cid: UInt16) -> Name? {
    cid >= L2CAPFixedChannels.dynamicStart ? "dynamic" : nil
  }
}
