import BLECore

extension PcapLinkType {
  /// 254, LINKTYPE_BLUETOOTH_LINUX_MONITOR: a 4-byte big-endian header (controller index,
  /// monitor opcode), then the monitor payload, as btsnoop 2001 holds it.
  static let linuxMonitor = PcapLinkType(
    value: 254, name: "Linux monitor",
    record: { packet, originalLength in
      guard packet.count >= 4 else {
        return LinkHeader(kind: .other(0xFFFF), offset: 0)
      }
      let start = packet.startIndex
      let adapter = UInt16(packet[start]) << 8 | UInt16(packet[start + 1])
      let opcode = UInt16(packet[start + 2]) << 8 | UInt16(packet[start + 3])
      let (kind, direction) = MonitorOpcode.kind(opcode)
      return LinkHeader(kind: kind, direction: direction, adapter: adapter, offset: 4, originalLength: max(originalLength - 4, 0))
    },
    packet: { record in
      guard let opcode = MonitorOpcode.opcode(for: record.kind, direction: record.direction) else { return nil }
      return [UInt8(record.adapter >> 8), UInt8(record.adapter & 0xFF), UInt8(opcode >> 8), UInt8(opcode & 0xFF)] + record.bytes
    })
}
