import BLECore
import BLEDecoder

/// What the decoder said of the attributes of the ATT PDU being redacted: which
/// characteristic (or descriptor) each handle is, in the order the frame names them. The
/// redaction walks the PDU itself; what a value is comes from the decoder's facts (its GATT
/// tables), never from the bytes.
struct AttributeMeanings: Sendable {
  /// (handle, the characteristic or descriptor's 16-bit UUID), in the frame's order.
  var entries: [(handle: UInt16, uuid: UInt16?, rawLength: Int?)] = []

  static let none = AttributeMeanings()

  /// From a frame's attribute facts.
  init(_ frame: inout DissectedFrame) {
    for index in frame.attributes.indices {
      frame.withAttribute(index) { fact in
        let uuid = fact.meaning?.role == .characteristicValue ? fact.characteristic : (fact.descriptor ?? fact.characteristic)
        entries.append((fact.handle, uuid?.uuid16, fact.rawValue?.count))
      }
    }
  }

  init() {}

  func uuid(of handle: UInt16) -> UInt16? { entries.first(where: { $0.handle == handle })?.uuid ?? nil }
  /// The first attribute's (a Read Response names none: its request did).
  var first: UInt16? { entries.first?.uuid ?? nil }
}

/// L2CAP PDUs, whole (the redactor reassembles them as the decoder does): the channels whose
/// protocol carries addresses, names or keys (SMP, ATT).
extension RedactionScope {
  /// A basic-mode PDU: length(2) CID(2) payload. `attChannel`: the channel the decoder found
  /// an ATT PDU on in this frame (an EATT or BR/EDR channel), besides the fixed one.
  mutating func l2capPDU(_ p: inout ByteReader, attChannel: UInt16?, meanings: AttributeMeanings) throws(DecodeError) {
    let length = Int(try p.readUInt16LE())
    let cid = try p.readUInt16LE()
    var payload = try p.readReader(count: min(length, p.remaining))
    switch cid {
    case 0x0006, 0x0007:  // SMP (LE, BR/EDR)
      try securityManager(&payload)
    case 0x0004:
      try att(&payload, meanings: meanings)
    default:
      guard let attChannel, attChannel == cid else { return }
      // A credit-based channel's first K-frame starts with the SDU's length: a whole SDU in
      // one K-frame is redacted; an SDU in several K-frames is not parsed.
      var look = payload
      if look.remaining >= 2, Int(try look.readUInt16LE()) == look.remaining {
        try att(&look, meanings: meanings)
      } else {
        try att(&payload, meanings: meanings)
      }
    }
  }

  /// Security Manager commands (Core Vol 3 Part H §3.5, §3.6).
  mutating func securityManager(_ p: inout ByteReader) throws(DecodeError) {
    let code = try p.readUInt8()
    switch code {
    case 0x03, 0x04, 0x06, 0x08, 0x0A, 0x0D:
      // Pairing Confirm, Pairing Random, Encryption Information (LTK), Identity Information
      // (IRK), Signing Information (CSRK), DHKey Check: 16 bytes
      try key(&p, count: 16)
    case 0x07:  // Central Identification: EDIV(2) Rand(8)
      try key(&p, count: 2)
      try key(&p, count: 8)
    case 0x09:  // Identity Address Information: type(1) address(6)
      let type = try p.readUInt8()
      try address(&p, type == 0 ? .publicAddress : .random)
    case 0x0C:  // Pairing Public Key: X(32) Y(32)
      try key(&p, count: 32)
      try key(&p, count: 32)
    default:
      break
    }
  }

  /// ATT PDUs that carry values (Core Vol 3 Part F §3.4): each value by what its handle is.
  mutating func att(_ p: inout ByteReader, meanings: AttributeMeanings) throws(DecodeError) {
    let opcode = try p.readUInt8()
    switch opcode {
    case 0x0B, 0x0D:  // Read Response, Read Blob Response: the value (its handle is the request's)
      try attributeValue(&p, uuid: meanings.first, whole: opcode == 0x0B)
    case 0x09:  // Read By Type Response: length(1), then handle(2) value(length - 2) each
      let length = Int(try p.readUInt8())
      guard length >= 2 else { return }
      while p.remaining >= length {
        let handle = try p.readUInt16LE()
        var value = try p.readReader(count: length - 2)
        try attributeValue(&value, uuid: meanings.uuid(of: handle), whole: false)
      }
    case 0x1B, 0x1D, 0x12, 0x52:  // Notification, Indication, Write Request, Write Command: handle(2) value
      let handle = try p.readUInt16LE()
      try attributeValue(&p, uuid: meanings.uuid(of: handle), whole: true)
    case 0xD2:  // Signed Write Command: handle(2) value signature(12)
      let handle = try p.readUInt16LE()
      guard p.remaining >= 12 else { return }
      var value = try p.readReader(count: p.remaining - 12)
      try attributeValue(&value, uuid: meanings.uuid(of: handle), whole: true)
    case 0x16, 0x17:  // Prepare Write Request/Response: handle(2) offset(2) part of a value
      let handle = try p.readUInt16LE()
      try p.skip(2)
      try attributeValue(&p, uuid: meanings.uuid(of: handle), whole: false)
    case 0x0F:  // Read Multiple Response: the values one after another, split by the decoder's lengths
      for entry in meanings.entries {
        guard let count = entry.rawLength, count <= p.remaining else { return }
        var value = try p.readReader(count: count)
        try attributeValue(&value, uuid: entry.uuid, whole: true)
      }
    case 0x21:  // Read Multiple Variable Response: length(2) value, in the request's order
      var index = 0
      while p.remaining >= 2 {
        let count = Int(try p.readUInt16LE())
        var value = try p.readReader(count: min(count, p.remaining))
        let uuid = index < meanings.entries.count ? meanings.entries[index].uuid : nil
        try attributeValue(&value, uuid: uuid, whole: count <= value.remaining)
        index += 1
      }
    case 0x23:  // Multiple Handle Value Notification: handle(2) length(2) value, each
      while p.remaining >= 4 {
        let handle = try p.readUInt16LE()
        let count = Int(try p.readUInt16LE())
        var value = try p.readReader(count: min(count, p.remaining))
        try attributeValue(&value, uuid: meanings.uuid(of: handle), whole: true)
      }
    default:
      break
    }
  }

  /// A characteristic's value, by its UUID: names and strings, identifiers, health values.
  /// `whole`: the value from its start (not a part at an offset), so fields can be found in it.
  mutating func attributeValue(_ p: inout ByteReader, uuid: UInt16?, whole: Bool) throws(DecodeError) {
    guard let uuid, !p.isAtEnd else { return }
    switch uuid {
    case 0x2A00: try nameToEnd(&p, label: NameLabel.device)  // Device Name
    case 0x2A24: try nameToEnd(&p, label: NameLabel.model)
    case 0x2A25: try nameToEnd(&p, label: NameLabel.serial)
    case 0x2A26: try nameToEnd(&p, label: NameLabel.firmware)
    case 0x2A27: try nameToEnd(&p, label: NameLabel.hardware)
    case 0x2A28: try nameToEnd(&p, label: NameLabel.software)
    case 0x2A29: try nameToEnd(&p, label: NameLabel.manufacturer)
    case 0x2A8A, 0x2A90, 0x2A87, 0x2B37:  // First Name, Last Name, Email Address, Registered User
      try nameToEnd(&p, label: NameLabel.user)
    case 0x2A23:  // System ID: 8 bytes, often made from the device's address
      try identifier(&p, count: p.remaining)
    case 0x2A03:  // Reconnection Address
      if p.remaining >= 6 { try address(&p, .unknown) }
    case 0x2A37 where whole: try heartRateMeasurement(&p)
    case 0x2A1C where whole: try temperatureMeasurement(&p)
    case 0x2A9D where whole: try weightMeasurement(&p)
    default:
      break
    }
  }

  /// Heart Rate Measurement (HRS §3.1): flags(1), rate (8 or 16 bits), energy expended(16) if
  /// flag 3, RR intervals(16 each, 1/1024 s) if flag 4. Replaced by 60 bpm, 0 kJ and 1 s.
  mutating func heartRateMeasurement(_ p: inout ByteReader) throws(DecodeError) {
    let flags = try p.readUInt8()
    try value(&p, flags & 0x01 != 0 ? [60, 0] : [60])
    if flags & 0x08 != 0 { try value(&p, [0, 0]) }
    if flags & 0x10 != 0 {
      while p.remaining >= 2 { try value(&p, [0x00, 0x04]) }
    }
  }

  /// Temperature Measurement (HTS §3.1): flags(1), FLOAT(4). Replaced by 37.0 °C (98.6 °F).
  mutating func temperatureMeasurement(_ p: inout ByteReader) throws(DecodeError) {
    let flags = try p.readUInt8()
    // IEEE 11073 FLOAT: exponent -1 in the top byte, mantissa 370 (986) below.
    try value(&p, flags & 0x01 != 0 ? [0xDA, 0x03, 0x00, 0xFF] : [0x72, 0x01, 0x00, 0xFF])
  }

  /// Weight Measurement (WSS §3.2): flags(1), weight(16: 0.005 kg or 0.01 lb). Replaced by 70 kg (154 lb).
  mutating func weightMeasurement(_ p: inout ByteReader) throws(DecodeError) {
    let flags = try p.readUInt8()
    try value(&p, flags & 0x01 != 0 ? [0x28, 0x3C] : [0xB0, 0x36])
  }
}
