import BLECore

/// Parameters of the BR/EDR (Classic) commands: link control (OGF 0x01), link policy (0x02),
/// controller and baseband (0x03) and status (0x05) commands of inquiry, paging, pairing, sniff
/// and role switches. Layouts follow Core Vol 4, Part E, §7 (section numbers per command).
extension HCICommand {
  /// Decodes the parameters of a BR/EDR command; false when `opcode` is not one of them.
  static func classicParameters(opcode: UInt16, _ p: inout ByteReader, into fields: inout FieldList, header: inout HeaderFact, context: inout Context) throws(DecodeError) -> Bool {
    switch opcode {
    // Commands without parameters.
    case 0x0402,  // Inquiry Cancel §7.1.2
      0x0404,  // Exit Periodic Inquiry Mode §7.1.4
      0x080E,  // Read Default Link Policy Settings §7.2.11
      0x0C15,  // Read Connection Accept Timeout §7.3.13
      0x0C17,  // Read Page Timeout §7.3.15
      0x0C19,  // Read Scan Enable §7.3.17
      0x0C1B,  // Read Page Scan Activity §7.3.19
      0x0C1D,  // Read Inquiry Scan Activity §7.3.21
      0x0C23,  // Read Class of Device §7.3.25
      0x0C25,  // Read Voice Setting §7.3.27
      0x0C38,  // Read Number Of Supported IAC §7.3.43
      0x0C39,  // Read Current IAC LAP §7.3.44
      0x0C42,  // Read Inquiry Scan Type §7.3.47
      0x0C44,  // Read Inquiry Mode §7.3.49
      0x0C46,  // Read Page Scan Type §7.3.51
      0x0C51,  // Read Extended Inquiry Response §7.3.55
      0x0C55,  // Read Simple Pairing Mode §7.3.58
      0x0C58,  // Read Inquiry Response Transmit Power Level §7.3.61
      0x0C79:  // Read Secure Connections Host Support §7.3.91
      return true

    // Commands whose only parameter is a connection handle.
    case 0x0411,  // Authentication Requested §7.1.15
      0x0415,  // Change Connection Link Key §7.1.17
      0x041B,  // Read Remote Supported Features §7.1.21
      0x041F,  // Read Clock Offset §7.1.24
      0x0804,  // Exit Sniff Mode §7.2.3
      0x0809,  // Role Discovery §7.2.7
      0x080C,  // Read Link Policy Settings §7.2.9
      0x0C36,  // Read Link Supervision Timeout §7.3.41
      0x1401,  // Read Failed Contact Counter §7.5.1
      0x1403,  // Read Link Quality §7.5.3
      0x1408:  // Read Encryption Key Size §7.5.7
      try connectionHandle(&p, into: &fields, header: &header, context: &context)

    // Commands whose only parameter is a BD_ADDR.
    case 0x0408,  // Create Connection Cancel §7.1.7
      0x040C,  // Link Key Request Negative Reply §7.1.11
      0x040E,  // PIN Code Request Negative Reply §7.1.13
      0x041A,  // Remote Name Request Cancel §7.1.20
      0x042C,  // User Confirmation Request Reply §7.1.30
      0x042D,  // User Confirmation Request Negative Reply §7.1.31
      0x042F,  // User Passkey Request Negative Reply §7.1.33
      0x0433:  // Remote OOB Data Request Negative Reply §7.1.35
      header = .address(try ClassicHCI.address(&fields, &p))

    case 0x0401: try inquiry(&p, into: &fields, header: &header)
    case 0x0405: try classicCreateConnection(&p, into: &fields, header: &header)
    case 0x0409:  // Accept Connection Request §7.1.8: BD_ADDR(6) role(1)
      let address = try ClassicHCI.address(&fields, &p)
      let role = try p.readUInt8()
      let roleName = ClassicHCI.acceptRoleName(role)
      fields.code("role", "Role", role, width: 2, name: roleName)
      header = .acceptConnection(address, role: role)
    case 0x040A, 0x0434:  // Reject Connection Request §7.1.9, IO Capability Request Negative Reply §7.1.36
      let address = try ClassicHCI.address(&fields, &p)
      let reason = try p.readUInt8()
      fields.code("reason", "Reason", reason, width: 2, name: AssignedNumbers.hciErrorName(reason))
      header = .refuse(address, reason: reason)
    case 0x040B:  // Link Key Request Reply §7.1.10: BD_ADDR(6) link key(16)
      header = .address(try ClassicHCI.address(&fields, &p))
      try ClassicHCI.linkKey(&fields, &p)
    case 0x040D:  // PIN Code Request Reply §7.1.12: BD_ADDR(6) length(1) PIN(16, the first `length` used)
      header = .address(try ClassicHCI.address(&fields, &p))
      let length = try p.readUInt8()
      fields.uint("pin_length", "PIN length", length)
      let pin = try p.readBytes(count: 16)
      guard length >= 1, length <= 16 else {
        throw DecodeError(.invalidValue(field: "PIN code length", value: UInt64(length)), layer: p.layer, offset: p.offset - 17)
      }
      fields.add("pin_code", "PIN code", .text(String(decoding: pin.prefix(Int(length)), as: UTF8.self)))
    case 0x040F:  // Change Connection Packet Type §7.1.14: handle(2) packet type(2)
      try connectionHandle(&p, into: &fields, header: &header, context: &context)
      try ClassicHCI.packetType(&fields, &p)
    case 0x0413:  // Set Connection Encryption §7.1.16: handle(2) enable(1)
      try connectionHandle(&p, into: &fields, header: &header, context: &context)
      let enable = try p.readUInt8()
      fields.code("encryption", "Encryption", enable, width: 2, name: enable == 0 ? "off" : (enable == 1 ? "on" : nil))
      header = .setEncryption(handle: context.handle ?? 0, enabled: enable != 0)
    case 0x0419:  // Remote Name Request §7.1.19: BD_ADDR(6) PSRM(1) reserved(1) clock offset(2)
      header = .address(try ClassicHCI.address(&fields, &p))
      _ = try ClassicHCI.pageScanRepetitionMode(&fields, &p)
      try ClassicHCI.reserved(&fields, &p, count: 1)
      try ClassicHCI.clockOffset(&fields, &p, validFlag: true)
    case 0x041C:  // Read Remote Extended Features §7.1.22: handle(2) page(1)
      try connectionHandle(&p, into: &fields, header: &header, context: &context)
      let page = try p.readUInt8()
      fields.uint("page", "Page number", page)
      header = .featuresPage(handle: context.handle, page: page)
    case 0x0428, 0x0429: try synchronousConnection(opcode: opcode, &p, into: &fields, header: &header, context: &context)
    case 0x042B:  // IO Capability Request Reply §7.1.29: BD_ADDR(6) IO capability(1) OOB(1) authentication(1)
      let address = try ClassicHCI.address(&fields, &p)
      let (capability, authentication) = try ClassicHCI.ioCapabilities(&fields, &p)
      header = .ioCapability(address, capability: capability, authentication: authentication)
    case 0x042E:  // User Passkey Request Reply §7.1.32: BD_ADDR(6) passkey(4)
      header = .address(try ClassicHCI.address(&fields, &p))
      fields.uint("passkey", "Passkey", try p.readUInt32LE())

    case 0x0801, 0x0803: try holdOrSniffMode(sniff: opcode == 0x0803, &p, into: &fields, header: &header, context: &context)
    case 0x080B:  // Switch Role §7.2.8: BD_ADDR(6) role(1)
      let address = try ClassicHCI.address(&fields, &p)
      let role = try ClassicHCI.role(&fields, &p)
      header = .switchRole(address, role: role)
    case 0x080D:  // Write Link Policy Settings §7.2.10: handle(2) settings(2)
      try connectionHandle(&p, into: &fields, header: &header, context: &context)
      header = .linkPolicy(handle: context.handle, settings: try ClassicHCI.linkPolicy(&fields, &p))
    case 0x080F:  // Write Default Link Policy Settings §7.2.12
      header = .linkPolicy(handle: nil, settings: try ClassicHCI.linkPolicy(&fields, &p))
    case 0x0811:  // Sniff Subrating §7.2.14: handle(2) max latency(2) min remote timeout(2) min local timeout(2), ×0.625 ms
      try connectionHandle(&p, into: &fields, header: &header, context: &context)
      fields.measure("max_latency", "Maximum latency", try p.readUInt16LE(), scale: 0.625, unit: "ms")
      fields.measure("min_remote_timeout", "Minimum remote timeout", try p.readUInt16LE(), scale: 0.625, unit: "ms")
      fields.measure("min_local_timeout", "Minimum local timeout", try p.readUInt16LE(), scale: 0.625, unit: "ms")

    default:
      return try classicBasebandParameters(opcode: opcode, &p, into: &fields, header: &header, context: &context)
    }
    return true
  }

  /// Controller and baseband commands of BR/EDR (OGF 0x03, §7.3).
  static func classicBasebandParameters(opcode: UInt16, _ p: inout ByteReader, into fields: inout FieldList, header: inout HeaderFact, context: inout Context) throws(DecodeError) -> Bool {
    switch opcode {
    case 0x0C05: try eventFilter(&p, into: &fields, header: &header)
    case 0x0C0D, 0x0C12:  // Read Stored Link Key §7.3.8, Delete Stored Link Key §7.3.10: BD_ADDR(6) all(1)
      let address = try ClassicHCI.address(&fields, &p)
      let all = try p.readUInt8()
      fields.code(opcode == 0x0C0D ? "read_all" : "delete_all", "Which keys", all, width: 2, name: ClassicHCI.allFlagName(all))
      header = .storedLinkKey(all == 1 ? nil : address)
    case 0x0C11:  // Write Stored Link Key §7.3.9: count(1), then per key BD_ADDR(6) link key(16)
      header = .linkKeys(count: try ClassicHCI.storedLinkKeys(&fields, &p))
    case 0x0C16:  // Write Connection Accept Timeout §7.3.14 (×0.625 ms)
      let timeout = try p.readUInt16LE()
      fields.measure("connection_accept_timeout", "Connection accept timeout", timeout, scale: 0.625, unit: "ms")
      header = .slots(timeout)
    case 0x0C18:  // Write Page Timeout §7.3.16 (×0.625 ms)
      let timeout = try p.readUInt16LE()
      fields.measure("page_timeout", "Page timeout", timeout, scale: 0.625, unit: "ms")
      header = .slots(timeout)
    case 0x0C1A:  // Write Scan Enable §7.3.18
      let scan = try p.readUInt8()
      fields.code("scan_enable", "Scan enable", scan, width: 2, name: ClassicHCI.scanEnableName(scan))
      header = .classicScanEnable(scan)
    case 0x0C1C:  // Write Page Scan Activity §7.3.20: interval(2) window(2), ×0.625 ms
      fields.measure("page_scan_interval", "Page scan interval", try p.readUInt16LE(), scale: 0.625, unit: "ms")
      fields.measure("page_scan_window", "Page scan window", try p.readUInt16LE(), scale: 0.625, unit: "ms")
    case 0x0C1E:  // Write Inquiry Scan Activity §7.3.22: interval(2) window(2), ×0.625 ms
      fields.measure("inquiry_scan_interval", "Inquiry scan interval", try p.readUInt16LE(), scale: 0.625, unit: "ms")
      fields.measure("inquiry_scan_window", "Inquiry scan window", try p.readUInt16LE(), scale: 0.625, unit: "ms")
    case 0x0C24:  // Write Class of Device §7.3.26
      let value = try ClassicHCI.classOfDevice(&fields, &p)
      header = .classOfDevice(value)
    case 0x0C26:  // Write Voice Setting §7.3.28
      fields.hex("voice_setting", "Voice setting", try p.readUInt16LE(), width: 4)
    case 0x0C2F:  // Write Synchronous Flow Control Enable §7.3.37
      let enable = try p.readUInt8()
      fields.code("synchronous_flow_control", "Synchronous flow control", enable, width: 2, name: enableName(enable))
      header = .toggle(enable != 0)
    case 0x0C37:  // Write Link Supervision Timeout §7.3.42: handle(2) timeout(2, ×0.625 ms)
      try connectionHandle(&p, into: &fields, header: &header, context: &context)
      let timeout = try p.readUInt16LE()
      fields.measure("supervision_timeout", "Link supervision timeout", timeout, scale: 0.625, unit: "ms")
      header = .linkSupervisionTimeout(handle: context.handle, slots: timeout)
    case 0x0C3A:  // Write Current IAC LAP §7.3.45: count(1) LAP(3)×count
      let count = try p.readUInt8()
      fields.uint("num_current_iac", "Number of IACs", count)
      header = .accessCodes(try iacLAPs(count: count, &p, into: &fields))
    case 0x0C43, 0x0C47:  // Write Inquiry Scan Type §7.3.48, Write Page Scan Type §7.3.52
      let type = try p.readUInt8()
      let name = ClassicHCI.scanTypeName(type)
      if opcode == 0x0C43 {
        fields.code("inquiry_scan_type", "Inquiry scan type", type, width: 2, name: name)
      } else {
        fields.code("page_scan_type", "Page scan type", type, width: 2, name: name)
      }
      header = .classicScanType(type)
    case 0x0C45:  // Write Inquiry Mode §7.3.50
      let mode = try p.readUInt8()
      fields.code("inquiry_mode", "Inquiry mode", mode, width: 2, name: ClassicHCI.inquiryModeName(mode))
      header = .inquiryMode(mode)
    case 0x0C52:  // Write Extended Inquiry Response §7.3.56: FEC required(1) EIR(240)
      if let name = try extendedInquiryResponse(&p, into: &fields, registry: context.registry) { header = .deviceName(name) }
    case 0x0C56:  // Write Simple Pairing Mode §7.3.59
      let mode = try p.readUInt8()
      fields.code("simple_pairing_mode", "Simple pairing mode", mode, width: 2, name: enableName(mode))
      header = .toggle(mode != 0)
    case 0x0C7A:  // Write Secure Connections Host Support §7.3.92
      let support = try p.readUInt8()
      fields.code("secure_connections_host_support", "Secure Connections (host)", support, width: 2, name: enableName(support))
      header = .toggle(support != 0)
    default:
      return false
    }
    return true
  }

  /// Inquiry §7.1.1: LAP(3) inquiry length(1, ×1.28 s) number of responses(1, 0 = unlimited).
  static func inquiry(_ p: inout ByteReader, into fields: inout FieldList, header: inout HeaderFact) throws(DecodeError) {
    let lap = try p.readUInt24LE()
    fields.add("lap", "LAP", .unsigned(UInt64(lap), .hex(6)))
    let length = try p.readUInt8()
    fields.measure("inquiry_length", "Inquiry length", length, scale: 1.28, unit: "s")
    let responses = try p.readUInt8()
    fields.uint("num_responses", "Number of responses", responses)
    header = .inquiry(lap: lap, length: length, responses: responses)
  }

  /// Create Connection §7.1.5: BD_ADDR(6) packet type(2) page scan repetition mode(1)
  /// reserved(1) clock offset(2, bit 15 valid) allow role switch(1).
  static func classicCreateConnection(_ p: inout ByteReader, into fields: inout FieldList, header: inout HeaderFact) throws(DecodeError) {
    header = .address(try ClassicHCI.address(&fields, &p))
    try ClassicHCI.packetType(&fields, &p)
    _ = try ClassicHCI.pageScanRepetitionMode(&fields, &p)
    try ClassicHCI.reserved(&fields, &p, count: 1)
    try ClassicHCI.clockOffset(&fields, &p, validFlag: true)
    let allow = try p.readUInt8()
    fields.code("allow_role_switch", "Allow role switch", allow, width: 2, name: ClassicHCI.allowRoleSwitchName(allow))
  }

  /// Setup Synchronous Connection §7.1.26: handle(2), and Accept Synchronous Connection Request
  /// §7.1.27: BD_ADDR(6); then TX and RX bandwidth(4 each, octets/s) max latency(2, ms) voice
  /// setting(2) retransmission effort(1) packet type(2).
  static func synchronousConnection(opcode: UInt16, _ p: inout ByteReader, into fields: inout FieldList, header: inout HeaderFact, context: inout Context) throws(DecodeError) {
    if opcode == 0x0428 {
      try connectionHandle(&p, into: &fields, header: &header, context: &context)
    } else {
      header = .address(try ClassicHCI.address(&fields, &p))
    }
    fields.uint("transmit_bandwidth", "Transmit bandwidth (octets/s)", try p.readUInt32LE())
    fields.uint("receive_bandwidth", "Receive bandwidth (octets/s)", try p.readUInt32LE())
    fields.measure("max_latency", "Maximum latency", try p.readUInt16LE(), scale: 1, unit: "ms")
    fields.hex("voice_setting", "Voice setting", try p.readUInt16LE(), width: 4)
    let effort = try p.readUInt8()
    fields.code("retransmission_effort", "Retransmission effort", effort, width: 2, name: ClassicHCI.retransmissionEffortName(effort))
    try ClassicHCI.synchronousPacketType(&fields, &p)
  }

  /// Hold Mode §7.2.1: handle(2) max interval(2) min interval(2); Sniff Mode §7.2.2 adds
  /// attempt(2) and timeout(2). Intervals ×0.625 ms, attempt and timeout ×1.25 ms.
  static func holdOrSniffMode(sniff: Bool, _ p: inout ByteReader, into fields: inout FieldList, header: inout HeaderFact, context: inout Context) throws(DecodeError) {
    try connectionHandle(&p, into: &fields, header: &header, context: &context)
    let maximum = try p.readUInt16LE()
    fields.measure("max_interval", "Maximum interval", maximum, scale: 0.625, unit: "ms")
    let minimum = try p.readUInt16LE()
    fields.measure("min_interval", "Minimum interval", minimum, scale: 0.625, unit: "ms")
    if sniff {
      fields.measure("sniff_attempt", "Sniff attempt", try p.readUInt16LE(), scale: 1.25, unit: "ms")
      fields.measure("sniff_timeout", "Sniff timeout", try p.readUInt16LE(), scale: 1.25, unit: "ms")
    }
    header = .holdOrSniff(handle: context.handle ?? 0, minimum: minimum, maximum: maximum)
  }

  /// Set Event Filter §7.3.3: filter type(1: 0 clear all, 1 inquiry result, 2 connection
  /// setup), then condition type(1: 0 every device, 1 class of device(3) and mask(3), 2
  /// BD_ADDR(6)), then for connection setup the auto-accept flag(1).
  static func eventFilter(_ p: inout ByteReader, into fields: inout FieldList, header: inout HeaderFact) throws(DecodeError) {
    let filter = try p.readUInt8()
    fields.code("filter_type", "Filter type", filter, width: 2, name: eventFilterName(filter))
    header = .eventFilter(type: filter, address: nil)
    guard filter == 1 || filter == 2 else { return }
    let condition = try p.readUInt8()
    let conditionName: Name? = condition == 0 ? "every device" : (condition == 1 ? "class of device" : (condition == 2 ? "address" : nil))
    fields.code("condition_type", "Condition type", condition, width: 2, name: conditionName)
    switch condition {
    case 1:
      try ClassicHCI.classOfDevice(&fields, &p)
      fields.add("class_of_device_mask", "Class of device mask", .unsigned(UInt64(try p.readUInt24LE()), .hex(6)))
    case 2:
      let address = try ClassicHCI.address(&fields, &p)
      header = .eventFilter(type: filter, address: address)
    default:
      break
    }
    if filter == 2 {
      let accept = try p.readUInt8()
      let name: Name? = accept == 1 ? "do not auto-accept" : (accept == 2 ? "auto-accept, no role switch" : (accept == 3 ? "auto-accept with role switch" : nil))
      fields.code("auto_accept", "Auto-accept", accept, width: 2, name: name)
    }
  }

  /// Set Event Filter's filter types (§7.3.3).
  package static func eventFilterName(_ filter: UInt8) -> Name? {
    filter == 0 ? "clear all filters" : (filter == 1 ? "inquiry result" : (filter == 2 ? "connection setup" : nil))
  }

  /// `count` inquiry access codes (3 octets each).
  static func iacLAPs(count: UInt8, _ p: inout ByteReader, into fields: inout FieldList) throws(DecodeError) -> [UInt32] {
    try p.require(Int(count) * 3)
    fields.beginArray("iac_laps", "IAC LAPs")
    defer { fields.end() }
    var laps: [UInt32] = []
    for _ in 0..<count {
      let lap = try p.readUInt24LE()
      fields.add("", "LAP", .unsigned(UInt64(lap), .hex(6)))
      laps.append(lap)
    }
    return laps
  }

  /// FEC_Required(1) and Extended_Inquiry_Response(240: EIR structures, then zero padding), as
  /// Write Extended Inquiry Response §7.3.56 sends them and Read Extended Inquiry Response
  /// §7.3.55 returns them. Returns the name the data carries.
  static func extendedInquiryResponse(_ p: inout ByteReader, into fields: inout FieldList, registry: DecoderRegistry?) throws(DecodeError) -> String? {
    let fec = try p.readUInt8()
    fields.code("fec_required", "FEC required", fec, width: 2, name: fec == 0 ? "not required" : (fec == 1 ? "required" : nil))
    var data = try p.readReader(count: 240, layer: .advertising)
    let advertised = try AdvertisingData.decode(&data, into: &fields, key: "eir", label: "Extended inquiry response", registry: registry)
    return advertised.name
  }
}
