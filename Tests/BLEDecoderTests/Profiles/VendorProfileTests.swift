import BLECore
import BLETestSupport
import Foundation
import Testing

@testable import BLEDecoder

/// Huami auth, battery info and steps (shared/reference/gatt-payloads.md §9), Nordic UART (§7),
/// Alert Level, from byte fixtures built by those tables.
@Suite struct VendorProfileTests {
  let auth = Huami.uuid(0x0009)
  let battery = Huami.uuid(0x0006)
  let steps = Huami.uuid(0x0007)

  @Test func huamiAuthWrites() {
    // §9.3: `01 08 <16-byte key>`, `02 08`, `03 08 <16 bytes>`, `82 00 02 01 00`, `83 00 <16 bytes>`.
    let key = Array(UInt8(0x30)...UInt8(0x3F))
    let sendKey = decodeVendor(auth, [0x01, 0x08] + key, .writeWithoutResponse)
    #expect(sendKey.string("message") == "request" && sendKey.int("command") == 1 && sendKey.string("command_name") == "send key")
    #expect(sendKey.bool("crypt_flag") == false && sendKey.int("auth_flags") == 8 && sendKey.string("key") == Hex.string(key))
    #expect(sendKey.summary == "send key 30 31 32 33 34 35 36 37 38 39 3a 3b 3c 3d 3e 3f")
    let random = decodeVendor(auth, [0x02, 0x08], .writeWithoutResponse)
    #expect(random.string("command_name") == "request random" && random["parameters"] == nil && random.summary == "request random")
    let prove = decodeVendor(auth, [0x03, 0x08] + key, .write)
    #expect(prove.string("encrypted_random") == Hex.string(key) && prove["key"] == nil)
    let band5 = decodeVendor(auth, [0x82, 0x00, 0x02, 0x01, 0x00], .write)
    #expect(band5.int("command") == 0x82 && band5.bool("crypt_flag") == true && band5.int("auth_flags") == 0)
    #expect(band5.string("parameters") == "020100" && band5.string("command_name") == "request random (Mi Band 4/5)")
    let band5Prove = decodeVendor(auth, [0x83, 0x00] + key, .write)
    #expect(band5Prove.string("encrypted_random") == Hex.string(key) && band5Prove.bool("crypt_flag") == true)
    // A key or encrypted random is 16 bytes: shorter is truncated, longer left over.
    expectVendorPrefixesTruncate(auth, [0x01, 0x08] + key, .write)
    expectVendorPrefixesTruncate(auth, [0x83, 0x00] + key, .write)
    guard case .lengthMismatch? = decodeVendor(auth, [0x03, 0x08] + key + [0x00], .write).error?.reason else {
      Issue.record("17-byte encrypted random accepted")
      return
    }
    let unknown = decodeVendor(auth, [0x04, 0x08, 0x01], .write)
    #expect(unknown.summary == "command 0x04 01" && unknown.notes == ["Huami auth command 0x04 is not in the reference"])
  }

  @Test func huamiAuthNotifications() {
    // `10 <command> <status>`: 0x01 success, 0x04 failure; a random request's success carries 16 bytes.
    let failed = decodeVendor(auth, [0x10, 0x01, 0x04], .notification)
    #expect(failed.string("message") == "response" && failed.int("response_to") == 1 && failed.string("response_to_name") == "send key")
    #expect(failed.int("status") == 4 && failed.string("status_name") == "failure" && failed.summary == "send key: failure")
    let random = Array(UInt8(0xA0)...UInt8(0xAF))
    let number = decodeVendor(auth, [0x10, 0x02, 0x01] + random, .notification)
    #expect(number.string("random") == Hex.string(random))
    #expect(number.summary == "request random: success, random a0 a1 a2 a3 a4 a5 a6 a7 a8 a9 aa ab ac ad ae af")
    let band5 = decodeVendor(auth, [0x10, 0x82, 0x01] + random, .notification)
    #expect(band5.string("random") == Hex.string(random) && band5.string("response_to_name") == "request random (Mi Band 4/5)")
    #expect(decodeVendor(auth, [0x10, 0x83, 0x01], .notification).summary == "send encrypted random (Mi Band 4/5): success")
    // A failed random request carries none.
    #expect(decodeVendor(auth, [0x10, 0x02, 0x04], .notification).error == nil)
    expectVendorPrefixesTruncate(auth, [0x10, 0x02, 0x01] + random, .notification)
    let other = decodeVendor(auth, [0x11, 0x02], .notification)
    #expect(other.string("message") == "other" && other.string("data") == "1102" && other.notes == ["Huami auth notification does not start with 0x10"])
    // The same bytes written are a request (command 0x10, flags 0x01…).
    #expect(decodeVendor(auth, [0x10, 0x01, 0x04], .write).string("message") == "request")
  }

  @Test func huamiBatteryInfo() {
    // §9.4: byte 1 level, byte 2 status, byte 19 level at last charge; times at 3–9 and 11–17
    // (year u16, month, day, hour, minute, second), marked uncertain.
    let lastOff = le(UInt16(2024)) + [12, 31, 23, 59, 58]
    let lastCharge = le(UInt16(2025)) + [1, 2, 3, 4, 5]
    let bytes: [UInt8] = [0x0F, 42, 0x01] + lastOff + [0x00] + lastCharge + [0x00, 95]
    let value = decodeVendor(battery, bytes, .read)
    #expect(value.error == nil)
    #expect(value.int("percent") == 42 && value.int("status") == 1 && value.string("status_name") == "charging")
    #expect(value.int("last_charge_percent") == 95)
    #expect(value.string("last_off") == "2024-12-31 23:59:58" && value.string("last_charge") == "2025-01-02 03:04:05")
    #expect(value.strings("uncertain_fields") == ["last_off", "last_charge"])
    #expect(value["rest"] == nil)
    #expect(value.summary == "42 %, charging")
    let typed = value.value as? Huami.BatteryInfo
    #expect(typed?.lastOff == DateTime(year: 2024, month: 12, day: 31, hours: 23, minutes: 59, seconds: 58))
    #expect(typed?.lastChargeLevel == 95)
    // Shorter values decode what they reach; what is left is `rest`.
    let tenBytes = decodeVendor(battery, Array(bytes.prefix(10)), .read)
    #expect(tenBytes.string("last_off") == "2024-12-31 23:59:58" && tenBytes["last_charge"] == nil && tenBytes.strings("uncertain_fields") == ["last_off"])
    #expect(decodeVendor(battery, Array(bytes.prefix(12)), .read).string("rest") == "00e9")
    #expect(decodeVendor(battery, Array(bytes.prefix(19)), .read)["last_charge_percent"] == nil)
    #expect(decodeVendor(battery, Array(bytes.prefix(9)), .read)["last_off"] == nil)
    expectVendorPrefixesTruncate(battery, Array(bytes.prefix(3)), .read)
    #expect(decodeVendor(battery, [0x0F, 42, 0x00] + [UInt8](repeating: 0, count: 16) + [101], .read).warnings == ["level at last charge 101 % is above 100 %"])
  }

  @Test func huamiRealtimeSteps() {
    // §9.4: 13 bytes; bytes 1–2 steps; distance (m) and calories per creotiv, uncertain.
    let bytes: [UInt8] = [0x0C] + le(UInt32(4321)) + le(UInt32(3000)) + le(UInt32(150))
    let value = decodeVendor(steps, bytes, .notification)
    #expect(value.int("steps") == 4321 && value.int("distance_m") == 3000 && value.int("calories") == 150)
    #expect(value.strings("uncertain_fields") == ["distance_m", "calories"])
    #expect(value.summary == "4321 steps; unconfirmed: 3000 m, 150 kcal")
    #expect(value.notes.isEmpty)
    // A step count past 16 bits: bytes 3–4 are not zero, which the reference does not explain.
    let large = decodeVendor(steps, [0x0C] + le(UInt32(70_000)) + le(UInt32(1)) + le(UInt32(1)), .notification)
    #expect(large.int("steps") == 70_000 & 0xFFFF)
    #expect(large.notes == ["bytes 3–4 of the steps value are 0x0001, not zero: the step count may be 32-bit"])
    // Shorter values: the steps only.
    let short = decodeVendor(steps, Array(bytes.prefix(5)), .notification)
    #expect(short["distance_m"] == nil && short.string("rest") == "0000" && short.summary == "4321 steps")
    expectVendorPrefixesTruncate(steps, Array(bytes.prefix(3)), .notification)
  }

  @Test func nordicUART() {
    let rx = NordicUART.rxUUID, tx = NordicUART.txUUID
    let text = decodeVendor(rx, Array("AT+GMR\r\n".utf8), .write)
    #expect(text.string("text") == "AT+GMR\r\n" && text["data"] == nil && text.int("length") == 8)
    #expect(text.summary == #""AT+GMR\r\n""#)
    // UTF-8 text, quotes and backslashes escaped in the words.
    let quoted = decodeVendor(tx, Array("température \"x\\y\"\t".utf8), .notification)
    #expect(quoted.string("text") == "température \"x\\y\"\t")
    #expect(quoted.summary == #""température \"x\\y\"\t""#)
    // Some control characters are still text (an escape sequence), shown escaped.
    #expect(decodeVendor(tx, [0x1B] + Array("[31mred".utf8), .notification).summary == #""\x1B[31mred""#)
    // Binary: a NUL, invalid UTF-8, or mostly control characters.
    for bytes: [UInt8] in [[0x41, 0x00, 0x42], [0xFF, 0xFE, 0x41], [0x01, 0x02, 0x41]] {
      let binary = decodeVendor(tx, bytes, .notification)
      #expect(binary.string("data") == Hex.string(bytes) && binary["text"] == nil, "\(bytes)")
    }
    #expect(decodeVendor(tx, [0x01, 0x02, 0x41], .notification).summary == "01 02 41 (3 bytes)")
    // Long text is cut in the words, not in the fields.
    let long = String(repeating: "abcdefghij", count: 10)
    let longValue = decodeVendor(tx, Array(long.utf8), .notification)
    #expect(longValue.string("text") == long && longValue.summary == "\"" + String(long.prefix(80)) + "…\"")
    #expect(decodeVendor(rx, [], .write).summary == "empty")
  }

  @Test func alertLevel() throws {
    // Alert Level 0x2A06: 0 No Alert, 1 Mild Alert, 2 High Alert.
    for (level, name) in [(UInt8(0), "No Alert"), (1, "Mild Alert"), (2, "High Alert")] {
      let frame = try decodeProfile(0x2A06, [level], operation: .write)
      #expect(frame.fields.name("level") == name && frame.summaryText == name && frame.diagnostics.isEmpty)
    }
    let reserved = try decodeProfile(0x2A06, [3], operation: .write)
    #expect(reserved.summaryText == "reserved alert level 3" && reserved.warnings == ["alert level 3 is reserved"])
    expectPrefixesTruncate(0x2A06, [0x02])
    expectTrailingByteRejected(0x2A06, [0x02])
  }
}
