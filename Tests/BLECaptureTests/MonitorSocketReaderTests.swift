#if canImport(Glibc)
import Glibc
#endif
import BLECore
import Foundation
import Testing

@testable import BLECapture

/// The monitor channel's datagrams become the records a `btmon -w` file holds. The kernel side
/// is one end of a socket pair here (our machines have no Bluetooth); `SO_TIMESTAMP` works on
/// it as on the monitor socket. End to end through `socket()` itself: the LD_PRELOAD stand-in
/// (Tests/Support/monitor_standin.c), with `live`.
@Suite struct MonitorSocketReaderTests {
  #if os(Linux)
  static func message(_ opcode: UInt16, index: UInt16, _ payload: [UInt8]) -> [UInt8] {
    [UInt8(opcode & 0xFF), UInt8(opcode >> 8), UInt8(index & 0xFF), UInt8(index >> 8), UInt8(payload.count & 0xFF), UInt8(payload.count >> 8)] + payload
  }

  @Test func datagramsBecomeRecords() throws {
    var pair: [Int32] = [0, 0]
    #expect(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &pair) == 0)
    let reader = MonitorSocketReader(descriptor: pair[0])
    let messages: [[UInt8]] = [
      Self.message(0, index: 0, [0x00, 0x01, 0x52, 0x48, 0x00, 0xED, 0xB1, 0xD0] + Array("hci0\0\0\0\0".utf8)),  // NEW_INDEX
      Self.message(2, index: 0, [0x03, 0x0C, 0x00]),  // Reset
      Self.message(3, index: 0, [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00]),  // its Command Complete
      Self.message(5, index: 1, [0x40, 0x20, 0x03, 0x00, 0xAA, 0xBB, 0xCC]),  // ACL in, on hci1
      Self.message(12, index: 0xFFFF, Array("Bluetooth subsystem version 2.22\0".utf8)),
    ]
    let before = Date().timeIntervalSince1970
    for message in messages { _ = message.withUnsafeBytes { send(pair[1], $0.baseAddress, $0.count, 0) } }
    close(pair[1])
    var records: [CaptureRecord] = []
    while let record = try reader.next() { records.append(record) }
    #expect(records.map(\.kind) == [.indexAdded, .command, .event, .acl, .note(.system)])
    #expect(records[3].direction == .controllerToHost && records[3].adapter == 1 && records[3].bytes == [0x40, 0x20, 0x03, 0x00, 0xAA, 0xBB, 0xCC])
    #expect(records[1].bytes == [0x03, 0x0C, 0x00] && records[1].direction == .hostToController)
    // Stamped by the kernel when sent: within this test's run.
    let stamp = Double(records[0].timestamp) / 1_000_000
    #expect(stamp >= before - 1 && stamp <= Date().timeIntervalSince1970 + 1)
    #expect(reader.received == 5 && reader.malformed == 0)
  }

  /// The datagram parsing the socket reader and the `monitor` fuzz target share.
  @Test func datagramParsingWithoutASocket() {
    var record = CaptureRecord(timestamp: 0, adapter: 0, direction: nil, kind: .other(0), bytes: [9, 9, 9, 9])
    func parse(_ datagram: [UInt8]) -> MonitorSocketReader.Datagram {
      MonitorSocketReader.parse(datagram: datagram[...], timestamp: 42, into: &record)
    }
    #expect(parse([]) == .tooShort)
    #expect(parse([0x02, 0x00, 0x00, 0x00, 0x03]) == .tooShort)
    #expect(parse(Self.message(2, index: 3, [0x03, 0x0C, 0x00])) == .whole)
    #expect(record.kind == .command && record.direction == .hostToController && record.adapter == 3)
    #expect(record.bytes == [0x03, 0x0C, 0x00] && record.originalLength == 3 && record.timestamp == 42)
    // The header says 5 bytes, the datagram holds 2: the datagram's bytes, counted malformed.
    #expect(parse([0x05, 0x00, 0xFF, 0xFF, 0x05, 0x00, 0xAA, 0xBB]) == .lengthDisagrees)
    #expect(record.kind == .acl && record.direction == .controllerToHost && record.adapter == 0xFFFF && record.bytes == [0xAA, 0xBB])
    // A header alone; an opcode nobody defined.
    #expect(parse([0x34, 0x12, 0x00, 0x00, 0x00, 0x00]) == .whole)
    #expect(record.bytes.isEmpty && record.originalLength == 0)
    // Time stamps saturate instead of trapping.
    #expect(MonitorSocketReader.timestamp(timeval(tv_sec: .max, tv_usec: .max)) == .max)
    #expect(MonitorSocketReader.timestamp(timeval(tv_sec: .min, tv_usec: .min)) == .min)
    #expect(MonitorSocketReader.timestamp(timeval(tv_sec: 1_700_000_000, tv_usec: 5)) == 1_700_000_000_000_005)
  }

  @Test func openingFailuresSayWhatToDo() {
    #expect(MonitorSocketReader.failure("socket", EAFNOSUPPORT).message.contains("no Bluetooth sockets"))
    #expect(MonitorSocketReader.failure("bind", EPERM).message.contains("CAP_NET_RAW: run with sudo"))
    #expect(MonitorSocketReader.failure("bind", EACCES).message.contains("setcap cap_net_raw+ep"))
  }
  #endif
}
