import Testing
import BLECore
@testable import BLECapture

/// The format and link-type registries: what each entry promises, checked for every entry, so a
/// new one is checked by being listed.
@Suite struct RegistryTests {
  @Test func formatsAreListedOnce() {
    let names = CaptureFile.formats.map(\.name)
    #expect(Set(names).count == names.count)
  }

  @Test func linkTypesAreListedOnce() {
    let values = PcapLinkType.readable.map(\.value)
    #expect(Set(values).count == values.count)
    // A number read is not also among those only named.
    #expect(PcapLinkType.unreadable.allSatisfy { !values.contains($0.value) })
  }

  /// Every record a link type can carry comes back as written, in pcap and in pcapng.
  @Test(arguments: PcapLinkType.readable)
  func everyLinkTypeReadsWhatItWrites(linkType: PcapLinkType) throws {
    let carried = (CaptureFixtures.records + CaptureFixtures.airRecords).filter { linkType.packet($0) != nil }
    #expect(!carried.isEmpty)
    for format in [CaptureWriteFormat.pcap(linkType), .pcapng(linkType)] {
      let result = CaptureFixtures.read(CaptureFixtures.bytes(format, carried))
      #expect(result.error == nil)
      #expect(result.format?.detail == "link type \(linkType.value) (\(linkType.name))")
      try #require(result.records.count == carried.count)
      for (got, want) in zip(result.records, carried) {
        // H4 without direction places commands and events only (ACL is placed by the dissector).
        #expect(got.kind == want.kind && got.timestamp == want.timestamp, "\(linkType.value)")
        if want.kind == .airPacket {
          // The packet comes back; of the sniffer's header, what the link type carries (so the
          // record read back makes the same packet again).
          #expect(got.bytes.dropFirst(AirPacketHeader.size) == want.bytes.dropFirst(AirPacketHeader.size), "\(linkType.value)")
          #expect(linkType.packet(got) == linkType.packet(want), "\(linkType.value)")
        } else {
          #expect(got.bytes == want.bytes, "\(linkType.value)")
        }
      }
    }
  }

  /// A packet too short for the link type's header is a record of its own, not a trap.
  @Test(arguments: PcapLinkType.readable)
  func shortPacketsAreRecords(linkType: PcapLinkType) {
    for length in 0..<8 {
      let packet = [UInt8](repeating: 0x02, count: length)
      let record = ByteView.pinning(packet) { linkType.record($0, length) }
      // Air packets get the sniffer's header (`AirPacketHeader`) before them.
      #expect(record.bytes.count <= length + (record.kind == .airPacket ? AirPacketHeader.size : 0))
      #expect(record.originalLength >= record.bytes.count)
    }
  }

  @Test func refusalListsTheReadableLinkTypes() {
    let message = CaptureError.unsupportedLinkType(format: "pcap", linkType: 255, name: PcapLinkType.name(of: 255)).message
    #expect(message.hasSuffix("reads HCI and LE air-sniffer captures: btsnoop 1001/1002/2001, pcap link types 157, 187, 192, 201, 251, 254, 256 and 272"))
    #expect(message.contains("BLUETOOTH_BREDR_BB"))
  }
}
