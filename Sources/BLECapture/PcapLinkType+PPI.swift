import BLECore

extension PcapLinkType {
  /// 192, LINKTYPE_PPI (Per-Packet Information), as Ubertooth's tools wrote LE captures before
  /// link type 256: an 8-byte little-endian header (version 0, flags, the header's whole
  /// length, the link type of the packet that follows), then fields, each a type (LE16), a
  /// length (LE16) and its bytes (padded to 4 bytes when flag 0x01 says the fields are
  /// aligned), then the packet. Ubertooth's field, type 30006 (12 bytes): version, the
  /// frequency in MHz (LE16), the high bits of its clock (1), its clock in 100 ns (LE32), then
  /// the most, least and mean RSSI and how many samples made them. Its RSSI is the CC2400
  /// radio's register, the signal in dBm less the radio's offset of −54 dB: the signal is the
  /// most, plus that offset.
  ///
  /// The packet is an LE link-layer packet when the inner link type is 251, or 147 (USER0, what
  /// Ubertooth wrote in 2013) with Ubertooth's field. The PHY is not said (Ubertooth's radio
  /// receives LE 1M only, but a packet written here may come from elsewhere). Packets of other
  /// link types are records of kind `.other(link type)` holding the whole packet. Written back
  /// with link type 251 inside and Ubertooth's field: the clock, the least and mean RSSI, other
  /// fields, the PHY and the checks are not kept; no signal is written as no RSSI samples.
  public static let ppi = PcapLinkType(
    value: 192, name: "PPI, Ubertooth LE",
    record: { packet, originalLength in
      guard packet.count >= 8 else { return shortPacket(packet) }
      let length = littleEndian(packet, at: 2, count: 2)
      let inner = littleEndian(packet, at: 4, count: 4)
      guard length >= 8, length <= packet.count else { return shortPacket(packet) }
      let aligned = packet[packet.startIndex + 1] & 0x01 != 0
      var header: AirPacketHeader?
      var snifferClock: UInt64?
      var offset = 8
      while offset + 4 <= length {
        let type = littleEndian(packet, at: offset, count: 2)
        let fieldLength = littleEndian(packet, at: offset + 2, count: 2)
        let field = offset + 4
        guard field + fieldLength <= length else { break }
        if type == ubertoothField, fieldLength >= 12 {
          let megahertz = littleEndian(packet, at: field + 1, count: 2)
          var found = AirPacketHeader()
          if megahertz >= 2402, megahertz <= 2480, megahertz % 2 == 0 { found.channel = channelIndex(rfChannel: UInt8((megahertz - 2402) / 2)) }
          if packet[packet.startIndex + field + 11] > 0 {
            found.signal = Int8(clamping: Int(Int8(bitPattern: packet[packet.startIndex + field + 8])) + ubertoothRSSIOffset)
          }
          header = found
          // Its clock: the high byte, then 100 ns units (LE32); a 40-bit count, in µs here.
          let clock = UInt64(packet[packet.startIndex + field + 3]) << 32 | UInt64(littleEndian(packet, at: field + 4, count: 4))
          snifferClock = clock / 10
        }
        offset += 4 + fieldLength
        if aligned { offset = (offset + 3) & ~3 }
      }
      guard inner == 251 || (inner == 147 && header != nil) else {
        return LinkHeader(kind: .other(UInt16(truncatingIfNeeded: inner)), offset: 0, originalLength: originalLength)
      }
      var record = airRecord(header ?? AirPacketHeader(), packet, after: length, originalLength: originalLength)
      record.snifferClock = snifferClock
      return record
    },
    packet: { record in
      guard let (header, packet) = airParts(record) else { return nil }
      let megahertz = header.channel.flatMap { rfChannel(channelIndex: $0) }.map { 2402 + 2 * UInt16($0) } ?? 0
      let rssi = header.signal.map { UInt8(bitPattern: Int8(clamping: Int($0) - ubertoothRSSIOffset)) } ?? 0
      let count: UInt8 = header.signal == nil ? 0 : 1
      let type = UInt16(ubertoothField)
      return [0, 0, 24, 0, 251, 0, 0, 0, UInt8(type & 0xFF), UInt8(type >> 8), 12, 0]
        + [0, UInt8(megahertz & 0xFF), UInt8(megahertz >> 8), 0, 0, 0, 0, 0, rssi, rssi, rssi, count] + packet
    })

  /// The PPI field type of Ubertooth's LE receiver data.
  static let ubertoothField = 30006

  /// The CC2400's RSSI register plus this is the signal in dBm.
  static let ubertoothRSSIOffset = -54
}
