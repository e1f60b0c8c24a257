import BLETestSupport
import Testing

@testable import BLECapture

/// `info` and `summary` say when a file holds nanosecond times (they are read to the
/// microsecond): pcap's nanosecond magic, or pcapng's if_tsresol of 10^-9.
@Suite struct TimestampResolutionTests {
  static func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }

  /// A little-endian pcapng head: section header, then an interface block with `options`.
  static func pcapng(options: [UInt8]) -> [UInt8] {
    var bytes = le32(0x0A0D_0D0A) + le32(28) + le32(0x1A2B_3C4D) + [1, 0, 0, 0] + le32(0xFFFF_FFFF) + le32(0xFFFF_FFFF) + le32(28)
    let length = UInt32(20 + options.count)
    bytes += le32(1) + le32(length) + [201, 0, 0, 0] + le32(65535) + options + le32(length)
    return bytes
  }

  @Test func pcapMagicSaysTheResolution() {
    #expect(PcapReader.hasNanosecondTimes([0xA1, 0xB2, 0x3C, 0x4D] + [UInt8](repeating: 0, count: 20)))
    #expect(PcapReader.hasNanosecondTimes([0x4D, 0x3C, 0xB2, 0xA1] + [UInt8](repeating: 0, count: 20)))
    #expect(!PcapReader.hasNanosecondTimes([0xD4, 0xC3, 0xB2, 0xA1] + [UInt8](repeating: 0, count: 20)))
  }

  @Test func pcapngInterfaceOptionSaysTheResolution() {
    let nanoseconds: [UInt8] = [9, 0, 1, 0, 9, 0, 0, 0, 0, 0, 0, 0]
    #expect(PcapReader.hasNanosecondTimes(Self.pcapng(options: nanoseconds)))
    // A name first (if_name, code 2), then the resolution.
    #expect(PcapReader.hasNanosecondTimes(Self.pcapng(options: [2, 0, 5, 0] + Array("hci0\0".utf8) + [0, 0, 0] + nanoseconds)))
    #expect(!PcapReader.hasNanosecondTimes(Self.pcapng(options: [9, 0, 1, 0, 6, 0, 0, 0, 0, 0, 0, 0])))  // microseconds
    #expect(!PcapReader.hasNanosecondTimes(Self.pcapng(options: [])))
    // Cut short or lying about lengths: no answer rather than a trap.
    #expect(!PcapReader.hasNanosecondTimes(Array(Self.pcapng(options: nanoseconds).prefix(40))))
    #expect(!PcapReader.hasNanosecondTimes(Self.pcapng(options: [9, 0, 0xFF, 0xFF, 9, 0, 0, 0])))
  }
}

/// A real nanosecond pcap (an Android snoop converted by its recorder).
@Suite struct NanosecondCorpusTests {
  @Test(.enabled(if: sharedCorpusHas("cheoljun99/infocar_obd_ble_nsec.pcap"), "../shared/corpus is absent"))
  func aNanosecondPcapSaysSo() throws {
    let reader = try CaptureFile.open(path: sharedCorpusRoot!.appendingPathComponent("cheoljun99/infocar_obd_ble_nsec.pcap").path)
    #expect(reader.format.detail == "link type 201 (H4 with direction), nanosecond timestamps (read to the microsecond)")
    let micro = try CaptureFile.open(path: repositoryRoot.appendingPathComponent("captures/hr_strap_session.pcapng").path)
    #expect(micro.format.detail == "link type 201 (H4 with direction)")
  }
}
