import BLECore
import BLETestSupport
import Foundation
import Testing

@testable import BLEDecoder

/// Polar PMD control point and data, from byte fixtures built by the tables of
/// shared/reference/gatt-payloads.md §8 (each test names the table it follows).
@Suite struct PolarPMDProfileTests {
  let cp = PolarPMD.controlPointUUID
  let data = PolarPMD.dataUUID

  @Test func uuids() {
    #expect(PolarPMD.controlPointUUID == BluetoothUUID("fb005c81-02e7-f387-1cad-8acd2d8df0c8"))
    #expect(PolarPMD.dataUUID == BluetoothUUID("fb005c82-02e7-f387-1cad-8acd2d8df0c8"))
    #expect(ProfileRegistry.decoder(for: PolarPMD.serviceUUID) == nil)
  }

  // MARK: Control point, read (§8.2 feature bits: byte 1 bit n = type n, byte 2 bit n = type 8 + n)

  @Test func featuresRead() {
    // 0F 05 00: byte 1 = 0x05 → ECG (1.0), ACC (1.2).
    let ecgAcc = decodeVendor(cp, [0x0F, 0x05, 0x00], .read)
    #expect(ecgAcc.error == nil)
    #expect(ecgAcc.string("message") == "features")
    #expect(ecgAcc.int("first_byte") == 0x0F)
    #expect(ecgAcc.ints("supported_types") == [0, 2])
    #expect(ecgAcc.strings("supported_type_names") == ["ECG", "ACC"])
    #expect(ecgAcc.summary == "features: ECG, ACC")
    // Byte 1 bits 1, 3, 5, 6, 7 and byte 2 bits 1–6: PPG, PPI, gyroscope, magnetometer, skin
    // temperature, SDK mode, location, pressure, temperature, offline recording, offline HR.
    let all = decodeVendor(cp, [0x00, 0xEA, 0x7E], .read)
    #expect(
      all.strings("supported_type_names") == [
        "PPG", "PPI", "gyroscope", "magnetometer", "skin temperature", "SDK mode", "location", "pressure", "temperature",
        "offline recording", "offline HR",
      ])
    #expect(all.notes.isEmpty)
    // Bit 1.4 (type 4, reserved) is no type the reference names.
    let reserved = decodeVendor(cp, [0x00, 0x10, 0x00], .read)
    #expect(reserved.strings("supported_type_names") == ["type 4"])
    #expect(reserved.notes == ["PMD feature bit 4 names no measurement type the reference knows"])
    #expect(decodeVendor(cp, [0x00, 0x00, 0x00], .read).summary == "features: none")
    expectVendorPrefixesTruncate(cp, [0x0F, 0x05, 0x00], .read)
  }

  // MARK: Control point, writes (§8.2 op table, §8.3 settings)

  @Test func requestsOfEveryOpCode() {
    // Op 1 get measurement settings, type byte 0x00 = online ECG.
    let get = decodeVendor(cp, [0x01, 0x00], .write)
    #expect(get.string("message") == "request")
    #expect(get.int("opcode") == 1 && get.string("opcode_name") == "get measurement settings")
    #expect(get.int("measurement_type") == 0 && get.string("measurement_type_name") == "ECG")
    #expect(get.string("recording_type") == "online")
    #expect(get.summary == "get settings ECG")
    // Type byte 0x82: recording bit 7 = offline, type 2 = ACC.
    let offline = decodeVendor(cp, [0x01, 0x82], .writeWithoutResponse)
    #expect(offline.int("measurement_type") == 2 && offline.string("recording_type") == "offline")
    #expect(offline.summary == "get settings offline ACC")
    #expect(decodeVendor(cp, [0x03, 0x01], .write).summary == "stop PPG")
    #expect(decodeVendor(cp, [0x04, 0x02], .write).string("opcode_name") == "get SDK-mode measurement settings")
    for (op, name) in [(UInt8(5), "get measurement status"), (6, "get SDK-mode status"), (7, "get offline recording trigger status")] {
      let request = decodeVendor(cp, [op], .write)
      #expect(request.error == nil && request.string("opcode_name") == name)
      #expect(request["measurement_type"] == nil)
    }
    // Op 8: the trigger mode.
    let mode = decodeVendor(cp, [0x08, 0x02], .write)
    #expect(mode.int("mode") == 2 && mode.string("opcode_name") == "set offline recording trigger mode")
    #expect(mode.summary == "set offline trigger mode 2")
    // Op 9: status, type, [length, settings]: 52 Hz (00 01 34 00) and 3 channels (04 01 03).
    let trigger = decodeVendor(cp, [0x09, 0x01, 0x02, 0x07, 0x00, 0x01, 0x34, 0x00, 0x04, 0x01, 0x03], .write)
    #expect(trigger.int("trigger_status") == 1 && trigger.int("measurement_type") == 2 && trigger.int("settings_length") == 7)
    #expect(trigger.ints("settings.sample_rate_hz") == [52] && trigger.ints("settings.channels") == [3])
    #expect(trigger.summary == "set offline trigger settings ACC (status 1): 52 Hz, 3 channels")
    let triggerOff = decodeVendor(cp, [0x09, 0x00, 0x02], .write)
    #expect(triggerOff.error == nil && triggerOff["settings"] == nil && triggerOff["settings_length"] == nil)
    // An op code the reference does not list keeps its bytes.
    let unknown = decodeVendor(cp, [0x0A, 0x00], .write)
    #expect(unknown.int("opcode") == 10 && unknown["opcode_name"] == nil && unknown.string("parameters") == "00")
    #expect(unknown.summary == "op code 0x0a")
    #expect(unknown.notes == ["PMD op code 0x0a is not in the reference"])
  }

  @Test func startRequestSettings() {
    // §8.3: 00 01 <u16 130> = sample rate, 01 01 <u16 14> = resolution.
    let ecg = decodeVendor(cp, [0x02, 0x00, 0x00, 0x01] + le(UInt16(130)) + [0x01, 0x01] + le(UInt16(14)), .write)
    #expect(ecg.error == nil)
    #expect(ecg.ints("settings.sample_rate_hz") == [130] && ecg.ints("settings.resolution_bits") == [14])
    #expect(ecg.summary == "start ECG: 130 Hz, 14 bit")
    // Range (02, u16), range in milli-units (03, u32), channels (04, u8).
    let acc = decodeVendor(
      cp, [0x02, 0x02, 0x00, 0x01] + le(UInt16(52)) + [0x01, 0x01] + le(UInt16(16)) + [0x02, 0x01] + le(UInt16(8)) + [0x04, 0x01, 0x03], .write)
    #expect(acc.ints("settings.range") == [8] && acc.ints("settings.channels") == [3])
    #expect(acc.summary == "start ACC: 52 Hz, 16 bit, range ±8, 3 channels")
    let gyro = decodeVendor(cp, [0x02, 0x05, 0x03, 0x01] + le(UInt32(500_000)), .write)
    #expect(gyro.ints("settings.range_milliunits") == [500_000])
    #expect(gyro.summary == "start gyroscope: range ±500")
    // Security (06): `06 01 <strategy> <key>`, the last setting.
    let key = Array(UInt8(0x10)...UInt8(0x1F))
    let secure = decodeVendor(cp, [0x02, 0x00, 0x00, 0x01] + le(UInt16(130)) + [0x06, 0x01, 0x02] + key, .write)
    #expect(secure.int("settings.security.strategy") == 2 && secure.string("settings.security.key") == Hex.string(key))
    #expect(secure.summary == "start ECG: 130 Hz, security")
    // A start with no settings.
    let bare = decodeVendor(cp, [0x02, 0x03], .write)
    #expect(bare.error == nil && bare["settings"] == nil && bare.summary == "start PPI")
    // A setting type the reference does not define: the rest stays undecoded, with a warning.
    let odd = decodeVendor(cp, [0x02, 0x00, 0x00, 0x01] + le(UInt16(130)) + [0x07, 0x01, 0xAA], .write)
    #expect(odd.error == nil)
    #expect(odd.int("settings.unknown_setting_type") == 7 && odd.string("settings.undecoded") == "0701aa")
    #expect(odd.warnings == ["PMD setting type 7 is not in the reference: 3 bytes not decoded"])
  }

  @Test func malformedRequests() {
    // A type byte missing, a sample rate cut, a trigger length beyond the value.
    expectVendorPrefixesTruncate(cp, [0x01, 0x00], .write)
    expectVendorPrefixesTruncate(cp, [0x02, 0x00, 0x00, 0x01, 0x82, 0x00], .write, from: 3)
    expectVendorPrefixesTruncate(cp, [0x09, 0x01, 0x02, 0x03, 0x04, 0x01, 0x03], .write, from: 4)
    #expect(decodeVendor(cp, [0x02, 0x00, 0x00, 0x02, 0x82, 0x00], .write).error?.reason == .truncated(needed: 2, available: 0))
    // Ops without parameters take none.
    guard case .lengthMismatch? = decodeVendor(cp, [0x05, 0x00], .write).error?.reason else {
      Issue.record("trailing byte after op 5 not reported")
      return
    }
  }

  // MARK: Control point, indications (§8.2 response `F0 op type status [more params]`, status table)

  @Test func responses() {
    let settings = decodeVendor(cp, [0xF0, 0x01, 0x00, 0x00, 0x00, 0x00, 0x01] + le(UInt16(130)) + [0x01, 0x01] + le(UInt16(14)), .indication)
    #expect(settings.string("message") == "response")
    #expect(settings.int("opcode") == 1 && settings.int("status") == 0 && settings.string("status_name") == "success" && settings.int("more") == 0)
    #expect(settings.ints("settings.sample_rate_hz") == [130])
    #expect(settings.summary == "get settings ECG: 130 Hz, 14 bit")
    // Several values per setting; the conversion factor (05, float32) only in responses.
    let acc = decodeVendor(
      cp, [0xF0, 0x04, 0x02, 0x00, 0x01, 0x00, 0x02] + le(UInt16(25)) + le(UInt16(50)) + [0x02, 0x03] + le(UInt16(2)) + le(UInt16(4)) + le(UInt16(8))
        + [0x05, 0x01] + le(Float(0.5)), .indication)
    #expect(acc.ints("settings.sample_rate_hz") == [25, 50] && acc.ints("settings.range") == [2, 4, 8])
    #expect(acc.doubles("settings.conversion_factor") == [0.5])
    #expect(acc.int("more") == 1)
    #expect(acc.summary == "get SDK-mode settings ACC: 25/50 Hz, range ±2/4/8, factor 0.5, more follows")
    let none = decodeVendor(cp, [0xF0, 0x01, 0x03, 0x00, 0x00], .indication)
    #expect(none.summary == "get settings PPI: no settings")
    #expect(decodeVendor(cp, [0xF0, 0x02, 0x00, 0x00, 0x00], .indication).summary == "start ECG: ok")
    // Ops without a type: the type byte is kept in the fields, left out of the words.
    let status = decodeVendor(cp, [0xF0, 0x05, 0x00, 0x00, 0x00, 0x01, 0x02], .indication)
    #expect(status.summary == "get measurement status: ok" && status.string("parameters") == "0102")
    // Errors: no `more`, no settings.
    let error = decodeVendor(cp, [0xF0, 0x01, 0x04, 0x02], .indication)
    #expect(error["more"] == nil && error.string("status_name") == "invalid measurement type")
    #expect(error.summary == "get settings reserved type 4: error: invalid measurement type")
    #expect(error.string("measurement_type_name") == "reserved")
  }

  @Test func everyStatusName() {
    let names = [
      "success", "invalid op code", "invalid measurement type", "not supported", "invalid length", "invalid parameter", "already in state",
      "invalid resolution", "invalid sample rate", "invalid range", "invalid MTU", "invalid number of channels", "invalid state",
      "device in charger", "disk full",
    ]
    for (code, name) in names.enumerated() where code > 0 {
      let response = decodeVendor(cp, [0xF0, 0x02, 0x01, UInt8(code)], .indication)
      #expect(response.string("status_name") == name)
      #expect(response.summary == "start PPG: error: " + name)
    }
    let unknown = decodeVendor(cp, [0xF0, 0x02, 0x01, 15], .indication)
    #expect(unknown["status_name"] == nil && unknown.summary == "start PPG: error: status 15")
    #expect(unknown.warnings == ["PMD status 15 is not in the reference"])
  }

  @Test func deviceCommandsAndContext() {
    // §8.2: any first byte but F0 is the device's command; 0x01 = online measurement stopped + type bytes.
    let stopped = decodeVendor(cp, [0x01, 0x01, 0x02], .indication)
    #expect(stopped.string("message") == "device_command" && stopped.string("command_name") == "online measurement stopped")
    #expect(stopped.ints("measurement_types") == [1, 2] && stopped.strings("measurement_type_names") == ["PPG", "ACC"])
    #expect(stopped.summary == "measurement stopped: PPG, ACC")
    let other = decodeVendor(cp, [0x02, 0x05], .indication)
    #expect(other.summary == "device command 0x02 05" && other.notes == ["PMD device command 0x02 is not in the reference"])
    // The same bytes written are a request: get settings for PPG.
    #expect(decodeVendor(cp, [0x01, 0x01], .write).summary == "get settings PPG")
    // Without a context, F0 first is a response.
    #expect((typedValue(cp, [0xF0, 0x03, 0x00, 0x00, 0x00]) as? PolarPMD.ControlPoint)?.message == .response(.init(opcode: 3, typeByte: 0, status: 0, more: 0)))
    #expect((typedValue(cp, [0x03, 0x00]) as? PolarPMD.ControlPoint)?.message == .request(.init(opcode: 3, typeByte: 0)))
    expectVendorPrefixesTruncate(cp, [0xF0, 0x01, 0x00, 0x00, 0x00], .indication)
  }

  // MARK: Data (§8.4 frame header and sample table)

  /// `type timestamp(u64) frame_type samples`.
  func frame(_ type: UInt8, _ frameType: UInt8, _ samples: [UInt8], timestamp: UInt64 = 789_004_800_153_846_153) -> [UInt8] {
    [type] + le(timestamp) + [frameType] + samples
  }

  @Test func ecgFrame() {
    let value = decodeVendor(data, frame(0x00, 0x00, le24(-48) + le24(1350) + le24(0)), .notification)
    #expect(value.error == nil)
    #expect(value.int("measurement_type") == 0 && value.string("measurement_type_name") == "ECG")
    #expect((value["timestamp_ns"] as? String).flatMap { UInt64($0.dropFirst(2), radix: 16) } == 789_004_800_153_846_153)
    // 789 004 800 s after 2000-01-01 is 2025-01-01 (25 × 365 + 7 leap days).
    #expect(value.string("timestamp_utc") == "2025-01-01 00:00:00.153846153")
    #expect(value.int("frame_type") == 0 && value.bool("compressed") == false && value.int("sample_count") == 3)
    #expect(value.ints("samples_uv") == [-48, 1350, 0])
    #expect(value.summary == "ECG: 3 samples, -48…1350 µV")
    expectVendorPrefixesTruncate(data, frame(0x00, 0x00, []), .notification)
    // A partial sample at the end: the whole samples stay, the value is malformed.
    let partial = decodeVendor(data, frame(0x00, 0x00, le24(-48) + [0x01]), .notification)
    #expect(partial.error?.reason == .lengthMismatch(field: "the value format", declared: 13, actual: 14))
    #expect(partial.ints("samples_uv") == [-48])
  }

  @Test func timestampsAsUTC() {
    #expect(PolarPMD.utcText(nanosecondsSince2000: 0) == "2000-01-01 00:00:00.000000000")
    // 2024-02-29 12:00:00: 24 years with 6 leap days, then 31 + 28 days.
    let leapDay = (UInt64(24 * 365 + 6 + 59) * 86_400 + 43_200) * 1_000_000_000 + 5
    #expect(PolarPMD.utcText(nanosecondsSince2000: leapDay) == "2024-02-29 12:00:00.000000005")
    #expect(PolarPMD.utcText(nanosecondsSince2000: (UInt64(366 + 58) * 86_400 + 86_399) * 1_000_000_000) == "2001-02-28 23:59:59.000000000")
    // The largest time stamp still makes a date (year 2584).
    #expect(PolarPMD.utcText(nanosecondsSince2000: .max).hasPrefix("2584-"))
  }

  @Test func accFramesOfEachSampleSize() {
    // Frame types 0, 1, 2: x, y, z as s8, s16, s24.
    let small = decodeVendor(data, frame(0x02, 0x00, [0x01, 0xFE, 0x03, 0x80, 0x7F, 0x00]), .notification)
    #expect(small.rows("samples_mg") == [[1, -2, 3], [-128, 127, 0]])
    #expect(small.summary == "ACC: 2 samples, x -128…1, y -2…127, z 0…3 mG")
    let medium = decodeVendor(data, frame(0x02, 0x01, le(Int16(-48)) + le(Int16(357)) + le(Int16(4068))), .notification)
    #expect(medium.rows("samples_mg") == [[-48, 357, 4068]] && medium.summary == "ACC: 1 sample, x -48, y 357, z 4068 mG")
    let large = decodeVendor(data, frame(0x02, 0x02, le24(-8_388_608) + le24(8_388_607) + le24(65_536)), .notification)
    #expect(large.rows("samples_mg") == [[-8_388_608, 8_388_607, 65_536]])
    // Frame type 3 is not in the reference: the bytes stay, with a note.
    let other = decodeVendor(data, frame(0x02, 0x03, [0x01, 0x02]), .notification)
    #expect(other.error == nil && other.string("data") == "0102" && other["samples_mg"] == nil)
    #expect(other.summary == "ACC frame type 3: 2 bytes")
    #expect(other.notes == ["PMD frame type 3 of ACC is not in the reference; samples not decoded"])
  }

  @Test func ppgPpiGyroPressureTemperatureFrames() {
    // PPG type 0: ppg0, ppg1, ppg2, ambient, 3 bytes each.
    let ppg = decodeVendor(data, frame(0x01, 0x00, le24(100_000) + le24(120_000) + le24(90_000) + le24(2_000)), .notification)
    #expect(ppg.rows("samples") == [[100_000, 120_000, 90_000, 2_000]] && ppg.summary == "PPG: 1 sample, 4 channels")
    // PPI: HR u8, PP u16, error u16, flags (bit 0 blocker, 1 skin contact, 2 contact supported).
    let ppi = decodeVendor(data, frame(0x03, 0x00, [62] + le(UInt16(968)) + le(UInt16(10)) + [0x06] + [61] + le(UInt16(984)) + le(UInt16(9)) + [0x01]), .notification)
    #expect(ppi.int("ppi_samples.0.hr_bpm") == 62 && ppi.int("ppi_samples.0.pp_interval_ms") == 968 && ppi.int("ppi_samples.0.error_estimate_ms") == 10)
    #expect(ppi.bool("ppi_samples.0.blocker") == false && ppi.bool("ppi_samples.0.skin_contact") == true && ppi.bool("ppi_samples.0.skin_contact_supported") == true)
    #expect(ppi.bool("ppi_samples.1.blocker") == true && ppi.bool("ppi_samples.1.skin_contact") == false && ppi.int("ppi_samples.1.flags") == 1)
    #expect(ppi.summary == "PPI: 2 samples, 61…62 bpm, PP 968…984 ms, 1 blocked")
    expectVendorPrefixesTruncate(data, frame(0x03, 0x00, [62] + le(UInt16(968)) + le(UInt16(10)) + [0x06]), .notification, from: 11)
    // Gyroscope type 1: x, y, z float32 deg/s.
    let gyro = decodeVendor(data, frame(0x05, 0x01, le(Float(1.5)) + le(Float(-0.25)) + le(Float(12.125))), .notification)
    #expect((gyro["samples_dps"] as? [[Double]]) == [[1.5, -0.25, 12.125]])
    #expect(gyro.summary == "gyroscope: 1 sample, x 1.5, y -0.25, z 12.125 deg/s")
    // A float32 shows as its shortest decimal.
    #expect(decodeVendor(data, frame(0x0C, 0x00, le(Float(0.1))), .notification).doubles("samples_c") == [0.1])
    let pressure = decodeVendor(data, frame(0x0B, 0x00, le(Float(1013.25)) + le(Float(1013.5))), .notification)
    #expect(pressure.doubles("samples_hpa") == [1013.25, 1013.5] && pressure.summary == "pressure: 2 samples, 1013.25…1013.5 hPa")
    let temperature = decodeVendor(data, frame(0x0C, 0x00, le(Float(21.5))), .notification)
    #expect(temperature.doubles("samples_c") == [21.5] && temperature.summary == "temperature: 1 sample, 21.5 °C")
    // A NaN is JSON null, not a crash.
    let nan = decodeVendor(data, frame(0x0B, 0x00, le(Float.nan)), .notification)
    #expect(nan.error == nil && (nan["samples_hpa"] as? [Any])?.first is NSNull)
  }

  // MARK: Delta frames (§8.4: reference sample, then `width count packed`, LSB first, two's complement)

  @Test func deltaFrameOfTheSpecExample() {
    // The spec's example: reference D0 FF 65 01 E4 0F (16-bit, 3 channels) = (−48, 357, 4068);
    // 8-bit deltas, first bytes FC 07 FF → (−52, 364, 4067). One sample here.
    let value = decodeVendor(data, frame(0x02, 0x80, [0xD0, 0xFF, 0x65, 0x01, 0xE4, 0x0F, 0x08, 0x01, 0xFC, 0x07, 0xFF]), .notification)
    #expect(value.error == nil && value.bool("compressed") == true && value.int("frame_type") == 0)
    #expect(value.rows("samples_mg") == [[-48, 357, 4068], [-52, 364, 4067]])
    #expect(value.int("channel_count") == 3 && value.int("reference_bytes_per_channel") == 2)
    #expect(value.int("delta_blocks.0.delta_bit_width") == 8 && value.int("delta_blocks.0.sample_count") == 1)
    #expect(value.summary == "ACC (delta): 2 samples, x -52…-48, y 357…364, z 4067…4068 mG")
    #expect(value.notes.isEmpty)
  }

  @Test func deltaFramesOfOtherWidths() {
    // 4-bit deltas (1, −1, 2), (−8, 7, 0) packed LSB first: F1 82 07.
    let narrow = decodeVendor(data, frame(0x02, 0x80, [0, 0, 0, 0, 0, 0, 0x04, 0x02, 0xF1, 0x82, 0x07]), .notification)
    #expect(narrow.rows("samples_mg") == [[0, 0, 0], [1, -1, 2], [-7, 6, 2]])
    // PPG: 4 channels × 3 bytes; 2-bit deltas (1, −1, 0, −2) = 01 11 00 10 → 0x8D; then a block
    // of 1-bit deltas (−1, 0, −1, 0) → 0b0101 → 0x05.
    let ppg = decodeVendor(
      data, frame(0x01, 0x80, le24(100_000) + le24(-5) + le24(0) + le24(2_000) + [0x02, 0x01, 0x8D, 0x01, 0x01, 0x05]), .notification)
    #expect(ppg.rows("samples") == [[100_000, -5, 0, 2_000], [100_001, -6, 0, 1_998], [100_000, -6, -1, 1_998]])
    #expect(ppg.int("delta_blocks.1.delta_bit_width") == 1)
    // Gyroscope deltas are raw counts: `samples`, not deg/s.
    let gyro = decodeVendor(data, frame(0x05, 0x80, le(Int16(-300)) + le(Int16(150)) + le(Int16(5)) + [0x08, 0x01, 0x01, 0x02, 0xFF]), .notification)
    #expect(gyro.rows("samples") == [[-300, 150, 5], [-299, 152, 4]] && gyro["samples_dps"] == nil)
    // ACC whose blocks only fit 24-bit reference values: read so, with a note.
    let wide = decodeVendor(data, frame(0x02, 0x80, le24(1) + le24(-1) + le24(2) + [0x08, 0x01, 0x01, 0x01, 0x01]), .notification)
    #expect(wide.rows("samples_mg") == [[1, -1, 2], [2, 0, 3]] && wide.int("reference_bytes_per_channel") == 3)
    #expect(wide.notes == ["PMD delta frame of ACC read as 3 channels × 3 bytes (the layout that fits; not the type's usual one)"])
  }

  @Test func deltaFramesOfUnknownLayoutAndDamage() {
    // Skin temperature (7) has no layout in the reference: a unique fit (with at least one
    // block) is used, with a note; several fits (1 × 1 byte with two blocks, 1 × 4 bytes with
    // one) or none (a reference sample alone) leave the bytes undecoded.
    let unique = decodeVendor(data, frame(0x07, 0x80, [0x10, 0x00, 0x08, 0x01, 0xFF]), .notification)
    #expect(unique.rows("samples") == [[16], [15]] && unique.int("channel_count") == 1)
    #expect(unique.notes == ["PMD delta frame of skin temperature read as 1 channels × 2 bytes (the layout that fits; not the type's usual one)"])
    let ambiguous = decodeVendor(data, frame(0x07, 0x80, [0x01, 0x08, 0x01, 0x05, 0x08, 0x01, 0x07]), .notification)
    #expect(ambiguous.error == nil && ambiguous.string("data") == "01080105080107")
    #expect(ambiguous.warnings == ["PMD delta frame of skin temperature: no single layout (1–8 channels × 1–4 bytes) fits its 7 bytes; samples not decoded"])
    #expect(decodeVendor(data, frame(0x07, 0x80, [0, 0, 0, 0]), .notification).string("data") == "00000000")
    // A block cut short is truncated; a width beyond 32 bits is invalid.
    let example: [UInt8] = [0xD0, 0xFF, 0x65, 0x01, 0xE4, 0x0F, 0x08, 0x01, 0xFC, 0x07, 0xFF]
    // (A reference sample alone is a whole frame: the prefix of 16 bytes decodes.)
    expectVendorPrefixesTruncate(data, frame(0x02, 0x80, Array(example.prefix(6))), .notification, from: 0)
    expectVendorPrefixesTruncate(data, frame(0x02, 0x80, example), .notification, from: 17)
    let wide = decodeVendor(data, frame(0x02, 0x80, [0, 0, 0, 0, 0, 0, 40, 0x01] + [UInt8](repeating: 0, count: 15)), .notification)
    #expect(wide.error?.reason == .invalidValue(field: "delta bit width", value: 40))
    // Width 0 takes no bytes; the sample count stays bounded.
    let zeros = decodeVendor(data, frame(0x02, 0x80, [0, 0, 0, 0, 0, 0] + [UInt8](repeating: 0, count: 64 * 2).enumerated().map { $0.offset % 2 == 0 ? 0 : 0xFF }), .notification)
    #expect(zeros.error == nil && zeros.int("sample_count") == 1 + 64 * 255)
    let tooMany = decodeVendor(data, frame(0x02, 0x80, [0, 0, 0, 0, 0, 0] + [UInt8](repeating: 0, count: 66 * 2).enumerated().map { $0.offset % 2 == 0 ? 0 : 0xFF }), .notification)
    #expect(tooMany.error?.reason == .invalidValue(field: "delta sample count", value: 1 + 65 * 255))
  }

  /// Random bytes through both characteristics under every operation: a value or an error,
  /// and whatever decodes writes fields, words and diagnostics without trapping.
  @Test func randomBytesNeverCrash() {
    var generator = SeededGenerator(seed: 0x504D_44)
    for _ in 0..<3000 {
      let length = Int.random(in: 0...64, using: &generator)
      var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
      // Make the interesting shapes likely: a response, a delta frame.
      if length > 9, Bool.random(using: &generator) { bytes[9] |= 0x80 }
      if length > 0, Bool.random(using: &generator) { bytes[0] = [0xF0, 0x01, 0x02, 0x09][Int.random(in: 0...3, using: &generator)] }
      for uuid in [cp, data] {
        for operation in [GATTOperation.read, .write, .writeWithoutResponse, .notification, .indication] {
          _ = decodeVendor(uuid, bytes, operation)
        }
      }
    }
  }
}
