import BLECore

/// LE Meta event (0x3E) subevents.
///
/// Units: intervals ×1.25 ms, supervision timeout ×10 ms, RSSI and TX power in dBm (127 = not
/// available). The corresponding specification is Core Vol 4, Part E, §7.7.65.
package enum LEMetaEvent {
  package static func subeventName(_ code: UInt8) -> Name {
    AssignedNumbers.hciLESubeventName(code) ?? "Unknown LE Subevent"
  }

  package static func roleName(_ role: UInt8) -> Name? {
    role == 0 ? "central" : (role == 1 ? "peripheral" : nil)
  }

  package static func phyName(_ phy: UInt8) -> Name? {
    switch phy {
    case 0: return "none"
    case 1: return "LE 1M"
    case 2: return "LE 2M"
    case 3: return "LE Coded"
    default: return nil
    }
  }

  package static func advertisingEventName(_ type: UInt8) -> Name? {
    switch type {
    case 0: return "ADV_IND"
    case 1: return "ADV_DIRECT_IND"
    case 2: return "ADV_SCAN_IND"
    case 3: return "ADV_NONCONN_IND"
    case 4: return "SCAN_RSP"
    default: return nil
    }
  }

  package static func clockAccuracyName(_ value: UInt8) -> Name? {
    switch value {
    case 0: return "500 ppm"
    case 1: return "250 ppm"
    case 2: return "150 ppm"
    case 3: return "100 ppm"
    case 4: return "75 ppm"
    case 5: return "50 ppm"
    case 6: return "30 ppm"
    case 7: return "20 ppm"
    default: return nil
    }
  }

  static func address(_ fields: inout FieldList, _ p: inout ByteReader, key: Name, label: Name) throws(DecodeError) -> (BDAddr, AddressType) {
    let type = AddressType(rawValue: try p.readUInt8())
    let address = try p.readBDAddr()
    // The type travels with the address (text "(random)", JSON "<key>_type").
    fields.add(key, label, .address(address, type))
    return (address, type)
  }

  static func connectionParameters(_ fields: inout FieldList, _ p: inout ByteReader) throws(DecodeError) -> (UInt16, UInt16, UInt16) {
    let interval = try p.readUInt16LE()
    let latency = try p.readUInt16LE()
    let timeout = try p.readUInt16LE()
    fields.measure("interval", "Connection interval", interval, scale: 1.25, unit: "ms")
    fields.uint("latency", "Peripheral latency", latency)
    fields.measure("supervision_timeout", "Supervision timeout", timeout, scale: 10, unit: "ms")
    return (interval, latency, timeout)
  }

  static func decode(_ p: inout ByteReader, into fields: inout FieldList, header: inout HeaderFact, context: inout HCIEvent.Context) throws(DecodeError) -> Bool {
    let sub = try p.readUInt8()
    fields.addVerbose("subevent", "Subevent", .code(UInt64(sub), width: 2, name: AssignedNumbers.hciLESubeventName(sub)))
    context.subevent = sub
    switch sub {
    case 0x01, 0x0A, 0x29:  // Connection Complete, Enhanced Connection Complete v1/v2
      let result = try HCIEvent.status(&fields, &p)
      let h = try HCIEvent.handle(&fields, &p, &context)
      let role = try p.readUInt8()
      fields.code("role", "Role", role, width: 2, name: roleName(role))
      let (peer, peerType) = try address(&fields, &p, key: "peer_address", label: "Peer address")
      if sub != 0x01 {
        fields.add("local_rpa", "Local resolvable private address", .address(try p.readBDAddr(), nil))
        fields.add("peer_rpa", "Peer resolvable private address", .address(try p.readBDAddr(), nil))
      }
      let (interval, latency, timeout) = try connectionParameters(&fields, &p)
      let accuracy = try p.readUInt8()
      fields.code("central_clock_accuracy", "Central clock accuracy", accuracy, width: 2, name: clockAccuracyName(accuracy))
      if sub == 0x29 {
        fields.uint("advertising_handle", "Advertising handle", try p.readUInt8())
        fields.hex("sync_handle", "Sync handle", try p.readUInt16LE(), width: 4)
      }
      context.events.append(.connected(
        status: result, handle: h, peer: peer, peerType: peerType, role: LinkRole(rawValue: role),
        parameters: ConnectionParameters(interval: interval, latency: latency, supervisionTimeout: timeout)))
      if result == 0 {
        context.change = .opened(Connection(
          adapter: context.adapter, handle: h, generation: 0, peer: peer, peerType: peerType,
          role: LinkRole(rawValue: role), interval: interval, latency: latency, supervisionTimeout: timeout,
          openedInFrame: context.frameNumber, isLE: true))
        header = .leConnectionComplete(peer: peer, role: role)
      } else {
        context.handle = nil  // the handle of a failed connection means nothing
        header = .status(result)
      }
    case 0x02:  // Advertising Report
      let count = Int(try p.readUInt8())
      fields.addVerbose("num_reports", "Number of reports", .unsigned(UInt64(count), .decimal))
      fields.beginArray("reports", "Reports")
      for index in 0..<count {
        fields.beginObject("", "Report")
        let type = try p.readUInt8()
        fields.code("event_type", "Event type", type, width: 2, name: advertisingEventName(type))
        let (addr, addrType) = try address(&fields, &p, key: "address", label: "Address")
        let length = Int(try p.readUInt8())
        fields.addVerbose("data_length", "Data length", .unsigned(UInt64(length), .decimal))
        var data = try p.readReader(count: length, layer: .advertising)
        let advertised = try AdvertisingData.decode(&data, into: &fields, registry: context.registry)
        let rssi = try p.readInt8()
        context.events.append(.advertisement(advertised.fact(address: addr, type: addrType, rssi: rssi)))
        fields.measure("rssi", "RSSI", rssi, scale: 1, unit: "dBm")
        fields.end()
        if index == 0 { header = .advertisingReport(addr, type: type, rssi: rssi) }
      }
      fields.end()
    case 0x03:  // Connection Update Complete
      let result = try HCIEvent.status(&fields, &p)
      let h = try HCIEvent.handle(&fields, &p, &context)
      let (interval, latency, timeout) = try connectionParameters(&fields, &p)
      context.events.append(.parametersUpdated(
        status: result, handle: h, parameters: ConnectionParameters(interval: interval, latency: latency, supervisionTimeout: timeout)))
      if result == 0 {
        context.change = .updated(handle: h, interval: interval, latency: latency, supervisionTimeout: timeout)
        header = .connectionParameters(ConnectionParameters(interval: interval, latency: latency, supervisionTimeout: timeout))
      }
    case 0x04:  // Read Remote Features Complete
      _ = try HCIEvent.status(&fields, &p)
      _ = try HCIEvent.handle(&fields, &p, &context)
      fields.hex("le_features", "LE features", try p.readUInt64LE(), width: 16)
    case 0x05:  // Long Term Key Request
      _ = try HCIEvent.handle(&fields, &p, &context)
      fields.hex("random_number", "Random number", try p.readUInt64LE(), width: 16)
      fields.hex("ediv", "Encrypted diversifier", try p.readUInt16LE(), width: 4)
    case 0x06:  // Remote Connection Parameter Request
      _ = try HCIEvent.handle(&fields, &p, &context)
      fields.measure("interval_min", "Minimum interval", try p.readUInt16LE(), scale: 1.25, unit: "ms")
      fields.measure("interval_max", "Maximum interval", try p.readUInt16LE(), scale: 1.25, unit: "ms")
      fields.uint("latency", "Peripheral latency", try p.readUInt16LE())
      fields.measure("supervision_timeout", "Supervision timeout", try p.readUInt16LE(), scale: 10, unit: "ms")
    case 0x07:  // Data Length Change
      let h = try HCIEvent.handle(&fields, &p, &context)
      let tx = try p.readUInt16LE()
      fields.uint("max_tx_octets", "Max TX octets", tx)
      let txTime = try p.readUInt16LE()
      fields.measure("max_tx_time", "Max TX time", txTime, scale: 1, unit: "us")
      let rx = try p.readUInt16LE()
      fields.uint("max_rx_octets", "Max RX octets", rx)
      let rxTime = try p.readUInt16LE()
      fields.measure("max_rx_time", "Max RX time", rxTime, scale: 1, unit: "us")
      context.events.append(.dataLengthChanged(handle: h, maxTransmitOctets: tx, maxTransmitTime: txTime, maxReceiveOctets: rx, maxReceiveTime: rxTime))
      header = .dataLength(transmitOctets: tx, receiveOctets: rx)
    case 0x0C:  // PHY Update Complete
      let result = try HCIEvent.status(&fields, &p)
      let h = try HCIEvent.handle(&fields, &p, &context)
      let tx = try p.readUInt8()
      let rx = try p.readUInt8()
      context.events.append(.phyUpdated(status: result, handle: h, transmit: tx, receive: rx))
      fields.code("tx_phy", "TX PHY", tx, width: 2, name: phyName(tx))
      fields.code("rx_phy", "RX PHY", rx, width: 2, name: phyName(rx))
      if result == 0 { header = .phys(transmit: tx, receive: rx) }
    case 0x0D:  // Extended Advertising Report
      let count = Int(try p.readUInt8())
      fields.addVerbose("num_reports", "Number of reports", .unsigned(UInt64(count), .decimal))
      fields.beginArray("reports", "Reports")
      for index in 0..<count {
        fields.beginObject("", "Report")
        let type = try p.readUInt16LE()
        fields.hex("event_type", "Event type", type, width: 4)
        extendedEventTypeFlags(type, &fields)
        let (addr, addrType) = try address(&fields, &p, key: "address", label: "Address")
        let primary = try p.readUInt8()
        fields.code("primary_phy", "Primary PHY", primary, width: 2, name: phyName(primary))
        let secondary = try p.readUInt8()
        fields.code("secondary_phy", "Secondary PHY", secondary, width: 2, name: phyName(secondary))
        fields.uint("sid", "Advertising SID", try p.readUInt8())
        fields.measure("tx_power", "TX power", try p.readInt8(), scale: 1, unit: "dBm")
        let rssi = try p.readInt8()
        fields.measure("rssi", "RSSI", rssi, scale: 1, unit: "dBm")
        let periodic = try p.readUInt16LE()
        if periodic != 0 { fields.measure("periodic_interval", "Periodic advertising interval", periodic, scale: 1.25, unit: "ms") }
        let directType = AddressType(rawValue: try p.readUInt8())
        let direct = try p.readBDAddr()
        if type & 0x04 != 0 { fields.add("direct_address", "Direct address", .address(direct, directType)) }
        let length = Int(try p.readUInt8())
        fields.addVerbose("data_length", "Data length", .unsigned(UInt64(length), .decimal))
        var data = try p.readReader(count: length, layer: .advertising)
        let advertised = try AdvertisingData.decode(&data, into: &fields, registry: context.registry)
        context.events.append(.advertisement(advertised.fact(address: addr, type: addrType, rssi: rssi)))
        fields.end()
        if index == 0 { header = .advertisingReport(addr, type: nil, rssi: rssi) }
      }
      fields.end()
    case 0x12:  // Advertising Set Terminated
      let result = try HCIEvent.status(&fields, &p)
      fields.uint("advertising_handle", "Advertising handle", try p.readUInt8())
      let h = try p.readUInt16LE() & 0x0FFF
      fields.uint("handle", "Connection handle", h)
      if result == 0 { context.handle = h }
      fields.uint("completed_events", "Completed extended advertising events", try p.readUInt8())
    case 0x14:  // Channel Selection Algorithm
      _ = try HCIEvent.handle(&fields, &p, &context)
      let algorithm = try p.readUInt8()
      fields.code("algorithm", "Algorithm", algorithm, width: 2, name: algorithm == 0 ? "#1" : (algorithm == 1 ? "#2" : nil))
      header = .channelSelectionAlgorithm(algorithm)
    default:
      return false
    }
    return true
  }

  static func extendedEventTypeFlags(_ type: UInt16, _ fields: inout FieldList) {
    if type & 0x01 != 0 { fields.flag("connectable", "Connectable", true) }
    if type & 0x02 != 0 { fields.flag("scannable", "Scannable", true) }
    if type & 0x04 != 0 { fields.flag("directed", "Directed", true) }
    if type & 0x08 != 0 { fields.flag("scan_response", "Scan response", true) }
    if type & 0x10 != 0 { fields.flag("legacy", "Legacy PDU", true) }
    let status = (type >> 5) & 3
    fields.code("data_status", "Data status", status, width: 2, name: status == 0 ? "complete" : (status == 1 ? "incomplete, more to come" : (status == 2 ? "incomplete, truncated" : nil)))
  }
}
