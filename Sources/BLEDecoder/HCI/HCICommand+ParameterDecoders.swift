import BLECore

// MARK: - Parameter decoders
extension HCICommand {
  /// A 2-byte connection handle (12 bits; the top 4 bits are reserved and dropped).
  static func connectionHandle(_ p: inout ByteReader, into fields: inout FieldList, header: inout HeaderFact, context: inout Context) throws(DecodeError) {
    let handle = try p.readUInt16LE() & 0x0FFF
    fields.uint("handle", "Handle", handle)
    context.handle = handle
    header = .handle(handle)
  }

  static func returnHandle(_ p: inout ByteReader, into fields: inout FieldList) throws(DecodeError) -> UInt16 {
    let handle = try p.readUInt16LE() & 0x0FFF
    fields.uint("handle", "Handle", handle)
    return handle
  }

  /// Disconnect §7.1.6: handle(2) reason(1).
  static func disconnect(_ p: inout ByteReader, into fields: inout FieldList, header: inout HeaderFact, context: inout Context) throws(DecodeError) {
    try connectionHandle(&p, into: &fields, header: &header, context: &context)
    let reason = try p.readUInt8()
    let name = AssignedNumbers.hciErrorName(reason)
    fields.code("reason", "Reason", reason, width: 2, name: name)
    header = .disconnect(handle: context.handle ?? 0, reason: reason)
  }

  /// Write Local Name §7.3.11 / Read Local Name return §7.3.12: 248 bytes, UTF-8, NUL-terminated
  /// when shorter.
  /// Remote Name Request Complete §7.7.7 carries a name the same way.
  @discardableResult
  static func localName(_ p: inout ByteReader, into fields: inout FieldList) throws(DecodeError) -> String {
    let bytes = try p.readBytes(count: 248)
    let end = bytes.firstIndex(of: 0) ?? bytes.endIndex
    let name = String(decoding: bytes[bytes.startIndex..<end], as: UTF8.self)
    fields.add("name", "Name", .text(name))
    return name
  }

  /// Peer identity address type(1) and address(6) (resolving list, privacy mode).
  static func identityAddress(_ p: inout ByteReader, into fields: inout FieldList, header: inout HeaderFact) throws(DecodeError) {
    let type = try p.readUInt8()
    let address = try p.readBDAddr()
    fields.add("peer_address", "Peer identity address", .address(address, AddressType(rawValue: type)))
    header = .address(address)
  }

  /// LE Set Scan Parameters §7.8.10: type(1) interval(2) window(2) own address type(1) filter policy(1).
  static func scanParameters(_ p: inout ByteReader, into fields: inout FieldList, header: inout HeaderFact) throws(DecodeError) {
    let type = try p.readUInt8()
    fields.code("scan_type", "Scan type", type, width: 2, name: scanTypeName(type))
    fields.measure("scan_interval", "Scan interval", try p.readUInt16LE(), scale: 0.625, unit: "ms")
    fields.measure("scan_window", "Scan window", try p.readUInt16LE(), scale: 0.625, unit: "ms")
    try ownAddressType(&p, into: &fields)
    let policy = try p.readUInt8()
    fields.code("filter_policy", "Filter policy", policy, width: 2, name: scanningFilterPolicyName(policy))
    header = .scanType(active: type == 0 ? false : (type == 1 ? true : nil))
  }

  /// LE Set Scan Enable §7.8.11: enable(1) filter duplicates(1).
  /// LE Set Extended Scan Enable §7.8.65: the same, then duration(2, ×10 ms) period(2, ×1.28 s).
  static func scanEnable(_ p: inout ByteReader, into fields: inout FieldList, header: inout HeaderFact, extended: Bool) throws(DecodeError) {
    let enable = try p.readUInt8()
    fields.code("enable", "Scanning", enable, width: 2, name: enableName(enable))
    let duplicates = try p.readUInt8()
    fields.code("filter_duplicates", "Filter duplicates", duplicates, width: 2, name: filterDuplicatesName(duplicates))
    if extended {
      fields.measure("duration", "Duration", try p.readUInt16LE(), scale: 10, unit: "ms")
      fields.measure("period", "Period", try p.readUInt16LE(), scale: 1.28, unit: "s")
    }
    header = .scanEnable(enable: enable != 0, filterDuplicates: duplicates != 0)
  }

  /// LE Set Extended Scan Parameters §7.8.64: own address type(1) filter policy(1) PHYs(1),
  /// then per PHY bit set (bit 0 LE 1M, bit 2 LE Coded): type(1) interval(2) window(2).
  static func extendedScanParameters(_ p: inout ByteReader, into fields: inout FieldList, header: inout HeaderFact) throws(DecodeError) {
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
    header = .scanType(active: active)
  }

  /// The six connection parameters shared by the connection commands: interval min/max(2 each,
  /// ×1.25 ms) max latency(2) supervision timeout(2, ×10 ms) min/max CE length(2 each, ×0.625 ms).
  static func connectionParameters(_ p: inout ByteReader, into fields: inout FieldList) throws(DecodeError) {
    fields.measure("conn_interval_min", "Min connection interval", try p.readUInt16LE(), scale: 1.25, unit: "ms")
    fields.measure("conn_interval_max", "Max connection interval", try p.readUInt16LE(), scale: 1.25, unit: "ms")
    fields.uint("max_latency", "Max latency", try p.readUInt16LE())
    fields.measure("supervision_timeout", "Supervision timeout", try p.readUInt16LE(), scale: 10, unit: "ms")
    fields.measure("min_ce_length", "Min CE length", try p.readUInt16LE(), scale: 0.625, unit: "ms")
    fields.measure("max_ce_length", "Max CE length", try p.readUInt16LE(), scale: 0.625, unit: "ms")
  }

  /// LE Create Connection §7.8.12: scan interval(2) window(2) filter policy(1) peer address
  /// type(1) peer address(6) own address type(1) then the connection parameters.
  static func createConnection(_ p: inout ByteReader, into fields: inout FieldList, header: inout HeaderFact) throws(DecodeError) {
    fields.measure("scan_interval", "Scan interval", try p.readUInt16LE(), scale: 0.625, unit: "ms")
    fields.measure("scan_window", "Scan window", try p.readUInt16LE(), scale: 0.625, unit: "ms")
    let policy = try p.readUInt8()
    fields.code("filter_policy", "Initiator filter policy", policy, width: 2, name: initiatorFilterPolicyName(policy))
    let peerType = try p.readUInt8()
    let peer = try p.readBDAddr()
    fields.add("peer_address", "Peer address", .address(peer, AddressType(rawValue: peerType)))
    try ownAddressType(&p, into: &fields)
    try connectionParameters(&p, into: &fields)
    header = .connect(peer: policy == 0 ? peer : nil)
  }

  /// LE Extended Create Connection §7.8.66: filter policy(1) own address type(1) peer address
  /// type(1) peer address(6) initiating PHYs(1), then per PHY bit set (bit 0 LE 1M, bit 1 LE 2M,
  /// bit 2 LE Coded): scan interval(2) window(2) and the connection parameters.
  /// v2 (0x2085) starts with advertising handle(1) and subevent(1).
  static func extendedCreateConnection(_ p: inout ByteReader, into fields: inout FieldList, header: inout HeaderFact, v2: Bool) throws(DecodeError) {
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
    header = .connect(peer: policy == 0 ? peer : nil)
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
  static func connectionUpdate(_ p: inout ByteReader, into fields: inout FieldList, header: inout HeaderFact, context: inout Context) throws(DecodeError) {
    try connectionHandle(&p, into: &fields, header: &header, context: &context)
    try connectionParameters(&p, into: &fields)
  }

  /// LE Start Encryption §7.8.24: handle(2) random number(8) EDIV(2) LTK(16).
  static func startEncryption(_ p: inout ByteReader, into fields: inout FieldList, header: inout HeaderFact, context: inout Context) throws(DecodeError) {
    try connectionHandle(&p, into: &fields, header: &header, context: &context)
    fields.hex("random_number", "Random number", try p.readUInt64LE(), width: 16)
    fields.hex("ediv", "Encrypted diversifier", try p.readUInt16LE(), width: 4)
    fields.bytes("ltk", "Long term key", try p.readBytes(count: 16))
  }

  /// LE Set Default PHY §7.8.48 (and the middle of LE Set PHY §7.8.49):
  /// all PHYs(1) TX PHYs(1) RX PHYs(1).
  static func phyPreferences(_ p: inout ByteReader, into fields: inout FieldList) throws(DecodeError) {
    let all = try p.readUInt8()
    fields.add("all_phys", "All PHYs", .codeText(UInt64(all), width: 2, name: bitText(UInt64(all), allPhysBits)))
    let tx = try p.readUInt8()
    fields.add("tx_phys", "TX PHYs", .codeText(UInt64(tx), width: 2, name: bitText(UInt64(tx), phyBits)))
    let rx = try p.readUInt8()
    fields.add("rx_phys", "RX PHYs", .codeText(UInt64(rx), width: 2, name: bitText(UInt64(rx), phyBits)))
  }

  /// LE Set Advertising Parameters §7.8.5: interval min/max(2 each, ×0.625 ms) type(1) own address
  /// type(1) peer address type(1) peer address(6) channel map(1) filter policy(1).
  static func advertisingParameters(_ p: inout ByteReader, into fields: inout FieldList, header: inout HeaderFact) throws(DecodeError) {
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
    header = .advertisingType(type)
  }

  /// LE Set Advertising Data §7.8.7 / LE Set Scan Response Data §7.8.8: length(1) then 31 bytes,
  /// of which the first `length` are AD structures and the rest padding.
  static func legacyAdvertisingData(_ p: inout ByteReader, into fields: inout FieldList, header: inout HeaderFact, label: Name, field: StaticString) throws(DecodeError) {
    let length = Int(try p.readUInt8())
    fields.uint("length", "Data length", length)
    guard length <= 31 else {
      throw DecodeError(.invalidValue(field: field, value: UInt64(length)), layer: p.layer, offset: p.offset - 1)
    }
    header = .byteCount(length)
    var data = try p.readReader(count: length)
    try AdvertisingData.decode(&data, into: &fields, key: "ad", label: label)
    try p.skip(31 - length)
  }

  /// LE Set Extended Advertising Parameters §7.8.53, v1 (25 bytes): handle(1) event
  /// properties(2) primary interval min/max(3 each, ×0.625 ms) primary channel map(1) own address
  /// type(1) peer address type(1) peer address(6) filter policy(1) TX power(1, int8, 127 = no
  /// preference) primary PHY(1) secondary max skip(1) secondary PHY(1) SID(1) scan request
  /// notification enable(1). v2 (0x207F) adds primary and secondary PHY options(1 each).
  static func extendedAdvertisingParameters(_ p: inout ByteReader, into fields: inout FieldList, header: inout HeaderFact, v2: Bool) throws(DecodeError) {
    let handle = try p.readUInt8()
    fields.uint("adv_handle", "Advertising handle", handle)
    header = .advertisingSet(handle, bytes: nil)
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
  static func extendedAdvertisingData(_ p: inout ByteReader, into fields: inout FieldList, header: inout HeaderFact, label: Name) throws(DecodeError) {
    let handle = try p.readUInt8()
    fields.uint("adv_handle", "Advertising handle", handle)
    let operation = try p.readUInt8()
    fields.code("operation", "Operation", operation, width: 2, name: dataOperationName(operation))
    let preference = try p.readUInt8()
    fields.code("fragment_preference", "Fragment preference", preference, width: 2, name: fragmentPreferenceName(preference))
    let length = Int(try p.readUInt8())
    fields.uint("length", "Data length", length)
    header = .advertisingSet(handle, bytes: length)
    var data = try p.readReader(count: length)
    if operation == 3 || operation == 4 {
      try AdvertisingData.decode(&data, into: &fields, key: "ad", label: label)
    } else if !data.isAtEnd {
      fields.bytes("data", "Data fragment", data.readRemaining())
    }
  }

  /// LE Set Extended Advertising Enable §7.8.56: enable(1) number of sets(1), then per set:
  /// handle(1) duration(2, ×10 ms, 0 = until disabled) max extended advertising events(1).
  static func extendedAdvertisingEnable(_ p: inout ByteReader, into fields: inout FieldList, header: inout HeaderFact) throws(DecodeError) {
    let enable = try p.readUInt8()
    fields.code("enable", "Advertising", enable, width: 2, name: enableName(enable))
    let count = try p.readUInt8()
    fields.uint("num_sets", "Number of sets", count)
    header = .advertisingSetsEnable(enable: enable != 0, sets: Int(count))
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

  static func ownAddressType(_ p: inout ByteReader, into fields: inout FieldList) throws(DecodeError) {
    let type = try p.readUInt8()
    fields.code("own_address_type", "Own address type", type, width: 2, name: ownAddressTypeName(type))
  }
}
