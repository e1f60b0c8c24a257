import Testing
import BLECore
import BLETestSupport
@testable import BLEDecoder
@testable import BLERender

// Parameter bytes below are quoted from the captures in shared/corpus (file, 1-based frame
// number as Wireshark counts it; the bytes after the 3-byte command header, or after the status
// byte of a Command Complete), or built from the Core spec layout where no capture has one.

// MARK: - Helpers

private struct Decoded {
  var fields = FieldList()
  var header = HeaderFact.none
  /// The header line's words, as BLERender writes them.
  var summary: String { HeaderWords.textWords(header) }
  var context = HCICommand.Context()
  var known = false
  var remaining = 0
}

private func decode(_ opcode: UInt16, _ bytes: [UInt8]) throws(DecodeError) -> Decoded {
  var result = Decoded()
  var reader = ByteReader(testBytes: bytes, layer: .hci)
  result.known = try HCICommand.decodeParameters(opcode: opcode, &reader, into: &result.fields, header: &result.header, context: &result.context)
  result.remaining = reader.remaining
  return result
}

private struct DecodedReturn {
  var fields = FieldList()
  var handle: UInt16?
  var known = false
  var remaining = 0
}

private func decodeReturn(_ opcode: UInt16, _ bytes: [UInt8]) throws(DecodeError) -> DecodedReturn {
  var result = DecodedReturn()
  var reader = ByteReader(testBytes: bytes, layer: .hci)
  result.known = try HCICommand.decodeReturnParameters(opcode: opcode, &reader, into: &result.fields, handle: &result.handle)
  result.remaining = reader.remaining
  return result
}

/// Every field with `key`, in order (nested ones included).
private func values(_ fields: FieldList, _ key: String) -> [FieldValue] {
  fields.fields.filter { $0.key.description == key }.map(\.value)
}

/// The first field with `key`.
private func value(_ fields: FieldList, _ key: String) -> FieldValue? {
  fields.fields.first { $0.key.description == key }?.value
}

private func uint(_ fields: FieldList, _ key: String) -> UInt64? {
  if case let .unsigned(number, _)? = value(fields, key) { return number }
  return nil
}

/// The number of a `.code` or `.codeText` field.
private func code(_ value: FieldValue?) -> UInt64? {
  switch value {
  case let .code(number, _, _)?: return number
  case let .codeText(number, _, _)?: return number
  default: return nil
  }
}

private func code(_ fields: FieldList, _ key: String) -> UInt64? { code(value(fields, key)) }

private func codeName(_ value: FieldValue?) -> String? {
  switch value {
  case let .code(_, _, name)?: return name?.description
  case let .codeText(_, _, name)?: return name
  default: return nil
  }
}

private func codeName(_ fields: FieldList, _ key: String) -> String? { codeName(value(fields, key)) }

private func measure(_ value: FieldValue?) -> (raw: Int64, scale: Double, unit: String)? {
  if case let .measure(raw, scale, unit)? = value { return (raw, scale, unit.description) }
  return nil
}

private func measure(_ fields: FieldList, _ key: String) -> (raw: Int64, scale: Double, unit: String)? {
  measure(value(fields, key))
}

private func address(_ fields: FieldList, _ key: String) -> (address: String, type: UInt8?)? {
  if case let .address(address, type)? = value(fields, key) { return (address.description, type?.rawValue) }
  return nil
}

private func bytes(_ fields: FieldList, _ key: String) -> [UInt8]? {
  if case let .bytes(slice)? = value(fields, key) { return Array(slice) }
  return nil
}

private func hex(_ text: String) -> [UInt8] { hexBytes(text) }

// MARK: - Command parameters

@Suite("HCI command parameters")
struct HCICommandParameterTests {
  @Test func noParameters() throws {
    // Core v5.4 Vol 4 Part E §7.3.2: Reset has no parameters.
    let reset = try decode(0x0C03, [])
    #expect(reset.known)
    #expect(reset.fields.isEmpty)
    #expect(reset.summary.isEmpty)
    for opcode: UInt16 in [0x1009, 0x1001, 0x1005, 0x2002, 0x2060, 0x200E] {
      #expect(try decode(opcode, []).known)
    }
  }

  @Test func unknownCommandIsLeftRaw() throws {
    // Write Default Erroneous Data Reporting has no decoder: nothing is read.
    let result = try decode(0x0C5B, [0x00])
    #expect(!result.known)
    #expect(result.remaining == 1)
    #expect(result.fields.isEmpty)
  }

  @Test func setEventMask() throws {
    // dsd6_tracker/dsd6_btsnoop_hci.log frame 41, Set Event Mask as sent by Android.
    let result = try decode(0x0C01, hex("ffffffffffffbf3d"))
    #expect(uint(result.fields, "event_mask") == 0x3DBF_FFFF_FFFF_FFFF)
    #expect(result.remaining == 0)
  }

  @Test func leSetScanParameters() throws {
    // dsd6_tracker/dsd6_btsnoop_hci.log frame 175, LE Set Scan Parameters as sent by Android.
    let result = try decode(0x200B, hex("01120012000100"))
    #expect(code(result.fields, "scan_type") == 1)
    #expect(codeName(result.fields, "scan_type") == "Active")
    let interval = try #require(measure(result.fields, "scan_interval"))
    #expect(interval.raw == 18 && interval.scale == 0.625 && interval.unit == "ms")
    #expect(measure(result.fields, "scan_window")?.raw == 18)
    #expect(code(result.fields, "own_address_type") == 1)
    #expect(code(result.fields, "filter_policy") == 0)
    #expect(result.summary == "active")
    #expect(result.remaining == 0)
  }

  @Test func leSetScanEnable() throws {
    // dsd6_tracker/dsd6_btsnoop_hci.log frames 177 and 179, LE Set Scan Enable on / off.
    let on = try decode(0x200C, hex("0100"))
    #expect(code(on.fields, "enable") == 1)
    #expect(code(on.fields, "filter_duplicates") == 0)
    #expect(on.summary == "enable")
    let off = try decode(0x200C, hex("0001"))
    #expect(off.summary == "disable")
    // miband3_blproject/ble_mouse_connection_movement.pcapng frame 5 (BlueZ).
    #expect(try decode(0x200C, hex("0101")).summary == "enable, filter duplicates")
  }

  @Test func leSetExtendedScanParameters() throws {
    // ix7_scooter/ix7_scooter_nus_btsnoop_hci.log frame 203, LE Set Extended Scan Parameters
    // with the 1M and Coded PHYs (Android).
    let result = try decode(0x2041, hex("01000501900424010190042401"))
    #expect(code(result.fields, "own_address_type") == 1)
    #expect(code(result.fields, "scanning_phys") == 0x05)
    #expect(codeName(result.fields, "scanning_phys") == "LE 1M, LE Coded")
    #expect(values(result.fields, "phy").compactMap(code) == [1, 3])
    #expect(values(result.fields, "scan_type").compactMap(code) == [1, 1])
    #expect(values(result.fields, "scan_interval").compactMap { measure($0)?.raw } == [1168, 1168])
    #expect(values(result.fields, "scan_window").compactMap { measure($0)?.raw } == [292, 292])
    #expect(result.summary == "active")
    #expect(result.remaining == 0)
    #expect(result.fields.depth == 0)
  }

  @Test func leSetExtendedScanEnable() throws {
    // ix7_scooter/ix7_scooter_nus_btsnoop_hci.log frame 195.
    let result = try decode(0x2042, hex("010000000000"))
    #expect(code(result.fields, "enable") == 1)
    let duration = try #require(measure(result.fields, "duration"))
    #expect(duration.raw == 0 && duration.scale == 10)
    let period = try #require(measure(result.fields, "period"))
    #expect(period.scale == 1.28 && period.unit == "s")
    #expect(result.summary == "enable")
    #expect(result.remaining == 0)
  }

  @Test func leCreateConnection() throws {
    // dsd6_tracker/dsd6_btsnoop_hci.log frame 365, LE Create Connection as sent by Android.
    let result = try decode(0x200D, hex("60003000000160e86010e5f901180028000000d00700000000"))
    #expect(measure(result.fields, "scan_interval")?.raw == 96)
    #expect(measure(result.fields, "scan_window")?.raw == 48)
    #expect(code(result.fields, "filter_policy") == 0)
    let peer = try #require(address(result.fields, "peer_address"))
    #expect(peer.address == "F9:E5:10:60:E8:60")
    #expect(peer.type == 1)
    #expect(code(result.fields, "own_address_type") == 1)
    let minimum = try #require(measure(result.fields, "conn_interval_min"))
    #expect(minimum.raw == 24 && minimum.scale == 1.25 && minimum.unit == "ms")
    #expect(measure(result.fields, "conn_interval_max")?.raw == 40)
    #expect(uint(result.fields, "max_latency") == 0)
    let timeout = try #require(measure(result.fields, "supervision_timeout"))
    #expect(timeout.raw == 2000 && timeout.scale == 10)
    #expect(measure(result.fields, "min_ce_length")?.raw == 0)
    #expect(measure(result.fields, "max_ce_length")?.raw == 0)
    #expect(result.summary == "F9:E5:10:60:E8:60")
    #expect(result.remaining == 0)
  }

  @Test func leExtendedCreateConnection() throws {
    // ix7_scooter/ix7_scooter_nus_btsnoop_hci.log frame 708: filter accept list, all three PHYs.
    let bytes = hex(
      "01010000000000000007"
        + "30003000180028000000f40100000000"
        + "30000c00180028000000f40100000000"
        + "30000c00180028000000f40100000000")
    let result = try decode(0x2043, bytes)
    #expect(code(result.fields, "filter_policy") == 1)
    #expect(code(result.fields, "own_address_type") == 1)
    #expect(codeName(result.fields, "initiating_phys") == "LE 1M, LE 2M, LE Coded")
    #expect(values(result.fields, "phy").compactMap(code) == [1, 2, 3])
    #expect(values(result.fields, "scan_window").compactMap { measure($0)?.raw } == [48, 12, 12])
    #expect(values(result.fields, "supervision_timeout").compactMap { measure($0)?.raw } == [500, 500, 500])
    #expect(result.summary == "filter accept list")
    #expect(result.remaining == 0)
    #expect(result.fields.depth == 0)
  }

  @Test func disconnect() throws {
    // dsd6_tracker/dsd6_btsnoop_hci.log frame 567, Disconnect handle 2, reason 0x13.
    let result = try decode(0x0406, hex("020013"))
    #expect(uint(result.fields, "handle") == 2)
    #expect(code(result.fields, "reason") == 0x13)
    #expect(codeName(result.fields, "reason") == "Remote User Terminated Connection")
    #expect(result.context.handle == 2)
    #expect(result.summary == "handle 2, Remote User Terminated Connection")
  }

  @Test func leConnectionUpdate() throws {
    // airbily_veryfitpro/airbily_smartwatch_filtered.pcapng frame 413.
    let result = try decode(0x2013, hex("0300500080000400900100000000"))
    #expect(uint(result.fields, "handle") == 3)
    #expect(result.context.handle == 3)
    #expect(measure(result.fields, "conn_interval_min")?.raw == 80)
    #expect(measure(result.fields, "conn_interval_max")?.raw == 128)
    #expect(uint(result.fields, "max_latency") == 4)
    #expect(measure(result.fields, "supervision_timeout")?.raw == 400)
    #expect(result.remaining == 0)
  }

  @Test func leSetDataLength() throws {
    // ix7_scooter/ix7_scooter_nus_btsnoop_hci.log frame 1471.
    let result = try decode(0x2022, hex("0102fb009042"))
    #expect(uint(result.fields, "handle") == 0x0201)
    #expect(result.context.handle == 0x0201)
    #expect(uint(result.fields, "tx_octets") == 251)
    let time = try #require(measure(result.fields, "tx_time"))
    #expect(time.raw == 17040 && time.scale == 1 && time.unit == "us")
  }

  @Test func leStartEncryption() throws {
    // miband2_ec521/miband2_galaxy_s7_btsnoop_hci.log frame 14160 (LE Secure Connections:
    // random number and EDIV are zero).
    let result = try decode(0x2019, hex("400000000000000000000000ddf1d27a4ec82ecd01a0217cc8d3e0f6"))
    #expect(uint(result.fields, "handle") == 0x40)
    #expect(result.context.handle == 0x40)
    #expect(uint(result.fields, "random_number") == 0)
    #expect(uint(result.fields, "ediv") == 0)
    #expect(bytes(result.fields, "ltk") == hex("ddf1d27a4ec82ecd01a0217cc8d3e0f6"))
    #expect(result.summary == "handle 64")
    #expect(result.remaining == 0)
  }

  @Test func leLongTermKeyRequestReplies() throws {
    // Core v5.4 Vol 4 Part E §7.8.25 layout: handle 0x0040, then a 16-byte LTK (made up).
    let reply = try decode(0x201A, [0x40, 0x00] + Array(UInt8(1)...UInt8(16)))
    #expect(uint(reply.fields, "handle") == 0x40)
    #expect(bytes(reply.fields, "ltk") == Array(UInt8(1)...UInt8(16)))
    #expect(reply.remaining == 0)
    // §7.8.26: the negative reply carries the handle only.
    let negative = try decode(0x201B, [0x41, 0x00])
    #expect(negative.context.handle == 0x41)
  }

  @Test func leSetPHY() throws {
    // Core v5.4 Vol 4 Part E §7.8.49 layout: handle 0x0040, no RX preference, TX 2M, RX 1M|2M,
    // options "prefer S=8".
    let result = try decode(0x2032, [0x40, 0x00, 0x02, 0x02, 0x03, 0x02, 0x00])
    #expect(result.context.handle == 0x40)
    #expect(codeName(result.fields, "all_phys") == "No RX preference")
    #expect(codeName(result.fields, "tx_phys") == "LE 2M")
    #expect(codeName(result.fields, "rx_phys") == "LE 1M, LE 2M")
    #expect(code(result.fields, "phy_options") == 2)
    #expect(result.remaining == 0)
  }

  @Test func leSetAdvertisingParameters() throws {
    // Core v5.4 Vol 4 Part E §7.8.5 layout: 100 ms, ADV_DIRECT_IND low duty cycle to a random
    // peer, all channels, accept-list filtering for both.
    let bytes: [UInt8] = [0xA0, 0x00, 0xA0, 0x00, 0x04, 0x00, 0x01, 0x66, 0x55, 0x44, 0x33, 0x22, 0xC1, 0x07, 0x03]
    let result = try decode(0x2006, bytes)
    let minimum = try #require(measure(result.fields, "adv_interval_min"))
    #expect(minimum.raw == 160 && minimum.scale == 0.625)
    #expect(code(result.fields, "adv_type") == 4)
    #expect(codeName(result.fields, "adv_type") == "ADV_DIRECT_IND (low duty cycle)")
    #expect(address(result.fields, "peer_address")?.address == "C1:22:33:44:55:66")
    #expect(address(result.fields, "peer_address")?.type == 1)
    #expect(codeName(result.fields, "channel_map") == "37, 38, 39")
    #expect(code(result.fields, "filter_policy") == 3)
    #expect(result.summary == "ADV_DIRECT_IND (low duty cycle)")
    #expect(result.remaining == 0)
  }

  @Test func leSetAdvertisingAndScanResponseData() throws {
    // miband3_blproject/ble_mouse_connection_movement.pcapng frame 337, LE Set Advertising
    // Data from BlueZ: Flags 0x02 and TX Power Level 7 dBm, padded to 31 bytes.
    let advertising = try decode(0x2008, hex("06020102020a0700000000000000000000000000000000000000000000000000"))
    #expect(uint(advertising.fields, "length") == 6)
    #expect(uint(advertising.fields, "flags") == 0x02)
    #expect(measure(advertising.fields, "tx_power")?.raw == 7)
    #expect(advertising.remaining == 0)
    #expect(advertising.fields.depth == 0)
    // Same capture, frame 339, LE Set Scan Response Data: the Complete Local Name "kali" (sent
    // with its terminating NUL).
    let response = try decode(0x2009, hex("0706096b616c6900000000000000000000000000000000000000000000000000"))
    if case let .text(name)? = value(response.fields, "name") {
      #expect(name.hasPrefix("kali"))
    } else {
      Issue.record("no name field")
    }
    #expect(response.remaining == 0)
  }

  @Test func advertisingDataLengthOver31IsInvalid() {
    // Core v5.4 Vol 4 Part E §7.8.7: Advertising_Data_Length is 0...31.
    let bytes: [UInt8] = [32] + [UInt8](repeating: 0, count: 32)
    #expect(throws: DecodeError.self) { try decode(0x2008, bytes) }
    do {
      _ = try decode(0x2009, bytes)
      Issue.record("length 32 did not throw")
    } catch {
      #expect(error.reason == .invalidValue(field: "scan response data length", value: 32))
      #expect(error.offset == 0)
    }
  }

  @Test func advertisingDataLengthOverRemainingIsTruncated() {
    // Length 10 but only 4 bytes follow.
    do {
      _ = try decode(0x2008, [10, 3, 0x09, 0x41, 0x42])
      Issue.record("did not throw")
    } catch {
      #expect(error.reason == .truncated(needed: 10, available: 4))
    }
  }

  @Test func leSetAdvertisingEnable() throws {
    // Core v5.4 Vol 4 Part E §7.8.9.
    #expect(try decode(0x200A, [0x01]).summary == "enable")
    #expect(try decode(0x200A, [0x00]).summary == "disable")
  }

  @Test func leSetRandomAddress() throws {
    // miband3_blproject/ble_mouse_connection_movement.pcapng frame 1.
    let result = try decode(0x2005, hex("d3ebdf190b0a"))
    #expect(address(result.fields, "address")?.address == "0A:0B:19:DF:EB:D3")
    #expect(address(result.fields, "address")?.type == 1)
    #expect(result.summary == "0A:0B:19:DF:EB:D3")
  }

  @Test func leSetExtendedAdvertisingParameters() throws {
    // ix7_scooter/ix7_scooter_nus_btsnoop_hci.log frame 612: set 0, connectable scannable legacy
    // ADV_IND, 100-131.25 ms, random own address, 1 dBm.
    let result = try decode(0x2036, hex("001300a00000d2000007010000000000000000010100010000"))
    #expect(uint(result.fields, "adv_handle") == 0)
    #expect(code(result.fields, "event_properties") == 0x13)
    #expect(codeName(result.fields, "event_properties") == "Connectable, Scannable, Legacy PDUs")
    #expect(measure(result.fields, "adv_interval_min")?.raw == 160)
    #expect(measure(result.fields, "adv_interval_max")?.raw == 210)
    #expect(codeName(result.fields, "channel_map") == "37, 38, 39")
    #expect(code(result.fields, "own_address_type") == 1)
    #expect(measure(result.fields, "tx_power")?.raw == 1)
    #expect(value(result.fields, "tx_power_no_preference") == nil)
    #expect(code(result.fields, "primary_phy") == 1)
    #expect(code(result.fields, "secondary_phy") == 1)
    #expect(uint(result.fields, "sid") == 0)
    #expect(code(result.fields, "scan_request_notification") == 0)
    #expect(result.summary == "set 0")
    #expect(result.remaining == 0)
  }

  @Test func extendedAdvertisingTxPowerNoPreference() throws {
    // Core v5.4 Vol 4 Part E §7.8.53: Advertising_TX_Power 0x7F = no preference.
    var bytes = hex("001300a00000d2000007010000000000000000010100010000")
    bytes[19] = 0x7F
    let result = try decode(0x2036, bytes)
    #expect(measure(result.fields, "tx_power")?.raw == 127)
    if case .bool(true)? = value(result.fields, "tx_power_no_preference") {} else { Issue.record("no flag") }
  }

  @Test func leSetExtendedAdvertisingData() throws {
    // ix7_scooter/ix7_scooter_nus_btsnoop_hci.log frame 618: complete data, 31 bytes of AD
    // (Flags, Manufacturer Specific Data 0x038F, 16-bit UUID 0xFDAA).
    let result = try decode(0x2037, hex("0003011f02010217ff8f03231134667161103041a2011526291b2f570103020303aafd"))
    #expect(uint(result.fields, "adv_handle") == 0)
    #expect(code(result.fields, "operation") == 3)
    #expect(code(result.fields, "fragment_preference") == 1)
    #expect(uint(result.fields, "length") == 31)
    #expect(uint(result.fields, "flags") == 0x02)
    #expect(code(result.fields, "company") == 0x038F)
    #expect(values(result.fields, "ad_type").compactMap(code) == [0x01, 0xFF, 0x03])
    #expect(result.summary == "set 0, 31 bytes")
    #expect(result.remaining == 0)
    #expect(result.fields.depth == 0)
  }

  @Test func extendedAdvertisingDataFragmentStaysRaw() throws {
    // Core v5.4 Vol 4 Part E §7.8.54: a first fragment (operation 1) may end inside an AD
    // structure, so it is shown as bytes.
    let result = try decode(0x2037, [0x00, 0x01, 0x00, 0x03, 0x1E, 0xFF, 0x4C])
    #expect(bytes(result.fields, "data") == [0x1E, 0xFF, 0x4C])
    #expect(value(result.fields, "ad") == nil)
  }

  @Test func leSetExtendedScanResponseDataEmpty() throws {
    // ix7_scooter/ix7_scooter_nus_btsnoop_hci.log frame 1080: set 1, complete, no data.
    let result = try decode(0x2038, hex("01030100"))
    #expect(uint(result.fields, "adv_handle") == 1)
    #expect(uint(result.fields, "length") == 0)
    #expect(result.remaining == 0)
  }

  @Test func leSetExtendedAdvertisingEnable() throws {
    // ix7_scooter/ix7_scooter_nus_btsnoop_hci.log frame 1084: enable set 1, no limits.
    let result = try decode(0x2039, hex("010101000000"))
    #expect(code(result.fields, "enable") == 1)
    #expect(uint(result.fields, "num_sets") == 1)
    #expect(uint(result.fields, "adv_handle") == 1)
    #expect(measure(result.fields, "duration")?.raw == 0)
    #expect(uint(result.fields, "max_events") == 0)
    #expect(result.summary == "enable")
    #expect(result.remaining == 0)
    #expect(result.fields.depth == 0)
  }

  @Test func filterAcceptList() throws {
    // ix7_scooter/ix7_scooter_nus_btsnoop_hci.log frame 685, LE Add Device To Filter Accept List.
    let result = try decode(0x2011, hex("0045636326e180"))
    #expect(address(result.fields, "address")?.address == "80:E1:26:63:63:45")
    #expect(address(result.fields, "address")?.type == 0)
  }

  // MARK: Truncation

  @Test(arguments: [
    (UInt16(0x0406), "020013"),
    (0x0C01, "ffffffffffffbf3d"),
    (0x200B, "01120012000100"),
    (0x200D, "60003000000160e86010e5f901180028000000d00700000000"),
    (0x2013, "0300500080000400900100000000"),
    (0x2019, "400000000000000000000000ddf1d27a4ec82ecd01a0217cc8d3e0f6"),
    (0x2041, "01000501900424010190042401"),
    (0x2042, "010000000000"),
    (0x2043, "0101000000000000000330003000180028000000f4010000000030000c00180028000000f40100000000"),
    (0x2008, "06020102020a0700000000000000000000000000000000000000000000000000"),
    (0x2036, "001300a00000d2000007010000000000000000010100010000"),
    (0x2037, "0003011f02010217ff8f03231134667161103041a2011526291b2f570103020303aafd"),
    (0x2039, "010101000000"),
    (0x2032, "40000002030200"),
    // BR/EDR: Create Connection, Remote Name Request, Link Key Request Reply, Inquiry, Sniff
    // Mode, Setup Synchronous Connection, IO Capability Request Reply, Write Current IAC LAP,
    // Write Class of Device, Write Link Policy Settings, Set Event Filter (connection setup).
    (0x0405, "9e269ab004d018cc0100000001"),
    (0x0419, "9e269ab004d001000000"),
    (0x040B, "9e269ab004d0ffaf7b5d41953f3aed98084a39838a92"),
    (0x0401, "338b9e0a00"),
    (0x0803, "33002003900104000100"),
    (0x0428, "4700401f0000401f00000d004300028003"),
    (0x042B, "9e269ab004d0010005"),
    (0x0C3A, "02338b9e008b9e"),
    (0x0C24, "0c027a"),
    (0x080D, "0b000500"),
    (0x0C05, "02029e269ab004d003"),
  ])
  func everyPrefixIsTruncated(opcode: UInt16, parameters: String) throws {
    let bytes = hex(parameters)
    let full = try decode(opcode, bytes)
    #expect(full.known)
    #expect(full.remaining == 0)
    for count in 0..<bytes.count {
      do {
        _ = try decode(opcode, Array(bytes[0..<count]))
        Issue.record("opcode \(opcode): prefix of \(count) bytes decoded")
      } catch {
        guard case .truncated = error.reason else {
          Issue.record("opcode \(opcode): prefix of \(count) bytes: \(error)")
          continue
        }
      }
    }
  }
}

// MARK: - Arbitrary input

@Suite("HCI command parameters on arbitrary bytes")
struct HCICommandParameterArbitraryInputTests {
  @Test func neverTrapsAndClosesGroups() {
    // Seed 0x5EED. Every opcode of OGF 0x01-0x08 with OCF < 0x90, 0-80 random bytes.
    var random = SeededGenerator(seed: 0x5EED)
    for ogf: UInt16 in 1...8 {
      for ocf: UInt16 in 0..<0x90 {
        let opcode = ogf << 10 | ocf
        for _ in 0..<12 {
          let count = Int.random(in: 0...80, using: &random)
          let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }
          if let result = try? decode(opcode, bytes) {
            #expect(result.fields.depth == 0, "opcode \(opcode)")
            #expect(result.remaining <= count)
          }
          if let result = try? decodeReturn(opcode, bytes) {
            #expect(result.fields.depth == 0, "opcode \(opcode)")
          }
        }
      }
    }
  }
}

// MARK: - Return parameters

@Suite("HCI command return parameters")
struct HCICommandReturnParameterTests {
  @Test func readLocalVersionInformation() throws {
    // dsd6_tracker/dsd6_btsnoop_hci.log frame 10 (Qualcomm, 4.2).
    let qualcomm = try decodeReturn(0x1001, hex("080000081d00d307"))
    #expect(code(qualcomm.fields, "hci_version") == 8)
    #expect(codeName(qualcomm.fields, "hci_version") == "4.2")
    #expect(codeName(qualcomm.fields, "lmp_version") == "4.2")
    #expect(code(qualcomm.fields, "manufacturer") == 0x001D)
    #expect(codeName(qualcomm.fields, "manufacturer") == AssignedNumbers.companyName(0x001D)?.description)
    #expect(uint(qualcomm.fields, "lmp_subversion") == 0x07D3)
    #expect(qualcomm.remaining == 0)
    // ix7_scooter/ix7_scooter_nus_btsnoop_hci.log frame 12 (5.4).
    let newer = try decodeReturn(0x1001, hex("0d15190d46000824"))
    #expect(codeName(newer.fields, "hci_version") == "5.4")
    #expect(uint(newer.fields, "hci_revision") == 0x1915)
    #expect(uint(newer.fields, "lmp_subversion") == 0x2408)
  }

  @Test func coreVersionNames() {
    // Assigned Numbers §2.1 (Core versions).
    let names = (UInt8(0)...0x0E).map { HCICommand.coreVersionName($0)?.description }
    #expect(names == ["1.0b", "1.1", "1.2", "2.0+EDR", "2.1+EDR", "3.0+HS", "4.0", "4.1", "4.2", "5.0", "5.1", "5.2", "5.3", "5.4", "6.0"])
    #expect(HCICommand.coreVersionName(0x40) == nil)
  }

  @Test func readBDAddr() throws {
    // miband3_blproject/ble_mouse_connection_movement.pcapng frame 264.
    let result = try decodeReturn(0x1009, hex("6f8a0077f660"))
    #expect(address(result.fields, "address")?.address == "60:F6:77:00:8A:6F")
  }

  @Test func bufferSizes() throws {
    // miband3_blproject/ble_mouse_connection_movement.pcapng frames 266 and 282.
    let classic = try decodeReturn(0x1005, hex("fd036004000600"))
    #expect(uint(classic.fields, "acl_data_length") == 1021)
    #expect(uint(classic.fields, "sco_data_length") == 96)
    #expect(uint(classic.fields, "total_acl_packets") == 4)
    #expect(uint(classic.fields, "total_sco_packets") == 6)
    let le = try decodeReturn(0x2002, hex("fb0003"))
    #expect(uint(le.fields, "le_acl_data_length") == 251)
    #expect(uint(le.fields, "total_le_acl_packets") == 3)
    // ix7_scooter/ix7_scooter_nus_btsnoop_hci.log frame 34, LE Read Buffer Size v2.
    let v2 = try decodeReturn(0x2060, hex("fb0020e00118"))
    #expect(uint(v2.fields, "total_le_acl_packets") == 32)
    #expect(uint(v2.fields, "iso_data_length") == 480)
    #expect(uint(v2.fields, "total_iso_packets") == 24)
    #expect(v2.remaining == 0)
  }

  @Test func dataLength() throws {
    // miband3_blproject/ble_mouse_connection_movement.pcapng frame 320, LE Read Maximum Data Length.
    let maximum = try decodeReturn(0x202F, hex("fb004808fb004808"))
    #expect(uint(maximum.fields, "max_tx_octets") == 251)
    #expect(measure(maximum.fields, "max_tx_time")?.raw == 2120)
    #expect(uint(maximum.fields, "max_rx_octets") == 251)
    #expect(measure(maximum.fields, "max_rx_time")?.raw == 2120)
    // ix7_scooter/ix7_scooter_nus_btsnoop_hci.log frame 1473, LE Set Data Length: the handle.
    let set = try decodeReturn(0x2022, hex("0102"))
    #expect(set.handle == 0x0201)
    #expect(uint(set.fields, "handle") == 0x0201)
  }

  @Test func txPowers() throws {
    // ix7_scooter/ix7_scooter_nus_btsnoop_hci.log frame 613: selected TX power -6 dBm.
    let selected = try decodeReturn(0x2036, hex("fa"))
    #expect(measure(selected.fields, "selected_tx_power")?.raw == -6)
    // miband3_blproject/ble_mouse_connection_movement.pcapng frame 310: 7 dBm.
    #expect(measure(try decodeReturn(0x2007, hex("07")).fields, "tx_power")?.raw == 7)
  }

  @Test func leReadPHYAndFeatures() throws {
    // Core v5.4 Vol 4 Part E §7.8.47 layout: handle 0x0040, TX 2M, RX Coded.
    let phy = try decodeReturn(0x2030, [0x40, 0x00, 0x02, 0x03])
    #expect(phy.handle == 0x40)
    #expect(codeName(phy.fields, "tx_phy") == "LE 2M")
    #expect(codeName(phy.fields, "rx_phy") == "LE Coded")
    // miband3_blproject/ble_mouse_connection_movement.pcapng frame 284.
    #expect(uint(try decodeReturn(0x2003, hex("ff00000000000000")).fields, "le_features") == 0xFF)
  }

  @Test func statusOnly() throws {
    let reset = try decodeReturn(0x0C03, [])
    #expect(reset.known && reset.fields.isEmpty)
    // A failed command answered with its status alone is not truncated.
    let failed = try decodeReturn(0x1009, [])
    #expect(failed.known && failed.fields.isEmpty)
    #expect(try !decodeReturn(0xFC17, []).known)
    // But a partial answer is.
    #expect(throws: DecodeError.self) { try decodeReturn(0x1009, [0x6F, 0x8A]) }
  }
}
