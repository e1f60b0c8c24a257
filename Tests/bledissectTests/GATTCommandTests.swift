import BLECapture
import BLECore
import BLEDecoder
import BLEEngine
import Foundation
import Testing

@testable import bledissect

/// Reads a capture to its end; keeps nothing but the engine's final state.
private final class NothingKept: FrameConsumer {
  var fieldDetail: FieldDetail { .none }
  func consume(_ frame: inout DissectedFrame) -> Bool { true }
}

/// The attribute tree the capture's discovery left for `address`.
func attributeTree(_ capture: String, _ address: String) throws -> GATTAttributeTree {
  let reader = try CaptureFile.open(path: capturePath(capture))
  let end = FrameStream(source: reader).run(into: NothingKept())
  let peer = try #require(BDAddr(address))
  let database = try #require(end.dissector.databases[.peer(peer)])
  return database.attributeTree
}

extension GATTAttributeTree {
  func service(_ uuid: String) -> GATTServiceEntry? { services.first { $0.uuid == BluetoothUUID(uuid) } }
}

extension GATTServiceEntry {
  func characteristic(_ uuid: String) -> GATTCharacteristicEntry? { characteristics.first { $0.uuid == BluetoothUUID(uuid) } }
}

@Suite struct GATTTreeTests {
  /// captures/README.md: Heart Rate 0x000e–0x0015 (HRM 0x0010 + CCCD 0x0011, Body Sensor
  /// Location 0x0013, Control Point 0x0015), Battery 0x0016–0x0019 (Level 0x0018 + CCCD 0x0019).
  /// Frames: the Read By Group Type Response is #45, the HR characteristics' Read By Type
  /// Response #63, the HRM CCCD's Find Information Response #84 (`bledissect -1` shows them).
  @Test func strapSession() throws {
    let tree = try attributeTree("hr_strap_session.btsnoop", "D0:B1:ED:00:48:52")
    #expect(tree.services.map(\.uuid.description) == ["1800", "1801", "180d", "180f", "180a"])
    #expect(tree.services.allSatisfy { $0.learnedIn == 45 && $0.primary })
    #expect(tree.characteristicsOutsideServices.isEmpty && tree.otherHandles.isEmpty)
    let heartRate = try #require(tree.service("180d"))
    #expect(heartRate.start == 0x000E && heartRate.end == 0x0015)
    #expect(heartRate.name?.description == "Heart Rate")
    #expect(heartRate.characteristics.map(\.valueHandle) == [0x0010, 0x0013, 0x0015])
    #expect(heartRate.characteristics.map(\.declarationHandle) == [0x000F, 0x0012, 0x0014])
    let measurement = try #require(heartRate.characteristic("2a37"))
    #expect(measurement.properties == 0x10 && measurement.propertyNames.map(\.description) == ["notify"])
    #expect(measurement.learnedIn == 63)
    #expect(measurement.descriptors == [GATTDescriptorEntry(handle: 0x0011, uuid: BluetoothUUID(uuid16: 0x2902), learnedIn: 84)])
    #expect(heartRate.characteristic("2a38")?.properties == 0x02)
    #expect(heartRate.characteristic("2a39")?.propertyNames.map(\.description) == ["write"])
    #expect(heartRate.characteristic("2a38")?.descriptors.isEmpty == true)
    let battery = try #require(tree.service("180f"))
    #expect(battery.start == 0x0016 && battery.end == 0x0019)
    let level = try #require(battery.characteristic("2a19"))
    #expect(level.valueHandle == 0x0018 && level.properties == 0x12 && level.learnedIn == 69)
    #expect(level.descriptors.map(\.handle) == [0x0019] && level.descriptors.first?.learnedIn == 87)
    #expect(tree.service("1801")?.characteristic("2b2a")?.valueHandle == 0x000D)
  }

  /// Two straps with identical handles: each keeps its own table, learned in its own frames.
  @Test func twoStraps() throws {
    let a = try attributeTree("two_straps.btsnoop", "D0:B1:ED:00:48:52")
    let b = try attributeTree("two_straps.btsnoop", "D0:B1:ED:00:48:53")
    for (tree, services, characteristics, cccd) in [(a, 37, 55, 76), (b, 100, 118, 139)] {
      let heartRate = try #require(tree.service("180d"))
      #expect(heartRate.learnedIn == services)
      #expect(heartRate.characteristic("2a37")?.valueHandle == 0x0010)
      #expect(heartRate.characteristic("2a37")?.learnedIn == characteristics)
      #expect(heartRate.characteristic("2a37")?.descriptors.first?.learnedIn == cccd)
    }
    #expect(a.services.map(\.start) == b.services.map(\.start))
  }

  /// EATT: the GATT service is found by Find By Type Value on CID 4 (#37); the full discovery
  /// (#58) runs later on an EATT bearer and finds it unchanged, so it keeps #37.
  @Test func eatt() throws {
    let tree = try attributeTree("eatt.btsnoop", "D0:B1:ED:00:45:41")
    let gatt = try #require(tree.service("1801"))
    #expect(gatt.learnedIn == 37 && gatt.start == 0x0006 && gatt.end == 0x000F)
    #expect(gatt.characteristic("2b3a")?.valueHandle == 0x000F)
    let heartRate = try #require(tree.service("180d"))
    #expect(heartRate.learnedIn == 58 && heartRate.start == 0x0010)
    let measurement = try #require(heartRate.characteristic("2a37"))
    #expect(measurement.valueHandle == 0x0012 && measurement.learnedIn == 78)
    #expect(measurement.descriptors.map(\.handle) == [0x0013] && measurement.descriptors.first?.learnedIn == 101)
    #expect(tree.service("180f")?.characteristic("2a19")?.valueHandle == 0x001A)
  }

  @Test func longValuesVendorService() throws {
    let tree = try attributeTree("long_values.btsnoop", "D0:B1:ED:00:4C:56")
    let vendor = try #require(tree.service("b1ed0001-5ca7-4e5a-9d1e-0000000000b1"))
    #expect(vendor.start == 0x0019 && vendor.end == 0x0020 && vendor.learnedIn == 40 && vendor.name == nil)
    let long = try #require(vendor.characteristic("b1ed0002-5ca7-4e5a-9d1e-0000000000b1"))
    #expect(long.valueHandle == 0x001B && long.properties == 0x0A && long.learnedIn == 70)
    #expect(long.propertyNames.map(\.description) == ["read", "write"])
    let notify = try #require(vendor.characteristic("b1ed0004-5ca7-4e5a-9d1e-0000000000b1"))
    #expect(notify.valueHandle == 0x001F && notify.descriptors.map(\.handle) == [0x0020] && notify.descriptors[0].learnedIn == 88)
    #expect(tree.service("180a")?.characteristic("2a29")?.valueHandle == 0x0010)
  }

  @Test func vendorServices() throws {
    let tree = try attributeTree("vendor_services.btsnoop", "D0:B1:ED:00:56:53")
    let uart = try #require(tree.service("6e400001-b5a3-f393-e0a9-e50e24dcca9e"))
    #expect(uart.start == 0x000E && uart.end == 0x0013 && uart.learnedIn == 40)
    #expect(uart.name?.description == "Nordic UART Service")
    let rx = try #require(uart.characteristic("6e400002-b5a3-f393-e0a9-e50e24dcca9e"))
    #expect(rx.valueHandle == 0x0010 && rx.properties == 0x0C && rx.learnedIn == 61)
    #expect(rx.propertyNames.map(\.description) == ["write_without_response", "write"])
    let pmd = try #require(tree.service("fb005c80-02e7-f387-1cad-8acd2d8df0c8"))
    let control = try #require(pmd.characteristic("fb005c81-02e7-f387-1cad-8acd2d8df0c8"))
    #expect(control.valueHandle == 0x0016 && control.propertyNames.map(\.description) == ["read", "write", "indicate"])
    #expect(control.descriptors.map(\.handle) == [0x0017] && control.descriptors[0].learnedIn == 85)
    #expect(tree.service("180f")?.characteristic("2a19")?.valueHandle == 0x001D)
  }

  /// Handles typed by Find Information only, with no structure around them, and a service
  /// declared with an include: the tree lists every entry once.
  @Test func looseEntriesAreListedOnce() {
    var database = GATTDatabase()
    database.setType(BluetoothUUID(uuid16: 0x2902), of: 0x0003, learnedIn: 7)
    database.addService(start: 0x0010, end: 0x0018, uuid: BluetoothUUID(uuid16: 0x180D), primary: true, learnedIn: 9)
    database.setType(BluetoothUUID(uuid16: 0x2802), of: 0x0011, learnedIn: 10)
    database.addCharacteristic(declaration: 0x0012, valueHandle: 0x0013, uuid: BluetoothUUID(uuid16: 0x2A37), properties: 0x10, learnedIn: 11)
    database.setType(BluetoothUUID(uuid16: 0x2902), of: 0x0014, learnedIn: 12)
    database.addCharacteristic(declaration: 0x0030, valueHandle: 0x0031, uuid: BluetoothUUID(uuid16: 0x2A19), properties: 0x02, learnedIn: 13)
    // Rediscovered unchanged: keeps its first frame; changed: the new one.
    database.addService(start: 0x0010, end: 0x0018, uuid: BluetoothUUID(uuid16: 0x180D), primary: true, learnedIn: 99)
    database.addCharacteristic(declaration: 0x0012, valueHandle: 0x0013, uuid: BluetoothUUID(uuid16: 0x2A37), properties: 0x12, learnedIn: 98)
    let tree = database.attributeTree
    #expect(tree.services.count == 1 && tree.services[0].learnedIn == 9)
    #expect(tree.services[0].includes.map(\.handle) == [0x0011])
    #expect(tree.services[0].characteristics.map(\.learnedIn) == [98])
    #expect(tree.services[0].characteristics[0].descriptors.map(\.handle) == [0x0014])
    #expect(tree.characteristicsOutsideServices.map(\.valueHandle) == [0x0031])
    #expect(tree.otherHandles.map(\.handle) == [0x0003])
  }
}

@Suite struct GATTCommandTests {
  @Test func textTreeOfTwoStraps() {
    let result = runCLI(["gatt", capturePath("two_straps.btsnoop")])
    #expect(result.status == 0)
    let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    #expect(lines.first == #"D0:B1:ED:00:48:52 (random) "bledissect HR A": 5 services, 13 characteristics"#)
    #expect(lines.contains(#"D0:B1:ED:00:48:53 (random) "bledissect HR B": 5 services, 13 characteristics"#))
    #expect(lines.contains("  service 0x000e–0x0015 Heart Rate (180d)                 #37"))
    #expect(lines.contains("    0x0010 Heart Rate Measurement (2a37): notify          #55"))
    #expect(lines.contains("      0x0011 Client Characteristic Configuration (2902)   #76"))
    #expect(lines.contains("    0x0010 Heart Rate Measurement (2a37): notify          #118"))
    #expect(lines.contains("    0x0018 Battery Level (2a19): read, notify             #61"))
  }

  @Test func mapIsValidJSONWithIntegerHandles() throws {
    let result = runCLI(["gatt", "--json", capturePath("hr_strap_session.btsnoop")])
    #expect(result.status == 0)
    let lines = result.stdout.split(separator: "\n")
    #expect(lines.count == 1)
    let map = try #require(JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
    #expect(map["format"] as? String == "bledissect-gatt-map")
    #expect(map["version"] as? Int == 1)
    let devices = try #require(map["devices"] as? [[String: Any]])
    #expect(devices.count == 1)
    #expect(devices[0]["address"] as? String == "D0:B1:ED:00:48:52")
    #expect(devices[0]["address_type"] as? String == "random")
    #expect(devices[0]["name"] as? String == "bledissect HR")
    #expect(devices[0]["database_hash"] == nil)
    let services = try #require(devices[0]["services"] as? [[String: Any]])
    let heartRate = try #require(services.first { $0["uuid"] as? String == "180d" })
    #expect(heartRate["start"] as? Int == 14 && heartRate["end"] as? Int == 21 && heartRate["learned_in_frame"] as? Int == 45)
    let characteristics = try #require(heartRate["characteristics"] as? [[String: Any]])
    let measurement = try #require(characteristics.first)
    #expect(measurement["value_handle"] as? Int == 16 && measurement["declaration_handle"] as? Int == 15)
    #expect(measurement["properties"] as? Int == 16 && measurement["property_names"] as? [String] == ["notify"])
    #expect(measurement["name"] as? String == "Heart Rate Measurement")
    let descriptors = try #require(measurement["descriptors"] as? [[String: Any]])
    #expect(descriptors.count == 1 && descriptors[0]["handle"] as? Int == 17 && descriptors[0]["uuid"] as? String == "2902")
    #expect(JSONKeyChecker.check(lines[0]) == nil)
  }

  @Test func peripheralSideCaptureListsTheLocalDevice() {
    let result = runCLI(["gatt", capturePath("hr_strap_peripheral.btsnoop")])
    #expect(result.status == 0)
    #expect(result.stdout.hasPrefix(#"local device (hci0) "bledissect HR": 5 services, 13 characteristics"#))
    #expect(runCLI(["gatt", "--json", capturePath("hr_strap_peripheral.btsnoop")]).stdout.contains(#"{"server":"local","index":0,"name":"bledissect HR""#))
  }

  @Test func captureWithoutDiscovery() {
    let result = runCLI(["gatt", capturePath("le_coc.btsnoop")])
    #expect(result.status == 0 && result.stdout == "no GATT discovery in this capture\n")
    #expect(runCLI(["gatt", "--json", capturePath("le_coc.btsnoop")]).stdout.hasSuffix(#""devices":[]}"# + "\n"))
  }
}
