import Foundation
import BLECore
import BLETestSupport
@testable import BLECapture

/// A short session built from real packet layouts (Core Vol 4 Part E), used to exercise every
/// container format with the same records.
enum CaptureFixtures {
  static let base: Int64 = 1_764_480_000_000_000  // 2025-11-30 05:20:00 UTC, in µs

  static let records: [CaptureRecord] = [
    // HCI Reset and its Command Complete.
    CaptureRecord(timestamp: base, direction: .hostToController, kind: .command, bytes: [0x03, 0x0C, 0x00]),
    CaptureRecord(timestamp: base + 61, direction: .controllerToHost, kind: .event, bytes: [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00]),
    // LE Connection Complete: handle 0x0040, central, random peer D0:B1:ED:00:48:52, interval 24, latency 0, timeout 42.
    CaptureRecord(
      timestamp: base + 1_000, direction: .controllerToHost, kind: .event,
      bytes: [0x3E, 0x13, 0x01, 0x00, 0x40, 0x00, 0x00, 0x01, 0x52, 0x48, 0x00, 0xED, 0xB1, 0xD0, 0x18, 0x00, 0x00, 0x00, 0x2A, 0x00, 0x00]),
    // ATT Exchange MTU Request on handle 0x0040 (L2CAP length 3, CID 4).
    CaptureRecord(timestamp: base + 2_000, direction: .hostToController, kind: .acl, bytes: [0x40, 0x00, 0x07, 0x00, 0x03, 0x00, 0x04, 0x00, 0x02, 0xF7, 0x00]),
    // Heart Rate Measurement notification: flags 0x16 (contact detected, RR present), 72 bpm, RR 0x0340.
    CaptureRecord(
      timestamp: base + 3_000, direction: .controllerToHost, kind: .acl,
      bytes: [0x40, 0x20, 0x0B, 0x00, 0x07, 0x00, 0x04, 0x00, 0x1B, 0x10, 0x00, 0x16, 0x48, 0x40, 0x03]),
    // Disconnection Complete: handle 0x0040, reason 0x13.
    CaptureRecord(timestamp: base + 4_000, direction: .controllerToHost, kind: .event, bytes: [0x05, 0x04, 0x00, 0x40, 0x00, 0x13]),
  ]

  /// An ADV_IND (Core Vol 6 Part B §2.3.1.1) from its access address to its CRC, as an
  /// Ubertooth sniffed it (ll_sniffer/crackle_pairing_and_ltk_exchange_ppi192.pcap frame 1).
  static let advertisingPacket = hexBytes("d6be898e 0009 e8dd6ee5c578 020105 c63c96")
  /// A data channel PDU (LLID 2, NESN 1, SN 1) carrying an ATT Read Request for handle 3; the
  /// access address and the CRC are made up.
  static let dataPacket = hexBytes("8e3a7c5a 0e07 0300 0400 0a0300 a1b2c3")

  /// Air-sniffer records (`.airPacket`: `AirPacketHeader`, then the packet): one with every
  /// field known, an advertisement, one with nothing known.
  static let airRecords: [CaptureRecord] = [
    airRecord(
      base + 5_000,
      AirPacketHeader(
        channel: 11, signal: -45, phy: .le2M, crc: .valid, fromCentral: true, mic: .valid, decryptedBySniffer: true, eventCounter: 0x1234),
      dataPacket),
    airRecord(base + 6_000, AirPacketHeader(channel: 37, signal: -52, phy: .le1M, crc: .valid), advertisingPacket),
    airRecord(base + 7_000, AirPacketHeader(), dataPacket),
  ]

  static func airRecord(_ timestamp: Int64, _ header: AirPacketHeader, _ packet: [UInt8]) -> CaptureRecord {
    var bytes: [UInt8] = []
    header.append(to: &bytes)
    return CaptureRecord(timestamp: timestamp, direction: nil, kind: .airPacket, bytes: bytes + packet)
  }

  static func bytes(_ format: CaptureWriteFormat, _ records: [CaptureRecord] = records) -> [UInt8] {
    var writer = CaptureWriter(format: format)
    for record in records { writer.write(record) }
    return writer.output
  }

  /// Writes `bytes` to a fresh temporary file and returns its path.
  static func temporaryFile(_ bytes: [UInt8], name: String = "capture") -> String {
    var template = Array("/tmp/bledissect-\(name)-XXXXXX".utf8CString)
    let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
    precondition(fd >= 0, "mkstemp failed")
    bytes.withUnsafeBufferPointer { _ = write(fd, $0.baseAddress, $0.count) }
    close(fd)
    return template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
  }

  /// Reads every record of `bytes` through a pipe, as standard input would be read.
  static func readThroughPipe(_ bytes: [UInt8]) throws(CaptureError) -> (CaptureFormat, [CaptureRecord]) {
    var fds: [Int32] = [0, 0]
    precondition(pipe(&fds) == 0)
    let writeEnd = fds[1]
    let copy = bytes
    let writer = Thread { copy.withUnsafeBufferPointer { buffer in
      var offset = 0
      while offset < buffer.count {
        let n = write(writeEnd, buffer.baseAddress! + offset, buffer.count - offset)
        if n <= 0 { break }
        offset += n
      }
      close(writeEnd)
    } }
    writer.start()
    let reader = try CaptureFile.open(InputSource(descriptor: fds[0], name: "pipe", owns: true))
    var records: [CaptureRecord] = []
    while let record = try reader.next() { records.append(record) }
    return (reader.format, records)
  }

  struct ReadResult {
    var format: CaptureFormat?
    var records: [CaptureRecord] = []
    var error: CaptureError?
  }

  /// Reads a file to its end or its first error, keeping what came before.
  static func read(path: String) -> ReadResult {
    var result = ReadResult()
    do {
      let reader = try CaptureFile.open(path: path)
      result.format = reader.format
      while let record = try reader.next() { result.records.append(record) }
    } catch {
      result.error = error
    }
    return result
  }

  static func read(_ bytes: [UInt8]) -> ReadResult {
    let path = temporaryFile(bytes)
    defer { unlink(path) }
    return read(path: path)
  }
}

