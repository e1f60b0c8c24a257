import Testing
import BLECore
@testable import BLEDecoder

@Suite struct L2CAPFixedChannelTests {
  /// The `cid` field's names: the registered channels', those only named, "dynamic" from 0x0040.
  @Test func channelNames() {
    let expected: [UInt16: String] = [
      0x0001: "BR/EDR signaling", 0x0002: "connectionless", 0x0004: "ATT", 0x0005: "LE signaling",
      0x0006: "SMP", 0x0007: "BR/EDR SMP",
    ]
    let table = L2CAPFixedChannels.byCID
    #expect(table.count == Int(L2CAPFixedChannels.dynamicStart))
    for cid in 0..<UInt16(table.count) {
      #expect(table[Int(cid)]?.name.description == expected[cid], "CID \(cid)")
    }
    #expect(L2CAPState.unfixedChannelName(0x0040)?.description == "dynamic")
    #expect(L2CAPState.unfixedChannelName(0x003F) == nil)
  }

  /// Each registered channel sits at its own CID with its decoder; those only named have none.
  @Test func registeredChannelsDecode() {
    for channel in L2CAPFixedChannels.registered {
      #expect(L2CAPFixedChannels.byCID[Int(channel.cid)]?.channel == channel)
    }
    for (cid, _) in L2CAPFixedChannels.namedOnly {
      #expect(L2CAPFixedChannels.byCID[Int(cid)]?.channel == nil)
    }
  }
}
