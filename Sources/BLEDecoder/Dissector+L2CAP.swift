import BLECore

/// Per-connection state of the layers above HCI, hung off `Connection`.
public struct LinkState: Sendable {
  var reassemblers = DirectionalPair(ACLReassembler())
  var channels = L2CAPChannels()
  /// The ATT bearer of the fixed channel (CID 4): outside the dictionary, since nearly every
  /// PDU uses it.
  var fixedBearer = ATTBearer()
  /// Other ATT bearers: a CID pair for each EATT channel, and BR/EDR ATT channels. LE has 64
  /// dynamic CIDs per side; older bearers are forgotten past that.
  var bearers = BoundedDictionary<UInt32, ATTBearer>(capacity: 64)

  /// The ATT bearer with `key` (4: the fixed channel), modified in place.
  subscript(bearer key: UInt32) -> ATTBearer {
    get { key == 4 ? fixedBearer : bearers[key, default: ATTBearer()] }
    _modify {
      if key == 4 { yield &fixedBearer } else { yield &bearers[key, default: ATTBearer()] }
    }
  }
  /// The direction of the last PDU start, for continuations in formats that do not say.
  var lastStartDirection = Direction.controllerToHost
  /// Whether the capturing host is the GATT client on the fixed bearer, once a request in a
  /// known direction showed it (direction inference uses it before the connection role).
  var localIsClient: Bool?
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

  /// Where this link's GATT databases are in `Dissector.gattDatabases` (found once per link).
  var localDatabase: GATTDatabaseReference?
  var peerDatabase: GATTDatabaseReference?
  public init() {}
}

extension Dissector {
  /// ACL data: header, reassembly, then the L2CAP channel's protocol.
  /// The ACL handle of Qualcomm's vendor debug records (Android's snoop logs carry them).
  static let vendorDebugHandle: UInt16 = 0x0EDC

  mutating func dissectACL(_ reader: inout ByteReader, into frame: inout DissectedFrame) throws(DecodeError) {
    let header = try HCIDataPacket.decodeACL(&reader, into: &frame)
    if header.handle == Self.vendorDebugHandle, connections.slot(ConnectionTable.Key(adapter: frame.record.adapter, handle: header.handle)) == nil {
      // Qualcomm controllers' debug records to Android's stack ride on this handle, never opened
      // by a connection event: not a connection, not L2CAP (tshark takes some for ATT or SMP).
      frame.header = .vendorDebugRecord(handle: header.handle, length: header.length)
      frame.fields.bytes("data", "Vendor debug data", reader.readRemaining())
      return
    }
    label(&frame, handle: header.handle, createIfMissing: true)
    let payload = reader.readRemaining()
    let key = ConnectionTable.Key(adapter: frame.record.adapter, handle: header.handle)
    guard let slot = connections.slot(key) else {
      HCIDataPacket.describe(header, .none, &frame)
      return
    }
    let direction: Direction
    if let known = frame.record.direction {
      direction = known
    } else {
      direction = inferDirection(packetBoundary: header.packetBoundary, payload: payload, slot: slot)
      frame.direction = direction
      frame.fields.addVerbose("inferred_direction", "Direction (inferred)", .staticText(direction == .hostToController ? "tx" : "rx"))
    }
    if header.packetBoundary != 1 { connections.entries[slot].link.lastStartDirection = direction }
    if payload.count < header.length {
      // Android's filtered snoop cuts payloads: nothing above HCI can be trusted.
      frame.fields.bytes("data", "Data", payload)
      HCIDataPacket.describe(header, .none, &frame)
      return
    }
    try dissectLinkData(payload, isStart: header.packetBoundary != 1, slot: slot, direction: direction, origin: .acl(header), into: &frame)
  }

  /// Where a piece of an L2CAP PDU came from: an HCI ACL packet, or a data PDU sniffed over the
  /// air (LLID 2 starts a PDU, 1 continues one). The frame's open group is that link's.
  enum LinkDataOrigin {
    case acl(HCIDataPacket.ACLHeader)
    /// `group`: where the frame's `ll` group starts (it is hidden in plain text once L2CAP decodes).
    case air(llid: UInt8, length: Int, group: Int)
  }

  /// A piece of an L2CAP PDU from either link: reassembled per connection and direction, then
  /// the PDU decoded when complete.
  /// Inlined: HCI ACL data, nearly every frame of a capture, takes it.
  @inline(__always)
  mutating func dissectLinkData(
    _ payload: ByteView, isStart: Bool, slot: Int, direction: Direction, origin: LinkDataOrigin, into frame: inout DissectedFrame
  ) throws(DecodeError) {
    // Fast path: a whole PDU in one packet with nothing pending is decoded in place.
    let pending = connections.entries[slot].link.reassemblers[direction].isInProgress
    if isStart && !pending && payload.count >= 4 {
      let length = Int(payload[payload.startIndex]) | Int(payload[payload.startIndex + 1]) << 8
      if length + 4 == payload.count {
        Self.hideLinkGroup(origin, &frame)
        var pdu = ByteReader(payload, layer: .l2cap)
        try dissectL2CAP(&pdu, slot: slot, direction: direction, firstFrame: nil, fragments: 1, into: &frame)
        return
      }
    }
    let outcome = connections.entries[slot].link.reassemblers[direction].append(payload, isStart: isStart, frame: frame.number, diagnostics: &frame.diagnostics)
    switch outcome {
    case .dropped:
      frame.fields.bytes("data", "Data", payload)
      Self.describe(origin, .dropped, &frame)
    case let .incomplete(have, expected, firstFrame):
      reassemblyGrew(by: payload.count, slot: slot, &frame)
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
        try dissectL2CAP(&pdu, slot: slot, direction: direction, firstFrame: fragments > 1 ? firstFrame : nil, fragments: fragments, into: &frame)
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

  /// The direction of an ACL packet in a format that does not say (pcap link type 187).
  ///
  /// LE hosts should start PDUs with packet boundary 00 and controllers with 10, and a
  /// continuation follows its start; but some hosts send 10 too. So a 10 that starts an ATT PDU
  /// is placed by what ATT allows: a response or confirmation travels against the request or
  /// indication pending on the bearer; requests and commands come from the client, notifications
  /// and indications from the server, and the client is the central unless the capture showed
  /// otherwise.
  mutating func inferDirection(packetBoundary: UInt16, payload: ByteView, slot: Int) -> Direction {
    if packetBoundary == 1 { return connections.entries[slot].link.lastStartDirection }
    guard payload.count >= 5, payload[payload.startIndex + 2] == 0x04, payload[payload.startIndex + 3] == 0x00 else {
      return packetBoundary == 0 ? .hostToController : .controllerToHost
    }
    let kind = ATTMethodKind(opcode: payload[payload.startIndex + 4])
    if packetBoundary == 0 {
      // Only a host sends 00: a request it sends shows which side the client is.
      if kind == .request { connections.entries[slot].link.localIsClient = true }
      if kind == .response { connections.entries[slot].link.localIsClient = false }
      return .hostToController
    }
    let bearer = connections.entries[slot].link.fixedBearer
    func against(_ pending: DirectionalPair<PendingRequest?>) -> Direction? {
      switch (pending.hostToController != nil, pending.controllerToHost != nil) {
      case (true, false): return .controllerToHost
      case (false, true): return .hostToController
      default: return nil
      }
    }
    let localIsClient = connections.entries[slot].link.localIsClient ?? (connections.entries[slot].role != .peripheral)
    switch kind {
    case .response:
      if let direction = against(bearer.pending) { return direction }
    case .confirmation:
      if let direction = against(bearer.pendingIndication) { return direction }
    case .unknown:
      return .controllerToHost
    default:
      break
    }
    return kind.isClientToServer == localIsClient ? .hostToController : .controllerToHost
  }

  /// One complete L2CAP PDU: basic header, then the channel's protocol.
  mutating func dissectL2CAP(
    _ pdu: inout ByteReader, slot: Int, direction: Direction, firstFrame: Int?, fragments: Int,
    into frame: inout DissectedFrame
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
      try channel.decode(&payload, on: L2CAPLink(slot: slot, direction: direction), &self, into: &frame)
    case nil:
      let channelKey = L2CAPChannels.Key(direction: direction, cid: cid)
      // A copy without the SDU buffer: the buffer is then grown in place, not copied per K-frame.
      guard let channel = connections.entries[slot].link.channels.channels[channelKey].map(DynamicChannel.Settings.init) else {
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
          if connections.entries[slot].link.bearers[bearer] == nil {
            // The MTU was set by L2CAP configuration, which is not tracked: do not check it.
            connections.entries[slot].link.bearers[bearer] = ATTBearer(mtu: 65535)
          }
          try dissectATT(&payload, slot: slot, bearerKey: bearer, channel: cid, direction: direction, into: &frame)
          return
        }
        decodePayload(&payload, psm: channel.psm, &frame)
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
      let outcome = connections.entries[slot].link.channels.channels.modify(channelKey) {
        $0.sdu.append(bytes, frame: number, mtu: Int(channel.mtu), diagnostics: &frame.diagnostics)
      } ?? nil
      frame.header = .unplacedKFrame
      switch outcome {
      case nil:
        frame.fields.bytes("payload", "Payload", bytes)
        frame.fields.end()
      case let .incomplete(have, expected)?:
        reassemblyGrew(by: bytes.count, slot: slot, &frame)
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
          if connections.entries[slot].link.bearers[bearer] == nil {
            connections.entries[slot].link.bearers[bearer] = ATTBearer(mtu: Int(channel.mtu))
          }
          try ByteReader.reading(sdu, layer: .att) { (reader: inout ByteReader) throws(DecodeError) in
            try dissectATT(&reader, slot: slot, bearerKey: bearer, channel: cid, direction: direction, into: &frame)
          }
          return
        }
        if registry.psm(channel.psm) != nil {
          ByteReader.reading(sdu, layer: .l2cap) { (reader: inout ByteReader) in decodePayload(&reader, psm: channel.psm, &frame) }
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

  mutating func dissectATT(_ reader: inout ByteReader, slot: Int, bearerKey: UInt32, channel: UInt16, direction: Direction, into frame: inout DissectedFrame) throws(DecodeError) {
    // Whose attribute table the PDU is about: ours, or the peer's (by address when known).
    let opcode = try reader.peekUInt8()
    let local = ATTLayer.serverIsLocal(opcode: opcode, direction: direction)
    if bearerKey == 4, frame.record.direction != nil, ATTMethodKind(opcode: try reader.peekUInt8()) == .request {
      connections.entries[slot].link.localIsClient = !local
    }
    let database: Int
    if let known = gattDatabases.slot(local ? connections.entries[slot].link.localDatabase : connections.entries[slot].link.peerDatabase) {
      database = known
    } else {
      let connection = connections.entries[slot]
      let server: GATTServerIdentity
      if local {
        server = connection.label.localServer
      } else if let peer = connection.peer {
        server = .peer(peer)
      } else {
        server = .connection(adapter: connection.adapter, handle: connection.handle, generation: connection.generation)
      }
      let reference = gattDatabases.reference(for: server, diagnostics: &frame.diagnostics)
      database = reference.slot
      if local { connections.entries[slot].link.localDatabase = reference } else { connections.entries[slot].link.peerDatabase = reference }
    }
    // A table given beforehand is used once a PDU names a value's handle while the capture's
    // own discovery has shown nothing (a capture with discovery never needs it).
    if !gattDatabases.databases[database].wasSeeded, gattDatabases.databases[database].isEmpty,
      Self.namesValueHandle(try reader.peekUInt8())
    {
      let connection = connections.entries[slot]
      let server: GATTServerIdentity = local ? connection.label.localServer
        : connection.peer.map { .peer($0) } ?? .connection(adapter: connection.adapter, handle: connection.handle, generation: connection.generation)
      seed(database, for: server, &frame)
    }
    let link = ATTLinkContext(
      frameNumber: frame.number, timestamp: frame.record.timestamp, direction: direction,
      channel: channel, bearer: bearerKey, peer: connections.entries[slot].peer)
    let footprint = gattDatabases.databases[database].footprint
    let revision = gattDatabases.databases[database].revision
    let wasEmpty = gattDatabases.databases[database].isEmpty
    defer {
      if gattDatabases.databases[database].revision != revision { gattDatabases.layoutIndex.markChanged(database) }
      if gattDatabases.databases[database].guesses.pendingCount > 0 || !gattDatabases.databases[database].guesses.settled.isEmpty {
        collectHindsight(database, decidedIn: frame.number)
      }
      gattDatabases.settle(database, footprintBefore: footprint, diagnostics: &frame.diagnostics)
    }
    // Both are modified in place: copying them out would copy their storage on every PDU. The
    // fixed channel's bearer is reached directly: through the subscript's coroutine, every PDU
    // would allocate the coroutine's frame.
    if bearerKey == 4 {
      try ATTLayer.decode(
        &reader, bearer: &connections.entries[slot].link.fixedBearer,
        database: &gattDatabases.databases[database], link: link, registry: registry, frame: &frame)
    } else {
      try ATTLayer.decode(
        &reader, bearer: &connections.entries[slot].link[bearer: bearerKey],
        database: &gattDatabases.databases[database], link: link, registry: registry, frame: &frame)
    }
    // A Database Hash read by type before any discovery identifies the table, whatever the
    // address (a private address changes; the hash does not). One that differs from the hash
    // of the map a table was seeded from says the map is not this device's table.
    if opcode == 0x09 || opcode == 0x0B, !frame.attributes.isEmpty {
      for index in frame.attributes.indices {
        guard let hash = frame.attributes[index].value(as: DatabaseHash.self) else { continue }
        gattDatabases.databases[database].reportedHash = hash.bytes
        if wasEmpty && (!maps.isEmpty || cache != nil) {
          seedByHash(database, hash.bytes, &frame)
        } else if let seeded = gattDatabases.databases[database].seededHash, seeded != hash.bytes {
          dropSeededTable(database, because: "the device reports Database Hash \(Hex.string(hash.bytes)), not the table's \(Hex.string(seeded))", &frame)
        }
        break
      }
    }
  }

  /// Forgets the entries a map gave the table in `slot` (the capture's own stay), with a note:
  /// the traffic contradicts them. Inference explains the handles from here on. (Called inside
  /// `dissectATT`, whose exit accounts for the table's new size.)
  mutating func dropSeededTable(_ slot: Int, because reason: String, _ frame: inout DissectedFrame) {
    guard let dropped = gattDatabases.databases[slot].dropSeededEntries() else { return }
    frame.diagnostics.append(GATTDatabase.droppedNote(dropped, reason))
  }

  /// Runs the decoder registered for a dynamic channel's PSM over its payload (or SDU): its
  /// fields in their group; a payload that does not fit is flagged, its bytes kept.
  func decodePayload(_ payload: inout ByteReader, psm: UInt16, _ frame: inout DissectedFrame) {
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
