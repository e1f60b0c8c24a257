import BLECapture
import BLECore
import BLEDecoder
import BLEEngine
import Testing

@testable import BLEAnalysis

/// The comparison at the library level: what the capture's steps are, and that order does not
/// matter where it should not.
@Suite struct SessionDiffTests {
  static func side(_ name: String) throws -> DiffSide {
    var options = FrameStream.Options()
    options.threading = .one
    var consumer = DiffConsumer()
    FrameStream(source: try CaptureFile.open(path: capturePath(name)), options: options).run(into: &consumer)
    return consumer.side
  }

  @Test func devicesAreMatchedWhateverTheirOrder() throws {
    let side = try Self.side("two_straps.btsnoop")
    #expect(side.summary.devices.filter { $0.connectionCount > 0 }.count == 2)
    var reordered = side
    reordered.summary.devices.reverse()
    reordered.summary.connections.reverse()
    #expect(SessionDiff().compare(side, reordered).isEmpty)
    // One side without connections: each connected device is only in A.
    var none = side
    none.summary.devices.removeAll()
    none.summary.connections.removeAll()
    let differences = SessionDiff().compare(side, none)
    #expect(differences.count == 2 && differences.allSatisfy { $0.kind == .devices && $0.text.hasSuffix("is only in A") })
  }

  @Test func aDeviceUnderANewAddressIsStillMatched() throws {
    let side = try Self.side("hr_strap_session.btsnoop")
    let old = try #require(side.summary.devices.first { $0.connectionCount > 0 })
    let new = try #require(BDAddr("5A:11:22:33:44:55"))
    var moved = side
    for index in moved.summary.devices.indices where moved.summary.devices[index].address == old.address {
      moved.summary.devices[index].address = new
      moved.summary.devices[index].deviceName = nil
      moved.summary.devices[index].advertisedName = nil
    }
    for index in moved.summary.connections.indices where moved.summary.connections[index].peer == old.address { moved.summary.connections[index].peer = new }
    moved.tables[new] = moved.tables.removeValue(forKey: old.address)
    // An advertiser that never connected does not count; the strap is matched despite its new address.
    #expect(SessionDiff().compare(side, moved).filter { $0.kind == .devices }.isEmpty)
  }

  @Test func stepsAreTheClientsProcedure() throws {
    let side = try Self.side("reconnect_cached.btsnoop")
    #expect(side.operations.connections.count == 2)
    let second = side.operations.connections[1].steps.map { "\($0.kind.rawValue) \($0.uuid?.description ?? "-") \($0.detail?.description ?? "")" }
    // The reconnection without discovery: MTU, the HRM subscription, a battery read, the control point write.
    #expect(second == ["exchange_mtu - ", "subscribe 2a37 notify", "read 2a19 ", "write 2a39 "])
    #expect(side.operations.connections[1].steps.allSatisfy { $0.outcome == .ok })
  }
}

extension SessionDiffTests {
  /// What the client read and wrote, as captures/README.md says long_values.btsnoop holds it:
  /// a long read counted once with its whole value, a prepared write with the executed value, a
  /// cancelled queue as cancelled, Read Multiple (Variable) as the set read together.
  @Test func exchangesCarryWholeValues() throws {
    let side = try Self.side("long_values.btsnoop")
    let connection = try #require(side.operations.connections.first)
    #expect(side.operations.connections.count == 1 && connection.localIsClient && connection.centralIsClient)
    func tally(_ kind: ProcedureStep.Kind, _ uuid: String) throws -> ExchangeLedger.Tally {
      let key = try #require(connection.exchanges.keys.first { $0.kind == kind && $0.characteristic?.description == uuid }, "\(kind) \(uuid)")
      return try #require(connection.exchanges.tally(for: key))
    }
    let manufacturer = try tally(.read, "2a29")
    let name = Array("bledissect labs long manufacturer name: ".utf8) + Array(String(repeating: "0123456789", count: 8).utf8)
    #expect(manufacturer.count == 2 && manufacturer.values.count == 1)
    #expect(manufacturer.values.first?.value.length == 120 && manufacturer.values.first?.value.prefix == Array(name.prefix(64)))
    #expect(manufacturer.values.first?.value.words == String(decoding: name, as: UTF8.self))
    let written = try tally(.write, "b1ed0002-5ca7-4e5a-9d1e-0000000000b1")
    #expect(written.values.map(\.value.outcome) == [.ok, .cancelled])
    #expect(written.values.first?.value.prefix == Array("prepared write, fifty bytes: ABCDEFGHIJKLMNOPQRSTU".utf8))
    let readBack = try tally(.read, "b1ed0002-5ca7-4e5a-9d1e-0000000000b1")
    #expect(readBack.count == 2 && readBack.values.count == 1 && readBack.values.first?.value.length == 50)
    let groups = connection.exchanges.keys.filter { $0.group != nil }.compactMap { connection.exchanges.tally(for: $0)?.values.first?.value.prefix }
    #expect(groups == [[0x57, 0x34, 0x12, 0x4C, 0x56, 0x2D, 0x31], Array("LV-1".utf8) + Array("2.0.1".utf8) + [0x57]])
  }

  /// The strap's own capture of a session: its requests were the phone's (received), the
  /// table the local one, and the summary does not give the phone the strap's name.
  @Test func aPeripheralsCaptureIsTheServersSide() throws {
    let side = try Self.side("long_values_peripheral.btsnoop")
    let connection = try #require(side.operations.connections.first)
    #expect(side.operations.connections.count == 1 && !connection.localIsClient && connection.localRole == .peripheral && connection.centralIsClient)
    let phone = try #require(connection.label.peer)
    #expect(side.tables[phone]?.services.contains { $0.uuid.description == "b1ed0001-5ca7-4e5a-9d1e-0000000000b1" } == true)
    #expect(side.summary.devices.first { $0.address == phone }?.name == nil)
    // Both ends compare equal but for what their controllers reported as the opening
    // parameters (Bumble's emulated peripheral reports its defaults, 12.5 ms and 100 ms).
    let central = try Self.side("long_values.btsnoop")
    let differences = SessionDiff().compare(central, side)
    #expect(differences.map(\.text) == ["connection interval 15 ms in A, 12.5 ms in B", "supervision timeout 720 ms in A, 100 ms in B"])
  }
}

extension SessionDiffTests {
  /// A table that declares one UUID many times is the same table as itself (the k-th copy
  /// matches the k-th copy, not the first), and one copy missing is one difference.
  @Test func repeatedUUIDsMatchCopyForCopy() throws {
    let service = BluetoothUUID(uuid16: 0xFFF0)
    func tree(copies: Int) -> GATTAttributeTree {
      var characteristics: [GATTCharacteristicEntry] = []
      for k in 0..<copies {
        let declaration = UInt16(2 + 2 * k)
        let uuid = BluetoothUUID(uuid16: 0x2A00 + UInt16(k % 3))
        characteristics.append(
          GATTCharacteristicEntry(declarationHandle: declaration, valueHandle: declaration + 1, uuid: uuid, properties: 0x12, learnedIn: 1, descriptors: []))
      }
      return GATTAttributeTree(
        services: [GATTServiceEntry(start: 1, end: UInt16(2 + 2 * copies), uuid: service, primary: true, learnedIn: 1, includes: [], characteristics: characteristics)],
        characteristicsOutsideServices: [], otherHandles: [])
    }
    let side = try Self.side("hr_strap_session.btsnoop")
    let strap = try #require(side.summary.devices.first { $0.connectionCount > 0 })
    let pair = SessionDiff.DevicePair(a: strap, b: strap, subject: "strap")
    let keys = Array(SessionDiff.characteristicKeys(tree(copies: 300)).joined())
    #expect(Set(keys.map(\.0)).count == 300)
    let byKey = Dictionary(uniqueKeysWithValues: keys)
    #expect(SessionDiff().handleShift(keys, byKey) == nil)
    // (Was "the same GATT table, its handles from 0x0009 on moved by -6 in B".)
    #expect(SessionDiff().compareTables(tree(copies: 300), tree(copies: 300), side, side, pair).isEmpty)
  }
}

extension SessionDiffTests {
  /// Two long values alike in their first 64 bytes (all that is kept to show) and their length
  /// still differ when a later byte does.
  @Test func longValuesDifferPastTheKeptBytes() {
    let first = [UInt8](repeating: 0x41, count: 120)
    var second = first
    second[100] = 0x42
    let a = ExchangedValue(bytes: first, outcome: .ok, words: nil)
    let b = ExchangedValue(bytes: second, outcome: .ok, words: nil)
    #expect(a.prefix == b.prefix && a.length == b.length)
    #expect(a != b && Set([a, b]).count == 2)
    #expect(a == ExchangedValue(bytes: first[...], outcome: .ok, words: "words are not compared"))
  }

  /// Latencies are compared only for the same procedure asked by the same end and timed the
  /// same way, with a median on each side.
  @Test func latenciesCompareLikeWithLike() throws {
    let side = try Self.side("hr_strap_session.btsnoop")
    let write = LatencyTimings.Key(opcode: 0x12, centralAsked: true, clock: .askingHost)
    let timing = try #require(side.operations.latencies.timings[write])
    #expect(timing.sketch.count == 3)
    var slow = LatencyTimings.Timing()
    // The sketch answers within 1 %: 110 ms reads 110.1.
    for milliseconds in [100.0, 110, 120] { slow.sketch.add(milliseconds * 1000) }
    var slower = side
    slower.operations.latencies.timings[write] = slow
    let differences = SessionDiff().compare(side, slower)
    #expect(differences.map(\.text) == [
      "Write Request from the central answered in 0.2 ms (median of 3) in A, 110.1 ms (median of 3) in B, both timed at the asking host (HCI: the round trip)"
    ])
    #expect(SessionDiff().notes(side, slower).isEmpty)
    // Two values carry no median: not compared.
    var two = LatencyTimings.Timing()
    for milliseconds in [100.0, 120] { two.sketch.add(milliseconds * 1000) }
    var fewer = side
    fewer.operations.latencies.timings[write] = two
    #expect(SessionDiff().compare(side, fewer).isEmpty)
    // The same numbers as the peripheral's requests, or timed on the air: another measure.
    for key in [LatencyTimings.Key(opcode: 0x12, centralAsked: false, clock: .askingHost), LatencyTimings.Key(opcode: 0x12, centralAsked: true, clock: .air)] {
      var other = side
      other.operations.latencies.timings[write] = nil
      other.operations.latencies.timings[key] = slow
      #expect(SessionDiff().compare(side, other).isEmpty, "\(key)")
    }
    // Every group of B on the air: a note, no difference.
    var sniffed = side
    sniffed.operations.latencies.timings = Dictionary(uniqueKeysWithValues: side.operations.latencies.timings.map { key, value in
      (LatencyTimings.Key(opcode: key.opcode, centralAsked: key.centralAsked, clock: .air), value)
    })
    #expect(SessionDiff().compare(side, sniffed).isEmpty)
    #expect(SessionDiff().notes(side, sniffed).count == 1)
  }
}

