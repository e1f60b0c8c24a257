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
    let consumer = DiffConsumer()
    FrameStream(source: try CaptureFile.open(path: capturePath(name)), options: options).run(into: consumer)
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
