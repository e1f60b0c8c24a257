import BLECore
@testable import BLEDecoder

/// BR/EDR links for SDP and RFCOMM tests: a Connection Complete, L2CAP channels opened by the
/// local side, and the protocols' PDUs on them, built byte by byte as the specifications lay
/// them out (the FCS is computed here, apart from the decoder's).
extension LinkTranscript {
  static let tx = Direction.hostToController
  static let rx = Direction.controllerToHost

  /// Connection Complete (Core Vol 4 Part E §7.7.3): an ACL link on `handle` to `peer`.
  mutating func connectClassic(handle: UInt16, peer: String) -> DissectedFrame {
    let address = BDAddr(peer)!.rawValue
    var bytes: [UInt8] = [0x03, 0x0B, 0x00, UInt8(handle & 0xFF), UInt8(handle >> 8)]
    for index in 0..<6 { bytes.append(UInt8(truncatingIfNeeded: address >> (8 * UInt64(index)))) }
    bytes += [0x01, 0x00]
    return record(.event, bytes, .controllerToHost)
  }

  /// An L2CAP channel for `psm` that the local side opens (Connection Request and Response on
  /// CID 0x0001): frames to the peer go to `remote`, frames from it to `local`.
  mutating func openChannel(handle: UInt16, psm: UInt16, local: UInt16, remote: UInt16, identifier: UInt8) {
    _ = l2cap(handle: handle, Self.tx, cid: 1, [0x02, identifier, 0x04, 0x00, UInt8(psm & 0xFF), UInt8(psm >> 8), UInt8(local & 0xFF), UInt8(local >> 8)])
    _ = l2cap(
      handle: handle, Self.rx, cid: 1,
      [0x03, identifier, 0x08, 0x00, UInt8(remote & 0xFF), UInt8(remote >> 8), UInt8(local & 0xFF), UInt8(local >> 8), 0, 0, 0, 0])
  }
}

/// SDP PDUs and data elements (Core Vol 3 Part B §3, §4), big-endian.
enum SDPBytes {
  static func pdu(_ id: UInt8, transaction: UInt16, _ parameters: [UInt8]) -> [UInt8] {
    [id, UInt8(transaction >> 8), UInt8(transaction & 0xFF), UInt8(parameters.count >> 8), UInt8(parameters.count & 0xFF)] + parameters
  }
  static func be(_ value: UInt64, _ bytes: Int) -> [UInt8] { (0..<bytes).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) } }
  static func sequence(_ items: [UInt8]...) -> [UInt8] { let body = items.flatMap { $0 }; return [0x35, UInt8(body.count)] + body }
  static func sequence16(_ body: [UInt8]) -> [UInt8] { [0x36] + be(UInt64(body.count), 2) + body }
  static func alternative(_ items: [UInt8]...) -> [UInt8] { let body = items.flatMap { $0 }; return [0x3D, UInt8(body.count)] + body }
  static func uuid16(_ value: UInt16) -> [UInt8] { [0x19] + be(UInt64(value), 2) }
  static func uint8(_ value: UInt8) -> [UInt8] { [0x08, value] }
  static func uint16(_ value: UInt16) -> [UInt8] { [0x09] + be(UInt64(value), 2) }
  static func uint32(_ value: UInt32) -> [UInt8] { [0x0A] + be(UInt64(value), 4) }
  static func text(_ value: String) -> [UInt8] { [0x25, UInt8(value.utf8.count)] + Array(value.utf8) }
  static func continuation(_ state: [UInt8] = []) -> [UInt8] { [UInt8(state.count)] + state }

  /// A Serial Port record: handle, class, L2CAP then RFCOMM `channel`, language base, name.
  static func serialPortRecord(handle: UInt32, channel: UInt8, name: String) -> [UInt8] {
    sequence(
      uint16(0x0000), uint32(handle),
      uint16(0x0001), sequence(uuid16(0x1101)),
      uint16(0x0004), sequence(sequence(uuid16(0x0100)), sequence(uuid16(0x0003), uint8(channel))),
      uint16(0x0006), sequence(uint16(0x656E), uint16(106), uint16(0x0100)),
      uint16(0x0009), sequence(sequence(uuid16(0x1101), uint16(0x0102))),
      uint16(0x0100), text(name))
  }
}

/// RFCOMM frames (TS 07.10 §5.2) with their FCS.
enum RFCOMMBytes {
  /// CRC-8 of TS 07.10 Annex B, computed bit by bit as the annex's example does.
  static func fcs(_ bytes: [UInt8]) -> UInt8 {
    var register: UInt8 = 0xFF
    for byte in bytes {
      for bit in 0..<8 {
        let input = (byte >> UInt8(bit)) & 1
        let feedback = (register & 1) ^ input
        register >>= 1
        if feedback != 0 { register ^= 0xE0 }
      }
    }
    return ~register
  }

  /// A frame to DLCI `dlci` with C/R `command`, control `type` (P/F in `pollFinal`).
  static func frame(dlci: UInt8, command: Bool, type: UInt8, pollFinal: Bool = false, credits: UInt8? = nil, _ information: [UInt8] = []) -> [UInt8] {
    let address = dlci << 2 | (command ? 0x02 : 0) | 0x01
    let control = type | (pollFinal ? 0x10 : 0)
    let length: [UInt8] = information.count < 128 ? [UInt8(information.count << 1 | 1)] : [UInt8((information.count & 0x7F) << 1), UInt8(information.count >> 7)]
    let header = [address, control] + length
    let checked = type == 0xEF ? [address, control] : header
    return header + (credits.map { [$0] } ?? []) + information + [fcs(checked)]
  }

  /// A multiplexer control message on DLCI 0 (a UIH frame).
  static func multiplexer(command: Bool, frameCommand: Bool = true, type: UInt8, _ value: [UInt8]) -> [UInt8] {
    frame(dlci: 0, command: frameCommand, type: 0xEF, [type << 2 | (command ? 0x02 : 0) | 0x01, UInt8(value.count << 1 | 1)] + value)
  }
}
