import BLECore
import BLERender
import Testing

@testable import BLEDecoder

/// Link-layer packets sniffed over the air (records of kind `.airPacket`), built from the
/// layouts of Core Vol 6 Part B §2.
@Suite struct AirPacketTests {
  /// A record: the sniffer's header, then access address, PDU and a CRC.
  static func record(_ header: AirPacketHeader, accessAddress: UInt32, _ pdu: [UInt8]) -> CaptureRecord {
    var bytes: [UInt8] = []
    header.append(to: &bytes)
    bytes += [UInt8(accessAddress & 0xFF), UInt8((accessAddress >> 8) & 0xFF), UInt8((accessAddress >> 16) & 0xFF), UInt8(accessAddress >> 24)]
    bytes += pdu + [0x12, 0x34, 0x56]
    return CaptureRecord(timestamp: 0, direction: nil, kind: .airPacket, bytes: bytes)
  }

  static let advertising = AirFact.advertisingAccessAddress
  static let sniffed = AirPacketHeader(channel: 37, signal: -58, phy: .le1M, crc: .valid)

  func dissect(_ records: [CaptureRecord]) -> [DissectedFrame] {
    var dissector = Dissector()
    return records.enumerated().map { index, record in
      var frame = DissectedFrame()
      dissector.dissect(record, number: index + 1, into: &frame)
      return frame
    }
  }

  @Test func advertisingIndicationWithItsName() throws {
    // ADV_IND, TxAdd random, AdvA C0:11:22:33:44:55 (sent low byte first), Flags, name "Strap".
    let pdu: [UInt8] = [0x40, 16, 0x55, 0x44, 0x33, 0x22, 0x11, 0xC0, 0x02, 0x01, 0x06, 0x06, 0x09] + Array("Strap".utf8)
    let frame = try #require(dissect([Self.record(Self.sniffed, accessAddress: Self.advertising, pdu)]).first)
    #expect(frame.malformed == nil)
    #expect(frame.titleText == "ADV_IND")
    #expect(frame.summaryText == "C0:11:22:33:44:55 \"Strap\"")
    #expect(frame.fields.uint("air.channel") == 37)
    #expect(frame.fields.uint("ll.pdu_type") == 0)
    #expect(frame.air?.header.signal == -58)
    guard case .advertisement(let fact)? = frame.linkEvents.first else {
      Issue.record("no advertisement fact")
      return
    }
    #expect(fact.name == "Strap" && fact.addressType == .randomDevice && fact.rssi == -58)
  }

  @Test func connectIndicationAndTheLinkItOpens() throws {
    // CONNECT_IND: InitA (public), AdvA (random), LLData: AA 0x50654C8B, CRCInit, WinSize 2,
    // WinOffset 0, interval 24 (30 ms), latency 0, timeout 72 (720 ms), all 37 data channels, hop 7, SCA 5.
    let llData: [UInt8] = [0x8B, 0x4C, 0x65, 0x50, 0xAA, 0xBB, 0xCC, 0x02, 0x00, 0x00, 0x18, 0x00, 0x00, 0x00, 0x48, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0x1F, 0xA7]
    let pdu: [UInt8] = [0x85, 34, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x55, 0x44, 0x33, 0x22, 0x11, 0xC0] + llData
    // LL_VERSION_IND from the central on the new link: Bluetooth 5.0 (9), company 0x0059, subversion 0x1234.
    let version = Self.record(AirPacketHeader(channel: 3, fromCentral: true), accessAddress: 0x5065_4C8B, [0x03, 0x06, 0x0C, 0x09, 0x59, 0x00, 0x34, 0x12])
    let frames = dissect([Self.record(Self.sniffed, accessAddress: Self.advertising, pdu), version])
    #expect(frames[0].titleText == "CONNECT_IND")
    #expect(frames[0].summaryText == "06:05:04:03:02:01 → C0:11:22:33:44:55, access address 0x50654c8b, interval 30.00 ms")
    #expect(frames[0].fields.uint("ll.connection.used_channels") == 37)
    #expect(frames[0].fields.uint("ll.connection.hop") == 7)
    #expect(frames[1].titleText == "LL_VERSION_IND")
    #expect(frames[1].summaryText.hasPrefix("Bluetooth 5.0, "))
    #expect(frames[1].summaryText.hasSuffix(", subversion 0x1234"))
    #expect(frames[1].fields.word("air.direction") == "central → peripheral")
  }

  @Test func payloadsAfterEncryptionStartsAreNotDecodedAsPlainText() throws {
    let link: UInt32 = 0x1234_5678
    let startRequest = Self.record(Self.sniffed, accessAddress: link, [0x03, 0x01, 0x05])
    // Looks like LL_TERMINATE_IND, but it comes after encryption started: 1 + 1 bytes and a MIC.
    let encrypted = Self.record(Self.sniffed, accessAddress: link, [0x03, 0x06, 0x02, 0x13, 0xDE, 0xAD, 0xBE, 0xEF])
    // The central's next packet: a new one, so its SN flips.
    let empty = Self.record(Self.sniffed, accessAddress: link, [0x09, 0x00])
    let frames = dissect([startRequest, encrypted, empty])
    #expect(frames[0].titleText == "LL_START_ENC_REQ")
    #expect(frames[1].titleText == "LL Control" && frames[1].summaryText == "6 bytes, encrypted")
    #expect(frames[1].fields.uint("ll.mic") == 0xEFBE_ADDE)
    #expect(frames[2].titleText == "Empty PDU" && frames[2].summaryText.isEmpty)
    // An empty PDU is no L2CAP piece: nothing dropped, nothing said.
    #expect(frames[2].diagnostics.isEmpty && frames[2].fields.lookup("ll.data") == nil)
  }

  @Test func l2capFragmentsReassembleIntoATTAndRetransmissionsAreNotDecodedTwice() throws {
    let link: UInt32 = 0x5065_4C8B
    let llData: [UInt8] = [0x8B, 0x4C, 0x65, 0x50, 0xAA, 0xBB, 0xCC, 0x02, 0x00, 0x00, 0x18, 0x00, 0x00, 0x00, 0x48, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0x1F, 0xA7]
    let connect = Self.record(Self.sniffed, accessAddress: Self.advertising, [0x85, 34, 1, 2, 3, 4, 5, 6, 0x55, 0x44, 0x33, 0x22, 0x11, 0xC0] + llData)
    // A Handle Value Notification on handle 0x0010 with 6 bytes: L2CAP length 7, CID 4, in two
    // pieces of 7 and 4 bytes from the peripheral; the second sent twice (same SN).
    let pdu: [UInt8] = [0x07, 0x00, 0x04, 0x00, 0x1B, 0x10, 0x00, 0x00, 0x48, 0x01, 0x02]
    let peripheral = AirPacketHeader(channel: 5, fromCentral: false)
    let start = Self.record(peripheral, accessAddress: link, [0x02 | 0x08, 7] + pdu[..<7])
    let rest = Self.record(peripheral, accessAddress: link, [0x01, 4] + pdu[7...])
    let frames = dissect([connect, start, rest, rest])
    #expect(frames[0].connection?.handle == 1 && frames[0].connection?.peer == BDAddr("C0:11:22:33:44:55"))
    #expect(frames[1].summaryText == "start, 7 bytes (L2CAP fragment: 7 of 11 bytes)")
    #expect(frames[2].titleText == "Handle Value Notification")
    #expect(frames[2].att?.opcode == 0x1B && frames[2].attributes.first?.handle == 0x0010)
    #expect(frames[2].fields.text("att.value") == "00480102")
    #expect(frames[2].connection?.handle == 1)
    #expect(frames[3].att == nil && frames[3].summaryText == "continuation, 4 bytes, retransmission")
  }

  /// The link's story as HCI would tell it to the central's host: the peripheral's version,
  /// the data length both sides allow, a PHY update at its instant (events counted from the
  /// packets' times: interval 24 = 30 ms).
  @Test func linkControlGivesTheLinkEventsHCIWould() throws {
    let link: UInt32 = 0x5065_4C8B
    let llData: [UInt8] = [0x8B, 0x4C, 0x65, 0x50, 0xAA, 0xBB, 0xCC, 0x02, 0x00, 0x00, 0x18, 0x00, 0x00, 0x00, 0x48, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0x1F, 0xA7]
    var records = [Self.record(Self.sniffed, accessAddress: Self.advertising, [0x85, 34, 1, 2, 3, 4, 5, 6, 0x55, 0x44, 0x33, 0x22, 0x11, 0xC0] + llData)]
    var sn = [0, 0]
    /// A packet of connection event `event` (the central's opens it, the peripheral's 150 µs on).
    func packet(_ fromCentral: Bool, event: Int64, llid: UInt8, _ payload: [UInt8]) {
      let side = fromCentral ? 0 : 1
      let header = llid | UInt8(sn[side] << 3) | UInt8((1 - sn[1 - side]) << 2)
      sn[side] ^= 1
      var record = Self.record(AirPacketHeader(channel: 3, fromCentral: fromCentral), accessAddress: link, [header, UInt8(payload.count)] + payload)
      record.timestamp = 1_250 + event * 30_000 + (fromCentral ? 0 : 150)
      records.append(record)
    }
    // Event 0: LL_LENGTH_REQ (RX 251 / 2120 µs, TX 251 / 2120 µs); LL_LENGTH_RSP (RX 100 / 900, TX 200 / 1700).
    packet(true, event: 0, llid: 3, [0x14, 0xFB, 0x00, 0x48, 0x08, 0xFB, 0x00, 0x48, 0x08])
    packet(false, event: 0, llid: 3, [0x15, 0x64, 0x00, 0x84, 0x03, 0xC8, 0x00, 0xA4, 0x06])
    // Event 1: LL_PHY_UPDATE_IND to 2M both ways at instant 4; the peripheral's LL_VERSION_IND.
    packet(true, event: 1, llid: 3, [0x18, 0x02, 0x02, 0x04, 0x00])
    packet(false, event: 1, llid: 3, [0x0C, 0x0B, 0x59, 0x00, 0x01, 0x00])
    for event in Int64(2)...5 {
      packet(true, event: event, llid: 1, [])
      packet(false, event: event, llid: 1, [])
    }
    let frames = dissect(records)
    #expect(Array(frames[2].linkEvents) == [LinkEvent.dataLengthChanged(handle: 1, maxTransmitOctets: 100, maxTransmitTime: 900, maxReceiveOctets: 200, maxReceiveTime: 1700)])
    #expect(frames[3].linkEvents.isEmpty)
    #expect(Array(frames[4].linkEvents) == [LinkEvent.remoteVersion(status: 0, handle: 1, version: 0x0B, manufacturer: 0x0059, subversion: 1)])
    // Events 2 and 3 under the old PHY; event 4's first packet brings the new one.
    let updated = frames.indices.filter { frames[$0].linkEvents.contains(.phyUpdated(status: 0, handle: 1, transmit: 2, receive: 2)) }
    #expect(updated == [9])
  }

  @Test func everyPrefixIsAValueNotATrap() {
    let pdu: [UInt8] = [0x40, 16, 0x55, 0x44, 0x33, 0x22, 0x11, 0xC0, 0x02, 0x01, 0x06, 0x06, 0x09] + Array("Strap".utf8)
    let whole = Self.record(Self.sniffed, accessAddress: Self.advertising, pdu).bytes
    for count in 0..<whole.count - 3 {
      let frame = dissect([CaptureRecord(timestamp: 0, direction: nil, kind: .airPacket, bytes: Array(whole[..<count]))])[0]
      #expect(frame.malformed != nil, "\(count) bytes")
      #expect(frame.fields.depth == 0)
    }
  }
}
