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
    let carried = CaptureFixtures.records.filter { linkType.packet($0) != nil }
    #expect(!carried.isEmpty)
    for format in [CaptureWriteFormat.pcap(linkType), .pcapng(linkType)] {
      let result = CaptureFixtures.read(CaptureFixtures.bytes(format, carried))
      #expect(result.error == nil)
      #expect(result.format?.detail == "link type \(linkType.value) (\(linkType.name))")
      try #require(result.records.count == carried.count)
      for (got, want) in zip(result.records, carried) {
        // H4 without direction places commands and events only (ACL is placed by the dissector).
        #expect(got.kind == want.kind && got.bytes == want.bytes && got.timestamp == want.timestamp, "\(linkType.value)")
      }
    }
  }

  /// A packet too short for the link type's header is a record of its own, not a trap.
  @Test(arguments: PcapLinkType.readable)
  func shortPacketsAreRecords(linkType: PcapLinkType) {
    for length in 0..<8 {
      let packet = [UInt8](repeating: 0x02, count: length)
      let record = ByteView.pinning(packet) { linkType.record($0, length) }
      #expect(record.bytes.count <= length)
      #expect(record.originalLength >= record.bytes.count)
    }
  }

  @Test func refusalListsTheReadableLinkTypes() {
    let message = CaptureError.unsupportedLinkType(format: "pcap", linkType: 256, name: PcapLinkType.name(of: 256)).message
    #expect(message.hasSuffix("pcap link types 187, 201 and 254"))
    #expect(message.contains("BLUETOOTH_LE_LL_WITH_PHDR"))
  }
}
