import BLECore
import Testing
@testable import BLEDecoder

/// `Name?` -> `String?` so expectations compare plain strings.
private func s(_ value: Name?) -> String? {
  value.map { String(describing: $0) }
}

@Suite("Assigned numbers")
struct AssignedNumbersTests {
  @Test func hciCommands() {
    #expect(s(AssignedNumbers.hciCommandName(0x0C03)) == "Reset")
    #expect(s(AssignedNumbers.hciCommandName(0x200D)) == "LE Create Connection")
    #expect(s(AssignedNumbers.hciCommandName(0x0401)) == "Inquiry")
    #expect(s(AssignedNumbers.hciCommandName(0x0000)) == "NOP")
    // Names are stripped of surrounding whitespace (the source has a trailing blank here).
    #expect(s(AssignedNumbers.hciCommandName(0x205D)) == "LE Set Default Periodic Advertisng Sync Transfer")
    #expect(AssignedNumbers.hciCommandName(0xFFFF) == nil)
    #expect(AssignedNumbers.hciCommandName(0x0C00) == nil)
  }

  @Test func hciEvents() {
    #expect(s(AssignedNumbers.hciEventName(0x3E)) == "LE Meta Event")
    #expect(s(AssignedNumbers.hciEventName(0x13)) == "Number of Completed Packets")
    #expect(s(AssignedNumbers.hciEventName(0x01)) == "Inquiry Complete")
    #expect(AssignedNumbers.hciEventName(0x00) == nil)
  }

  @Test func hciLESubevents() {
    #expect(s(AssignedNumbers.hciLESubeventName(0x01)) == "LE Connection Complete")
    #expect(s(AssignedNumbers.hciLESubeventName(0x02)) == "LE Advertising Report")
    #expect(s(AssignedNumbers.hciLESubeventName(0x1D)) == "LE Broadcast Isochronous Group Sync")
    #expect(AssignedNumbers.hciLESubeventName(0x00) == nil)
    #expect(AssignedNumbers.hciLESubeventName(0xFF) == nil)
  }

  @Test func hciErrors() {
    #expect(s(AssignedNumbers.hciErrorName(0x00)) == "Success")
    #expect(s(AssignedNumbers.hciErrorName(0x13)) == "Remote User Terminated Connection")
    #expect(s(AssignedNumbers.hciErrorName(0x3E)) == "Connection Failed to be Established")
    #expect(s(AssignedNumbers.hciErrorName(0x45)) == "Packet Too Long")
    #expect(AssignedNumbers.hciErrorName(0x46) == nil)
    #expect(AssignedNumbers.hciErrorName(0xFF) == nil)
  }

  @Test func att() {
    #expect(s(AssignedNumbers.attOpcodeName(0x01)) == "Error Response")
    #expect(s(AssignedNumbers.attOpcodeName(0x1B)) == "Handle Value Notification")
    #expect(s(AssignedNumbers.attOpcodeName(0x52)) == "Write Command")
    #expect(s(AssignedNumbers.attOpcodeName(0xD2)) == "Signed Write Command")
    #expect(AssignedNumbers.attOpcodeName(0x00) == nil)
    #expect(AssignedNumbers.attOpcodeName(0x14) == nil)

    #expect(s(AssignedNumbers.attErrorName(0x01)) == "Invalid Handle")
    #expect(s(AssignedNumbers.attErrorName(0x0A)) == "Attribute Not Found")
    #expect(s(AssignedNumbers.attErrorName(0xFD))
      == "Client Characteristic Configuration Descriptor Improperly Configured")
    // Ranges in the source data.
    #expect(s(AssignedNumbers.attErrorName(0x80)) == "Application Error (profile/service defined)")
    #expect(s(AssignedNumbers.attErrorName(0x9F)) == "Application Error (profile/service defined)")
    #expect(s(AssignedNumbers.attErrorName(0xE0)) == "Common Profile and Service Error Codes (reserved)")
    #expect(AssignedNumbers.attErrorName(0x00) == nil)
    #expect(AssignedNumbers.attErrorName(0x14) == nil)
    #expect(AssignedNumbers.attErrorName(0x7F) == nil)
  }

  @Test func l2capAndADTypes() {
    #expect(s(AssignedNumbers.l2capSignalingName(0x01)) == "Command Reject")
    #expect(s(AssignedNumbers.l2capSignalingName(0x12)) == "Connection Parameter Update Request")
    #expect(AssignedNumbers.l2capSignalingName(0x00) == nil)
    #expect(AssignedNumbers.l2capSignalingName(0x1B) == nil)

    #expect(s(AssignedNumbers.adTypeName(0x01)) == "Flags")
    #expect(s(AssignedNumbers.adTypeName(0x09)) == "Complete Local Name")
    #expect(s(AssignedNumbers.adTypeName(0xFF)) == "Manufacturer Specific Data")
    #expect(AssignedNumbers.adTypeName(0x00) == nil)
  }

  @Test func companies() {
    #expect(s(AssignedNumbers.companyName(0x004C)) == "Apple, Inc.")
    #expect(s(AssignedNumbers.companyName(0x0059)) == "Nordic Semiconductor ASA")
    #expect(s(AssignedNumbers.companyName(0x006B))?.contains("Polar") == true)
    #expect(s(AssignedNumbers.companyName(0x0000)) == "Ericsson AB")
    // Non-ASCII and escaped quotes survive generation.
    #expect(s(AssignedNumbers.companyName(0x0225)) == "Nestlé Nespresso S.A.")
    #expect(s(AssignedNumbers.companyName(0x0380)) == "LLC \"MEGA-F service\"")
    #expect(s(AssignedNumbers.companyName(0xFFFF))?.hasPrefix("Bluetooth SIG Specification Reserved") == true)
    #expect(AssignedNumbers.companyName(0xFFFE) == nil)
  }

  @Test func appearance() {
    #expect(s(AssignedNumbers.appearanceName(0x0000)) == "Unknown")
    #expect(s(AssignedNumbers.appearanceName(0x0340)) == "Heart Rate Sensor")
    #expect(s(AssignedNumbers.appearanceName(0x0341)) == "Heart Rate Sensor: Heart Rate Belt")
    #expect(s(AssignedNumbers.appearanceName(2 << 6 | 3)) == "Computer: Laptop")
    #expect(AssignedNumbers.appearanceName(0x0342) == nil)
    #expect(AssignedNumbers.appearanceName(0xFFFF) == nil)
  }

  @Test func gatt16() {
    #expect(s(AssignedNumbers.serviceName16(0x180D)) == "Heart Rate")
    #expect(s(AssignedNumbers.serviceName16(0x1800)) == "Generic Access")
    #expect(s(AssignedNumbers.characteristicName16(0x2A37)) == "Heart Rate Measurement")
    #expect(s(AssignedNumbers.characteristicName16(0x2B20)) == "IDD Status Changed")  // duplicated in source
    #expect(s(AssignedNumbers.descriptorName16(0x2902)) == "Client Characteristic Configuration")
    #expect(s(AssignedNumbers.declarationName16(0x2800)) == "Primary Service")
    #expect(s(AssignedNumbers.declarationName16(0x2803)) == "Characteristic")
    #expect(AssignedNumbers.serviceName16(0x2A37) == nil)
    #expect(AssignedNumbers.characteristicName16(0x180D) == nil)
    #expect(AssignedNumbers.descriptorName16(0x0000) == nil)
    #expect(AssignedNumbers.declarationName16(0x2804) == nil)

    #expect(s(AssignedNumbers.uuid16Name(0x2803)) == "Characteristic")
    #expect(s(AssignedNumbers.uuid16Name(0x180D)) == "Heart Rate")
    #expect(s(AssignedNumbers.uuid16Name(0x2A37)) == "Heart Rate Measurement")
    #expect(s(AssignedNumbers.uuid16Name(0x2902)) == "Client Characteristic Configuration")
    #expect(AssignedNumbers.uuid16Name(0x0000) == nil)
  }

  @Test func gatt128() {
    // Nordic UART Service 6E400001-B5A3-F393-E0A9-E50E24DCCA9E and its RX/TX characteristics.
    #expect(s(AssignedNumbers.uuid128Name(high: 0x6E40_0001_B5A3_F393, low: 0xE0A9_E50E_24DC_CA9E))
      == "Nordic UART Service")
    #expect(s(AssignedNumbers.uuid128Name(high: 0x6E40_0002_B5A3_F393, low: 0xE0A9_E50E_24DC_CA9E))
      == "UART RX Characteristic")
    #expect(s(AssignedNumbers.uuid128Name(high: 0x6E40_0003_B5A3_F393, low: 0xE0A9_E50E_24DC_CA9E))
      == "UART TX Characteristic")
    // Same UUID listed as service and characteristic in the source: the service wins.
    #expect(s(AssignedNumbers.uuid128Name(high: 0x8E40_0001_F315_4F60, low: 0x9FB8_8388_30DA_EA50))
      == "Experimental Buttonless DFU Service")
    // Right high half, wrong low half.
    #expect(AssignedNumbers.uuid128Name(high: 0x6E40_0001_B5A3_F393, low: 0) == nil)
    // The Bluetooth Base UUID form of a 16-bit UUID is not in the 128-bit table.
    #expect(AssignedNumbers.uuid128Name(high: 0x0000_180D_0000_1000, low: 0x8000_0080_5F9B_34FB) == nil)
  }
}

@Suite struct VendorUUIDNameTests {
  @Test func vendorUUIDsFromTheReferenceHaveNames() {
    // Polar PMD control point FB005C81-02E7-F387-1CAD-8ACD2D8DF0C8 (gatt-payloads.md §8.1).
    #expect(AssignedNumbers.uuid128Name(high: 0xFB00_5C81_02E7_F387, low: 0x1CAD_8ACD_2D8D_F0C8)?.description == "Polar PMD Control Point")
    // Huami auth 00000009-0000-3512-2118-0009AF100700 (gatt-payloads.md §9.1).
    #expect(AssignedNumbers.uuid128Name(high: 0x0000_0009_0000_3512, low: 0x2118_0009_AF10_0700)?.description == "Huami Auth")
    // Member service 0xFEE0 is named through the combined 16-bit lookup.
    #expect(AssignedNumbers.uuid16Name(0xFEE0)?.description == "Anhui Huami Service 1")
    // The Nordic database still wins where it has the UUID (Nordic UART).
    #expect(AssignedNumbers.uuid128Name(high: 0x6E40_0001_B5A3_F393, low: 0xE0A9_E50E_24DC_CA9E) != nil)
  }
}
