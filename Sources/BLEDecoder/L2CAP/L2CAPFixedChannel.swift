import BLECore

/// A fixed L2CAP channel bledissect decodes: its CID, its name, and the decoding of the PDUs
/// it carries. Each is a type in its own file (`L2CAPFixedChannel+ATT.swift`, ...), listed in
/// `L2CAPFixedChannels.registered` (docs/architecture.md: adding an L2CAP fixed channel).
protocol L2CAPFixedChannel: SendableMetatype {
  /// 0x0001–0x003F.
  static var cid: UInt16 { get }
  /// The channel's name in the `cid` field.
  static var name: Name { get }
  /// Decodes one PDU sent by `direction`'s side on `connection`. `payload` is the L2CAP
  /// payload: bytes the decoder leaves in it are reported as following the PDU. The `l2cap`
  /// group is closed: the decoder opens its own.
  ///
  /// A channel's protocol is handed the state it keeps: per link in its connection
  /// (`connection.link`: the channels signaling opens, ATT's bearers), across links in `gatt`
  /// (ATT) or `air` (SMP on sniffed links: the pairing, and the keys it gives away).
  static func decode(
    _ payload: inout ByteReader, direction: Direction, connection: inout Connection, gatt: inout GATTState, air: inout AirLinkState,
    registry: DecoderRegistry, into frame: inout DissectedFrame
  ) throws(DecodeError)
}

/// The fixed channels, and the dispatch to them: `L2CAPState.dissectL2CAP` finds a PDU's
/// channel by an array index.
enum L2CAPFixedChannels {
  /// The fixed channels bledissect decodes.
  static let registered: [any L2CAPFixedChannel.Type] = [
    BREDRSignalingChannel.self, ATTChannel.self, LESignalingChannel.self, SMPChannel.self, BREDRSMPChannel.self,
  ]

  /// Fixed channels only named: their payload is shown as data, like an unknown channel's.
  static let namedOnly: [(cid: UInt16, name: Name)] = [(0x0002, "connectionless")]

  /// The first dynamic CID (LE and BR/EDR alike); those below are fixed.
  static let dynamicStart: UInt16 = 0x0040

  struct Entry {
    let name: Name
    /// nil for a channel only named.
    let channel: (any L2CAPFixedChannel.Type)?
  }

  /// Every fixed CID's entry, by CID (nil: unknown); `L2CAPState.fixedChannels` holds it.
  static let byCID: [Entry?] = {
    var table = [Entry?](repeating: nil, count: Int(dynamicStart))
    func add(_ cid: UInt16, _ entry: Entry) {
      precondition(cid > 0 && cid < dynamicStart, "fixed channels are 0x0001–0x003F, not \(cid)")
      precondition(table[Int(cid)] == nil, "two fixed channels registered with CID \(cid)")
      table[Int(cid)] = entry
    }
    for channel in registered { add(channel.cid, Entry(name: channel.name, channel: channel)) }
    for (cid, name) in namedOnly { add(cid, Entry(name: name, channel: nil)) }
    return table
  }()

}
