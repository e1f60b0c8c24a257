import BLECore

/// CID 0x0001: signaling on BR/EDR links.
enum BREDRSignalingChannel: L2CAPFixedChannel {
  static var cid: UInt16 { 0x0001 }
  static var name: Name { "BR/EDR signaling" }

  static func decode(
    _ payload: inout ByteReader, on link: L2CAPLink, _ dissector: inout Dissector, into frame: inout DissectedFrame
  ) throws(DecodeError) {
    try dissector.dissectSignaling(&payload, isLE: false, on: link, into: &frame)
  }
}

/// CID 0x0005: signaling on LE links.
enum LESignalingChannel: L2CAPFixedChannel {
  static var cid: UInt16 { 0x0005 }
  static var name: Name { "LE signaling" }

  static func decode(
    _ payload: inout ByteReader, on link: L2CAPLink, _ dissector: inout Dissector, into frame: inout DissectedFrame
  ) throws(DecodeError) {
    try dissector.dissectSignaling(&payload, isLE: true, on: link, into: &frame)
  }
}

extension Dissector {
  /// Signaling commands; the channels they open are learned (an EATT channel gets its bearer).
  mutating func dissectSignaling(_ payload: inout ByteReader, isLE: Bool, on link: L2CAPLink, into frame: inout DissectedFrame) throws(DecodeError) {
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
          handle: connections.entries[link.slot].handle, intervalMinimum: minimum, intervalMaximum: maximum, latency: latency, supervisionTimeout: timeout))
    }
    for bearer in connections.entries[link.slot].link.channels.learn(commands, direction: link.direction) {
      connections.entries[link.slot].link.bearers[bearer] = ATTBearer(mtu: 65535)
    }
  }
}
