import BLECore

/// CID 0x0006: the Security Manager on LE links.
enum SMPChannel: L2CAPFixedChannel {
  static var cid: UInt16 { 0x0006 }
  static var name: Name { "SMP" }

  static func decode(
    _ payload: inout ByteReader, direction: Direction, connection: inout Connection, gatt: inout GATTState, air: inout AirLinkState,
    registry: DecoderRegistry, into frame: inout DissectedFrame
  ) throws(DecodeError) {
    // Over the air, the pairing is kept: a legacy one gives its keys away.
    if let accessAddress = frame.air?.accessAddress {
      var look = payload
      let command = Array(look.readRemaining())
      if let key = air.links.notePairing(accessAddress, command, direction: direction, frame: frame.number) {
        air.keys.learn(key, tk: nil, into: &frame)
      }
    }
    try SecurityManager.dissect(&payload, into: &frame)
  }
}

/// CID 0x0007: the Security Manager on BR/EDR links (cross-transport key derivation).
enum BREDRSMPChannel: L2CAPFixedChannel {
  static var cid: UInt16 { 0x0007 }
  static var name: Name { "BR/EDR SMP" }

  static func decode(
    _ payload: inout ByteReader, direction: Direction, connection: inout Connection, gatt: inout GATTState, air: inout AirLinkState,
    registry: DecoderRegistry, into frame: inout DissectedFrame
  ) throws(DecodeError) {
    try SecurityManager.dissect(&payload, into: &frame)
  }
}

extension SecurityManager {
  /// An SMP command: its fields, and the link events a summary reads (the code, the pairing
  /// features, an identity address).
  static func dissect(_ payload: inout ByteReader, into frame: inout DissectedFrame) throws(DecodeError) {
    frame.deepestLayer = .l2cap
    frame.header = .securityManager(.empty)
    let code = try payload.peekUInt8()
    var rest = payload
    _ = try? rest.readUInt8()
    frame.linkEvents.append(.securityManager(code: code, reason: code == 0x05 ? try? rest.readUInt8() : nil))
    // What a summary needs beyond the code: the pairing features and an identity address.
    if code == 0x01 || code == 0x02, let io = try? rest.readUInt8(), let oob = try? rest.readUInt8(), let auth = try? rest.readUInt8() {
      let keySize = (try? rest.readUInt8()) ?? 0
      let initiatorKeys = (try? rest.readUInt8()) ?? 0
      let responderKeys = (try? rest.readUInt8()) ?? 0
      frame.linkEvents.append(.pairingFeatures(
        code: code, ioCapability: io, oobData: oob, authRequirements: auth, maximumKeySize: keySize, initiatorKeys: initiatorKeys,
        responderKeys: responderKeys))
    } else if code == 0x09, let type = try? rest.readUInt8(), let address = try? rest.readBDAddr() {
      frame.linkEvents.append(.identityAddress(address: address, type: AddressType(rawValue: type)))
    }
    frame.fields.beginObject("smp", "SMP", inline: true)
    var command = SMPCommandFact.code(code)
    defer { frame.header = .securityManager(command) }
    try SecurityManager.decode(&payload, into: &frame.fields, command: &command)
    frame.fields.end()
  }
}
