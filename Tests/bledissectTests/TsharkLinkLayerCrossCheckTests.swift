import Foundation
import Testing
import BLECapture
import BLECore
import BLEDecoder
import BLETestSupport

/// Every link-layer frame of the air captures in `../shared/corpus/ll_sniffer/` must carry the
/// advertising PDU type, LLID and LL control opcode that Wireshark's dissector reports
/// (`btle.advertising_header.pdu_type`, `btle.data_header.llid`, `btle.control_opcode`),
/// except where tshark is shown wrong:
/// - once a link's encryption starts (LL_START_ENC_REQ), every non-empty PDU is encrypted
///   (Core Vol 6 Part B §5.1.3.1: the central's LL_START_ENC_RSP is the first it encrypts).
///   tshark does not follow this and reads the encrypted byte after the header as an LL
///   control opcode: 0x78, 0xB4, 0xF9 and others no opcode has.
/// Ubertooth's PPI captures carry the packet under PPI's DLT 147 (a user DLT): tshark is told
/// to read it as `btle`, as a user of it must.
@Suite(.enabled(if: which("tshark") != nil && corpusRoot != nil, "needs tshark and ../shared/corpus"))
struct TsharkLinkLayerCrossCheckTests {
  static var files: [String] {
    guard let root = corpusRoot?.appendingPathComponent("ll_sniffer") else { return [] }
    return ((try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []).sorted().map { root.appendingPathComponent($0).path }
  }

  struct Theirs: Equatable {
    var pduType: UInt64?
    var llid: UInt64?
    var controlOpcode: UInt64?
  }

  static func tshark(_ path: String) throws -> [Int: Theirs] {
    let (status, data) = try runProgram(which("tshark")!, [
      "-n", "-o", #"uat:user_dlts:"User 0 (DLT=147)","btle","0","","0","""#,
      "-r", path, "-Y", "btle", "-T", "fields", "-E", "separator=/t", "-e", "frame.number",
      "-e", "btle.advertising_header.pdu_type", "-e", "btle.data_header.llid", "-e", "btle.control_opcode",
    ])
    #expect(status == 0)
    var result: [Int: Theirs] = [:]
    func hex(_ cell: String) -> UInt64? { cell.split(separator: ",").first.flatMap { UInt64($0.dropFirst(2), radix: 16) } }
    for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
      let cells = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
      guard cells.count >= 4, let frame = Int(cells[0]) else { continue }
      result[frame] = Theirs(pduType: hex(cells[1]), llid: hex(cells[2]), controlOpcode: hex(cells[3]))
    }
    return result
  }

  @Test(arguments: files)
  func linkLayerHeadersEqualTsharks(path: String) throws {
    let theirs = try Self.tshark(path)
    let reader = try CaptureFile.open(path: path)
    var dissector = Dissector()
    var frame = DissectedFrame()
    var number = 0
    var compared = 0
    var disagreements: [String] = []
    var encryptedReadAsControl = 0
    var crcFailed = 0
    var decrypted = 0
    while let record = try reader.next() {
      number += 1
      dissector.dissect(record, number: number, into: &frame)
      guard let tshark = theirs[number] else { continue }
      compared += 1
      let ours = Theirs(
        pduType: frame.fields.number("ll.pdu_type"), llid: frame.fields.number("ll.llid"),
        controlOpcode: frame.fields.number("ll.control_opcode"))
      if ours != tshark {
        if case .damagedAirPacket = frame.header, frame.air?.header.crc == .invalid, ours == Theirs() {
          // The sniffer says the CRC is wrong. Its receiver dropped it, unacknowledged, and a good
          // copy follows (Core Vol 6 Part B §4.5.9), so we decode nothing of it; tshark decodes
          // it all the same.
          crcFailed += 1
        } else if frame.air?.keySource != nil, ours.llid == tshark.llid {
          // We decrypted it (the STK of a sniffed legacy pairing); tshark reads the encrypted
          // first byte as an opcode.
          decrypted += 1
        } else if frame.fields.lookup("ll.encrypted") != nil, ours.controlOpcode == nil, tshark.controlOpcode != nil, ours.llid == tshark.llid {
          encryptedReadAsControl += 1
        } else {
          disagreements.append("#\(number): ours \(ours), tshark \(tshark)")
        }
      }
    }
    #expect(compared == theirs.count)
    #expect(compared > 0)
    // What tshark takes for control opcodes on encrypted links is not one (or not the one sent).
    #expect(encryptedReadAsControl <= compared / 10)
    #expect(crcFailed <= compared / 100)
    #expect(decrypted <= 3)
    #expect(disagreements.isEmpty, "\(URL(fileURLWithPath: path).lastPathComponent): \(disagreements.count) of \(compared): \(disagreements.prefix(8))")
  }
}
