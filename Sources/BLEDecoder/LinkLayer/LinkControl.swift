import BLECore

/// LL control PDUs: opcode(1) then CtrData (Core Vol 6 Part B §2.4.2). The parameters of the
/// procedures a connection's story is made of are decoded; others show their bytes.
package enum LinkControl {
  package static func name(_ opcode: UInt8) -> Name {
    switch opcode {
    case 0x00: return "LL_CONNECTION_UPDATE_IND"
    case 0x01: return "LL_CHANNEL_MAP_IND"
    case 0x02: return "LL_TERMINATE_IND"
    case 0x03: return "LL_ENC_REQ"
    case 0x04: return "LL_ENC_RSP"
    case 0x05: return "LL_START_ENC_REQ"
    case 0x06: return "LL_START_ENC_RSP"
    case 0x07: return "LL_UNKNOWN_RSP"
    case 0x08: return "LL_FEATURE_REQ"
    case 0x09: return "LL_FEATURE_RSP"
    case 0x0A: return "LL_PAUSE_ENC_REQ"
    case 0x0B: return "LL_PAUSE_ENC_RSP"
    case 0x0C: return "LL_VERSION_IND"
    case 0x0D: return "LL_REJECT_IND"
    case 0x0E: return "LL_PERIPHERAL_FEATURE_REQ"
    case 0x0F: return "LL_CONNECTION_PARAM_REQ"
    case 0x10: return "LL_CONNECTION_PARAM_RSP"
    case 0x11: return "LL_REJECT_EXT_IND"
    case 0x12: return "LL_PING_REQ"
    case 0x13: return "LL_PING_RSP"
    case 0x14: return "LL_LENGTH_REQ"
    case 0x15: return "LL_LENGTH_RSP"
    case 0x16: return "LL_PHY_REQ"
    case 0x17: return "LL_PHY_RSP"
    case 0x18: return "LL_PHY_UPDATE_IND"
    case 0x19: return "LL_MIN_USED_CHANNELS_IND"
    case 0x1A: return "LL_CTE_REQ"
    case 0x1B: return "LL_CTE_RSP"
    case 0x1C: return "LL_PERIODIC_SYNC_IND"
    case 0x1D: return "LL_CLOCK_ACCURACY_REQ"
    case 0x1E: return "LL_CLOCK_ACCURACY_RSP"
    case 0x1F: return "LL_CIS_REQ"
    case 0x20: return "LL_CIS_RSP"
    case 0x21: return "LL_CIS_IND"
    case 0x22: return "LL_CIS_TERMINATE_IND"
    case 0x23: return "LL_POWER_CONTROL_REQ"
    case 0x24: return "LL_POWER_CONTROL_RSP"
    case 0x25: return "LL_POWER_CHANGE_IND"
    case 0x26: return "LL_SUBRATE_REQ"
    case 0x27: return "LL_SUBRATE_IND"
    case 0x28: return "LL_CHANNEL_REPORTING_IND"
    case 0x29: return "LL_CHANNEL_STATUS_IND"
    default: return "LL control PDU"
    }
  }

  /// PHY bits (LL_PHY_REQ/RSP, LL_PHY_UPDATE_IND): bit 0 LE 1M, 1 LE 2M, 2 LE Coded.
  package static let phyBits: [(bit: UInt64, name: Name)] = [(0x01, "LE 1M"), (0x02, "LE 2M"), (0x04, "LE Coded")]

  /// A session key diversifier or IV: shown as it travels, kept as a number (least
  /// significant octet first) for the session key.
  static func littleEndian(_ octets: ByteView, into fields: inout FieldList, _ key: Name, _ label: Name) -> UInt64 {
    fields.bytes(key, label, octets)
    return octets.reversed().reduce(0) { $0 << 8 | UInt64($1) }
  }

  static func decode(_ r: inout ByteReader, into fields: inout FieldList) throws(DecodeError) -> LinkControlFact {
    let opcode = try r.readUInt8()
    fields.code("control_opcode", "Control opcode", opcode, width: 2, name: name(opcode))
    let fact: LinkControlFact
    switch opcode {
    case 0x00:
      fields.measure("window_size", "Transmit window size", try r.readUInt8(), scale: 1.25, unit: "ms")
      fields.measure("window_offset", "Transmit window offset", try r.readUInt16LE(), scale: 1.25, unit: "ms")
      let (interval, latency, timeout) = try LEMetaEvent.connectionParameters(&fields, &r)
      let instant = try r.readUInt16LE()
      fields.uint("instant", "Instant", instant)
      fact = .connectionUpdate(interval: interval, latency: latency, timeout: timeout, instant: instant)
    case 0x01:
      let map = try r.readBytes(count: 5)
      fields.bytes("channel_map", "Channel map", map)
      let used = map.reduce(0) { $0 + $1.nonzeroBitCount }
      fields.uint("used_channels", "Channels used", used)
      let instant = try r.readUInt16LE()
      fields.uint("instant", "Instant", instant)
      fact = .channelMap(used: used, instant: instant)
    case 0x02, 0x0D:
      let error = try r.readUInt8()
      fields.code("error", "Error", error, width: 2, name: AssignedNumbers.hciErrorName(error))
      fact = opcode == 0x02 ? .terminate(reason: error) : .reject(rejected: nil, error: error)
    case 0x03:
      let random = try r.readUInt64LE()
      fields.hex("random_number", "Random number", random, width: 16)
      let ediv = try r.readUInt16LE()
      fields.hex("ediv", "Encrypted diversifier", ediv, width: 4)
      let skd = littleEndian(try r.readBytes(count: 8), into: &fields, "skd_c", "Session key diversifier (central)")
      let iv = littleEndian(try r.readBytes(count: 4), into: &fields, "iv_c", "Initialization vector (central)")
      fact = .encryptionRequest(random: random, ediv: ediv, skd: skd, iv: UInt32(truncatingIfNeeded: iv))
    case 0x04:
      let skd = littleEndian(try r.readBytes(count: 8), into: &fields, "skd_p", "Session key diversifier (peripheral)")
      let iv = littleEndian(try r.readBytes(count: 4), into: &fields, "iv_p", "Initialization vector (peripheral)")
      fact = .encryptionResponse(skd: skd, iv: UInt32(truncatingIfNeeded: iv))
    case 0x07:
      let type = try r.readUInt8()
      fields.code("unknown_type", "Unknown type", type, width: 2, name: name(type))
      fact = .unknownResponse(type: type)
    case 0x08, 0x09, 0x0E:
      let mask = try r.readUInt64LE()
      fields.hex("features", "Features", mask, width: 16)
      fact = .features(opcode: opcode, mask: mask)
    case 0x0C:
      let version = try r.readUInt8()
      fields.code("version", "Link Layer version", version, width: 2, name: HCICommand.coreVersionName(version))
      let company = try r.readUInt16LE()
      fields.code("company", "Company", company, width: 4, name: AssignedNumbers.companyName(company))
      let subversion = try r.readUInt16LE()
      fields.hex("subversion", "Subversion", subversion, width: 4)
      fact = .version(version: version, company: company, subversion: subversion)
    case 0x0F, 0x10:
      let minimum = try r.readUInt16LE()
      fields.measure("interval_min", "Minimum interval", minimum, scale: 1.25, unit: "ms")
      let maximum = try r.readUInt16LE()
      fields.measure("interval_max", "Maximum interval", maximum, scale: 1.25, unit: "ms")
      let latency = try r.readUInt16LE()
      fields.uint("latency", "Peripheral latency", latency)
      let timeout = try r.readUInt16LE()
      fields.measure("supervision_timeout", "Supervision timeout", timeout, scale: 10, unit: "ms")
      fields.uint("preferred_periodicity", "Preferred periodicity", try r.readUInt8())
      fields.uint("reference_event", "Reference connection event", try r.readUInt16LE())
      fields.beginArray("offsets", "Anchor offsets")
      for _ in 0..<6 { fields.uint("", "Offset", try r.readUInt16LE()) }
      fields.end()
      fact = .connectionParameters(opcode: opcode, minimum: minimum, maximum: maximum, latency: latency, timeout: timeout)
    case 0x11:
      let rejected = try r.readUInt8()
      fields.code("reject_opcode", "Rejected opcode", rejected, width: 2, name: name(rejected))
      let error = try r.readUInt8()
      fields.code("error", "Error", error, width: 2, name: AssignedNumbers.hciErrorName(error))
      fact = .reject(rejected: rejected, error: error)
    case 0x14, 0x15:
      let receive = try r.readUInt16LE()
      fields.uint("max_rx_octets", "Max RX octets", receive)
      let receiveTime = try r.readUInt16LE()
      fields.measure("max_rx_time", "Max RX time", receiveTime, scale: 1, unit: "us")
      let transmit = try r.readUInt16LE()
      fields.uint("max_tx_octets", "Max TX octets", transmit)
      let transmitTime = try r.readUInt16LE()
      fields.measure("max_tx_time", "Max TX time", transmitTime, scale: 1, unit: "us")
      fact = .length(opcode: opcode, maxReceiveOctets: receive, maxReceiveTime: receiveTime, maxTransmitOctets: transmit, maxTransmitTime: transmitTime)
    case 0x16, 0x17:
      let transmit = try r.readUInt8()
      fields.add("tx_phys", "TX PHYs", .codeText(UInt64(transmit), width: 2, name: HCICommand.bitText(UInt64(transmit), phyBits)))
      let receive = try r.readUInt8()
      fields.add("rx_phys", "RX PHYs", .codeText(UInt64(receive), width: 2, name: HCICommand.bitText(UInt64(receive), phyBits)))
      fact = .phyPreferences(opcode: opcode, transmit: transmit, receive: receive)
    case 0x18:
      let toPeripheral = try r.readUInt8()
      fields.add("phy_c_to_p", "PHY central to peripheral", .codeText(UInt64(toPeripheral), width: 2, name: HCICommand.bitText(UInt64(toPeripheral), phyBits)))
      let toCentral = try r.readUInt8()
      fields.add("phy_p_to_c", "PHY peripheral to central", .codeText(UInt64(toCentral), width: 2, name: HCICommand.bitText(UInt64(toCentral), phyBits)))
      let instant = try r.readUInt16LE()
      fields.uint("instant", "Instant", instant)
      fact = .phyUpdate(centralToPeripheral: toPeripheral, peripheralToCentral: toCentral, instant: instant)
    default:
      if !r.isAtEnd { fields.bytes("data", "Data", r.readRemaining()) }
      fact = .opcode(opcode)
    }
    if !r.isAtEnd { fields.bytes("extra", "Unexpected bytes", r.readRemaining()) }
    return fact
  }
}
