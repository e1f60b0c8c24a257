import Foundation
import Testing

@testable import BLECapture
@testable import BLECore
@testable import BLEDecoder

/// The connection events we count from the packets' times, checked against the channel each
/// packet was heard on: the channel selection algorithm (Core Vol 6 Part B §4.5.8) gives the
/// channel of every event, so a miscounted event shows as a packet on another channel. On real
/// sniffer captures (ll_sniffer) and the generated sessions, whose CONNECT_IND gives the hop
/// increment, the channel map and the access address.
@Suite struct ChannelSelectionTests {
  @Test func permutationReversesEachOctet() {
    #expect(ChannelSelection.permuted(0x0001) == 0x0080)
    #expect(ChannelSelection.permuted(0x8001) == 0x0180)
    #expect(ChannelSelection.permuted(0x305F) == 0x0CFA)
  }

  @Test func algorithm1RemapsUnusedChannels() {
    let all = ChannelSelection.usedChannels(0x1F_FFFF_FFFF)
    #expect(all.count == 37)
    // Hop 7 from 0: events 0, 1, 2 on 7, 14, 21 (captures/air_* were built so).
    #expect((0..<3).map { ChannelSelection.algorithm1(event: $0, hop: 7, used: all) } == [7, 14, 21])
    // Channels 0–9 only: unmapped 14 is not used, 14 mod 10 = 4.
    let ten = ChannelSelection.usedChannels(0x3FF)
    #expect(ChannelSelection.algorithm1(event: 1, hop: 7, used: ten) == 4)
  }

  struct LinkChannels {
    var packets = 0
    var matching1 = 0
    var matching2 = 0
    /// Whether every packet was on channel index 0 (a writer that records no channel).
    var onlyChannelZero = true
    /// The first packets on neither algorithm's channel: frame, event, channel heard.
    var strays: [(frame: Int, event: UInt16, channel: UInt8)] = []
  }

  /// Per link (by access address): how many data packets were heard on the channel each
  /// algorithm gives for their counted event.
  static func check(_ path: String) throws -> [UInt32: LinkChannels] {
    let reader = try CaptureFile.open(path: path)
    var dissector = Dissector()
    var frame = DissectedFrame()
    var number = 0
    var links: [UInt32: (hop: UInt8, used: [UInt8], handle: UInt16?)] = [:]
    var counts: [UInt32: LinkChannels] = [:]
    while let record = try reader.next() {
      number += 1
      dissector.dissect(record, number: number, into: &frame)
      guard let air = frame.air else { continue }
      if case let .connectIndication(_, _, _, accessAddress, _) = frame.header,
        let hop = frame.fields.number("ll.connection.hop"), let map = frame.fields.lookup("ll.connection.channel_map")
      {
        guard case .bytes(let octets) = map else { continue }
        var bits: UInt64 = 0
        for (index, octet) in octets.enumerated() { bits |= UInt64(octet) << UInt64(8 * index) }
        links[accessAddress] = (UInt8(hop), ChannelSelection.usedChannels(bits), frame.connection?.handle)
        continue
      }
      // Packets of the link the CONNECT_IND opened (not of a later one reusing its address).
      guard let event = air.event, let channel = air.header.channel, let link = links[air.accessAddress], link.handle == frame.connection?.handle,
        air.header.crc != .invalid
      else { continue }
      counts[air.accessAddress, default: LinkChannels()].packets += 1
      if channel != 0 { counts[air.accessAddress]!.onlyChannelZero = false }
      if ChannelSelection.algorithm1(event: event, hop: link.hop, used: link.used) == channel { counts[air.accessAddress]!.matching1 += 1 }
      let two = ChannelSelection.algorithm2(event: event, accessAddress: air.accessAddress, used: link.used) == channel
      if two { counts[air.accessAddress]!.matching2 += 1 }
      if !two && ChannelSelection.algorithm1(event: event, hop: link.hop, used: link.used) != channel && counts[air.accessAddress]!.strays.count < 6 {
        counts[air.accessAddress]!.strays.append((number, event, channel))
      }
    }
    return counts
  }

  static var corpusFiles: [String] {
    guard let root = corpusRoot?.appendingPathComponent("ll_sniffer") else { return [] }
    return ((try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []).sorted().map { root.appendingPathComponent($0).path }
  }

  // (Not captures/air_*: hand-built, their times put each side's packet 15 ms apart and the
  // first event long after the transmit window.)
  @Test(arguments: ["air/hr_strap_session_sniffed.pcap", "air/diff_broken_b_sniffed.pcap.gz"].map { capturePath($0) })
  func countedEventsGiveTheChannelsHeard(path: String) throws {
    try Self.expectTheChannelsHeard(path)
  }

  @Test(.enabled(if: corpusRoot != nil, "../shared/corpus is absent"), arguments: corpusFiles)
  func countedEventsGiveTheChannelsHeardInTheCorpus(path: String) throws {
    try Self.expectTheChannelsHeard(path)
  }

  static func expectTheChannelsHeard(_ path: String) throws {
    let name = URL(fileURLWithPath: path).lastPathComponent
    // SweynTooth's writer puts channel index 0 on every packet, advertising ones too (which go
    // on 37–39): it records no channel, so its links are not checked.
    for (accessAddress, link) in try Self.check(path) where link.packets >= 10 && !link.onlyChannelZero {
      let best = max(link.matching1, link.matching2)
      print("\(name) 0x\(String(accessAddress, radix: 16)): \(link.packets) packets, algorithm #1 \(link.matching1), #2 \(link.matching2)")
      #expect(Double(best) >= 0.99 * Double(link.packets), "\(name) 0x\(String(accessAddress, radix: 16)): \(link.packets) packets, on the expected channel: #1 \(link.matching1), #2 \(link.matching2); first strays \(link.strays)")
    }
  }
}
