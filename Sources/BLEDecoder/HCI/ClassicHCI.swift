import BLECore

/// Parameters shared by the BR/EDR (Classic) commands and events, and their names.
///
/// Layouts and values are from Core Vol 4, Part E, §7 (section numbers per parameter) and the
/// Assigned Numbers document (Class of Device, §2.8).
package enum ClassicHCI {
  // MARK: - Parameter readers

  /// A BD_ADDR. BR/EDR addresses carry no type on the wire, so none is shown (as for
  /// Connection Complete).
  @discardableResult
  static func address(_ fields: inout FieldList, _ p: inout ByteReader, key: Name = "address", label: Name = "Address") throws(DecodeError) -> BDAddr {
    let address = try p.readBDAddr()
    fields.add(key, label, .address(address, nil))
    return address
  }

  /// Class_Of_Device (3 octets): bits 2–7 minor device class, 8–12 major device class, 13–23
  /// major service classes (Assigned Numbers §2.8). The whole value is a number (24 bits fit
  /// every JSON reader), with the major class and the service classes beside it.
  @discardableResult
  static func classOfDevice(_ fields: inout FieldList, _ p: inout ByteReader) throws(DecodeError) -> UInt32 {
    let value = try p.readUInt24LE()
    fields.add("class_of_device", "Class of device", .unsigned(UInt64(value), .hex(6)))
    let major = UInt8((value >> 8) & 0x1F)
    fields.code("major_device_class", "Major device class", major, width: 2, name: majorDeviceClassName(major))
    fields.addVerbose("minor_device_class", "Minor device class", .unsigned(UInt64((value >> 2) & 0x3F), .hex(2)))
    let services = UInt64(value >> 13)
    fields.add("major_service_classes", "Major service classes", .codeText(services, width: 4, name: HCICommand.bitText(services, serviceClassBits)))
    return value
  }

  /// Clock_Offset (2 octets): bits 0–14 are bits 16–2 of the peer's clock minus the local clock.
  /// In commands (Create Connection §7.1.5, Remote Name Request §7.1.19) bit 15 says whether the
  /// offset is valid; in events it is reserved.
  static func clockOffset(_ fields: inout FieldList, _ p: inout ByteReader, validFlag: Bool) throws(DecodeError) {
    let value = try p.readUInt16LE()
    fields.add("clock_offset", "Clock offset", .unsigned(UInt64(value & 0x7FFF), .hex(4)))
    if validFlag { fields.flag("clock_offset_valid", "Clock offset valid", value & 0x8000 != 0) }
  }

  static func pageScanRepetitionMode(_ fields: inout FieldList, _ p: inout ByteReader) throws(DecodeError) -> UInt8 {
    let mode = try p.readUInt8()
    fields.code("page_scan_repetition_mode", "Page scan repetition mode", mode, width: 2, name: pageScanRepetitionModeName(mode))
    return mode
  }

  /// Reserved octets (formerly page scan period mode and page scan mode): skipped.
  static func reserved(_ fields: inout FieldList, _ p: inout ByteReader, count: Int) throws(DecodeError) {
    try p.skip(count)
  }

  /// ACL Packet_Type (Create Connection §7.1.5, Change Connection Packet Type §7.1.14).
  static func packetType(_ fields: inout FieldList, _ p: inout ByteReader) throws(DecodeError) {
    let value = UInt64(try p.readUInt16LE())
    fields.add("packet_type", "Packet type", .codeText(value, width: 4, name: HCICommand.bitText(value, aclPacketTypeBits)))
  }

  /// Synchronous Packet_Type (Setup Synchronous Connection §7.1.26).
  static func synchronousPacketType(_ fields: inout FieldList, _ p: inout ByteReader) throws(DecodeError) {
    let value = UInt64(try p.readUInt16LE())
    fields.add("packet_type", "Packet type", .codeText(value, width: 4, name: HCICommand.bitText(value, synchronousPacketTypeBits)))
  }

  /// Link_Policy_Settings (§7.2.10).
  static func linkPolicy(_ fields: inout FieldList, _ p: inout ByteReader) throws(DecodeError) -> UInt16 {
    let value = try p.readUInt16LE()
    fields.add("link_policy", "Link policy", .codeText(UInt64(value), width: 4, name: linkPolicyText(value)))
    return value
  }

  /// The link policy settings set ("role switch, sniff mode").
  package static func linkPolicyText(_ value: UInt16) -> String { HCICommand.bitText(UInt64(value), linkPolicyBits) }

  static func role(_ fields: inout FieldList, _ p: inout ByteReader) throws(DecodeError) -> UInt8 {
    let role = try p.readUInt8()
    fields.code("role", "Role", role, width: 2, name: LEMetaEvent.roleName(role))
    return role
  }

  /// A 16-byte link key, in the order sent.
  static func linkKey(_ fields: inout FieldList, _ p: inout ByteReader) throws(DecodeError) {
    fields.bytes("link_key", "Link key", try p.readBytes(count: 16))
  }

  /// IO_Capability, OOB_Data_Present and Authentication_Requirements (IO Capability Request
  /// Reply §7.1.29, IO Capability Response §7.7.41); returns the capability and the
  /// authentication requirements.
  static func ioCapabilities(_ fields: inout FieldList, _ p: inout ByteReader) throws(DecodeError) -> (UInt8, UInt8) {
    let io = try p.readUInt8()
    fields.code("io_capability", "IO capability", io, width: 2, name: ioCapabilityName(io))
    let oob = try p.readUInt8()
    fields.code("oob_data_present", "OOB data present", oob, width: 2, name: oobDataPresentName(oob))
    let auth = try p.readUInt8()
    fields.code("authentication_requirements", "Authentication requirements", auth, width: 2, name: authenticationRequirementsName(auth))
    return (io, auth)
  }


  // MARK: - Names

  /// Page_Scan_Repetition_Mode (§7.1.5).
  package static func pageScanRepetitionModeName(_ value: UInt8) -> Name? {
    switch value {
    case 0: return "R0"
    case 1: return "R1"
    case 2: return "R2"
    default: return nil
    }
  }

  /// ACL packet types (§7.1.5): the basic rate types that may be used, and the EDR types that
  /// may not.
  static let aclPacketTypeBits: [(bit: UInt64, name: Name)] = [
    (0x0002, "no 2-DH1"), (0x0004, "no 3-DH1"), (0x0008, "DM1"), (0x0010, "DH1"),
    (0x0100, "no 2-DH3"), (0x0200, "no 3-DH3"), (0x0400, "DM3"), (0x0800, "DH3"),
    (0x1000, "no 2-DH5"), (0x2000, "no 3-DH5"), (0x4000, "DM5"), (0x8000, "DH5"),
  ]

  /// Synchronous packet types (§7.1.26).
  static let synchronousPacketTypeBits: [(bit: UInt64, name: Name)] = [
    (0x0001, "HV1"), (0x0002, "HV2"), (0x0004, "HV3"), (0x0008, "EV3"), (0x0010, "EV4"), (0x0020, "EV5"),
    (0x0040, "no 2-EV3"), (0x0080, "no 3-EV3"), (0x0100, "no 2-EV5"), (0x0200, "no 3-EV5"),
  ]

  /// Link_Policy_Settings (§7.2.10); bit 3 was park state before Core 5.0.
  static let linkPolicyBits: [(bit: UInt64, name: Name)] = [
    (0x0001, "role switch"), (0x0002, "hold mode"), (0x0004, "sniff mode"), (0x0008, "park state"),
  ]

  /// Major service classes, bits 13–23 of Class_Of_Device counted from bit 13.
  static let serviceClassBits: [(bit: UInt64, name: Name)] = [
    (0x001, "Limited Discoverable Mode"), (0x002, "LE Audio"), (0x008, "Positioning"), (0x010, "Networking"),
    (0x020, "Rendering"), (0x040, "Capturing"), (0x080, "Object Transfer"), (0x100, "Audio"),
    (0x200, "Telephony"), (0x400, "Information"),
  ]

  package static func majorDeviceClassName(_ value: UInt8) -> Name? {
    switch value {
    case 0x00: return "Miscellaneous"
    case 0x01: return "Computer"
    case 0x02: return "Phone"
    case 0x03: return "LAN/Network Access Point"
    case 0x04: return "Audio/Video"
    case 0x05: return "Peripheral"
    case 0x06: return "Imaging"
    case 0x07: return "Wearable"
    case 0x08: return "Toy"
    case 0x09: return "Health"
    case 0x1F: return "Uncategorized"
    default: return nil
    }
  }

  /// Allow_Role_Switch (§7.1.5).
  package static func allowRoleSwitchName(_ value: UInt8) -> Name? {
    switch value {
    case 0: return "stay central, refuse a role switch"
    case 1: return "may become peripheral"
    default: return nil
    }
  }

  /// Role of Accept Connection Request (§7.1.8).
  package static func acceptRoleName(_ value: UInt8) -> Name? {
    switch value {
    case 0: return "become central"
    case 1: return "remain peripheral"
    default: return nil
    }
  }

  /// Scan_Enable (§7.3.18).
  package static func scanEnableName(_ value: UInt8) -> Name? {
    switch value {
    case 0: return "no scans"
    case 1: return "inquiry scan"
    case 2: return "page scan"
    case 3: return "inquiry and page scan"
    default: return nil
    }
  }

  /// Key_Type of Link Key Notification (§7.7.24).
  package static func keyTypeName(_ value: UInt8) -> Name? {
    switch value {
    case 0: return "Combination Key"
    case 1: return "Local Unit Key"
    case 2: return "Remote Unit Key"
    case 3: return "Debug Combination Key"
    case 4: return "Unauthenticated Combination Key (P-192)"
    case 5: return "Authenticated Combination Key (P-192)"
    case 6: return "Changed Combination Key"
    case 7: return "Unauthenticated Combination Key (P-256)"
    case 8: return "Authenticated Combination Key (P-256)"
    default: return nil
    }
  }

  /// IO_Capability (§7.1.29).
  package static func ioCapabilityName(_ value: UInt8) -> Name? {
    switch value {
    case 0: return "DisplayOnly"
    case 1: return "DisplayYesNo"
    case 2: return "KeyboardOnly"
    case 3: return "NoInputNoOutput"
    default: return nil
    }
  }

  /// OOB_Data_Present (§7.1.29).
  package static func oobDataPresentName(_ value: UInt8) -> Name? {
    switch value {
    case 0: return "not present"
    case 1: return "P-192 present"
    case 2: return "P-256 present"
    case 3: return "P-192 and P-256 present"
    default: return nil
    }
  }

  /// Authentication_Requirements (§7.1.29).
  package static func authenticationRequirementsName(_ value: UInt8) -> Name? {
    switch value {
    case 0: return "no MITM, no bonding"
    case 1: return "MITM, no bonding"
    case 2: return "no MITM, dedicated bonding"
    case 3: return "MITM, dedicated bonding"
    case 4: return "no MITM, general bonding"
    case 5: return "MITM, general bonding"
    default: return nil
    }
  }

  /// Current_Mode of Mode Change (§7.7.20); 3 was park state before Core 5.0.
  package static func modeName(_ value: UInt8) -> Name? {
    switch value {
    case 0: return "active"
    case 1: return "hold"
    case 2: return "sniff"
    case 3: return "park"
    default: return nil
    }
  }

  /// Link_Type (§7.7.3, §7.7.4, §7.7.35).
  package static func linkTypeName(_ value: UInt8) -> Name? {
    switch value {
    case 0: return "SCO"
    case 1: return "ACL"
    case 2: return "eSCO"
    default: return nil
    }
  }

  /// Inquiry_Mode (§7.3.50).
  package static func inquiryModeName(_ value: UInt8) -> Name? {
    switch value {
    case 0: return "standard"
    case 1: return "with RSSI"
    case 2: return "with RSSI or extended"
    default: return nil
    }
  }

  /// Inquiry_Scan_Type (§7.3.48) and Page_Scan_Type (§7.3.52).
  package static func scanTypeName(_ value: UInt8) -> Name? {
    switch value {
    case 0: return "standard"
    case 1: return "interlaced"
    default: return nil
    }
  }

  /// Air_Mode of Synchronous Connection Complete (§7.7.35).
  package static func airModeName(_ value: UInt8) -> Name? {
    switch value {
    case 0: return "µ-law log"
    case 1: return "A-law log"
    case 2: return "CVSD"
    case 3: return "transparent"
    default: return nil
    }
  }

  /// Retransmission_Effort (§7.1.26).
  package static func retransmissionEffortName(_ value: UInt8) -> Name? {
    switch value {
    case 0: return "no retransmissions"
    case 1: return "at least one, optimize for power"
    case 2: return "at least one, optimize for link quality"
    case 0xFF: return "don't care"
    default: return nil
    }
  }

  /// Read_All_Flag / Delete_All_Flag (§7.3.8, §7.3.10).
  package static func allFlagName(_ value: UInt8) -> Name? {
    switch value {
    case 0: return "the given address"
    case 1: return "all"
    default: return nil
    }
  }

  /// Keypress notification types (§7.7.49).
  package static func keypressName(_ value: UInt8) -> Name? {
    switch value {
    case 0: return "passkey entry started"
    case 1: return "digit entered"
    case 2: return "digit erased"
    case 3: return "cleared"
    case 4: return "passkey entry completed"
    default: return nil
    }
  }

  /// A count, then that many (BD_ADDR, link key) pairs (Write Stored Link Key, Return Link
  /// Keys); returns the count.
  static func storedLinkKeys(_ fields: inout FieldList, _ p: inout ByteReader) throws(DecodeError) -> UInt8 {
    let count = try p.readUInt8()
    fields.uint("num_keys", "Number of keys", count)
    try p.require(Int(count) * 22)
    fields.beginArray("keys", "Keys")
    defer { fields.end() }
    for _ in 0..<count {
      fields.beginObject("", "Key")
      defer { fields.end() }
      _ = try address(&fields, &p)
      try linkKey(&fields, &p)
    }
    return count
  }
}
