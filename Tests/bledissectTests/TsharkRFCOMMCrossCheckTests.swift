import Foundation
import Testing
import BLECore
import BLEDecoder
import BLETestSupport

/// RFCOMM (PSM 0x0003 on BR/EDR), frame by frame against Wireshark's `btrfcomm` fields on the
/// corpus captures that carry it: the frames decoded as RFCOMM, DLCI, server channel,
/// direction bit, C/R, frame type, P/F, length, credits, FCS; the multiplexer messages' type,
/// C/R, length, DLCI and channel, PN's frame type, convergence layer, priority, T1, maximum
/// frame size, N2 and initial credits, MSC's V.24 signals and break length; and the UIH data
/// (tshark's HSP/HFP text, unescaped, or its data bytes). Skipped without tshark or the corpus.
@Suite(.enabled(if: which("tshark") != nil, "tshark is not installed"))
struct TsharkRFCOMMCrossCheckTests {
  static let comparison = TsharkFieldComparison(filter: "btrfcomm", pairs: [
    .init(["btrfcomm.dlci"], "dlci"),
    .init(["btrfcomm.channel"], "channel"),
    .init(["btrfcomm.direction"], "direction_bit"),
    .init(["btrfcomm.cr"], "cr"),
    .init(["btrfcomm.frame_type"], "frame_type"),
    .init(["btrfcomm.pf"], "pf"),
    .init(["btrfcomm.len"], "length"),
    .init(["btrfcomm.credits"], "credits"),
    .init(["btrfcomm.fcs"], "fcs"),
    .init(["btrfcomm.mcc.cmd"], "mcc.message"),
    .init(["btrfcomm.mcc.cr"], "mcc.command"),
    .init(["btrfcomm.mcc.len"], "mcc.length"),
    .init(["btrfcomm.mcc.dlci"], "mcc.dlci"),
    .init(["btrfcomm.mcc.channel"], "mcc.channel"),
    .init(["btrfcomm.pn.i"], "mcc.frame_type"),
    .init(["btrfcomm.pn.cl"], "mcc.convergence_layer"),
    .init(["btrfcomm.priority"], "mcc.priority"),
    .init(["btrfcomm.acknowledgement_timer_t1"], "mcc.ack_timer"),
    .init(["btrfcomm.max_frame_size"], "mcc.max_frame_size"),
    .init(["btrfcomm.max_retrans"], "mcc.max_retransmissions"),
    .init(["btrfcomm.error_recovery_mode"], "mcc.initial_credits"),
    .init(["btrfcomm.msc.fc"], "mcc.fc"),
    .init(["btrfcomm.msc.rtc"], "mcc.rtc"),
    .init(["btrfcomm.msc.rtr"], "mcc.rtr"),
    .init(["btrfcomm.msc.ic"], "mcc.ic"),
    .init(["btrfcomm.msc.dv"], "mcc.dv"),
    .init(["btrfcomm.msc.bl"], "mcc.break_length"),
    .init(["bthsp.data", "bthfp.data", "data.data", "btspp.data"], "payload", kinds: [.escapedText, .escapedText, .hex, .hex]),
  ])

  /// Our values of a frame by the pairs' names (`mcc.` for the multiplexer message's); nil when
  /// it is no RFCOMM frame.
  static func ours(_ frame: DissectedFrame) -> [String: [String]]? {
    var values: [String: [String]] = [:]
    let found = TsharkFieldComparison.walk(frame.fields, group: "rfcomm") { path, field in
      guard let text = TsharkFieldComparison.ourText(field.value) else { return }
      let key = (path.last == "mcc" ? "mcc." : "") + field.key.description
      switch key {
      // UIH data, text or not, as the hex of its bytes.
      case "text": values["payload", default: []].append(Hex.string(Array(text.utf8)))
      case "data": values["payload", default: []].append(text)
      default: values[key, default: []].append(text)
      }
    }
    return found ? values : nil
  }

  static func compare(_ path: String) throws -> TsharkFieldComparison.Report {
    try comparison.compare(path, ours: ours)
  }

  static let captures: [(path: String, keys: [String])] = [
    ("miband3_blproject/ue_boom_classic_nopairing.pcapng", ["dlci", "frame_type", "credits", "fcs", "mcc.message", "mcc.max_frame_size", "mcc.rtc", "payload"]),
    ("btstack/btstack_hfp_test3.pklg", ["dlci", "credits", "fcs", "mcc.convergence_layer", "mcc.dv", "payload"]),
    ("ix7_scooter/ix7_scooter_nus_btsnoop_hci.log", ["dlci", "credits", "fcs", "mcc.initial_credits", "payload"]),
  ]

  /// Every capture agrees with tshark on every compared value, and compares what it is here to
  /// compare (so the test cannot pass by comparing nothing).
  @Test(
    .enabled(if: TsharkRFCOMMCrossCheckTests.captures.allSatisfy { sharedCorpusHas($0.path) }, "an RFCOMM capture of ../shared/corpus is absent"),
    arguments: TsharkRFCOMMCrossCheckTests.captures)
  func capturesAgree(path: String, keys: [String]) throws {
    let report = try Self.compare(corpusRoot!.appendingPathComponent(path).path)
    #expect(report.frames > 0, "\(path): no RFCOMM frame")
    // No difference is accepted: every value agrees.
    #expect(report.explained.isEmpty)
    #expect(report.disagreements.isEmpty, "\(path): \(report.disagreements.count) disagreements, first: \(report.disagreements.prefix(5))")
    for key in keys { #expect(report.compared[key, default: 0] > 0, "\(path): no \(key) compared") }
    print("\(path): \(report.frames) RFCOMM frames, \(report.totalAgreed) of \(report.total) values agree: \(report.compared.sorted { $0.key < $1.key })")
  }
}
