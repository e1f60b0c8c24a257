import BLETestSupport
import Testing
@testable import BLECore

@Suite struct ByteReaderTests {
  @Test func readsLittleEndianIntegers() throws {
    // Bytes of an HCI LE Connection Update Complete tail: interval 0x0018, latency 0, timeout 0x01f4.
    var reader = ByteReader(testBytes: [0x18, 0x00, 0x00, 0x00, 0xF4, 0x01, 0xAA, 0xBB, 0xCC], layer: .hci)
    #expect(try reader.readUInt16LE() == 24)
    #expect(try reader.readUInt16LE() == 0)
    #expect(try reader.readUInt16LE() == 500)
    #expect(try reader.readUInt24LE() == 0xCCBBAA)
    #expect(reader.isAtEnd)
  }

  @Test func truncationThrowsWithOffsetAndDoesNotMove() {
    var reader = ByteReader(testBytes: [0x01, 0x02, 0x03], layer: .att)
    _ = try? reader.readUInt8()
    #expect(throws: DecodeError(.truncated(needed: 4, available: 2), layer: .att, offset: 1)) {
      try reader.readUInt32LE()
    }
    #expect(reader.offset == 1)
    #expect(reader.remaining == 2)
  }

  @Test func subReaderCannotReadPastItsPart() throws {
    var reader = ByteReader(testBytes: [0x02, 0xAA, 0xBB, 0xCC], layer: .hci)
    let length = Int(try reader.readUInt8())
    var part = try reader.readReader(count: length, layer: .advertising)
    #expect(try part.readUInt16LE() == 0xBBAA)
    #expect(throws: DecodeError.self) { try part.readUInt8() }
    #expect(try reader.readUInt8() == 0xCC)
  }

  @Test func negativeAndHugeCountsAreRejected() {
    var reader = ByteReader(testBytes: [0x00], layer: .hci)
    #expect(throws: DecodeError.self) { try reader.readBytes(count: -1) }
    #expect(throws: DecodeError.self) { try reader.readBytes(count: Int.max) }
    #expect(throws: DecodeError.self) { try reader.skip(2) }
  }

  @Test func atomicallyKeepsProgressOnlyOnSuccess() throws {
    var reader = ByteReader(testBytes: [0x01, 0x02], layer: .hci)
    #expect(throws: DecodeError.self) {
      try reader.atomically { (r: inout ByteReader) throws(DecodeError) -> UInt32 in
        _ = try r.readUInt8()
        return try r.readUInt32LE()
      }
    }
    #expect(reader.offset == 0)
    let value = try reader.atomically { (r: inout ByteReader) throws(DecodeError) -> UInt16 in try r.readUInt16LE() }
    #expect(value == 0x0201)
  }

  @Test func addressesPrintMostSignificantByteFirst() throws {
    // LE Connection Complete peer address field as sent on the wire (LSB first).
    var reader = ByteReader(testBytes: [0x52, 0x48, 0x00, 0xED, 0xB1, 0xD0], layer: .hci)
    let address = try reader.readBDAddr()
    #expect(address.description == "D0:B1:ED:00:48:52")
    #expect(BDAddr("d0:b1:ed:00:48:52") == address)
  }

  @Test func uuidsKeepTheirWidthAndPrintLowercase() throws {
    var reader = ByteReader(testBytes: [0x37, 0x2A], layer: .att)
    let uuid = try reader.readUUID16()
    #expect(uuid.description == "2a37")
    #expect(uuid.uuid16 == 0x2A37)
    // Nordic UART service 6E400001-B5A3-F393-E0A9-E50E24DCCA9E, as sent (reversed).
    var wire = ByteReader(testBytes: [0x9E, 0xCA, 0xDC, 0x24, 0x0E, 0xE5, 0xA9, 0xE0, 0x93, 0xF3, 0xA3, 0xB5, 0x01, 0x00, 0x40, 0x6E], layer: .att)
    let nus = try wire.readUUID128()
    #expect(nus.description == "6e400001-b5a3-f393-e0a9-e50e24dcca9e")
    #expect(nus.uuid16 == nil)
    #expect(BluetoothUUID("6E400001-B5A3-F393-E0A9-E50E24DCCA9E") == nus)
    // A 128-bit UUID inside the Base UUID is still the 16-bit alias.
    #expect(BluetoothUUID("0000180d-0000-1000-8000-00805f9b34fb")?.uuid16 == 0x180D)
  }

  @Test func monitorOpcodesRoundTrip() {
    for opcode in UInt16(0)...19 {
      let (kind, direction) = MonitorOpcode.kind(opcode)
      #expect(MonitorOpcode.opcode(for: kind, direction: direction) == opcode, "opcode \(opcode)")
    }
  }
}
