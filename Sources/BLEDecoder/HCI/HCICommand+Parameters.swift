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
  static func decodeParameters(opcode: UInt16, _ p: inout ByteReader, into fields: inout FieldList, header: inout HeaderFact, context: inout Context) throws(DecodeError) -> Bool {
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
      try connectionHandle(&p, into: &fields, header: &header, context: &context)

    case 0x0406: try disconnect(&p, into: &fields, header: &header, context: &context)
    case 0x0C13: header = .deviceName(try localName(&p, into: &fields))
    case 0x0C2D:  // Read Transmit Power Level §7.3.35
      try connectionHandle(&p, into: &fields, header: &header, context: &context)
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
      header = .toggle(le != 0)
    case 0x0C7C:  // Write Authenticated Payload Timeout §7.3.94
      try connectionHandle(&p, into: &fields, header: &header, context: &context)
      fields.measure("timeout", "Authenticated payload timeout", try p.readUInt16LE(), scale: 10, unit: "ms")
    case 0x1004:  // Read Local Extended Features §7.4.4
      fields.uint("page", "Page number", try p.readUInt8())

    case 0x2005:  // LE Set Random Address §7.8.4
      let address = try p.readBDAddr()
      fields.add("address", "Random address", .address(address, .randomDevice))
      header = .address(address)
    case 0x2006: try advertisingParameters(&p, into: &fields, header: &header)
    case 0x2008:
      try legacyAdvertisingData(&p, into: &fields, header: &header, label: "Advertising data", field: "advertising data length")
    case 0x2009:
      try legacyAdvertisingData(&p, into: &fields, header: &header, label: "Scan response data", field: "scan response data length")
    case 0x200A:  // LE Set Advertising Enable §7.8.9
      let enable = try p.readUInt8()
      fields.code("enable", "Advertising", enable, width: 2, name: enableName(enable))
      header = .toggle(enable != 0)
    case 0x200B: try scanParameters(&p, into: &fields, header: &header)
    case 0x200C: try scanEnable(&p, into: &fields, header: &header, extended: false)
    case 0x200D: try createConnection(&p, into: &fields, header: &header)
    case 0x2011, 0x2012:  // LE Add/Remove Device To/From Filter Accept List §7.8.16-17
      let type = try p.readUInt8()
      let address = try p.readBDAddr()
      fields.add("address", "Address", .address(address, AddressType(rawValue: type)))
      header = type == 0xFF ? .anonymousAdvertisers : .address(address)
    case 0x2013: try connectionUpdate(&p, into: &fields, header: &header, context: &context)
    case 0x2017:  // LE Encrypt §7.8.22
      fields.bytes("key", "Key", try p.readBytes(count: 16))
      fields.bytes("plaintext", "Plaintext data", try p.readBytes(count: 16))
    case 0x2019: try startEncryption(&p, into: &fields, header: &header, context: &context)
    case 0x201A:  // LE Long Term Key Request Reply §7.8.25
      try connectionHandle(&p, into: &fields, header: &header, context: &context)
      fields.bytes("ltk", "Long term key", try p.readBytes(count: 16))
    case 0x2020:  // LE Remote Connection Parameter Request Reply §7.8.31
      try connectionUpdate(&p, into: &fields, header: &header, context: &context)
    case 0x2021:  // LE Remote Connection Parameter Request Negative Reply §7.8.32
      try connectionHandle(&p, into: &fields, header: &header, context: &context)
      let reason = try p.readUInt8()
      fields.code("reason", "Reason", reason, width: 2, name: AssignedNumbers.hciErrorName(reason))
    case 0x2022:  // LE Set Data Length §7.8.33
      try connectionHandle(&p, into: &fields, header: &header, context: &context)
      fields.uint("tx_octets", "TX octets", try p.readUInt16LE())
      fields.measure("tx_time", "TX time", try p.readUInt16LE(), scale: 1, unit: "us")
    case 0x2024:  // LE Write Suggested Default Data Length §7.8.35
      fields.uint("suggested_max_tx_octets", "Suggested max TX octets", try p.readUInt16LE())
      fields.measure("suggested_max_tx_time", "Suggested max TX time", try p.readUInt16LE(), scale: 1, unit: "us")
    case 0x2027:  // LE Add Device To Resolving List §7.8.38
      try identityAddress(&p, into: &fields, header: &header)
      fields.bytes("peer_irk", "Peer IRK", try p.readBytes(count: 16))
      fields.bytes("local_irk", "Local IRK", try p.readBytes(count: 16))
    case 0x2028:  // LE Remove Device From Resolving List §7.8.39
      try identityAddress(&p, into: &fields, header: &header)
    case 0x202D:  // LE Set Address Resolution Enable §7.8.44
      let enable = try p.readUInt8()
      fields.code("enable", "Address resolution", enable, width: 2, name: enableName(enable))
      header = .toggle(enable != 0)
    case 0x202E:  // LE Set Resolvable Private Address Timeout §7.8.45
      fields.measure("rpa_timeout", "RPA timeout", try p.readUInt16LE(), scale: 1, unit: "s")
    case 0x2031:  // LE Set Default PHY §7.8.48
      try phyPreferences(&p, into: &fields)
    case 0x2032:  // LE Set PHY §7.8.49
      try connectionHandle(&p, into: &fields, header: &header, context: &context)
      try phyPreferences(&p, into: &fields)
      let options = try p.readUInt16LE()
      fields.code("phy_options", "PHY options", options, width: 4, name: phyOptionsName(options))
    case 0x2035:  // LE Set Advertising Set Random Address §7.8.52
      fields.uint("adv_handle", "Advertising handle", try p.readUInt8())
      let address = try p.readBDAddr()
      fields.add("address", "Random address", .address(address, .randomDevice))
      header = .address(address)
    case 0x2036: try extendedAdvertisingParameters(&p, into: &fields, header: &header, v2: false)
    case 0x207F: try extendedAdvertisingParameters(&p, into: &fields, header: &header, v2: true)
    case 0x2037:
      try extendedAdvertisingData(&p, into: &fields, header: &header, label: "Advertising data")
    case 0x2038:
      try extendedAdvertisingData(&p, into: &fields, header: &header, label: "Scan response data")
    case 0x2039: try extendedAdvertisingEnable(&p, into: &fields, header: &header)
    case 0x203C:  // LE Remove Advertising Set §7.8.59
      let handle = try p.readUInt8()
      fields.uint("adv_handle", "Advertising handle", handle)
      header = .advertisingSet(handle, bytes: nil)
    case 0x2041: try extendedScanParameters(&p, into: &fields, header: &header)
    case 0x2042: try scanEnable(&p, into: &fields, header: &header, extended: true)
    case 0x2043: try extendedCreateConnection(&p, into: &fields, header: &header, v2: false)
    case 0x2085: try extendedCreateConnection(&p, into: &fields, header: &header, v2: true)
    case 0x204E:  // LE Set Privacy Mode §7.8.77
      try identityAddress(&p, into: &fields, header: &header)
      let mode = try p.readUInt8()
      fields.code("privacy_mode", "Privacy mode", mode, width: 2, name: privacyModeName(mode))
    case 0x2074:  // LE Set Host Feature §7.8.115
      fields.uint("bit_number", "Bit number", try p.readUInt8())
      fields.uint("bit_value", "Bit value", try p.readUInt8())
    default:
      return try classicParameters(opcode: opcode, &p, into: &fields, header: &header, context: &context)
    }
    return true
  }
}
