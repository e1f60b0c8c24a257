import Foundation
import Testing
import BLECore
import BLETestSupport
@testable import BLECapture

/// The air-sniffer link types (251, 256, 272, 157, 192): packets built here by their layouts
/// (docs/formats.md), read, cut at every byte, and written back.
@Suite struct AirLinkTypeTests {
  struct Sample: Sendable, CustomStringConvertible {
    var name: String
    var linkType: PcapLinkType
    var packet: [UInt8]
    /// The record expected: an air packet with this header and the link-layer packet after
    /// `headerSize` bytes; nil header: a record of kind `.other(otherCode)` holding the packet.
    var header: AirPacketHeader?
    var headerSize: Int
    var otherCode: UInt16 = 0xFFFF
    /// Whether reading what the writer makes of the record gives the record again (false where
    /// the format has a value that reads as not known and is written as its default).
    var exact = true
    var description: String { "\(linkType.value) \(name)" }
  }

  static let adv = CaptureFixtures.advertisingPacket
  static let data = CaptureFixtures.dataPacket
  /// An ADV_NONCONN_IND on LE Coded: the coding indicator (0, S=8) after the access address.
  static let coded = hexBytes("d6be898e 00 4206 010203040506 55aa33")

  static func le16(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }

  static let samples: [Sample] = {
    var samples: [Sample] = [
      Sample(name: "no header", linkType: .bluetoothLELL, packet: data, header: AirPacketHeader(), headerSize: 0),
      // 256: RF channel 0 (2402 MHz, index 37), −52 dBm, flags 0x0C13: de-whitened, signal
      // valid, reference address valid, CRC checked and valid; PDU type 0, LE 1M.
      Sample(
        name: "advertising", linkType: .bluetoothLELLWithPHDR, packet: hexBytes("00 cc 00 00 d6be898e 130c") + adv,
        header: AirPacketHeader(channel: 37, signal: -52, phy: .le1M, crc: .valid), headerSize: 10),
      // RF 13 (index 11), −60 dBm, flags 0x750B: de-whitened, signal valid, decrypted, PDU
      // type 2 (data from the central), CRC checked and failed, MIC checked and valid, LE 2M.
      Sample(
        name: "data from the central", linkType: .bluetoothLELLWithPHDR, packet: hexBytes("0d c4 a0 03 00000000 0b75") + data,
        header: AirPacketHeader(channel: 11, signal: -60, phy: .le2M, crc: .invalid, fromCentral: true, mic: .valid, decryptedBySniffer: true),
        headerSize: 10),
      // RF 38 (index 36), signal not valid, flags 0x8D81: PDU type 3 (from the peripheral),
      // CRC checked and valid, LE Coded.
      Sample(
        name: "coded from the peripheral", linkType: .bluetoothLELLWithPHDR, packet: hexBytes("26 10 00 00 00000000 818d") + coded,
        header: AirPacketHeader(channel: 36, phy: .leCoded, crc: .valid, fromCentral: false), headerSize: 10),
      // RF 39, flags 0xF081: PDU type 1 (auxiliary advertising, so 0x3000 is its type, not the
      // MIC), PHY 3 (reserved: not known, written back as LE 1M).
      Sample(
        name: "auxiliary, reserved PHY", linkType: .bluetoothLELLWithPHDR, packet: hexBytes("27 00 00 00 00000000 81f0") + adv,
        header: AirPacketHeader(channel: 39), headerSize: 10, exact: false),
      // RF 40 (no channel), flags 0x0201: PDU type 4 (isochronous, from the central).
      Sample(
        name: "isochronous, no channel", linkType: .bluetoothLELLWithPHDR, packet: hexBytes("28 00 00 00 00000000 0102") + data,
        header: AirPacketHeader(phy: .le1M, fromCentral: true), headerSize: 10),
      // PPI: version 0, 24 bytes, link type 251; Ubertooth's field: 2426 MHz (index 38), RSSI
      // most −24 (−78 dBm), least −36, mean −18, 60 samples.
      Sample(
        name: "Ubertooth field, 251", linkType: .ppi,
        packet: hexBytes("00 00 1800 fb000000 3675 0c00 00 7a09 00 6b36e300 e8 dc ee 3c") + adv,
        header: AirPacketHeader(channel: 38, signal: -78), headerSize: 24),
      // As Ubertooth wrote in 2013: link type 147 with its field, 2402 MHz (index 37).
      Sample(
        name: "Ubertooth field, 147", linkType: .ppi, packet: hexBytes("00 00 1800 93000000 3675 0c00 00 6209 00 6b36e300 e8 dc ee 3c") + adv,
        header: AirPacketHeader(channel: 37, signal: -78), headerSize: 24),
      // Aligned fields (flag 0x01): a 1-byte field padded to 4, then Ubertooth's, 2464 MHz
      // (RF 31, index 29), no RSSI samples.
      Sample(
        name: "aligned fields", linkType: .ppi,
        packet: hexBytes("00 01 2000 fb000000 0100 0100 aa 000000 3675 0c00 00 a009 00 00000000 d0 d0 d0 00") + data,
        header: AirPacketHeader(channel: 29), headerSize: 32),
      Sample(
        name: "251 without fields", linkType: .ppi, packet: hexBytes("00 00 0800 fb000000") + data, header: AirPacketHeader(), headerSize: 8),
      Sample(name: "147 without Ubertooth's field", linkType: .ppi, packet: hexBytes("00 00 0800 93000000") + adv, headerSize: 8, otherCode: 147),
      Sample(name: "802.11 inside", linkType: .ppi, packet: hexBytes("00 00 0800 69000000") + adv, headerSize: 8, otherCode: 105),
    ]
    for linkType in [PcapLinkType.nordicBLE, .nordicBLELegacy] {
      samples += [
        // Version 0: marker BE EF, id 6, counter 1, 2 unused, payload length; flags 0x03 (CRC
        // OK; the direction bit means nothing for advertising), index 37, RSSI 60.
        Sample(
          name: "version 0", linkType: linkType, packet: hexBytes("beef 06 0100 0000") + [UInt8(9 + adv.count)] + hexBytes("03 25 3c 0000 10000000") + adv,
          header: AirPacketHeader(channel: 37, signal: -60, phy: .le1M, crc: .valid), headerSize: 17),
        // Version 1: board 7, header length 6, payload length, version, counter 2, id 6; event
        // header: flags 0x0F (CRC OK, from the central, encrypted, MIC OK), index 11, RSSI 45,
        // event counter 0x1234, 0 µs.
        Sample(
          name: "version 1 data", linkType: linkType, packet: [7, 6, UInt8(10 + data.count), 1, 2, 0, 6] + hexBytes("0a 0f 0b 2d 3412 00000000") + data,
          header: AirPacketHeader(
            channel: 11, signal: -45, phy: .le1M, crc: .valid, fromCentral: true, mic: .valid, decryptedBySniffer: true, eventCounter: 0x1234),
          headerSize: 17),
        // Version 2 as SweynTooth wrote it: board 75, id 0, everything 0 but flags 0x01.
        Sample(
          name: "version 2, id 0", linkType: linkType, packet: [75] + le16(10 + data.count) + [2, 0, 0, 0] + hexBytes("0a 01 00 00 0000 00000000") + data,
          header: AirPacketHeader(channel: 0, signal: 0, phy: .le1M, crc: .valid, fromCentral: false, eventCounter: 0), headerSize: 17),
        // Version 2, id 1 (EVENT_FOLLOW) with no event header: not a packet.
        Sample(name: "version 2, id 1", linkType: linkType, packet: [75, 10, 0, 2, 5, 0, 1] + hexBytes("c0b1ed004852 00 11 22 33"), headerSize: 17, otherCode: 1),
        // Version 3, id 2 (advertising): flags 0x20 (CRC failed, LE Coded), index 39, RSSI 25,
        // firmware time 0x9759d919.
        Sample(
          name: "version 3 advertising", linkType: linkType, packet: [0x2B] + le16(10 + coded.count) + [3, 0x23, 0x42, 2] + hexBytes("0a 20 27 19 0000 19d95997") + coded,
          header: AirPacketHeader(channel: 39, signal: -25, phy: .leCoded, crc: .invalid), headerSize: 17),
        // Version 3, id 6 (data): flags 0x15 (CRC OK, from the peripheral, encrypted, MIC
        // failed, LE 2M), index 5, RSSI 80, event counter 7.
        Sample(
          name: "version 3 data", linkType: linkType, packet: [0x2B] + le16(10 + data.count) + [3, 1, 0, 6] + hexBytes("0a 15 05 50 0700 01020304") + data,
          header: AirPacketHeader(channel: 5, signal: -80, phy: .le2M, crc: .valid, fromCentral: false, mic: .invalid, eventCounter: 7),
          headerSize: 17),
        Sample(name: "version 3, id 0x0E", linkType: linkType, packet: [0x2B, 10, 0, 3, 9, 0, 0x0E] + [UInt8](repeating: 0, count: 10), headerSize: 17, otherCode: 0x0E),
        Sample(name: "version 4", linkType: linkType, packet: [0x2B] + le16(10 + data.count) + [4, 0, 0, 6] + hexBytes("0a 01 05 50 0700 01020304") + data, headerSize: 17),
        Sample(name: "version 0 without marker", linkType: linkType, packet: [0x2B] + le16(10 + data.count) + [0, 0, 0, 6] + hexBytes("0a 01 05 50 0700 01020304") + data, headerSize: 17),
      ]
    }
    return samples
  }()

  static func read(_ linkType: PcapLinkType, _ packet: [UInt8], originalLength: Int? = nil) -> CaptureRecord {
    ByteView.pinning(packet) { linkType.record($0, originalLength ?? packet.count) }
  }

  static func header(_ record: CaptureRecord) -> AirPacketHeader? { PcapLinkType.airParts(record)?.header }

  @Test(arguments: samples)
  func readsTheHeader(sample: Sample) {
    let record = Self.read(sample.linkType, sample.packet)
    if let header = sample.header {
      #expect(record.kind == .airPacket)
      #expect(Self.header(record) == header)
      #expect(Array(record.bytes.dropFirst(AirPacketHeader.size)) == Array(sample.packet.dropFirst(sample.headerSize)))
      #expect(record.originalLength == sample.packet.count - sample.headerSize + AirPacketHeader.size)
    } else {
      #expect(record.kind == .other(sample.otherCode))
      #expect(record.bytes == sample.packet)
    }
  }

  /// A packet cut anywhere is a record: too short for its header, of kind `.other(0xFFFF)`;
  /// past it, the same kind with the packet as far as it goes.
  @Test(arguments: samples)
  func packetsCutAtEveryByteAreRecords(sample: Sample) {
    let whole = Self.read(sample.linkType, sample.packet)
    for length in 0..<sample.packet.count {
      let record = Self.read(sample.linkType, Array(sample.packet.prefix(length)), originalLength: sample.packet.count)
      #expect(record.originalLength >= record.bytes.count)
      if length < sample.headerSize {
        #expect(record.kind == .other(0xFFFF), "\(length)")
        #expect(record.bytes == Array(sample.packet.prefix(length)))
      } else {
        #expect(record.kind == whole.kind, "\(length)")
        if whole.kind == .airPacket {
          #expect(Array(record.bytes.dropFirst(AirPacketHeader.size)) == Array(sample.packet[sample.headerSize..<length]), "\(length)")
          #expect(record.originalLength == whole.originalLength, "\(length)")
        }
      }
    }
  }

  /// Read, written, read again: the same record (or, where the format reads a value as not
  /// known, a record that writes the same packet); other kinds are not written.
  @Test(arguments: samples)
  func writesWhatItReads(sample: Sample) throws {
    let record = Self.read(sample.linkType, sample.packet)
    guard record.kind == .airPacket else {
      #expect(sample.linkType.packet(record) == nil)
      return
    }
    let packet = try #require(sample.linkType.packet(record))
    let again = Self.read(sample.linkType, packet)
    #expect(again.kind == .airPacket)
    if sample.exact {
      #expect(again.bytes == record.bytes)
    } else {
      #expect(again.bytes.dropFirst(AirPacketHeader.size) == record.bytes.dropFirst(AirPacketHeader.size))
      #expect(sample.linkType.packet(again) == packet)
    }
    // The whole way through a file, in both containers.
    for format in [CaptureWriteFormat.pcap(sample.linkType), .pcapng(sample.linkType)] {
      var timed = record
      timed.timestamp = CaptureFixtures.base
      let result = CaptureFixtures.read(CaptureFixtures.bytes(format, [timed]))
      #expect(result.error == nil)
      #expect(result.records.map(\.bytes) == [again.bytes])
    }
  }

  // MARK: What the writers write

  static let fullRecord = CaptureFixtures.airRecord(
    0x1_0000_0005,
    AirPacketHeader(channel: 11, signal: -45, phy: .le2M, fromCentral: true, mic: .valid, decryptedBySniffer: true, eventCounter: 0x1234),
    data)

  @Test func nordicWritesVersion3() {
    // Flags 0x1F: CRC OK (not checked is written as OK), from the central, encrypted, MIC OK,
    // LE 2M; index 11, RSSI 45, event counter 0x1234, the time's low 32 bits.
    #expect(
      PcapLinkType.nordicBLE.packet(Self.fullRecord)
        == [0] + Self.le16(10 + Self.data.count) + [3, 0, 0, 6] + hexBytes("0a 1f 0b 2d 3412 05000000") + Self.data)
    // Advertising (no direction, the advertising access address): id 2, no direction bits.
    let advertising = CaptureFixtures.airRecords[1]
    #expect(PcapLinkType.nordicBLE.packet(advertising) == [0] + Self.le16(10 + Self.adv.count) + [3, 0, 0, 2] + hexBytes("0a 01 25 34 0000") + timeBytes(advertising) + Self.adv)
    // No direction and a data access address: a data packet from the peripheral.
    let unknown = CaptureFixtures.airRecords[2]
    #expect(PcapLinkType.nordicBLE.packet(unknown) == [0] + Self.le16(10 + Self.data.count) + [3, 0, 0, 6] + hexBytes("0a 01 ff 00 0000") + timeBytes(unknown) + Self.data)
  }

  func timeBytes(_ record: CaptureRecord) -> [UInt8] {
    let time = UInt32(truncatingIfNeeded: record.timestamp)
    return [UInt8(time & 0xFF), UInt8((time >> 8) & 0xFF), UInt8((time >> 16) & 0xFF), UInt8(time >> 24)]
  }

  @Test func legacyNordicWritesVersion1() {
    #expect(PcapLinkType.nordicBLELegacy.packet(Self.fullRecord) == [0, 6, UInt8(10 + Self.data.count), 1, 0, 0, 6] + hexBytes("0a 1f 0b 2d 3412 00000000") + Self.data)
    // Version 1's payload length is one byte: a longer packet is not written.
    let long = CaptureFixtures.airRecord(0, AirPacketHeader(), [UInt8](repeating: 0x55, count: 246))
    #expect(PcapLinkType.nordicBLELegacy.packet(long) == nil)
    #expect(PcapLinkType.nordicBLE.packet(long) != nil)
  }

  @Test func rfHeaderWritesItsFlags() {
    // RF 13 (index 11), −45 dBm; flags 0x710B: de-whitened, signal valid, decrypted, PDU type 2,
    // MIC checked and valid, LE 2M (the CRC was not checked).
    #expect(PcapLinkType.bluetoothLELLWithPHDR.packet(Self.fullRecord) == hexBytes("0d d3 00 00 00000000 0b71") + Self.data)
    // Nothing known: channel 255, no signal, LE 1M, only de-whitened.
    #expect(PcapLinkType.bluetoothLELLWithPHDR.packet(CaptureFixtures.airRecords[2]) == hexBytes("ff 00 00 00 00000000 0100") + Self.data)
  }

  @Test func ppiWritesUbertoothsField() {
    // 2428 MHz (index 11), RSSI −45 + 54 = 9 as most, least and mean, one sample.
    #expect(PcapLinkType.ppi.packet(Self.fullRecord) == hexBytes("00 00 1800 fb000000 3675 0c00 00 7c09 00 00000000 09 09 09 01") + Self.data)
    #expect(PcapLinkType.ppi.packet(CaptureFixtures.airRecords[2]) == hexBytes("00 00 1800 fb000000 3675 0c00 00 0000 00 00000000 00 00 00 00") + Self.data)
  }

  @Test func linkLayerWritesThePacketAlone() {
    #expect(PcapLinkType.bluetoothLELL.packet(Self.fullRecord) == Self.data)
  }

  /// Records of other kinds, and air records too short for the header, are not written.
  @Test func otherRecordsAreNotWritten() {
    let short = CaptureRecord(timestamp: 0, direction: nil, kind: .airPacket, bytes: [0x25, 0xC4, 0x00])
    for linkType in [PcapLinkType.bluetoothLELL, .bluetoothLELLWithPHDR, .nordicBLE, .nordicBLELegacy, .ppi] {
      for record in CaptureFixtures.records + [short] { #expect(linkType.packet(record) == nil, "\(linkType.value)") }
    }
  }

  /// A capture converted from one sniffer's format to another keeps what both carry.
  @Test func conversionsKeepWhatBothFormatsCarry() {
    let nordic = Self.read(.nordicBLE, Self.samples.first { $0.linkType == .nordicBLE && $0.name == "version 3 data" }!.packet)
    let viaRFHeader = Self.read(.bluetoothLELLWithPHDR, PcapLinkType.bluetoothLELLWithPHDR.packet(nordic)!)
    var expected = Self.header(nordic)!
    expected.eventCounter = nil  // 256 has no event counter
    #expect(Self.header(viaRFHeader) == expected)
    #expect(viaRFHeader.bytes.dropFirst(AirPacketHeader.size) == nordic.bytes.dropFirst(AirPacketHeader.size))
    let viaPPI = Self.read(.ppi, PcapLinkType.ppi.packet(nordic)!)
    #expect(Self.header(viaPPI) == AirPacketHeader(channel: 5, signal: -80))
  }

  // MARK: The sample captures (Scripts/captures/make_air_captures.py)

  /// The 16 packets of every sample: channel index, sent by the central (nil: advertising).
  static let sampleChannels: [UInt8] = [37, 37, 37, 38, 7, 7, 14, 14, 21, 21, 28, 28, 35, 35, 5, 5]
  static let sampleFromCentral: [Bool?] = [nil, nil, nil, nil] + (0..<12).map { $0 % 2 == 0 }

  /// What each sample's link type says of packet `number` (from 1), as the script wrote it.
  static func sampleHeader(_ file: String, _ number: Int) -> AirPacketHeader {
    let channel = sampleChannels[number - 1]
    let signal = Int8(-40 - number)
    let fromCentral = sampleFromCentral[number - 1]
    let crc: AirPacketHeader.Check = number == 14 ? .invalid : .valid
    switch file {
    case "air_ll.pcap": return AirPacketHeader()
    case "air_ll_phdr.pcapng": return AirPacketHeader(channel: channel, signal: signal, phy: .le1M, crc: crc, fromCentral: fromCentral)
    case "air_ppi.pcap": return AirPacketHeader(channel: channel, signal: signal)
    default:
      return AirPacketHeader(
        channel: channel, signal: signal, phy: .le1M, crc: crc, fromCentral: fromCentral,
        eventCounter: fromCentral == nil ? nil : UInt16((number - 5) / 2))
    }
  }

  static let sampleFiles = ["air_ll.pcap", "air_ll_phdr.pcapng", "air_nordic.pcap", "air_nordic_v2.pcapng", "air_user10.pcap", "air_ppi.pcap"]

  /// Each sample, written by a script from the formats' descriptions, reads as the script meant:
  /// the same 16 link-layer packets, with what each format says of them.
  @Test(arguments: sampleFiles)
  func sampleCapturesReadAsWritten(file: String) throws {
    let path = repositoryRoot.appendingPathComponent("captures/\(file)").path
    let result = CaptureFixtures.read(path: path)
    #expect(result.error == nil)
    try #require(result.records.count == 16)
    let reference = CaptureFixtures.read(path: repositoryRoot.appendingPathComponent("captures/air_ll.pcap").path).records
    for (index, record) in result.records.enumerated() {
      #expect(record.kind == .airPacket)
      #expect(Self.header(record) == Self.sampleHeader(file, index + 1), "\(file) #\(index + 1)")
      #expect(record.bytes.dropFirst(AirPacketHeader.size) == reference[index].bytes.dropFirst(AirPacketHeader.size), "\(file) #\(index + 1)")
    }
  }

  @Test func channelIndexesAndRFChannelsCorrespond() {
    // Core Vol 6 Part B §1.4.1: 2402, 2426 and 2480 MHz are the advertising channels 37, 38, 39;
    // the data channels 0–36 take the other frequencies in order.
    let frequencies = (0...39).map { 2402 + 2 * $0 }
    let data = frequencies.filter { ![2402, 2426, 2480].contains($0) }
    for rf in 0...39 {
      let frequency = frequencies[rf]
      let index = [2402: 37, 2426: 38, 2480: 39][frequency] ?? data.firstIndex(of: frequency)!
      #expect(PcapLinkType.channelIndex(rfChannel: UInt8(rf)) == UInt8(index))
      #expect(PcapLinkType.rfChannel(channelIndex: UInt8(index)) == UInt8(rf))
    }
    #expect(PcapLinkType.channelIndex(rfChannel: 40) == nil)
    #expect(PcapLinkType.rfChannel(channelIndex: 40) == nil)
  }
}
