import BLECore

/// Advertising physical channel PDUs (Core Vol 6 Part B §2.3): a header of PDU type(4 bits),
/// RFU(1), ChSel(1), TxAdd(1), RxAdd(1), length(8), then the payload. TxAdd and RxAdd say
/// whether the addresses the payload carries are random.
package enum AdvertisingPDU {
  package static func name(_ type: UInt8) -> Name {
    switch type {
    case 0: return "ADV_IND"
    case 1: return "ADV_DIRECT_IND"
    case 2: return "ADV_NONCONN_IND"
    case 3: return "SCAN_REQ"
    case 4: return "SCAN_RSP"
    case 5: return "CONNECT_IND"
    case 6: return "ADV_SCAN_IND"
    case 7: return "ADV_EXT_IND"
    case 8: return "AUX_CONNECT_RSP"
    default: return "Reserved PDU type"
    }
  }

  /// Returns the connection's parameters and the initiator's address type when the PDU is a
  /// CONNECT_IND.
  @discardableResult
  static func decode(
    _ pdu: inout ByteReader, into frame: inout DissectedFrame, registry: DecoderRegistry
  ) throws(DecodeError) -> (parameters: ConnectionParameters, initiatorType: AddressType, window: (size: UInt8, offset: UInt16))? {
    let bits = try pdu.readUInt8()
    let length = Int(try pdu.readUInt8())
    let type = bits & 0x0F
    let txRandom = bits & 0x40 != 0
    let rxRandom = bits & 0x80 != 0
    frame.fields.code("pdu_type", "PDU type", type, width: 2, name: name(type))
    frame.fields.addVerbose("chsel", "Channel selection #2", .bool(bits & 0x20 != 0))
    frame.fields.addVerbose("length", "Length", .unsigned(UInt64(length), .decimal))
    frame.header = .advertisingPDU(type: type, advertiser: nil, other: nil, name: nil)
    guard length <= pdu.remaining else {
      throw DecodeError(.lengthMismatch(field: "PDU length", declared: length, actual: pdu.remaining), layer: .linkLayer, offset: pdu.offset - 1)
    }
    let tx: AddressType = txRandom ? .randomDevice : .publicDevice
    let rx: AddressType = rxRandom ? .randomDevice : .publicDevice
    func address(_ key: Name, _ label: Name, _ type: AddressType) throws(DecodeError) -> BDAddr {
      let address = try pdu.readBDAddr()
      frame.fields.add(key, label, .address(address, type))
      return address
    }
    switch type {
    case 0, 2, 6, 4:  // ADV_IND, ADV_NONCONN_IND, ADV_SCAN_IND, SCAN_RSP: AdvA, then AD structures
      let advertiser = try address("adv_address", "Advertiser", tx)
      frame.header = .advertisingPDU(type: type, advertiser: advertiser, other: nil, name: nil)
      var data = try pdu.readReader(count: pdu.remaining, layer: .advertising)
      let advertised = try AdvertisingData.decode(&data, into: &frame.fields, key: type == 4 ? "scan_response" : "ad", label: type == 4 ? "Scan response data" : "Advertising data", registry: registry)
      frame.header = .advertisingPDU(type: type, advertiser: advertiser, other: nil, name: advertised.name)
      frame.linkEvents.append(.advertisement(advertised.fact(address: advertiser, type: tx, rssi: frame.air?.header.signal ?? 127)))
    case 1:  // ADV_DIRECT_IND: AdvA, TargetA
      let advertiser = try address("adv_address", "Advertiser", tx)
      let target = try address("target_address", "Target", rx)
      frame.header = .advertisingPDU(type: type, advertiser: advertiser, other: target, name: nil)
    case 3:  // SCAN_REQ (and AUX_SCAN_REQ): ScanA, AdvA
      let scanner = try address("scan_address", "Scanner", tx)
      let advertiser = try address("adv_address", "Advertiser", rx)
      frame.header = .advertisingPDU(type: type, advertiser: advertiser, other: scanner, name: nil)
    case 5:  // CONNECT_IND (and AUX_CONNECT_REQ): InitA, AdvA, LLData
      let initiator = try address("init_address", "Initiator", tx)
      let advertiser = try address("adv_address", "Advertiser", rx)
      frame.header = .advertisingPDU(type: type, advertiser: advertiser, other: initiator, name: nil)
      let (accessAddress, parameters, window) = try connectionData(&pdu, &frame.fields)
      frame.header = .connectIndication(initiator: initiator, advertiser: advertiser, advertiserType: rx, accessAddress: accessAddress, interval: parameters.interval)
      if !pdu.isAtEnd { frame.fields.bytes("extra", "Unexpected bytes", pdu.readRemaining()) }
      return (parameters, tx, window)
    case 7, 8:  // ADV_EXT_IND / AUX_* and AUX_CONNECT_RSP: the common extended payload
      try extended(&pdu, type: type, tx: tx, rx: rx, into: &frame, registry: registry)
    default:
      if !pdu.isAtEnd { frame.fields.bytes("payload", "Payload", pdu.readRemaining()) }
    }
    if !pdu.isAtEnd { frame.fields.bytes("extra", "Unexpected bytes", pdu.readRemaining()) }
    return nil
  }

  /// CONNECT_IND's LLData (22 bytes): access address(4) CRCInit(3) WinSize(1, ×1.25 ms)
  /// WinOffset(2, ×1.25 ms) Interval(2, ×1.25 ms) Latency(2) Timeout(2, ×10 ms) ChM(5)
  /// Hop(5 bits) SCA(3 bits). Returns the access address and the connection's parameters.
  static func connectionData(
    _ pdu: inout ByteReader, _ fields: inout FieldList
  ) throws(DecodeError) -> (UInt32, ConnectionParameters, window: (size: UInt8, offset: UInt16)) {
    fields.beginObject("connection", "Connection")
    defer { fields.end() }
    let accessAddress = try pdu.readUInt32LE()
    fields.hex("access_address", "Access address", accessAddress, width: 8)
    fields.hex("crc_init", "CRC init", try pdu.readUInt24LE(), width: 6)
    let windowSize = try pdu.readUInt8()
    fields.measure("window_size", "Transmit window size", windowSize, scale: 1.25, unit: "ms")
    let windowOffset = try pdu.readUInt16LE()
    fields.measure("window_offset", "Transmit window offset", windowOffset, scale: 1.25, unit: "ms")
    let (interval, latency, timeout) = try LEMetaEvent.connectionParameters(&fields, &pdu)
    let map = try pdu.readBytes(count: 5)
    fields.bytes("channel_map", "Channel map", map)
    fields.uint("used_channels", "Channels used", map.reduce(0) { $0 + $1.nonzeroBitCount })
    let hop = try pdu.readUInt8()
    fields.uint("hop", "Hop increment", hop & 0x1F)
    fields.code("sca", "Sleep clock accuracy", hop >> 5, width: 1, name: sleepClockAccuracyName(hop >> 5))
    return (accessAddress, ConnectionParameters(interval: interval, latency: latency, supervisionTimeout: timeout), (windowSize, windowOffset))
  }

  /// Worst-case sleep clock accuracy of the central (SCA, Core Vol 6 Part B §2.3.3.1).
  static func sleepClockAccuracyName(_ value: UInt8) -> Name? {
    switch value {
    case 0: return "251–500 ppm"
    case 1: return "151–250 ppm"
    case 2: return "101–150 ppm"
    case 3: return "76–100 ppm"
    case 4: return "51–75 ppm"
    case 5: return "31–50 ppm"
    case 6: return "21–30 ppm"
    case 7: return "0–20 ppm"
    default: return nil
    }
  }

  /// The Common Extended Advertising Payload (§2.3.4): extended header length(6 bits)
  /// AdvMode(2), then (when the length is not 0) flags(1) and the fields they announce in order:
  /// AdvA(6) TargetA(6) CTEInfo(1) ADI(2) AuxPtr(3) SyncInfo(18) TxPower(1), the rest of the
  /// extended header being ACAD; after it, AdvData.
  static func extended(
    _ pdu: inout ByteReader, type: UInt8, tx: AddressType, rx: AddressType, into frame: inout DissectedFrame, registry: DecoderRegistry
  ) throws(DecodeError) {
    let first = try pdu.readUInt8()
    let headerLength = Int(first & 0x3F)
    let mode = first >> 6
    frame.fields.code("adv_mode", "AdvMode", mode, width: 1, name: mode == 0 ? "non-connectable, non-scannable" : (mode == 1 ? "connectable" : (mode == 2 ? "scannable" : nil)))
    var extendedHeader = try pdu.readReader(count: headerLength)
    var advertiser: BDAddr?
    var target: BDAddr?
    if headerLength > 0 {
      let flags = try extendedHeader.readUInt8()
      if flags & 0x01 != 0 {
        let address = try extendedHeader.readBDAddr()
        frame.fields.add("adv_address", "Advertiser", .address(address, tx))
        advertiser = address
      }
      if flags & 0x02 != 0 {
        let address = try extendedHeader.readBDAddr()
        frame.fields.add("target_address", "Target", .address(address, rx))
        target = address
      }
      if flags & 0x04 != 0 { frame.fields.hex("cte_info", "CTEInfo", try extendedHeader.readUInt8(), width: 2) }
      if flags & 0x08 != 0 {
        let adi = try extendedHeader.readUInt16LE()
        frame.fields.uint("did", "Advertising data ID", adi & 0x0FFF)
        frame.fields.uint("sid", "Advertising set ID", adi >> 12)
      }
      if flags & 0x10 != 0 {
        let pointer = try extendedHeader.readUInt24LE()
        frame.fields.uint("aux_channel", "Auxiliary channel", pointer & 0x3F)
        frame.fields.measure("aux_offset", "Auxiliary offset", (pointer >> 8) & 0x1FFF, scale: pointer & 0x80 != 0 ? 300 : 30, unit: "us")
      }
      if flags & 0x20 != 0 { frame.fields.bytes("sync_info", "SyncInfo", try extendedHeader.readBytes(count: 18)) }
      if flags & 0x40 != 0 { frame.fields.measure("tx_power", "TX power", Int8(bitPattern: try extendedHeader.readUInt8()), scale: 1, unit: "dBm") }
      if !extendedHeader.isAtEnd { frame.fields.bytes("acad", "ACAD", extendedHeader.readRemaining()) }
    }
    frame.header = .advertisingPDU(type: type, advertiser: advertiser, other: target, name: nil)
    if !pdu.isAtEnd {
      var data = try pdu.readReader(count: pdu.remaining, layer: .advertising)
      let advertised = try AdvertisingData.decode(&data, into: &frame.fields, registry: registry)
      frame.header = .advertisingPDU(type: type, advertiser: advertiser, other: target, name: advertised.name)
      if let advertiser {
        frame.linkEvents.append(.advertisement(advertised.fact(address: advertiser, type: tx, rssi: frame.air?.header.signal ?? 127)))
      }
    }
  }
}
