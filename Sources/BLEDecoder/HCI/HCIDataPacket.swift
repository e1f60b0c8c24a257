import BLECore

/// ACL, SCO and ISO data packet headers. Payloads stay raw at this layer.
///
/// The corresponding specification is Core Vol 4, Part E, §5.4.2–5.4.5.
enum HCIDataPacket {
  package static func packetBoundaryName(_ pb: UInt16) -> Name {
    switch pb {
    case 0: return "first, non-flushable"
    case 1: return "continuation"
    case 2: return "first, flushable"
    default: return "complete (deprecated)"
    }
  }

  struct ACLHeader {
    var handle: UInt16
    var packetBoundary: UInt16
    var length: Int
  }

  /// What the header line says of an ACL packet that no upper layer describes.
  static func describe(_ header: ACLHeader, _ reassembly: ACLReassemblyFact, _ frame: inout DissectedFrame) {
    frame.header = .aclData(continuation: header.packetBoundary == 1, length: header.length, reassembly: reassembly)
  }

  /// Decodes an ACL header; the payload stays in `reader` (at most the declared length).
  static func decodeACL(_ reader: inout ByteReader, into frame: inout DissectedFrame) throws(DecodeError) -> ACLHeader {
    let word = try reader.readUInt16LE()
    let handle = word & 0x0FFF
    let pb = (word >> 12) & 3
    let bc = word >> 14
    let length = Int(try reader.readUInt16LE())
    frame.hci = .acl(handle: handle)
    frame.fields.addVerbose("handle", "Handle", .unsigned(UInt64(handle), .decimal))
    frame.fields.addVerbose("pb", "Packet boundary", .code(UInt64(pb), width: 1, name: packetBoundaryName(pb)))
    frame.fields.addVerbose("bc", "Broadcast", .code(UInt64(bc), width: 1, name: bc == 0 ? "point-to-point" : (bc == 1 ? "BR/EDR broadcast" : nil)))
    frame.fields.addVerbose("dlen", "Data length", .unsigned(UInt64(length), .decimal))
    let present = reader.remaining
    if present < length {
      truncated(length, present, &frame)
    } else if present > length {
      frame.diagnostics.append(Diagnostic(.hciDataTrailingBytes, "\(present - length) bytes beyond the data length"))
      reader = try reader.readReader(count: length)
    }
    return ACLHeader(handle: handle, packetBoundary: pb, length: length)
  }

  static func decodeSCO(_ reader: inout ByteReader, into frame: inout DissectedFrame) throws(DecodeError) -> UInt16 {
    let word = try reader.readUInt16LE()
    let handle = word & 0x0FFF
    let status = (word >> 12) & 3
    let length = Int(try reader.readUInt8())
    frame.hci = .sco(handle: handle)
    frame.fields.uint("handle", "Handle", handle)
    let statusName: Name = status == 0 ? "correct" : (status == 1 ? "possibly invalid" : (status == 2 ? "no data" : "partially lost"))
    frame.fields.code("packet_status", "Packet status", status, width: 1, name: statusName)
    frame.fields.uint("dlen", "Data length", length)
    payload(length, &reader, &frame)
    frame.header = .handleLength(handle: handle, length: length)
    return handle
  }

  static func decodeISO(_ reader: inout ByteReader, into frame: inout DissectedFrame) throws(DecodeError) -> UInt16 {
    let word = try reader.readUInt16LE()
    let handle = word & 0x0FFF
    let pb = (word >> 12) & 3
    let hasTimestamp = word & 0x4000 != 0
    let length = Int(try reader.readUInt16LE() & 0x3FFF)
    frame.hci = .iso(handle: handle)
    frame.fields.uint("handle", "Handle", handle)
    let pbName: Name = pb == 0 ? "first fragment" : (pb == 1 ? "continuation" : (pb == 2 ? "complete SDU" : "last fragment"))
    frame.fields.code("pb", "Packet boundary", pb, width: 1, name: pbName)
    frame.fields.uint("dlen", "Data load length", length)
    var load = try reader.readReader(count: min(length, reader.remaining))
    if hasTimestamp { frame.fields.uint("timestamp", "Timestamp (µs)", try load.readUInt32LE()) }
    if pb == 0 || pb == 2 {
      frame.fields.uint("sequence_number", "Packet sequence number", try load.readUInt16LE())
      let sdu = try load.readUInt16LE()
      frame.fields.uint("sdu_length", "ISO SDU length", sdu & 0x0FFF)
      let status = sdu >> 14
      frame.fields.code("packet_status", "Packet status", status, width: 1, name: status == 0 ? "valid" : (status == 1 ? "possibly invalid" : (status == 2 ? "lost" : nil)))
    }
    frame.fields.bytes("data", "Data", load.readRemaining())
    if length > frame.capturedLength - 4 { truncated(length, frame.capturedLength - 4, &frame) }
    frame.header = .handleLength(handle: handle, length: length)
    return handle
  }

  /// Shows the payload, and says when the capture holds fewer bytes than the header declares.
  static func payload(_ length: Int, _ reader: inout ByteReader, _ frame: inout DissectedFrame) {
    let present = reader.remaining
    frame.fields.bytes("data", "Data", reader.readRemaining())
    if present < length {
      truncated(length, present, &frame)
    } else if present > length {
      frame.diagnostics.append(Diagnostic(.hciDataTrailingBytes, "\(present - length) bytes beyond the data length"))
    }
  }

  static func truncated(_ declared: Int, _ present: Int, _ frame: inout DissectedFrame) {
    if frame.record.originalLength > frame.capturedLength {
      // The capture writer cut the packet (Android filtered snoop, snap length): not malformed.
      frame.diagnostics.append(Diagnostic(.hciDataTruncatedByWriter, "capture holds \(present) of \(declared) data bytes (the writer truncated the packet)"))
    } else {
      frame.malformed = DecodeError(.lengthMismatch(field: "data length", declared: declared, actual: present), layer: .hci, offset: 4)
    }
  }
}
