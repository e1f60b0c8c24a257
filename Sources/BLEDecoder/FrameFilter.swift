import BLECore

/// Which frames to show (`--conn`, `--peer`, `--handle`, `--uuid`, `--layer`). Every frame is
/// still dissected, so state (connections, GATT databases) stays right; only output is filtered.
public struct FrameFilter: Sendable {
  public var connectionHandle: UInt16?
  public var peer: BDAddr?
  public var attributeHandle: UInt16?
  public var uuid: BluetoothUUID?
  /// Only frames decoded at least this deep: `.hci`, `.l2cap`, `.att` or `.gatt`.
  public var layer: ProtocolLayer?

  public init() {}

  public var isEmpty: Bool {
    connectionHandle == nil && peer == nil && attributeHandle == nil && uuid == nil && layer == nil
  }

  static func rank(_ layer: ProtocolLayer) -> Int {
    switch layer {
    case .capture, .note: return 0
    case .hci, .advertising: return 1
    case .l2cap: return 2
    case .att: return 3
    case .gatt, .profile: return 4
    }
  }

  public func matches(_ frame: DissectedFrame) -> Bool {
    if let connectionHandle, frame.connection?.handle != connectionHandle { return false }
    if let peer, frame.connection?.peer != peer { return false }
    if let attributeHandle, !frame.attributeHandles.contains(attributeHandle) { return false }
    if let uuid, !frame.gattUUIDs.contains(where: { $0.high == uuid.high && $0.low == uuid.low }) { return false }
    if let layer, Self.rank(frame.deepestLayer) < Self.rank(layer) { return false }
    return true
  }
}
