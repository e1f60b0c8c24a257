import BLECore
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
    #expect(first.diagnostics.contains { $0.message.contains("from the map test") })
    // Once: the next frame carries no note.
    #expect(Self.notification(&transcript, bpm: 73).diagnostics.isEmpty)
  }

  @Test func discoveryInTheCaptureNeedsNoMap() throws {
    var maps = GATTMapSet()
    maps.add(try Self.strapMap(address: Self.strap), source: .cache)
    var transcript = LinkTranscript(dissector: Dissector(maps: maps))
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
    #expect(unmapped.diagnostics.contains { $0.message.contains("2 known GATT tables differ") })
  }

  @Test func aDatabaseHashIdentifiesTheTableWhateverTheAddress() throws {
    let hash: [UInt8] = Array(0x10...0x1F)
    var maps = GATTMapSet()
    maps.add(try Self.strapMap(address: "11:22:33:44:55:66", hash: hash), source: .imported)
    var transcript = LinkTranscript(dissector: Dissector(maps: maps))
    _ = transcript.connect(handle: 0x0040, peer: "5A:00:00:00:00:01")  // a private address
    _ = transcript.att(Self.tx, [0x08, 0x01, 0x00, 0xFF, 0xFF, 0x2A, 0x2B])
    let response = transcript.att(Self.rx, [0x09, 0x12, 0x0D, 0x00] + hash)
    #expect(response.diagnostics.contains { $0.message.contains("Database Hash 101112131415161718191a1b1c1d1e1f is that of 11:22:33:44:55:66's table") })
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
}
