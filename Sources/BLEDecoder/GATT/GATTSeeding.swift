import BLECore

/// Tables for servers the capture never discovered: a map given for the device (`--gatt`), the
/// cache's table of the same device (by address, or by the Database Hash it reports), or, when
/// the capture does not show whom a connection is with, a table of the same capture (or given)
/// whose layout fits. Runs once, when a server's table is first needed.
///
/// The cache is memory of identities, never a guess: it is asked only by address or hash, and a
/// cached (or layout-matched) table stays on trial while values arrive: one the traffic
/// contradicts is dropped for the run, with a note, and inference takes over.
extension GATTState {
  /// Whether a PDU names the handle of a value (not discovery, MTU or an error): what makes a
  /// table given beforehand worth applying.
  static func namesValueHandle(_ opcode: UInt8) -> Bool {
    !(0x01...0x11).contains(opcode)
  }

  /// Tables larger than this are not matched by layout (real devices have a few hundred
  /// attributes; copying a hostile table into every unknown connection would cost its size each).
  static let maximumLayoutEntries = 2048

  mutating func seed(_ slot: Int, for server: GATTServerIdentity, _ frame: inout DissectedFrame) {
    table.databases[slot].wasSeeded = true
    switch server {
    case .peer(let address):
      if let (map, _) = maps.map(for: address) {
        apply(map, source: .imported, to: slot)
        frame.diagnostics.append(Diagnostic(.gattTableFromMap, "GATT table of \(address) from the map \(map.origin): the capture did not show its discovery"))
      } else if let map = cache?.map(for: address) {
        apply(map, source: .cache, to: slot)
        frame.diagnostics.append(Diagnostic(.gattTableFromCache,
          "GATT table of \(address) from the cache (\(Self.describeCached(map))): the capture did not show its discovery; the table is dropped if the traffic contradicts it"))
      }
    case .connection:
      seedByLayout(slot, &frame)
    case .local:
      return
    }
    table.settle(slot, footprintBefore: 0, diagnostics: &frame.diagnostics)
  }

  /// "learned from CAPTURE at TIME, FILE" for notes.
  static func describeCached(_ map: GATTMap) -> String {
    var text = map.origin
    if let learned = map.learned { text += " at " + learned }
    if let file = map.file { text += ", " + file }
    return text
  }

  /// The map whose Database Hash is `hash`, for a table nothing else has filled: a map given,
  /// else the cache's.
  mutating func seedByHash(_ slot: Int, _ hash: [UInt8], _ frame: inout DissectedFrame) {
    let found: (map: GATTMap, source: GATTSource)
    if let (map, _) = maps.map(hash: hash) {
      found = (map, .imported)
    } else if let map = cache?.map(hash: hash) {
      found = (map, .cache)
    } else {
      return
    }
    // Inside `ATTLayer.dissect`, whose exit accounts for the table's new size.
    table.databases[slot].wasSeeded = true
    apply(found.map, source: found.source, to: slot)
    let whose = found.map.address.map { "\($0)'s table" } ?? "the table"
    let whence = found.source == .cache ? "the cache, " + Self.describeCached(found.map) : found.map.origin
    frame.diagnostics.append(Diagnostic(.gattTableByHash, "Database Hash \(Hex.string(hash)) is that of \(whose) (\(whence)): its handles are used"))
  }

  /// Forgets the entries a map gave the table in `slot` (the capture's own stay), with a note:
  /// the traffic contradicts them. Inference explains the handles from here on. (Called inside
  /// `ATTLayer.dissect`, whose exit accounts for the table's new size.)
  mutating func dropSeededTable(_ slot: Int, because reason: String, _ frame: inout DissectedFrame) {
    guard let dropped = table.databases[slot].dropSeededEntries() else { return }
    frame.diagnostics.append(GATTDatabase.droppedNote(dropped, reason))
  }

  /// A connection whose peer the capture never named: the tables learned so far in this capture
  /// and the maps given are candidates (never the cache); when they all have the same layout
  /// (the same handles for the same characteristics), it is used, with a note. Different
  /// layouts: none is guessed. Each table's layout is kept up to date as it changes, so this
  /// costs the same however many tables and connections there are.
  mutating func seedByLayout(_ slot: Int, _ frame: inout DissectedFrame) {
    let imported = importedLayouts ?? Self.layouts(of: maps)
    importedLayouts = imported
    table.layoutIndex.refresh(table.databases, table.servers)
    let learned = table.layoutIndex
    var distinct = learned.counts.count
    for fingerprint in imported.keys where learned.counts[fingerprint] == nil { distinct += 1 }
    guard distinct == 1 else {
      let tables = learned.total + importedLayoutCount
      if tables > 1 {
        frame.diagnostics.append(Diagnostic(.gattLayoutsAmbiguous, "this connection's peer is not in the capture, and \(tables) known GATT tables differ: none is applied"))
      }
      return
    }
    let chosen: GATTMap
    if let (fingerprint, _) = learned.counts.first, let owner = learned.owner(of: fingerprint), case .peer(let address) = table.servers[owner] {
      let tree = table.databases[owner].attributeTree
      let frameNumber = tree.services.first.map(\.learnedIn) ?? 0
      chosen = GATTMap(address: address, tree: tree, origin: "the table learned in frame \(frameNumber)")
    } else if let (_, indices) = imported.first, let last = indices.last {
      chosen = maps.entries[last].map
    } else {
      return
    }
    apply(chosen, source: .layout, to: slot)
    let whose = chosen.address.map { "\($0)'s table" } ?? "the table"
    frame.diagnostics.append(Diagnostic(.gattTableByLayout,
      "this connection's peer is not in the capture: handles mapped with \(whose) (\(chosen.origin)), the only layout known"))
  }

  /// How many maps given take part in layout matching.
  var importedLayoutCount: Int { importedLayouts?.values.reduce(0) { $0 + $1.count } ?? 0 }

  /// The layouts of the maps given: fingerprint → the maps with it (in the order given).
  static func layouts(of maps: GATTMapSet) -> [Int: [Int]] {
    var layouts: [Int: [Int]] = [:]
    for (index, entry) in maps.maps.enumerated() where entry.map.entryCount <= maximumLayoutEntries {
      let layout = layout(of: entry.map.tree)
      guard !layout.isEmpty else { continue }
      layouts[fingerprint(layout), default: []].append(index)
    }
    return layouts
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

  /// Layouts are compared by a keyed hash (SipHash, seeded per process): equal layouts give
  /// equal fingerprints, and a capture cannot be crafted to make two different ones collide.
  static func fingerprint(_ layout: [UInt64]) -> Int {
    var hasher = Hasher()
    hasher.combine(layout.count)
    for word in layout { hasher.combine(word) }
    return hasher.finalize()
  }
}

extension GATTState {
  /// Seeds the table in `slot` from `map` and remembers where its entries came from.
  mutating func apply(_ map: GATTMap, source: GATTSource, to slot: Int) {
    table.databases[slot].seed(from: map, source: source)
    table.databases[slot].provenance = GATTMapProvenance(source: source, origin: map.origin, file: map.file, learned: map.learned)
    table.databases[slot].seededHash = map.databaseHash
    table.databases[slot].isOnTrial = source == .cache || source == .layout
  }
}

/// The layouts of a capture's learned tables, for matching connections whose peer is unknown:
/// each eligible table's fingerprint (a peer's table with entries from the capture, at most
/// `maximumLayoutEntries`), and how many tables have each. Tables that changed are re-measured
/// when next asked, each once.
struct GATTLayoutIndex: Sendable {
  var fingerprints: [Int: Int] = [:]  // slot → fingerprint
  var counts: [Int: Int] = [:]  // fingerprint → tables
  /// Tables with a fingerprint, in all.
  var total = 0
  /// The slot that last took each fingerprint (the table used when it is the only layout).
  var owners: [Int: Int] = [:]
  /// Slots changed since the last refresh, in the order they changed.
  var changed: [Int] = []
  var isChanged: Set<Int> = []

  mutating func markChanged(_ slot: Int) {
    if isChanged.insert(slot).inserted { changed.append(slot) }
  }

  mutating func remove(_ slot: Int) {
    guard let old = fingerprints.removeValue(forKey: slot) else { return }
    counts[old]! -= 1
    total -= 1
    if counts[old] == 0 {
      counts[old] = nil
      owners[old] = nil
    }
  }

  func owner(of fingerprint: Int) -> Int? {
    if let slot = owners[fingerprint], fingerprints[slot] == fingerprint { return slot }
    return fingerprints.first { $0.value == fingerprint }?.key
  }

  mutating func refresh(_ databases: [GATTDatabase], _ servers: [GATTServerIdentity]) {
    for slot in changed {
      remove(slot)
      guard slot < databases.count, case .peer = servers[slot] else { continue }
      let database = databases[slot]
      guard database.services.count + database.characteristics.count + database.types.count <= GATTState.maximumLayoutEntries,
        database.hasCapturedEntries
      else { continue }
      let layout = GATTState.layout(of: database.attributeTree)
      guard !layout.isEmpty else { continue }
      let fingerprint = GATTState.fingerprint(layout)
      fingerprints[slot] = fingerprint
      counts[fingerprint, default: 0] += 1
      total += 1
      owners[fingerprint] = slot
    }
    changed.removeAll(keepingCapacity: true)
    isChanged.removeAll(keepingCapacity: true)
  }
}

extension GATTDatabase {
  /// The note of a seeded table dropped because the traffic contradicts it.
  static func droppedNote(_ dropped: GATTMapProvenance, _ reason: String) -> Diagnostic {
    let whence: String
    switch dropped.source {
    case .cache: whence = "the cache's table (\(dropped.origin))"
    case .layout: whence = "the table matched by layout (\(dropped.origin))"
    default: whence = "the map \(dropped.origin)"
    }
    return Diagnostic(.gattTableDropped, "\(whence) dropped: \(reason); values are read without it from here on")
  }

  /// Why the traffic contradicts the seeded entries of a table on trial, if it does: a PDU
  /// names a handle the table does not have, or a value does not decode as the characteristic
  /// the table says it is. Asked before the PDU is described.
  mutating func contradiction(_ handle: UInt16, value: ByteView?, operation: GATTOperation, registry: DecoderRegistry) -> String? {
    guard let index = locate(handle, registry: registry) else {
      return "the capture uses handle \(Hex.prefixed(UInt64(handle), width: 4)), which the table does not have"
    }
    let meaning = resolved[index]
    let decoder = decoders[index]
    guard meaning.source == provenance?.source, let value, decoder >= 0 else { return nil }
    var fact = AttributeFact(handle: handle, operation: operation)
    fact.meaning = meaning
    var reader = ByteReader(value, layer: .profile)
    if registry[decoder: Int(decoder)].decode(&reader, into: &fact, context: fact.valueContext, registry: registry) != nil {
      let name = meaning.name?.description ?? meaning.characteristic?.description ?? "its characteristic"
      return "the value of \(Hex.prefixed(UInt64(handle), width: 4)) (\(Hex.string(Array(value)))) is not a valid \(name)"
    }
    seededValuesThatFit += 1
    return nil
  }
}
