import Foundation
import Testing
import BLECapture
import BLECore
import BLEDecoder
import BLETestSupport

/// HID over GATT cross-checked against Wireshark's dissectors on a real BLE mouse
/// (../shared/corpus/miband3_blproject/ble_mouse_connection_movement.pcapng: discovery, the
/// Report Map read in eleven parts, 140 report notifications): every Report Map item's
/// header and value (`tshark -T pdml`, usbhid), and HID Information, Report Reference,
/// Protocol Mode, Battery Level and the reports' bytes (`-T fields`, btatt).
///
/// Where tshark and we differ, the HID specification decides; each case is counted apart,
/// with who is right and why.
let hidMouseCapture = "miband3_blproject/ble_mouse_connection_movement.pcapng"

@Suite(
  .enabled(if: which("tshark") != nil, "tshark is not installed"),
  .enabled(if: sharedCorpusHas(hidMouseCapture), "../shared/corpus/miband3_blproject/ble_mouse_connection_movement.pcapng is absent"))
struct TsharkHIDCrossCheckTests {
  static let mouse = hidMouseCapture

  /// One Report Map item as tshark's tree shows it: where it starts in the map, its header
  /// fields, and its value fields (name → shown value, and the value in the showname's
  /// parentheses when it has one).
  struct TsharkItem {
    var position: Int
    var header: [String: String] = [:]
    var values: [(name: String, show: String, showname: String)] = []
  }

  static func attribute(_ name: String, in line: Substring) -> String? {
    guard let start = line.range(of: " \(name)=\"") else { return nil }
    let rest = line[start.upperBound...]
    guard let end = rest.firstIndex(of: "\"") else { return nil }
    return String(rest[..<end])
  }

  /// The usbhid items of `frame`, from tshark's PDML, in order.
  static func tsharkItems(_ path: String, frame: Int) throws -> [TsharkItem] {
    let (status, data) = try runProgram(which("tshark")!, ["-n", "-r", path, "-Y", "frame.number == \(frame)", "-T", "pdml"])
    #expect(status == 0)
    var items: [TsharkItem] = []
    for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
      guard let name = attribute("name", in: line), name.hasPrefix("usbhid.item."),
        let position = attribute("pos", in: line).flatMap({ Int($0) }),
        let show = attribute("show", in: line)
      else { continue }
      let showname = attribute("showname", in: line) ?? ""
      switch name {
      case "usbhid.item.bSize":
        items.append(TsharkItem(position: position, header: ["bSize": show]))
      case "usbhid.item.bType", "usbhid.item.bTag":
        guard !items.isEmpty else { continue }
        items[items.count - 1].header[String(name.dropFirst("usbhid.item.".count))] = show
      default:
        guard !items.isEmpty else { continue }
        items[items.count - 1].values.append((name, show, showname))
      }
    }
    return items
  }

  /// `0x1a` or `12` as a number; the number in a showname's last parentheses (`Usage: X (0x30)`).
  static func number(_ text: String) -> Int64? {
    if text.hasPrefix("0x") { return Int64(text.dropFirst(2), radix: 16) }
    return Int64(text)
  }

  static func parenthesized(_ showname: String) -> Int64? {
    guard let open = showname.lastIndex(of: "("), let close = showname.lastIndex(of: ")"), open < close else { return nil }
    return number(String(showname[showname.index(after: open)..<close]))
  }

  struct Tally {
    var compared = 0
    var agreed = 0
    var explained: [String: Int] = [:]
    var disagreements: [String] = []

    mutating func check(_ what: String, ours: Int64?, theirs: Int64?) {
      compared += 1
      if ours == theirs { agreed += 1 } else { disagreements.append("\(what): ours \(ours.map { String($0) } ?? "none"), tshark \(theirs.map { String($0) } ?? "none")") }
    }
  }

  /// The typed values of every frame of the capture.
  static func decodedFrames(_ path: String) throws -> [Int: [AttributeFact]] {
    let reader = try CaptureFile.open(path: path)
    var dissector = Dissector()
    var frame = DissectedFrame()
    var number = 0
    var facts: [Int: [AttributeFact]] = [:]
    while let record = try reader.next() {
      number += 1
      dissector.dissect(record, number: number, into: &frame)
      if !frame.attributes.isEmpty { facts[number] = frame.attributes }
    }
    return facts
  }

  @Test func reportMapItemsAgree() throws {
    let path = sharedCorpusRoot!.appendingPathComponent(Self.mouse).path
    let facts = try Self.decodedFrames(path)
    // The Report Map's last Read Blob Response completes the long read: frame 249 (tshark
    // reassembles it there too).
    let map = try #require(facts[249]?.compactMap { $0.value(as: HIDReportMap.self) }.first)
    #expect(map.length == 224)
    #expect(map.itemCount == 106)
    #expect(map.unclosedCollections == 0 && map.unmatchedEnds.isEmpty && !map.isCut)
    #expect(map.applications == ["Mouse", "Consumer Control", "Consumer Control"])
    #expect(map.reportIDs == [0x1A, 0x22, 0x24, 0x27, 0x1F, 0x17])

    let theirs = try Self.tsharkItems(path, frame: 249)
    var tally = Tally()
    #expect(theirs.count == map.items.count, "tshark shows \(theirs.count) items, we \(map.items.count)")
    let ours = Dictionary(map.items.map { ($0.offset, $0) }, uniquingKeysWith: { first, _ in first })
    for item in theirs {
      guard let mine = ours[item.position] else {
        tally.disagreements.append("item at \(item.position): tshark only")
        continue
      }
      let at = "item at \(item.position) (\(mine.name))"
      tally.check("\(at) bSize", ours: Int64(mine.prefix & 3), theirs: item.header["bSize"].flatMap(Self.number))
      tally.check("\(at) bType", ours: Int64(mine.type.rawValue), theirs: item.header["bType"].flatMap(Self.number))
      tally.check("\(at) bTag", ours: Int64(mine.tag), theirs: item.header["bTag"].flatMap(Self.number))
      for value in item.values {
        let field = String(value.name.dropFirst("usbhid.item.".count))
        switch field {
        case "global.usage":
          // An 8-bit field in tshark (`show` loses a vendor page's high byte); its value is in
          // the showname (`Usage Page: Vendor (0xff00)`).
          tally.check("\(at) \(field)", ours: Int64(mine.data), theirs: Self.parenthesized(value.showname) ?? Self.number(value.show))
        case "main.colltype", "global.report_size", "global.report_count", "global.report_id",
          "local.usage_min", "local.usage_max":
          tally.check("\(at) \(field)", ours: Int64(mine.data), theirs: Self.number(value.show))
        case "global.log_min", "global.log_max", "global.phy_min", "global.phy_max":
          tally.check("\(at) \(field)", ours: Int64(mine.signedData), theirs: Self.number(value.show))
        case "local.usage":
          // tshark keeps a Usage in an 8-bit field (`show`); its value is in the showname.
          let shown = Self.parenthesized(value.showname)
          if mine.size == 2, let shown, UInt16(truncatingIfNeeded: shown) == UInt16(truncatingIfNeeded: mine.data).byteSwapped,
            shown != Int64(mine.data)
          {
            // Bytes `0a 38 02`: HID 1.11 §5.8 and §6.2.2.2 put item data little-endian, so the
            // usage is 0x0238 (AC Pan on the Consumer page); tshark 4.0 reads a two-byte Usage
            // with tvb_get_ntohs (big-endian) and shows 0x3802. We are right.
            tally.compared += 1
            tally.explained["two-byte Usage read big-endian by tshark (HID 1.11 §5.8: little-endian; ours is right)", default: 0] += 1
          } else {
            tally.check("\(at) \(field)", ours: Int64(mine.data), theirs: shown)
          }
        case "main.readonly", "main.variable", "main.relative", "main.wrap", "main.nonlinear", "main.no_preferred_state",
          "main.nullstate", "main.volatile", "main.reserved", "main.buffered_bytes":
          let bit: UInt32 =
            switch field {
            case "main.readonly": 0x01
            case "main.variable": 0x02
            case "main.relative": 0x04
            case "main.wrap": 0x08
            case "main.nonlinear": 0x10
            case "main.no_preferred_state": 0x20
            case "main.nullstate": 0x40
            case "main.volatile", "main.reserved": 0x80
            default: 0x100
            }
          let theirsBit: Int64? = value.show == "1" || value.show == "True" ? 1 : (value.show == "0" || value.show == "False" ? 0 : nil)
          tally.check("\(at) \(field)", ours: mine.data & bit != 0 ? 1 : 0, theirs: theirsBit)
        default:
          tally.disagreements.append("\(at): tshark field \(field) not compared")
        }
      }
    }
    #expect(tally.disagreements.isEmpty, "\(tally.disagreements.prefix(8))")
    #expect(tally.compared > 400)
    // Every two-byte Usage of the map (AC Pan 0x0238 on the Consumer page, vendor usages such
    // as 0xfa0a): tshark shows each byte-swapped.
    let twoByteUsages = map.items.filter { $0.type == .local && $0.tag == 0 && $0.size == 2 }.count
    #expect(twoByteUsages == 7)
    #expect(tally.explained["two-byte Usage read big-endian by tshark (HID 1.11 §5.8: little-endian; ours is right)"] == twoByteUsages)
    print("HID Report Map: \(tally.agreed)/\(tally.compared) fields agree with tshark; tshark is wrong: \(tally.explained)")
  }

  @Test func hidCharacteristicsAgree() throws {
    let path = sharedCorpusRoot!.appendingPathComponent(Self.mouse).path
    let facts = try Self.decodedFrames(path)
    let (status, data) = try runProgram(which("tshark")!, [
      "-n", "-r", path, "-Y", "btatt", "-T", "fields", "-E", "separator=/t", "-e", "frame.number",
      "-e", "btatt.hogp.bcd_hid", "-e", "btatt.hogp.b_country_code", "-e", "btatt.hogp.flags",
      "-e", "btatt.report_reference.report_id", "-e", "btatt.report_reference.report_type",
      "-e", "btatt.hogp.protocol_mode", "-e", "btatt.battery_level", "-e", "btatt.opcode", "-e", "btatt.handle", "-e", "btatt.value",
    ])
    #expect(status == 0)
    var tally = Tally()
    var kinds: [String: Int] = [:]
    var reports = 0
    for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
      let cells = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
      guard cells.count >= 11, let number = Int(cells[0]) else { continue }
      let values = facts[number] ?? []
      if !cells[1].isEmpty {
        let info = values.compactMap { $0.value(as: HIDInformation.self) }.first
        tally.check("#\(number) bcdHID", ours: info.map { Int64($0.bcdHID) }, theirs: Self.number(cells[1]))
        tally.check("#\(number) bCountryCode", ours: info.map { Int64($0.countryCode) }, theirs: Self.number(cells[2]))
        tally.check("#\(number) HID flags", ours: info.map { Int64($0.flags) }, theirs: Self.number(cells[3]))
        kinds["HID Information", default: 0] += 1
      }
      if !cells[4].isEmpty {
        let reference = values.compactMap { $0.value(as: HIDReportReference.self) }.first
        tally.check("#\(number) report ID", ours: reference.map { Int64($0.reportID) }, theirs: Self.number(cells[4]))
        tally.check("#\(number) report type", ours: reference.map { Int64($0.reportType) }, theirs: Self.number(cells[5]))
        kinds["Report Reference", default: 0] += 1
      }
      if !cells[6].isEmpty {
        let mode = values.compactMap { $0.value(as: HIDProtocolMode.self) }.first
        tally.check("#\(number) protocol mode", ours: mode.map { Int64($0.mode) }, theirs: Self.number(cells[6]))
        kinds["Protocol Mode", default: 0] += 1
      }
      if !cells[7].isEmpty {
        let level = values.compactMap { $0.value(as: BatteryLevel.self) }.first
        tally.check("#\(number) battery level", ours: level.map { Int64($0.percent) }, theirs: Self.number(cells[7]))
        kinds["Battery Level", default: 0] += 1
      }
      // Report notifications: the bytes tshark shows as the value are the report's.
      if cells[8] == "0x1b", let report = values.compactMap({ $0.value(as: HIDReport.self) }).first {
        tally.compared += 1
        if Hex.string(report.bytes).replacingOccurrences(of: " ", with: "") == cells[10] { tally.agreed += 1 } else {
          tally.disagreements.append("#\(number) report bytes: ours \(Hex.string(report.bytes)), tshark \(cells[10])")
        }
        // Handle 0x0016 is the Report whose Report Reference (0x0018) said Input, ID 0x1a;
        // the second connection reuses the table learned in the first.
        #expect(report.reference == HIDReportReference(reportID: 0x1A, reportType: 1), "#\(number)")
        reports += 1
      }
    }
    #expect(tally.disagreements.isEmpty, "\(tally.disagreements.prefix(8))")
    #expect(kinds["HID Information"] == 1 && kinds["Report Reference"] == 6 && kinds["Protocol Mode"] == 1)
    #expect(reports == 138, "report notifications compared: \(reports)")
    print("HID characteristics: \(tally.agreed)/\(tally.compared) fields agree with tshark (\(kinds), \(reports) reports)")
  }
}

/// The generated HID keyboard (captures/hid_keyboard.btsnoop, Scripts/captures/make_hid_keyboard.py):
/// what the corpus lacks (HID Control Point, boot reports, Battery Power State and Battery
/// Level State) cross-checked against tshark's btatt and usbhid fields, and the header words.
@Suite(.enabled(if: which("tshark") != nil, "tshark is not installed"))
struct TsharkHIDKeyboardCrossCheckTests {
  @Test func generatedKeyboardAgrees() throws {
    let path = capturePath("hid_keyboard.btsnoop")
    let facts = try TsharkHIDCrossCheckTests.decodedFrames(path)
    let (status, data) = try runProgram(which("tshark")!, [
      "-n", "-r", path, "-Y", "btatt", "-T", "fields", "-E", "separator=/t", "-e", "frame.number",
      "-e", "btatt.battery_power_state.present", "-e", "btatt.battery_power_state.discharging",
      "-e", "btatt.battery_power_state.charging", "-e", "btatt.battery_power_state.level", "-e", "btatt.battery_level",
      "-e", "btatt.hogp.hid_control_point_command", "-e", "usbhid.boot_report.keyboard.modifier.left_ctrl",
      "-e", "usbhid.boot_report.keyboard.keycode_1", "-e", "usbhid.boot_report.keyboard.leds.num_lock",
      "-e", "usbhid.boot_report.keyboard.leds.caps_lock", "-e", "usbhid.boot_report.mouse.button.left",
      "-e", "usbhid.boot_report.mouse.x_displacement", "-e", "usbhid.boot_report.mouse.y_displacement",
      "-e", "usbhid.boot_report.mouse.scroll_wheel.horizontal", "-e", "btatt.hogp.protocol_mode",
      "-e", "btatt.report_reference.report_id", "-e", "btatt.report_reference.report_type",
    ])
    #expect(status == 0)
    var tally = TsharkHIDCrossCheckTests.Tally()
    func bit(_ flag: Bool?) -> Int64? { flag.map { $0 ? 1 : 0 } }
    for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
      let cells = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
      guard cells.count >= 18, let number = Int(cells[0]) else { continue }
      let values = facts[number] ?? []
      let n = TsharkHIDCrossCheckTests.number
      if !cells[1].isEmpty {
        // A Battery Power State, alone (0x2A1A) or inside a Battery Level State (0x2A1B).
        let state = values.compactMap { $0.value(as: BatteryPowerState.self) }.first
          ?? values.compactMap { $0.value(as: BatteryLevelState.self)?.powerState }.first
        tally.check("#\(number) present", ours: state.map { Int64($0.present) }, theirs: n(cells[1]))
        tally.check("#\(number) discharging", ours: state.map { Int64($0.discharging) }, theirs: n(cells[2]))
        tally.check("#\(number) charging", ours: state.map { Int64($0.charging) }, theirs: n(cells[3]))
        tally.check("#\(number) level", ours: state.map { Int64($0.level) }, theirs: n(cells[4]))
      }
      if !cells[5].isEmpty {
        let percent = values.compactMap { $0.value(as: BatteryLevel.self)?.percent ?? $0.value(as: BatteryLevelState.self)?.percent }.first
        tally.check("#\(number) battery level", ours: percent.map { Int64($0) }, theirs: n(cells[5]))
      }
      if !cells[6].isEmpty {
        tally.check("#\(number) control point", ours: values.compactMap { $0.value(as: HIDControlPoint.self) }.first.map { Int64($0.command) }, theirs: n(cells[6]))
      }
      if !cells[7].isEmpty {
        let keyboard = values.compactMap { $0.value(as: BootKeyboardInputReport.self) }.first
        tally.check("#\(number) left control", ours: keyboard.map { Int64($0.modifiers & 1) }, theirs: n(cells[7]))
        tally.check("#\(number) keycode 1", ours: keyboard.flatMap { $0.keys.first }.map { Int64($0) }, theirs: n(cells[8]))
      }
      if !cells[9].isEmpty {
        let leds = values.compactMap { $0.value(as: BootKeyboardOutputReport.self) }.first
        tally.check("#\(number) Num Lock", ours: leds.map { Int64($0.leds & 1) }, theirs: n(cells[9]))
        tally.check("#\(number) Caps Lock", ours: leds.map { Int64($0.leds >> 1 & 1) }, theirs: n(cells[10]))
      }
      if !cells[11].isEmpty {
        let mouse = values.compactMap { $0.value(as: BootMouseInputReport.self) }.first
        tally.check("#\(number) left button", ours: mouse.map { Int64($0.buttons & 1) }, theirs: n(cells[11]))
        tally.check("#\(number) dx", ours: mouse.map { Int64($0.dx) }, theirs: n(cells[12]))
        tally.check("#\(number) dy", ours: mouse.map { Int64($0.dy) }, theirs: n(cells[13]))
        // The fourth byte: tshark calls it the horizontal wheel, we the wheel. HID 1.11
        // Appendix B.2 leaves bytes after the third to the device; mice put their (vertical)
        // wheel there, as Linux's boot-protocol mouse driver reads it. Same value.
        tally.check("#\(number) fourth byte (wheel)", ours: mouse.flatMap { $0.wheel }.map { Int64($0) }, theirs: n(cells[14]))
      }
      if !cells[15].isEmpty {
        tally.check("#\(number) protocol mode", ours: values.compactMap { $0.value(as: HIDProtocolMode.self) }.first.map { Int64($0.mode) }, theirs: n(cells[15]))
      }
      if !cells[16].isEmpty {
        let reference = values.compactMap { $0.value(as: HIDReportReference.self) }.first
        tally.check("#\(number) report ID", ours: reference.map { Int64($0.reportID) }, theirs: n(cells[16]))
        tally.check("#\(number) report type", ours: reference.map { Int64($0.reportType) }, theirs: n(cells[17]))
      }
    }
    #expect(tally.disagreements.isEmpty, "\(tally.disagreements.prefix(8))")
    #expect(tally.compared == 33, "\(tally.compared)")
    print("HID keyboard: \(tally.agreed)/\(tally.compared) fields agree with tshark")

    // The header words of what tshark has no words for (the reports by their reference).
    let report = facts[176]?.compactMap { $0.value(as: HIDReport.self) }.first
    #expect(report?.reference == HIDReportReference(reportID: 1, reportType: 1))
    #expect(facts[179]?.compactMap { $0.value(as: HIDReport.self) }.first?.reference == HIDReportReference(reportID: 1, reportType: 2))
    #expect(facts[127]?.compactMap { $0.value(as: HIDReportMap.self) }.first?.applications == ["Keyboard", "Consumer Control"])
  }
}
