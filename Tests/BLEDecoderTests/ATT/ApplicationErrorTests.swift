import BLECore
import BLERender
import Testing

@testable import BLEDecoder

/// ATT application errors (0x80–0x9F) are defined by the profile of the characteristic the
/// failed request was about: 0x80 on the Heart Rate Control Point is "Control Point Not
/// Supported" (shared/reference/gatt-payloads.md §1.3); elsewhere the ATT name stays.
@Suite struct ApplicationErrorTests {
  let tx = Direction.hostToController
  let rx = Direction.controllerToHost

  @Test func heartRateControlPointNotSupported() {
    var t = LinkTranscript()
    _ = t.connect(handle: 0x40, peer: "D0:B1:ED:00:48:52")
    t.discoverStrap()
    // Write Request 0x02 (a reserved op code) to the control point 0x0015, answered 0x80.
    let write = t.att(tx, [0x12, 0x15, 0x00, 0x02])
    #expect(write.summaryText.hasPrefix("0x0015 Heart Rate Control Point: reserved op code 0x02"), "\(write.summaryText)")
    let error = t.att(rx, [0x01, 0x12, 0x15, 0x00, 0x80])
    #expect(error.fields.uint("att.error") == 0x80)
    #expect(error.fields.name("att.error") == "Control Point Not Supported")
    #expect(error.att?.errorName?.description == "Control Point Not Supported")
    #expect(error.att?.errorCharacteristic == BluetoothUUID(uuid16: 0x2A39))
    #expect(error.summaryText == "Write Request 0x0015: Control Point Not Supported")

    // Other application errors on it, and 0x80 on another characteristic, keep the ATT name.
    _ = t.att(tx, [0x12, 0x15, 0x00, 0x03])
    let other = t.att(rx, [0x01, 0x12, 0x15, 0x00, 0x81])
    #expect(other.fields.name("att.error") == "Application Error (profile/service defined)")
    #expect(other.att?.errorCharacteristic == nil)
    _ = t.att(tx, [0x12, 0x18, 0x00, 0x01])
    let battery = t.att(rx, [0x01, 0x12, 0x18, 0x00, 0x80])
    #expect(battery.fields.name("att.error") == "Application Error (profile/service defined)")
    #expect(battery.summaryText == "Write Request 0x0018: Application Error (profile/service defined)")
  }

  @Test func withoutDiscoveryTheATTNameStays() {
    var t = LinkTranscript()
    _ = t.connect(handle: 0x40, peer: "D0:B1:ED:00:48:52")
    _ = t.att(tx, [0x12, 0x15, 0x00, 0x02])
    let error = t.att(rx, [0x01, 0x12, 0x15, 0x00, 0x80])
    #expect(error.fields.name("att.error") == "Application Error (profile/service defined)")
  }

  @Test func aHandleOverrideNamesItToo() {
    var registry = DecoderRegistry.standard
    registry.override(HandleOverride(handle: 0x0021, uuid: BluetoothUUID(uuid16: 0x2A39)))
    var t = LinkTranscript(dissector: Dissector(registry: registry))
    _ = t.connect(handle: 0x40, peer: "D0:B1:ED:00:48:52")
    _ = t.att(tx, [0x12, 0x21, 0x00, 0x09])
    #expect(t.att(rx, [0x01, 0x12, 0x21, 0x00, 0x80]).fields.name("att.error") == "Control Point Not Supported")
  }
}
