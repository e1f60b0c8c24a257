import BLECore

/// Command parameters and Command Complete return parameters of the commands seen in LE
/// central and peripheral flows (controller setup, scanning, advertising, connecting,
/// encryption, data length and PHY updates).
///
/// Layouts follow Core Vol 4, Part E, §7 (section numbers are given per command). Arrayed
/// parameters (`Param[i]`) are decoded one element at a time with the fields of one element
/// adjacent (§5.2), which is how hosts and controllers send them.
extension HCICommand {
  /// Decodes the parameters of command `opcode`; returns false when there is no decoder for it
  /// (the caller then shows the raw bytes). Leaves unread bytes for the caller to flag.
  static func decodeParameters(opcode: UInt16, _ p: inout ByteReader, into fields: inout FieldList, summary: inout String, context: inout Context) throws(DecodeError) -> Bool {
    switch opcode {
    // Commands without parameters.
    case 0x0C03,  // Reset §7.3.2
      0x0C14,  // Read Local Name §7.3.12
      0x0C6C,  // Read LE Host Supported §7.3.78
      0x1001,  // Read Local Version Information §7.4.1
      0x1002,  // Read Local Supported Commands §7.4.2
      0x1003,  // Read Local Supported Features §7.4.3
      0x1005,  // Read Buffer Size §7.4.5
      0x1009,  // Read BD_ADDR §7.4.6
      0x2002,  // LE Read Buffer Size v1 §7.8.2
      0x2003,  // LE Read Local Supported Features §7.8.3
      0x2007,  // LE Read Advertising Physical Channel Tx Power §7.8.6
      0x200E,  // LE Create Connection Cancel §7.8.13
      0x200F,  // LE Read Filter Accept List Size §7.8.14
      0x2010,  // LE Clear Filter Accept List §7.8.15
      0x2018,  // LE Rand §7.8.23
      0x201C,  // LE Read Supported States §7.8.27
      0x2023,  // LE Read Suggested Default Data Length §7.8.34
      0x2025,  // LE Read Local P-256 Public Key §7.8.36
      0x2029,  // LE Clear Resolving List §7.8.40
      0x202A,  // LE Read Resolving List Size §7.8.41
      0x202F,  // LE Read Maximum Data Length §7.8.46
      0x203A,  // LE Read Maximum Advertising Data Length §7.8.57
      0x203B,  // LE Read Number of Supported Advertising Sets §7.8.58
      0x203D,  // LE Clear Advertising Sets §7.8.60
      0x204B,  // LE Read Transmit Power §7.8.74
      0x2060:  // LE Read Buffer Size v2 §7.8.2
      return true

    // Event masks (§7.3.1, §7.3.69, §7.8.1): 8 bytes, bit n = event n + 1.
    case 0x0C01:
      fields.hex("event_mask", "Event mask", try p.readUInt64LE(), width: 16)
    case 0x0C63:
      fields.hex("event_mask_page_2", "Event mask page 2", try p.readUInt64LE(), width: 16)
    case 0x2001:
      fields.hex("le_event_mask", "LE event mask", try p.readUInt64LE(), width: 16)

    // Commands whose only parameter is a connection handle.
    case 0x041D,  // Read Remote Version Information §7.1.23
      0x0C7B,  // Read Authenticated Payload Timeout §7.3.93
      0x1405,  // Read RSSI §7.5.4
      0x2015,  // LE Read Channel Map §7.8.20
      0x2016,  // LE Read Remote Features §7.8.21
      0x201B,  // LE Long Term Key Request Negative Reply §7.8.26
      0x2030:  // LE Read PHY §7.8.47
      try connectionHandle(&p, into: &fields, summary: &summary, context: &context)

    case 0x0406: try disconnect(&p, into: &fields, summary: &summary, context: &context)
    case 0x0C13: try localName(&p, into: &fields)
    case 0x0C2D:  // Read Transmit Power Level §7.3.35
      try connectionHandle(&p, into: &fields, summary: &summary, context: &context)
      let type = try p.readUInt8()
      fields.code("type", "Type", type, width: 2, name: transmitPowerLevelTypeName(type))
    case 0x0C31:  // Set Controller To Host Flow Control §7.3.38
      let enable = try p.readUInt8()
      fields.code("flow_control", "Flow control", enable, width: 2, name: flowControlName(enable))
    case 0x0C33:  // Host Buffer Size §7.3.39
      fields.uint("acl_data_length", "Host ACL data packet length", try p.readUInt16LE())
      fields.uint("sco_data_length", "Host SCO data packet length", try p.readUInt8())
      fields.uint("total_acl_packets", "Host total ACL data packets", try p.readUInt16LE())
      fields.uint("total_sco_packets", "Host total SCO data packets", try p.readUInt16LE())
    case 0x0C6D:  // Write LE Host Supported §7.3.79
      let le = try p.readUInt8()
      fields.code("le_supported_host", "LE supported (host)", le, width: 2, name: enableName(le))
      fields.uint("simultaneous_le_host", "Simultaneous LE host (unused)", try p.readUInt8())
      summary = le == 0 ? "disable" : "enable"
    case 0x0C7C:  // Write Authenticated Payload Timeout §7.3.94
      try connectionHandle(&p, into: &fields, summary: &summary, context: &context)
      fields.measure("timeout", "Authenticated payload timeout", try p.readUInt16LE(), scale: 10, unit: "ms")
    case 0x1004:  // Read Local Extended Features §7.4.4
      fields.uint("page", "Page number", try p.readUInt8())

    case 0x2005:  // LE Set Random Address §7.8.4
      let address = try p.readBDAddr()
      fields.add("address", "Random address", .address(address, .randomDevice))
      summary = address.description
    case 0x2006: try advertisingParameters(&p, into: &fields, summary: &summary)
    case 0x2008:
      try legacyAdvertisingData(&p, into: &fields, summary: &summary, label: "Advertising data", field: "advertising data length")
    case 0x2009:
      try legacyAdvertisingData(&p, into: &fields, summary: &summary, label: "Scan response data", field: "scan response data length")
    case 0x200A:  // LE Set Advertising Enable §7.8.9
      let enable = try p.readUInt8()
      fields.code("enable", "Advertising", enable, width: 2, name: enableName(enable))
      summary = enable == 0 ? "disable" : "enable"
    case 0x200B: try scanParameters(&p, into: &fields, summary: &summary)
    case 0x200C: try scanEnable(&p, into: &fields, summary: &summary, extended: false)
    case 0x200D: try createConnection(&p, into: &fields, summary: &summary)
    case 0x2011, 0x2012:  // LE Add/Remove Device To/From Filter Accept List §7.8.16-17
      let type = try p.readUInt8()
      let address = try p.readBDAddr()
      fields.add("address", "Address", .address(address, AddressType(rawValue: type)))
      summary = type == 0xFF ? "anonymous advertisers" : address.description
    case 0x2013: try connectionUpdate(&p, into: &fields, summary: &summary, context: &context)
    case 0x2017:  // LE Encrypt §7.8.22
      fields.bytes("key", "Key", try p.readBytes(count: 16))
      fields.bytes("plaintext", "Plaintext data", try p.readBytes(count: 16))
    case 0x2019: try startEncryption(&p, into: &fields, summary: &summary, context: &context)
    case 0x201A:  // LE Long Term Key Request Reply §7.8.25
      try connectionHandle(&p, into: &fields, summary: &summary, context: &context)
      fields.bytes("ltk", "Long term key", try p.readBytes(count: 16))
    case 0x2020:  // LE Remote Connection Parameter Request Reply §7.8.31
      try connectionUpdate(&p, into: &fields, summary: &summary, context: &context)
    case 0x2021:  // LE Remote Connection Parameter Request Negative Reply §7.8.32
      try connectionHandle(&p, into: &fields, summary: &summary, context: &context)
      let reason = try p.readUInt8()
      fields.code("reason", "Reason", reason, width: 2, name: AssignedNumbers.hciErrorName(reason))
    case 0x2022:  // LE Set Data Length §7.8.33
      try connectionHandle(&p, into: &fields, summary: &summary, context: &context)
      fields.uint("tx_octets", "TX octets", try p.readUInt16LE())
      fields.measure("tx_time", "TX time", try p.readUInt16LE(), scale: 1, unit: "us")
    case 0x2024:  // LE Write Suggested Default Data Length §7.8.35
      fields.uint("suggested_max_tx_octets", "Suggested max TX octets", try p.readUInt16LE())
      fields.measure("suggested_max_tx_time", "Suggested max TX time", try p.readUInt16LE(), scale: 1, unit: "us")
    case 0x2027:  // LE Add Device To Resolving List §7.8.38
      try identityAddress(&p, into: &fields, summary: &summary)
      fields.bytes("peer_irk", "Peer IRK", try p.readBytes(count: 16))
      fields.bytes("local_irk", "Local IRK", try p.readBytes(count: 16))
    case 0x2028:  // LE Remove Device From Resolving List §7.8.39
      try identityAddress(&p, into: &fields, summary: &summary)
    case 0x202D:  // LE Set Address Resolution Enable §7.8.44
      let enable = try p.readUInt8()
      fields.code("enable", "Address resolution", enable, width: 2, name: enableName(enable))
      summary = enable == 0 ? "disable" : "enable"
    case 0x202E:  // LE Set Resolvable Private Address Timeout §7.8.45
      fields.measure("rpa_timeout", "RPA timeout", try p.readUInt16LE(), scale: 1, unit: "s")
    case 0x2031:  // LE Set Default PHY §7.8.48
      try phyPreferences(&p, into: &fields)
    case 0x2032:  // LE Set PHY §7.8.49
      try connectionHandle(&p, into: &fields, summary: &summary, context: &context)
      try phyPreferences(&p, into: &fields)
      let options = try p.readUInt16LE()
      fields.code("phy_options", "PHY options", options, width: 4, name: phyOptionsName(options))
    case 0x2035:  // LE Set Advertising Set Random Address §7.8.52
      fields.uint("adv_handle", "Advertising handle", try p.readUInt8())
      let address = try p.readBDAddr()
      fields.add("address", "Random address", .address(address, .randomDevice))
      summary = address.description
    case 0x2036: try extendedAdvertisingParameters(&p, into: &fields, summary: &summary, v2: false)
    case 0x207F: try extendedAdvertisingParameters(&p, into: &fields, summary: &summary, v2: true)
    case 0x2037:
      try extendedAdvertisingData(&p, into: &fields, summary: &summary, label: "Advertising data")
    case 0x2038:
      try extendedAdvertisingData(&p, into: &fields, summary: &summary, label: "Scan response data")
    case 0x2039: try extendedAdvertisingEnable(&p, into: &fields, summary: &summary)
    case 0x203C:  // LE Remove Advertising Set §7.8.59
      let handle = try p.readUInt8()
      fields.uint("adv_handle", "Advertising handle", handle)
      summary = "set \(handle)"
    case 0x2041: try extendedScanParameters(&p, into: &fields, summary: &summary)
    case 0x2042: try scanEnable(&p, into: &fields, summary: &summary, extended: true)
    case 0x2043: try extendedCreateConnection(&p, into: &fields, summary: &summary, v2: false)
    case 0x2085: try extendedCreateConnection(&p, into: &fields, summary: &summary, v2: true)
    case 0x204E:  // LE Set Privacy Mode §7.8.77
      try identityAddress(&p, into: &fields, summary: &summary)
      let mode = try p.readUInt8()
      fields.code("privacy_mode", "Privacy mode", mode, width: 2, name: privacyModeName(mode))
    case 0x2074:  // LE Set Host Feature §7.8.115
      fields.uint("bit_number", "Bit number", try p.readUInt8())
      fields.uint("bit_value", "Bit value", try p.readUInt8())
    default:
      return false
    }
    return true
  }

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

  private static func returnParameters(opcode: UInt16, _ p: inout ByteReader, into fields: inout FieldList, handle: inout UInt16?) throws(DecodeError) -> Bool {
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
      return false
    }
    return true
  }
}

// MARK: - Parameter decoders

extension HCICommand {
  /// A 2-byte connection handle (12 bits; the top 4 bits are reserved and dropped).
  private static func connectionHandle(_ p: inout ByteReader, into fields: inout FieldList, summary: inout String, context: inout Context) throws(DecodeError) {
    let handle = try p.readUInt16LE() & 0x0FFF
    fields.uint("handle", "Handle", handle)
    context.handle = handle
    summary = "handle \(handle)"
  }

  private static func returnHandle(_ p: inout ByteReader, into fields: inout FieldList) throws(DecodeError) -> UInt16 {
    let handle = try p.readUInt16LE() & 0x0FFF
    fields.uint("handle", "Handle", handle)
    return handle
  }

  /// Disconnect §7.1.6: handle(2) reason(1).
  private static func disconnect(_ p: inout ByteReader, into fields: inout FieldList, summary: inout String, context: inout Context) throws(DecodeError) {
    try connectionHandle(&p, into: &fields, summary: &summary, context: &context)
    let reason = try p.readUInt8()
    let name = AssignedNumbers.hciErrorName(reason)
    fields.code("reason", "Reason", reason, width: 2, name: name)
    summary += ", " + (name.map { $0.description } ?? "reason " + Hex.prefixed(UInt64(reason), width: 2))
  }

  /// Write Local Name §7.3.11 / Read Local Name return §7.3.12: 248 bytes, UTF-8, NUL-terminated
  /// when shorter.
  private static func localName(_ p: inout ByteReader, into fields: inout FieldList) throws(DecodeError) {
    let bytes = try p.readBytes(count: 248)
    let end = bytes.firstIndex(of: 0) ?? bytes.endIndex
    fields.add("name", "Name", .text(String(decoding: bytes[bytes.startIndex..<end], as: UTF8.self)))
  }

  /// Peer identity address type(1) and address(6) (resolving list, privacy mode).
  private static func identityAddress(_ p: inout ByteReader, into fields: inout FieldList, summary: inout String) throws(DecodeError) {
    let type = try p.readUInt8()
    let address = try p.readBDAddr()
    fields.add("peer_address", "Peer identity address", .address(address, AddressType(rawValue: type)))
    summary = address.description
  }

  /// LE Set Scan Parameters §7.8.10: type(1) interval(2) window(2) own address type(1) filter policy(1).
  private static func scanParameters(_ p: inout ByteReader, into fields: inout FieldList, summary: inout String) throws(DecodeError) {
    let type = try p.readUInt8()
    fields.code("scan_type", "Scan type", type, width: 2, name: scanTypeName(type))
    fields.measure("scan_interval", "Scan interval", try p.readUInt16LE(), scale: 0.625, unit: "ms")
    fields.measure("scan_window", "Scan window", try p.readUInt16LE(), scale: 0.625, unit: "ms")
    try ownAddressType(&p, into: &fields)
    let policy = try p.readUInt8()
    fields.code("filter_policy", "Filter policy", policy, width: 2, name: scanningFilterPolicyName(policy))
    summary = type == 0 ? "passive" : (type == 1 ? "active" : "")
  }

  /// LE Set Scan Enable §7.8.11: enable(1) filter duplicates(1).
  /// LE Set Extended Scan Enable §7.8.65: the same, then duration(2, ×10 ms) period(2, ×1.28 s).
  private static func scanEnable(_ p: inout ByteReader, into fields: inout FieldList, summary: inout String, extended: Bool) throws(DecodeError) {
    let enable = try p.readUInt8()
    fields.code("enable", "Scanning", enable, width: 2, name: enableName(enable))
    let duplicates = try p.readUInt8()
    fields.code("filter_duplicates", "Filter duplicates", duplicates, width: 2, name: filterDuplicatesName(duplicates))
    if extended {
      fields.measure("duration", "Duration", try p.readUInt16LE(), scale: 10, unit: "ms")
      fields.measure("period", "Period", try p.readUInt16LE(), scale: 1.28, unit: "s")
    }
    summary = enable == 0 ? "disable" : (duplicates == 0 ? "enable" : "enable, filter duplicates")
  }

  /// LE Set Extended Scan Parameters §7.8.64: own address type(1) filter policy(1) PHYs(1),
  /// then per PHY bit set (bit 0 LE 1M, bit 2 LE Coded): type(1) interval(2) window(2).
  private static func extendedScanParameters(_ p: inout ByteReader, into fields: inout FieldList, summary: inout String) throws(DecodeError) {
    try ownAddressType(&p, into: &fields)
    let policy = try p.readUInt8()
    fields.code("filter_policy", "Filter policy", policy, width: 2, name: scanningFilterPolicyName(policy))
    let phys = try p.readUInt8()
    fields.add("scanning_phys", "Scanning PHYs", .codeText(UInt64(phys), width: 2, name: bitText(UInt64(phys), phyBits)))
    fields.beginArray("phys", "Scanning parameters")
    defer { fields.end() }
    var active = false
    for bit in UInt8(0)..<8 where phys & (1 << bit) != 0 {
      fields.beginObject("", phyLabel(bit))
      defer { fields.end() }
      fields.code("phy", "PHY", bit + 1, width: 2, name: phyName(bit + 1))
      let type = try p.readUInt8()
      active = active || type == 1
      fields.code("scan_type", "Scan type", type, width: 2, name: scanTypeName(type))
      fields.measure("scan_interval", "Scan interval", try p.readUInt16LE(), scale: 0.625, unit: "ms")
      fields.measure("scan_window", "Scan window", try p.readUInt16LE(), scale: 0.625, unit: "ms")
    }
    summary = active ? "active" : "passive"
  }

  /// The six connection parameters shared by the connection commands: interval min/max(2 each,
  /// ×1.25 ms) max latency(2) supervision timeout(2, ×10 ms) min/max CE length(2 each, ×0.625 ms).
  private static func connectionParameters(_ p: inout ByteReader, into fields: inout FieldList) throws(DecodeError) {
    fields.measure("conn_interval_min", "Min connection interval", try p.readUInt16LE(), scale: 1.25, unit: "ms")
    fields.measure("conn_interval_max", "Max connection interval", try p.readUInt16LE(), scale: 1.25, unit: "ms")
    fields.uint("max_latency", "Max latency", try p.readUInt16LE())
    fields.measure("supervision_timeout", "Supervision timeout", try p.readUInt16LE(), scale: 10, unit: "ms")
    fields.measure("min_ce_length", "Min CE length", try p.readUInt16LE(), scale: 0.625, unit: "ms")
    fields.measure("max_ce_length", "Max CE length", try p.readUInt16LE(), scale: 0.625, unit: "ms")
  }

  /// LE Create Connection §7.8.12: scan interval(2) window(2) filter policy(1) peer address
  /// type(1) peer address(6) own address type(1) then the connection parameters.
  private static func createConnection(_ p: inout ByteReader, into fields: inout FieldList, summary: inout String) throws(DecodeError) {
    fields.measure("scan_interval", "Scan interval", try p.readUInt16LE(), scale: 0.625, unit: "ms")
    fields.measure("scan_window", "Scan window", try p.readUInt16LE(), scale: 0.625, unit: "ms")
    let policy = try p.readUInt8()
    fields.code("filter_policy", "Initiator filter policy", policy, width: 2, name: initiatorFilterPolicyName(policy))
    let peerType = try p.readUInt8()
    let peer = try p.readBDAddr()
    fields.add("peer_address", "Peer address", .address(peer, AddressType(rawValue: peerType)))
    try ownAddressType(&p, into: &fields)
    try connectionParameters(&p, into: &fields)
    summary = policy == 0 ? peer.description : "filter accept list"
  }

  /// LE Extended Create Connection §7.8.66: filter policy(1) own address type(1) peer address
  /// type(1) peer address(6) initiating PHYs(1), then per PHY bit set (bit 0 LE 1M, bit 1 LE 2M,
  /// bit 2 LE Coded): scan interval(2) window(2) and the connection parameters.
  /// v2 (0x2085) starts with advertising handle(1) and subevent(1).
  private static func extendedCreateConnection(_ p: inout ByteReader, into fields: inout FieldList, summary: inout String, v2: Bool) throws(DecodeError) {
    if v2 {
      fields.uint("adv_handle", "Advertising handle", try p.readUInt8())
      fields.uint("subevent", "Subevent", try p.readUInt8())
    }
    let policy = try p.readUInt8()
    fields.code("filter_policy", "Initiator filter policy", policy, width: 2, name: initiatorFilterPolicyName(policy))
    try ownAddressType(&p, into: &fields)
    let peerType = try p.readUInt8()
    let peer = try p.readBDAddr()
    fields.add("peer_address", "Peer address", .address(peer, AddressType(rawValue: peerType)))
    summary = policy == 0 ? peer.description : "filter accept list"
    let phys = try p.readUInt8()
    fields.add("initiating_phys", "Initiating PHYs", .codeText(UInt64(phys), width: 2, name: bitText(UInt64(phys), phyBits)))
    fields.beginArray("phys", "Connection parameters")
    defer { fields.end() }
    for bit in UInt8(0)..<8 where phys & (1 << bit) != 0 {
      fields.beginObject("", phyLabel(bit))
      defer { fields.end() }
      fields.code("phy", "PHY", bit + 1, width: 2, name: phyName(bit + 1))
      fields.measure("scan_interval", "Scan interval", try p.readUInt16LE(), scale: 0.625, unit: "ms")
      fields.measure("scan_window", "Scan window", try p.readUInt16LE(), scale: 0.625, unit: "ms")
      try connectionParameters(&p, into: &fields)
    }
  }

  /// LE Connection Update §7.8.18 and LE Remote Connection Parameter Request Reply §7.8.31:
  /// handle(2) then the connection parameters.
  private static func connectionUpdate(_ p: inout ByteReader, into fields: inout FieldList, summary: inout String, context: inout Context) throws(DecodeError) {
    try connectionHandle(&p, into: &fields, summary: &summary, context: &context)
    try connectionParameters(&p, into: &fields)
  }

  /// LE Start Encryption §7.8.24: handle(2) random number(8) EDIV(2) LTK(16).
  private static func startEncryption(_ p: inout ByteReader, into fields: inout FieldList, summary: inout String, context: inout Context) throws(DecodeError) {
    try connectionHandle(&p, into: &fields, summary: &summary, context: &context)
    fields.hex("random_number", "Random number", try p.readUInt64LE(), width: 16)
    fields.hex("ediv", "Encrypted diversifier", try p.readUInt16LE(), width: 4)
    fields.bytes("ltk", "Long term key", try p.readBytes(count: 16))
  }

  /// LE Set Default PHY §7.8.48 (and the middle of LE Set PHY §7.8.49):
  /// all PHYs(1) TX PHYs(1) RX PHYs(1).
  private static func phyPreferences(_ p: inout ByteReader, into fields: inout FieldList) throws(DecodeError) {
    let all = try p.readUInt8()
    fields.add("all_phys", "All PHYs", .codeText(UInt64(all), width: 2, name: bitText(UInt64(all), allPhysBits)))
    let tx = try p.readUInt8()
    fields.add("tx_phys", "TX PHYs", .codeText(UInt64(tx), width: 2, name: bitText(UInt64(tx), phyBits)))
    let rx = try p.readUInt8()
    fields.add("rx_phys", "RX PHYs", .codeText(UInt64(rx), width: 2, name: bitText(UInt64(rx), phyBits)))
  }

  /// LE Set Advertising Parameters §7.8.5: interval min/max(2 each, ×0.625 ms) type(1) own address
  /// type(1) peer address type(1) peer address(6) channel map(1) filter policy(1).
  private static func advertisingParameters(_ p: inout ByteReader, into fields: inout FieldList, summary: inout String) throws(DecodeError) {
    fields.measure("adv_interval_min", "Min advertising interval", try p.readUInt16LE(), scale: 0.625, unit: "ms")
    fields.measure("adv_interval_max", "Max advertising interval", try p.readUInt16LE(), scale: 0.625, unit: "ms")
    let type = try p.readUInt8()
    let typeName = advertisingTypeName(type)
    fields.code("adv_type", "Advertising type", type, width: 2, name: typeName)
    try ownAddressType(&p, into: &fields)
    let peerType = try p.readUInt8()
    fields.add("peer_address", "Peer address", .address(try p.readBDAddr(), AddressType(rawValue: peerType)))
    let map = try p.readUInt8()
    fields.add("channel_map", "Channel map", .codeText(UInt64(map), width: 2, name: bitText(UInt64(map), channelBits)))
    let policy = try p.readUInt8()
    fields.code("filter_policy", "Filter policy", policy, width: 2, name: advertisingFilterPolicyName(policy))
    summary = typeName.map { $0.description } ?? ""
  }

  /// LE Set Advertising Data §7.8.7 / LE Set Scan Response Data §7.8.8: length(1) then 31 bytes,
  /// of which the first `length` are AD structures and the rest padding.
  private static func legacyAdvertisingData(_ p: inout ByteReader, into fields: inout FieldList, summary: inout String, label: StaticString, field: StaticString) throws(DecodeError) {
    let length = Int(try p.readUInt8())
    fields.uint("length", "Data length", length)
    guard length <= 31 else {
      throw DecodeError(.invalidValue(field: field, value: UInt64(length)), layer: p.layer, offset: p.offset - 1)
    }
    summary = "\(length) bytes"
    var data = try p.readReader(count: length)
    try AdvertisingData.decode(&data, into: &fields, key: "ad", label: label)
    try p.skip(31 - length)
  }

  /// LE Set Extended Advertising Parameters §7.8.53, v1 (25 bytes): handle(1) event
  /// properties(2) primary interval min/max(3 each, ×0.625 ms) primary channel map(1) own address
  /// type(1) peer address type(1) peer address(6) filter policy(1) TX power(1, int8, 127 = no
  /// preference) primary PHY(1) secondary max skip(1) secondary PHY(1) SID(1) scan request
  /// notification enable(1). v2 (0x207F) adds primary and secondary PHY options(1 each).
  private static func extendedAdvertisingParameters(_ p: inout ByteReader, into fields: inout FieldList, summary: inout String, v2: Bool) throws(DecodeError) {
    let handle = try p.readUInt8()
    fields.uint("adv_handle", "Advertising handle", handle)
    summary = "set \(handle)"
    let properties = try p.readUInt16LE()
    fields.add("event_properties", "Event properties", .codeText(UInt64(properties), width: 4, name: bitText(UInt64(properties), eventPropertyBits)))
    fields.measure("adv_interval_min", "Min advertising interval", try p.readUInt24LE(), scale: 0.625, unit: "ms")
    fields.measure("adv_interval_max", "Max advertising interval", try p.readUInt24LE(), scale: 0.625, unit: "ms")
    let map = try p.readUInt8()
    fields.add("channel_map", "Primary channel map", .codeText(UInt64(map), width: 2, name: bitText(UInt64(map), channelBits)))
    try ownAddressType(&p, into: &fields)
    let peerType = try p.readUInt8()
    fields.add("peer_address", "Peer address", .address(try p.readBDAddr(), AddressType(rawValue: peerType)))
    let policy = try p.readUInt8()
    fields.code("filter_policy", "Filter policy", policy, width: 2, name: advertisingFilterPolicyName(policy))
    let power = try p.readInt8()
    fields.measure("tx_power", "TX power", power, scale: 1, unit: "dBm")
    if power == 127 { fields.flag("tx_power_no_preference", "No TX power preference", true) }
    let primary = try p.readUInt8()
    fields.code("primary_phy", "Primary PHY", primary, width: 2, name: phyName(primary))
    fields.uint("secondary_max_skip", "Secondary max skip", try p.readUInt8())
    let secondary = try p.readUInt8()
    fields.code("secondary_phy", "Secondary PHY", secondary, width: 2, name: phyName(secondary))
    fields.uint("sid", "Advertising SID", try p.readUInt8())
    let notify = try p.readUInt8()
    fields.code("scan_request_notification", "Scan request notification", notify, width: 2, name: enableName(notify))
    if v2 {
      let primaryOptions = try p.readUInt8()
      fields.code("primary_phy_options", "Primary PHY options", primaryOptions, width: 2, name: advertisingPHYOptionsName(primaryOptions))
      let secondaryOptions = try p.readUInt8()
      fields.code("secondary_phy_options", "Secondary PHY options", secondaryOptions, width: 2, name: advertisingPHYOptionsName(secondaryOptions))
    }
  }

  /// LE Set Extended Advertising Data §7.8.54 / Extended Scan Response Data §7.8.55:
  /// handle(1) operation(1) fragment preference(1) length(1) data(length).
  /// Only complete data is decoded as AD structures; a fragment may cut one in two.
  private static func extendedAdvertisingData(_ p: inout ByteReader, into fields: inout FieldList, summary: inout String, label: StaticString) throws(DecodeError) {
    let handle = try p.readUInt8()
    fields.uint("adv_handle", "Advertising handle", handle)
    let operation = try p.readUInt8()
    fields.code("operation", "Operation", operation, width: 2, name: dataOperationName(operation))
    let preference = try p.readUInt8()
    fields.code("fragment_preference", "Fragment preference", preference, width: 2, name: fragmentPreferenceName(preference))
    let length = Int(try p.readUInt8())
    fields.uint("length", "Data length", length)
    summary = "set \(handle), \(length) bytes"
    var data = try p.readReader(count: length)
    if operation == 3 || operation == 4 {
      try AdvertisingData.decode(&data, into: &fields, key: "ad", label: label)
    } else if !data.isAtEnd {
      fields.bytes("data", "Data fragment", data.readRemaining())
    }
  }

  /// LE Set Extended Advertising Enable §7.8.56: enable(1) number of sets(1), then per set:
  /// handle(1) duration(2, ×10 ms, 0 = until disabled) max extended advertising events(1).
  private static func extendedAdvertisingEnable(_ p: inout ByteReader, into fields: inout FieldList, summary: inout String) throws(DecodeError) {
    let enable = try p.readUInt8()
    fields.code("enable", "Advertising", enable, width: 2, name: enableName(enable))
    let count = try p.readUInt8()
    fields.uint("num_sets", "Number of sets", count)
    summary = enable == 0 ? (count == 0 ? "disable all" : "disable") : "enable"
    fields.beginArray("sets", "Sets")
    defer { fields.end() }
    for _ in 0..<count {
      fields.beginObject("", "Set")
      defer { fields.end() }
      fields.uint("adv_handle", "Advertising handle", try p.readUInt8())
      fields.measure("duration", "Duration", try p.readUInt16LE(), scale: 10, unit: "ms")
      fields.uint("max_events", "Max extended advertising events", try p.readUInt8())
    }
  }

  private static func ownAddressType(_ p: inout ByteReader, into fields: inout FieldList) throws(DecodeError) {
    let type = try p.readUInt8()
    fields.code("own_address_type", "Own address type", type, width: 2, name: ownAddressTypeName(type))
  }
}

// MARK: - Names

extension HCICommand {
  /// Names of the set bits of `value`, comma-separated; unnamed bits as "reserved 0x..".
  private static func bitText(_ value: UInt64, _ names: [(bit: UInt64, name: StaticString)]) -> String {
    var text = ""
    var known: UInt64 = 0
    for entry in names {
      known |= entry.bit
      if value & entry.bit != 0 {
        if !text.isEmpty { text += ", " }
        text += entry.name.description
      }
    }
    let unknown = value & ~known
    if unknown != 0 {
      if !text.isEmpty { text += ", " }
      text += "reserved " + Hex.prefixed(unknown, width: unknown > 0xFF ? 4 : 2)
    }
    return text.isEmpty ? "none" : text
  }

  private static let phyBits: [(bit: UInt64, name: StaticString)] = [(1, "LE 1M"), (2, "LE 2M"), (4, "LE Coded")]
  private static let allPhysBits: [(bit: UInt64, name: StaticString)] = [(1, "No TX preference"), (2, "No RX preference")]
  private static let channelBits: [(bit: UInt64, name: StaticString)] = [(1, "37"), (2, "38"), (4, "39")]
  private static let eventPropertyBits: [(bit: UInt64, name: StaticString)] = [
    (0x01, "Connectable"), (0x02, "Scannable"), (0x04, "Directed"), (0x08, "High duty cycle"),
    (0x10, "Legacy PDUs"), (0x20, "Anonymous"), (0x40, "Include TX power"),
  ]

  /// Core versions as used by HCI_Version and LMP_Version (Assigned Numbers §2.1).
  static func coreVersionName(_ version: UInt8) -> StaticString? {
    switch version {
    case 0x00: return "1.0b"
    case 0x01: return "1.1"
    case 0x02: return "1.2"
    case 0x03: return "2.0+EDR"
    case 0x04: return "2.1+EDR"
    case 0x05: return "3.0+HS"
    case 0x06: return "4.0"
    case 0x07: return "4.1"
    case 0x08: return "4.2"
    case 0x09: return "5.0"
    case 0x0A: return "5.1"
    case 0x0B: return "5.2"
    case 0x0C: return "5.3"
    case 0x0D: return "5.4"
    case 0x0E: return "6.0"
    case 0x0F: return "6.1"
    default: return nil
    }
  }

  private static func enableName(_ value: UInt8) -> StaticString? {
    switch value {
    case 0: return "Disabled"
    case 1: return "Enabled"
    default: return nil
    }
  }

  private static func filterDuplicatesName(_ value: UInt8) -> StaticString? {
    switch value {
    case 0: return "Disabled"
    case 1: return "Enabled"
    case 2: return "Enabled, reset each scan period"
    default: return nil
    }
  }

  private static func scanTypeName(_ value: UInt8) -> StaticString? {
    switch value {
    case 0: return "Passive"
    case 1: return "Active"
    default: return nil
    }
  }

  private static func ownAddressTypeName(_ value: UInt8) -> StaticString? {
    switch value {
    case 0: return "Public"
    case 1: return "Random"
    case 2: return "Resolvable private, else public"
    case 3: return "Resolvable private, else random"
    default: return nil
    }
  }

  private static func scanningFilterPolicyName(_ value: UInt8) -> StaticString? {
    switch value {
    case 0: return "Basic unfiltered"
    case 1: return "Basic filtered (accept list)"
    case 2: return "Extended unfiltered"
    case 3: return "Extended filtered (accept list)"
    default: return nil
    }
  }

  private static func initiatorFilterPolicyName(_ value: UInt8) -> StaticString? {
    switch value {
    case 0: return "Peer address"
    case 1: return "Filter accept list"
    default: return nil
    }
  }

  private static func advertisingFilterPolicyName(_ value: UInt8) -> StaticString? {
    switch value {
    case 0: return "Scan and connect from any"
    case 1: return "Scan from accept list, connect from any"
    case 2: return "Scan from any, connect from accept list"
    case 3: return "Scan and connect from accept list"
    default: return nil
    }
  }

  private static func advertisingTypeName(_ value: UInt8) -> StaticString? {
    switch value {
    case 0: return "ADV_IND"
    case 1: return "ADV_DIRECT_IND (high duty cycle)"
    case 2: return "ADV_SCAN_IND"
    case 3: return "ADV_NONCONN_IND"
    case 4: return "ADV_DIRECT_IND (low duty cycle)"
    default: return nil
    }
  }

  private static func phyName(_ value: UInt8) -> StaticString? {
    switch value {
    case 1: return "LE 1M"
    case 2: return "LE 2M"
    case 3: return "LE Coded"
    default: return nil
    }
  }

  /// The label of the parameter set for PHY bit `bit` (bit 0 LE 1M, 1 LE 2M, 2 LE Coded).
  private static func phyLabel(_ bit: UInt8) -> StaticString {
    switch bit {
    case 0: return "LE 1M"
    case 1: return "LE 2M"
    case 2: return "LE Coded"
    default: return "Reserved PHY"
    }
  }

  private static func phyOptionsName(_ value: UInt16) -> StaticString? {
    switch value {
    case 0: return "No preferred coding"
    case 1: return "Prefer S=2"
    case 2: return "Prefer S=8"
    default: return nil
    }
  }

  private static func advertisingPHYOptionsName(_ value: UInt8) -> StaticString? {
    switch value {
    case 0: return "No preference"
    case 1: return "Prefer S=2"
    case 2: return "Prefer S=8"
    case 3: return "Require S=2"
    case 4: return "Require S=8"
    default: return nil
    }
  }

  private static func dataOperationName(_ value: UInt8) -> StaticString? {
    switch value {
    case 0: return "Intermediate fragment"
    case 1: return "First fragment"
    case 2: return "Last fragment"
    case 3: return "Complete data"
    case 4: return "Unchanged data"
    default: return nil
    }
  }

  private static func fragmentPreferenceName(_ value: UInt8) -> StaticString? {
    switch value {
    case 0: return "Controller may fragment"
    case 1: return "Controller should not fragment"
    default: return nil
    }
  }

  private static func privacyModeName(_ value: UInt8) -> StaticString? {
    switch value {
    case 0: return "Network privacy"
    case 1: return "Device privacy"
    default: return nil
    }
  }

  private static func transmitPowerLevelTypeName(_ value: UInt8) -> StaticString? {
    switch value {
    case 0: return "Current"
    case 1: return "Maximum"
    default: return nil
    }
  }

  private static func flowControlName(_ value: UInt8) -> StaticString? {
    switch value {
    case 0: return "Off"
    case 1: return "ACL on, SCO off"
    case 2: return "ACL off, SCO on"
    case 3: return "ACL and SCO on"
    default: return nil
    }
  }
}
