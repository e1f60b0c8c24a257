import Foundation
import Testing
import BLECapture
import BLECore
import BLEDecoder
import BLETestSupport

/// BR/EDR (Classic) HCI commands, events and return parameters, frame by frame against
/// Wireshark's `bthci_cmd` / `bthci_evt` fields: addresses, handles, names, roles, modes and
/// intervals, link keys and their types, RSSI, class of device, clock offsets, packet types,
/// inquiry and scan parameters, and the names in extended inquiry responses. Where we disagree
/// with tshark, the test says who is right and why (Core Vol 4 Part E). Skipped without tshark
/// or without the corpus.
@Suite(.enabled(if: which("tshark") != nil, "tshark is not installed"))
struct TsharkClassicCrossCheckTests {
  enum Kind { case number, address, text, bytes }

  /// tshark fields whose values, together, must equal ours under `ours` keys (any depth of the
  /// `hci` group; EIR structures apart, under `eir_name`).
  struct Pair {
    var tshark: [String]
    var ours: [String]
    var kind: Kind
    /// What the report calls it.
    var name: String
    /// Also a disagreement: a value of ours where tshark shows none.
    var bothWays: Bool

    init(tshark: [String], ours: [String], kind: Kind, name: String? = nil) {
      self.tshark = tshark
      self.ours = ours
      self.kind = kind
      self.name = name ?? ours[0]
      bothWays = ours.count == 1 && Self.bothWays.contains(ours[0])
    }

    static let bothWays: Set = [
      "address", "handle", "role", "mode", "key_type", "link_key", "rssi", "class_of_device", "clock_offset",
      "page_scan_repetition_mode", "packet_type", "max_slots", "link_type", "numeric_value", "io_capability",
    ]
  }

  static let pairs: [Pair] = [
    Pair(tshark: ["bthci_cmd.bd_addr", "bthci_evt.bd_addr"], ours: ["address"], kind: .address),
    Pair(tshark: ["bthci_cmd.connection_handle", "bthci_evt.connection_handle"], ours: ["handle"], kind: .number),
    Pair(tshark: ["bthci_evt.remote_name", "bthci_cmd.device_name", "bthci_evt.device_name"], ours: ["name"], kind: .text),
    Pair(tshark: ["bthci_evt.role", "bthci_cmd.role", "bthci_cmd.acr.role"], ours: ["role"], kind: .number),
    Pair(tshark: ["bthci_evt.current_mode"], ours: ["mode"], kind: .number),
    // tshark names the Mode Change interval and the page and inquiry scan intervals alike.
    Pair(tshark: ["bthci_evt.interval", "bthci_cmd.interval"], ours: ["interval", "page_scan_interval", "inquiry_scan_interval"], kind: .number, name: "interval"),
    Pair(tshark: ["bthci_evt.window", "bthci_cmd.window"], ours: ["page_scan_window", "inquiry_scan_window"], kind: .number, name: "window"),
    Pair(tshark: ["bthci_evt.key_type"], ours: ["key_type"], kind: .number),
    Pair(tshark: ["bthci_cmd.link_key", "bthci_evt.link_key"], ours: ["link_key"], kind: .bytes),
    Pair(tshark: ["bthci_evt.rssi"], ours: ["rssi"], kind: .number),
    Pair(tshark: ["btcommon.cod.class_of_device"], ours: ["class_of_device"], kind: .number),
    Pair(tshark: ["bthci_cmd.clock_offset", "bthci_evt.clock_offset"], ours: ["clock_offset"], kind: .number),
    Pair(tshark: ["bthci_cmd.page_scan_repetition_mode", "bthci_evt.page_scan_repetition_mode"], ours: ["page_scan_repetition_mode"], kind: .number),
    Pair(tshark: ["bthci_cmd.packet_type", "bthci_evt.packet_type", "bthci_cmd.sco_packet_type"], ours: ["packet_type"], kind: .number),
    Pair(tshark: ["bthci_cmd.lap", "bthci_cmd.num_iac_lap", "bthci_evt.iac_lap"], ours: ["lap", "iac_laps"], kind: .number, name: "lap"),
    Pair(tshark: ["bthci_cmd.inq_length"], ours: ["inquiry_length"], kind: .number),
    Pair(tshark: ["bthci_cmd.num_responses", "bthci_evt.num_responses"], ours: ["num_responses"], kind: .number),
    Pair(tshark: ["bthci_evt.max_slots"], ours: ["max_slots"], kind: .number),
    Pair(tshark: ["bthci_evt.link_type", "bthci_evt.sync_link_type"], ours: ["link_type"], kind: .number),
    Pair(tshark: ["bthci_evt.sync_tx_interval"], ours: ["transmission_interval"], kind: .number),
    Pair(tshark: ["bthci_evt.sync_rtx_window"], ours: ["retransmission_window"], kind: .number),
    Pair(tshark: ["bthci_cmd.scan_enable", "bthci_evt.scan_enable"], ours: ["scan_enable"], kind: .number),
    Pair(tshark: ["bthci_cmd.encryption_enable", "bthci_evt.encryption_enable"], ours: ["encryption"], kind: .number),
    Pair(tshark: ["bthci_evt.numeric_value"], ours: ["numeric_value"], kind: .number),
    Pair(tshark: ["bthci_cmd.io_capability", "bthci_evt.io_capability"], ours: ["io_capability"], kind: .number),
    Pair(tshark: ["bthci_cmd.oob_data_present", "bthci_evt.oob_data_present"], ours: ["oob_data_present"], kind: .number),
    Pair(tshark: ["bthci_cmd.auth_requirements", "bthci_evt.auth_requirements"], ours: ["authentication_requirements"], kind: .number),
    Pair(tshark: ["bthci_cmd.page_number", "bthci_evt.page_number"], ours: ["page"], kind: .number),
    Pair(tshark: ["bthci_evt.max_page_number"], ours: ["max_page"], kind: .number),
    Pair(tshark: ["bthci_evt.link_supervision_timeout"], ours: ["supervision_timeout"], kind: .number),
    // tshark calls the page, link supervision, connection accept and sniff timeouts all "timeout".
    Pair(tshark: ["bthci_cmd.timeout"], ours: ["page_timeout", "supervision_timeout", "connection_accept_timeout", "sniff_timeout"], kind: .number, name: "timeout"),
    Pair(tshark: ["bthci_cmd.sniff_max_int"], ours: ["max_interval"], kind: .number),
    Pair(tshark: ["bthci_cmd.sniff_min_int"], ours: ["min_interval"], kind: .number),
    Pair(tshark: ["bthci_cmd.sniff_attempt"], ours: ["sniff_attempt"], kind: .number),
    Pair(tshark: ["bthci_evt.enc_key_size"], ours: ["key_size"], kind: .number),
    Pair(tshark: ["btcommon.eir_ad.entry.device_name"], ours: ["eir_name"], kind: .text),
  ]

  /// Frame number → pair index → tshark's values (every frame tshark lists as a command or an event).
  static func tsharkValues(_ path: String) throws -> [Int: [Int: [String]]] {
    var arguments = ["-n", "-r", path, "-Y", "bthci_cmd || bthci_evt", "-T", "fields", "-E", "separator=\u{1E}", "-E", "aggregator=\u{1F}", "-E", "occurrence=a", "-e", "frame.number"]
    let fields = pairs.flatMap(\.tshark)
    for field in fields { arguments += ["-e", field] }
    let (status, data) = try runProgram(which("tshark")!, arguments)
    #expect(status == 0, "tshark failed on \(path)")
    var result: [Int: [Int: [String]]] = [:]
    for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
      let cells = line.split(separator: "\u{1E}", omittingEmptySubsequences: false).map(String.init)
      guard cells.count == fields.count + 1, let frame = Int(cells[0]) else { continue }
      var column = 1
      var values: [Int: [String]] = [:]
      for (index, pair) in pairs.enumerated() {
        for _ in pair.tshark {
          let cell = cells[column]
          column += 1
          if cell.isEmpty { continue }
          values[index, default: []] += cell.split(separator: "\u{1F}").map { normalize(String($0), pair.kind) }
        }
      }
      result[frame] = values
    }
    return result
  }

  static func normalize(_ text: String, _ kind: Kind) -> String {
    switch kind {
    case .number:
      if text.hasPrefix("0x"), let value = UInt64(text.dropFirst(2), radix: 16) { return String(value) }
      return Int64(text).map(String.init) ?? text
    case .address: return text.lowercased()
    case .bytes: return text.replacingOccurrences(of: ":", with: "").lowercased()
    case .text: return text
    }
  }

  /// Our values by key, under the frame's `hci` group; names inside EIR structures as `eir_name`.
  static func ourValues(_ fields: FieldList) -> [String: [String]] {
    var result: [String: [String]] = [:]
    var inHCI = false
    var eirDepth: Int?
    var groups: [Int: String] = [:]
    for field in fields.fields {
      if field.depth == 0 {
        inHCI = field.key.description == "hci"
        eirDepth = nil
        continue
      }
      guard inHCI else { continue }
      var key = field.key.description
      if let depth = eirDepth {
        if field.depth > depth {
          if key == "name", case .text(let name) = field.value { result["eir_name", default: []].append(name) }
          continue
        }
        eirDepth = nil
      }
      switch field.value {
      case .object, .array:
        groups[field.depth] = key
        if key == "eir" { eirDepth = field.depth }
        continue
      default:
        break
      }
      if key.isEmpty { key = groups[field.depth - 1] ?? "" }
      let text: String?
      switch field.value {
      case .unsigned(let value, _), .code(let value, _, _), .codeText(let value, _, _): text = String(value)
      case .measure(let raw, _, _): text = String(raw)
      case .signed(let value): text = String(value)
      case .address(let address, _): text = address.description.lowercased()
      case .text(let value): text = value
      case .bytes(let bytes): text = Hex.string(bytes)
      default: text = nil
      }
      if let text { result[key, default: []].append(text) }
    }
    return result
  }

  /// BR/EDR frames: commands and their Command Complete outside the LE (0x08) and vendor
  /// (0x3F) groups, and events other than LE Meta and vendor events.
  static func isClassic(_ frame: DissectedFrame) -> Bool {
    switch frame.hci {
    case .command(let opcode):
      return ![0x08, 0x3F].contains(HCICommand.ogf(opcode))
    case .event(let code, _):
      if code == 0x3E || code == 0xFF { return false }
      if code == 0x0E || code == 0x0F, let command = frame.fields.uint("params.command") {
        return ![0x08, 0x3F].contains(HCICommand.ogf(UInt16(truncatingIfNeeded: command)))
      }
      return true
    default:
      return false
    }
  }

  struct Report {
    var frames = 0
    var compared: [String: Int] = [:]
    var explained: [String: Int] = [:]
    var disagreements: [String] = []
    var total: Int { compared.values.reduce(0, +) }
  }

  static func compare(_ path: String) throws -> Report {
    let theirs = try tsharkValues(path)
    let reader = try CaptureFile.open(path: path)
    var dissector = Dissector()
    var frame = DissectedFrame()
    var number = 0
    var report = Report()
    while let record = try reader.next() {
      number += 1
      dissector.dissect(record, number: number, into: &frame)
      guard isClassic(frame) else { continue }
      let tshark = theirs[number] ?? [:]
      report.frames += 1
      let ours = ourValues(frame.fields)
      for (index, pair) in pairs.enumerated() {
        let mine = pair.ours.flatMap { ours[$0] ?? [] }
        guard let values = tshark[index] else {
          guard pair.bothWays, !mine.isEmpty else { continue }
          if case .event(0x59, _) = frame.hci {
            report.explained["Encryption Change v2 (event 0x59, Core 5.3 §7.7.8): tshark 4.0 shows an unknown event", default: 0] += 1
          } else {
            report.disagreements.append("#\(number) \(frame.titleText): \(pair.name) ours \(mine), tshark none")
          }
          continue
        }
        report.compared[pair.name, default: 0] += 1
        if mine.sorted() != values.sorted() {
          report.disagreements.append("#\(number) \(frame.titleText): \(pair.name) ours \(mine) tshark \(values)")
        }
      }
    }
    return report
  }

  @Test(.enabled(if: corpusRoot != nil, "../shared/corpus is absent"), arguments: CorpusTests.entries.filter { !$0.isLinkLayer })
  func corpusAgrees(entry: CorpusTests.Entry) throws {
    let report = try Self.compare(corpusRoot!.appendingPathComponent(entry.path).path)
    #expect(report.disagreements.isEmpty, "\(entry.path): \(report.disagreements.count) disagreements, first: \(report.disagreements.prefix(5))")
    if report.total > 0 { print("\(entry.path): \(report.frames) BR/EDR frames, \(report.total) values compared: \(report.compared.sorted { $0.key < $1.key })") }
    if !report.explained.isEmpty { print("\(entry.path): tshark is wrong or silent: \(report.explained)") }
  }

  /// The classic captures do exercise what this test is about (so it cannot pass by comparing
  /// nothing): per file, values that must have been compared.
  @Test(
    .enabled(if: TsharkClassicCrossCheckTests.classicCaptures.allSatisfy { sharedCorpusHas($0.path) }, "a classic capture of ../shared/corpus is absent"),
    arguments: TsharkClassicCrossCheckTests.classicCaptures)
  func classicCapturesAreCompared(path: String, keys: [String]) throws {
    let report = try Self.compare(corpusRoot!.appendingPathComponent(path).path)
    for key in keys { #expect(report.compared[key, default: 0] > 0, "\(path): no \(key) compared") }
  }

  static let classicCaptures: [(path: String, keys: [String])] = [
    ("cheoljun99/android_classic_nsec.pcap", ["address", "handle", "name", "role", "link_key", "clock_offset", "packet_type", "lap", "supervision_timeout", "timeout"]),
    ("btstack/btstack_a2dp_sbc_test2.pklg", ["address", "class_of_device", "link_key", "max_slots", "page_scan_repetition_mode", "link_type", "transmission_interval"]),
    ("btstack/btstack_hfp_test3.pklg", ["address", "class_of_device", "link_key", "name"]),
    ("hciparse/macos_poweron_broadcom_test00.pklg", ["address", "class_of_device", "scan_enable"]),
    ("dsd6_tracker/dsd6_btsnoop_hci.log", ["address", "class_of_device", "eir_name", "lap", "scan_enable"]),
    ("miband3_blproject/le_scan_a2_scanwcap.pcapng", ["role", "rssi", "class_of_device", "eir_name", "name", "link_type"]),
    ("ix7_scooter/ix7_scooter_nus_btsnoop_hci.log", ["mode", "interval", "max_interval", "sniff_attempt", "timeout"]),
  ]

  /// Sniff_Attempt (Sniff Mode §7.2.2) counts receive slots, "Length = N × 1.25 ms" in the Core
  /// spec (v4.0 to v6.0, Vol 4 Part E §7.2.2), as its Sniff_Timeout does. tshark 4.0 shows the
  /// attempt as (2N − 1) × 0.625 ms, the wording of Bluetooth 1.1, while showing the timeout as
  /// N × 1.25 ms: tshark is inconsistent and out of date; we show N × 1.25 ms for both. The raw
  /// values agree (above).
  @Test(.enabled(if: sharedCorpusHas("ix7_scooter/ix7_scooter_nus_btsnoop_hci.log"), "../shared/corpus/ix7_scooter/ix7_scooter_nus_btsnoop_hci.log is absent"))
  func sniffAttemptDuration() throws {
    let path = corpusRoot!.appendingPathComponent("ix7_scooter/ix7_scooter_nus_btsnoop_hci.log").path
    let (status, data) = try runProgram(which("tshark")!, ["-n", "-r", path, "-Y", "bthci_cmd.opcode == 0x0803", "-O", "bthci_cmd"])
    #expect(status == 0)
    var frameNumber = 0
    var attempts: [Int: (raw: Int, ms: Double)] = [:]
    for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
      if line.hasPrefix("Frame "), let number = Int(line.dropFirst(6).prefix { $0.isNumber }) { frameNumber = number }
      // "    Sniff Attempt: 4 (4.375 msec)"
      let text = line.trimmingCharacters(in: .whitespaces)
      guard text.hasPrefix("Sniff Attempt: ") else { continue }
      let words = text.dropFirst("Sniff Attempt: ".count).split(separator: " ")
      if words.count >= 2, let raw = Int(words[0]), let ms = Double(words[1].dropFirst()) { attempts[frameNumber] = (raw, ms) }
    }
    #expect(!attempts.isEmpty)
    let reader = try CaptureFile.open(path: path)
    var dissector = Dissector()
    var frame = DissectedFrame()
    var number = 0
    var checked = 0
    while let record = try reader.next() {
      number += 1
      dissector.dissect(record, number: number, into: &frame)
      guard let theirs = attempts[number] else { continue }
      guard case .measure(let raw, let scale, _)? = frame.fields.value("params.sniff_attempt") else {
        Issue.record("#\(number): no sniff attempt decoded")
        continue
      }
      #expect(Int(raw) == theirs.raw)
      #expect(Double(raw) * scale == Double(theirs.raw) * 1.25, "#\(number): ours is N × 1.25 ms")
      if theirs.ms != Double(theirs.raw) * 1.25 {
        // tshark's Bluetooth 1.1 formula; anything else would be a new disagreement.
        #expect(theirs.ms == Double(2 * theirs.raw - 1) * 0.625, "#\(number): tshark shows \(theirs.ms) ms for \(theirs.raw)")
      }
      checked += 1
    }
    #expect(checked == attempts.count)
  }
}
