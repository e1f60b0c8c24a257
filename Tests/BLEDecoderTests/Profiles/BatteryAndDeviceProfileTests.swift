import BLECore
import BLERender
import Testing

@testable import BLEDecoder

@Suite struct BatteryAndDeviceProfileTests {
  @Test func batteryLevel() throws {
    // captures/hr_strap_session.btsnoop frame 111: bumble 0.0.236 battery_service Read Response, 87 %.
    let frame = try decodeProfile(0x2A19, [0x57], operation: .read)
    #expect(frame.fields.uint("percent") == 87)
    #expect(frame.summaryText == "87 %")
    #expect(frame.diagnostics.isEmpty)
    #expect(try BatteryLevel(bytes: [0x57]).percent == 87)
    expectPrefixesTruncate(0x2A19, [0x57])
    expectTrailingByteRejected(0x2A19, [0x57])
    let high = try decodeProfile(0x2A19, [101])
    #expect(high.warnings == ["battery level 101 % is above 100 %"])
    #expect(try decodeProfile(0x2A19, [100]).diagnostics.isEmpty)
    #expect((typedValue(0x2A19, [87]) as? BatteryLevel)?.percent == 87)
    #expect((typedValue(0x2A19, [101]) as? BatteryLevel) == BatteryLevel(percent: 101))
  }

  @Test func batteryLevelStatus() throws {
    // Constructed per the GSS battery_level_status layout (reference §2): flags 0x07 (identifier,
    // level, additional status), power state 0x0223 = battery present, wired power yes,
    // charging (bits 5–6 = 1), charge level unknown, charging type constant current (bits 9–11 = 1);
    // identifier 0x0106 (main), level 64 %, additional status 0x01 (service required).
    let bytes: [UInt8] = [0x07, 0x23, 0x02, 0x06, 0x01, 0x40, 0x01]
    let frame = try decodeProfile(0x2BED, bytes)
    #expect(frame.fields.bool("power_state.battery_present") == true)
    #expect(frame.fields.word("power_state.wired_external_power") == "yes")
    #expect(frame.fields.word("power_state.wireless_external_power") == "no")
    #expect(frame.fields.word("power_state.charge_state") == "charging")
    #expect(frame.fields.word("power_state.charge_level") == "unknown")
    #expect(frame.fields.word("power_state.charging_type") == "constant_current")
    #expect(frame.fields.bool("power_state.charging_fault_battery") == false)
    #expect(frame.fields.uint("identifier") == 0x0106)
    #expect(frame.fields.uint("percent") == 64)
    #expect(frame.fields.word("additional_status.service_required") == "yes")
    #expect(frame.fields.bool("additional_status.battery_fault") == false)
    #expect(frame.summaryText == "64 %, charging, external power")
    #expect(frame.diagnostics.isEmpty)
    let typed = try BatteryLevelStatus(bytes: bytes)
    #expect(typed.batteryLevel == 64)
    #expect(typed.identifier == 0x0106)
    #expect(typed.chargeState == .charging)
    #expect(typed.wiredExternalPower == .yes)
    #expect(typed.chargingType == 1)
    let registered = try #require(typedValue(0x2BED, bytes) as? BatteryLevelStatus)
    #expect(registered == typed)
    #expect(registered.batteryPresent && registered.chargeLevel == .unknown && registered.additionalStatus == 0x01)
    #expect(registered.serviceRequired == 1 && registered.batteryFault == false)
    expectPrefixesTruncate(0x2BED, bytes)
    expectTrailingByteRejected(0x2BED, bytes)

    // Minimal value: flags 0, power state 0x0181 = battery present, charge state unknown
    // (bits 5–6 = 0), charge level critical (bits 7–8 = 3).
    let minimal = try decodeProfile(0x2BED, [0x00, 0x81, 0x01])
    #expect(minimal.fields.word("power_state.charge_level") == "critical")
    #expect(minimal.fields.value("percent") == nil)
    #expect(minimal.summaryText == "charge state unknown, level critical")
    let minimalValue = try #require(typedValue(0x2BED, [0x00, 0x81, 0x01]) as? BatteryLevelStatus)
    #expect(minimalValue.batteryLevel == nil && minimalValue.identifier == nil && minimalValue.serviceRequired == nil)
    #expect(minimalValue.chargeLevel == .critical)
    // Reserved flag bit 3 and power-state bit 15.
    let reserved = try decodeProfile(0x2BED, [0x08, 0x01, 0x80])
    #expect(
      reserved.warnings == [
        "reserved bits set in Battery Level Status flags: 0x08",
        "reserved bits set in Battery Level Status power state: 0x8000",
      ])
  }

  @Test func deviceInformationStrings() throws {
    // captures/hr_strap_session.btsnoop frames 96–105: bumble 0.0.236 device_information_service reads.
    let cases: [(UInt16, [UInt8], String)] = [
      (0x2A29, Array("bledissect labs".utf8), "bledissect labs"),
      (0x2A24, Array("HRS-1".utf8), "HRS-1"),
      (0x2A25, Array("0001-2025".utf8), "0001-2025"),
      (0x2A26, Array("1.2.3".utf8), "1.2.3"),
      (0x2A27, Array("rev B".utf8), "rev B"),
      (0x2A28, Array("2.0".utf8), "2.0"),
    ]
    for (uuid, bytes, text) in cases {
      let frame = try decodeProfile(uuid, bytes, operation: .read)
      #expect(frame.fields.text("value") == text)
      #expect(frame.summaryText == text)
      #expect(frame.diagnostics.isEmpty)
      #expect((typedValue(uuid, bytes) as? any TextCharacteristic)?.text == text)
    }
    // Each string has its own type and label.
    #expect((typedValue(0x2A29, Array("bledissect labs".utf8)) as? ManufacturerNameString)?.text == "bledissect labs")
    #expect((typedValue(0x2A24, Array("HRS-1".utf8)) as? ModelNumberString)?.string == UTF8Text(text: "HRS-1"))
    #expect((typedValue(0x2A25, Array("0001-2025".utf8)) as? SerialNumberString)?.text == "0001-2025")
    #expect((typedValue(0x2A26, Array("1.2.3".utf8)) as? FirmwareRevisionString)?.text == "1.2.3")
    #expect((typedValue(0x2A27, Array("rev B".utf8)) as? HardwareRevisionString)?.text == "rev B")
    #expect((typedValue(0x2A28, Array("2.0".utf8)) as? SoftwareRevisionString)?.text == "2.0")
    #expect(ModelNumberString.label.description == "Model number")
    #expect(ManufacturerNameString.label.description == "Manufacturer name")
    #expect(ProfileRegistry.decoder(for: BluetoothUUID(uuid16: 0x2A29))?.key.description == "manufacturer_name_string")
    // NUL padding is dropped (with a note); invalid UTF-8 is replaced (with a warning).
    let padded = try decodeProfile(0x2A24, Array("HRS-1".utf8) + [0, 0], operation: .read)
    #expect(padded.fields.text("value") == "HRS-1")
    #expect(padded.diagnostics.first?.severity == .note)
    #expect((typedValue(0x2A24, Array("HRS-1".utf8) + [0, 0]) as? ModelNumberString)?.string == UTF8Text(text: "HRS-1", nulPadding: 2))
    let invalid = try decodeProfile(0x2A24, [0x41, 0xFF], operation: .read)
    #expect(invalid.warnings == ["string is not valid UTF-8"])
    #expect((typedValue(0x2A24, [0x41, 0xFF]) as? ModelNumberString)?.string.isValidUTF8 == false)
    // An empty string is a valid value.
    #expect(try decodeProfile(0x2A26, [], operation: .read).fields.text("value") == "")
  }

  @Test func systemID() throws {
    // Constructed per GSS system_id (reference §3): manufacturer identifier 0x0102030405 in
    // bytes 0–4, OUI 0xAABBCC in bytes 5–7 (u64 LE).
    let bytes: [UInt8] = [0x05, 0x04, 0x03, 0x02, 0x01, 0xCC, 0xBB, 0xAA]
    let frame = try decodeProfile(0x2A23, bytes, operation: .read)
    #expect(frame.fields.uint("manufacturer_identifier") == 0x01_0203_0405)
    #expect(frame.fields.uint("oui") == 0xAABBCC)
    #expect(frame.summaryText == "OUI 0xaabbcc, identifier 0x0102030405")
    let typed = try #require(typedValue(0x2A23, bytes) as? SystemID)
    #expect(typed == SystemID(rawValue: 0xAABB_CC01_0203_0405))
    #expect(typed.manufacturerIdentifier == 0x01_0203_0405 && typed.organizationallyUniqueIdentifier == 0xAABBCC)
    expectPrefixesTruncate(0x2A23, bytes)
    expectTrailingByteRejected(0x2A23, bytes)
  }

  @Test func regulatoryDataIsHex() throws {
    let frame = try decodeProfile(0x2A2A, [0xFE, 0x00, 0x01], operation: .read)
    #expect(frame.fields.text("data") == "fe0001")
    #expect(frame.summaryText == "3 bytes")
    #expect((typedValue(0x2A2A, [0xFE, 0x00, 0x01]) as? RegulatoryCertificationDataList)?.data == [0xFE, 0x00, 0x01])
    // The data is the whole value: nothing is left over, and an empty value is allowed.
    #expect(profileError(0x2A2A, [0xFE, 0x00, 0x01]) == nil)
    #expect(try decodeProfile(0x2A2A, [0x01], operation: .read).summaryText == "1 byte")
    #expect((typedValue(0x2A2A, []) as? RegulatoryCertificationDataList) == RegulatoryCertificationDataList(data: []))
  }

  @Test func pnpID() throws {
    // Constructed per GSS pnp_id (reference §3): source 1 (Bluetooth SIG), vendor 0x0059
    // (Nordic Semiconductor ASA), product 0x0001, version 0x0100.
    let bytes: [UInt8] = [0x01, 0x59, 0x00, 0x01, 0x00, 0x00, 0x01]
    let frame = try decodeProfile(0x2A50, bytes, operation: .read)
    #expect(frame.fields.uint("vendor_id_source") == 1)
    #expect(frame.fields.name("vendor_id_source") == "Bluetooth SIG")
    #expect(frame.fields.uint("vendor_id") == 0x0059)
    #expect(frame.fields.name("vendor_id") == "Nordic Semiconductor ASA")
    #expect(frame.fields.uint("product_id") == 1)
    #expect(frame.fields.uint("product_version") == 0x0100)
    #expect(frame.summaryText == "Nordic Semiconductor ASA, product 0x0001, version 0x0100")
    let typed = try PnPID(bytes: bytes)
    #expect(typed == PnPID(vendorIDSource: 1, vendorID: 0x59, productID: 1, productVersion: 0x100))
    #expect(typed.vendorName?.description == "Nordic Semiconductor ASA")
    #expect((typedValue(0x2A50, bytes) as? PnPID) == typed)
    expectPrefixesTruncate(0x2A50, bytes)
    expectTrailingByteRejected(0x2A50, bytes)

    // USB-IF source: the vendor id is a USB VID, not a company identifier (0x0059 stays unnamed).
    let usb = try decodeProfile(0x2A50, [0x02, 0x59, 0x00, 0x34, 0x12, 0x10, 0x00], operation: .read)
    #expect(usb.fields.name("vendor_id") == nil)
    #expect(usb.summaryText == "USB vendor 0x0059, product 0x1234, version 0x0010")
    let reserved = try decodeProfile(0x2A50, [0x03, 0x59, 0x00, 0x34, 0x12, 0x10, 0x00], operation: .read)
    #expect(reserved.warnings == ["PnP ID vendor ID source 3 is reserved"])
  }
}
