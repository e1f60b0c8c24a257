import Foundation
import Testing
import BLECapture
import BLECore
import BLEDecoder
import BLETestSupport

/// Every ATT frame's opcode, handle and value must equal what Wireshark's dissector reports
/// (`tshark -T fields -e btatt.opcode -e btatt.handle -e btatt.value`), except where tshark is
/// provably wrong; each such case is classified and explained here.
@Suite(.enabled(if: which("tshark") != nil, "tshark is not installed"))
struct TsharkATTCrossCheckTests {
  struct TsharkATT {
    var opcode: UInt64
    var handles: [UInt64]
    var value: String
  }

  static func tsharkATT(_ path: String) throws -> [Int: TsharkATT] {
    let (status, data) = try runProgram(which("tshark")!, [
      "-n", "-r", path, "-Y", "btatt", "-T", "fields", "-E", "separator=/t",
      "-e", "frame.number", "-e", "btatt.opcode", "-e", "btatt.handle", "-e", "btatt.value",
    ])
    #expect(status == 0)
    var result: [Int: TsharkATT] = [:]
    for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
      let cells = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
      guard cells.count >= 4, let frame = Int(cells[0]) else { continue }
      // A frame may hold several ATT PDUs in tshark's view only when it misparses; keep the first.
      let opcode = cells[1].split(separator: ",").first.flatMap { UInt64($0.dropFirst(2), radix: 16) } ?? 0
      let handles = cells[2].split(separator: ",").compactMap { UInt64($0.dropFirst(2), radix: 16) }
      result[frame] = TsharkATT(opcode: opcode, handles: handles, value: cells[3].split(separator: ",").first.map(String.init) ?? "")
    }
    return result
  }

  struct Report {
    var compared = 0
    var agreed = 0
    var explained: [String: Int] = [:]
    var disagreements: [String] = []
  }

  static func compare(_ path: String) throws -> Report {
    let theirs = try tsharkATT(path)
    let reader = try CaptureFile.open(path: path)
    var dissector = Dissector()
    var frame = DissectedFrame()
    var number = 0
    var report = Report()
    // Our handle per frame for request PDUs, to check tshark's pairing of responses.
    var requestHandles: [Int: UInt64] = [:]
    var requestTypes: [Int: UInt16] = [:]
    while let record = try reader.next() {
      number += 1
      dissector.dissect(record, number: number, into: &frame)
      let fields = frame.fields
      let ours = fields.number("att.opcode")
      if let handle = fields.number("att.handle"), ours.map({ ATTMethodKind(opcode: UInt8($0)) == .request || ATTMethodKind(opcode: UInt8($0)) == .indication }) == true {
        requestHandles[number] = handle
      }
      if case .uuid(let type, _)? = fields.lookup("att.type"), let short = type.uuid16 { requestTypes[number] = short }
      guard let tshark = theirs[number] else {
        if ours != nil {
          if let cid = fields.number("l2cap.cid"), cid >= 0x40 {
            report.explained["ATT on an EATT bearer (tshark 4.0 does not decode ATT over ECRED channels)", default: 0] += 1
          } else {
            report.disagreements.append("#\(number): we decode ATT \(String(ours!, radix: 16)), tshark shows none")
          }
        }
        continue
      }
      report.compared += 1
      guard let ours else {
        if case .vendorDebugRecord = frame.header {
          // Qualcomm's debug records on ACL handle 0x0EDC, which no connection event opened:
          // tshark reads L2CAP into them and finds "ATT" where a channel number happens to be 4.
          report.explained["a vendor debug record on handle 0x0EDC (not a connection: tshark decodes its bytes as L2CAP)", default: 0] += 1
          continue
        }
        report.disagreements.append("#\(number): tshark decodes ATT \(String(tshark.opcode, radix: 16)), we do not")
        continue
      }
      if ours != tshark.opcode {
        report.disagreements.append("#\(number): opcode ours 0x\(String(ours, radix: 16)) tshark 0x\(String(tshark.opcode, radix: 16))")
        continue
      }
      var agreed = true
      let handle = fields.number("att.handle")
      if let handle, tshark.handles.count == 1, handle != tshark.handles[0] {
        if let request = fields.number("att.request_frame"), requestHandles[Int(request)] == handle {
          report.explained["response paired with the wrong request by tshark (ours names the request frame, whose handle is the one we show)", default: 0] += 1
          agreed = false
        } else {
          report.disagreements.append("#\(number) op 0x\(String(ours, radix: 16)): handle ours \(String(handle, radix: 16)) tshark \(String(tshark.handles[0], radix: 16))")
          continue
        }
      } else if handle == nil, !tshark.handles.isEmpty {
        // List responses: tshark lists the handles of the entries (and value handles).
        let listed = Set(fields.allNumbers(named: ["handle", "value_handle"], under: "att"))
        if ours == 0x0F {
          report.explained["Read Multiple Response: tshark gives the values to one handle; the PDU carries no handles", default: 0] += 1
          agreed = false
        } else if !Set(tshark.handles).isSubset(of: listed) {
          if ours == 0x09, let request = fields.number("att.request_frame"), requestTypes[Int(request)] == 0x2803,
            fields.allNumbers(named: ["value_handle"], under: "att").count == listed.count / 2 {
            // The request (#request) asked for characteristic declarations, and each entry is one.
            report.explained["Read By Type Response decoded by tshark against another request's type", default: 0] += 1
            agreed = false
          } else {
            report.disagreements.append("#\(number) op 0x\(String(ours, radix: 16)): handles ours \(listed.sorted()) tshark \(tshark.handles)")
            continue
          }
        }
      }
      if !tshark.value.isEmpty {
        let value = fields.string("att.part") ?? fields.uuidBytes("att.value") ?? fields.string("att.value") ?? ""
        // Read By Type Response: tshark's first value is the first entry's.
        let entryValues = fields.allBytes(named: "value", under: "att")
        if value != tshark.value && !(value.isEmpty && entryValues.first == tshark.value) {
          if ours == 0x0F, value.hasSuffix(tshark.value) {
            report.explained["Read Multiple Response: tshark cannot know the values' lengths and gives the second handle every byte after the first value", default: 0] += 1
            agreed = false
          } else {
            report.disagreements.append("#\(number) op 0x\(String(ours, radix: 16)): value ours \(value) tshark \(tshark.value)")
            continue
          }
        }
      }
      if agreed { report.agreed += 1 }
    }
    return report
  }

  static let samples = [
    "hr_strap_session.btsnoop", "hr_strap_peripheral.btsnoop", "two_straps.btsnoop", "reconnect_cached.btsnoop",
    "long_values.btsnoop", "long_values_peripheral.btsnoop", "vendor_services.btsnoop", "le_coc.btsnoop", "eatt.btsnoop",
  ]

  @Test(arguments: samples)
  func sampleCapturesAgree(name: String) throws {
    let report = try Self.compare(capturePath(name))
    #expect(report.disagreements.isEmpty, "\(name): \(report.disagreements.prefix(5))")
    // le_coc.btsnoop carries no ATT after discovery-free setup; the others do.
    if name != "le_coc.btsnoop" { #expect(report.compared > 0) }
    if !report.explained.isEmpty { print("\(name): \(report.agreed)/\(report.compared) agree; tshark is wrong: \(report.explained)") }
  }

  @Test(.enabled(if: corpusRoot != nil, "../shared/corpus is absent"), arguments: CorpusTests.entries.filter { !$0.isLinkLayer })
  func corpusAgrees(entry: CorpusTests.Entry) throws {
    let report = try Self.compare(corpusRoot!.appendingPathComponent(entry.path).path)
    #expect(report.disagreements.isEmpty, "\(entry.path): \(report.disagreements.count) disagreements, first: \(report.disagreements.prefix(5))")
    if !report.explained.isEmpty { print("\(entry.path): \(report.agreed)/\(report.compared) agree; tshark is wrong: \(report.explained)") }
  }
}
