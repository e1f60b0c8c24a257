import BLECore

/// Command Complete return parameters of the BR/EDR (Classic) commands, after the status
/// (Core Vol 4, Part E, §7, per command).
extension HCICommand {
  /// Decodes the return parameters of a BR/EDR command; false when `opcode` is not one of them.
  static func classicReturnParameters(opcode: UInt16, _ p: inout ByteReader, into fields: inout FieldList, handle: inout UInt16?) throws(DecodeError) -> Bool {
    switch opcode {
    // Status only.
    case 0x0402,  // Inquiry Cancel
      0x0404,  // Exit Periodic Inquiry Mode
      0x080F,  // Write Default Link Policy Settings
      0x0C05,  // Set Event Filter
      0x0C16, 0x0C18, 0x0C1A, 0x0C1C, 0x0C1E,  // Write Connection Accept Timeout, Page Timeout, Scan Enable, Page/Inquiry Scan Activity
      0x0C24, 0x0C26, 0x0C2F, 0x0C3A,  // Write Class of Device, Voice Setting, Sync Flow Control Enable, Current IAC LAP
      0x0C43, 0x0C45, 0x0C47,  // Write Inquiry Scan Type, Inquiry Mode, Page Scan Type
      0x0C52, 0x0C56, 0x0C7A:  // Write Extended Inquiry Response, Simple Pairing Mode, Secure Connections Host Support
      return true

    // A BD_ADDR: the replies to pairing requests and the cancels (§7.1.7–§7.1.36).
    case 0x0408,  // Create Connection Cancel
      0x040B, 0x040C,  // Link Key Request Reply / Negative Reply
      0x040D, 0x040E,  // PIN Code Request Reply / Negative Reply
      0x041A,  // Remote Name Request Cancel
      0x042B,  // IO Capability Request Reply
      0x042C, 0x042D,  // User Confirmation Request Reply / Negative Reply
      0x042E, 0x042F,  // User Passkey Request Reply / Negative Reply
      0x0433,  // Remote OOB Data Request Negative Reply
      0x0434:  // IO Capability Request Negative Reply
      try ClassicHCI.address(&fields, &p)

    // The connection handle only.
    case 0x080D,  // Write Link Policy Settings §7.2.10
      0x0811,  // Sniff Subrating §7.2.14
      0x0C37:  // Write Link Supervision Timeout §7.3.42
      handle = try returnHandle(&p, into: &fields)

    case 0x0809:  // Role Discovery §7.2.7: handle(2) role(1)
      handle = try returnHandle(&p, into: &fields)
      _ = try ClassicHCI.role(&fields, &p)
    case 0x080C:  // Read Link Policy Settings §7.2.9: handle(2) settings(2)
      handle = try returnHandle(&p, into: &fields)
      _ = try ClassicHCI.linkPolicy(&fields, &p)
    case 0x080E:  // Read Default Link Policy Settings §7.2.11
      _ = try ClassicHCI.linkPolicy(&fields, &p)
    case 0x0C0D:  // Read Stored Link Key §7.3.8: max keys(2) keys read(2)
      fields.uint("max_num_keys", "Maximum number of keys", try p.readUInt16LE())
      fields.uint("num_keys_read", "Keys read", try p.readUInt16LE())
    case 0x0C11:  // Write Stored Link Key §7.3.9
      fields.uint("num_keys_written", "Keys written", try p.readUInt8())
    case 0x0C12:  // Delete Stored Link Key §7.3.10
      fields.uint("num_keys_deleted", "Keys deleted", try p.readUInt16LE())
    case 0x0C15:  // Read Connection Accept Timeout §7.3.13
      fields.measure("connection_accept_timeout", "Connection accept timeout", try p.readUInt16LE(), scale: 0.625, unit: "ms")
    case 0x0C17:  // Read Page Timeout §7.3.15
      fields.measure("page_timeout", "Page timeout", try p.readUInt16LE(), scale: 0.625, unit: "ms")
    case 0x0C19:  // Read Scan Enable §7.3.17
      let scan = try p.readUInt8()
      fields.code("scan_enable", "Scan enable", scan, width: 2, name: ClassicHCI.scanEnableName(scan))
    case 0x0C1B:  // Read Page Scan Activity §7.3.19
      fields.measure("page_scan_interval", "Page scan interval", try p.readUInt16LE(), scale: 0.625, unit: "ms")
      fields.measure("page_scan_window", "Page scan window", try p.readUInt16LE(), scale: 0.625, unit: "ms")
    case 0x0C1D:  // Read Inquiry Scan Activity §7.3.21
      fields.measure("inquiry_scan_interval", "Inquiry scan interval", try p.readUInt16LE(), scale: 0.625, unit: "ms")
      fields.measure("inquiry_scan_window", "Inquiry scan window", try p.readUInt16LE(), scale: 0.625, unit: "ms")
    case 0x0C23:  // Read Class of Device §7.3.25
      try ClassicHCI.classOfDevice(&fields, &p)
    case 0x0C25:  // Read Voice Setting §7.3.27
      fields.hex("voice_setting", "Voice setting", try p.readUInt16LE(), width: 4)
    case 0x0C36:  // Read Link Supervision Timeout §7.3.41: handle(2) timeout(2, ×0.625 ms)
      handle = try returnHandle(&p, into: &fields)
      fields.measure("supervision_timeout", "Link supervision timeout", try p.readUInt16LE(), scale: 0.625, unit: "ms")
    case 0x0C38:  // Read Number Of Supported IAC §7.3.43
      fields.uint("num_supported_iac", "Supported IACs", try p.readUInt8())
    case 0x0C39:  // Read Current IAC LAP §7.3.44: count(1) LAP(3)×count
      let count = try p.readUInt8()
      fields.uint("num_current_iac", "Number of IACs", count)
      _ = try iacLAPs(count: count, &p, into: &fields)
    case 0x0C42:  // Read Inquiry Scan Type §7.3.47
      let type = try p.readUInt8()
      fields.code("inquiry_scan_type", "Inquiry scan type", type, width: 2, name: ClassicHCI.scanTypeName(type))
    case 0x0C44:  // Read Inquiry Mode §7.3.49
      let mode = try p.readUInt8()
      fields.code("inquiry_mode", "Inquiry mode", mode, width: 2, name: ClassicHCI.inquiryModeName(mode))
    case 0x0C46:  // Read Page Scan Type §7.3.51
      let type = try p.readUInt8()
      fields.code("page_scan_type", "Page scan type", type, width: 2, name: ClassicHCI.scanTypeName(type))
    case 0x0C51:  // Read Extended Inquiry Response §7.3.55
      _ = try extendedInquiryResponse(&p, into: &fields, registry: nil)
    case 0x0C55:  // Read Simple Pairing Mode §7.3.58
      let mode = try p.readUInt8()
      fields.code("simple_pairing_mode", "Simple pairing mode", mode, width: 2, name: enableName(mode))
    case 0x0C58:  // Read Inquiry Response Transmit Power Level §7.3.61
      fields.measure("tx_power", "TX power level", try p.readInt8(), scale: 1, unit: "dBm")
    case 0x0C79:  // Read Secure Connections Host Support §7.3.91
      let support = try p.readUInt8()
      fields.code("secure_connections_host_support", "Secure Connections (host)", support, width: 2, name: enableName(support))
    case 0x1401:  // Read Failed Contact Counter §7.5.1
      handle = try returnHandle(&p, into: &fields)
      fields.uint("failed_contact_counter", "Failed contact counter", try p.readUInt16LE())
    case 0x1403:  // Read Link Quality §7.5.3
      handle = try returnHandle(&p, into: &fields)
      fields.uint("link_quality", "Link quality", try p.readUInt8())
    case 0x1408:  // Read Encryption Key Size §7.5.7
      handle = try returnHandle(&p, into: &fields)
      fields.uint("key_size", "Key size", try p.readUInt8())
    default:
      return false
    }
    return true
  }
}
