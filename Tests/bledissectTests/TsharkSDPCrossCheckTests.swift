import Foundation
import Testing
import BLECore
import BLEDecoder
import BLETestSupport

/// SDP (PSM 0x0001 on BR/EDR), frame by frame against Wireshark's `btsdp` fields on the corpus
/// captures that carry it: the frames decoded as SDP, PDU IDs, transaction IDs, parameter
/// lengths, error codes, record counts, maximum counts, attribute list byte counts, the
/// continuation state's length, attribute IDs and ranges, every UUID, the type of every data
/// element (responses split over several PDUs are compared on the frame that completes them,
/// where both join them), record handles, RFCOMM channels, PSMs and service names. Skipped
/// without tshark or the corpus.
@Suite(.enabled(if: which("tshark") != nil, "tshark is not installed"))
struct TsharkSDPCrossCheckTests {
  static let comparison = TsharkFieldComparison(filter: "btsdp", pairs: [
    .init(["btsdp.pdu"], "pdu"),
    .init(["btsdp.tid"], "transaction"),
    .init(["btsdp.len"], "parameter_length"),
    .init(["btsdp.error_code"], "error"),
    .init(["btsdp.ssr.total_count"], "total_count"),
    .init(["btsdp.ssr.current_count"], "current_count"),
    .init(["btsdp.maximum_service_record_count"], "max_record_count"),
    .init(["btsdp.maximum_attribute_byte_count"], "max_attribute_byte_count"),
    .init(["btsdp.attribute_list_byte_count"], "attribute_list_byte_count"),
    .init(["btsdp.continuation_state.length"], "continuation_length"),
    .init(["btsdp.attribute_range.from"], "range_start"),
    .init(["btsdp.attribute_range.to"], "range_end"),
    .init(["btsdp.service.attribute"], "attribute"),
    .init(
      ["btsdp.data_element.value.uuid_16", "btsdp.data_element.value.uuid_32", "btsdp.data_element.value.uuid_128", "btsdp.data_element.value.custom_uuid"],
      "uuid", .hex),
    .init(["btsdp.data_element.type"], "element_type"),
    .init(["btsdp.service_record_handle"], "record_handle"),
    .init(["btsdp.protocol.channel"], "rfcomm_channel"),
    .init(["btsdp.protocol.psm"], "psm"),
    .init(["btsdp.service_name"], "service_name", .text),
  ])

  /// The data element type each of our keys stands for (Core Vol 3 Part B §3.2): our lists
  /// (`records`, `attributes`, the pattern and the ID list) are sequences; an attribute ID, and
  /// a range's first ID (the range is one uint32), unsigned integers.
  static func elementType(_ key: String) -> Int? {
    switch key {
    case "nil": return 0
    case "uint8", "uint16", "uint32", "uint64", "uint128", "attribute", "range_start": return 1
    case "int8", "int16", "int32", "int64", "int128": return 2
    case "uuid": return 3
    case "text", "text_bytes": return 4
    case "bool": return 5
    case "sequence", "records", "attributes", "service_search_pattern", "attribute_ids": return 6
    case "alternative": return 7
    case "url", "url_bytes": return 8
    default: return nil
    }
  }

  /// Our values of a frame, by the pairs' names; nil when it is no SDP PDU.
  static func ours(_ frame: DissectedFrame) -> [String: [String]]? {
    var values: [String: [String]] = [:]
    var attribute: UInt64?
    let found = TsharkFieldComparison.walk(frame.fields, group: "sdp") { path, field in
      let key = field.key.description
      // Objects are our wrappers (an attribute, an element of a sequence), not elements.
      if case .object = field.value { return }
      if let type = elementType(key) { values["element_type", default: []].append(String(type)) }
      if key == "undecoded_type", let text = TsharkFieldComparison.ourText(field.value) { values["element_type", default: []].append(text) }
      guard let text = TsharkFieldComparison.ourText(field.value) else { return }
      switch key {
      case "pdu", "transaction", "parameter_length", "error", "total_count", "current_count", "max_record_count", "max_attribute_byte_count",
        "attribute_list_byte_count", "range_start", "range_end", "uuid":
        values[key, default: []].append(text)
      case "attribute":
        values[key, default: []].append(text)
        attribute = UInt64(text)
      case "record_handle":
        values[key, default: []].append(text)
      case "continuation":
        if case .bytes(let bytes) = field.value { values["continuation_length", default: []].append(String(bytes.count)) }
      case "handle" where path.last == "record_handles":
        values["record_handle", default: []].append(text)
      case "uint32" where attribute == 0 && path.last == "attribute":
        values["record_handle", default: []].append(text)
      case "text" where path.last == "attribute" && attribute == 0x0100:
        values["service_name", default: []].append(text)
      default:
        if field.label.description == "Channel" { values["rfcomm_channel", default: []].append(text) }
        if field.label.description == "PSM" { values["psm", default: []].append(text) }
      }
    }
    return found ? values : nil
  }

  static func compare(_ path: String) throws -> TsharkFieldComparison.Report {
    try comparison.compare(path, ours: ours, explain: explain)
  }

  /// Differences where the bytes show tshark 4.0 wrong:
  /// - A ProtocolDescriptorList whose sequences have 16-bit sizes (header 0x36, as BTstack
  ///   writes them): tshark reads the RFCOMM descriptor `36 00 05 19 00 03 08 01` as RFCOMM
  ///   without its channel, then a third descriptor whose UUID 0x0900 is the next attribute's
  ///   header (`09 00 05`). The list's size (14 = 6 + 8: the L2CAP and the RFCOMM descriptors)
  ///   and the RFCOMM descriptor's (5: the UUID and a uint8) prove two descriptors and channel
  ///   1, as we read them (Core Vol 3 Part B §3.3, §5.1.5); tshark's misreading also adds a Nil
  ///   element to its count of types.
  /// - ServiceName sent with a NUL at the end (`"OBEX Object Push\0"`, 17 bytes): a text
  ///   string is its bytes, with no terminator (§3.5); tshark shows it up to the NUL. Our field
  ///   keeps the 17 bytes (text shows the NUL escaped), and the header line drops the NUL:
  ///   ours without trailing NULs equals tshark's.
  static func explain(_ frame: DissectedFrame, _ pair: TsharkFieldComparison.Pair, _ ours: [String], _ theirs: [String]) -> String? {
    let sixteenBitRFCOMM: [UInt8] = [0x36, 0x00, 0x05, 0x19, 0x00, 0x03, 0x08]
    let bytes = frame.record.bytes
    let hasSixteenBitRFCOMM = bytes.count >= sixteenBitRFCOMM.count
      && (0...(bytes.count - sixteenBitRFCOMM.count)).contains { bytes[$0..<($0 + sixteenBitRFCOMM.count)].elementsEqual(sixteenBitRFCOMM) }
    if hasSixteenBitRFCOMM {
      if pair.ours == "uuid", (ours + ["0900"]).sorted() == theirs.sorted() {
        return "RFCOMM descriptor in a 16-bit-sized sequence: tshark shows a third protocol, UUID 0x0900 (the next attribute's bytes)"
      }
      if pair.ours == "element_type", (ours + ["0"]).sorted() == theirs.sorted() {
        return "RFCOMM descriptor in a 16-bit-sized sequence: tshark counts a Nil element the bytes do not hold"
      }
      if pair.ours == "rfcomm_channel", theirs.isEmpty, ours.count == 1 {
        return "RFCOMM descriptor in a 16-bit-sized sequence: tshark shows no channel"
      }
    }
    if pair.ours == "service_name", ours.map({ String($0.reversed().drop { $0 == "\u{0}" }.reversed()) }) == theirs, ours != theirs {
      return "ServiceName sent with a NUL at its end: tshark cuts the string there"
    }
    return nil
  }

  static let captures: [(path: String, keys: [String])] = [
    ("miband3_blproject/ue_boom_classic_nopairing.pcapng", ["pdu", "transaction", "continuation_length", "attribute", "uuid", "element_type", "rfcomm_channel", "psm", "service_name", "range_start"]),
    // tshark shows no RFCOMM channel here (see `explain`): none is compared.
    ("btstack/btstack_hfp_test3.pklg", ["pdu", "uuid", "element_type", "service_name"]),
    ("cheoljun99/android_classic_nsec.pcap", ["pdu", "uuid", "element_type", "rfcomm_channel", "service_name"]),
    ("ix7_scooter/ix7_scooter_nus_btsnoop_hci.log", ["pdu", "uuid", "element_type", "rfcomm_channel"]),
    ("miband3_blproject/le_scan_a2_scanwcap.pcapng", ["pdu", "uuid", "attribute"]),
  ]

  /// Every capture agrees with tshark on every compared value, and compares what it is here to
  /// compare (so the test cannot pass by comparing nothing).
  @Test(
    .enabled(if: TsharkSDPCrossCheckTests.captures.allSatisfy { sharedCorpusHas($0.path) }, "an SDP capture of ../shared/corpus is absent"),
    arguments: TsharkSDPCrossCheckTests.captures)
  func capturesAgree(path: String, keys: [String]) throws {
    let report = try Self.compare(corpusRoot!.appendingPathComponent(path).path)
    #expect(report.frames > 0, "\(path): no SDP frame")
    #expect(report.disagreements.isEmpty, "\(path): \(report.disagreements.count) disagreements, first: \(report.disagreements.prefix(5))")
    for key in keys { #expect(report.compared[key, default: 0] > 0, "\(path): no \(key) compared") }
    print("\(path): \(report.frames) SDP frames, \(report.totalAgreed) of \(report.total) values agree: \(report.compared.sorted { $0.key < $1.key })")
    if !report.explained.isEmpty { print("\(path): tshark is wrong or silent: \(report.explained)") }
  }
}
