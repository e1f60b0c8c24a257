import BLECore
import BLERender
import BLETestSupport
import Testing

@testable import BLEDecoder

/// The registry's hooks: each one extends decoding where the standard decoders leave bytes.
@Suite struct DecoderRegistryTests {
  let tx = Direction.hostToController, rx = Direction.controllerToHost

  /// A payload decoder reading one byte as `level` and the next two as `code`.
  static let levelAndCode = PayloadDecoder(key: "acme", label: "Acme") { reader, fields throws(DecodeError) in
    fields.uint("level", "Level", try reader.readUInt8())
    fields.hex("code", "Code", try reader.readUInt16LE(), width: 4)
  }

  func dissect(_ registry: DecoderRegistry, _ records: [CaptureRecord]) -> [DissectedFrame] {
    var dissector = Dissector(registry: registry)
    return records.enumerated().map { index, record in
      var frame = DissectedFrame()
      dissector.dissect(record, number: index + 1, into: &frame)
      return frame
    }
  }

  @Test func vendorCommandsByOCF() {
    var registry = DecoderRegistry.standard
    registry.register(vendorCommand: 0x0001, Self.levelAndCode)
    // Opcode 0xFC01 (OGF 0x3F, OCF 0x001), 4 parameter bytes: level 7, code 0x1234, one more.
    let record = CaptureRecord(timestamp: 0, direction: tx, kind: .command, bytes: [0x01, 0xFC, 0x04, 0x07, 0x34, 0x12, 0xEE])
    let frame = dissect(registry, [record])[0]
    #expect(frame.fields.uint("hci.params.acme.level") == 7)
    #expect(frame.fields.uint("hci.params.acme.code") == 0x1234)
    #expect(frame.fields.string("hci.params.raw") == "ee")
    #expect(frame.hci == .command(opcode: 0xFC01))
    // Without the hook: the same bytes stay raw.
    let plain = dissect(.standard, [record])[0]
    #expect(plain.fields.value("hci.params.acme") == nil)
    #expect(plain.fields.string("hci.params.raw") == "073412ee")
  }

  @Test func vendorEventsAndTheirDamage() {
    var registry = DecoderRegistry.standard
    registry.register(vendorEvent: Self.levelAndCode)
    let good = CaptureRecord(timestamp: 0, direction: rx, kind: .event, bytes: [0xFF, 0x03, 0x02, 0xCD, 0xAB])
    let short = CaptureRecord(timestamp: 1, direction: rx, kind: .event, bytes: [0xFF, 0x02, 0x02, 0xCD])
    let frames = dissect(registry, [good, short])
    #expect(frames[0].fields.uint("hci.params.acme.level") == 2)
    #expect(frames[0].fields.uint("hci.params.acme.code") == 0xABCD)
    #expect(frames[0].malformed == nil)
    // A payload its decoder cannot read is malformed, its fields so far kept, its bytes shown.
    #expect(frames[1].fields.uint("hci.params.acme.level") == 2)
    #expect(frames[1].malformed?.layer == .hci)
    #expect(frames[1].fields.string("hci.params.raw") == "cd")
  }

  @Test func manufacturerDataByCompany() {
    var registry = DecoderRegistry.standard
    registry.register(company: 0x004C, Self.levelAndCode)
    // LE Advertising Report: one ADV_IND from C0:11:22:33:44:55 (public) with manufacturer
    // data of company 0x004C: level 2, code 0x1502, then one byte more; RSSI -60.
    let report: [UInt8] = [0x3E, 0x13, 0x02, 0x01, 0x00, 0x00, 0x55, 0x44, 0x33, 0x22, 0x11, 0xC0, 0x07,
      0x06, 0xFF, 0x4C, 0x00, 0x02, 0x02, 0x15, 0xC4]
    let frame = dissect(registry, [CaptureRecord(timestamp: 0, direction: rx, kind: .event, bytes: report)])[0]
    #expect(frame.malformed == nil)
    #expect(frame.fields.uint("hci.params.reports.0.ad.0.company") == 0x004C)
    #expect(frame.fields.uint("hci.params.reports.0.ad.0.acme.level") == 2)
    #expect(frame.fields.uint("hci.params.reports.0.ad.0.acme.code") == 0x1502)
    guard case .advertisement(let advert)? = frame.linkEvents.first else {
      Issue.record("no advertisement fact")
      return
    }
    #expect(advert.address == BDAddr("C0:11:22:33:44:55")! && advert.company == 0x004C && advert.rssi == -60)
  }

  @Test func channelSDUsByPSM() {
    var registry = DecoderRegistry.standard
    registry.register(psm: 0x0080, Self.levelAndCode)
    var t = LinkTranscript()
    t.dissector = Dissector(registry: registry)
    _ = t.connect(handle: 0x40, peer: "D0:B1:ED:00:48:52")
    // LE Credit Based Connection on SPSM 0x0080 (as in L2CAPTests), then a 3-byte SDU.
    _ = t.l2cap(handle: 0x40, tx, cid: 5, [0x14, 0x01, 0x0A, 0x00, 0x80, 0x00, 0x40, 0x00, 0x00, 0x02, 0x40, 0x00, 0x08, 0x00])
    _ = t.l2cap(handle: 0x40, rx, cid: 5, [0x15, 0x01, 0x0A, 0x00, 0x41, 0x00, 0x00, 0x02, 0x40, 0x00, 0x04, 0x00, 0x00, 0x00])
    let sdu = t.l2cap(handle: 0x40, rx, cid: 0x40, [3, 0, 0x09, 0x78, 0x56])
    #expect(sdu.fields.uint("l2cap.acme.level") == 9)
    #expect(sdu.fields.uint("l2cap.acme.code") == 0x5678)
    #expect(sdu.fields.string("l2cap.sdu") == "097856")
  }

  /// Decode As: a handle no discovery named is read as the characteristic it was given.
  @Test func handleOverridesWinOverDiscovery() {
    var registry = DecoderRegistry.standard
    registry.override(HandleOverride(handle: 0x0025, uuid: BluetoothUUID(uuid16: 0x2A37)))
    registry.override(HandleOverride(handle: 0x0010, uuid: BluetoothUUID(uuid16: 0x2A19), peer: BDAddr("D0:B1:ED:00:48:53")!))
    var t = LinkTranscript()
    t.dissector = Dissector(registry: registry)
    _ = t.connect(handle: 0x40, peer: "D0:B1:ED:00:48:52")
    t.discoverStrap()
    let overridden = t.att(rx, [0x1B, 0x25, 0x00, 0x06, 0x48])
    #expect((overridden.attributes.first?.value as? HeartRateMeasurement)?.bpm == 72)
    #expect(overridden.attributes.first?.characteristic == BluetoothUUID(uuid16: 0x2A37))
    // The other peer's override does not apply here: 0x0010 is this strap's Heart Rate Measurement.
    let discovered = t.att(rx, [0x1B, 0x10, 0x00, 0x06, 0x49])
    #expect((discovered.attributes.first?.value as? HeartRateMeasurement)?.bpm == 73)
  }

  /// Registering again replaces the decoder of a UUID; indices stay stable.
  @Test func registeringReplacesByUUID() {
    var registry = DecoderRegistry.standard
    let count = registry.decoders.count
    let index = registry.index(for: BluetoothUUID(uuid16: 0x2A19))
    registry.register(CharacteristicDecoder(uuid16: 0x2A19, key: "battery_as_text", DeviceName.self))
    #expect(registry.decoders.count == count)
    #expect(registry.index(for: BluetoothUUID(uuid16: 0x2A19)) == index)
    #expect(registry[decoder: index!].key.description == "battery_as_text")
    // The standard registry is a value: it did not change.
    #expect(DecoderRegistry.standard[decoder: index!].key.description == "battery_level")
  }
}
