import BLECore

/// Command Complete return parameters (Core Vol 4, Part E, §7, per command).
extension HCICommand {
  /// Decodes Command Complete return parameters of `opcode` that follow the status byte
  /// (the caller has already read and shown the status). Returns false when there is no decoder.
  /// Sets `handle` when the return parameters name a connection handle.
  /// Nothing after the status (a failed command answered with its status alone) decodes to
  /// no fields rather than truncation.
  static func decodeReturnParameters(opcode: UInt16, _ p: inout ByteReader, into fields: inout FieldList, handle: inout UInt16?) throws(DecodeError) -> Bool {
    // A failed command may answer with the status alone (Unknown HCI Command, Command
    // Disallowed): not truncation. Every decoder below reads before it adds a field, so trying
    // one on no bytes adds nothing.
    if p.isAtEnd {
      do { return try returnParameters(opcode: opcode, &p, into: &fields, handle: &handle) } catch { return true }
    }
    return try returnParameters(opcode: opcode, &p, into: &fields, handle: &handle)
  }

  static func returnParameters(opcode: UInt16, _ p: inout ByteReader, into fields: inout FieldList, handle: inout UInt16?) throws(DecodeError) -> Bool {
    switch opcode {
    // Status only.
    case 0x0C01, 0x0C03, 0x0C13, 0x0C31, 0x0C33, 0x0C63, 0x0C6D,
      0x2001, 0x2005, 0x2006, 0x2008, 0x2009, 0x200A, 0x200B, 0x200C, 0x200E,
      0x2010, 0x2011, 0x2012, 0x2014, 0x2024, 0x2027, 0x2028, 0x2029, 0x202D, 0x202E,
      0x2031, 0x2035, 0x2037, 0x2038, 0x2039, 0x203C, 0x203D, 0x2041, 0x2042, 0x204E, 0x2074:
      return true

    // The connection handle only.
    case 0x0C7C,  // Write Authenticated Payload Timeout
      0x201A, 0x201B,  // LE Long Term Key Request Reply / Negative Reply
      0x2020, 0x2021,  // LE Remote Connection Parameter Request Reply / Negative Reply
      0x2022:  // LE Set Data Length
      handle = try returnHandle(&p, into: &fields)

    case 0x0C14:  // Read Local Name
      try localName(&p, into: &fields)
    case 0x0C2D:  // Read Transmit Power Level
      handle = try returnHandle(&p, into: &fields)
      fields.measure("tx_power", "TX power level", try p.readInt8(), scale: 1, unit: "dBm")
    case 0x0C6C:  // Read LE Host Supported
      let le = try p.readUInt8()
      fields.code("le_supported_host", "LE supported (host)", le, width: 2, name: enableName(le))
      fields.uint("simultaneous_le_host", "Simultaneous LE host (unused)", try p.readUInt8())
    case 0x0C7B:  // Read Authenticated Payload Timeout
      handle = try returnHandle(&p, into: &fields)
      fields.measure("timeout", "Authenticated payload timeout", try p.readUInt16LE(), scale: 10, unit: "ms")
    case 0x1001:  // Read Local Version Information §7.4.1
      let hciVersion = try p.readUInt8()
      fields.code("hci_version", "HCI version", hciVersion, width: 2, name: coreVersionName(hciVersion))
      fields.hex("hci_revision", "HCI revision", try p.readUInt16LE(), width: 4)
      let lmpVersion = try p.readUInt8()
      fields.code("lmp_version", "LMP/LL version", lmpVersion, width: 2, name: coreVersionName(lmpVersion))
      let company = try p.readUInt16LE()
      fields.code("manufacturer", "Manufacturer", company, width: 4, name: AssignedNumbers.companyName(company))
      fields.hex("lmp_subversion", "LMP/LL subversion", try p.readUInt16LE(), width: 4)
    case 0x1002:  // Read Local Supported Commands §7.4.2
      fields.bytes("supported_commands", "Supported commands", try p.readBytes(count: 64))
    case 0x1003:  // Read Local Supported Features §7.4.3
      fields.hex("lmp_features", "LMP features", try p.readUInt64LE(), width: 16)
    case 0x1004:  // Read Local Extended Features §7.4.4
      fields.uint("page", "Page number", try p.readUInt8())
      fields.uint("max_page", "Maximum page number", try p.readUInt8())
      fields.hex("lmp_features", "Extended LMP features", try p.readUInt64LE(), width: 16)
    case 0x1005:  // Read Buffer Size §7.4.5
      fields.uint("acl_data_length", "ACL data packet length", try p.readUInt16LE())
      fields.uint("sco_data_length", "SCO data packet length", try p.readUInt8())
      fields.uint("total_acl_packets", "Total ACL data packets", try p.readUInt16LE())
      fields.uint("total_sco_packets", "Total SCO data packets", try p.readUInt16LE())
    case 0x1009:  // Read BD_ADDR §7.4.6
      fields.add("address", "Address", .address(try p.readBDAddr(), .publicDevice))
    case 0x1405:  // Read RSSI §7.5.4
      handle = try returnHandle(&p, into: &fields)
      fields.measure("rssi", "RSSI", try p.readInt8(), scale: 1, unit: "dBm")
    case 0x2002, 0x2060:  // LE Read Buffer Size v1 / v2 §7.8.2
      fields.uint("le_acl_data_length", "LE ACL data packet length", try p.readUInt16LE())
      fields.uint("total_le_acl_packets", "Total LE ACL data packets", try p.readUInt8())
      if opcode == 0x2060 {
        fields.uint("iso_data_length", "ISO data packet length", try p.readUInt16LE())
        fields.uint("total_iso_packets", "Total ISO data packets", try p.readUInt8())
      }
    case 0x2003:  // LE Read Local Supported Features §7.8.3
      fields.hex("le_features", "LE features", try p.readUInt64LE(), width: 16)
    case 0x2007:  // LE Read Advertising Physical Channel Tx Power §7.8.6
      fields.measure("tx_power", "TX power level", try p.readInt8(), scale: 1, unit: "dBm")
    case 0x200F:  // LE Read Filter Accept List Size §7.8.14
      fields.uint("list_size", "Filter accept list size", try p.readUInt8())
    case 0x2015:  // LE Read Channel Map §7.8.20
      handle = try returnHandle(&p, into: &fields)
      fields.bytes("channel_map", "Channel map", try p.readBytes(count: 5))
    case 0x2017:  // LE Encrypt §7.8.22
      fields.bytes("encrypted_data", "Encrypted data", try p.readBytes(count: 16))
    case 0x2018:  // LE Rand §7.8.23
      fields.hex("random_number", "Random number", try p.readUInt64LE(), width: 16)
    case 0x201C:  // LE Read Supported States §7.8.27
      fields.hex("le_states", "LE states", try p.readUInt64LE(), width: 16)
    case 0x2023:  // LE Read Suggested Default Data Length §7.8.34
      fields.uint("suggested_max_tx_octets", "Suggested max TX octets", try p.readUInt16LE())
      fields.measure("suggested_max_tx_time", "Suggested max TX time", try p.readUInt16LE(), scale: 1, unit: "us")
    case 0x202A:  // LE Read Resolving List Size §7.8.41
      fields.uint("list_size", "Resolving list size", try p.readUInt8())
    case 0x202F:  // LE Read Maximum Data Length §7.8.46
      fields.uint("max_tx_octets", "Supported max TX octets", try p.readUInt16LE())
      fields.measure("max_tx_time", "Supported max TX time", try p.readUInt16LE(), scale: 1, unit: "us")
      fields.uint("max_rx_octets", "Supported max RX octets", try p.readUInt16LE())
      fields.measure("max_rx_time", "Supported max RX time", try p.readUInt16LE(), scale: 1, unit: "us")
    case 0x2030:  // LE Read PHY §7.8.47
      handle = try returnHandle(&p, into: &fields)
      let tx = try p.readUInt8()
      fields.code("tx_phy", "TX PHY", tx, width: 2, name: phyName(tx))
      let rx = try p.readUInt8()
      fields.code("rx_phy", "RX PHY", rx, width: 2, name: phyName(rx))
    case 0x2036, 0x207F:  // LE Set Extended Advertising Parameters v1 / v2 §7.8.53
      fields.measure("selected_tx_power", "Selected TX power", try p.readInt8(), scale: 1, unit: "dBm")
    case 0x203A:  // LE Read Maximum Advertising Data Length §7.8.57
      fields.uint("max_adv_data_length", "Max advertising data length", try p.readUInt16LE())
    case 0x203B:  // LE Read Number of Supported Advertising Sets §7.8.58
      fields.uint("num_adv_sets", "Supported advertising sets", try p.readUInt8())
    case 0x204B:  // LE Read Transmit Power §7.8.74
      fields.measure("min_tx_power", "Min TX power", try p.readInt8(), scale: 1, unit: "dBm")
      fields.measure("max_tx_power", "Max TX power", try p.readInt8(), scale: 1, unit: "dBm")
    default:
      return try classicReturnParameters(opcode: opcode, &p, into: &fields, handle: &handle)
    }
    return true
  }
}
