import BLECore

/// Tables for servers the capture never discovered: a map given for the device, or, when the
/// capture does not show whom a connection is with, a table whose layout fits (learned earlier
/// in the same stream, or imported). Runs once, when a server's table is first needed.
extension Dissector {
  /// Whether a PDU names the handle of a value (not discovery, MTU or an error): what makes a
  /// table given beforehand worth applying.
  static func namesValueHandle(_ opcode: UInt8) -> Bool {
    !(0x01...0x11).contains(opcode)
  }

  /// Tables compared when a connection's peer is unknown (the most recent first).
  static let maximumLayoutCandidates = 64

  mutating func seed(_ slot: Int, for server: GATTServerIdentity, _ frame: inout DissectedFrame) {
    gattDatabases.databases[slot].wasSeeded = true
    switch server {
    case .peer(let address):
      guard let (map, source) = maps.map(for: address) else { return }
      gattDatabases.databases[slot].seed(from: map, source: source)
      let whence = source == .cache ? "the cache (\(map.origin))" : "the map \(map.origin)"
      frame.diagnostics.append(Diagnostic(.note, .gatt, "GATT table of \(address) from \(whence): the capture did not show its discovery"))
    case .connection:
      seedByLayout(slot, &frame)
    case .local:
      return
    }
    gattDatabases.settle(slot, footprintBefore: 0, diagnostics: &frame.diagnostics)
  }

  /// The map whose Database Hash is `hash`, for a table nothing else has filled.
  mutating func seedByHash(_ slot: Int, _ hash: [UInt8], _ frame: inout DissectedFrame) {
    guard let (map, source) = maps.map(hash: hash) else { return }
    gattDatabases.databases[slot].wasSeeded = true
    gattDatabases.databases[slot].seed(from: map, source: source)
    gattDatabases.settle(slot, footprintBefore: 0, diagnostics: &frame.diagnostics)
    let whose = map.address.map { "\($0)'s table" } ?? "the table"
    frame.diagnostics.append(Diagnostic(.note, .gatt, "Database Hash \(Hex.string(hash)) is that of \(whose) (\(map.origin)): its handles are used"))
  }

  /// A connection whose peer the capture never named: every table known so far is a
  /// candidate; when they all have the same layout (the same handles for the same
  /// characteristics), the latest is used, with a note. Different layouts: none is guessed.
  mutating func seedByLayout(_ slot: Int, _ frame: inout DissectedFrame) {
    var candidates: [(layout: [UInt64], map: GATTMap)] = []
    for (server, index) in gattDatabases.slots where index != slot && candidates.count < Self.maximumLayoutCandidates {
      guard case .peer(let address) = server, gattDatabases.databases[index].hasCapturedEntries else { continue }
      let tree = gattDatabases.databases[index].attributeTree
      let learned = tree.services.first.map(\.learnedIn) ?? 0
      candidates.append((Self.layout(of: tree), GATTMap(address: address, tree: tree, origin: "the table learned in frame \(learned)")))
    }
    for (map, _) in maps.maps where candidates.count < Self.maximumLayoutCandidates {
      candidates.append((Self.layout(of: map.tree), map))
    }
    guard let chosen = candidates.last, candidates.allSatisfy({ $0.layout == chosen.layout }), !chosen.layout.isEmpty else {
      if candidates.count > 1 {
        frame.diagnostics.append(Diagnostic(.note, .gatt, "this connection's peer is not in the capture, and \(candidates.count) known GATT tables differ: none is applied"))
      }
      return
    }
    gattDatabases.databases[slot].seed(from: chosen.map, source: .layout)
    let whose = chosen.map.address.map { "\($0)'s table" } ?? "the table"
    frame.diagnostics.append(Diagnostic(.note, .gatt,
      "this connection's peer is not in the capture: handles mapped with \(whose) (\(chosen.map.origin)), the only layout known"))
  }

  /// A table's layout: each characteristic's value handle and UUID, and each service's range,
  /// packed for comparison.
  static func layout(of tree: GATTAttributeTree) -> [UInt64] {
    var layout: [UInt64] = []
    func add(_ characteristic: GATTCharacteristicEntry) {
      layout.append(UInt64(characteristic.valueHandle) << 48 | characteristic.uuid.high >> 16 ^ characteristic.uuid.low)
    }
    for service in tree.services {
      layout.append(UInt64(service.start) << 48 | UInt64(service.end) << 32 | service.uuid.high >> 32)
      service.characteristics.forEach(add)
    }
    tree.characteristicsOutsideServices.forEach(add)
    return layout
  }
}
