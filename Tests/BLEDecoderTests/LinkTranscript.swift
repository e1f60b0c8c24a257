import BLECore
@testable import BLEDecoder

/// Builds HCI records for ATT/L2CAP conversations, in the style of BlueZ's unit/test-gatt.c
/// PDU transcripts: each call dissects one record and returns the frame.
struct LinkTranscript {
  var dissector = Dissector()
  var number = 0
  var time: Int64 = 1_000_000

  /// `LE Connection Complete` (Core Vol 4 Part E §7.7.65.1) for `handle` to `peer`, local side central.
  mutating func connect(handle: UInt16, peer: String, adapter: UInt16 = 0) -> DissectedFrame {
    let address = BDAddr(peer)!.rawValue
    var bytes: [UInt8] = [0x3E, 0x13, 0x01, 0x00, UInt8(handle & 0xFF), UInt8(handle >> 8), 0x00, 0x01]
    for index in 0..<6 { bytes.append(UInt8(truncatingIfNeeded: address >> (8 * UInt64(index)))) }
    bytes += [0x18, 0x00, 0x00, 0x00, 0x48, 0x00, 0x00]
    return record(.event, bytes, .controllerToHost, adapter: adapter)
  }

  /// Disconnection Complete, reason 0x13.
  mutating func disconnect(handle: UInt16, adapter: UInt16 = 0) -> DissectedFrame {
    record(.event, [0x05, 0x04, 0x00, UInt8(handle & 0xFF), UInt8(handle >> 8), 0x13], .controllerToHost, adapter: adapter)
  }

  /// One ACL packet with the given packet-boundary flag and payload.
  mutating func acl(handle: UInt16, _ direction: Direction, pb: UInt16, _ payload: [UInt8], adapter: UInt16 = 0) -> DissectedFrame {
    let word = handle | pb << 12
    let bytes: [UInt8] = [UInt8(word & 0xFF), UInt8(word >> 8), UInt8(payload.count & 0xFF), UInt8(payload.count >> 8)] + payload
    return record(.acl, bytes, direction, adapter: adapter)
  }

  /// A whole L2CAP PDU on `cid` in one ACL packet.
  mutating func l2cap(handle: UInt16, _ direction: Direction, cid: UInt16, _ payload: [UInt8], adapter: UInt16 = 0) -> DissectedFrame {
    acl(handle: handle, direction, pb: direction == .hostToController ? 0 : 2, Self.basicFrame(cid: cid, payload), adapter: adapter)
  }

  /// An ATT PDU on the fixed channel.
  mutating func att(handle: UInt16 = 0x0040, _ direction: Direction, _ pdu: [UInt8], adapter: UInt16 = 0) -> DissectedFrame {
    l2cap(handle: handle, direction, cid: 0x0004, pdu, adapter: adapter)
  }

  mutating func record(_ kind: PacketKind, _ bytes: [UInt8], _ direction: Direction, adapter: UInt16 = 0) -> DissectedFrame {
    number += 1
    time += 1_000
    var frame = DissectedFrame()
    dissector.dissect(CaptureRecord(timestamp: time, adapter: adapter, direction: direction, kind: kind, bytes: bytes), number: number, into: &frame)
    return frame
  }

  static func basicFrame(cid: UInt16, _ payload: [UInt8]) -> [UInt8] {
    [UInt8(payload.count & 0xFF), UInt8(payload.count >> 8), UInt8(cid & 0xFF), UInt8(cid >> 8)] + payload
  }

  /// The primary-service, characteristic and descriptor discovery of a heart-rate strap whose
  /// layout is that of captures/hr_strap_session.btsnoop (bumble 0.0.236): Heart Rate service
  /// 0x000e–0x0015 with Heart Rate Measurement value 0x0010 and its CCCD 0x0011, Battery
  /// 0x0016–0x0019 with Battery Level value 0x0018.
  mutating func discoverStrap(handle: UInt16 = 0x0040) {
    let tx = Direction.hostToController, rx = Direction.controllerToHost
    _ = att(handle: handle, tx, [0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28])
    _ = att(handle: handle, rx, [0x11, 0x06, 0x0E, 0x00, 0x15, 0x00, 0x0D, 0x18, 0x16, 0x00, 0x19, 0x00, 0x0F, 0x18])
    _ = att(handle: handle, tx, [0x08, 0x0E, 0x00, 0x15, 0x00, 0x03, 0x28])
    _ = att(handle: handle, rx, [0x09, 0x07, 0x0F, 0x00, 0x10, 0x10, 0x00, 0x37, 0x2A, 0x12, 0x00, 0x02, 0x13, 0x00, 0x38, 0x2A, 0x14, 0x00, 0x08, 0x15, 0x00, 0x39, 0x2A])
    _ = att(handle: handle, tx, [0x08, 0x16, 0x00, 0x19, 0x00, 0x03, 0x28])
    _ = att(handle: handle, rx, [0x09, 0x07, 0x17, 0x00, 0x12, 0x18, 0x00, 0x19, 0x2A])
    _ = att(handle: handle, tx, [0x04, 0x11, 0x00, 0x11, 0x00])
    _ = att(handle: handle, rx, [0x05, 0x01, 0x11, 0x00, 0x02, 0x29])
  }
}
