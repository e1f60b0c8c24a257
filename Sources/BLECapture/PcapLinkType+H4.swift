import BLECore

extension PcapLinkType {
  /// 187, LINKTYPE_BLUETOOTH_HCI_H4: the H4 packet indicator, then the HCI packet; no direction.
  static let h4 = PcapLinkType(
    value: 187, name: "H4",
    record: { packet, originalLength in h4Record(packet, after: 0, direction: nil, originalLength: originalLength) },
    packet: { record in record.kind.h4Indicator.map { [$0] + record.bytes } })

  /// 201, LINKTYPE_BLUETOOTH_HCI_H4_WITH_PHDR: a 4-byte big-endian direction (0: sent by the
  /// host), then as 187.
  static let h4WithDirection = PcapLinkType(
    value: 201, name: "H4 with direction",
    record: { packet, originalLength in
      guard packet.count >= 4 else {
        return LinkHeader(kind: .other(0xFFFF), offset: 0)
      }
      let start = packet.startIndex
      let value = UInt32(packet[start]) << 24 | UInt32(packet[start + 1]) << 16 | UInt32(packet[start + 2]) << 8 | UInt32(packet[start + 3])
      return h4Record(packet, after: 4, direction: value == 0 ? .hostToController : .controllerToHost, originalLength: originalLength)
    },
    packet: { record in
      guard let indicator = record.kind.h4Indicator else { return nil }
      return [0, 0, 0, record.direction == .controllerToHost ? 1 : 0, indicator] + record.bytes
    })

  /// The H4 packet at offset `at` of `packet`: the indicator names the kind and is dropped.
  static func h4Record(_ packet: ByteView, after at: Int, direction: Direction?, originalLength: Int) -> LinkHeader {
    guard packet.count > at else {
      return LinkHeader(kind: .other(0xFFFF), direction: direction, offset: packet.count)
    }
    let kind = PacketKind(h4Indicator: packet[packet.startIndex + at])
    var direction = direction
    if direction == nil {
      // DLT 187 carries no direction, but commands and events only go one way.
      if kind == .command { direction = .hostToController } else if kind == .event { direction = .controllerToHost }
    }
    let skip = kind.isHCIPacket ? at + 1 : at
    return LinkHeader(kind: kind, direction: direction, offset: skip, originalLength: max(originalLength - skip, 0))
  }
}
