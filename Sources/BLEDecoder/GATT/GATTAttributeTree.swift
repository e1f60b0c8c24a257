import BLECore

// A read-only listing of a `GATTDatabase` as a GATT client sees it: services, their
// characteristics, and each characteristic's descriptors, each with the frame it was learned
// in. Built on demand from the database's handle maps (`gatt` command, exports); the
// dissector never uses it.

/// A descriptor (or any other typed handle) from Find Information.
public struct GATTDescriptorEntry: Sendable, Equatable {
  public var handle: UInt16
  public var uuid: BluetoothUUID
  /// The frame whose PDU showed it (0: added without a frame).
  public var learnedIn: Int
  public var name: Name? { GATTDatabase.name(uuid) }

  public init(handle: UInt16, uuid: BluetoothUUID, learnedIn: Int) {
    self.handle = handle
    self.uuid = uuid
    self.learnedIn = learnedIn
  }

  public static func == (a: Self, b: Self) -> Bool { a.handle == b.handle && a.uuid == b.uuid && a.learnedIn == b.learnedIn }
}

public struct GATTCharacteristicEntry: Sendable, Equatable {
  public var declarationHandle: UInt16
  public var valueHandle: UInt16
  public var uuid: BluetoothUUID
  /// The properties byte of the declaration (0x02 read, 0x10 notify, ...).
  public var properties: UInt8
  public var learnedIn: Int
  /// Handles after the value up to the next characteristic or the service's end, in order.
  public var descriptors: [GATTDescriptorEntry]
  public var name: Name? { GATTDatabase.name(uuid) }

  public init(declarationHandle: UInt16, valueHandle: UInt16, uuid: BluetoothUUID, properties: UInt8, learnedIn: Int, descriptors: [GATTDescriptorEntry]) {
    self.declarationHandle = declarationHandle
    self.valueHandle = valueHandle
    self.uuid = uuid
    self.properties = properties
    self.learnedIn = learnedIn
    self.descriptors = descriptors
  }

  /// The properties' names in bit order (Core Vol 3 Part G 3.3.1.1).
  public var propertyNames: [Name] { GATTCharacteristicEntry.propertyNames(properties) }

  public static func propertyNames(_ properties: UInt8) -> [Name] {
    let names: [Name] = [
      "broadcast", "read", "write_without_response", "write", "notify", "indicate", "authenticated_signed_writes",
      "extended_properties",
    ]
    return (0..<8).compactMap { properties & (1 << $0) != 0 ? names[$0] : nil }
  }

  public static func == (a: Self, b: Self) -> Bool {
    a.declarationHandle == b.declarationHandle && a.valueHandle == b.valueHandle && a.uuid == b.uuid
      && a.properties == b.properties && a.learnedIn == b.learnedIn && a.descriptors == b.descriptors
  }
}

public struct GATTServiceEntry: Sendable, Equatable {
  public var start: UInt16
  public var end: UInt16
  public var uuid: BluetoothUUID
  /// False for secondary services (and included services learned from an include declaration).
  public var primary: Bool
  public var learnedIn: Int
  /// Typed handles inside the service before its first characteristic (include declarations).
  public var includes: [GATTDescriptorEntry]
  public var characteristics: [GATTCharacteristicEntry]
  public var name: Name? { GATTDatabase.name(uuid) }

  public init(start: UInt16, end: UInt16, uuid: BluetoothUUID, primary: Bool, learnedIn: Int, includes: [GATTDescriptorEntry], characteristics: [GATTCharacteristicEntry]) {
    self.start = start
    self.end = end
    self.uuid = uuid
    self.primary = primary
    self.learnedIn = learnedIn
    self.includes = includes
    self.characteristics = characteristics
  }

  public static func == (a: Self, b: Self) -> Bool {
    a.start == b.start && a.end == b.end && a.uuid == b.uuid && a.primary == b.primary && a.learnedIn == b.learnedIn
      && a.includes == b.includes && a.characteristics == b.characteristics
  }
}

/// Everything a database knows, in handle order.
public struct GATTAttributeTree: Sendable, Equatable {
  public var services: [GATTServiceEntry]
  /// Characteristics whose declaration no known service covers (a capture that skipped
  /// service discovery), with their descriptors.
  public var characteristicsOutsideServices: [GATTCharacteristicEntry]
  /// Typed handles that belong to no characteristic and are not a service's includes.
  public var otherHandles: [GATTDescriptorEntry]

  public init(services: [GATTServiceEntry], characteristicsOutsideServices: [GATTCharacteristicEntry], otherHandles: [GATTDescriptorEntry]) {
    self.services = services
    self.characteristicsOutsideServices = characteristicsOutsideServices
    self.otherHandles = otherHandles
  }

  public var isEmpty: Bool { services.isEmpty && characteristicsOutsideServices.isEmpty && otherHandles.isEmpty }
}

extension GATTDatabase {
  /// The table as a tree: services → characteristics → descriptors, with the frames they were
  /// learned in. One pass over the table's entries in handle order (bounded like the table).
  public var attributeTree: GATTAttributeTree {
    var walk = TreeWalk(
      services: services.entries.map(\.value), characteristics: characteristics.entries.map(\.value), types: types.entries)
    return walk.tree()
  }
}

/// Walks services, characteristics and typed handles in handle order, each list once.
private struct TreeWalk {
  let services: [GATTDatabase.Service]
  let characteristics: [GATTDatabase.Characteristic]
  let types: [(handle: UInt16, value: GATTDatabase.TypedHandle)]
  var nextCharacteristic = 0
  var nextType = 0
  /// Typed handles no characteristic or service claims.
  var other: [GATTDescriptorEntry] = []

  init(services: [GATTDatabase.Service], characteristics: [GATTDatabase.Characteristic], types: [(handle: UInt16, value: GATTDatabase.TypedHandle)]) {
    self.services = services
    self.characteristics = characteristics
    self.types = types
  }

  /// The typed handles below `limit` (exclusive) not taken yet.
  mutating func takeTypes(before limit: Int) -> [GATTDescriptorEntry] {
    var taken: [GATTDescriptorEntry] = []
    while nextType < types.count, Int(types[nextType].handle) < limit {
      let (handle, typed) = types[nextType]
      taken.append(GATTDescriptorEntry(handle: handle, uuid: typed.uuid, learnedIn: typed.learnedIn))
      nextType += 1
    }
    return taken
  }

  /// The characteristics declared below `limit`, each with the typed handles after its value
  /// up to the next declaration (or `limit`) as descriptors.
  mutating func takeCharacteristics(before limit: Int) -> [GATTCharacteristicEntry] {
    var result: [GATTCharacteristicEntry] = []
    while nextCharacteristic < characteristics.count, Int(characteristics[nextCharacteristic].declaration) < limit {
      let characteristic = characteristics[nextCharacteristic]
      nextCharacteristic += 1
      let end = nextCharacteristic < characteristics.count ? min(Int(characteristics[nextCharacteristic].declaration), limit) : limit
      other += takeTypes(before: Int(characteristic.declaration))
      var descriptors: [GATTDescriptorEntry] = []
      for entry in takeTypes(before: end) {
        // Find Information over a whole service also lists the declaration and the value.
        if entry.handle == characteristic.declaration || entry.handle == characteristic.valueHandle { continue }
        // Between the declaration and a value further on: no descriptor (a malformed table).
        if entry.handle < characteristic.valueHandle { other.append(entry) } else { descriptors.append(entry) }
      }
      result.append(GATTCharacteristicEntry(
        declarationHandle: characteristic.declaration, valueHandle: characteristic.valueHandle, uuid: characteristic.uuid,
        properties: characteristic.properties, learnedIn: characteristic.learnedIn, descriptors: descriptors))
    }
    return result
  }

  mutating func tree() -> GATTAttributeTree {
    var tree = GATTAttributeTree(services: [], characteristicsOutsideServices: [], otherHandles: [])
    for service in services {
      // Whatever lies before the service belongs to none (services never overlap in a sane
      // table; in a hostile one each entry is still listed once).
      tree.characteristicsOutsideServices += takeCharacteristics(before: Int(service.start))
      other += takeTypes(before: Int(service.start))
      let afterEnd = Int(service.end) + 1
      let firstDeclaration = nextCharacteristic < characteristics.count
        ? min(Int(characteristics[nextCharacteristic].declaration), afterEnd) : afterEnd
      var includes: [GATTDescriptorEntry] = []
      for entry in takeTypes(before: firstDeclaration) {
        if entry.handle == service.start { continue }  // the service declaration itself
        if entry.uuid.uuid16 == 0x2802 { includes.append(entry) } else { other.append(entry) }
      }
      let members = takeCharacteristics(before: afterEnd)
      other += takeTypes(before: afterEnd)
      tree.services.append(GATTServiceEntry(
        start: service.start, end: service.end, uuid: service.uuid, primary: service.primary, learnedIn: service.learnedIn,
        includes: includes, characteristics: members))
    }
    tree.characteristicsOutsideServices += takeCharacteristics(before: 0x1_0000)
    other += takeTypes(before: 0x1_0000)
    tree.otherHandles = other.sorted { $0.handle < $1.handle }
    return tree
  }
}
