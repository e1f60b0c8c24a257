import BLETestSupport
import BLECore
import BLERender
import Testing

@testable import BLEDecoder

@Suite struct ProfileRegistryTests {
  @Test func everyDecoderIsFoundByItsUUID() {
    for decoder in ProfileRegistry.all {
      let found = ProfileRegistry.decoder(for: decoder.uuid)
      #expect(found?.uuid == decoder.uuid, "\(decoder.uuid)")
      #expect(found?.key.description == decoder.key.description, "\(decoder.uuid)")
    }
    // Keys are unique snake_case.
    let keys = ProfileRegistry.all.map { $0.key.description }
    #expect(Set(keys).count == keys.count)
    for key in keys {
      #expect(key.allSatisfy { $0.isLowercase || $0.isNumber || $0 == "_" }, "\(key)")
    }
  }

  @Test func lookups() {
    #expect(ProfileRegistry.decoder(for: BluetoothUUID(uuid16: 0x2A37))?.key.description == "heart_rate_measurement")
    #expect(ProfileRegistry.decoder(for: BluetoothUUID(uuid16: 0x2A19))?.key.description == "battery_level")
    #expect(ProfileRegistry.decoder(for: BluetoothUUID(uuid16: 0x2A38))?.key.description == "body_sensor_location")
    // A 32-bit or 128-bit spelling of a SIG UUID finds the same decoder.
    #expect(ProfileRegistry.decoder(for: BluetoothUUID(uuid32: 0x2A37))?.key.description == "heart_rate_measurement")
    #expect(ProfileRegistry.decoder(for: BluetoothUUID("00002a37-0000-1000-8000-00805f9b34fb")!)?.key.description == "heart_rate_measurement")
    #expect(ProfileRegistry.decoder(for: BluetoothUUID(uuid16: 0x1234)) == nil)
    // Vendor 128-bit: Huami battery info, the NUS TX characteristic, the PMD data; the NUS service has none.
    #expect(ProfileRegistry.decoder(for: BluetoothUUID("00000006-0000-3512-2118-0009af100700")!)?.key.description == "huami_battery_info")
    #expect(ProfileRegistry.decoder(for: BluetoothUUID("6e400003-b5a3-f393-e0a9-e50e24dcca9e")!)?.key.description == "nordic_uart_tx")
    #expect(ProfileRegistry.decoder(for: BluetoothUUID("fb005c82-02e7-f387-1cad-8acd2d8df0c8")!)?.key.description == "polar_pmd_data")
    #expect(ProfileRegistry.decoder(for: BluetoothUUID("6e400001-b5a3-f393-e0a9-e50e24dcca9e")!) == nil)
  }

  @Test func huamiVendorValues() throws {
    // Gadgetbridge HuamiBatteryInfo / creotiv MiBand2 (reference §9.4): byte 1 level, byte 2 status.
    let battery = try decodeProfile(Huami.uuid(0x0006), [0x0F, 0x37, 0x01, 0xE3, 0x07])
    #expect(battery.fields.uint("percent") == 55)
    #expect(battery.fields.name("status") == "charging")
    #expect(battery.summaryText == "55 %, charging")
    // Gadgetbridge handleRealtimeSteps / xDrip: bytes 1–2 step count.
    let steps = try decodeProfile(Huami.uuid(0x0007), [0x0C, 0x10, 0x27, 0x00, 0x00])
    #expect(steps.fields.uint("steps") == 10000)
    #expect(steps.summaryText == "10000 steps")
  }

  @Test func decodersRunOnSubReadersAtAnOffset() throws {
    // The GATT layer hands over a reader positioned inside the ATT PDU: a notification
    // 1b 1000 <value> with the reader at offset 3, bounded at the end of the value.
    var outer = ByteReader(testBytes: [0x1B, 0x10, 0x00, 0x16, 0x4A, 0x3E, 0x03], layer: .att)
    try outer.skip(3)
    var value = try outer.readReader(count: 4)
    let decoded = HeartRateMeasurement.decoder.decode(&value)
    #expect(decoded.error == nil)
    #expect(value.isAtEnd)
    let measurement = try #require(decoded.value as? HeartRateMeasurement)
    #expect(measurement.bpm == 74 && measurement.rrIntervals == [0x033E])
    var line = SummaryLine()
    measurement.summarize(into: &line, context: ValueContext(operation: .notification, uuid: BluetoothUUID(uuid16: 0x2A37)))
    #expect(line.text == "74 bpm, contact detected, RR 810.5 ms")
    // A fixed-format value with trailing bytes reports its own length, not the PDU's.
    var pdu = ByteReader(testBytes: [0x0B, 0x57, 0x00], layer: .att)
    try pdu.skip(1)
    var battery = try pdu.readReader(count: 2)
    let leftover = BatteryLevel.decoder.decode(&battery)
    #expect(leftover.error == DecodeError(.lengthMismatch(field: "the value format", declared: 1, actual: 2), layer: .profile, offset: 2))
    // The value before the leftover byte is kept beside the error (its fields still show).
    #expect((leftover.value as? BatteryLevel)?.percent == 87)
  }

  @Test func huamiTypedValues() throws {
    let battery = try #require(typedValue(Huami.uuid(0x0006), [0x0F, 0x37, 0x01, 0xE3, 0x07]) as? Huami.BatteryInfo)
    #expect(battery == Huami.BatteryInfo(firstByte: 0x0F, level: 55, status: 1, rest: [0xE3, 0x07]))
    #expect(battery.isCharging)
    // The undecoded bytes are part of the format: nothing is left over, and they show with -v.
    #expect(ProfileRegistry.decoder(for: Huami.uuid(0x0006))?.decode([0x0F, 0x37, 0x01, 0xE3, 0x07]).error == nil)
    let frame = try decodeProfile(Huami.uuid(0x0006), [0x0F, 0x37, 0x01, 0xE3, 0x07])
    #expect(frame.fields.text("rest") == "e307")
    #expect(frame.fields.fields.first { $0.key.description == "rest" }?.isVerbose == true)
    // Three bytes: no rest field; a 101 % level warns.
    let full = try decodeProfile(Huami.uuid(0x0006), [0x00, 101, 0x00])
    #expect(full.fields.value("rest") == nil)
    #expect(full.summaryText == "101 %")
    #expect(full.warnings == ["battery level 101 % is above 100 %"])
    #expect(ProfileRegistry.decoder(for: Huami.uuid(0x0006))?.decode([0x00, 0x37]).value == nil)

    let steps = try #require(typedValue(Huami.uuid(0x0007), [0x0C, 0x10, 0x27, 0x00, 0x00]) as? Huami.RealtimeSteps)
    #expect(steps.steps == 10000 && steps.firstByte == 0x0C && steps.rest == [0x00, 0x00])
    #expect((typedValue(Huami.uuid(0x0007), [0x0C, 0x10, 0x27]) as? Huami.RealtimeSteps)?.rest == [])
  }
}

@Suite struct ProfileRegistryIndexTests {
  /// Facts and databases keep a decoder's index in the registry: every decoder a UUID finds is there.
  @Test func everyDecoderFoundByUUIDHasAnIndex() {
    let registry = DecoderRegistry.standard
    var found = 0
    for short in UInt16(0x2900)...UInt16(0x2BFF) {
      let uuid = BluetoothUUID(uuid16: short)
      guard let decoder = ProfileRegistry.decoder(for: uuid) else { continue }
      let index = registry.index(for: uuid)
      #expect(index.map { registry[decoder: $0].key.description } == decoder.key.description, "\(uuid)")
      found += 1
    }
    #expect(found >= 40)
    // And the vendor ones: Huami battery info, realtime steps, auth; PMD control point and data; NUS RX and TX.
    #expect(found + 7 == ProfileRegistry.all.count)
    let huamiBattery = BluetoothUUID("00000006-0000-3512-2118-0009af100700")!
    #expect(registry.index(for: huamiBattery).map { registry[decoder: $0].key.description } == "huami_battery_info")
  }
}
