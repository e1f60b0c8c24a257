import BLECore

/// CID 0x0004: the Attribute Protocol on its fixed bearer (bearer key 4).
enum ATTChannel: L2CAPFixedChannel {
  static var cid: UInt16 { 0x0004 }
  static var name: Name { "ATT" }

  static func decode(
    _ payload: inout ByteReader, direction: Direction, connection: inout Connection, gatt: inout GATTState, air: inout AirLinkState,
    registry: DecoderRegistry, into frame: inout DissectedFrame
  ) throws(DecodeError) {
    try ATTLayer.dissect(
      &payload, bearerKey: 4, channel: cid, direction: direction, connection: connection.label, link: &connection.link.att, gatt: &gatt,
      registry: registry, into: &frame)
    // An ATT PDU has no length of its own: it is the whole payload, nothing follows it.
    _ = payload.readRemaining()
  }
}
