import BLECore
import BLEDecoder

/// Rules that compare what a client did with the characteristic's declaration (its
/// properties, its descriptors), answered once the capture's discovery is all known: a write
/// may come before the discovery that explains it (a reconnection that discovers late).
/// Only declarations this capture discovered count (`learnedIn` > 0), never a map's or the
/// cache's. What is noted is capped: the first of each kind, with a count.
struct TableChecks {
  struct Noted {
    var context: FrameContext
    var count: Int
  }
  struct WriteKey: Hashable {
    var server: GATTServerIdentity
    var handle: UInt16
    var opcode: UInt8
  }
  struct ConfigurationKey: Hashable {
    var server: GATTServerIdentity
    var handle: UInt16
    var bits: UInt16
  }
  var writes: [WriteKey: Noted] = [:]
  var configurations: [ConfigurationKey: Noted] = [:]
  var energy: [GATTServerIdentity: Noted] = [:]
  static let maximumNoted = 65_536

  mutating func noteWrite(server: GATTServerIdentity, handle: UInt16, opcode: UInt8, _ context: FrameContext) {
    Self.note(&writes, WriteKey(server: server, handle: handle, opcode: opcode), context)
  }

  mutating func noteConfiguration(server: GATTServerIdentity, handle: UInt16, bits: UInt16, _ context: FrameContext) {
    guard bits != 0 else { return }
    Self.note(&configurations, ConfigurationKey(server: server, handle: handle, bits: bits), context)
  }

  mutating func noteEnergy(server: GATTServerIdentity, _ context: FrameContext) {
    Self.note(&energy, server, context)
  }

  static func note<Key: Hashable>(_ table: inout [Key: Noted], _ key: Key, _ context: FrameContext) {
    if table[key] != nil {
      table[key]!.count += 1
    } else if table.count < maximumNoted {
      table[key] = Noted(context: context, count: 1)
    }
  }

  /// GATT-07, GATT-09 and HRS-06 against the tables the capture discovered.
  func finish(databases: [GATTServerIdentity: GATTDatabase], _ findings: inout FindingCollector) {
    var trees: [GATTServerIdentity: Declarations] = [:]
    func declarations(_ server: GATTServerIdentity) -> Declarations? {
      if let known = trees[server] { return known }
      guard let database = databases[server] else { return nil }
      let made = Declarations(database.attributeTree)
      trees[server] = made
      return made
    }
    for (key, noted) in writes.sorted(by: { $0.value.context.frame < $1.value.context.frame }) {
      guard let characteristic = declarations(key.server)?.byValue[key.handle] else { continue }
      let needed: (bit: UInt8, name: String, procedure: String)
      switch key.opcode {
      case 0x12: needed = (0x08, "Write", "Write Request")
      case 0x52: needed = (0x04, "Write Without Response", "Write Command")
      case 0xD2: needed = (0x40, "Authenticated Signed Writes", "Signed Write Command")
      default: continue
      }
      guard characteristic.properties & needed.bit == 0 else { continue }
      findings.add(.gatt09, noted.context, side: .client, frames: [characteristic.learnedIn],
        "\(needed.procedure) to \(CheckedLink.name(characteristic.uuid)), whose properties (\(Self.properties(characteristic.properties))) lack \(needed.name); declared at #\(characteristic.learnedIn)",
        repeats: noted.count)
    }
    for (key, noted) in configurations.sorted(by: { $0.value.context.frame < $1.value.context.frame }) {
      guard let characteristic = declarations(key.server)?.byConfiguration[key.handle] else { continue }
      var missing: [String] = []
      if key.bits & 0x1 != 0, characteristic.properties & 0x10 == 0 { missing.append("notifications (no Notify property)") }
      if key.bits & 0x2 != 0, characteristic.properties & 0x20 == 0 { missing.append("indications (no Indicate property)") }
      guard !missing.isEmpty else { continue }
      findings.add(.gatt07, noted.context, side: .client, frames: [characteristic.learnedIn],
        "the client enables \(missing.joined(separator: " and ")) of \(CheckedLink.name(characteristic.uuid)), declared at #\(characteristic.learnedIn)",
        repeats: noted.count)
    }
    for (server, noted) in energy.sorted(by: { $0.value.context.frame < $1.value.context.frame }) {
      guard let service = declarations(server)?.heartRateService, service.learnedIn > 0,
        service.characteristics.contains(where: { $0.uuid.uuid16 == 0x2A37 && $0.learnedIn > 0 }),
        !service.characteristics.contains(where: { $0.uuid.uuid16 == 0x2A39 })
      else { continue }
      findings.add(.hrs06, noted.context, side: .server, frames: [service.learnedIn],
        "Heart Rate Measurement carries Energy Expended, but the Heart Rate service discovered at #\(service.learnedIn) has no Heart Rate Control Point",
        assumption: "the capture's discovery listed every characteristic of the service", repeats: noted.count)
    }
  }

  static func properties(_ bits: UInt8) -> String {
    let names = GATTCharacteristicEntry.propertyNames(bits).map { "\($0)" }
    return names.isEmpty ? "none" : names.joined(separator: ", ")
  }

  /// A server's characteristics discovered in the capture, by value handle and by the handle
  /// of their Client Characteristic Configuration.
  struct Declarations {
    var byValue: [UInt16: GATTCharacteristicEntry] = [:]
    var byConfiguration: [UInt16: GATTCharacteristicEntry] = [:]
    var heartRateService: GATTServiceEntry?

    init(_ tree: GATTAttributeTree) {
      for service in tree.services {
        if service.uuid.uuid16 == 0x180D { heartRateService = service }
        for characteristic in service.characteristics where characteristic.learnedIn > 0 { add(characteristic) }
      }
      for characteristic in tree.characteristicsOutsideServices where characteristic.learnedIn > 0 { add(characteristic) }
    }

    mutating func add(_ characteristic: GATTCharacteristicEntry) {
      byValue[characteristic.valueHandle] = characteristic
      for descriptor in characteristic.descriptors where descriptor.uuid.uuid16 == 0x2902 && descriptor.learnedIn > 0 {
        byConfiguration[descriptor.handle] = characteristic
      }
    }
  }
}
