import BLECore

/// Data physical channel PDUs (Core Vol 6 Part B §2.4): a header of LLID(2 bits) NESN(1) SN(1)
/// MD(1) CP(1) RFU(2) and length(8), a CTEInfo byte when CP is set, then the payload: LLID 1 a
/// continuation of an L2CAP PDU (or, empty, nothing to send), 2 the start of one, 3 an LL
/// control PDU. Once a link's encryption has started, every payload that is not empty is
/// encrypted and ends with a 4-byte MIC.
enum DataPDU {
  static func decode(_ pdu: inout ByteReader, accessAddress: UInt32, into frame: inout DissectedFrame, links: inout AirLinks) throws(DecodeError) {
    let bits = try pdu.readUInt8()
    let length = Int(try pdu.readUInt8())
    let llid = bits & 0x03
    frame.fields.code("llid", "LLID", llid, width: 1, name: llidName(llid, empty: length == 0))
    frame.fields.uint("nesn", "NESN", (bits >> 2) & 1)
    frame.fields.uint("sn", "SN", (bits >> 3) & 1)
    frame.fields.flag("md", "More data", bits & 0x10 != 0)
    frame.fields.addVerbose("length", "Length", .unsigned(UInt64(length), .decimal))
    if bits & 0x20 != 0 { frame.fields.hex("cte_info", "CTEInfo", try pdu.readUInt8(), width: 2) }
    guard length <= pdu.remaining else {
      frame.header = .dataPDU(llid: llid, length: length, encrypted: false)
      throw DecodeError(.lengthMismatch(field: "PDU length", declared: length, actual: pdu.remaining), layer: .linkLayer, offset: pdu.offset - 1)
    }
    let encrypted = length > 0 && links.encrypted(accessAddress) && frame.air?.header.decryptedBySniffer != true
    if encrypted {
      frame.header = .dataPDU(llid: llid, length: length, encrypted: true)
      frame.fields.flag("encrypted", "Encrypted", true)
      frame.fields.bytes("payload", "Encrypted payload", try pdu.readBytes(count: max(length - 4, 0)))
      if length >= 4 { frame.fields.hex("mic", "MIC", try pdu.readUInt32LE(), width: 8) }
      return
    }
    if llid == 3 {
      frame.header = .linkControl(.opcode(try pdu.peekUInt8()))
      let control = try LinkControl.decode(&pdu, into: &frame.fields)
      frame.header = .linkControl(control)
      switch control.opcode {
      case 0x05:  // LL_START_ENC_REQ: what follows on this link is encrypted
        links.setEncrypted(accessAddress, true)
      case 0x0B:  // LL_PAUSE_ENC_RSP: no longer
        links.setEncrypted(accessAddress, false)
      default:
        break
      }
    } else {
      frame.header = .dataPDU(llid: llid, length: length, encrypted: false)
      if length > 0 { frame.fields.bytes("payload", "L2CAP fragment", pdu.readRemaining()) }
    }
  }

  static func llidName(_ llid: UInt8, empty: Bool) -> Name? {
    switch llid {
    case 1: return empty ? "empty PDU" : "continuation fragment"
    case 2: return "start of an L2CAP PDU"
    case 3: return "LL control PDU"
    default: return nil
    }
  }
}
