import BLECore

extension Dissector {
  /// The ACL handle of Qualcomm's vendor debug records (Android's snoop logs carry them).
  static let vendorDebugHandle: UInt16 = 0x0EDC

  /// ACL data: header, then L2CAP (reassembly, then the channel's protocol).
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
      direction = Self.inferDirection(packetBoundary: header.packetBoundary, payload: payload, &connections.entries[slot])
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
    try l2cap.dissectLinkData(
      payload, isStart: header.packetBoundary != 1, slot: slot, direction: direction, origin: .acl(header),
      connections: &connections, gatt: &gatt, air: &air, registry: registry, into: &frame)
  }

  /// The direction of an ACL packet in a format that does not say (pcap link type 187).
  ///
  /// LE hosts should start PDUs with packet boundary 00 and controllers with 10, and a
  /// continuation follows its start; but some hosts send 10 too. So a 10 that starts an ATT PDU
  /// is placed by what ATT allows: a response or confirmation travels against the request or
  /// indication pending on the bearer; requests and commands come from the client, notifications
  /// and indications from the server, and the client is the central unless the capture showed
  /// otherwise.
  static func inferDirection(packetBoundary: UInt16, payload: ByteView, _ connection: inout Connection) -> Direction {
    if packetBoundary == 1 { return connection.link.lastStartDirection }
    guard payload.count >= 5, payload[payload.startIndex + 2] == 0x04, payload[payload.startIndex + 3] == 0x00 else {
      return packetBoundary == 0 ? .hostToController : .controllerToHost
    }
    let kind = ATTMethodKind(opcode: payload[payload.startIndex + 4])
    if packetBoundary == 0 {
      // Only a host sends 00: a request it sends shows which side the client is.
      if kind == .request { connection.link.att.localIsClient = true }
      if kind == .response { connection.link.att.localIsClient = false }
      return .hostToController
    }
    let bearer = connection.link.att.fixedBearer
    func against(_ pending: DirectionalPair<PendingRequest?>) -> Direction? {
      switch (pending.hostToController != nil, pending.controllerToHost != nil) {
      case (true, false): return .controllerToHost
      case (false, true): return .hostToController
      default: return nil
      }
    }
    let localIsClient = connection.link.att.localIsClient ?? (connection.role != .peripheral)
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
}
