import BLECore

// HID over GATT: the HID Service 0x1812. HID Information 0x2A4A, HID Control Point 0x2A4C,
// Protocol Mode 0x2A4E, Report 0x2A4D with its Report Reference descriptor 0x2908, Boot
// Keyboard Input / Output Report 0x2A22 / 0x2A32, Boot Mouse Input Report 0x2A33; the Report
// Map 0x2A4B is in HIDReportMap.swift.
//
// The corresponding specifications are the HID Service 1.0 (HIDS) and, for what the values
// carry, the USB Device Class Definition for HID 1.11 (boot reports: Appendix B; country
// codes: §6.2.1) and the HID Usage Tables (keyboard usages, LED usages).

/// HID names shared by the HID values: usages, pages, report types.
public enum HID {
  /// A Report Reference's or a report's type: 1 Input, 2 Output, 3 Feature.
  public static func reportTypeName(_ type: UInt8) -> Name? {
    switch type {
    case 1: return "Input"
    case 2: return "Output"
    case 3: return "Feature"
    default: return nil
    }
  }

  /// The name of a usage page: the table's, `Vendor-defined` for 0xFF00–0xFFFF.
  public static func usagePageName(_ page: UInt16) -> Name? {
    if let name = AssignedNumbers.hidUsagePageName(page) { return name }
    if page >= 0xFF00 { return "Vendor-defined" }
    return nil
  }

  /// The name of usage `id` on `page`: the table's; made for the pages that number their
  /// usages (Button N, Instance N); `Vendor-defined` on a vendor page.
  public static func usageName(page: UInt16, id: UInt16) -> String? {
    if let name = AssignedNumbers.hidUsageName(UInt32(page) << 16 | UInt32(id)) { return name.description }
    switch page {
    case 0x09 where id > 0: return "Button \(id)"
    case 0x0A where id > 0: return "Instance \(id)"
    case 0xFF00...0xFFFF: return "Vendor-defined"
    default: return nil
    }
  }

  /// The usage's field: `Name (0x30)` with the name when one is known.
  static func usageField(_ key: Name, _ label: Name, page: UInt16, id: UInt16, value: UInt64, width: UInt8, to fields: inout FieldList) {
    if let name = AssignedNumbers.hidUsageName(UInt32(page) << 16 | UInt32(id)) {
      fields.code(key, label, value, width: width, name: name)
    } else if let name = usageName(page: page, id: id) {
      fields.add(key, label, .codeText(value, width: width, name: name))
    } else {
      fields.code(key, label, value, width: width, name: nil)
    }
  }

  /// A keyboard key's name (Keyboard/Keypad page), `key 0x..` when the table has none.
  static func keyName(_ code: UInt8) -> String {
    usageName(page: 0x07, id: UInt16(code)) ?? "key \(Hex.prefixed(UInt64(code), width: 2))"
  }
}

/// HID Information 0x2A4A: `bcdHID(2) bCountryCode(1) flags(1)`; flags bit 0 RemoteWake, bit 1
/// NormallyConnectable, 2–7 reserved.
public struct HIDInformation: CharacteristicValue, Equatable {
  /// The HID version, binary-coded decimal (0x0111 = 1.11).
  public var bcdHID: UInt16
  public var countryCode: UInt8
  public var flags: UInt8

  public init(bcdHID: UInt16, countryCode: UInt8, flags: UInt8) {
    self.bcdHID = bcdHID
    self.countryCode = countryCode
    self.flags = flags
  }

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    bcdHID = try reader.readUInt16LE()
    countryCode = try reader.readUInt8()
    flags = try reader.readUInt8()
  }

  public var remoteWake: Bool { flags & 0x01 != 0 }
  public var normallyConnectable: Bool { flags & 0x02 != 0 }
  /// `1.11` for 0x0111 (the digits as BCD gives them).
  public var version: String {
    let major = String(bcdHID >> 8, radix: 16)
    let minor = String(bcdHID & 0xFF, radix: 16)
    return major + "." + (minor.count < 2 ? "0" + minor : minor)
  }

  public static let decoder = CharacteristicDecoder(uuid16: 0x2A4A, key: "hid_information", HIDInformation.self)
  public static let flagLayout: Name = "01:Remote wake=no|yes;02:Normally connectable=no|yes;FC:Reserved"

  public func writeFields(to fields: inout FieldList, context: ValueContext) {
    fields.hex("bcd_hid", "bcdHID", bcdHID, width: 4)
    fields.add("hid_version", "HID version", .text(version))
    fields.code("country_code", "Country code", countryCode, width: 2, name: AssignedNumbers.hidCountryName(countryCode))
    fields.addVerbose("flags", "Flags", .unsigned(UInt64(flags), .bits(2, layout: Self.flagLayout)))
    fields.flag("remote_wake", "Remote wake", remoteWake)
    fields.flag("normally_connectable", "Normally connectable", normallyConnectable)
  }

  /// "HID 1.11, country not supported, remote wake, normally connectable".
  public func summarize(into summary: inout SummaryLine, context: ValueContext) {
    summary.append(.text("HID "))
    summary.append(.string(version))
    if countryCode == 0 {
      summary.append(.text(", country not localized"))
    } else if let name = AssignedNumbers.hidCountryName(countryCode) {
      summary.append(.text(", "))
      summary.append(.text(name))
    } else {
      summary.append(.text(", country "))
      summary.append(.number(Int(countryCode)))
    }
    if remoteWake { summary.append(.text(", remote wake")) }
    if normallyConnectable { summary.append(.text(", normally connectable")) }
  }

  public func diagnose(into diagnostics: inout [Diagnostic], context: ValueContext) {
    ProfileSupport.checkReserved(UInt64(flags), defined: 0x03, width: 2, what: "HID Information flags", &diagnostics)
  }
}

/// Report Reference descriptor 0x2908: `report_id(1) report_type(1)` (1 Input, 2 Output,
/// 3 Feature): which report of the Report Map a Report characteristic carries.
public struct HIDReportReference: CharacteristicValue, Equatable, Hashable {
  public var reportID: UInt8
  public var reportType: UInt8

  public init(reportID: UInt8, reportType: UInt8) {
    self.reportID = reportID
    self.reportType = reportType
  }

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    reportID = try reader.readUInt8()
    reportType = try reader.readUInt8()
  }

  public var typeName: Name? { HID.reportTypeName(reportType) }

  public static let decoder = CharacteristicDecoder(uuid16: 0x2908, key: "report_reference", HIDReportReference.self)

  public func writeFields(to fields: inout FieldList, context: ValueContext) {
    fields.hex("report_id", "Report ID", reportID, width: 2)
    fields.code("report_type", "Report type", reportType, width: 2, name: typeName)
  }

  /// "Input report 0x1a".
  public func summarize(into summary: inout SummaryLine, context: ValueContext) {
    if let typeName {
      summary.append(.text(typeName))
      summary.append(.text(" report "))
    } else {
      summary.append(.text("report of reserved type "))
      summary.append(.hex(UInt64(reportType), width: 2))
      summary.append(.text(", ID "))
    }
    summary.append(.hex(UInt64(reportID), width: 2))
  }

  public func diagnose(into diagnostics: inout [Diagnostic], context: ValueContext) {
    if typeName == nil {
      ProfileSupport.add(.profileReservedValue, &diagnostics, "Report Reference report type \(Hex.prefixed(UInt64(reportType), width: 2)) is reserved")
    }
  }
}

/// Report 0x2A4D: a report's bytes as the device sends or takes them, with the report ID and
/// type its Report Reference descriptor gave, when the capture showed the descriptor read.
public struct HIDReport: CharacteristicValue, Equatable {
  public var bytes: [UInt8]
  /// From the Report Reference read earlier (nil: the capture did not show it).
  public var reference: HIDReportReference?

  public init(bytes: [UInt8], reference: HIDReportReference?) {
    self.bytes = bytes
    self.reference = reference
  }

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    self.init(bytes: Array(reader.readRemaining()), reference: nil)
  }

  public init(parsing reader: inout ByteReader, context: ValueContext) throws(DecodeError) {
    reader.layer = .profile
    self.init(bytes: Array(reader.readRemaining()), reference: context.reportReference)
  }

  public static let decoder = CharacteristicDecoder(uuid16: 0x2A4D, key: "report", HIDReport.self)

  public func writeFields(to fields: inout FieldList, context: ValueContext) {
    if let reference {
      reference.writeFields(to: &fields, context: context)
    } else {
      fields.text("report_reference", "Report reference", "unknown")
    }
    fields.bytes("data", "Data", bytes[...])
    fields.uint("length", "Length", bytes.count)
  }

  /// "Input report 0x1a: 00 ff ff …", or "report (ID and type unknown): …".
  public func summarize(into summary: inout SummaryLine, context: ValueContext) {
    if let reference {
      reference.summarize(into: &summary, context: context)
    } else {
      summary.append(.text("report (ID and type unknown)"))
    }
    summary.append(.text(": "))
    if bytes.isEmpty {
      summary.append(.text("empty"))
    } else {
      summary.append(.bytes(bytes[...]))
    }
  }
}

/// Protocol Mode 0x2A4E: 0 Boot Protocol Mode, 1 Report Protocol Mode.
public struct HIDProtocolMode: CharacteristicValue, Equatable {
  public var mode: UInt8

  public init(mode: UInt8) { self.mode = mode }

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    mode = try reader.readUInt8()
  }

  public var modeName: Name? {
    switch mode {
    case 0: return "Boot Protocol Mode"
    case 1: return "Report Protocol Mode"
    default: return nil
    }
  }

  public static let decoder = CharacteristicDecoder(uuid16: 0x2A4E, key: "protocol_mode", HIDProtocolMode.self, summarySaysItAll: true)

  public func writeFields(to fields: inout FieldList, context: ValueContext) {
    fields.code("mode", "Protocol mode", mode, width: 2, name: modeName)
  }

  public func summarize(into summary: inout SummaryLine, context: ValueContext) {
    if let modeName {
      summary.append(.text(modeName))
    } else {
      summary.append(.text("reserved mode "))
      summary.append(.hex(UInt64(mode), width: 2))
    }
  }

  public func diagnose(into diagnostics: inout [Diagnostic], context: ValueContext) {
    if modeName == nil { ProfileSupport.add(.profileReservedValue, &diagnostics, "Protocol Mode \(Hex.prefixed(UInt64(mode), width: 2)) is reserved") }
  }
}

/// HID Control Point 0x2A4C: 0 Suspend, 1 Exit Suspend (written without response).
public struct HIDControlPoint: CharacteristicValue, Equatable {
  public var command: UInt8

  public init(command: UInt8) { self.command = command }

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    command = try reader.readUInt8()
  }

  public var commandName: Name? {
    switch command {
    case 0: return "Suspend"
    case 1: return "Exit Suspend"
    default: return nil
    }
  }

  public static let decoder = CharacteristicDecoder(uuid16: 0x2A4C, key: "hid_control_point", HIDControlPoint.self, summarySaysItAll: true)

  public func writeFields(to fields: inout FieldList, context: ValueContext) {
    fields.code("command", "Command", command, width: 2, name: commandName)
  }

  public func summarize(into summary: inout SummaryLine, context: ValueContext) {
    if let commandName {
      summary.append(.text(commandName))
    } else {
      summary.append(.text("reserved command "))
      summary.append(.hex(UInt64(command), width: 2))
    }
  }

  public func diagnose(into diagnostics: inout [Diagnostic], context: ValueContext) {
    if commandName == nil {
      ProfileSupport.add(.profileReservedValue, &diagnostics, "HID Control Point command \(Hex.prefixed(UInt64(command), width: 2)) is reserved")
    }
  }
}

/// Boot Keyboard Input Report 0x2A22 (HID 1.11 Appendix B.1): `modifiers(1) reserved(1)
/// keys(1) × 6`. The modifier bits: 0 Left Control, 1 Left Shift, 2 Left Alt, 3 Left GUI,
/// 4–7 the same on the right. A key is a Keyboard/Keypad usage (0 none, 1 ErrorRollOver).
/// A shorter report keeps the keys it has; more than six are kept too.
public struct BootKeyboardInputReport: CharacteristicValue, Equatable {
  public var modifiers: UInt8
  public var reserved: UInt8?
  public var keys: [UInt8]

  public init(modifiers: UInt8, reserved: UInt8?, keys: [UInt8]) {
    self.modifiers = modifiers
    self.reserved = reserved
    self.keys = keys
  }

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    modifiers = try reader.readUInt8()
    reserved = reader.isAtEnd ? nil : try reader.readUInt8()
    keys = Array(reader.readRemaining())
  }

  /// The keys pressed (not 0).
  public var pressed: [UInt8] { keys.filter { $0 != 0 } }

  public static let decoder = CharacteristicDecoder(uuid16: 0x2A22, key: "boot_keyboard_input_report", BootKeyboardInputReport.self)
  public static let modifierLayout: Name =
    "01:Left Control=no|yes;02:Left Shift=no|yes;04:Left Alt=no|yes;08:Left GUI=no|yes;10:Right Control=no|yes;20:Right Shift=no|yes;40:Right Alt=no|yes;80:Right GUI=no|yes"
  static let modifierNames: [Name] = ["Left Control", "Left Shift", "Left Alt", "Left GUI", "Right Control", "Right Shift", "Right Alt", "Right GUI"]

  public func writeFields(to fields: inout FieldList, context: ValueContext) {
    fields.addVerbose("modifiers", "Modifiers", .unsigned(UInt64(modifiers), .bits(2, layout: Self.modifierLayout)))
    fields.beginArray("modifier_keys", "Modifier keys")
    for bit in 0..<8 where modifiers & (1 << bit) != 0 { fields.text("", "Modifier", Self.modifierNames[bit]) }
    fields.end()
    if let reserved { fields.addVerbose("reserved", "Reserved", .unsigned(UInt64(reserved), .hex(2))) }
    fields.beginArray("keys", "Keys")
    for key in keys { HID.usageField("", "Key", page: 0x07, id: UInt16(key), value: UInt64(key), width: 2, to: &fields) }
    fields.end()
  }

  /// "Left Shift + a and A", "no keys".
  public func summarize(into summary: inout SummaryLine, context: ValueContext) {
    var first = true
    func plus() {
      if first { first = false } else { summary.append(.text(" + ")) }
    }
    for bit in 0..<8 where modifiers & (1 << bit) != 0 {
      plus()
      summary.append(.text(Self.modifierNames[bit]))
    }
    for key in keys where key != 0 {
      plus()
      summary.append(.string(HID.keyName(key)))
    }
    if first { summary.append(.text("no keys")) }
  }
}

/// Boot Keyboard Output Report 0x2A32 (HID 1.11 Appendix B.1): the LEDs, bit 0 Num Lock,
/// 1 Caps Lock, 2 Scroll Lock, 3 Compose, 4 Kana; 5–7 padding.
public struct BootKeyboardOutputReport: CharacteristicValue, Equatable {
  public var leds: UInt8

  public init(leds: UInt8) { self.leds = leds }

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    leds = try reader.readUInt8()
  }

  public static let decoder = CharacteristicDecoder(uuid16: 0x2A32, key: "boot_keyboard_output_report", BootKeyboardOutputReport.self)
  static let ledNames: [Name] = ["Num Lock", "Caps Lock", "Scroll Lock", "Compose", "Kana"]
  static let ledKeys: [Name] = ["num_lock", "caps_lock", "scroll_lock", "compose", "kana"]

  public func writeFields(to fields: inout FieldList, context: ValueContext) {
    fields.addVerbose("leds", "LEDs", .unsigned(UInt64(leds), .hex(2)))
    for bit in 0..<5 { fields.flag(Self.ledKeys[bit], Self.ledNames[bit], leds & (1 << bit) != 0) }
  }

  /// "LEDs Num Lock, Caps Lock", "LEDs off".
  public func summarize(into summary: inout SummaryLine, context: ValueContext) {
    var first = true
    for bit in 0..<5 where leds & (1 << bit) != 0 {
      summary.append(.text(first ? "LEDs " : ", "))
      first = false
      summary.append(.text(Self.ledNames[bit]))
    }
    if first { summary.append(.text("LEDs off")) }
  }

  public func diagnose(into diagnostics: inout [Diagnostic], context: ValueContext) {
    ProfileSupport.checkReserved(UInt64(leds), defined: 0x1F, width: 2, what: "Boot Keyboard Output Report (padding bits)", &diagnostics)
  }
}

/// Boot Mouse Input Report 0x2A33 (HID 1.11 Appendix B.2): `buttons(1) dx(s8) dy(s8)`, and
/// bytes the device adds: most send a wheel (s8) as the fourth; any after it are kept.
public struct BootMouseInputReport: CharacteristicValue, Equatable {
  public var buttons: UInt8
  public var dx: Int8
  public var dy: Int8
  public var wheel: Int8?
  public var extra: [UInt8]

  public init(buttons: UInt8, dx: Int8, dy: Int8, wheel: Int8?, extra: [UInt8] = []) {
    self.buttons = buttons
    self.dx = dx
    self.dy = dy
    self.wheel = wheel
    self.extra = extra
  }

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    buttons = try reader.readUInt8()
    dx = try reader.readInt8()
    dy = try reader.readInt8()
    wheel = reader.isAtEnd ? nil : try reader.readInt8()
    extra = Array(reader.readRemaining())
  }

  public static let decoder = CharacteristicDecoder(uuid16: 0x2A33, key: "boot_mouse_input_report", BootMouseInputReport.self)
  public static let buttonLayout: Name =
    "01:Left=up|down;02:Right=up|down;04:Middle=up|down;08:Button 4=up|down;10:Button 5=up|down;20:Button 6=up|down;40:Button 7=up|down;80:Button 8=up|down"
  static let buttonNames: [Name] = ["left", "right", "middle", "button 4", "button 5", "button 6", "button 7", "button 8"]

  public func writeFields(to fields: inout FieldList, context: ValueContext) {
    fields.addVerbose("buttons", "Buttons", .unsigned(UInt64(buttons), .bits(2, layout: Self.buttonLayout)))
    fields.beginArray("buttons_down", "Buttons down")
    for bit in 0..<8 where buttons & (1 << bit) != 0 { fields.text("", "Button", Self.buttonNames[bit]) }
    fields.end()
    fields.int("dx", "X displacement", dx)
    fields.int("dy", "Y displacement", dy)
    if let wheel { fields.int("wheel", "Wheel", wheel) } else { fields.add("wheel", "Wheel", .null) }
    if !extra.isEmpty { fields.bytes("extra", "Device-specific bytes", extra[...]) }
  }

  /// "dx 3, dy -2, wheel 1, left down".
  public func summarize(into summary: inout SummaryLine, context: ValueContext) {
    summary.append(.text("dx "))
    summary.append(.number(Int(dx)))
    summary.append(.text(", dy "))
    summary.append(.number(Int(dy)))
    if let wheel, wheel != 0 {
      summary.append(.text(", wheel "))
      summary.append(.number(Int(wheel)))
    }
    var first = true
    for bit in 0..<8 where buttons & (1 << bit) != 0 {
      summary.append(.text(first ? ", " : " + "))
      first = false
      summary.append(.text(Self.buttonNames[bit]))
    }
    if !first { summary.append(.text(" down")) }
  }
}

extension ProfileRegistry {
  /// This file's decoders (and the Report Map's): adding one here registers it.
  static let humanInterfaceDevice: [CharacteristicDecoder] = [
    HIDInformation.decoder,
    HIDReportMap.decoder,
    HIDControlPoint.decoder,
    HIDReport.decoder,
    HIDProtocolMode.decoder,
    BootKeyboardInputReport.decoder,
    BootKeyboardOutputReport.decoder,
    BootMouseInputReport.decoder,
    HIDReportReference.decoder,
  ]
}
