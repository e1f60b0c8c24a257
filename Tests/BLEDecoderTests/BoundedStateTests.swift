import BLECore
import BLERender
import BLETestSupport
import Testing

@testable import BLEDecoder

/// Per-connection and per-device state stays bounded on hostile captures, and stays right on
/// realistic ones (issue 7). Each limit is crossed here on purpose and the outcome checked.
@Suite struct BoundedStateTests {
  static let tx = Direction.hostToController, rx = Direction.controllerToHost

  /// Random inserts, removals and range removals against a plain sorted model.
  @Test func handleMapMatchesASortedModel() {
    var generator = SeededGenerator(seed: 0x4A4D)
    var map = HandleMap<Int>()
    var model: [UInt16: Int] = [:]
    for step in 0..<20_000 {
      // Handles cluster in a few buckets and spread over all of them, to cross bucket edges.
      let handle = Bool.random(using: &generator) ? UInt16.random(in: 0x00F0...0x0310, using: &generator) : UInt16.random(in: 0...0xFFFF, using: &generator)
      switch Int.random(in: 0..<10, using: &generator) {
      case 0..<6:
        map[handle] = step
        model[handle] = step
      case 6..<8:
        map.remove(handle)
        model[handle] = nil
      case 8:
        let end = handle.saturatingAdd(UInt16.random(in: 0...600, using: &generator))
        map.removeAll(in: handle...end)
        for key in model.keys where key >= handle && key <= end { model[key] = nil }
      default:
        let expected = model.keys.filter { $0 <= handle }.max()
        let found = map.atOrBefore(handle)
        #expect(found?.handle == expected, "step \(step): at or before \(handle)")
        #expect(found?.value == expected.flatMap { model[$0] })
      }
      #expect(map[handle] == model[handle])
    }
    #expect(map.count == model.count)
    #expect(map.entries.map(\.handle) == model.keys.sorted())
  }

  /// Characteristics declared in descending handle order (the worst order for a sorted array)
  /// still resolve, each to its own declaration.
  @Test func characteristicsDeclaredBackwardsResolve() {
    var database = GATTDatabase()
    database.addService(start: 0x0001, end: 0xFFFF, uuid: BluetoothUUID(uuid16: 0x180D), primary: true)
    // Declarations at 0x0010, 0x0013, … 0xFFEE (every third handle), added from the top down.
    for declaration in stride(from: UInt16(0xFFEE), through: 0x0010, by: -3) {
      database.addCharacteristic(declaration: declaration, valueHandle: declaration + 1, uuid: BluetoothUUID(uuid16: 0x2A37), properties: 0x10)
    }
    #expect(database.characteristics.count == (0xFFEE - 0x0010) / 3 + 1)
    #expect(database.resolve(0x0011)?.role == .characteristicValue)
    #expect(database.resolve(0x0012)?.role == .descriptor)
    #expect(database.resolve(0xFFEE)?.role == .characteristicDeclaration)
    #expect(database.resolve(0x000F)?.role == .characteristicValue)  // in the service, before any characteristic
    #expect(database.resolve(0x000F)?.characteristic == nil)
    // Service Changed over 0x1000–0x1FFF forgets exactly the declarations in that range: 0x1000
    // then reads as a descriptor of 0x0FFD, the last declaration before it.
    database.invalidate(0x1000, 0x1FFF)
    #expect(database.characteristics.atOrBefore(0x1FFF)?.handle == 0x0FFD)
    #expect(database.characteristics[0x2002] != nil)
    #expect(database.resolve(0x1000)?.role == .descriptor)
  }

  @Test func prepareQueueIsBoundedAndExecuteSaysWhatWasLeftOut() {
    var t = LinkTranscript()
    _ = t.connect(handle: 0x0040, peer: "D0:B1:ED:00:48:52")
    t.discoverStrap()
    var warned = 0
    let requests = PrepareQueue.maximumParts + 200
    for index in 0..<requests {
      let offset = UInt16(truncatingIfNeeded: index * 18)
      let frame = t.att(Self.tx, [0x16, 0x10, 0x00, UInt8(offset & 0xFF), UInt8(offset >> 8)] + [UInt8](repeating: 0x41, count: 18))
      warned += frame.diagnostics.filter { $0.kind == .attPrepareQueueFull }.count
    }
    #expect(warned == 1)
    let bearer = t.dissector.connections.entries[0].link.att.fixedBearer
    #expect(bearer.prepared[Self.tx].parts.count == PrepareQueue.maximumParts)
    #expect(bearer.prepared[Self.tx].dropped == 200)
    let execute = t.att(Self.tx, [0x18, 0x01])
    #expect(execute.diagnostics.contains { $0.message == "200 prepared parts beyond the queue's limit not included in the written values" })
    #expect(t.dissector.connections.entries[0].link.att.fixedBearer.prepared[Self.tx].isEmpty)
  }

  @Test func databasesAreBoundedAndTheLeastRecentlyUsedGoesFirst() {
    var t = LinkTranscript()
    // The strap on handle 0x0040 is discovered and keeps being used.
    _ = t.connect(handle: 0x0040, peer: "D0:B1:ED:00:48:52")
    t.discoverStrap()
    var forgotten = 0
    for index in 0..<(GATTDatabaseTable.maximumDatabases + 100) {
      let peer = BDAddr(rawValue: 0xC000_0000_0000 | UInt64(index)).description
      _ = t.connect(handle: 0x0041, peer: peer)
      // One notification each: the peer's database is created.
      let frame = t.att(handle: 0x0041, Self.rx, [0x1B, 0x10, 0x00, 0x48])
      forgotten += frame.diagnostics.filter { $0.message.hasPrefix("GATT table of") }.count
      _ = t.disconnect(handle: 0x0041)
      // The strap speaks now and then.
      if index % 512 == 0 { _ = t.att(Self.rx, [0x1B, 0x10, 0x00, 0x06, 0x48]) }
    }
    #expect(t.dissector.gatt.table.count == GATTDatabaseTable.maximumDatabases)
    #expect(forgotten >= 100)
    let strap = t.att(Self.rx, [0x1B, 0x10, 0x00, 0x06, 0x48])
    #expect(strap.summaryText.contains("Heart Rate Measurement: 72 bpm"), "\(strap.summaryText)")
  }

  @Test func openConnectionsAreBounded() {
    var t = LinkTranscript()
    var forgotten = 0
    // Data on every handle of several controllers, never a connect or disconnect event.
    for adapter in UInt16(0)..<2 {
      for handle in UInt16(0)..<0x0EFF {
        let frame = t.att(handle: handle, Self.rx, [0x1B, 0x10, 0x00, 0x01], adapter: adapter)
        forgotten += frame.diagnostics.filter { $0.kind == .hciConnectionForgotten }.count
      }
    }
    #expect(t.dissector.connections.entries.count == ConnectionTable.maximumOpen)
    // Handle 0x0EDC, never opened, is Qualcomm's debug records' (not a connection).
    #expect(forgotten == 2 * (0x0EFF - 1) - ConnectionTable.maximumOpen)
  }

  /// Enhanced credit-based connections opening EATT channels without end: bearers and channels
  /// of one link stay capped, and the newest bearer still carries ATT.
  @Test func eattBearersAndChannelsAreBounded() {
    var t = LinkTranscript()
    _ = t.connect(handle: 0x0040, peer: "D0:B1:ED:00:48:52")
    var identifier: UInt8 = 1
    for index in 0..<600 {
      let source = UInt16(0x0040 + index * 2)
      let destination = UInt16(0x0041 + index * 2)
      // L2CAP Credit Based Connection Request (0x17): PSM 0x0027, MTU 64, MPS 64, credits 10, one source CID.
      _ = t.l2cap(handle: 0x0040, Self.tx, cid: 0x0005, [0x17, identifier, 0x0A, 0x00, 0x27, 0x00, 0x40, 0x00, 0x40, 0x00, 0x0A, 0x00, UInt8(source & 0xFF), UInt8(source >> 8)])
      // Response (0x18): MTU 64, MPS 64, credits 10, result 0, one destination CID.
      _ = t.l2cap(handle: 0x0040, Self.rx, cid: 0x0005, [0x18, identifier, 0x0A, 0x00, 0x40, 0x00, 0x40, 0x00, 0x0A, 0x00, 0x00, 0x00, UInt8(destination & 0xFF), UInt8(destination >> 8)])
      identifier = identifier == 0xFF ? 1 : identifier + 1
      if index == 599 {
        // An ATT Read Request on the newest channel: SDU length 3, then the PDU.
        let frame = t.l2cap(handle: 0x0040, Self.tx, cid: destination, [0x03, 0x00, 0x0A, 0x03, 0x00])
        #expect(frame.att?.opcode == 0x0A, "\(String(describing: frame.att))")
      }
    }
    let link = t.dissector.connections.entries[0].link
    #expect(link.att.bearers.count == 64)
    #expect(link.l2cap.channels.channels.count <= 256)
  }

  /// Incomplete PDUs on many links: past the budget, those of other links are dropped.
  @Test func incompletePDUsAcrossLinksStayWithinTheBudget() {
    var t = LinkTranscript()
    var dropped = false
    for handle in UInt16(1)...600 {
      // A start fragment announcing a 65 535-byte PDU, then one 1000-byte continuation: never completed.
      _ = t.acl(handle: handle, Self.rx, pb: 2, [0xFF, 0xFF, 0x04, 0x00] + [UInt8](repeating: 0, count: 1000))
      for _ in 0..<40 {
        let frame = t.acl(handle: handle, Self.rx, pb: 1, [UInt8](repeating: 0, count: 1000))
        if frame.diagnostics.contains(where: { $0.kind == .l2capReassemblyMemoryDropped }) { dropped = true }
      }
    }
    #expect(dropped)
    var held = 0
    for entry in t.dissector.connections.entries { held += entry.link.l2cap.reassemblyBytes }
    #expect(held <= L2CAPState.reassemblyBudget + L2CAPState.reassemblyCheckInterval)
  }
}
