import Testing
import BLECore
import BLERender
@testable import BLEDecoder

@Suite struct ATTTests {
  let tx = Direction.hostToController
  let rx = Direction.controllerToHost

  @Test func discoverySubscribeNotify() {
    var t = LinkTranscript()
    _ = t.connect(handle: 0x40, peer: "D0:B1:ED:00:48:52")
    t.discoverStrap()
    // Subscribe: Write Request to the CCCD 0x0011 with 01 00, then its Write Response.
    let write = t.att(tx, [0x12, 0x11, 0x00, 0x01, 0x00])
    #expect(write.att?.opcode == 0x12)
    #expect(write.fields.text("gatt.descriptor") == "2902")
    #expect(write.fields.text("gatt.characteristic") == "2a37")
    #expect(write.summaryText.contains("notifications enabled on Heart Rate Measurement"), "\(write.summaryText)")
    let response = t.att(rx, [0x13])
    #expect(response.fields.uint("att.request_frame") == UInt64(write.number))
    #expect(response.fields.uint("att.handle") == 0x11)
    // Notification: flags 0x16 (contact detected, RR present), 72 bpm, RR 832/1024 s = 812.5 ms.
    let notification = t.att(rx, [0x1B, 0x10, 0x00, 0x16, 0x48, 0x40, 0x03])
    #expect(notification.att?.kind == .notification)
    #expect(notification.fields.uint("att.opcode") == 0x1B)
    #expect(notification.fields.uint("att.handle") == 0x10)
    #expect(notification.fields.text("att.value") == "16484003")
    #expect(notification.fields.text("gatt.service") == "180d")
    #expect(notification.fields.text("gatt.characteristic") == "2a37")
    #expect(notification.fields.uint("decoded.heart_rate_measurement.bpm") == 72)
    #expect(notification.deepestLayer == .gatt)
    #expect(notification.summaryText == "0x0010 Heart Rate Measurement: 72 bpm, contact detected, RR 812.5 ms")
    #expect(notification.connection?.peer?.description == "D0:B1:ED:00:48:52")
  }

  @Test func responsesPairWithTheirRequests() {
    var t = LinkTranscript()
    _ = t.connect(handle: 0x40, peer: "D0:B1:ED:00:48:52")
    t.discoverStrap()
    let read = t.att(tx, [0x0A, 0x18, 0x00])
    let value = t.att(rx, [0x0B, 0x55])
    #expect(value.fields.uint("att.request_frame") == UInt64(read.number))
    #expect(value.fields.uint("att.handle") == 0x18)
    if case .real(let latency, _, _)? = value.fields.value("att.latency_ms") { #expect(latency == 1.0) } else { Issue.record("no latency") }
    #expect(value.fields.uint("decoded.battery_level.percent") == 85)
    // A response with nothing pending, and a request while one is pending, are diagnostics.
    let orphan = t.att(rx, [0x0B, 0x01])
    #expect(orphan.diagnostics.contains { $0.kind == .attResponseWithoutRequest })
    _ = t.att(tx, [0x0A, 0x18, 0x00])
    let second = t.att(tx, [0x0A, 0x13, 0x00])
    #expect(second.diagnostics.contains { $0.kind == .attRequestWhilePending })
  }

  @Test func errorResponseNamesRequestAndError() {
    var t = LinkTranscript()
    _ = t.connect(handle: 0x40, peer: "D0:B1:ED:00:48:52")
    let request = t.att(tx, [0x08, 0x01, 0x00, 0xFF, 0xFF, 0x03, 0x28])
    // Error Response: Read By Type Request, handle 0x0001, Attribute Not Found.
    let error = t.att(rx, [0x01, 0x08, 0x01, 0x00, 0x0A])
    #expect(error.fields.name("att.request_opcode") == "Read By Type Request")
    #expect(error.fields.name("att.error") == "Attribute Not Found")
    #expect(error.fields.uint("att.request_frame") == UInt64(request.number))
    #expect(error.summaryText == "Read By Type Request 0x0001: Attribute Not Found")
  }

  @Test func mtuExchangeSetsTheLimit() {
    var t = LinkTranscript()
    _ = t.connect(handle: 0x40, peer: "D0:B1:ED:00:48:52")
    // Before any exchange, ATT_MTU is 23: a 24-byte notification is too large.
    let big = t.att(rx, [0x1B, 0x10, 0x00] + [UInt8](repeating: 0, count: 21))
    #expect(big.diagnostics.contains { ($0.kind == .attPDUExceedsMTU && $0.message.contains("exceeds ATT_MTU 23")) })
    _ = t.att(tx, [0x02, 0xF7, 0x00])
    let response = t.att(rx, [0x03, 0x64, 0x00])
    #expect(response.fields.uint("att.mtu") == 100)
    let fits = t.att(rx, [0x1B, 0x10, 0x00] + [UInt8](repeating: 0, count: 97))
    #expect(!fits.diagnostics.contains { $0.kind == .attPDUExceedsMTU })
    let tooBig = t.att(rx, [0x1B, 0x10, 0x00] + [UInt8](repeating: 0, count: 98))
    #expect(tooBig.diagnostics.contains { ($0.kind == .attPDUExceedsMTU && $0.message.contains("exceeds ATT_MTU 100")) })
  }

  @Test func longReadIsReassembledAndDecodedOnce() {
    var t = LinkTranscript()
    _ = t.connect(handle: 0x40, peer: "D0:B1:ED:00:48:52")
    // Device Information: Manufacturer Name String 0x2A29 at value handle 0x0010.
    _ = t.att(tx, [0x08, 0x01, 0x00, 0xFF, 0xFF, 0x03, 0x28])
    _ = t.att(rx, [0x09, 0x07, 0x0F, 0x00, 0x02, 0x10, 0x00, 0x29, 0x2A])
    let name = Array("A manufacturer name longer than one PDU".utf8)  // 39 bytes: 22 + 17
    _ = t.att(tx, [0x0A, 0x10, 0x00])
    let first = t.att(rx, [0x0B] + name[0..<22])
    #expect(first.fields.value("decoded") == nil)
    #expect(first.summaryText.contains("first 22 bytes of a long value"))
    _ = t.att(tx, [0x0C, 0x10, 0x00, 0x16, 0x00])
    let last = t.att(rx, [0x0D] + name[22...])
    #expect(last.fields.text("att.value") == Hex.string(name))
    #expect(last.fields.text("att.part") == Hex.string(name[22...]))
    #expect(last.fields.uint("att.long_value_first_frame") == UInt64(first.number))
    #expect(last.fields.text("decoded.manufacturer_name_string.value") == "A manufacturer name longer than one PDU"
      || last.summaryText.hasSuffix("A manufacturer name longer than one PDU"), "\(last.summaryText)")
  }

  @Test func preparedWritesAreAppliedAtExecute() {
    var t = LinkTranscript()
    _ = t.connect(handle: 0x40, peer: "D0:B1:ED:00:48:52")
    _ = t.att(tx, [0x16, 0x1B, 0x00, 0x00, 0x00] + Array("Hello, ".utf8))
    _ = t.att(rx, [0x17, 0x1B, 0x00, 0x00, 0x00] + Array("Hello, ".utf8))
    _ = t.att(tx, [0x16, 0x1B, 0x00, 0x07, 0x00] + Array("world".utf8))
    let mismatch = t.att(rx, [0x17, 0x1B, 0x00, 0x07, 0x00] + Array("worle".utf8))
    #expect(mismatch.diagnostics.contains { $0.kind == .attPrepareResponseDiffers })
    let execute = t.att(tx, [0x18, 0x01])
    #expect(execute.fields.text("att.written.0.value") == Hex.string(Array("Hello, world".utf8)))
    #expect(execute.fields.uint("att.written.0.handle") == 0x1B)
    _ = t.att(rx, [0x19])
    // A cancelled queue is noted, not applied.
    _ = t.att(tx, [0x16, 0x1B, 0x00, 0x00, 0x00, 0x41])
    _ = t.att(rx, [0x17, 0x1B, 0x00, 0x00, 0x00, 0x41])
    let cancel = t.att(tx, [0x18, 0x00])
    #expect(cancel.summaryText == "cancel 1 prepared write")
    #expect(cancel.diagnostics.contains { $0.kind == .attPrepareQueueCancelled })
  }

  @Test func multipleValuesAreSplitPerHandle() {
    var t = LinkTranscript()
    _ = t.connect(handle: 0x40, peer: "D0:B1:ED:00:48:52")
    t.discoverStrap()
    // Read Multiple of Battery Level (1 byte, fixed) and Body Sensor Location.
    _ = t.att(tx, [0x0E, 0x18, 0x00, 0x13, 0x00])
    let multiple = t.att(rx, [0x0F, 0x57, 0x01])
    #expect(multiple.fields.uint("att.values.0.handle") == 0x18)
    #expect(multiple.fields.uint("att.values.0.decoded.battery_level.percent") == 0x57)
    #expect(multiple.fields.uint("att.values.1.handle") == 0x13)
    // Read Multiple Variable: length + value per handle.
    _ = t.att(tx, [0x20, 0x18, 0x00, 0x13, 0x00])
    let variable = t.att(rx, [0x21, 0x01, 0x00, 0x56, 0x01, 0x00, 0x02])
    #expect(variable.fields.uint("att.values.0.decoded.battery_level.percent") == 0x56)
    #expect(variable.fields.uint("att.values.1.handle") == 0x13)
    // Multiple Handle Value Notification: handle + length + value each.
    let notification = t.att(rx, [0x23, 0x10, 0x00, 0x02, 0x00, 0x00, 0x50, 0x18, 0x00, 0x01, 0x00, 0x32])
    #expect(notification.fields.uint("att.values.0.decoded.heart_rate_measurement.bpm") == 80)
    #expect(notification.fields.uint("att.values.1.decoded.battery_level.percent") == 50)
    #expect(notification.attributes.map(\.handle) == [0x10, 0x18])
    // The typed values, as analyses read them.
    #expect((notification.attributes[0].value as? HeartRateMeasurement)?.bpm == 80)
    #expect(notification.attributes[0].characteristic == BluetoothUUID(uuid16: 0x2A37))
    #expect(notification.attributes[1].characteristic == BluetoothUUID(uuid16: 0x2A19))
    #expect(notification.att?.opcode == 0x23 && notification.att?.channel == 4)
  }

  @Test func indicationAndConfirmationPair() {
    var t = LinkTranscript()
    _ = t.connect(handle: 0x40, peer: "D0:B1:ED:00:48:52")
    let indication = t.att(rx, [0x1D, 0x08, 0x00, 0x01, 0x00, 0xFF, 0xFF])
    let confirmation = t.att(tx, [0x1E])
    #expect(confirmation.fields.uint("att.request_frame") == UInt64(indication.number))
    #expect(confirmation.fields.uint("att.handle") == 0x08)
    let stray = t.att(tx, [0x1E])
    #expect(stray.diagnostics.contains { $0.kind == .attConfirmationWithoutIndication })
  }

  @Test func serviceChangedForgetsTheRange() {
    var t = LinkTranscript()
    _ = t.connect(handle: 0x40, peer: "D0:B1:ED:00:48:52")
    // Generic Attribute service 0x0006–0x0009 with Service Changed at 0x0008.
    _ = t.att(tx, [0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28])
    _ = t.att(rx, [0x11, 0x06, 0x06, 0x00, 0x09, 0x00, 0x01, 0x18, 0x0E, 0x00, 0x15, 0x00, 0x0D, 0x18])
    _ = t.att(tx, [0x08, 0x06, 0x00, 0x09, 0x00, 0x03, 0x28])
    _ = t.att(rx, [0x09, 0x07, 0x07, 0x00, 0x20, 0x08, 0x00, 0x05, 0x2A])
    _ = t.att(tx, [0x08, 0x0E, 0x00, 0x15, 0x00, 0x03, 0x28])
    _ = t.att(rx, [0x09, 0x07, 0x0F, 0x00, 0x10, 0x10, 0x00, 0x37, 0x2A])
    #expect(t.att(rx, [0x1B, 0x10, 0x00, 0x00, 0x48]).fields.text("gatt.characteristic") == "2a37")
    let changed = t.att(rx, [0x1D, 0x08, 0x00, 0x0E, 0x00, 0x15, 0x00])
    #expect(changed.diagnostics.contains { $0.kind == .gattServiceChanged })
    _ = t.att(tx, [0x1E])
    #expect(t.att(rx, [0x1B, 0x10, 0x00, 0x00, 0x48]).fields.value("gatt") == nil)
  }

  @Test func twoDevicesWithIdenticalHandlesKeepTheirOwnMaps() {
    var t = LinkTranscript()
    _ = t.connect(handle: 0x40, peer: "D0:B1:ED:00:48:52")
    _ = t.connect(handle: 0x41, peer: "D0:B1:ED:00:48:53")
    t.discoverStrap(handle: 0x40)
    // The second device has a different characteristic at the same handle 0x0010.
    _ = t.att(handle: 0x41, tx, [0x08, 0x01, 0x00, 0xFF, 0xFF, 0x03, 0x28])
    _ = t.att(handle: 0x41, rx, [0x09, 0x07, 0x0F, 0x00, 0x10, 0x10, 0x00, 0x5B, 0x2A])
    let a = t.att(handle: 0x40, rx, [0x1B, 0x10, 0x00, 0x00, 0x48])
    let b = t.att(handle: 0x41, rx, [0x1B, 0x10, 0x00, 0x01, 0x0A, 0x00, 0x00, 0x00, 0x00, 0x04])
    #expect(a.fields.text("gatt.characteristic") == "2a37")
    #expect(b.fields.text("gatt.characteristic") == "2a5b")
    #expect(a.connection?.peer?.description == "D0:B1:ED:00:48:52")
    #expect(b.connection?.peer?.description == "D0:B1:ED:00:48:53")
  }

  @Test func reconnectReusesTheDatabaseOfTheSameDevice() {
    var t = LinkTranscript()
    _ = t.connect(handle: 0x40, peer: "D0:B1:ED:00:48:52")
    t.discoverStrap()
    _ = t.disconnect(handle: 0x40)
    let again = t.connect(handle: 0x40, peer: "D0:B1:ED:00:48:52")
    #expect(again.connection?.generation == 2)
    // No discovery this time: the handles learned before still apply.
    let notification = t.att(rx, [0x1B, 0x10, 0x00, 0x00, 0x4B])
    #expect(notification.fields.uint("decoded.heart_rate_measurement.bpm") == 75)
    // A different device on the same handle knows nothing.
    _ = t.disconnect(handle: 0x40)
    _ = t.connect(handle: 0x40, peer: "11:22:33:44:55:66")
    #expect(t.att(rx, [0x1B, 0x10, 0x00, 0x00, 0x4B]).fields.value("decoded") == nil)
  }

  @Test func theLocalDeviceCanBeTheServer() {
    var t = LinkTranscript()
    _ = t.connect(handle: 0x40, peer: "C0:B1:ED:00:50:48")
    // Peripheral-side capture: the peer discovers us (requests rx, responses tx).
    _ = t.att(rx, [0x08, 0x0E, 0x00, 0x15, 0x00, 0x03, 0x28])
    _ = t.att(tx, [0x09, 0x07, 0x0F, 0x00, 0x10, 0x10, 0x00, 0x37, 0x2A])
    let notification = t.att(tx, [0x1B, 0x10, 0x00, 0x00, 0x48])
    #expect(notification.fields.uint("decoded.heart_rate_measurement.bpm") == 72)
    #expect(t.dissector.databases[.local(adapter: 0)] != nil)
    #expect(t.dissector.databases[.peer(BDAddr("C0:B1:ED:00:50:48")!)] == nil)
  }

  @Test func readsOfDeclarationsTeachTheDatabase() {
    var t = LinkTranscript()
    _ = t.connect(handle: 0x40, peer: "D0:B1:ED:00:48:52")
    // Primary service 0x0001–0x0010 includes a service at 0x0020–0x0025 whose UUID is 128-bit:
    // the Read By Type (0x2802) entry has no UUID, so the client reads it at 0x0020.
    _ = t.att(tx, [0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28])
    _ = t.att(rx, [0x11, 0x06, 0x01, 0x00, 0x10, 0x00, 0x0D, 0x18])
    _ = t.att(tx, [0x08, 0x01, 0x00, 0x10, 0x00, 0x02, 0x28])
    _ = t.att(rx, [0x09, 0x06, 0x02, 0x00, 0x20, 0x00, 0x25, 0x00])
    _ = t.att(tx, [0x0A, 0x20, 0x00])
    // Nordic UART service UUID 6E400001-B5A3-F393-E0A9-E50E24DCCA9E, as sent (reversed).
    let named = t.att(rx, [0x0B, 0x9E, 0xCA, 0xDC, 0x24, 0x0E, 0xE5, 0xA9, 0xE0, 0x93, 0xF3, 0xA3, 0xB5, 0x01, 0x00, 0x40, 0x6E])
    #expect(named.summaryText.contains("included service 6e400001-b5a3-f393-e0a9-e50e24dcca9e"))
    // Find Information says 0x0021 is a characteristic declaration; the client reads it directly
    // (no Read By Type): properties notify, value handle 0x0022, UUID 0x2A19.
    _ = t.att(tx, [0x04, 0x21, 0x00, 0x21, 0x00])
    _ = t.att(rx, [0x05, 0x01, 0x21, 0x00, 0x03, 0x28])
    _ = t.att(tx, [0x0A, 0x21, 0x00])
    _ = t.att(rx, [0x0B, 0x10, 0x22, 0x00, 0x19, 0x2A])
    let notification = t.att(rx, [0x1B, 0x22, 0x00, 0x40])
    #expect(notification.fields.text("gatt.service") == "6e400001-b5a3-f393-e0a9-e50e24dcca9e")
    #expect(notification.fields.uint("decoded.battery_level.percent") == 64)
  }

  @Test func characteristicDeclarationsAreLearnedWithoutTheirRequest() {
    var t = LinkTranscript()
    _ = t.connect(handle: 0x40, peer: "D0:B1:ED:00:48:52")
    // The capture lost the Read By Type Request: the response alone (entries of 7 bytes whose
    // value handle follows the declaration) still reads as characteristic declarations.
    let response = t.att(rx, [0x09, 0x07, 0x0F, 0x00, 0x10, 0x10, 0x00, 0x37, 0x2A])
    #expect(response.diagnostics.contains { $0.kind == .attUnrequestedDiscoveryResponse })
    #expect(t.att(rx, [0x1B, 0x10, 0x00, 0x00, 0x48]).fields.uint("decoded.heart_rate_measurement.bpm") == 72)
    // Entries that do not look like declarations teach nothing.
    _ = t.att(rx, [0x09, 0x04, 0x20, 0x00, 0x55, 0x66])
    #expect(t.att(rx, [0x1B, 0x20, 0x00, 0x01]).fields.value("decoded") == nil)
  }
}
