import BLECore

/// Security Manager Protocol PDUs: `code(1) data`, on CID 0x0006 (LE-U) and 0x0007 (ACL-U).
///
/// The corresponding specification is Core Vol 3, Part H, §3.3 (PDU format), §3.5 (pairing
/// methods) and §3.6 (key distribution). Every command has a fixed size.
public enum SecurityManager {
  /// Decodes one SMP PDU (CID 6 on LE, 7 on BR/EDR) into `fields` (the caller has opened the
  /// object "smp"): `code`, `code_name`, then the command's fields; `command` is the fact, set
  /// as far as the PDU decoded (its code once that is read).
  ///
  /// Throws `.truncated` when the PDU is shorter than its command and, after writing the fields
  /// and the surplus as `extra`, `.lengthMismatch` when it is longer. Keys (LTK, IRK, CSRK,
  /// confirm and random values, public key coordinates) are shown as the bytes on the wire.
  public static func decode(_ reader: inout ByteReader, into fields: inout FieldList, command: inout SMPCommandFact) throws(DecodeError) {
    reader.layer = .l2cap
    let start = reader.offset
    let code = try reader.readUInt8()
    fields.code("code", "Code", code, width: 2, name: knownName(code))
    command = .code(code)
    command = try decodeData(code: code, &reader, into: &fields)
    if !reader.isAtEnd {
      let expected = reader.offset - start
      let extraOffset = reader.offset
      let extra = reader.readRemaining()
      fields.bytes("extra", "Unexpected bytes", extra)
      throw DecodeError(.lengthMismatch(field: "SMP command length", declared: expected, actual: expected + extra.count), layer: .l2cap, offset: extraOffset)
    }
  }

  public static func name(_ code: UInt8) -> Name {
    knownName(code) ?? "Unknown SMP Command"
  }

  /// SMP command codes §3.3.
  package static func knownName(_ code: UInt8) -> Name? {
    switch code {
    case 0x01: return "Pairing Request"
    case 0x02: return "Pairing Response"
    case 0x03: return "Pairing Confirm"
    case 0x04: return "Pairing Random"
    case 0x05: return "Pairing Failed"
    case 0x06: return "Encryption Information"
    case 0x07: return "Central Identification"
    case 0x08: return "Identity Information"
    case 0x09: return "Identity Address Information"
    case 0x0A: return "Signing Information"
    case 0x0B: return "Security Request"
    case 0x0C: return "Pairing Public Key"
    case 0x0D: return "Pairing DHKey Check"
    case 0x0E: return "Pairing Keypress Notification"
    default: return nil
    }
  }

  static func decodeData(code: UInt8, _ r: inout ByteReader, into fields: inout FieldList) throws(DecodeError) -> SMPCommandFact {
    switch code {
    case 0x01, 0x02:  // Pairing Request / Response §3.5.1-3.5.2
      let io = try r.readUInt8()
      let oob = try r.readUInt8()
      let auth = try r.readUInt8()
      let keySize = try r.readUInt8()
      let initiatorKeys = try r.readUInt8()
      let responderKeys = try r.readUInt8()
      fields.code("io_capability", "IO capability", io, width: 2, name: ioCapabilityName(io))
      fields.code("oob_data_flag", "OOB data flag", oob, width: 2, name: oobName(oob))
      authReq(auth, into: &fields)
      fields.uint("max_key_size", "Maximum encryption key size", keySize)
      keyDistribution(initiatorKeys, into: &fields, key: "initiator_key_distribution", label: "Initiator key distribution")
      keyDistribution(responderKeys, into: &fields, key: "responder_key_distribution", label: "Responder key distribution")
      return .pairing(code: code, ioCapability: io, oobData: oob, authRequirements: auth, maximumKeySize: keySize)

    case 0x03:  // Pairing Confirm §3.5.3
      fields.bytes("confirm", "Confirm value", try r.readBytes(count: 16))
    case 0x04:  // Pairing Random §3.5.4
      fields.bytes("random", "Random value", try r.readBytes(count: 16))
    case 0x05:  // Pairing Failed §3.5.5
      let reason = try r.readUInt8()
      fields.code("reason", "Reason", reason, width: 2, name: failureReasonName(reason))
      return .pairingFailed(reason: reason)
    case 0x06:  // Encryption Information §3.6.2
      fields.bytes("ltk", "Long term key", try r.readBytes(count: 16))
    case 0x07:  // Central Identification §3.6.3: EDIV(2) Rand(8)
      let ediv = try r.readUInt16LE()
      fields.hex("ediv", "Encrypted diversifier", ediv, width: 4)
      fields.hex("random_number", "Random number", try r.readUInt64LE(), width: 16)
      return .centralIdentification(ediv: ediv)
    case 0x08:  // Identity Information §3.6.4
      fields.bytes("irk", "Identity resolving key", try r.readBytes(count: 16))
    case 0x09:  // Identity Address Information §3.6.5: address type(1) address(6)
      let type = try r.readUInt8()
      let address = try r.readBDAddr()
      if type <= 1 {
        fields.add("address", "Identity address", .address(address, AddressType(rawValue: type)))
      } else {
        fields.code("address_type", "Address type", type, width: 2, name: nil)
        fields.add("address", "Identity address", .address(address, nil))
      }
      return .identityAddress(address, type: type)
    case 0x0A:  // Signing Information §3.6.6
      fields.bytes("csrk", "Connection signature resolving key", try r.readBytes(count: 16))
    case 0x0B:  // Security Request §3.6.7
      let auth = try r.readUInt8()
      authReq(auth, into: &fields)
      return .securityRequest(authRequirements: auth)
    case 0x0C:  // Pairing Public Key §3.5.6: X(32) Y(32)
      fields.bytes("public_key_x", "Public key X", try r.readBytes(count: 32))
      fields.bytes("public_key_y", "Public key Y", try r.readBytes(count: 32))
    case 0x0D:  // Pairing DHKey Check §3.5.7
      fields.bytes("dhkey_check", "DHKey check", try r.readBytes(count: 16))
    case 0x0E:  // Pairing Keypress Notification §3.5.8
      let type = try r.readUInt8()
      fields.code("notification_type", "Notification type", type, width: 2, name: keypressName(type))
      return .keypressNotification(type: type)
    default:
      if !r.isAtEnd { fields.bytes("data", "Data", r.readRemaining()) }
    }
    return .code(code)
  }

  // MARK: - Bit fields

  /// AuthReq §3.5.1: bonding flags (bits 0-1), MITM (2), SC (3), Keypress (4), CT2 (5).
  static func authReq(_ value: UInt8, into fields: inout FieldList) {
    fields.beginObject("auth_req", "AuthReq")
    defer { fields.end() }
    fields.addVerbose("bits", "Value", .unsigned(UInt64(value), .hex(2)))
    let bonding = value & 0x03
    fields.code("bonding_flags", "Bonding flags", bonding, width: 2, name: bonding == 0 ? "No Bonding" : (bonding == 1 ? "Bonding" : nil))
    fields.flag("mitm", "MITM protection", value & 0x04 != 0)
    fields.flag("sc", "Secure Connections", value & 0x08 != 0)
    fields.flag("keypress", "Keypress notifications", value & 0x10 != 0)
    fields.flag("ct2", "CT2 (h7 supported)", value & 0x20 != 0)
    if value & 0xC0 != 0 { fields.hex("reserved", "Reserved bits", value & 0xC0, width: 2) }
  }

  static let keyBits: [(bit: UInt8, name: Name)] = [(0x01, "EncKey"), (0x02, "IdKey"), (0x04, "SignKey"), (0x08, "LinkKey")]

  /// Key distribution §3.6.1: EncKey (bit 0), IdKey (1), SignKey (2), LinkKey (3); as the
  /// value named by its set bits ("EncKey, IdKey").
  static func keyDistribution(_ value: UInt8, into fields: inout FieldList, key: Name, label: Name) {
    var text = ""
    for entry in keyBits where value & entry.bit != 0 {
      if !text.isEmpty { text += ", " }
      text += entry.name.description
    }
    if value & 0xF0 != 0 {
      if !text.isEmpty { text += ", " }
      text += "reserved " + Hex.prefixed(UInt64(value & 0xF0), width: 2)
    }
    fields.add(key, label, .codeText(UInt64(value), width: 2, name: text.isEmpty ? "none" : text))
  }

  // MARK: - Names (Core Vol 3 Part H)

  package static func ioCapabilityName(_ value: UInt8) -> Name? {
    switch value {
    case 0x00: return "DisplayOnly"
    case 0x01: return "DisplayYesNo"
    case 0x02: return "KeyboardOnly"
    case 0x03: return "NoInputNoOutput"
    case 0x04: return "KeyboardDisplay"
    default: return nil
    }
  }

  package static func oobName(_ value: UInt8) -> Name? {
    switch value {
    case 0x00: return "OOB data not present"
    case 0x01: return "OOB data present"
    default: return nil
    }
  }

  /// Pairing Failed reasons §3.5.5, Table 3.7.
  public static func failureReasonName(_ reason: UInt8) -> Name? {
    switch reason {
    case 0x01: return "Passkey Entry Failed"
    case 0x02: return "OOB Not Available"
    case 0x03: return "Authentication Requirements"
    case 0x04: return "Confirm Value Failed"
    case 0x05: return "Pairing Not Supported"
    case 0x06: return "Encryption Key Size"
    case 0x07: return "Command Not Supported"
    case 0x08: return "Unspecified Reason"
    case 0x09: return "Repeated Attempts"
    case 0x0A: return "Invalid Parameters"
    case 0x0B: return "DHKey Check Failed"
    case 0x0C: return "Numeric Comparison Failed"
    case 0x0D: return "BR/EDR Pairing In Progress"
    case 0x0E: return "Cross-transport Key Derivation/Generation Not Allowed"
    case 0x0F: return "Key Rejected"
    default: return nil
    }
  }

  /// Keypress Notification types §3.5.8.
  package static func keypressName(_ type: UInt8) -> Name? {
    switch type {
    case 0x00: return "Passkey entry started"
    case 0x01: return "Passkey digit entered"
    case 0x02: return "Passkey digit erased"
    case 0x03: return "Passkey cleared"
    case 0x04: return "Passkey entry completed"
    default: return nil
    }
  }
}
