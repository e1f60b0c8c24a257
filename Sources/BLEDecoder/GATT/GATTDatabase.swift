import BLECore

/// Which GATT server a database describes: a peer by its address (so a reconnect finds the
/// handles learned before), the local device of a controller, or a peer whose address the
/// capture never showed (keyed by its connection).
public enum GATTServerIdentity: Hashable, Sendable {
  case peer(BDAddr)
  case local(adapter: UInt16)
  case connection(adapter: UInt16, handle: UInt16, generation: Int)
}

/// What a handle means in a GATT database.
public struct ResolvedHandle: Sendable {
  public enum Role: Sendable, Equatable {
    case serviceDeclaration, includeDeclaration, characteristicDeclaration, characteristicValue, descriptor
  }
  public var role: Role
  public var service: BluetoothUUID?
  public var characteristic: BluetoothUUID?
  /// The descriptor's (or declaration's) own type when the handle is not the value.
  public var descriptor: BluetoothUUID?
  /// The name to show: the characteristic's, the descriptor's, or the service's.
  public var name: Name?
  public var characteristicName: Name?
  /// Where this meaning came from: the capture's own discovery, an imported map, the cache, a
  /// map matched by layout, or inference.
  public var source: GATTSource = .capture
  /// For an inferred meaning: how sure, in percent (the share of values that fit).
  public var confidence: UInt8?
}

/// One GATT server's attribute table, learned from the discovery seen in the capture.
///
/// Services come from Read By Group Type and Find By Type Value responses, characteristics
/// from Read By Type (0x2803), includes from Read By Type (0x2802), and any handle's type from
/// Find Information. A handle resolves to the nearest preceding characteristic inside its
/// service, as a GATT client would see it.
public struct GATTDatabase: Sendable {
  // Each entry keeps the frame it was learned in (`learnedIn`, 0 when added by hand): the
  // `gatt` command shows where in the capture each part of the table came from.
  // `source`: where the entry came from (this capture, or a map given beforehand).
  struct Service: Sendable { var start: UInt16; var end: UInt16; var uuid: BluetoothUUID; var primary: Bool; var learnedIn = 0; var source = GATTSource.capture }
  struct Characteristic: Sendable { var declaration: UInt16; var valueHandle: UInt16; var uuid: BluetoothUUID; var properties: UInt8; var learnedIn = 0; var source = GATTSource.capture }
  struct TypedHandle: Sendable { var uuid: BluetoothUUID; var learnedIn = 0; var source = GATTSource.capture }

  var services = HandleMap<Service>()                // by start handle
  var characteristics = HandleMap<Characteristic>()  // by declaration handle
  var types = HandleMap<TypedHandle>()               // any handle's type from Find Information
  /// Included services announced without a UUID (128-bit): start → end, until a read names them.
  var pendingIncludes: [UInt16: UInt16] = [:]
  /// Handles resolved so far: handle → index in `resolved` (-1: not known). Decoders read
  /// entries in place (`resolved[i].name`) rather than copying them.
  var cache: [UInt16: Int32] = [:]
  var resolved: [ResolvedHandle] = []
  /// The value decoder of each entry of `resolved` (index in the registry's `decoders`, -1 for
  /// none), looked up once.
  var decoders: [Int32] = []
  /// Whether maps were looked for when the table was first needed (they are, once).
  var wasSeeded = false
  /// Where the entries not learned from the capture came from (the map, the cache, a layout).
  public internal(set) var provenance: GATTMapProvenance?
  /// The Database Hash of the map that seeded the table, when the map knew it.
  var seededHash: [UInt8]?
  /// The Database Hash the server last reported (read by the client).
  public internal(set) var reportedHash: [UInt8]?
  /// Values of a cached or layout-matched table that decoded as its characteristics: past
  /// `trustedAfter`, they are no longer checked one by one (a poisoned table fails at once).
  var seededValuesThatFit = 0
  static let trustedAfter = 64
  /// Counts changes to the entries (not to the lookup cache): layout matching recomputes a
  /// table's layout only when it changed.
  var revision: UInt32 = 0
  /// Meanings guessed from values, for handles nothing else explains.
  var guesses = HandleGuesses()
  /// HID Report Reference values read from the server (descriptor 0x2908), by the value
  /// handle of the Report characteristic they describe (at most `maximumReportReferences`).
  var reportReferences: [UInt16: HIDReportReference] = [:]
  static let maximumReportReferences = 256
  /// The last handle resolved: notifications repeat one handle millions of times.
  var lastHandle: UInt16?
  var lastIndex: Int32 = -1

  public init() {}

  /// Drops resolved handles after the table changed.
  mutating func forget() {
    cache.removeAll(keepingCapacity: true)
    resolved.removeAll(keepingCapacity: true)
    decoders.removeAll(keepingCapacity: true)
    lastHandle = nil
  }

  /// How many entries the table holds, learned and cached: what `GATTDatabaseTable` bounds.
  var footprint: Int {
    services.count + characteristics.count + types.count + resolved.count + pendingIncludes.count
  }

  public var isEmpty: Bool { services.isEmpty && characteristics.isEmpty && types.isEmpty }

  /// The services learned, in handle order (for summaries; read-only).
  public var serviceList: [(start: UInt16, end: UInt16, uuid: BluetoothUUID, primary: Bool)] {
    services.entries.map { ($0.value.start, $0.value.end, $0.value.uuid, $0.value.primary) }
  }

  // `learnedIn`: the frame that showed the entry. Rediscovering an entry unchanged (a reconnect
  // that runs discovery again) keeps the frame it was first learned in.

  package mutating func addService(start: UInt16, end: UInt16, uuid: BluetoothUUID, primary: Bool, learnedIn frame: Int = 0, source: GATTSource = .capture) {
    forget()
    revision &+= 1
    var service = Service(start: start, end: max(start, end), uuid: uuid, primary: primary, learnedIn: frame, source: source)
    if let old = services[start], old.source == source, old.end == service.end, old.uuid == uuid, old.primary == primary { service.learnedIn = old.learnedIn }
    services[start] = service
  }

  package mutating func addCharacteristic(declaration: UInt16, valueHandle: UInt16, uuid: BluetoothUUID, properties: UInt8, learnedIn frame: Int = 0, source: GATTSource = .capture) {
    forget()
    revision &+= 1
    var characteristic = Characteristic(declaration: declaration, valueHandle: valueHandle, uuid: uuid, properties: properties, learnedIn: frame, source: source)
    if let old = characteristics[declaration], old.source == source, old.valueHandle == valueHandle, old.uuid == uuid, old.properties == properties {
      characteristic.learnedIn = old.learnedIn
    }
    characteristics[declaration] = characteristic
  }

  package mutating func setType(_ uuid: BluetoothUUID, of handle: UInt16, learnedIn frame: Int = 0, source: GATTSource = .capture) {
    if let old = types[handle], old.uuid == uuid, old.source == source { return }
    forget()
    revision &+= 1
    types[handle] = TypedHandle(uuid: uuid, learnedIn: frame, source: source)
  }

  /// Notes an included service whose UUID (128-bit) the client will read at `start`.
  package mutating func awaitIncludedService(start: UInt16, end: UInt16) {
    if pendingIncludes.count < 256 { pendingIncludes[start] = end }
  }

  /// Whether an included service announced at `start` waits for its UUID to be read.
  package func awaitsIncludedService(at start: UInt16) -> Bool { pendingIncludes[start] != nil }

  /// The end of an included service announced at `start` and not yet named; forgets it.
  package mutating func includedServiceEnd(start: UInt16) -> UInt16? {
    pendingIncludes.removeValue(forKey: start)
  }

  /// Forgets everything in `start...end` (a Service Changed indication).
  package mutating func invalidate(_ start: UInt16, _ end: UInt16) {
    guard start <= end else { return }
    forget()
    revision &+= 1
    services.removeAll(in: start...end)
    characteristics.removeAll(in: start...end)
    types.removeAll(in: start...end)
    if !reportReferences.isEmpty { reportReferences = reportReferences.filter { !(start...end).contains($0.key) } }
  }

  /// Notes a Report Reference read from descriptor `handle`: the Report characteristic it
  /// belongs to (the one whose declaration precedes it) carries that report.
  mutating func noteReportReference(_ reference: HIDReportReference, descriptor handle: UInt16) {
    guard let characteristic = characteristics.atOrBefore(handle)?.value, characteristic.valueHandle < handle else { return }
    if reportReferences[characteristic.valueHandle] == nil && reportReferences.count >= Self.maximumReportReferences { return }
    reportReferences[characteristic.valueHandle] = reference
  }

  /// Whether the table holds entries from a cached or layout-matched map that the traffic has
  /// not yet been found to agree with: such entries are checked as values arrive.
  var seededEntriesOnTrial: Bool { isOnTrial && seededValuesThatFit < Self.trustedAfter }
  /// Whether the table was seeded from the cache or by layout (set with `provenance`).
  var isOnTrial = false

  /// Forgets every entry that came from a map (the capture's own stay); the table is not seeded
  /// again. Returns where the dropped entries came from.
  @discardableResult
  mutating func dropSeededEntries() -> GATTMapProvenance? {
    let dropped = provenance
    forget()
    revision &+= 1
    services.removeAll { $0.source != .capture }
    characteristics.removeAll { $0.source != .capture }
    types.removeAll { $0.source != .capture }
    provenance = nil
    isOnTrial = false
    seededHash = nil
    return dropped
  }

  /// What `handle` is, or nil when discovery never covered it.
  public mutating func resolve(_ handle: UInt16, registry: DecoderRegistry = .standard) -> ResolvedHandle? {
    locate(handle, registry: registry).map { resolved[$0] }
  }

  /// Where `handle`'s meaning is in `resolved`, or nil when discovery never covered it. The
  /// index is valid until the table next changes.
  mutating func locate(_ handle: UInt16, registry: DecoderRegistry) -> Int? {
    if handle == lastHandle { return lastIndex < 0 ? nil : Int(lastIndex) }
    let index: Int32
    if let cached = cache[handle] {
      index = cached
    } else {
      if cache.count > 4096 { forget() }
      if var found = lookUp(handle) {
        let decoder = Self.decoderIndex(for: found, registry: registry)
        // A user's decoder names what nothing else names (a vendor UUID).
        if found.name == nil, let decoder, let name = registry.declaredFormat(decoder: decoder)?.name {
          found.name = name
          if found.role == .characteristicValue { found.characteristicName = name }
        }
        resolved.append(found)
        decoders.append(Int32(decoder ?? -1))
        index = Int32(resolved.count - 1)
      } else {
        index = -1
      }
      cache[handle] = index
    }
    lastHandle = handle
    lastIndex = index
    return index < 0 ? nil : Int(index)
  }

  /// The decoder for the value at a resolved handle: its characteristic's, or its descriptor's.
  static func decoderIndex(for resolved: ResolvedHandle, registry: DecoderRegistry) -> Int? {
    switch resolved.role {
    case .characteristicValue:
      return (resolved.characteristic ?? resolved.descriptor).flatMap(registry.index(for:))
    case .descriptor:
      return resolved.descriptor.flatMap(registry.index(for:))
    case .serviceDeclaration, .characteristicDeclaration, .includeDeclaration:
      return nil
    }
  }

  func lookUp(_ handle: UInt16) -> ResolvedHandle? {
    // Services do not overlap: the one starting last at or before the handle is the only candidate.
    let service = services.atOrBefore(handle).map(\.value).flatMap { handle <= $0.end ? $0 : nil }
    let typed = types[handle]
    let ownType = typed?.uuid
    if let service, service.start == handle {
      return ResolvedHandle(role: .serviceDeclaration, service: service.uuid, characteristic: nil,
        descriptor: BluetoothUUID(uuid16: service.primary ? 0x2800 : 0x2801), name: Self.name(service.uuid), characteristicName: nil,
        source: service.source)
    }
    // The characteristic whose declaration precedes the handle, within the same service (a
    // characteristic's descriptors never run past the end of its service).
    let characteristic = characteristics.atOrBefore(handle).map(\.value).flatMap { candidate -> Characteristic? in
      if let service { return candidate.declaration >= service.start ? candidate : nil }
      // Outside every service: so must the characteristic be.
      if let around = services.atOrBefore(candidate.declaration)?.value, candidate.declaration <= around.end { return nil }
      return candidate
    }
    if let characteristic {
      let name = Self.name(characteristic.uuid)
      if handle == characteristic.declaration {
        return ResolvedHandle(role: .characteristicDeclaration, service: service?.uuid, characteristic: characteristic.uuid,
          descriptor: BluetoothUUID(uuid16: 0x2803), name: name, characteristicName: name, source: characteristic.source)
      }
      if handle == characteristic.valueHandle {
        return ResolvedHandle(role: .characteristicValue, service: service?.uuid, characteristic: characteristic.uuid,
          descriptor: nil, name: name, characteristicName: name, source: characteristic.source)
      }
      if handle > characteristic.valueHandle {
        let type = ownType
        return ResolvedHandle(role: .descriptor, service: service?.uuid, characteristic: characteristic.uuid,
          descriptor: type, name: type.flatMap(Self.name) ?? name, characteristicName: name, source: typed?.source ?? characteristic.source)
      }
    }
    if let ownType {
      // Known only from Find Information: a type without structure around it.
      switch ownType.uuid16 {
      case 0x2802?:
        return ResolvedHandle(role: .includeDeclaration, service: service?.uuid, characteristic: nil, descriptor: ownType, name: Self.name(ownType), characteristicName: nil, source: typed?.source ?? .capture)
      case 0x2803?:
        return ResolvedHandle(role: .characteristicDeclaration, service: service?.uuid, characteristic: nil, descriptor: ownType, name: Self.name(ownType), characteristicName: nil, source: typed?.source ?? .capture)
      case 0x2800?, 0x2801?:
        return ResolvedHandle(role: .serviceDeclaration, service: service?.uuid, characteristic: nil, descriptor: ownType, name: Self.name(ownType), characteristicName: nil, source: typed?.source ?? .capture)
      default:
        break
      }
      return ResolvedHandle(role: ownType.uuid16.map { (0x2900...0x29FF).contains($0) } == true ? .descriptor : .characteristicValue,
        service: service?.uuid, characteristic: nil, descriptor: ownType, name: Self.name(ownType), characteristicName: nil, source: typed?.source ?? .capture)
    }
    if let service {
      return ResolvedHandle(role: .characteristicValue, service: service.uuid, characteristic: nil, descriptor: nil, name: Self.name(service.uuid), characteristicName: nil,
        source: service.source)
    }
    return nil
  }

  /// The assigned (or known vendor) name of a UUID.
  public static func name(_ uuid: BluetoothUUID) -> Name? {
    if let short = uuid.uuid16 { return AssignedNumbers.uuid16Name(short) }
    return AssignedNumbers.uuid128Name(high: uuid.high, low: uuid.low)
  }
}
