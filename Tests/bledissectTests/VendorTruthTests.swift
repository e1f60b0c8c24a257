import Foundation
import Testing

@testable import bledissect

/// The vendor captures (Scripts/captures/make_vendor_scenarios.py, Bumble 0.0.236) decoded by
/// the command line (`--json`), every value compared field by field with what the script sent
/// (`<name>.truth.json`), and vendor_services.btsnoop with what captures/README.md says it holds.
///
/// The truth files name fields their own way; `expectations` says where each lives in our
/// JSON (docs/json.md). A truth field with no place there fails the test, so nothing the
/// script sent goes unchecked.
@Suite struct VendorTruthTests {
  /// One ATT value PDU of the output: Read Response, Write Request, Write Command,
  /// Handle Value Notification or Indication, in file order.
  struct ValuePDU {
    var frame: Int
    var direction: String
    var opcode: Int
    var handle: Int
    var hex: String
    var decoded: [String: Any]
    var malformed: Any?
    var diagnostics: [[String: Any]]
  }

  static let valueOpcodes: [Int: String] = [0x0B: "read_response", 0x12: "write_request", 0x52: "write_command", 0x1B: "notification", 0x1D: "indication"]

  static func valuePDUs(_ capture: String) throws -> [ValuePDU] {
    let result = runCLI(["--json", capturePath(capture)])
    #expect(result.status == 0, "\(result.stderr)")
    var values: [ValuePDU] = []
    for line in result.stdout.split(separator: "\n") {
      #expect(JSONKeyChecker.check(line) == nil)
      let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
      guard let att = object["att"] as? [String: Any], let opcode = att["opcode"] as? Int, valueOpcodes[opcode] != nil else { continue }
      values.append(
        ValuePDU(
          frame: object["frame"] as! Int, direction: object["dir"] as! String, opcode: opcode, handle: att["handle"] as? Int ?? -1,
          hex: att["value"] as? String ?? "", decoded: object["decoded"] as? [String: Any] ?? [:], malformed: object["malformed"],
          diagnostics: object["diagnostics"] as? [[String: Any]] ?? []))
    }
    return values
  }

  static func truth(_ name: String) throws -> [[String: Any]] {
    let data = try Data(contentsOf: URL(fileURLWithPath: capturePath(name + ".truth.json")))
    return try #require(try JSONSerialization.jsonObject(with: data) as? [[String: Any]])
  }

  /// JSON values equal as JSON: numbers by value (1 == 1.0), arrays and objects member by member.
  static func same(_ a: Any?, _ b: Any?) -> Bool {
    switch (a, b) {
    case (nil, nil): return true
    case let (x as String, y as String): return x == y
    case let (x as [Any], y as [Any]): return x.count == y.count && zip(x, y).allSatisfy { same($0, $1) }
    case let (x as [String: Any], y as [String: Any]): return Set(x.keys) == Set(y.keys) && x.keys.allSatisfy { same(x[$0], y[$0]) }
    case let (x as NSNumber, y as NSNumber): return x.isEqual(to: y)
    case (is NSNull, is NSNull): return true
    default: return false
    }
  }

  /// Where a truth field is in our decoded object: a path (dots for nested objects), or a check.
  enum Place {
    case path(String)
    /// A path whose value is text; the truth's `T` between date and time is a space in ours.
    case dateText(String)
    case check((_ decoded: [String: Any], _ expected: Any) -> Bool)
  }

  /// Our decoded key and the place of each truth field, by the truth's message name.
  static func expectations(_ message: String, _ fields: [String: Any]) -> (key: String, places: [String: Place])? {
    let pmdType: [String: Place] = ["measurement_type": .path("measurement_type_name"), "measurement_type_id": .path("measurement_type")]
    let settings: [String: Place] = Dictionary(
      uniqueKeysWithValues: ["sample_rate_hz", "resolution_bits", "range", "range_milliunits", "channels", "conversion_factor"].map { ($0, Place.path("settings." + $0)) })
    switch message {
    case "cccd_write":
      return ("client_characteristic_configuration", ["notifications": .path("notifications"), "indications": .path("indications")])
    case "pmd_features":
      return ("polar_pmd_control_point", ["byte0": .path("first_byte"), "supported_types": .path("supported_type_names")])
    case "pmd_measurement_stopped":
      return (
        "polar_pmd_control_point",
        ["command": .path("command"), "measurement_types": .path("measurement_type_names"), "measurement_type_ids": .path("measurement_types")]
      )
    case "pmd_data":
      return ("polar_pmd_data", pmdType.merging(pmdDataPlaces(fields)) { a, _ in a })
    case _ where message.hasPrefix("pmd_") && (message.hasSuffix("_response")):
      var places = pmdType.merging(settings) { a, _ in a }
      for key in ["opcode", "status", "status_name", "more"] { places[key] = .path(key) }
      return ("polar_pmd_control_point", places)
    case _ where message.hasPrefix("pmd_"):
      var places = pmdType.merging(settings) { a, _ in a }
      for key in ["opcode", "recording_type", "mode", "trigger_status", "settings_length"] { places[key] = .path(key) }
      return ("polar_pmd_control_point", places)
    case "huami_auth_response":
      return (
        "huami_auth",
        ["response_to": .path("response_to"), "status": .path("status"), "status_name": .path("status_name"), "random_hex": .path("random")]
      )
    case _ where message.hasPrefix("huami_auth_"):
      return (
        "huami_auth",
        [
          "command": .path("command"), "crypt_flag": .path("crypt_flag"), "auth_flags": .path("auth_flags"), "key_hex": .path("key"),
          "encrypted_random_hex": .path("encrypted_random"), "parameters_hex": .path("parameters"),
        ]
      )
    case "current_time":
      var places: [String: Place] = ["adjust_reason": .path("adjust_reason.bits")]
      for key in ["year", "month", "day", "hours", "minutes", "seconds", "day_of_week", "fractions256"] { places[key] = .path(key) }
      return ("current_time", places)
    case "huami_battery_info":
      return (
        "huami_battery_info",
        [
          "level_percent": .path("percent"), "status": .path("status"), "status_name": .path("status_name"),
          "last_charge_level_percent": .path("last_charge_percent"), "last_off": .dateText("last_off"), "last_charge": .dateText("last_charge"),
        ]
      )
    case "huami_realtime_steps":
      return ("huami_realtime_steps", ["steps": .path("steps"), "distance_m": .path("distance_m"), "calories": .path("calories")])
    case "huami_hr_measurement_control", "huami_hr_keep_alive", "huami_hr_interval":
      return (
        "heart_rate_control_point",
        ["command": .path("opcode"), "mode": .path("mode_name"), "enable": .path("enabled"), "interval_minutes": .path("interval_minutes")]
      )
    case "heart_rate_measurement":
      return (
        "heart_rate_measurement",
        [
          "heart_rate_bpm": .path("bpm"),
          // Flags (reference §1.1): bits 1–2 sensor contact, bit 3 energy present, bit 4 RR present.
          "flags": .check { decoded, expected in
            guard let flags = expected as? Int else { return false }
            let contact = flags & 0x04 == 0 ? "unsupported" : (flags & 0x02 != 0 ? "detected" : "not_detected")
            return decoded["sensor_contact"] as? String == contact && (decoded["energy_expended_kj"] is NSNull) == (flags & 0x08 == 0)
              && ((decoded["rr_intervals"] as? [Any])?.isEmpty ?? true) == (flags & 0x10 == 0)
          },
        ]
      )
    default:
      return nil
    }
  }

  /// PMD data: the samples are under the key of their type and shape (docs/json.md).
  static func pmdDataPlaces(_ fields: [String: Any]) -> [String: Place] {
    let compressed = fields["compressed"] as? Bool ?? false
    let sampleKey: String
    switch fields["measurement_type"] as? String {
    case "ECG": sampleKey = "samples_uv"
    case "ACC": sampleKey = "samples_mg"
    case "PPI": sampleKey = "ppi_samples"
    case "gyroscope": sampleKey = compressed ? "samples" : "samples_dps"
    case "pressure": sampleKey = "samples_hpa"
    case "temperature": sampleKey = "samples_c"
    default: sampleKey = "samples"
    }
    return [
      // 64-bit: a "0x…" string in JSON (docs/json.md, "Field values").
      "timestamp_ns": .check { decoded, expected in
        (decoded["timestamp_ns"] as? String).flatMap { UInt64($0.dropFirst(2), radix: 16) } == (expected as? NSNumber)?.uint64Value
      }, "frame_type": .path("frame_type"), "compressed": .path("compressed"),
      "samples": .path(sampleKey),
      // The reference sample is the first sample.
      "reference_sample": .check { decoded, expected in same((decoded[sampleKey] as? [Any])?.first, expected) },
      "delta_blocks": .path("delta_blocks"),
    ]
  }

  static func value(_ object: [String: Any], _ path: String) -> Any? {
    var current: Any? = object
    for part in path.split(separator: ".") { current = (current as? [String: Any])?[String(part)] }
    return current
  }

  /// Compares every truth entry with the output; returns how many fields were compared.
  static func compare(_ capture: String, truth name: String) throws -> Int {
    let values = try valuePDUs(capture)
    let truth = try truth(name)
    #expect(values.count == truth.count, "\(capture): \(values.count) value PDUs, truth has \(truth.count)")
    var compared = 0
    for entry in truth {
      let index = entry["index"] as! Int
      guard index < values.count else { continue }
      let got = values[index]
      let context = "\(name) index \(index) (frame \(got.frame))"
      #expect(got.direction == (entry["direction"] as? String == "phone->device" ? "tx" : "rx"), "\(context)")
      #expect(valueOpcodes[got.opcode] == entry["opcode"] as? String, "\(context)")
      #expect(got.handle == entry["handle"] as? Int, "\(context)")
      #expect(got.hex == entry["hex"] as? String, "\(context)")
      #expect(got.malformed == nil, "\(context): \(String(describing: got.malformed))")
      let message = entry["message"] as! String
      let fields = entry["fields"] as! [String: Any]
      guard let (key, places) = expectations(message, fields) else {
        Issue.record("\(context): no expectation for message \(message)")
        continue
      }
      guard let decoded = got.decoded[key] as? [String: Any] else {
        Issue.record("\(context): no decoded.\(key) in \(got.decoded.keys)")
        continue
      }
      for (field, expected) in fields {
        guard let place = places[field] else {
          Issue.record("\(context): truth field \(field) has no place in decoded.\(key)")
          continue
        }
        switch place {
        case .path(let path):
          #expect(same(value(decoded, path), expected), "\(context): \(field) = \(expected), decoded.\(key).\(path) = \(String(describing: value(decoded, path)))")
        case .dateText(let path):
          let text = (expected as? String)?.replacingOccurrences(of: "T", with: " ")
          #expect(value(decoded, path) as? String == text, "\(context): \(field)")
        case .check(let check):
          #expect(check(decoded, expected), "\(context): \(field) = \(expected) in \(decoded)")
        }
        compared += 1
      }
      // Layouts the reference marks as not cross-checked are decoded and say so.
      if let uncertain = entry["uncertain_fields"] as? [String] {
        let listed = decoded["uncertain_fields"] as? [String] ?? []
        for field in uncertain {
          let path: String?
          switch places[field] {
          case .path(let found)?, .dateText(let found)?: path = found
          default: path = nil
          }
          #expect(path.map(listed.contains) == true, "\(context): \(field) not marked uncertain")
        }
      }
    }
    return compared
  }

  @Test func polarPMDMatchesTheTruthValueByValue() throws {
    let compared = try Self.compare("polar_pmd.btsnoop", truth: "polar_pmd")
    #expect(compared > 500)
  }

  @Test func huamiMatchesTheTruthValueByValue() throws {
    let compared = try Self.compare("huami.btsnoop", truth: "huami")
    #expect(compared > 100)
  }

  /// Every key under the vendor `decoded` objects has one JSON type across the captures.
  @Test func vendorKeysHaveOneTypeEach() throws {
    var types: [String: String] = [:]
    func kind(_ value: Any) -> String {
      switch value {
      case is String: return "string"
      case is [Any]: return "array"
      case is [String: Any]: return "object"
      case is NSNull: return "null"
      case let number as NSNumber: return String(cString: number.objCType) == "c" ? "bool" : "number"
      default: return "other"
      }
    }
    func walk(_ value: Any, _ path: String) {
      let found = kind(value)
      if let known = types[path] { #expect(known == found, "\(path): \(known) and \(found)") } else { types[path] = found }
      if let object = value as? [String: Any] {
        for (key, member) in object { walk(member, path + "." + key) }
      } else if let array = value as? [Any] {
        for element in array { walk(element, path + "[]") }
      }
    }
    for capture in ["polar_pmd.btsnoop", "huami.btsnoop", "vendor_services.btsnoop"] {
      for pdu in try Self.valuePDUs(capture) { walk(pdu.decoded, "decoded") }
    }
    #expect(types.keys.contains { $0.hasPrefix("decoded.polar_pmd_data.samples_mg") })
  }

  /// captures/README.md: what vendor_services.btsnoop holds (NUS text both ways, a little PMD).
  @Test func vendorServicesAsTheReadmeDescribesThem() throws {
    let values = try Self.valuePDUs("vendor_services.btsnoop")
    let uart = values.compactMap { pdu -> (String, String)? in
      if let rx = pdu.decoded["nordic_uart_rx"] as? [String: Any] { return ("rx", rx["text"] as? String ?? "?") }
      if let tx = pdu.decoded["nordic_uart_tx"] as? [String: Any] { return ("tx", tx["text"] as? String ?? "?") }
      return nil
    }
    #expect(uart.map(\.0) == ["rx", "tx", "rx", "tx", "rx", "tx"])
    #expect(uart.map(\.1) == ["hello from bledissect\n", "hello phone, this is NUS\n", "battery?\n", "battery=87%\n", "bye\n", "bye\n"])

    let control = values.compactMap { $0.decoded["polar_pmd_control_point"] as? [String: Any] }
    #expect(control.map { $0["message"] as? String } == ["features", "request", "response", "request", "response", "request", "response"])
    // Read → 0F 05 00: ECG + ACC.
    #expect(control[0]["supported_type_names"] as? [String] == ["ECG", "ACC"])
    // Get ECG settings → 130 Hz, 14 bit; start ECG with them; stop.
    #expect(control[1]["opcode"] as? Int == 1 && control[1]["measurement_type_name"] as? String == "ECG")
    #expect(Self.same(Self.value(control[2], "settings"), ["sample_rate_hz": [130], "resolution_bits": [14]]))
    #expect(control[3]["opcode"] as? Int == 2 && Self.same(Self.value(control[3], "settings"), ["sample_rate_hz": [130], "resolution_bits": [14]]))
    #expect(control[4]["status_name"] as? String == "success" && control[4]["opcode"] as? Int == 2)
    #expect(control[5]["opcode"] as? Int == 3 && control[6]["opcode"] as? Int == 3)

    let frames = values.compactMap { $0.decoded["polar_pmd_data"] as? [String: Any] }
    let base = [-48, -40, -30, -12, 25, 180, 820, 1350, 620, -210, -330, -150, -60, -20, 0, 15, 40, 70, 60, 20]
    let timestamps = [789_004_800_153_846_153, 789_004_800_307_692_307, 789_004_800_461_538_461]
    #expect(frames.count == 3)
    for (k, frame) in frames.enumerated() {
      #expect(frame["measurement_type_name"] as? String == "ECG")
      #expect((frame["timestamp_ns"] as? String).flatMap { UInt64($0.dropFirst(2), radix: 16) } == UInt64(timestamps[k]))
      #expect(frame["samples_uv"] as? [Int] == base.map { $0 + 10 * k })
    }
    // 2025-01-01: 789 004 800 s after 2000-01-01.
    #expect(frames.first?["timestamp_utc"] as? String == "2025-01-01 00:00:00.153846153")
  }

  /// Header words of the vendor values: short, and what a reader needs.
  @Test func headerWords() throws {
    // The header line of the detailed view: the name, then the words (-1 puts the words first).
    let pmd = runCLI([capturePath("polar_pmd.btsnoop")]).stdout
    for words in [
      "Polar PMD Control Point: features: ECG, PPG, ACC, PPI, gyroscope, SDK mode, pressure, temperature, offline recording",
      "Polar PMD Control Point: start ECG: 130 Hz, 14 bit", "Polar PMD Control Point: start ECG: ok",
      "Polar PMD Control Point: get settings reserved type 4: error: invalid measurement type",
      "Polar PMD Control Point: start PPG: error: invalid MTU", "Polar PMD Control Point: measurement stopped: PPG",
      "Polar PMD Data: ECG: 20 samples, -280…1400 µV", "Polar PMD Data: ACC (delta): 30 samples, x -62…-7, y 357…436, z 3764…4095 mG",
      "Polar PMD Data: PPI: 3 samples, 61…63 bpm, PP 952…984 ms, 1 blocked", "Polar PMD Data: pressure: 3 samples, 1013.25…1013.75 hPa",
    ] {
      #expect(pmd.contains(words), "\(words)")
    }
    let huami = runCLI([capturePath("huami.btsnoop")]).stdout
    for words in [
      "Huami Auth: send key: failure", "Huami Auth: request random: success, random 00 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f",
      "Huami Auth: request random (Mi Band 4/5) 02 01 00", "Huami Battery Info: 65 %, charging",
      "Huami Realtime Steps: 1234 steps; unconfirmed: 890 m, 45 kcal",
    ] {
      #expect(huami.contains(words), "\(words)")
    }
    let uart = runCLI([capturePath("vendor_services.btsnoop")]).stdout
    #expect(uart.contains(#"UART RX Characteristic: "hello from bledissect\n""#))
    // -v shows the text field with its newline escaped, on one line.
    let verbose = runCLI(["-v", capturePath("vendor_services.btsnoop")]).stdout
    #expect(verbose.contains("    Text: hello phone, this is NUS\\n\n"))
  }
}
