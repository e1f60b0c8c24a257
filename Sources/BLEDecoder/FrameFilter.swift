import BLECore

/// Which frames to show (`--conn`, `--peer`, `--handle`, `--uuid`, `--layer`). Every frame is
/// still dissected, so state (connections, GATT databases) stays right; only output is filtered.
/// Values of one kind are alternatives (a frame about any of them passes); kinds combine (a
/// frame must pass every kind given).
public struct FrameFilter: Sendable {
  /// Controllers (`hci0` = 0): frames of these only (records that belong to none are left out).
  public var adapters: [UInt16] = []
  public var connectionHandles: [UInt16] = []
  public var peers: [BDAddr] = []
  public var attributeHandles: [UInt16] = []
  public var uuids: [BluetoothUUID] = []
  /// Frames decoded at least as deep as one of these: `.hci`, `.l2cap`, `.att` or `.gatt`.
  public var layers: [ProtocolLayer] = []
  /// Leaves out the empty data PDUs of air captures (a connection's keep-alive: most of its
  /// packets).
  public var hidesEmptyPDUs = false

  public init() {}

  public var isEmpty: Bool {
    adapters.isEmpty && connectionHandles.isEmpty && peers.isEmpty && attributeHandles.isEmpty && uuids.isEmpty && layers.isEmpty
      && !hidesEmptyPDUs
  }

  static func rank(_ layer: ProtocolLayer) -> Int {
    switch layer {
    case .capture, .note: return 0
    case .hci, .advertising, .linkLayer: return 1
    // SDP and RFCOMM ride L2CAP channels as ATT does, but are no step towards ATT: `--layer att`
    // leaves them out, `--layer l2cap` keeps them.
    case .l2cap, .sdp, .rfcomm: return 2
    case .att: return 3
    case .gatt, .profile: return 4
    }
  }

  /// Whether an attribute is, or belongs to, `uuid`: its service, its characteristic, or
  /// (a descriptor) its own type.
  static func names(_ fact: AttributeFact, _ uuid: BluetoothUUID) -> Bool {
    guard let meaning = fact.meaning else { return false }
    // By value: `--uuid 180d` matches a service sent as a 128-bit UUID, and the other way round.
    func same(_ other: BluetoothUUID?) -> Bool { other?.hasSameValue(as: uuid) ?? false }
    if same(meaning.service) || same(meaning.characteristic) { return true }
    return meaning.role == .descriptor && same(meaning.descriptor)
  }

  /// Whether a frame is an empty data PDU sniffed over the air.
  public static func isEmptyPDU(_ frame: borrowing DissectedFrame) -> Bool {
    if case .dataPDU(1, 0, _, _) = frame.header { return true }
    return false
  }

  public func matches(_ frame: DissectedFrame) -> Bool {
    if hidesEmptyPDUs && Self.isEmptyPDU(frame) { return false }
    if !adapters.isEmpty, !adapters.contains(frame.record.adapter) { return false }
    if !connectionHandles.isEmpty {
      guard let handle = frame.connection?.handle, connectionHandles.contains(handle) else { return false }
    }
    if !peers.isEmpty {
      guard let peer = frame.connection?.peer, peers.contains(peer) else { return false }
    }
    if !attributeHandles.isEmpty, !attributeHandles.contains(where: frame.namesHandle) { return false }
    if !uuids.isEmpty, !frame.attributes.contains(where: { fact in uuids.contains { Self.names(fact, $0) } }) {
      return false
    }
    if !layers.isEmpty {
      let depth = Self.rank(frame.deepestLayer)
      if !layers.contains(where: { depth >= Self.rank($0) }) { return false }
    }
    return true
  }
}
