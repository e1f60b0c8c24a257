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
  /// Reads the link type's header of one packet: `packet` as the capture holds it (a view valid
  /// for the call only), `originalLength` as it was on the link (the header's, untrusted). What
  /// it says makes the record (`read(_:_:into:)`, which copies the bytes); the reader sets the
  /// timestamp and the file offset. A packet too short for the link type's header becomes a
  /// record of kind `.other(0xFFFF)`.
  typealias ReadHeader = @Sendable (_ packet: ByteView, _ originalLength: Int) -> LinkHeader

  let readHeader: ReadHeader

  /// The packet that carries `record` (the link type's header, then the record's bytes); nil
  /// when the link type cannot carry the record's kind.
  typealias MakePacket = @Sendable (_ record: CaptureRecord) -> [UInt8]?

  let packet: MakePacket

  init(value: Int32, name: String, record: @escaping ReadHeader, packet: @escaping MakePacket) {
    self.value = value
    self.name = name
    self.readHeader = record
    self.packet = packet
  }

  /// What a packet's link-type header says its record is: kind, direction, controller, the air
  /// header its bytes start with (air sniffers), where its bytes start in the packet, and its
  /// length on the link (nil: what the record holds).
  struct LinkHeader {
    var kind: PacketKind
    var direction: Direction? = nil
    var adapter: UInt16 = 0
    var air: AirPacketHeader? = nil
    /// The record's bytes are the packet's from here on (none past its end).
    var offset: Int
    var originalLength: Int? = nil
    /// The sniffer's own clock for the packet, in µs from an origin of its own (Ubertooth's
    /// field), for when the record's time cannot be trusted (`RecordClock`).
    var snifferClock: UInt64? = nil
  }

  /// Makes `record` the record of one packet, reusing its byte buffer: reading a packet costs
  /// no allocation. The reader sets the timestamp and the file offset.
  @discardableResult
  func read(_ packet: ByteView, _ originalLength: Int, into record: inout CaptureRecord) -> UInt64? {
    let header = readHeader(packet, originalLength)
    record.clockRepair = nil
    record.kind = header.kind
    record.direction = header.direction
    record.adapter = header.adapter
    record.followsDamage = false
    record.bytes.removeAll(keepingCapacity: true)
    header.air?.append(to: &record.bytes)
    record.bytes.append(contentsOf: packet[(packet.startIndex + min(max(header.offset, 0), packet.count))..<packet.endIndex])
    record.originalLength = header.originalLength ?? record.bytes.count
    return header.snifferClock
  }

  /// The record of one packet, afresh (tests).
  func record(_ packet: ByteView, _ originalLength: Int) -> CaptureRecord {
    var record = CaptureRecord(timestamp: 0, direction: nil, kind: .other(0xFFFF), bytes: [])
    read(packet, originalLength, into: &record)
    return record
  }

  /// One entry per number: `readable` lists each link type once.
  public static func == (a: PcapLinkType, b: PcapLinkType) -> Bool { a.value == b.value }
  public func hash(into hasher: inout Hasher) { hasher.combine(value) }

  /// The link types `PcapReader` reads.
  static let readable: [PcapLinkType] = [
    .h4, .h4WithDirection, .linuxMonitor, .bluetoothLELL, .bluetoothLELLWithPHDR, .nordicBLE, .nordicBLELegacy, .ppi,
  ]

  /// The link types of LE packets sniffed over the air.
  static let air: Set<PcapLinkType> = [.bluetoothLELL, .bluetoothLELLWithPHDR, .nordicBLE, .nordicBLELegacy, .ppi]

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

  /// The readable link types for messages: "157, 187, 192, 201, 251, 254, 256 and 272".
  static var readableList: String {
    let values = readable.map(\.value).sorted().map { String($0) }
    guard let last = values.last, values.count > 1 else { return values.first ?? "" }
    return values.dropLast().joined(separator: ", ") + " and " + last
  }
}
