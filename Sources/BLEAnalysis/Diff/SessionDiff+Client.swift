import BLECore
import BLEDecoder

/// What a GATT client did to one device, compared: the tables as far as both captures saw
/// them, discovery, subscriptions, and what was read and written (per attribute, over all the
/// device's connections, repeated exchanges counted rather than listed).
extension SessionDiff {
  // MARK: - What each capture saw

  /// What one capture's discovery covered for a device: a table entry absent from the other
  /// side is a difference only where the other side looked for it.
  struct DiscoveryCoverage {
    /// The first search for every primary service, and how many there were.
    var allServices: Occurrence?
    var allServicesCount = 0
    /// Services searched for by UUID (Find By Type Value).
    var services: [BluetoothUUID: Occurrence] = [:]
    /// Services whose characteristics were searched, and characteristics whose descriptors
    /// were, in the order first searched.
    var characteristicsOf = SearchList()
    var descriptorsOf = SearchList()

    func searchedCharacteristics(of service: BluetoothUUID) -> Occurrence? { characteristicsOf.places[service] }
    func searchedDescriptors(of characteristic: BluetoothUUID) -> Occurrence? { descriptorsOf.places[characteristic] }
    func searched(service: BluetoothUUID) -> Occurrence? { allServices ?? services[service] }
  }

  /// What was searched, each once, in the order first searched.
  struct SearchList {
    var order: [BluetoothUUID] = []
    var places: [BluetoothUUID: Occurrence] = [:]
    mutating func add(_ uuid: BluetoothUUID, _ place: Occurrence) {
      guard places[uuid] == nil else { return }
      order.append(uuid)
      places[uuid] = place
    }
  }

  func coverage(_ side: DiffSide, _ device: BDAddr, centralIsClient: Bool = true) -> DiscoveryCoverage {
    var coverage = DiscoveryCoverage()
    for connection in side.operations(of: device, centralIsClient: centralIsClient) {
      // A search the server never answered showed nothing.
      for step in connection.steps where step.outcome == .ok {
        let place = Occurrence(frame: step.frame, time: step.time)
        switch step.kind {
        case .discoverServices:
          if let uuid = step.uuid {
            if coverage.services[uuid] == nil { coverage.services[uuid] = place }
          } else {
            coverage.allServices = coverage.allServices ?? place
            coverage.allServicesCount = coverage.allServicesCount.saturatingAdd(1)
          }
        case .discoverCharacteristics:
          if let uuid = step.uuid { coverage.characteristicsOf.add(uuid, place) }
        case .discoverDescriptors:
          if let uuid = step.uuid { coverage.descriptorsOf.add(uuid, place) }
        default:
          break
        }
      }
    }
    return coverage
  }

  // MARK: - GATT tables

  /// `seen`: what each side's discovery covered (worked out once per device pair by `compare`).
  func compareTables(
    _ a: GATTAttributeTree, _ b: GATTAttributeTree, _ sideA: DiffSide, _ sideB: DiffSide, _ pair: DevicePair,
    seen: (a: DiscoveryCoverage, b: DiscoveryCoverage)? = nil
  ) -> [SessionDifference] {
    let (seenA, seenB) = seen ?? (coverage(sideA, pair.a.address), coverage(sideB, pair.b.address))
    var differences: [SessionDifference] = []
    func add(_ text: String, _ inA: Occurrence?, _ inB: Occurrence?, _ valueA: String?, _ valueB: String?) {
      differences.append(SessionDifference(kind: .gatt, subject: pair.subject, text: text, inA: sideA.place(inA), inB: sideB.place(inB), a: valueA, b: valueB))
    }
    // Each service's characteristics with their keys, in the table's order.
    let keysA = Self.characteristicKeys(a)
    let keysB = Self.characteristicKeys(b)
    var inB: [CharacteristicKey: GATTCharacteristicEntry] = [:]
    for (key, characteristic) in keysB.joined() { inB[key] = characteristic }
    var inA: Set<CharacteristicKey> = []
    let shift = handleShift(Array(keysA.joined()), inB)
    let servicesA = Set(a.services.map(\.uuid))
    let servicesB = Set(b.services.map(\.uuid))
    for (position, service) in a.services.enumerated() {
      guard servicesB.contains(service.uuid) else {
        if let looked = seenB.searched(service: service.uuid) {
          add("service \(name(service.uuid)) is missing from B's GATT table", seenA.searched(service: service.uuid), looked, "present", nil)
        }
        continue
      }
      for (key, characteristic) in keysA[position] {
        inA.insert(key)
        let foundA = seenA.searchedCharacteristics(of: service.uuid)
        guard let other = inB[key] else {
          // Missing only if B searched that service's characteristics.
          guard let looked = seenB.searchedCharacteristics(of: service.uuid) else { continue }
          var text = "\(name(characteristic.uuid)) (\(Hex.prefixed(UInt64(characteristic.valueHandle), width: 4)) in A) is missing from B's GATT table"
          if let (delta, from) = shift { text += "; the handles after it moved by \(delta) (from \(Hex.prefixed(UInt64(from), width: 4)))" }
          add(text, foundA, looked, "present", nil)
          continue
        }
        let descriptorsA = seenA.searchedDescriptors(of: characteristic.uuid)
        let descriptorsB = seenB.searchedDescriptors(of: characteristic.uuid)
        if let descriptorsB {
          let theirs = Set(other.descriptors.map(\.uuid))
          for descriptor in characteristic.descriptors where !theirs.contains(descriptor.uuid) {
            add("\(name(characteristic.uuid)) has no \(name(descriptor.uuid)) in B's GATT table", descriptorsA, descriptorsB, "present", nil)
          }
        }
        if let descriptorsA {
          let ours = Set(characteristic.descriptors.map(\.uuid))
          for descriptor in other.descriptors where !ours.contains(descriptor.uuid) {
            add("\(name(characteristic.uuid)) has \(name(descriptor.uuid)) only in B's GATT table", descriptorsA, descriptorsB, nil, "present")
          }
        }
        if other.properties != characteristic.properties {
          let names = { (properties: UInt8) in GATTCharacteristicEntry.propertyNames(properties).map(\.description).joined(separator: ", ") }
          add("\(name(characteristic.uuid)): properties \(names(characteristic.properties)) in A, \(names(other.properties)) in B",
            foundA, seenB.searchedCharacteristics(of: service.uuid), "\(characteristic.properties)", "\(other.properties)")
        }
      }
    }
    for service in b.services where !servicesA.contains(service.uuid) {
      if let looked = seenA.searched(service: service.uuid) {
        add("service \(name(service.uuid)) is only in B's GATT table", looked, seenB.searched(service: service.uuid), nil, "present")
      }
    }
    for (position, service) in b.services.enumerated() where servicesA.contains(service.uuid) {
      guard let looked = seenA.searchedCharacteristics(of: service.uuid) else { continue }
      for (key, characteristic) in keysB[position] where !inA.contains(key) {
        add("\(name(characteristic.uuid)) is only in B's GATT table (\(Hex.prefixed(UInt64(characteristic.valueHandle), width: 4)))",
          looked, seenB.searchedCharacteristics(of: service.uuid), nil, "present")
      }
    }
    // Handles that moved with nothing missing: one line, not one per handle.
    if differences.isEmpty, let (delta, from) = shift {
      add("the same GATT table, its handles from \(Hex.prefixed(UInt64(from), width: 4)) on moved by \(delta) in B", seenA.allServices, seenB.allServices, nil, nil)
    }
    return differences
  }

  /// A characteristic by what it is rather than where: its service's UUID and its own, each
  /// with how many of the same UUID came before it (a table may declare one UUID many times).
  struct CharacteristicKey: Hashable {
    var service: BluetoothUUID
    var serviceCopy: Int
    var characteristic: BluetoothUUID
    var copy: Int
  }

  /// Per service (in the table's order), its characteristics with their keys.
  static func characteristicKeys(_ tree: GATTAttributeTree) -> [[(CharacteristicKey, GATTCharacteristicEntry)]] {
    var keys: [[(CharacteristicKey, GATTCharacteristicEntry)]] = []
    var services: [BluetoothUUID: Int] = [:]
    for service in tree.services {
      let serviceCopy = services[service.uuid, default: 0]
      services[service.uuid] = serviceCopy + 1
      var characteristics: [BluetoothUUID: Int] = [:]
      var keyed: [(CharacteristicKey, GATTCharacteristicEntry)] = []
      for characteristic in service.characteristics {
        let copy = characteristics[characteristic.uuid, default: 0]
        characteristics[characteristic.uuid] = copy + 1
        keyed.append((CharacteristicKey(service: service.uuid, serviceCopy: serviceCopy, characteristic: characteristic.uuid, copy: copy), characteristic))
      }
      keys.append(keyed)
    }
    return keys
  }

  /// The shift of the first characteristic (matched as above) whose value handle differs, and where.
  func handleShift(_ a: [(CharacteristicKey, GATTCharacteristicEntry)], _ b: [CharacteristicKey: GATTCharacteristicEntry]) -> (Int, UInt16)? {
    for (key, characteristic) in a {
      if let match = b[key], match.valueHandle != characteristic.valueHandle {
        return (Int(match.valueHandle) - Int(characteristic.valueHandle), characteristic.valueHandle)
      }
    }
    return nil
  }

  // MARK: - Discovery

  /// What one side's client searched that the other's never did: one line per kind of search,
  /// naming what was searched.
  func compareDiscovery(_ a: DiffSide, _ b: DiffSide, _ pair: DevicePair, seen: (a: DiscoveryCoverage, b: DiscoveryCoverage)) -> [SessionDifference] {
    let (seenA, seenB) = seen
    var differences: [SessionDifference] = []
    if seenA.allServicesCount != seenB.allServicesCount {
      let text: String
      if seenB.allServicesCount == 0 {
        text = "only A discovered the primary services"
      } else if seenA.allServicesCount == 0 {
        text = "only B discovered the primary services"
      } else {
        text = "the primary services discovered \(seenA.allServicesCount)× in A, \(seenB.allServicesCount)× in B"
      }
      var difference = SessionDifference(kind: .procedure, subject: pair.subject, text: text, inA: a.place(seenA.allServices), inB: b.place(seenB.allServices),
        a: "\(seenA.allServicesCount)", b: "\(seenB.allServicesCount)")
      difference.countA = seenA.allServicesCount
      difference.countB = seenB.allServicesCount
      differences.append(difference)
    }
    func searchedOnlyOnOneSide(_ what: String, _ x: SearchList, _ y: SearchList, xIsA: Bool) {
      let only = x.order.filter { y.places[$0] == nil }.map { (uuid: $0, place: x.places[$0]!) }
      guard let first = only.first else { return }
      let names = Self.list(only.map { name($0.uuid) })
      var difference = SessionDifference(kind: .procedure, subject: pair.subject,
        text: "only \(xIsA ? "A" : "B") discovered the \(what) of \(names)",
        inA: xIsA ? a.place(first.place) : nil, inB: xIsA ? nil : b.place(first.place),
        a: xIsA ? "\(only.count)" : nil, b: xIsA ? nil : "\(only.count)")
      let places = only.compactMap { xIsA ? a.place($0.place) : b.place($0.place) }
      if xIsA { difference.everyA = places } else { difference.everyB = places }
      differences.append(difference)
    }
    searchedOnlyOnOneSide("characteristics", seenA.characteristicsOf, seenB.characteristicsOf, xIsA: true)
    searchedOnlyOnOneSide("characteristics", seenB.characteristicsOf, seenA.characteristicsOf, xIsA: false)
    searchedOnlyOnOneSide("descriptors", seenA.descriptorsOf, seenB.descriptorsOf, xIsA: true)
    searchedOnlyOnOneSide("descriptors", seenB.descriptorsOf, seenA.descriptorsOf, xIsA: false)
    return differences
  }

  /// "X", "X and Y", "X, Y, Z and 4 more (7)".
  static func list(_ names: [String], shown: Int = 4) -> String {
    switch names.count {
    case 0: return "nothing"
    case 1: return names[0]
    case 2...shown: return names.dropLast().joined(separator: ", ") + " and " + names[names.count - 1]
    default: return names.prefix(shown - 1).joined(separator: ", ") + " and \(names.count - shown + 1) more (\(names.count) in all)"
    }
  }

  // MARK: - Subscriptions

  /// Notifications or indications enabled on one side only, refused on one side, or enabled
  /// more often. Returns the characteristics subscribed on one side only: their values are
  /// not compared (that one line says it).
  func compareSubscriptions(_ a: DiffSide, _ b: DiffSide, _ pair: DevicePair, into differences: inout [SessionDifference]) -> Set<String> {
    struct Enabling {
      var uuid: BluetoothUUID?
      var places: [Occurrence] = []
      var outcome: ProcedureStep.Outcome
    }
    // A CCCD written by handle alone (the capture never discovered it) is named from the
    // other side's table, as exchanges are.
    func enablings(_ side: DiffSide, _ device: BDAddr, other: GATTAttributeTree?) -> [Enabling] {
      var found: [Enabling] = []
      var index: [BluetoothUUID?: Int] = [:]
      for connection in side.operations(of: device, centralIsClient: pair.centralIsClient) {
        for var step in connection.steps where step.kind == .subscribe && step.detail?.description != "off" {
          if step.uuid == nil, pair.centralIsClient, let handle = step.handle, let table = other, let found = Self.lookup(handle, in: table),
            found.descriptor == nil || found.descriptor?.uuid16 == 0x2902
          {
            step.uuid = found.characteristic
          }
          let place = Occurrence(frame: step.frame, time: step.time)
          if let index = index[step.uuid] {
            if found[index].places.count < ExchangeLedger.maximumOccurrences { found[index].places.append(place) }
          } else {
            index[step.uuid] = found.count
            found.append(Enabling(uuid: step.uuid, places: [place], outcome: step.outcome))
          }
        }
      }
      return found
    }
    let enabledA = enablings(a, pair.a.address, other: b.tables[pair.b.address])
    let enabledB = enablings(b, pair.b.address, other: a.tables[pair.a.address])
    let inB = Dictionary(enabledB.enumerated().map { ($0.element.uuid, $0.offset) }, uniquingKeysWith: { first, _ in first })
    let inA = Set(enabledA.map(\.uuid))
    var silenced: Set<String> = []
    for enabling in enabledA {
      guard let other = inB[enabling.uuid].map({ enabledB[$0] }) else {
        silenced.insert(enabling.uuid?.description ?? "?")
        var difference = SessionDifference(kind: .procedure, subject: pair.subject, text: "B never enabled notifications on \(name(enabling.uuid))",
          inA: a.place(enabling.places.first), a: "subscribed")
        difference.everyA = enabling.places.compactMap { a.place($0) }
        differences.append(difference)
        continue
      }
      if enabling.outcome != other.outcome {
        differences.append(SessionDifference(kind: .procedure, subject: pair.subject,
          text: "enabling notifications on \(name(enabling.uuid)): \(outcomeText(enabling.outcome)) in A, \(outcomeText(other.outcome)) in B",
          inA: a.place(enabling.places.first), inB: b.place(other.places.first), a: outcomeText(enabling.outcome), b: outcomeText(other.outcome)))
      } else if enabling.places.count != other.places.count {
        let fewer = min(enabling.places.count, other.places.count)
        var difference = SessionDifference(kind: .procedure, subject: pair.subject,
          text: "notifications on \(name(enabling.uuid)) enabled \(enabling.places.count)× in A, \(other.places.count)× in B",
          inA: a.place(enabling.places.count > fewer ? enabling.places[fewer] : enabling.places.last),
          inB: b.place(other.places.count > fewer ? other.places[fewer] : other.places.last),
          a: "\(enabling.places.count)", b: "\(other.places.count)")
        difference.countA = enabling.places.count
        difference.countB = other.places.count
        difference.everyA = enabling.places.compactMap { a.place($0) }
        difference.everyB = other.places.compactMap { b.place($0) }
        differences.append(difference)
      }
    }
    for enabling in enabledB where !inA.contains(enabling.uuid) {
      silenced.insert(enabling.uuid?.description ?? "?")
      var difference = SessionDifference(kind: .procedure, subject: pair.subject, text: "only B enabled notifications on \(name(enabling.uuid))",
        inB: b.place(enabling.places.first), b: "subscribed")
      difference.everyB = enabling.places.compactMap { b.place($0) }
      differences.append(difference)
    }
    return silenced
  }

  // MARK: - Reads and writes

  typealias Ledger = (keys: [ExchangeLedger.Key], tallies: [ExchangeLedger.Key: ExchangeLedger.Tally])

  /// A device's exchanges over all its connections on one side, per attribute.
  func ledger(_ side: DiffSide, _ device: BDAddr, centralIsClient: Bool) -> Ledger {
    var ledger: Ledger = ([], [:])
    for connection in side.operations(of: device, centralIsClient: centralIsClient) {
      for key in connection.exchanges.keys {
        if let tally = connection.exchanges.tally(for: key) { Self.merge(tally, under: key, into: &ledger) }
      }
    }
    return ledger
  }

  static func merge(_ tally: ExchangeLedger.Tally, under key: ExchangeLedger.Key, into ledger: inout Ledger) {
    guard var merged = ledger.tallies[key] else {
      ledger.keys.append(key)
      ledger.tallies[key] = tally
      return
    }
    merged.count = merged.count.saturatingAdd(tally.count)
    merged.valuesNotListed = merged.valuesNotListed.saturatingAdd(tally.valuesNotListed)
    merged.occurrences += tally.occurrences.prefix(max(0, ExchangeLedger.maximumOccurrences - merged.occurrences.count))
    for value in tally.values {
      if let index = merged.valueIndex[value.value] {
        merged.values[index].count = merged.values[index].count.saturatingAdd(value.count)
        merged.values[index].occurrences += value.occurrences.prefix(max(0, ExchangeLedger.maximumOccurrences - merged.values[index].occurrences.count))
      } else if merged.values.count < ExchangeLedger.maximumValues {
        merged.valueIndex[value.value] = merged.values.count
        merged.values.append(value)
      } else {
        merged.valuesNotListed = merged.valuesNotListed.saturatingAdd(value.count)
      }
    }
    ledger.tallies[key] = merged
  }

  /// Names the attributes a side knew only by handle (it never discovered them) from the other
  /// side's table, so that the same read compares equal however much each side discovered.
  /// Returns the ledger and the keys so named (the text says whose table named them).
  static func named(_ ledger: Ledger, by table: GATTAttributeTree?) -> (Ledger, Set<ExchangeLedger.Key>) {
    guard let table, ledger.keys.contains(where: { $0.handle != nil }) else { return (ledger, []) }
    var renamed: Ledger = ([], [:])
    var borrowed: Set<ExchangeLedger.Key> = []
    for key in ledger.keys {
      guard let tally = ledger.tallies[key] else { continue }
      var target = key
      if let handle = key.handle, let found = lookup(handle, in: table) {
        target = ExchangeLedger.Key(kind: key.kind, service: found.service, characteristic: found.characteristic, descriptor: found.descriptor)
        borrowed.insert(target)
      }
      merge(tally, under: target, into: &renamed)
    }
    return (renamed, borrowed)
  }

  static func placed(_ ledger: Ledger, like other: Ledger) -> Ledger {
    guard ledger.keys.contains(where: { $0.service == nil && $0.characteristic != nil }) else { return ledger }
    var placed: Ledger = ([], [:])
    for key in ledger.keys {
      guard let tally = ledger.tallies[key] else { continue }
      var target = key
      if key.service == nil, key.characteristic != nil, other.tallies[key] == nil {
        let matches = other.keys.filter {
          $0.kind == key.kind && $0.characteristic == key.characteristic && $0.descriptor == key.descriptor && $0.service != nil
        }
        if matches.count == 1 { target = matches[0] }
      }
      merge(tally, under: target, into: &placed)
    }
    return placed
  }

  static func lookup(_ handle: UInt16, in table: GATTAttributeTree) -> (service: BluetoothUUID, characteristic: BluetoothUUID, descriptor: BluetoothUUID?)? {
    for service in table.services where service.start <= handle && handle <= service.end {
      for (index, characteristic) in service.characteristics.enumerated() {
        if characteristic.valueHandle == handle { return (service.uuid, characteristic.uuid, nil) }
        if let descriptor = characteristic.descriptors.first(where: { $0.handle == handle }) { return (service.uuid, characteristic.uuid, descriptor.uuid) }
        // A handle after the value and before the next declaration: an attribute of this
        // characteristic the table does not list (named as the capture's own resolver does).
        let next = index + 1 < service.characteristics.count ? service.characteristics[index + 1].declarationHandle : service.end &+ 1
        if characteristic.valueHandle < handle, handle < next { return (service.uuid, characteristic.uuid, nil) }
      }
    }
    return nil
  }

  /// Time characteristics: their values differ from one session to the next by nature, so only
  /// how often they were read or written is compared.
  static let clockCharacteristics: Set<UInt16> = [0x2A08, 0x2A0A, 0x2A0C, 0x2A0D, 0x2A0E, 0x2A0F, 0x2A11, 0x2A12, 0x2A13, 0x2A14, 0x2A2B, 0x2AED]

  func compareExchanges(_ a: DiffSide, _ b: DiffSide, _ pair: DevicePair) -> [SessionDifference] {
    var ledgerA = ledger(a, pair.a.address, centralIsClient: pair.centralIsClient)
    var ledgerB = ledger(b, pair.b.address, centralIsClient: pair.centralIsClient)
    var namedByB: Set<ExchangeLedger.Key> = []
    var namedByA: Set<ExchangeLedger.Key> = []
    if pair.centralIsClient {
      (ledgerA, namedByB) = Self.named(ledgerA, by: b.tables[pair.b.address])
      (ledgerB, namedByA) = Self.named(ledgerB, by: a.tables[pair.a.address])
    }
    // A characteristic one side named without its service (inferred, not discovered) is the
    // other side's characteristic of that UUID when there is one such.
    ledgerA = Self.placed(ledgerA, like: ledgerB)
    ledgerB = Self.placed(ledgerB, like: ledgerA)
    var differences: [SessionDifference] = []
    let keys = ledgerA.keys + ledgerB.keys.filter { ledgerA.tallies[$0] == nil }
    for key in keys {
      let tallyA = ledgerA.tallies[key]
      let tallyB = ledgerB.tallies[key]
      let kind: SessionDifference.Kind = key.kind == .read ? .reads : .writes
      var what = "\(verb(key.kind)) \(attributeName(key))"
      if namedByB.contains(key) { what += " (A knew only its handle: named by B's table)" }
      if namedByA.contains(key) { what += " (B knew only its handle: named by A's table)" }
      func make(_ text: String, _ inA: Occurrence?, _ inB: Occurrence?, _ valueA: String?, _ valueB: String?) -> SessionDifference {
        var difference = SessionDifference(kind: kind, subject: pair.subject, text: text, inA: a.place(inA), inB: b.place(inB), a: valueA, b: valueB)
        difference.countA = tallyA?.count
        difference.countB = tallyB?.count
        return difference
      }
      switch (tallyA, tallyB) {
      case let (x?, nil):
        var difference = make("\(what) \(x.count)× only in A\(valuesSuffix(x))", x.occurrences.first, nil, valuesText(x), nil)
        difference.everyA = x.occurrences.compactMap { a.place($0) }
        difference.placesA = x.count
        differences.append(difference)
      case let (nil, y?):
        var difference = make("\(what) \(y.count)× only in B\(valuesSuffix(y))", nil, y.occurrences.first, nil, valuesText(y))
        difference.everyB = y.occurrences.compactMap { b.place($0) }
        difference.placesB = y.count
        differences.append(difference)
      case let (x?, y?):
        let clock = key.characteristic?.uuid16.map { Self.clockCharacteristics.contains($0) } ?? false
        let valuesDiffer = !clock && !Self.sameValues(x, y)
        if valuesDiffer {
          // Where each side first shows a value the other never had.
          let (valuesA, valuesB) = (Set(x.values.map(\.value)), Set(y.values.map(\.value)))
          let newInA = x.values.filter { !valuesB.contains($0.value) }
          let newInB = y.values.filter { !valuesA.contains($0.value) }
          let firstA = newInA.compactMap(\.occurrences.first).min { $0.frame < $1.frame } ?? x.occurrences.first
          let firstB = newInB.compactMap(\.occurrences.first).min { $0.frame < $1.frame } ?? y.occurrences.first
          var text: String
          if x.values.count <= Self.fewValues, y.values.count <= Self.fewValues {
            // What differs, then what both had (counted when they had it unequally often).
            let common = x.values.filter { valuesB.contains($0.value) }.map { value in valueText(value.value) }
            let did = key.kind == .read ? "read" : "wrote"
            switch (newInA.isEmpty, newInB.isEmpty) {
            case (true, _): text = "\(what): only B \(did) \(listed(newInB, of: y))"
            case (_, true): text = "\(what): only A \(did) \(listed(newInA, of: x))"
            default: text = "\(what): \(listed(newInA, of: x)) in A, \(listed(newInB, of: y)) in B"
            }
            if !common.isEmpty { text += " (both \(did) \(Self.list(common)))" }
          } else {
            // A stream of commands (a treadmill's, a band's): how many, and what only one side sent.
            var parts = ["\(x.count)× (\(distinct(x)) distinct) in A, \(y.count)× (\(distinct(y))) in B"]
            if let value = newInB.first { parts.append("\(newInB.count) only in B, first \(valueText(value.value))") }
            if let value = newInA.first { parts.append("\(newInA.count) only in A, first \(valueText(value.value))") }
            text = "\(what) \(parts.joined(separator: "; "))"
          }
          var difference = make(text, firstA, firstB, valuesText(x), valuesText(y))
          difference.everyA = newInA.flatMap(\.occurrences).sorted { $0.frame < $1.frame }.compactMap { a.place($0) }
          difference.everyB = newInB.flatMap(\.occurrences).sorted { $0.frame < $1.frame }.compactMap { b.place($0) }
          difference.placesA = newInA.reduce(0) { $0.saturatingAdd($1.count) }
          difference.placesB = newInB.reduce(0) { $0.saturatingAdd($1.count) }
          differences.append(difference)
        } else if x.count != y.count {
          let fewer = min(x.count, y.count)
          // The first exchange the other side has no counterpart for.
          let extraA = x.count > fewer ? (fewer < x.occurrences.count ? x.occurrences[fewer] : x.occurrences.last) : x.occurrences.last
          let extraB = y.count > fewer ? (fewer < y.occurrences.count ? y.occurrences[fewer] : y.occurrences.last) : y.occurrences.last
          let single = x.values.count == 1 && !clock ? " " + valueText(x.values[0].value) : ""
          var difference = make("\(what)\(single) \(x.count)× in A, \(y.count)× in B", extraA, extraB, "\(x.count)", "\(y.count)")
          difference.everyA = x.occurrences.dropFirst(x.count > fewer ? fewer : x.occurrences.count).compactMap { a.place($0) }
          difference.everyB = y.occurrences.dropFirst(y.count > fewer ? fewer : y.occurrences.count).compactMap { b.place($0) }
          difference.placesA = x.count - fewer
          difference.placesB = y.count - fewer
          differences.append(difference)
        }
      case (nil, nil):
        break
      }
    }
    return differences
  }

  /// Up to this many distinct values on each side, both sets are listed in full.
  static let fewValues = 4

  /// "12", or "256+" past the values kept.
  func distinct(_ tally: ExchangeLedger.Tally) -> String {
    "\(tally.values.count)\(tally.valuesNotListed > 0 ? "+" : "")"
  }

  /// Whether both sides exchanged the same values as often.
  /// (Past `maximumValues`, the values listed first stand for the rest.)
  static func sameValues(_ x: ExchangeLedger.Tally, _ y: ExchangeLedger.Tally) -> Bool {
    Set(x.values.map(\.value)) == Set(y.values.map(\.value))
  }

  func verb(_ kind: ProcedureStep.Kind) -> String {
    switch kind {
    case .read: return "Read"
    case .writeCommand: return "Write Command"
    default: return "Write"
    }
  }

  func attributeName(_ key: ExchangeLedger.Key) -> String {
    if let group = key.group { return "Multiple (" + group.map(attributeName).joined(separator: ", ") + ")" }
    if let descriptor = key.descriptor {
      return key.characteristic.map { "\(name(descriptor)) of \(name($0))" } ?? name(descriptor)
    }
    if let characteristic = key.characteristic { return name(characteristic) }
    return key.handle.map { "handle \(Hex.prefixed(UInt64($0), width: 4))" } ?? "an unnamed attribute"
  }

  /// The distinct values, with their counts when there is more than one or they were many:
  /// `"4.1.7"`, `01 3C (2×), 01 78`, `87 %, 86 % and 5 other values`.
  func valuesText(_ tally: ExchangeLedger.Tally) -> String {
    let shown = 3
    var parts = tally.values.prefix(shown).map { value in
      valueText(value.value) + (tally.values.count > 1 && value.count > 1 ? " (\(value.count)×)" : "")
    }
    let more = tally.values.count - parts.count
    if more > 0 {
      parts.append("\(more) other value\(more == 1 ? "" : "s")\(tally.valuesNotListed > 0 ? " and more" : "")")
    } else if tally.valuesNotListed > 0 {
      parts.append("more values")
    }
    return Self.list(parts)
  }

  /// Some of a side's values, each with its count when the side had more than one value.
  func listed(_ values: [ExchangeLedger.ValueTally], of tally: ExchangeLedger.Tally) -> String {
    Self.list(values.map { value in valueText(value.value) + (tally.values.count > 1 && value.count > 1 ? " (\(value.count)×)" : "") })
  }

  /// `": 01"` after "only in A/B" when the values are few enough to say.
  func valuesSuffix(_ tally: ExchangeLedger.Tally) -> String {
    tally.values.count <= 3 && tally.valuesNotListed == 0 && tally.values.contains(where: { $0.value.length > 0 || $0.value.outcome != .ok }) ? ": " + valuesText(tally) : ""
  }

  /// One value: a string as quoted text, a decoded value in its words, else its bytes in hex;
  /// with how the exchange ended when it did not succeed.
  func valueText(_ value: ExchangedValue) -> String {
    var text: String
    if value.isText, let words = value.words {
      text = "\"\(Self.clipped(words))\""
    } else if let words = value.words {
      text = Self.clipped(words)
    } else if let ascii = Self.asciiText(value) {
      text = "\"\(Self.clipped(ascii))\""
    } else if value.length > 0 {
      text = value.prefix.map { Hex.string([$0]).uppercased() }.joined(separator: " ") + (value.length > value.prefix.count ? " … (\(value.length) bytes)" : "")
    } else {
      text = ""
    }
    switch value.outcome {
    case .ok: return text.isEmpty ? "nothing" : text
    default: return text.isEmpty ? outcomeText(value.outcome) : "\(text) → \(outcomeText(value.outcome))"
    }
  }

  /// Bytes that are printable ASCII with line ends (a UART's AT commands), as text with the
  /// line ends, quotes and backslashes escaped (as the Nordic UART decoder writes its text).
  static func asciiText(_ value: ExchangedValue) -> String? {
    guard value.length == value.prefix.count, value.prefix.count >= 2,
      value.prefix.allSatisfy({ (0x20...0x7E).contains($0) || $0 == 0x0D || $0 == 0x0A }),
      value.prefix.contains(where: { (0x41...0x7A).contains($0) })
    else { return nil }
    return NordicUART.Payload.escaped(String(decoding: value.prefix, as: UTF8.self))
  }

  static func clipped(_ words: String) -> String {
    words.count > 60 ? String(words.prefix(59)) + "…" : words
  }

  package func outcomeText(_ outcome: ProcedureStep.Outcome) -> String {
    switch outcome {
    case .ok: return "success"
    case .noAnswer: return "no answer"
    case .cancelled: return "cancelled"
    case .error(let code): return AssignedNumbers.attErrorName(code).map { "\($0)" } ?? "error 0x\(Hex.string([code]))"
    }
  }
}

