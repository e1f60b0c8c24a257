import BLECore

extension PcapLinkType {
  /// 251, LINKTYPE_BLUETOOTH_LE_LL: the LE packet from its access address to its CRC, with
  /// nothing before it, so nothing of how it travelled is known.
  public static let bluetoothLELL = PcapLinkType(
    value: 251, name: "LE link layer",
    record: { packet, originalLength in airRecord(AirPacketHeader(), packet, after: 0, originalLength: originalLength) },
    packet: { record in airParts(record).map { Array($0.packet) } })

  /// 256, LINKTYPE_BLUETOOTH_LE_LL_WITH_PHDR (Sniffle, Ubertooth, ICE9): a 10-byte
  /// little-endian header, then as 251. The header: RF channel (the frequency's number, 2402 +
  /// 2 × n MHz, not the channel index), signal and noise in dBm, access-address offenses, the
  /// reference access address, and 16 flag bits: 0x0001 de-whitened, 0x0002 signal valid,
  /// 0x0004 noise valid, 0x0008 decrypted, 0x0010 reference address valid, 0x0020 offenses
  /// valid, 0x0040 channel aliased, 0x0380 the PDU type (0 not said, 1 auxiliary advertising, 2
  /// and 3 data from the central / the peripheral, 4 and 5 isochronous likewise, 6 broadcast
  /// isochronous), 0x0400 CRC checked, 0x0800 CRC valid, 0x1000 MIC checked, 0x2000 MIC valid
  /// (for auxiliary advertising, those two are the auxiliary PDU type instead), 0xC000 the PHY
  /// (0 1M, 1 2M, 2 Coded, 3 reserved).
  ///
  /// Written back: noise, offenses, the reference address, aliasing, the auxiliary and
  /// isochronous PDU types and the event counter are not kept; the packet is said to be
  /// de-whitened (records hold packets as the sniffer gave them), an unknown PHY is written as
  /// LE 1M (as writers did before the PHY bits existed) and an unknown channel as 255.
  public static let bluetoothLELLWithPHDR = PcapLinkType(
    value: 256, name: "LE link layer with RF header",
    record: { packet, originalLength in
      guard packet.count >= 10 else { return shortPacket(packet) }
      let start = packet.startIndex
      let flags = UInt16(packet[start + 8]) | UInt16(packet[start + 9]) << 8
      var header = AirPacketHeader()
      header.channel = channelIndex(rfChannel: packet[start])
      if flags & 0x0002 != 0 { header.signal = Int8(bitPattern: packet[start + 1]) }
      header.phy = AirPacketHeader.PHY(rawValue: UInt8(flags >> 14))
      if flags & 0x0400 != 0 { header.crc = flags & 0x0800 != 0 ? .valid : .invalid }
      let pduType = (flags >> 7) & 0x7
      switch pduType {
      case 2, 4: header.fromCentral = true
      case 3, 5: header.fromCentral = false
      default: break
      }
      if pduType != 1, flags & 0x1000 != 0 { header.mic = flags & 0x2000 != 0 ? .valid : .invalid }
      header.decryptedBySniffer = flags & 0x0008 != 0
      return airRecord(header, packet, after: 10, originalLength: originalLength)
    },
    packet: { record in
      guard let (header, packet) = airParts(record) else { return nil }
      var flags: UInt16 = 0x0001
      if header.signal != nil { flags |= 0x0002 }
      if header.decryptedBySniffer { flags |= 0x0008 }
      if let fromCentral = header.fromCentral { flags |= (fromCentral ? 2 : 3) << 7 }
      if header.crc != .notChecked { flags |= 0x0400 }
      if header.crc == .valid { flags |= 0x0800 }
      if header.mic != .notChecked { flags |= 0x1000 }
      if header.mic == .valid { flags |= 0x2000 }
      flags |= UInt16(header.phy?.rawValue ?? 0) << 14
      let channel = header.channel.flatMap { rfChannel(channelIndex: $0) } ?? 0xFF
      let signal = UInt8(bitPattern: header.signal ?? 0)
      return [channel, signal, 0, 0, 0, 0, 0, 0, UInt8(flags & 0xFF), UInt8(flags >> 8)] + packet
    })

  /// The record of an air packet: `header`, then the bytes of `packet` after its link type's
  /// own `after` bytes (the link-layer packet from its access address).
  static func airRecord(_ header: AirPacketHeader, _ packet: ByteView, after offset: Int, originalLength: Int) -> LinkHeader {
    LinkHeader(kind: .airPacket, air: header, offset: offset, originalLength: max(originalLength - offset, 0) + AirPacketHeader.size)
  }

  /// The little-endian number in `count` bytes (at most 4) of `packet`, from `offset` on.
  static func littleEndian(_ packet: ByteView, at offset: Int, count: Int) -> Int {
    (0..<count).reduce(0) { value, byte in value | Int(packet[packet.startIndex + offset + byte]) << (8 * byte) }
  }

  /// A packet too short for its link type's header: a record of its own (the recipe's kind).
  static func shortPacket(_ packet: ByteView) -> LinkHeader {
    LinkHeader(kind: .other(0xFFFF), offset: 0)
  }

  /// The header and the link-layer packet of an `.airPacket` record; nil for other kinds, and
  /// for records too short to hold the header.
  static func airParts(_ record: CaptureRecord) -> (header: AirPacketHeader, packet: ArraySlice<UInt8>)? {
    guard record.kind == .airPacket, record.bytes.count >= AirPacketHeader.size else { return nil }
    let header = try? ByteReader.reading(record.bytes, layer: .capture) { reader throws(DecodeError) in
      try AirPacketHeader(parsing: &reader)
    }
    return header.map { ($0, record.bytes[AirPacketHeader.size...]) }
  }

  /// The channel index (Core Vol 6 Part B §1.4.1: 0–36 data, 37–39 primary advertising) of RF
  /// channel `rf` (Part A §2: 2402 + 2 × rf MHz); nil past 39.
  static func channelIndex(rfChannel rf: UInt8) -> UInt8? {
    switch rf {
    case 0: return 37
    case 1...11: return rf - 1
    case 12: return 38
    case 13...38: return rf - 2
    case 39: return 39
    default: return nil
    }
  }

  /// The RF channel of channel index `index`; nil past 39.
  static func rfChannel(channelIndex index: UInt8) -> UInt8? {
    switch index {
    case 0...10: return index + 1
    case 11...36: return index + 2
    case 37: return 0
    case 38: return 12
    case 39: return 39
    default: return nil
    }
  }
}
