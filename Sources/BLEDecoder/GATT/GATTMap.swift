import BLECore

/// Where a GATT meaning came from. A capture that starts after discovery (a bonded device, a
/// phone reconnecting with cached handles, a snoop log enabled mid-session) has none of its
/// own; the meanings then come from elsewhere, and the output says from where.
public enum GATTSource: UInt8, Sendable, Equatable {
  /// The capture's own discovery.
  case capture
  /// A map given with `--gatt` (a `gatt --json` map, a capture, a BlueZ cache file).
  case imported
  /// The map saved from an earlier run on a capture of the same device: found by the device's
  /// address or by the Database Hash it reported, never by layout.
  case cache
  /// A table learned for another connection of the same capture (or imported) whose layout
  /// fits this one: the capture did not show whom this connection is with. The cache is never
  /// matched by layout: what other captures showed must not change how this one reads.
  case layout
  /// Guessed from the values themselves.
  case inferred

  /// The word used in JSON (`gatt.source`).
  public var key: Name {
    switch self {
    case .capture: return "capture"
    case .imported: return "import"
    case .cache: return "cache"
    case .layout: return "layout"
    case .inferred: return "inferred"
    }
  }
}

/// One device's attribute table given beforehand: the tree of services, characteristics and
/// descriptors with their handles, and the device it belongs to.
public struct GATTMap: Sendable {
  /// The device, when the map names one (maps of connections whose peer was never seen do not).
  public var address: BDAddr?
  public var addressType: AddressType?
  public var name: String?
  /// The Database Hash (0x2B2A) the device reported, when known.
  public var databaseHash: [UInt8]?
  public var tree: GATTAttributeTree
  /// Where it came from, for notes ("captures/earlier.btsnoop").
  public var origin: String
  /// For a cached map: the cache file it was read from, and when it was saved (UTC, ISO 8601).
  public var file: String?
  public var learned: String?

  public init(
    address: BDAddr?, addressType: AddressType? = nil, name: String? = nil, databaseHash: [UInt8]? = nil, tree: GATTAttributeTree,
    origin: String, file: String? = nil, learned: String? = nil
  ) {
    self.address = address
    self.addressType = addressType
    self.name = name
    self.databaseHash = databaseHash
    self.tree = tree
    self.origin = origin
    self.file = file
    self.learned = learned
  }

  /// How many entries the tree holds (maps are bounded like learned tables).
  public var entryCount: Int {
    var count = tree.characteristicsOutsideServices.count + tree.otherHandles.count
    for service in tree.services {
      count += 1 + service.includes.count + service.characteristics.count
      for characteristic in service.characteristics { count += characteristic.descriptors.count }
    }
    for characteristic in tree.characteristicsOutsideServices { count += characteristic.descriptors.count }
    return count
  }

  /// The characteristic whose value is `handle`, if the map has one (layout matching).
  func characteristic(valueHandle handle: UInt16) -> GATTCharacteristicEntry? {
    for service in tree.services where service.start <= handle && handle <= service.end {
      if let found = service.characteristics.first(where: { $0.valueHandle == handle }) { return found }
    }
    return tree.characteristicsOutsideServices.first { $0.valueHandle == handle }
  }

  /// Whether the map knows anything at `handle`.
  func knows(_ handle: UInt16) -> Bool {
    for service in tree.services where service.start <= handle && handle <= service.end { return true }
    for characteristic in tree.characteristicsOutsideServices
    where characteristic.declarationHandle == handle || characteristic.valueHandle == handle || characteristic.descriptors.contains(where: { $0.handle == handle }) {
      return true
    }
    return tree.otherHandles.contains { $0.handle == handle }
  }
}

extension GATTDatabase {
  /// Adds a map's entries, marked with where they came from. Entries the capture learns later
  /// replace them.
  package mutating func seed(from map: GATTMap, source: GATTSource) {
    func add(_ characteristic: GATTCharacteristicEntry) {
      self.addCharacteristic(
        declaration: characteristic.declarationHandle, valueHandle: characteristic.valueHandle, uuid: characteristic.uuid,
        properties: characteristic.properties, source: source)
      for descriptor in characteristic.descriptors { setType(descriptor.uuid, of: descriptor.handle, source: source) }
    }
    for service in map.tree.services {
      addService(start: service.start, end: service.end, uuid: service.uuid, primary: service.primary, source: source)
      for include in service.includes { setType(include.uuid, of: include.handle, source: source) }
      for characteristic in service.characteristics { add(characteristic) }
    }
    for characteristic in map.tree.characteristicsOutsideServices { add(characteristic) }
    for other in map.tree.otherHandles { setType(other.uuid, of: other.handle, source: source) }
  }

  /// Where the table's first service (or characteristic) came from: `.capture` for a table
  /// the capture discovered, else the map that seeded it.
  public var origin: GATTSource {
    services.entries.first?.value.source ?? characteristics.entries.first?.value.source ?? .capture
  }

  /// Whether any entry was learned from the capture itself (what the cache keeps).
  public var hasCapturedEntries: Bool {
    services.entries.contains { $0.value.source == .capture } || characteristics.entries.contains { $0.value.source == .capture }
  }
}

/// The cache of tables learned from earlier captures, asked by identity only when a server's
/// table is first needed and the capture shows no discovery of it. Implemented outside the
/// decoders (it reads files); answers must not depend on the order of questions.
public protocol GATTMapLookup: Sendable {
  /// The table cached for the device at `address`.
  func map(for address: BDAddr) -> GATTMap?
  /// The table cached with this Database Hash (whatever the device's address now is).
  func map(hash: [UInt8]) -> GATTMap?
}

/// Where a seeded table came from, kept on the database for the notes and fields that name it.
public struct GATTMapProvenance: Sendable, Equatable {
  public var source: GATTSource
  /// "the map FILE", "the cache (learned from CAPTURE)", "the table learned in frame N".
  public var origin: String
  public var file: String?
  public var learned: String?

  public init(source: GATTSource, origin: String, file: String? = nil, learned: String? = nil) {
    self.source = source
    self.origin = origin
    self.file = file
    self.learned = learned
  }
}

/// The maps given before decoding (`--gatt`), by device. Bounded: a
/// hostile map file cannot make the dissector hold more than a capture could.
public struct GATTMapSet: Sendable {
  package static let maximumMaps = 4096
  package static let maximumEntriesPerMap = 65_536

  struct Entry: Sendable {
    var map: GATTMap
    var source: GATTSource
  }
  var entries: [Entry] = []
  var byAddress: [BDAddr: Int] = [:]

  public init() {}

  public var isEmpty: Bool { entries.isEmpty }
  public var count: Int { entries.count }
  public var maps: [(map: GATTMap, source: GATTSource)] { entries.map { ($0.map, $0.source) } }

  /// Adds a map. For a device already mapped, a later import replaces an earlier one. Returns
  /// false when the map is over the bounds (or the set is full).
  @discardableResult
  public mutating func add(_ map: GATTMap, source: GATTSource) -> Bool {
    guard map.entryCount <= Self.maximumEntriesPerMap else { return false }
    if let address = map.address, let index = byAddress[address] {
      if source == .cache && entries[index].source == .imported { return true }
      entries[index] = Entry(map: map, source: source)
      return true
    }
    guard entries.count < Self.maximumMaps else { return false }
    entries.append(Entry(map: map, source: source))
    if let address = map.address { byAddress[address] = entries.count - 1 }
    return true
  }

  /// The map whose Database Hash is `hash` (the latest given).
  public func map(hash: [UInt8]) -> (map: GATTMap, source: GATTSource)? {
    entries.last { $0.map.databaseHash == hash }.map { ($0.map, $0.source) }
  }

  /// The map of the device at `address`.
  public func map(for address: BDAddr) -> (map: GATTMap, source: GATTSource)? {
    byAddress[address].map { (entries[$0].map, entries[$0].source) }
  }
}
