import BLECore

/// CID 0x0004: the Attribute Protocol on its fixed bearer (bearer key 4).
enum ATTChannel: L2CAPFixedChannel {
  static var cid: UInt16 { 0x0004 }
  static var name: Name { "ATT" }

  static func decode(
    _ payload: inout ByteReader, on link: L2CAPLink, _ dissector: inout Dissector, into frame: inout DissectedFrame
  ) throws(DecodeError) {
    try dissector.dissectATT(&payload, slot: link.slot, bearerKey: 4, channel: cid, direction: link.direction, into: &frame)
    // An ATT PDU has no length of its own: it is the whole payload, nothing follows it.
    _ = payload.readRemaining()
  }
}
