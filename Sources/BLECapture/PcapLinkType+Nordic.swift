import BLECore

extension PcapLinkType {
  /// 272, LINKTYPE_NORDIC_BLE: the nRF Sniffer's own framing, as its serial protocol sends it
  /// (`nordicRecord`). Written in protocol version 3 (nRF Sniffer 3 and later): board 0, packet
  /// counter 0, the record's time (µs, its low 32 bits) as the firmware timestamp.
  public static let nordicBLE = PcapLinkType(
    value: 272, name: "nRF Sniffer",
    record: { packet, originalLength in nordicRecord(packet, originalLength: originalLength) },
    packet: { record in nordicPacket(record, version: 3) })

  /// 157, LINKTYPE_USER10: how nRF Sniffer 1 saved its captures (Wireshark then needed a user
  /// link type mapped to its plug-in), the same framing as 272 in its legacy versions. Written in
  /// protocol version 1, as those captures were: the time since the previous packet is not kept
  /// (written 0), and a packet longer than version 1's one-byte length is skipped.
  public static let nordicBLELegacy = PcapLinkType(
    value: 157, name: "nRF Sniffer, legacy user link type",
    record: { packet, originalLength in nordicRecord(packet, originalLength: originalLength) },
    packet: { record in nordicPacket(record, version: 1) })

  /// The access address of advertising physical channel packets (Core Vol 6 Part B §2.1.2).
  static let advertisingAccessAddress: [UInt8] = [0xD6, 0xBE, 0x89, 0x8E]

  /// Size of the nRF framing before the link-layer packet, in every protocol version.
  static let nordicHeaderSize = 17

  /// One nRF Sniffer packet: a board id (1 byte), a header that depends on the protocol version,
  /// then for event packets a 10-byte event header and the link-layer packet at byte 17.
  ///
  /// | version | bytes 0–6 |
  /// |---|---|
  /// | 0 (legacy) | `BE EF` marker (no board id), packet id, packet counter (LE16), 2 unused, payload length (1) |
  /// | 1 | board, header length (6), payload length (1), version, packet counter (LE16), packet id |
  /// | 2, 3 | board, payload length (LE16), version, packet counter (LE16), packet id |
  ///
  /// The event header: its length (10; absent in version 0, whose header is a byte longer),
  /// flags, channel index, RSSI (the magnitude: −n dBm), connection event counter (LE16), then
  /// 4 bytes of time (versions below 3: µs since the end of the previous packet; 3: the
  /// firmware's µs timestamp). Flags: 0x01 CRC OK, 0x70 the PHY (0 1M, 1 2M, 2 Coded); for data
  /// packets 0x02 sent by the central, 0x04 encrypted, 0x08 MIC OK (an encrypted packet with a
  /// good MIC was decrypted by the sniffer); for advertising packets 0x06 is the auxiliary PDU
  /// type and 0x08 says the address was resolved.
  ///
  /// Event packets are id 0x06 (before version 3 any packet; an advertising one has the
  /// advertising access address) and, from version 3, 0x02 (advertising). Other tools than
  /// Nordic's write other ids before version 3 (SweynTooth's captures carry id 0), and Wireshark
  /// reads every packet as an event packet there: ids other than 0x06 are event packets when
  /// the event header's length byte says 10. Other packets are records of kind `.other(id)`,
  /// packets of an unknown version (past 3, or 0 without the legacy marker) of kind
  /// `.other(0xFFFF)`, both holding the whole packet.
  static func nordicRecord(_ packet: ByteView, originalLength: Int) -> LinkHeader {
    guard packet.count >= nordicHeaderSize else { return shortPacket(packet) }
    let start = packet.startIndex
    let legacy = packet[start] == 0xBE && packet[start + 1] == 0xEF
    let version = legacy ? 0 : packet[start + 3]
    guard version <= 3, legacy || version != 0 else {
      return LinkHeader(kind: .other(0xFFFF), offset: 0, originalLength: originalLength)
    }
    let id = packet[start + (legacy ? 2 : 6)]
    let isEvent: Bool
    switch version {
    case 0: isEvent = id == 0x06
    case 1, 2: isEvent = id == 0x06 || packet[start + 7] == 10
    default: isEvent = id == 0x02 || id == 0x06
    }
    guard isEvent else {
      return LinkHeader(kind: .other(UInt16(id)), offset: 0, originalLength: originalLength)
    }
    let flags = packet[start + 8]
    let isAdvertising =
      version == 3
      ? id == 0x02
      : packet.count >= nordicHeaderSize + 4
        && packet[(start + nordicHeaderSize)..<(start + nordicHeaderSize + 4)].elementsEqual(advertisingAccessAddress)
    var header = AirPacketHeader()
    let channel = packet[start + 9]
    header.channel = channel < 40 ? channel : nil
    header.signal = Int8(clamping: -Int(packet[start + 10]))
    header.phy = AirPacketHeader.PHY(rawValue: (flags >> 4) & 0x7)
    header.crc = flags & 0x01 != 0 ? .valid : .invalid
    if !isAdvertising {
      header.fromCentral = flags & 0x02 != 0
      if flags & 0x04 != 0 {
        header.mic = flags & 0x08 != 0 ? .valid : .invalid
        header.decryptedBySniffer = flags & 0x08 != 0
      }
      header.eventCounter = UInt16(littleEndian(packet, at: 11, count: 2))
    }
    return airRecord(header, packet, after: nordicHeaderSize, originalLength: originalLength)
  }

  /// The nRF Sniffer packet of an `.airPacket` record, in protocol `version` 1 or 3. A CRC nobody
  /// checked is written as OK (the format has no "not checked", and "incorrect" would have the
  /// packet dropped); an unknown channel as 255, an unknown signal as 0 dBm, an unknown PHY as
  /// LE 1M, an unknown direction as from the peripheral. A record sent by the central or the
  /// peripheral is a data packet, one with neither the advertising access address.
  static func nordicPacket(_ record: CaptureRecord, version: UInt8) -> [UInt8]? {
    guard let (header, packet) = airParts(record) else { return nil }
    let isData = header.fromCentral != nil || !packet.prefix(4).elementsEqual(advertisingAccessAddress)
    var flags: UInt8 = header.crc == .invalid ? 0 : 0x01
    if isData {
      if header.fromCentral == true { flags |= 0x02 }
      if header.mic != .notChecked { flags |= 0x04 }
      if header.mic == .valid { flags |= 0x08 }
    }
    flags |= (header.phy?.rawValue ?? 0) << 4
    let payloadLength = 10 + packet.count
    var bytes: [UInt8]
    if version == 1 {
      guard payloadLength <= 0xFF else { return nil }
      bytes = [0, 6, UInt8(payloadLength), 1, 0, 0, 0x06]
    } else {
      guard payloadLength <= 0xFFFF else { return nil }
      bytes = [0, UInt8(payloadLength & 0xFF), UInt8(payloadLength >> 8), version, 0, 0, isData ? 0x06 : 0x02]
    }
    let counter = header.eventCounter ?? 0
    let time = version >= 3 ? UInt32(truncatingIfNeeded: record.timestamp) : 0
    bytes += [
      10, flags, header.channel ?? 0xFF, UInt8(clamping: -Int(header.signal ?? 0)), UInt8(counter & 0xFF), UInt8(counter >> 8),
      UInt8(time & 0xFF), UInt8((time >> 8) & 0xFF), UInt8((time >> 16) & 0xFF), UInt8(time >> 24),
    ]
    bytes += packet
    return bytes
  }
}
