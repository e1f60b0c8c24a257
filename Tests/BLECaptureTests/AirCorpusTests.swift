import Foundation
import Testing
import BLECore
import BLETestSupport
@testable import BLECapture

let llSnifferFolder: URL? = sharedCorpusRoot.map { $0.appendingPathComponent("ll_sniffer") }.flatMap {
  FileManager.default.fileExists(atPath: $0.path) ? $0 : nil
}

/// The air-sniffer captures of ../shared/corpus/ll_sniffer (PROVENANCE.md), read to the end and,
/// when tshark is installed, compared with it record by record: the frame count, the channel,
/// the signal, the CRC, MIC, PHY and direction of each packet where the format has them, and
/// the link-layer packet's bytes. Skipped when the corpus is absent.
@Suite(.enabled(if: llSnifferFolder != nil, "../shared/corpus/ll_sniffer is absent"))
struct AirCorpusTests {
  static let files: [String] =
    llSnifferFolder.flatMap { try? FileManager.default.contentsOfDirectory(atPath: $0.path) }?
    .filter { $0.hasSuffix(".pcap") || $0.hasSuffix(".pcapng") }.sorted() ?? []

  /// Ubertooth's 2013 captures put link type 147 (USER0) inside PPI: Wireshark decodes it as LE
  /// only when told to.
  static let userLinkTypes = #"uat:user_dlts:"User 0 (DLT=147)","btle","0","","0","""#

  static let fields = [
    "frame.number", "btle_rf.channel", "btle_rf.signal_dbm", "btle_rf.flags.crc_checked", "btle_rf.flags.crc_valid",
    "btle_rf.flags.mic_checked", "btle_rf.flags.mic_valid", "btle_rf.pdu_type", "btle_rf.phy", "btle_rf.flags.decrypted",
    "nordic_ble.channel", "nordic_ble.rssi", "nordic_ble.crcok", "nordic_ble.direction", "nordic_ble.encrypted",
    "nordic_ble.micok", "nordic_ble.phy", "nordic_ble.event_counter", "ppi.dlt",
  ]

  @Test func theNineFilesAreThere() {
    #expect(Self.files.count == 9)
  }

  @Test(arguments: files)
  func readsToTheEnd(file: String) throws {
    let result = CaptureFixtures.read(path: llSnifferFolder!.appendingPathComponent(file).path)
    #expect(result.error == nil)
    #expect(!result.records.isEmpty)
    // Every packet of these captures is a link-layer packet.
    #expect(result.records.allSatisfy { $0.kind == .airPacket }, "\(file)")
  }

  @Test(.enabled(if: which("tshark") != nil, "tshark is not installed"), arguments: files)
  func matchesTshark(file: String) throws {
    let path = llSnifferFolder!.appendingPathComponent(file).path
    let result = CaptureFixtures.read(path: path)
    try #require(result.error == nil)
    let tshark = try #require(which("tshark"))

    let (status, output) = try runTool(
      tshark, ["-n", "-o", Self.userLinkTypes, "-r", path, "-T", "fields", "-E", "occurrence=f"] + Self.fields.flatMap { ["-e", $0] })
    #expect(status == 0)
    let rows = String(decoding: output, as: UTF8.self).split(separator: "\n").map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
    #expect(rows.count == result.records.count, "\(file): tshark shows \(rows.count) frames, we read \(result.records.count)")
    let packets = try Self.tsharkLinkLayerPackets(tshark, path)
    #expect(packets.count == rows.count)

    var compared = 0
    for (index, (record, row)) in zip(result.records, rows).enumerated() {
      let frame = index + 1
      guard let header = PcapLinkType.airParts(record)?.header, row.count == Self.fields.count else {
        Issue.record("\(file) #\(frame): no header, or tshark's row has \(row.count) fields")
        continue
      }
      var tshark: [String: String] = [:]
      for (name, value) in zip(Self.fields, row) where !value.isEmpty { tshark[name] = value }
      if let rf = tshark["btle_rf.channel"].flatMap(Int.init) {
        #expect(header.channel.map(Int.init) == Self.channelIndex(rf: rf), "\(file) #\(frame) channel")
        #expect(header.signal.map(Int.init) == tshark["btle_rf.signal_dbm"].flatMap(Int.init), "\(file) #\(frame) signal")
        let crc: AirPacketHeader.Check =
          tshark["btle_rf.flags.crc_checked"] == "1" ? (tshark["btle_rf.flags.crc_valid"] == "1" ? .valid : .invalid) : .notChecked
        #expect(header.crc == crc, "\(file) #\(frame) CRC")
        let pduType = tshark["btle_rf.pdu_type"].flatMap(Int.init)
        let mic: AirPacketHeader.Check =
          pduType != 1 && tshark["btle_rf.flags.mic_checked"] == "1" ? (tshark["btle_rf.flags.mic_valid"] == "1" ? .valid : .invalid) : .notChecked
        #expect(header.mic == mic, "\(file) #\(frame) MIC")
        let fromCentral: Bool? = [2: true, 4: true, 3: false, 5: false][pduType ?? 0]
        #expect(header.fromCentral == fromCentral, "\(file) #\(frame) direction")
        #expect(header.phy.map { Int($0.rawValue) } == tshark["btle_rf.phy"].flatMap(Int.init).flatMap { $0 < 3 ? $0 : nil }, "\(file) #\(frame) PHY")
        #expect(header.decryptedBySniffer == (tshark["btle_rf.flags.decrypted"] == "1"), "\(file) #\(frame) decrypted")
      } else if let channel = tshark["nordic_ble.channel"].flatMap(Int.init) {
        #expect(header.channel.map(Int.init) == channel, "\(file) #\(frame) channel")
        #expect(header.signal.map(Int.init) == tshark["nordic_ble.rssi"].flatMap(Int.init), "\(file) #\(frame) RSSI")
        #expect(header.crc == (tshark["nordic_ble.crcok"] == "1" ? .valid : .invalid), "\(file) #\(frame) CRC")
        #expect(header.phy.map { Int($0.rawValue) } == tshark["nordic_ble.phy"].flatMap(Int.init), "\(file) #\(frame) PHY")
        // Direction, encryption and the event counter belong to data packets.
        let direction = tshark["nordic_ble.direction"]
        #expect(header.fromCentral == direction.map { $0 == "1" }, "\(file) #\(frame) direction")
        let mic: AirPacketHeader.Check = tshark["nordic_ble.encrypted"] == "1" ? (tshark["nordic_ble.micok"] == "1" ? .valid : .invalid) : .notChecked
        #expect(header.mic == mic, "\(file) #\(frame) MIC")
        #expect(header.eventCounter.map(Int.init) == (direction == nil ? nil : tshark["nordic_ble.event_counter"].flatMap(Int.init)), "\(file) #\(frame) event counter")
      } else {
        // PPI from Ubertooth: no checks; tshark does not decode Ubertooth's field.
        #expect(tshark["ppi.dlt"] != nil, "\(file) #\(frame): neither RF header, nRF header nor PPI")
        #expect(header.crc == .notChecked && header.mic == .notChecked && header.fromCentral == nil)
        #expect(header.channel != nil && header.signal != nil, "\(file) #\(frame): Ubertooth's field")
      }
      if index < packets.count {
        #expect(packets[index] == Array(record.bytes.dropFirst(AirPacketHeader.size)), "\(file) #\(frame) packet")
      }
      compared += 1
    }
    #expect(compared == result.records.count)
  }

  /// The channel index of RF channel `rf` (2402 + 2 × rf MHz), by the spec's table rather than
  /// the reader's code: the advertising channels at 2402, 2426 and 2480 MHz, the data channels
  /// on the other frequencies in order.
  static func channelIndex(rf: Int) -> Int? {
    guard (0...39).contains(rf) else { return nil }
    switch rf {
    case 0: return 37
    case 12: return 38
    case 39: return 39
    default: return (1...38).filter { $0 != 12 }.firstIndex(of: rf)
    }
  }

  /// The bytes of tshark's `btle` layer in each frame (nil where tshark has none), from its
  /// Elasticsearch output with raw bytes (`-T ek -x`): one line per frame, `"btle_raw":"…"`.
  static func tsharkLinkLayerPackets(_ tshark: String, _ path: String) throws -> [[UInt8]?] {
    let (status, output) = try runTool(tshark, ["-n", "-o", userLinkTypes, "-r", path, "-T", "ek", "-x", "-j", "btle_raw"])
    #expect(status == 0)
    let key = Array(#""btle_raw":""#.utf8)
    var packets: [[UInt8]?] = []
    for line in output.split(separator: UInt8(ascii: "\n")) where line.starts(with: Array(#"{"timestamp""#.utf8)) {
      let bytes = Array(line)
      let last = bytes.count - key.count
      guard let start = (0..<max(last + 1, 0)).first(where: { bytes[$0] == key[0] && bytes[$0 + 1] == key[1] && bytes[$0..<($0 + key.count)].elementsEqual(key) })
      else {
        packets.append(nil)
        continue
      }
      let hex = bytes[(start + key.count)...].prefix { $0 != UInt8(ascii: "\"") }
      packets.append(hexBytes(String(decoding: hex, as: UTF8.self)))
    }
    return packets
  }
}
