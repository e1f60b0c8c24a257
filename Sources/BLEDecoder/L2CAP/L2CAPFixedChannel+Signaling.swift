import BLECore

/// CID 0x0001: signaling on BR/EDR links.
enum BREDRSignalingChannel: L2CAPFixedChannel {
  static var cid: UInt16 { 0x0001 }
  static var name: Name { "BR/EDR signaling" }

  static func decode(
    _ payload: inout ByteReader, direction: Direction, connection: inout Connection, gatt: inout GATTState, air: inout AirLinkState,
    registry: DecoderRegistry, into frame: inout DissectedFrame
  ) throws(DecodeError) {
    try L2CAPSignaling.dissect(&payload, isLE: false, direction: direction, connection: &connection, into: &frame)
  }
}

/// CID 0x0005: signaling on LE links.
enum LESignalingChannel: L2CAPFixedChannel {
  static var cid: UInt16 { 0x0005 }
  static var name: Name { "LE signaling" }

  static func decode(
    _ payload: inout ByteReader, direction: Direction, connection: inout Connection, gatt: inout GATTState, air: inout AirLinkState,
    registry: DecoderRegistry, into frame: inout DissectedFrame
  ) throws(DecodeError) {
    try L2CAPSignaling.dissect(&payload, isLE: true, direction: direction, connection: &connection, into: &frame)
  }
}

extension L2CAPSignaling {
  /// Signaling commands; the channels they open are learned (an EATT channel gets its bearer).
  static func dissect(
    _ payload: inout ByteReader, isLE: Bool, direction: Direction, connection: inout Connection, into frame: inout DissectedFrame
  ) throws(DecodeError) {
    frame.header = .signaling([], unfinished: nil)
    frame.fields.beginObject("signaling", "Signaling", inline: true)
    var commands: [SignalingCommand] = []
    var unfinished: UInt8?
    do {
      try L2CAPSignaling.decode(&payload, isLE: isLE, into: &frame.fields, commands: &commands, unfinished: &unfinished)
    } catch {
      frame.header = .signaling(commands, unfinished: unfinished)
      throw error
    }
    frame.header = .signaling(commands, unfinished: nil)
    frame.fields.end()
    for case let .connectionParameterUpdateRequest(_, minimum, maximum, latency, timeout) in commands {
      frame.linkEvents.append(
        .parametersRequested(
          handle: connection.handle, intervalMinimum: minimum, intervalMaximum: maximum, latency: latency, supervisionTimeout: timeout))
    }
    for bearer in connection.link.l2cap.channels.learn(commands, direction: direction) {
      connection.link.att.bearers[bearer] = ATTBearer(mtu: 65535)
    }
  }
}
