import BLECore
import Foundation
import Testing

@testable import BLEDecoder

/// Tables given beforehand and guesses, at the dissector: when a map applies, by address, by
/// layout, by Database Hash; that a capture's own discovery needs none; that guesses never
/// override a table and stay bounded.
@Suite struct GATTSeedingTests {
  static let tx = Direction.hostToController, rx = Direction.controllerToHost
  static let strap = "D0:B1:ED:00:48:52"

  /// The strap's table as a map (learned by a transcript's discovery).
  static func strapMap(address: String?, hash: [UInt8]? = nil) throws -> GATTMap {
    var transcript = LinkTranscript()
    _ = transcript.connect(handle: 0x0040, peer: strap)
    transcript.discoverStrap()
    let database = try #require(transcript.dissector.databases[.peer(BDAddr(strap)!)])
    return GATTMap(address: address.flatMap(BDAddr.init), databaseHash: hash, tree: database.attributeTree, origin: "test")
  }

  static func notification(_ transcript: inout LinkTranscript, bpm: UInt8) -> DissectedFrame {
    transcript.att(rx, [0x1B, 0x10, 0x00, 0x06, bpm])
  }

  @Test func aMapAppliesByAddressOnlyWhenThePDUNamesAValue() throws {
    var maps = GATTMapSet()
    maps.add(try Self.strapMap(address: Self.strap), source: .imported)
    var transcript = LinkTranscript(dissector: Dissector(maps: maps))
    _ = transcript.connect(handle: 0x0040, peer: Self.strap)
    // An MTU exchange names no handle: nothing seeded, no note.
    let mtu = transcript.att(Self.tx, [0x02, 0xF7, 0x00])
    #expect(mtu.diagnostics.isEmpty)
    let first = Self.notification(&transcript, bpm: 72)
    #expect(first.attributes.first?.meaning?.characteristic == BluetoothUUID(uuid16: 0x2A37))
    #expect(first.attributes.first?.meaning?.source == .imported)
    #expect(first.attributes.first?.value(as: HeartRateMeasurement.self)?.bpm == 72)
    #expect(first.diagnostics.contains { ($0.kind == .gattTableFromMap && $0.message.contains("from the map test")) })
    // Once: the next frame carries no note.
    #expect(Self.notification(&transcript, bpm: 73).diagnostics.isEmpty)
  }

  @Test func discoveryInTheCaptureNeedsNoMap() throws {
    var transcript = LinkTranscript(dissector: Dissector(cache: TestCache([try Self.strapMap(address: Self.strap)])))
    _ = transcript.connect(handle: 0x0040, peer: Self.strap)
    transcript.discoverStrap()
    let value = Self.notification(&transcript, bpm: 80)
    #expect(value.attributes.first?.meaning?.source == .capture)
    #expect(value.diagnostics.isEmpty)
  }

  @Test func anUnknownPeerIsMappedByLayoutOnlyWhenTheLayoutsAgree() throws {
    var one = GATTMapSet()
    one.add(try Self.strapMap(address: "11:22:33:44:55:66"), source: .imported)
    var transcript = LinkTranscript(dissector: Dissector(maps: one))
    // No connect event: the peer is unknown.
    let value = Self.notification(&transcript, bpm: 90)
    #expect(value.attributes.first?.meaning?.source == .layout)
    #expect(value.attributes.first?.value(as: HeartRateMeasurement.self)?.bpm == 90)
    // Two different layouts: none is applied (and the values are left to inference).
    var different = try Self.strapMap(address: "22:33:44:55:66:77")
    different.tree.services.removeLast()
    var two = one
    two.add(different, source: .imported)
    var other = LinkTranscript(dissector: Dissector(maps: two))
    let unmapped = Self.notification(&other, bpm: 91)
    #expect(unmapped.attributes.first?.meaning == nil)
    #expect(unmapped.diagnostics.contains { ($0.kind == .gattLayoutsAmbiguous && $0.message.contains("2 known GATT tables differ")) })
  }

  @Test func aDatabaseHashIdentifiesTheTableWhateverTheAddress() throws {
    let hash: [UInt8] = Array(0x10...0x1F)
    var maps = GATTMapSet()
    maps.add(try Self.strapMap(address: "11:22:33:44:55:66", hash: hash), source: .imported)
    var transcript = LinkTranscript(dissector: Dissector(maps: maps))
    _ = transcript.connect(handle: 0x0040, peer: "5A:00:00:00:00:01")  // a private address
    _ = transcript.att(Self.tx, [0x08, 0x01, 0x00, 0xFF, 0xFF, 0x2A, 0x2B])
    let response = transcript.att(Self.rx, [0x09, 0x12, 0x0D, 0x00] + hash)
    #expect(response.diagnostics.contains { ($0.kind == .gattTableByHash && $0.message.contains("Database Hash 101112131415161718191a1b1c1d1e1f is that of 11:22:33:44:55:66's table")) })
    let value = Self.notification(&transcript, bpm: 64)
    #expect(value.attributes.first?.meaning?.characteristic == BluetoothUUID(uuid16: 0x2A37))
    // Another hash: nothing.
    var stranger = LinkTranscript(dissector: Dissector(maps: maps))
    _ = stranger.connect(handle: 0x0040, peer: "5A:00:00:00:00:02")
    _ = stranger.att(Self.tx, [0x08, 0x01, 0x00, 0xFF, 0xFF, 0x2A, 0x2B])
    _ = stranger.att(Self.rx, [0x09, 0x12, 0x0D, 0x00] + Array(repeating: 0xEE, count: 16))
    #expect(stranger.att(Self.rx, [0x1B, 0x18, 0x00, 0x50]).attributes.first?.meaning == nil)
  }

  @Test func guessesNeedARunAndNeverOverrideATable() throws {
    var transcript = LinkTranscript()
    _ = transcript.connect(handle: 0x0040, peer: Self.strap)
    // One second apart, plausible: guessed at the third.
    var sources: [GATTSource?] = []
    for bpm in [70, 71, 72, 73] as [UInt8] {
      transcript.time += 999_000
      sources.append(Self.notification(&transcript, bpm: bpm).attributes.first?.meaning?.source)
    }
    #expect(sources == [nil, nil, .inferred, .inferred])
    // Too fast (1 ms apart): no run.
    var fast = LinkTranscript()
    _ = fast.connect(handle: 0x0040, peer: Self.strap)
    let meanings = (0..<5).map { _ in Self.notification(&fast, bpm: 70).attributes.first?.meaning }
    #expect(meanings.allSatisfy { $0 == nil })
    // With discovery: the table, never a guess.
    var known = LinkTranscript()
    _ = known.connect(handle: 0x0040, peer: Self.strap)
    known.discoverStrap()
    for _ in 0..<4 {
      known.time += 999_000
      #expect(Self.notification(&known, bpm: 70).attributes.first?.meaning?.source == .capture)
    }
  }

  @Test func guessesAreBounded() {
    var guesses = HandleGuesses()
    let value: [UInt8] = [0x06, 70]
    ByteView.pinning(value) { view in
      for handle in 1...1000 { _ = guesses.observe(UInt16(handle), value: view, operation: .notification, time: Int64(handle) * 1_000_000) }
    }
    #expect(guesses.observations.count == HandleGuesses.maximumHandles)
  }

  // MARK: - The cache: identities only, on trial

  /// The strap's table with Heart Rate Measurement declared as another characteristic (a
  /// poisoned cache entry: a fake discovery for the strap's address was cached).
  static func poisonedMap(address: String, as uuid: UInt16 = 0x2A35) throws -> GATTMap {
    var map = try strapMap(address: address)
    for service in map.tree.services.indices {
      for characteristic in map.tree.services[service].characteristics.indices
      where map.tree.services[service].characteristics[characteristic].uuid == BluetoothUUID(uuid16: 0x2A37) {
        map.tree.services[service].characteristics[characteristic].uuid = BluetoothUUID(uuid16: uuid)
      }
    }
    return map
  }

  @Test func theCacheAppliesOnlyToTheSameDevice() throws {
    let cache = TestCache([try Self.strapMap(address: "11:22:33:44:55:66")])
    // A peer whose address the capture never showed: never matched by layout against the cache.
    var unknown = LinkTranscript(dissector: Dissector(cache: cache))
    let unmapped = Self.notification(&unknown, bpm: 90)
    #expect(unmapped.attributes.first?.meaning == nil)
    #expect(!unmapped.diagnostics.contains { $0.layer == .gatt })
    // Another device: not its table.
    var other = LinkTranscript(dissector: Dissector(cache: cache))
    _ = other.connect(handle: 0x0040, peer: Self.strap)
    #expect(Self.notification(&other, bpm: 91).attributes.first?.meaning == nil)
    // The same device: its table, named.
    var same = LinkTranscript(dissector: Dissector(cache: cache))
    _ = same.connect(handle: 0x0040, peer: "11:22:33:44:55:66")
    let value = Self.notification(&same, bpm: 92)
    #expect(value.attributes.first?.meaning?.source == .cache)
    #expect(value.attributes.first?.value(as: HeartRateMeasurement.self)?.bpm == 92)
    #expect(value.diagnostics.contains { ($0.kind == .gattTableFromCache && $0.message.contains("from the cache (test at 2026-01-02T03:04:05Z, /cache/112233445566.json)")) })
    // Asked by address, for the peers whose address the capture showed.
    #expect(cache.asked == ["address D0:B1:ED:00:48:52", "address 11:22:33:44:55:66"])
  }

  @Test func aCachedTableTheValuesContradictIsDropped() throws {
    var transcript = LinkTranscript(dissector: Dissector(cache: TestCache([try Self.poisonedMap(address: Self.strap)])))
    _ = transcript.connect(handle: 0x0040, peer: Self.strap)
    // A CCCD write fits the poisoned table (its descriptors are right): still on trial.
    let write = transcript.att(Self.tx, [0x12, 0x11, 0x00, 0x01, 0x00])
    #expect(write.attributes.first?.meaning?.source == .cache)
    // A heart-rate value is no Blood Pressure Measurement: the table goes, the value is not
    // labelled by it, and inference takes over.
    let first = Self.notification(&transcript, bpm: 70)
    #expect(first.attributes.first?.meaning == nil)
    #expect(first.malformed == nil)
    #expect(first.diagnostics.contains { ($0.kind == .gattTableDropped && $0.message.contains("the cache's table (test) dropped: the value of 0x0010 (0646) is not a valid Blood Pressure Measurement")) })
    var sources: [GATTSource?] = []
    for bpm in [71, 72, 73] as [UInt8] {
      transcript.time += 999_000
      sources.append(Self.notification(&transcript, bpm: bpm).attributes.first?.meaning?.source)
    }
    #expect(sources == [nil, .inferred, .inferred])
    let database = try #require(transcript.dissector.databases[.peer(BDAddr(Self.strap)!)])
    #expect(database.provenance == nil)
    #expect(database.isEmpty)
  }

  @Test func aHandleOutsideTheCachedTableDropsIt() throws {
    var transcript = LinkTranscript(dissector: Dissector(cache: TestCache([try Self.strapMap(address: Self.strap)])))
    _ = transcript.connect(handle: 0x0040, peer: Self.strap)
    #expect(Self.notification(&transcript, bpm: 70).attributes.first?.meaning?.source == .cache)
    let outside = transcript.att(Self.rx, [0x1B, 0x40, 0x00, 0x01])
    #expect(outside.attributes.first?.meaning == nil)
    #expect(outside.diagnostics.contains { $0.message.contains("the capture uses handle 0x0040, which the table does not have") })
    #expect(Self.notification(&transcript, bpm: 71).attributes.first?.meaning?.source == nil)
  }

  @Test func aDifferentDatabaseHashOrServiceChangedDropsTheCachedTable() throws {
    let hash: [UInt8] = Array(0x10...0x1F)
    let cache = TestCache([try Self.strapMap(address: Self.strap, hash: hash)])
    var same = LinkTranscript(dissector: Dissector(cache: cache))
    _ = same.connect(handle: 0x0040, peer: Self.strap)
    #expect(Self.notification(&same, bpm: 70).attributes.first?.meaning?.source == .cache)
    _ = same.att(Self.tx, [0x08, 0x01, 0x00, 0xFF, 0xFF, 0x2A, 0x2B])
    #expect(same.att(Self.rx, [0x09, 0x12, 0x0D, 0x00] + hash).diagnostics.isEmpty)
    #expect(Self.notification(&same, bpm: 71).attributes.first?.meaning?.source == .cache)

    var changed = LinkTranscript(dissector: Dissector(cache: cache))
    _ = changed.connect(handle: 0x0040, peer: Self.strap)
    #expect(Self.notification(&changed, bpm: 70).attributes.first?.meaning?.source == .cache)
    _ = changed.att(Self.tx, [0x08, 0x01, 0x00, 0xFF, 0xFF, 0x2A, 0x2B])
    let response = changed.att(Self.rx, [0x09, 0x12, 0x0D, 0x00] + Array(repeating: 0xEE, count: 16))
    #expect(response.diagnostics.contains { ($0.kind == .gattTableDropped && $0.message.contains("dropped: the device reports Database Hash eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee, not the table's 101112131415161718191a1b1c1d1e1f")) })
    #expect(Self.notification(&changed, bpm: 71).attributes.first?.meaning == nil)

    // The strap's table with a Generic Attribute service holding Service Changed (value 0x0008).
    var withServiceChanged = try Self.strapMap(address: Self.strap)
    withServiceChanged.tree.services.insert(GATTServiceEntry(
      start: 0x0006, end: 0x0009, uuid: BluetoothUUID(uuid16: 0x1801), primary: true, learnedIn: 0, includes: [],
      characteristics: [GATTCharacteristicEntry(declarationHandle: 0x0007, valueHandle: 0x0008, uuid: BluetoothUUID(uuid16: 0x2A05), properties: 0x20, learnedIn: 0, descriptors: [])]),
      at: 0)
    var indicated = LinkTranscript(dissector: Dissector(cache: TestCache([withServiceChanged])))
    _ = indicated.connect(handle: 0x0040, peer: Self.strap)
    #expect(Self.notification(&indicated, bpm: 70).attributes.first?.meaning?.source == .cache)
    // Service Changed (value handle 0x0008 in the strap's table), range 0x0001–0xffff.
    let indication = indicated.att(Self.rx, [0x1D, 0x08, 0x00, 0x01, 0x00, 0xFF, 0xFF])
    #expect(indication.diagnostics.contains { ($0.kind == .gattTableDropped && $0.message.contains("dropped: the device indicated Service Changed")) })
    #expect(Self.notification(&indicated, bpm: 71).attributes.first?.meaning == nil)
  }

  @Test func aTrustedCachedTableSurvivesALaterBadValue() throws {
    var transcript = LinkTranscript(dissector: Dissector(cache: TestCache([try Self.strapMap(address: Self.strap)])))
    _ = transcript.connect(handle: 0x0040, peer: Self.strap)
    for bpm in 0..<GATTDatabase.trustedAfter { _ = Self.notification(&transcript, bpm: UInt8(60 + bpm % 100)) }
    // A truncated value after a long run that fit: malformed, the table stays.
    let bad = transcript.att(Self.rx, [0x1B, 0x10, 0x00, 0x01])
    #expect(bad.attributes.first?.meaning?.source == .cache)
    #expect(bad.malformed != nil)
  }

  @Test func layoutMatchingScalesWithConnectionsNotTables() throws {
    var transcript = LinkTranscript()
    _ = transcript.connect(handle: 0x0040, peer: Self.strap)
    transcript.discoverStrap()
    // Many connections whose peer is unknown (no connect event): each mapped by the one layout,
    // the learned table measured once.
    for handle in 0x0100...0x08CF as ClosedRange<UInt16> {
      let value = transcript.att(handle: handle, Self.rx, [0x1B, 0x10, 0x00, 0x06, 70])
      #expect(value.attributes.first?.meaning?.source == .layout)
    }
    #expect(transcript.dissector.gatt.table.layoutIndex.counts.count == 1)
    #expect(transcript.dissector.gatt.table.layoutIndex.changed.isEmpty)
    // A second device with another layout: the next unknown connection is left to inference.
    _ = transcript.connect(handle: 0x0041, peer: "11:22:33:44:55:66")
    _ = transcript.att(handle: 0x0041, Self.tx, [0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28])
    _ = transcript.att(handle: 0x0041, Self.rx, [0x11, 0x06, 0x01, 0x00, 0x05, 0x00, 0x0F, 0x18])
    let ambiguous = transcript.att(handle: 0x0900, Self.rx, [0x1B, 0x10, 0x00, 0x06, 70])
    #expect(ambiguous.attributes.first?.meaning == nil)
    #expect(ambiguous.diagnostics.contains { ($0.kind == .gattLayoutsAmbiguous && $0.message.contains("2 known GATT tables differ")) })
  }
}

/// A cache of tables by address and hash, recording what it was asked.
final class TestCache: GATTMapLookup, @unchecked Sendable {
  let maps: [GATTMap]
  private let lock = NSLock()
  private var questions: [String] = []
  var asked: [String] { lock.withLock { questions } }

  init(_ maps: [GATTMap]) {
    self.maps = maps.map { map in
      var cached = map
      cached.learned = "2026-01-02T03:04:05Z"
      cached.file = map.address.map { "/cache/" + $0.description.replacingOccurrences(of: ":", with: "") + ".json" }
      return cached
    }
  }

  func map(for address: BDAddr) -> GATTMap? {
    lock.withLock { questions.append("address \(address)") }
    return maps.first { $0.address == address }
  }

  func map(hash: [UInt8]) -> GATTMap? {
    lock.withLock { questions.append("hash") }
    return maps.first { $0.databaseHash == hash }
  }
}
