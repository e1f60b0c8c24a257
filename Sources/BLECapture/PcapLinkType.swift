import BLECore
import CPcap

/// A pcap link type bledissect reads: its number, its name, how one packet becomes a record,
/// and how a record becomes a packet (`CaptureWriter`). `PcapReader` finds the capture's entry
/// once, when it opens; each link type is defined in its own file (`PcapLinkType+H4.swift`,
/// ...) and listed in `readable` (docs/architecture.md: adding a pcap link type).
public struct PcapLinkType: Sendable, Hashable {
  /// The LINKTYPE_ value of the pcap header or the pcapng interface.
  public let value: Int32
  /// What `info` shows after the number: "link type 201 (H4 with direction)".
  public let name: String
  /// Makes the record of one packet: `packet` as the capture holds it (a view valid for the
  /// call only), `originalLength` as it was on the link (the header's, untrusted). The reader
  /// sets the timestamp and the file offset. A packet too short for the link type's header
  /// becomes a record of kind `.other(0xFFFF)`.
  typealias MakeRecord = @Sendable (_ packet: ByteView, _ originalLength: Int) -> CaptureRecord

  let record: MakeRecord

  /// The packet that carries `record` (the link type's header, then the record's bytes); nil
  /// when the link type cannot carry the record's kind.
  typealias MakePacket = @Sendable (_ record: CaptureRecord) -> [UInt8]?

  let packet: MakePacket

  init(value: Int32, name: String, record: @escaping MakeRecord, packet: @escaping MakePacket) {
    self.value = value
    self.name = name
    self.record = record
    self.packet = packet
  }

  /// One entry per number: `readable` lists each link type once.
  public static func == (a: PcapLinkType, b: PcapLinkType) -> Bool { a.value == b.value }
  public func hash(into hasher: inout Hasher) { hasher.combine(value) }

  /// The link types `PcapReader` reads.
  static let readable: [PcapLinkType] = [
    .h4, .h4WithDirection, .linuxMonitor, .bluetoothLELL, .bluetoothLELLWithPHDR, .nordicBLE, .nordicBLELegacy, .ppi,
  ]

  /// Link types bledissect does not read but names when a capture has one, so that the
  /// message says what the file is; other numbers are named by libpcap.
  static let unreadable: [(value: Int32, name: String)] = [
    (255, "BLUETOOTH_BREDR_BB, a BR/EDR baseband sniffer capture"),
    (1, "Ethernet"),
  ]

  /// The name of a link type `readable` does not hold, for the message refusing it.
  static func name(of value: Int32) -> String {
    if let known = unreadable.first(where: { $0.value == value }) { return known.name }
    if let name = pcap_datalink_val_to_name(value) { return String(cString: name) }
    return "unknown"
  }

  /// The bytes of `packet` from `offset` on (at most its count), copied in one go.
  static func bytes(_ packet: ByteView, from offset: Int) -> [UInt8] {
    Array(packet[(packet.startIndex + min(offset, packet.count))..<packet.endIndex].buffer)
  }

  /// The readable link types for messages: "157, 187, 192, 201, 251, 254, 256 and 272".
  static var readableList: String {
    let values = readable.map(\.value).sorted().map { String($0) }
    guard let last = values.last, values.count > 1 else { return values.first ?? "" }
    return values.dropLast().joined(separator: ", ") + " and " + last
  }
}
