import BLECore
import BLEDecoder
import BLEEngine

/// One GATT server's table and what else the capture said about it.
package struct GATTDevice {
  package var server: GATTServerIdentity
  package var tree: GATTAttributeTree
  package var addressType: AddressType?
  package var name: String?
  /// The Database Hash (0x2B2A) value last read from it.
  package var databaseHash: [UInt8]?
  /// Whether the capture's own discovery showed part of the table (not only a map given).
  package var capturedEntries = true
  /// Where the table came from (the capture, a map, the cache, a layout).
  package var source = GATTSource.capture
  /// Which map or cache file, and when it was learned, for tables not from the capture.
  package var provenance: GATTMapProvenance?

  package init(
    server: GATTServerIdentity, tree: GATTAttributeTree, addressType: AddressType? = nil, name: String? = nil, databaseHash: [UInt8]? = nil,
    capturedEntries: Bool = true, source: GATTSource = .capture, provenance: GATTMapProvenance? = nil
  ) {
    self.server = server
    self.tree = tree
    self.addressType = addressType
    self.name = name
    self.databaseHash = databaseHash
    self.capturedEntries = capturedEntries
    self.source = source
    self.provenance = provenance
  }
}

/// Collects, per server, what the tables do not hold: the last Database Hash and Device Name
/// read, and the peer's address type. Bounded like the dissector's own tables.
package final class GATTConsumer: FrameConsumer {
  package static let maximumServers = GATTDatabaseTable.maximumDatabases
  package var fieldDetail: FieldDetail { .none }
  private var hashes: [GATTServerIdentity: [UInt8]] = [:]
  private var names: [GATTServerIdentity: String] = [:]
  private var addressTypes: [BDAddr: AddressType] = [:]

  package init() {}

  package func consume(_ frame: inout DissectedFrame) -> Bool {
    guard !frame.attributes.isEmpty, let connection = frame.connection else { return true }
    if let peer = connection.peer, let type = connection.peerType, addressTypes.count < Self.maximumServers || addressTypes[peer] != nil {
      addressTypes[peer] = type
    }
    // By type, not by dynamic casts (`as?` searches the conformances on every attribute). The
    // closures capture no part of the frame: that would copy it whole.
    let direction = frame.direction
    let opcode = frame.attOpcode
    frame.forEachValue(as: DatabaseHash.self) { _, hash in
      let server = Self.server(direction: direction, attOpcode: opcode, connection)
      if hashes.count < Self.maximumServers || hashes[server] != nil { hashes[server] = hash.bytes }
    }
    frame.forEachValue(as: DeviceName.self) { operation, name in
      guard operation == .read else { return }
      let server = Self.server(direction: direction, attOpcode: opcode, connection)
      if names.count < Self.maximumServers || names[server] != nil { names[server] = name.text }
    }
    return true
  }

  /// The server whose value a frame carries: the capturing host when it sent the value (a
  /// capture taken on the server), else the peer, by address when known, as the dissector keys
  /// its databases. Values travel server to client except in writes.
  package static func server(direction: Direction?, attOpcode: UInt8?, _ connection: ConnectionLabel) -> GATTServerIdentity {
    let fromServer = !(attOpcode.map { ATTMethodKind(opcode: $0).isClientToServer } ?? false)
    if let direction, (direction == .hostToController) == fromServer { return connection.localServer }
    if let peer = connection.peer { return .peer(peer) }
    return .connection(adapter: connection.adapter, handle: connection.handle, generation: connection.generation)
  }

  /// Every non-empty table, peers by address first, then local devices, then the rest.
  package func devices(_ databases: [GATTServerIdentity: GATTDatabase]) -> [GATTDevice] {
    var devices: [GATTDevice] = []
    for (server, database) in databases where !database.isEmpty {
      var address: BDAddr?
      if case .peer(let peer) = server { address = peer }
      devices.append(GATTDevice(
        server: server, tree: database.attributeTree, addressType: address.flatMap { addressTypes[$0] },
        name: names[server], databaseHash: hashes[server] ?? database.reportedHash, capturedEntries: database.hasCapturedEntries, source: database.origin,
        provenance: database.provenance))
    }
    return devices.sorted { Self.sortKey($0.server).lexicographicallyPrecedes(Self.sortKey($1.server)) }
  }

  /// The tables a capture's discovery showed of peers with a known address, one map each
  /// (`--gatt CAPTURE`).
  package static func maps(_ source: any RecordSource, origin: String) -> [GATTMap] {
    var options = FrameStream.Options()
    options.threading = .one
    let consumer = GATTConsumer()
    let end = FrameStream(source: source, options: options).run(into: consumer)
    return consumer.devices(end.dissector.databases).compactMap { device -> GATTMap? in
      guard case .peer(let address) = device.server else { return nil }
      return GATTMap(address: address, addressType: device.addressType, name: device.name, databaseHash: device.databaseHash, tree: device.tree, origin: origin)
    }
  }

  package static func sortKey(_ server: GATTServerIdentity) -> [UInt64] {
    switch server {
    case .peer(let address): return [0, address.rawValue]
    case .local(let adapter): return [1, UInt64(adapter)]
    case let .connection(adapter, handle, generation): return [2, UInt64(adapter), UInt64(handle), UInt64(max(generation, 0))]
    }
  }
}

