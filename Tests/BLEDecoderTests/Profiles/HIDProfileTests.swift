import BLECore
import BLETestSupport
import Testing

@testable import BLEDecoder

@Suite struct HIDProfileTests {
  // The BLE mouse of ../shared/corpus/miband3_blproject/ble_mouse_connection_movement.pcapng
  // (frames 194–249): the first 44 bytes of its Report Map.
  static let mouseMapStart: [UInt8] = hexBytes(
    "05010902a10105010902a102851a0901a10005091901" + "29059505750115002501810275039501810105010930")

  @Test func reportMapItems() throws {
    // Usage Page (Generic Desktop) Usage (Mouse) Collection (Application) … End Collection ×3,
    // closed by hand after the corpus mouse's first items.
    let bytes = Self.mouseMapStart + [0x09, 0x31, 0x16, 0x01, 0x80, 0x26, 0xFF, 0x7F, 0x81, 0x06, 0xC0, 0xC0, 0xC0]
    let map = try HIDReportMap(bytes: bytes)
    #expect(map.length == bytes.count)
    #expect(map.itemCount == 29)
    #expect(map.items[0].name.description == "Usage Page" && map.items[0].data == 1 && map.items[0].type == .global)
    #expect(map.items[2].name.description == "Collection" && map.items[2].data == 1 && map.items[2].depth == 0)
    #expect(map.items[6].name.description == "Report ID" && map.items[6].data == 0x1A && map.items[6].depth == 2)
    // Usage Minimum/Maximum on the Button page.
    #expect(map.items[10].name.description == "Usage Minimum" && map.items[10].usagePage == 9)
    // Logical Minimum -32767 (16 01 80), Logical Maximum 32767 (26 ff 7f): signed, little-endian.
    let minimum = try #require(map.items.first { $0.prefix == 0x16 })
    #expect(minimum.signedData == -32767 && minimum.size == 2)
    #expect(map.items.first { $0.prefix == 0x26 }?.signedData == 32767)
    #expect(map.unclosedCollections == 0 && map.unmatchedEnds.isEmpty && !map.isCut)
    #expect(map.applications == ["Mouse"])
    #expect(map.reportIDs == [0x1A])

    let frame = try decodeProfile(0x2A4B, bytes, operation: .read)
    #expect(frame.summaryText == "57 bytes, 29 items: Mouse; report ID 0x1a")
    #expect(frame.diagnostics.isEmpty)
    #expect(frame.fields.uint("item_count") == 29)
    #expect(frame.fields.name("items.0.usage_page") == "Generic Desktop Controls")
    #expect(frame.fields.name("items.1.usage") == "Mouse")
    #expect(frame.fields.name("items.2.collection") == "Application")
    // Nested: the Application collection's items, then the Logical one's, then the Physical.
    #expect(frame.fields.name("items.2.items.2.collection") == "Logical")
    #expect(frame.fields.uint("items.2.items.2.items.0.report_id") == 0x1A)
    #expect(frame.fields.name("items.2.items.2.items.2.items.0.usage_page") == "Button")
    #expect(frame.fields.name("items.2.items.2.items.2.items.2.usage_maximum") == "Button 5")
    #expect(frame.fields.name("items.2.items.2.items.2.items.7.input") == "Data, Variable, Absolute")
    #expect(frame.fields.name("items.2.items.2.items.2.items.10.input") == "Constant, Array, Absolute")
    #expect(frame.fields.name("items.2.items.2.items.2.items.12.usage") == "X")
    #expect(frame.fields.int("items.2.items.2.items.2.items.14.logical_minimum") == -32767)
    #expect(frame.fields.name("items.2.items.2.items.2.items.16.input") == "Data, Variable, Relative")
  }

  @Test func reportMapUsagesAreLittleEndianAndExtended() throws {
    // Usage Page (Consumer) Usage (0x0238: AC Pan, bytes 38 02), a 4-byte extended usage
    // (page 0x0001, usage 0x0030: X), a vendor page and Button 9 (named by number).
    let bytes: [UInt8] = [0x05, 0x0C, 0x0A, 0x38, 0x02, 0x0B, 0x30, 0x00, 0x01, 0x00, 0x06, 0x00, 0xFF, 0x09, 0x01, 0x05, 0x09, 0x09, 0x09]
    let frame = try decodeProfile(0x2A4B, bytes, operation: .read)
    #expect(frame.fields.uint("items.1.usage") == 0x0238)
    #expect(frame.fields.name("items.1.usage") == "AC Pan")
    #expect(frame.fields.uint("items.2.usage") == 0x0001_0030)
    #expect(frame.fields.name("items.2.usage") == "X")
    #expect(frame.fields.name("items.3.usage_page") == "Vendor-defined")
    #expect(frame.fields.name("items.4.usage") == "Vendor-defined")
    #expect(frame.fields.name("items.6.usage") == "Button 9")
  }

  @Test func reportMapCutItemIsKeptAndMarked() throws {
    // A map read only in part: the value ends inside Logical Maximum (26 ff: 2 data bytes declared, 1 left).
    let bytes: [UInt8] = [0x05, 0x01, 0x09, 0x02, 0xA1, 0x01, 0x26, 0xFF]
    let frame = try decodeProfile(0x2A4B, bytes, operation: .read)
    #expect(frame.fields.uint("item_count") == 4)
    #expect(frame.fields.bool("items.2.items.0.cut") == true)
    #expect(frame.fields.int("items.2.items.0.logical_maximum") == 0xFF)
    #expect(frame.summaryText == "8 bytes, 4 items: Mouse; last item cut")
    #expect(frame.warnings == [
      "Report Map ends inside the Logical Maximum item at offset 6 (it declares 2 data bytes)",
      "1 collection not closed at the Report Map's end",
    ])
    // Every prefix decodes (the parser never throws).
    for length in 0...bytes.count { #expect(profileError(0x2A4B, Array(bytes.prefix(length))) == nil) }
    // A long item cut short, a reserved item, an End Collection that closes nothing.
    let odd = try HIDReportMap(bytes: [0xC0, 0xFC, 0xFE, 0x05, 0x10, 0xAA])
    #expect(odd.unmatchedEnds == [0])
    #expect(odd.items[1].type == .reserved && odd.items[1].name.description == "Reserved Item")
    #expect(odd.items[2].isLong && odd.items[2].cut && odd.items[2].size == 5 && odd.items[2].longTag == 0x10)
  }

  @Test func hostileReportMapsStayBounded() throws {
    // 10 000 nested collections, never closed: counted, not recursed; the fields nest 8 deep.
    let nested = [UInt8](repeating: 0, count: 20_000).enumerated().map { $0.offset % 2 == 0 ? UInt8(0xA1) : UInt8(0x01) }
    let map = try HIDReportMap(bytes: nested)
    #expect(map.itemCount == 10_000 && map.items.count == HIDReportMap.maximumItems)
    #expect(map.unclosedCollections == 10_000)
    let frame = try decodeProfile(0x2A4B, nested, operation: .read)
    #expect(frame.fields.fields.map(\.depth).max()! <= 2 * HIDReportMap.maximumShownNesting + 2)
    #expect(frame.fields.uint("items_not_shown") == UInt64(10_000 - HIDReportMap.maximumItems))
    #expect(frame.warnings == ["10000 collections not closed at the Report Map's end"])
    // 10 000 End Collections, and thousands of Push items past the stack.
    let ends = try HIDReportMap(bytes: [UInt8](repeating: 0xC0, count: 10_000))
    #expect(ends.unmatchedEnds.count == 64 && ends.unmatchedEndCount == 10_000 && ends.itemCount == 10_000)
    var endWarnings: [Diagnostic] = []
    ends.diagnose(into: &endWarnings, context: ValueContext(operation: .read, uuid: BluetoothUUID(uuid16: 0x2A4B)))
    #expect(endWarnings.map(\.message) == ["End Collection at offset 0 closes no collection (and 9999 more)"])
    let pushes = try HIDReportMap(bytes: [UInt8](repeating: 0xA4, count: 5_000) + [UInt8](repeating: 0xB4, count: 6_000))
    #expect(pushes.pushOverflow == 5_000 - 32)
    // 33 Pushes, each after its own Usage Page (the 33rd past the stack), a page change, then
    // two Pops: the first undoes the 33rd Push, the second restores the 32nd's page.
    var stacked: [UInt8] = []
    for page in 1...33 { stacked += [0x05, UInt8(page), 0xA4] }
    stacked += [0x05, 99, 0xB4, 0xB4, 0x09, 0x01]
    let popped = try HIDReportMap(bytes: stacked)
    #expect(popped.pushOverflow == 1 && popped.items.last?.usagePage == 32)
    // A value cut inside its last item, past the items kept: still said.
    let long = try HIDReportMap(bytes: [UInt8](repeating: 0xC0, count: 5_000) + [0x06, 0x01])
    #expect(long.items.count == HIDReportMap.maximumItems && long.isCut)
  }

  @Test func hidInformation() throws {
    // The corpus mouse, frame 197: bcdHID 0x0101, country 0, flags 0x03.
    let frame = try decodeProfile(0x2A4A, [0x01, 0x01, 0x00, 0x03], operation: .read)
    #expect(frame.fields.uint("bcd_hid") == 0x0101)
    #expect(frame.fields.text("hid_version") == "1.01")
    #expect(frame.fields.name("country_code") == "Not supported")
    #expect(frame.fields.uint("flags") == 3)
    #expect(frame.fields.bool("remote_wake") == true && frame.fields.bool("normally_connectable") == true)
    #expect(frame.summaryText == "HID 1.01, country not localized, remote wake, normally connectable")
    let german = try decodeProfile(0x2A4A, [0x11, 0x01, 0x09, 0x04])
    #expect(german.summaryText == "HID 1.11, German")
    #expect(german.warnings == ["reserved bits set in HID Information flags: 0x04"])
    expectPrefixesTruncate(0x2A4A, [0x11, 0x01, 0x09, 0x00])
    expectTrailingByteRejected(0x2A4A, [0x11, 0x01, 0x09, 0x00])
  }

  @Test func reportReferenceProtocolModeAndControlPoint() throws {
    let reference = try decodeProfile(0x2908, [0x1A, 0x01], operation: .read)
    #expect(reference.fields.uint("report_id") == 0x1A)
    #expect(reference.fields.name("report_type") == "Input")
    #expect(reference.summaryText == "Input report 0x1a")
    #expect(try decodeProfile(0x2908, [0x24, 0x03]).summaryText == "Feature report 0x24")
    #expect(try decodeProfile(0x2908, [0x01, 0x07]).warnings == ["Report Reference report type 0x07 is reserved"])
    expectPrefixesTruncate(0x2908, [0x1A, 0x01])
    expectTrailingByteRejected(0x2908, [0x1A, 0x01])

    #expect(try decodeProfile(0x2A4E, [0x01], operation: .read).summaryText == "Report Protocol Mode")
    #expect(try decodeProfile(0x2A4E, [0x00]).fields.name("mode") == "Boot Protocol Mode")
    #expect(try decodeProfile(0x2A4E, [0x02]).warnings == ["Protocol Mode 0x02 is reserved"])

    #expect(try decodeProfile(0x2A4C, [0x00], operation: .writeWithoutResponse).summaryText == "Suspend")
    #expect(try decodeProfile(0x2A4C, [0x01], operation: .writeWithoutResponse).fields.name("command") == "Exit Suspend")
    #expect(try decodeProfile(0x2A4C, [0x05]).warnings == ["HID Control Point command 0x05 is reserved"])
    expectTrailingByteRejected(0x2A4C, [0x00])
  }

  @Test func reportWithAndWithoutItsReference() throws {
    // The corpus mouse's frame 434: handle 0x0016, whose Report Reference said Input 0x1a.
    let bytes: [UInt8] = [0x00, 0xF8, 0xFF, 0x0F, 0x00, 0x00, 0x00, 0x00, 0x00]
    let uuid = BluetoothUUID(uuid16: 0x2A4D)
    var context = ValueContext(operation: .notification, uuid: uuid)
    context.reportReference = HIDReportReference(reportID: 0x1A, reportType: 1)
    let decoded = try #require(HIDReport.decoder.decode(bytes, context: context).value as? HIDReport)
    #expect(decoded.reference == HIDReportReference(reportID: 0x1A, reportType: 1))
    var line = SummaryLine()
    decoded.summarize(into: &line, context: context)
    #expect(line.text == "Input report 0x1a: 00 f8 ff 0f 00 00 00 00 00")
    let unknown = try decodeProfile(0x2A4D, bytes)
    #expect(unknown.fields.word("report_reference") == "unknown")
    #expect(unknown.fields.text("data") == "00f8ff0f0000000000")
    #expect(unknown.summaryText == "report (ID and type unknown): 00 f8 ff 0f 00 00 00 00 00")
  }

  @Test func bootReports() throws {
    // Keyboard: Left Shift + A (0x04; usb.ids names the keyboard usages by their key), reserved 0, five keys up.
    let keyboard = try decodeProfile(0x2A22, [0x02, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00])
    #expect(keyboard.summaryText == "Left Shift + A")
    #expect(keyboard.fields.uint("modifiers") == 0x02)
    #expect(keyboard.fields.word("modifier_keys.0") == "Left Shift")
    #expect(keyboard.fields.name("keys.0") == "A")
    #expect(try decodeProfile(0x2A22, [0x00, 0x00, 0, 0, 0, 0, 0, 0]).summaryText == "no keys")
    #expect(try decodeProfile(0x2A22, [0x00, 0x00, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01]).fields.name("keys.0") == "Keyboard ErrorRollOver")
    expectPrefixesTruncate(0x2A22, [0x02])

    let leds = try decodeProfile(0x2A32, [0x03], operation: .write)
    #expect(leds.summaryText == "LEDs Num Lock, Caps Lock")
    #expect(leds.fields.bool("num_lock") == true && leds.fields.bool("caps_lock") == true && leds.fields.bool("kana") == false)
    #expect(try decodeProfile(0x2A32, [0x00]).summaryText == "LEDs off")
    #expect(try decodeProfile(0x2A32, [0x80]).warnings == ["reserved bits set in Boot Keyboard Output Report (padding bits): 0x80"])

    // Mouse: left button down, dx +5, dy -3, wheel -1; one device-specific byte more.
    let mouse = try decodeProfile(0x2A33, [0x01, 0x05, 0xFD, 0xFF, 0x42])
    #expect(mouse.summaryText == "dx 5, dy -3, wheel -1, left down")
    #expect(mouse.fields.int("dx") == 5 && mouse.fields.int("dy") == -3 && mouse.fields.int("wheel") == -1)
    #expect(mouse.fields.word("buttons_down.0") == "left")
    #expect(mouse.fields.text("extra") == "42")
    let plain = try decodeProfile(0x2A33, [0x06, 0x00, 0x01])
    #expect(plain.summaryText == "dx 0, dy 1, right + middle down")
    #expect(plain.fields.isNull("wheel"))
    expectPrefixesTruncate(0x2A33, [0x01, 0x05, 0xFD])
  }

  @Test func batteryPowerAndLevelState() throws {
    // Battery Power State 0xBB = 10 11 10 11: present (3), not discharging (2), charging (3), level good (2).
    let state = try decodeProfile(0x2A1A, [0xBB], operation: .read)
    #expect(state.fields.word("present") == "present")
    #expect(state.fields.word("discharging") == "not_discharging")
    #expect(state.fields.word("charging") == "charging")
    #expect(state.fields.word("level") == "good")
    #expect(state.summaryText == "present, not discharging, charging, level good")
    #expect(try decodeProfile(0x2A1A, [0x00]).summaryText == "state unknown")
    // 0xDF = 11 01 11 11: present, discharging, not chargeable, critically low.
    #expect(try decodeProfile(0x2A1A, [0xDF]).summaryText == "present, discharging, not chargeable, level critically low")
    expectTrailingByteRejected(0x2A1A, [0xBB])

    let levelState = try decodeProfile(0x2A1B, [0x4B, 0xBB])
    #expect(levelState.fields.uint("percent") == 75)
    #expect(levelState.fields.word("power_state.charging") == "charging")
    #expect(levelState.summaryText == "75 %, present, not discharging, charging, level good")
    let levelOnly = try decodeProfile(0x2A1B, [0x4B])
    #expect(levelOnly.summaryText == "75 %" && levelOnly.fields.value("power_state") == nil)
    #expect(try decodeProfile(0x2A1B, [0x65]).warnings == ["battery level 101 % is above 100 %"])
    expectPrefixesTruncate(0x2A1B, [0x4B])
    expectTrailingByteRejected(0x2A1B, [0x4B, 0xBB])
  }

  @Test func textPayloads() {
    #expect(TextPayload.lenientText(Array("HELLO\r\n".utf8)) == "HELLO\r\n")
    #expect(TextPayload.lenientText(Array("BAT 91%\r\n".utf8)) == "BAT 91%\r\n")
    #expect(TextPayload.lenientText([0x01, 0x02, 0x41]) == nil)
    #expect(TextPayload.quotedIfText(Array("AT+BOND\r\n".utf8)) == "\"AT+BOND\\r\\n\"")
    #expect(TextPayload.quotedIfText([0x0D, 0x0A]) == "\"\\r\\n\"")
    #expect(TextPayload.quotedIfText(Array("say \"hi\"\tnow".utf8)) == "\"say \\\"hi\\\"\\tnow\"")
    // Short digits and binary stay hex.
    #expect(TextPayload.quotedIfText([0x30, 0x31]) == nil)
    #expect(TextPayload.quotedIfText([0x41, 0x1B, 0x5B, 0x32, 0x4A, 0x0A]) == nil)
    #expect(TextPayload.quotedIfText([0x41]) == nil)
  }

  @Test func flagLayoutsDrawEveryBit() {
    let lines = BitLayout.lines(0x16, width: 2, layout: HeartRateMeasurement.flagLayout)
    #expect(lines.map { $0.bits + " = " + $0.label + ": " + $0.word } == [
      ".... ...0 = Heart rate value format: UINT8",
      ".... ..1. = Sensor contact status: detected",
      ".... .1.. = Sensor contact: supported",
      ".... 0... = Energy expended: absent",
      "...1 .... = RR intervals: present",
      "000. .... = Reserved: 0",
    ])
    #expect(BitLayout.lines(0x07, width: 2, layout: RSCMeasurement.flagLayout).map(\.word) == ["present", "present", "running", "0"])
    #expect(BitLayout.lines(0x01, width: 2, layout: TemperatureMeasurement.flagLayout).first?.word == "Fahrenheit")
    #expect(BitLayout.lines(0x01, width: 2, layout: BloodPressureMeasurement.flagLayout).first?.word == "kPa")
    #expect(BitLayout.lines(0x03, width: 2, layout: CSCMeasurement.flagLayout).map(\.word) == ["present", "present", "0"])
  }
}
