import BLECore

/// BR/EDR (Classic) events: inquiry, connection requests, names, roles and modes, pairing
/// (link keys, PIN codes, Secure Simple Pairing) and remote features. Layouts follow Core
/// Vol 4, Part E, §7.7 (section numbers per event).
extension HCIEvent {
  /// Decodes the parameters of a BR/EDR event; false when `code` is not one of them.
  static func classicParameters(code: UInt8, _ p: inout ByteReader, into fields: inout FieldList, header: inout HeaderFact, context: inout Context) throws(DecodeError) -> Bool {
    switch code {
    case 0x01:  // Inquiry Complete §7.7.1
      header = .status(try status(&fields, &p))
    case 0x02, 0x22:  // Inquiry Result §7.7.2, Inquiry Result with RSSI §7.7.33
      try inquiryResults(withRSSI: code == 0x22, &p, into: &fields, header: &header)
    case 0x2F:  // Extended Inquiry Result §7.7.38
      try extendedInquiryResult(&p, into: &fields, header: &header, context: &context)
    case 0x04:  // Connection Request §7.7.4: BD_ADDR(6) class of device(3) link type(1)
      let address = try ClassicHCI.address(&fields, &p)
      let value = try ClassicHCI.classOfDevice(&fields, &p)
      let linkType = try p.readUInt8()
      fields.code("link_type", "Link type", linkType, width: 2, name: ClassicHCI.linkTypeName(linkType))
      header = .connectionRequest(address, linkType: linkType, classOfDevice: value)
    case 0x06, 0x09:  // Authentication Complete §7.7.6, Change Connection Link Key Complete §7.7.9
      let result = try status(&fields, &p)
      _ = try handle(&fields, &p, &context)
      header = .status(result)
    case 0x07:  // Remote Name Request Complete §7.7.7: status(1) BD_ADDR(6) name(248)
      let result = try status(&fields, &p)
      let address = try ClassicHCI.address(&fields, &p)
      let name = try HCICommand.localName(&p, into: &fields)
      header = .remoteName(address, status: result, name: name)
    case 0x0B:  // Read Remote Supported Features Complete §7.7.11: status handle features(8)
      let result = try status(&fields, &p)
      _ = try handle(&fields, &p, &context)
      fields.hex("lmp_features", "LMP features", try p.readUInt64LE(), width: 16)
      if result != 0 { header = .status(result) }
    case 0x12:  // Role Change §7.7.18: status(1) BD_ADDR(6) new role(1)
      let result = try status(&fields, &p)
      let address = try ClassicHCI.address(&fields, &p)
      let role = try ClassicHCI.role(&fields, &p)
      header = .roleChange(address, status: result, role: role)
    case 0x14:  // Mode Change §7.7.20: status handle mode(1) interval(2, ×0.625 ms)
      let result = try status(&fields, &p)
      _ = try handle(&fields, &p, &context)
      let mode = try p.readUInt8()
      fields.code("mode", "Mode", mode, width: 2, name: ClassicHCI.modeName(mode))
      let interval = try p.readUInt16LE()
      fields.measure("interval", "Interval", interval, scale: 0.625, unit: "ms")
      header = result != 0 ? .status(result) : .modeChange(mode: mode, interval: interval)
    case 0x15:  // Return Link Keys §7.7.21: count(1), then per key BD_ADDR(6) link key(16)
      header = .linkKeys(count: try ClassicHCI.storedLinkKeys(&fields, &p))
    case 0x16, 0x17, 0x31, 0x34, 0x35:
      // PIN Code Request §7.7.22, Link Key Request §7.7.23, IO Capability Request §7.7.40,
      // User Passkey Request §7.7.43, Remote OOB Data Request §7.7.44: BD_ADDR(6).
      header = .address(try ClassicHCI.address(&fields, &p))
    case 0x18:  // Link Key Notification §7.7.24: BD_ADDR(6) link key(16) key type(1)
      let address = try ClassicHCI.address(&fields, &p)
      try ClassicHCI.linkKey(&fields, &p)
      let type = try p.readUInt8()
      fields.code("key_type", "Key type", type, width: 2, name: ClassicHCI.keyTypeName(type))
      header = .linkKeyNotification(address, keyType: type)
    case 0x1B:  // Max Slots Change §7.7.27: handle(2) max slots(1)
      _ = try handle(&fields, &p, &context)
      let slots = try p.readUInt8()
      fields.uint("max_slots", "Maximum slots", slots)
      header = .maxSlots(slots)
    case 0x1C:  // Read Clock Offset Complete §7.7.28: status handle clock offset(2)
      let result = try status(&fields, &p)
      _ = try handle(&fields, &p, &context)
      try ClassicHCI.clockOffset(&fields, &p, validFlag: false)
      if result != 0 { header = .status(result) }
    case 0x1D:  // Connection Packet Type Changed §7.7.29: status handle packet type(2)
      let result = try status(&fields, &p)
      _ = try handle(&fields, &p, &context)
      try ClassicHCI.packetType(&fields, &p)
      if result != 0 { header = .status(result) }
    case 0x11:  // Flush Occurred §7.7.17
      _ = try handle(&fields, &p, &context)
    case 0x20:  // Page Scan Repetition Mode Change §7.7.31: BD_ADDR(6) mode(1)
      let address = try ClassicHCI.address(&fields, &p)
      let mode = try ClassicHCI.pageScanRepetitionMode(&fields, &p)
      header = .pageScanRepetitionMode(address, mode: mode)
    case 0x23:  // Read Remote Extended Features Complete §7.7.34: status handle page(1) max page(1) features(8)
      let result = try status(&fields, &p)
      _ = try handle(&fields, &p, &context)
      let page = try p.readUInt8()
      fields.uint("page", "Page number", page)
      fields.uint("max_page", "Maximum page number", try p.readUInt8())
      fields.hex("lmp_features", "Extended LMP features", try p.readUInt64LE(), width: 16)
      header = result != 0 ? .status(result) : .featuresPage(handle: nil, page: page)
    case 0x2C: try synchronousConnectionComplete(&p, into: &fields, header: &header, context: &context)
    case 0x32:  // IO Capability Response §7.7.41: BD_ADDR(6) IO capability(1) OOB(1) authentication(1)
      let address = try ClassicHCI.address(&fields, &p)
      let (capability, authentication) = try ClassicHCI.ioCapabilities(&fields, &p)
      header = .ioCapability(address, capability: capability, authentication: authentication)
    case 0x33, 0x3B:  // User Confirmation Request §7.7.42, User Passkey Notification §7.7.48: BD_ADDR(6) value(4)
      let address = try ClassicHCI.address(&fields, &p)
      let value = try p.readUInt32LE()
      fields.uint(code == 0x33 ? "numeric_value" : "passkey", code == 0x33 ? "Numeric value" : "Passkey", value)
      header = .passkey(address, value)
    case 0x36:  // Simple Pairing Complete §7.7.45: status(1) BD_ADDR(6)
      let result = try status(&fields, &p)
      header = .addressOutcome(try ClassicHCI.address(&fields, &p), status: result)
    case 0x38:  // Link Supervision Timeout Changed §7.7.46: handle(2) timeout(2, ×0.625 ms)
      _ = try handle(&fields, &p, &context)
      let timeout = try p.readUInt16LE()
      fields.measure("supervision_timeout", "Link supervision timeout", timeout, scale: 0.625, unit: "ms")
      header = .linkSupervisionTimeout(handle: nil, slots: timeout)
    case 0x3C:  // Keypress Notification §7.7.49: BD_ADDR(6) type(1)
      let address = try ClassicHCI.address(&fields, &p)
      let type = try p.readUInt8()
      fields.code("notification_type", "Notification type", type, width: 2, name: ClassicHCI.keypressName(type))
      header = .keypress(address, type: type)
    case 0x3D:  // Remote Host Supported Features Notification §7.7.50: BD_ADDR(6) features(8)
      header = .address(try ClassicHCI.address(&fields, &p))
      fields.hex("host_features", "Host supported features", try p.readUInt64LE(), width: 16)
    default:
      return false
    }
    return true
  }

  /// Inquiry Result (0x02): count(1), then per response BD_ADDR(6) page scan repetition mode(1)
  /// reserved(2) class of device(3) clock offset(2). With RSSI (0x22): one reserved octet, and
  /// RSSI(1) last. Each response's fields are adjacent (§5.2).
  static func inquiryResults(withRSSI: Bool, _ p: inout ByteReader, into fields: inout FieldList, header: inout HeaderFact) throws(DecodeError) {
    let count = try p.readUInt8()
    fields.addVerbose("num_responses", "Number of responses", .unsigned(UInt64(count), .decimal))
    fields.beginArray("responses", "Responses")
    defer { fields.end() }
    var first: BDAddr?
    for _ in 0..<count {
      fields.beginObject("", "Response")
      defer { fields.end() }
      let address = try ClassicHCI.address(&fields, &p)
      if first == nil { first = address }
      _ = try ClassicHCI.pageScanRepetitionMode(&fields, &p)
      try ClassicHCI.reserved(&fields, &p, count: withRSSI ? 1 : 2)
      try ClassicHCI.classOfDevice(&fields, &p)
      try ClassicHCI.clockOffset(&fields, &p, validFlag: false)
      if withRSSI { fields.measure("rssi", "RSSI", try p.readInt8(), scale: 1, unit: "dBm") }
    }
    header = .inquiryResults(count: count, first: first)
  }

  /// Extended Inquiry Result §7.7.38: count(1, always 1) BD_ADDR(6) page scan repetition mode(1)
  /// reserved(1) class of device(3) clock offset(2) RSSI(1) extended inquiry response(240),
  /// whose structures are the advertising data's (Core Vol 3, Part C, §8).
  static func extendedInquiryResult(_ p: inout ByteReader, into fields: inout FieldList, header: inout HeaderFact, context: inout Context) throws(DecodeError) {
    fields.addVerbose("num_responses", "Number of responses", .unsigned(UInt64(try p.readUInt8()), .decimal))
    let address = try ClassicHCI.address(&fields, &p)
    _ = try ClassicHCI.pageScanRepetitionMode(&fields, &p)
    try ClassicHCI.reserved(&fields, &p, count: 1)
    try ClassicHCI.classOfDevice(&fields, &p)
    try ClassicHCI.clockOffset(&fields, &p, validFlag: false)
    let rssi = try p.readInt8()
    fields.measure("rssi", "RSSI", rssi, scale: 1, unit: "dBm")
    header = .extendedInquiryResult(address, rssi: rssi, name: nil)
    var data = try p.readReader(count: 240, layer: .advertising)
    let advertised = try AdvertisingData.decode(&data, into: &fields, key: "eir", label: "Extended inquiry response", registry: context.registry)
    header = .extendedInquiryResult(address, rssi: rssi, name: advertised.name)
  }

  /// Synchronous Connection Complete §7.7.35: status(1) handle(2) BD_ADDR(6) link type(1)
  /// transmission interval(1, slots) retransmission window(1, slots) RX and TX packet length(2
  /// each) air mode(1).
  static func synchronousConnectionComplete(_ p: inout ByteReader, into fields: inout FieldList, header: inout HeaderFact, context: inout Context) throws(DecodeError) {
    let result = try status(&fields, &p)
    _ = try handle(&fields, &p, &context)
    let address = try ClassicHCI.address(&fields, &p)
    let linkType = try p.readUInt8()
    fields.code("link_type", "Link type", linkType, width: 2, name: ClassicHCI.linkTypeName(linkType))
    fields.measure("transmission_interval", "Transmission interval", try p.readUInt8(), scale: 0.625, unit: "ms")
    fields.measure("retransmission_window", "Retransmission window", try p.readUInt8(), scale: 0.625, unit: "ms")
    fields.uint("rx_packet_length", "RX packet length", try p.readUInt16LE())
    fields.uint("tx_packet_length", "TX packet length", try p.readUInt16LE())
    let air = try p.readUInt8()
    fields.code("air_mode", "Air mode", air, width: 2, name: ClassicHCI.airModeName(air))
    header = .synchronousConnectionComplete(address, linkType: linkType, status: result)
  }
}
