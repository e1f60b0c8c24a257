import BLECore

/// LE link-layer packets sniffed over the air (Core Vol 6 Part B §2.3, §2.4): the addresses
/// of advertising PDUs and CONNECT_IND, advertising data, and the encryption values of LL
/// control PDUs. The reader starts at the PDU header.
extension RedactionScope {
  mutating func advertisingPDU(_ p: inout ByteReader) throws(DecodeError) {
    let bits = try p.readUInt8()
    let length = Int(try p.readUInt8())
    var pdu = try p.readReader(count: min(length, p.remaining))
    let type = bits & 0x0F
    let tx = AddressKind(randomBit: bits & 0x40 != 0)
    let rx = AddressKind(randomBit: bits & 0x80 != 0)
    switch type {
    case 0, 2, 4, 6:  // ADV_IND, ADV_NONCONN_IND, SCAN_RSP, ADV_SCAN_IND: AdvA, data
      try address(&pdu, tx)
      try advertisingData(&pdu)
    case 1:  // ADV_DIRECT_IND: AdvA, TargetA
      try address(&pdu, tx)
      try address(&pdu, rx)
    case 3, 5:  // SCAN_REQ: ScanA, AdvA; CONNECT_IND: InitA, AdvA, LLData
      try address(&pdu, tx)
      try address(&pdu, rx)
    case 7, 8:  // ADV_EXT_IND and the AUX PDUs, AUX_CONNECT_RSP: the common extended payload
      try extendedAdvertising(&pdu, tx: tx, rx: rx)
    default:
      break
    }
  }

  /// The common extended advertising payload (§2.3.4): extended header length(6 bits) and
  /// AdvMode, flags, then the fields the flags name, ACAD, and the advertising data.
  mutating func extendedAdvertising(_ p: inout ByteReader, tx: AddressKind, rx: AddressKind) throws(DecodeError) {
    let headerLength = Int(try p.readUInt8() & 0x3F)
    var header = try p.readReader(count: min(headerLength, p.remaining))
    if headerLength > 0 {
      let flags = try header.readUInt8()
      if flags & 0x01 != 0 { try address(&header, tx) }  // AdvA
      if flags & 0x02 != 0 { try address(&header, rx) }  // TargetA
    }
    try advertisingData(&p)
  }

  /// An LL control PDU (§2.4.2): LL_ENC_REQ's Rand, EDIV, SKDm and IVm, LL_ENC_RSP's SKDs and
  /// IVs, LL_PERIODIC_SYNC_IND's advertiser.
  mutating func linkControl(_ p: inout ByteReader) throws(DecodeError) {
    let opcode = try p.readUInt8()
    switch opcode {
    case 0x03:  // LL_ENC_REQ: Rand(8) EDIV(2) SKDm(8) IVm(4)
      try key(&p, count: 8)
      try key(&p, count: 2)
      try key(&p, count: 8)
      try key(&p, count: 4)
    case 0x04:  // LL_ENC_RSP: SKDs(8) IVs(4)
      try key(&p, count: 8)
      try key(&p, count: 4)
    case 0x1C:  // LL_PERIODIC_SYNC_IND: ID(2) SyncInfo(18) connEventCount(2) lastPaEventCounter(2) SID/AType/SCA(1) PHY(1) AdvA(6)
      try p.skip(24)
      let bits = try p.readUInt8()
      try p.skip(1)
      try address(&p, AddressKind(randomBit: bits & 0x10 != 0))
    default:
      break
    }
  }
}

/// The LE link layer's CRC (Core Vol 6 Part B §3.1.1): 24 bits, polynomial x²⁴ + x¹⁰ + x⁹ +
/// x⁶ + x⁴ + x³ + x + 1, over the PDU bits least significant first. Linear in the data: a
/// packet whose PDU changed gets its CRC as the old one plus the CRC (from zero) of the
/// change, which needs no CRCInit and keeps a CRC that was wrong exactly as wrong.
package enum LinkLayerCRC {
  /// The register after `data` from `start` (bit-reversed CRCInit, as captures store the CRC:
  /// three bytes, little-endian).
  static func register(_ start: UInt32, _ data: some Sequence<UInt8>) -> UInt32 {
    var state = start
    for byte in data {
      var bits = byte
      for _ in 0..<8 {
        let next = (state ^ UInt32(bits)) & 1
        bits >>= 1
        state >>= 1
        if next != 0 { state = (state | 0x80_0000) ^ 0x5A_6000 }
      }
    }
    return state
  }

  /// The CRC with `crcInit` as a connection gives it (advertising: 0x555555), as stored.
  package static func crc(crcInit: UInt32, _ data: some Sequence<UInt8>) -> UInt32 {
    var reversed: UInt32 = 0
    for bit in 0..<24 where crcInit >> UInt32(bit) & 1 != 0 { reversed |= 1 << UInt32(23 - bit) }
    return register(reversed, data)
  }

  /// The stored CRC of a PDU changed from `old` to `new` (the same length).
  static func updated(_ stored: UInt32, old: ArraySlice<UInt8>, new: ArraySlice<UInt8>) -> UInt32 {
    stored ^ register(0, zip(old, new).map { $0 ^ $1 })
  }
}
