import BLECore
import BLERender
import Testing

@testable import BLEDecoder

@Suite struct GAPAndDescriptorProfileTests {
  @Test func deviceNameAndAppearance() throws {
    // captures/hr_strap_session.btsnoop frames 90 and 93: bumble 0.0.236 gap Read Responses.
    let name = try decodeProfile(0x2A00, Array("bledissect HR".utf8), operation: .read)
    #expect(name.fields.text("value") == "bledissect HR")
    #expect(name.summaryText == "bledissect HR")
    let typedName = try #require(typedValue(0x2A00, Array("bledissect HR".utf8)) as? DeviceName)
    #expect(typedName.text == "bledissect HR")
    #expect(typedName == DeviceName(string: UTF8Text(text: "bledissect HR")))
    #expect(DeviceName.label.description == "Device name")
    // Any length: strings read the whole value.
    #expect(profileError(0x2A00, Array("bledissect HR".utf8)) == nil)
    #expect((typedValue(0x2A00, []) as? DeviceName)?.text == "")
    let appearance = try decodeProfile(0x2A01, [0x41, 0x03], operation: .read)
    #expect(appearance.fields.uint("appearance") == 0x0341)
    #expect(appearance.fields.name("appearance") == "Heart Rate Sensor: Heart Rate Belt")
    #expect(appearance.fields.uint("category") == 13)
    #expect(appearance.fields.uint("subcategory") == 1)
    #expect(appearance.summaryText == "Heart Rate Sensor: Heart Rate Belt")
    let typedAppearance = try #require(typedValue(0x2A01, [0x41, 0x03]) as? Appearance)
    #expect(typedAppearance.rawValue == 0x0341)
    #expect(typedAppearance.name?.description == "Heart Rate Sensor: Heart Rate Belt")
    #expect(typedAppearance.category == 13 && typedAppearance.subcategory == 1)
    expectPrefixesTruncate(0x2A01, [0x41, 0x03])
    expectTrailingByteRejected(0x2A01, [0x41, 0x03])
  }

  @Test func peripheralPreferredConnectionParameters() throws {
    // Constructed per Core Vol 3 Part C §12.3 / reference §3: min 24 (30 ms), max 40 (50 ms),
    // latency 0, timeout 400 (4000 ms).
    let bytes: [UInt8] = [0x18, 0x00, 0x28, 0x00, 0x00, 0x00, 0x90, 0x01]
    let frame = try decodeProfile(0x2A04, bytes, operation: .read)
    #expect(frame.fields.uint("interval_min") == 24)
    #expect(frame.fields.value("interval_min").map { if case .measure(_, 1.25, _) = $0 { true } else { false } } == true)
    #expect(frame.fields.uint("interval_max") == 40)
    #expect(frame.fields.uint("latency") == 0)
    #expect(frame.fields.uint("supervision_timeout") == 400)
    #expect(frame.fields.unit("supervision_timeout") == "ms")
    #expect(frame.summaryText == "interval 30–50 ms, latency 0, timeout 4000 ms")
    #expect(frame.diagnostics.isEmpty)
    let typed = try PeripheralPreferredConnectionParameters(bytes: bytes)
    #expect(typed.minimumIntervalMilliseconds == 30)
    #expect(typed.maximumIntervalMilliseconds == 50)
    #expect(typed.supervisionTimeoutMilliseconds == 4000)
    let registered = try #require(typedValue(0x2A04, bytes) as? PeripheralPreferredConnectionParameters)
    #expect(registered == PeripheralPreferredConnectionParameters(minimumInterval: 24, maximumInterval: 40, peripheralLatency: 0, supervisionTimeout: 400))
    #expect(registered.problems.isEmpty)
    // Exactly 8 bytes (BlueZ gas.c rejects other lengths).
    expectPrefixesTruncate(0x2A04, bytes)
    expectTrailingByteRejected(0x2A04, bytes)

    // No preference everywhere.
    let any = try decodeProfile(0x2A04, [0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0xFF, 0xFF], operation: .read)
    #expect(any.fields.isNull("interval_min") && any.fields.isNull("interval_max") && any.fields.isNull("supervision_timeout"))
    #expect(any.summaryText == "interval any, latency 0, timeout any")
    #expect(any.diagnostics.isEmpty)
    let anyValue = try #require(typedValue(0x2A04, [0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0xFF, 0xFF]) as? PeripheralPreferredConnectionParameters)
    #expect(anyValue.minimumIntervalMilliseconds == nil && anyValue.supervisionTimeoutMilliseconds == nil)
    // Only a minimum or only a maximum preferred.
    #expect(try decodeProfile(0x2A04, [0x18, 0x00, 0xFF, 0xFF, 0x00, 0x00, 0xFF, 0xFF]).summaryText == "interval ≥ 30 ms, latency 0, timeout any")
    #expect(try decodeProfile(0x2A04, [0xFF, 0xFF, 0x28, 0x00, 0x00, 0x00, 0xFF, 0xFF]).summaryText == "interval ≤ 50 ms, latency 0, timeout any")

    // Out of range: min 5 (< 6), max 3201, min > max does not apply (5 < 3201), latency 500,
    // timeout 9 (< 10).
    let bad = try decodeProfile(0x2A04, [0x05, 0x00, 0x81, 0x0C, 0xF4, 0x01, 0x09, 0x00], operation: .read)
    #expect(
      bad.warnings == [
        "preferred connection parameters: minimum connection interval 5 (6.25 ms) is outside 6–3200 (7.5 ms–4 s)",
        "preferred connection parameters: maximum connection interval 3201 (4001.25 ms) is outside 6–3200 (7.5 ms–4 s)",
        "preferred connection parameters: peripheral latency 500 is above 499",
        "preferred connection parameters: supervision timeout 9 (90 ms) is outside 10–3200 (100 ms–32 s)",
      ])
    // min > max, and a timeout too short for the interval and latency: (1 + 4) × 50 ms × 2 = 500 ms.
    let inconsistent = try decodeProfile(0x2A04, [0x30, 0x00, 0x28, 0x00, 0x04, 0x00, 0x32, 0x00], operation: .read)
    #expect(
      inconsistent.warnings == [
        "preferred connection parameters: minimum connection interval 48 is above the maximum 40",
        "preferred connection parameters: supervision timeout 500 ms is not above (1 + latency) × maximum interval × 2 = 500 ms",
      ])
  }

  @Test func gattServiceCharacteristics() throws {
    // Service Changed: the whole range 0x0001–0xFFFF (what bumble indicates after a database change).
    let changed = try decodeProfile(0x2A05, [0x01, 0x00, 0xFF, 0xFF], operation: .indication)
    #expect(changed.fields.uint("start_handle") == 1)
    #expect(changed.fields.uint("end_handle") == 0xFFFF)
    #expect(changed.summaryText == "handles 0x0001–0xffff")
    expectPrefixesTruncate(0x2A05, [0x01, 0x00, 0xFF, 0xFF])
    expectTrailingByteRejected(0x2A05, [0x01, 0x00, 0xFF, 0xFF])
    #expect(try decodeProfile(0x2A05, [0x10, 0x00, 0x01, 0x00]).warnings == ["Service Changed start handle is above the end handle"])
    #expect(try decodeProfile(0x2A05, [0x00, 0x00, 0x01, 0x00]).warnings == ["Service Changed start handle 0x0000 is invalid"])
    let range = try #require(typedValue(0x2A05, [0x01, 0x00, 0xFF, 0xFF]) as? ServiceChanged)
    #expect(range == ServiceChanged(startHandle: 1, endHandle: 0xFFFF))
    #expect(range.startHandle == 0x0001 && range.endHandle == 0xFFFF)

    // Central Address Resolution (Core Vol 3 Part C §12.4): 1 = supported.
    let car = try decodeProfile(0x2AA6, [0x01], operation: .read)
    #expect(car.fields.bool("supported") == true)
    #expect(car.summaryText == "supported")
    expectTrailingByteRejected(0x2AA6, [0x01])
    #expect(try decodeProfile(0x2AA6, [0x02]).warnings == ["Central Address Resolution value 2 is reserved"])
    #expect((typedValue(0x2AA6, [0x01]) as? CentralAddressResolution)?.isSupported == true)
    #expect((typedValue(0x2AA6, [0x00]) as? CentralAddressResolution) == CentralAddressResolution(rawValue: 0))

    // Resolvable Private Address Only (Core Vol 3 Part C §12.5): 0 is the only defined value.
    let rpao = try decodeProfile(0x2AC9, [0x00], operation: .read)
    #expect(rpao.fields.uint("value") == 0)
    #expect(rpao.summaryText == "only resolvable private addresses")
    #expect(rpao.diagnostics.isEmpty)
    expectPrefixesTruncate(0x2AC9, [0x00])
    expectTrailingByteRejected(0x2AC9, [0x00])
    let rpaoReserved = try decodeProfile(0x2AC9, [0x03], operation: .read)
    #expect(rpaoReserved.summaryText == "reserved value 3")
    #expect(rpaoReserved.warnings == ["Resolvable Private Address Only value 3 is reserved"])
    #expect((typedValue(0x2AC9, [0x00]) as? ResolvablePrivateAddressOnly)?.onlyResolvablePrivateAddresses == true)
    #expect((typedValue(0x2AC9, [0x03]) as? ResolvablePrivateAddressOnly) == ResolvablePrivateAddressOnly(rawValue: 3))

    // Client Supported Features (Core Vol 3 Part G §7.2): robust caching + EATT + multiple notifications.
    let csf = try decodeProfile(0x2B29, [0x07], operation: .write)
    #expect(csf.fields.bool("robust_caching") == true)
    #expect(csf.fields.bool("enhanced_att_bearer") == true)
    #expect(csf.fields.bool("multiple_handle_value_notifications") == true)
    #expect(csf.summaryText == "robust caching, EATT, multiple notifications")
    expectPrefixesTruncate(0x2B29, [0x07])
    #expect(try decodeProfile(0x2B29, [0x09]).warnings == ["reserved bits set in Client Supported Features"])
    #expect(try decodeProfile(0x2B29, [0x00]).summaryText == "no features")
    let features = try #require(typedValue(0x2B29, [0x07]) as? ClientSupportedFeatures)
    #expect(features.robustCaching && features.enhancedATTBearer && features.multipleHandleValueNotifications)
    // Later bytes belong to the bit field (all reserved today): kept, and warned about when set.
    #expect((typedValue(0x2B29, [0x01, 0x00]) as? ClientSupportedFeatures) == ClientSupportedFeatures(bytes: [0x01, 0x00]))
    #expect(try decodeProfile(0x2B29, [0x01, 0x00]).diagnostics.isEmpty)
    #expect(try decodeProfile(0x2B29, [0x01, 0x02]).warnings == ["reserved bits set in Client Supported Features"])

    // Database Hash (Core Vol 3 Part G §7.3): 16 bytes.
    let hash: [UInt8] = Array(0x00...0x0F)
    let hashed = try decodeProfile(0x2B2A, hash, operation: .read)
    #expect(hashed.fields.text("hash") == "000102030405060708090a0b0c0d0e0f")
    #expect(hashed.summaryText == "000102030405060708090a0b0c0d0e0f")
    expectPrefixesTruncate(0x2B2A, hash)
    expectTrailingByteRejected(0x2B2A, hash)
    #expect((typedValue(0x2B2A, hash) as? DatabaseHash)?.bytes == hash)

    // Server Supported Features (Core Vol 3 Part G §7.4): EATT supported.
    let ssf = try decodeProfile(0x2B3A, [0x01], operation: .read)
    #expect(ssf.fields.bool("enhanced_att_bearer") == true)
    #expect(ssf.summaryText == "EATT supported")
    expectPrefixesTruncate(0x2B3A, [0x01])
    #expect((typedValue(0x2B3A, [0x01]) as? ServerSupportedFeatures)?.enhancedATTBearer == true)
    #expect((typedValue(0x2B3A, [0x00, 0x00]) as? ServerSupportedFeatures) == ServerSupportedFeatures(bytes: [0x00, 0x00]))
    #expect(try decodeProfile(0x2B3A, [0x00]).summaryText == "no features")
    #expect(try decodeProfile(0x2B3A, [0x03]).warnings == ["reserved bits set in Server Supported Features"])
  }

  @Test func cccdInWords() throws {
    // captures/hr_strap_session.btsnoop frame 121: bumble 0.0.236 Write Request 01 00 to the
    // Heart Rate Measurement CCCD.
    let enable = try decodeProfile(
      BluetoothUUID(uuid16: 0x2902), [0x01, 0x00], operation: .write, characteristic: BluetoothUUID(uuid16: 0x2A37),
      characteristicName: "Heart Rate Measurement")
    #expect(enable.fields.bool("notifications") == true)
    #expect(enable.fields.bool("indications") == false)
    #expect(enable.summaryText == "notifications enabled on Heart Rate Measurement")
    #expect(ProfileRegistry.decoder(for: BluetoothUUID(uuid16: 0x2902))?.key.description == "client_characteristic_configuration")

    let off = try decodeProfile(0x2902, [0x00, 0x00], operation: .read)
    #expect(off.summaryText == "notifications and indications disabled")
    let indicate = try decodeProfile(0x2902, [0x02, 0x00], operation: .write, characteristicName: "Service Changed")
    #expect(indicate.summaryText == "indications enabled on Service Changed")
    let both = try decodeProfile(0x2902, [0x03, 0x00], operation: .read)
    #expect(both.summaryText == "notifications and indications enabled")
    // Only the characteristic UUID known: its SIG name.
    let byUUID = try decodeProfile(BluetoothUUID(uuid16: 0x2902), [0x01, 0x00], operation: .write, characteristic: BluetoothUUID(uuid16: 0x2A19))
    #expect(byUUID.summaryText == "notifications enabled on Battery Level")

    #expect(try ClientCharacteristicConfiguration(bytes: [0x03, 0x00]) == ClientCharacteristicConfiguration(rawValue: 3))
    let cccd = try #require(typedValue(0x2902, [0x01, 0x00]) as? ClientCharacteristicConfiguration)
    #expect(cccd.notifications && !cccd.indications)
    #expect((typedValue(0x2902, [0x02, 0x00]) as? ClientCharacteristicConfiguration)?.indications == true)
    expectPrefixesTruncate(0x2902, [0x01, 0x00])
    expectTrailingByteRejected(0x2902, [0x01, 0x00])
    #expect(try decodeProfile(0x2902, [0x05, 0x00]).warnings == ["reserved bits set in Client Characteristic Configuration: 0x0004"])
  }

  @Test func otherDescriptors() throws {
    // User Description (Core Vol 3 Part G §3.3.3.2): UTF-8.
    let cud = try decodeProfile(0x2901, Array("Heart rate".utf8), operation: .read)
    #expect(cud.fields.text("value") == "Heart rate")
    #expect(cud.summaryText == "Heart rate")
    #expect((typedValue(0x2901, Array("Heart rate".utf8)) as? CharacteristicUserDescription)?.text == "Heart rate")
    #expect(CharacteristicUserDescription.label.description == "Description")

    // Extended Properties (§3.3.3.1): reliable write.
    let ext = try decodeProfile(0x2900, [0x01, 0x00], operation: .read)
    #expect(ext.fields.bool("reliable_write") == true)
    #expect(ext.fields.bool("writable_auxiliaries") == false)
    #expect(ext.summaryText == "reliable write")
    let extended = try #require(typedValue(0x2900, [0x01, 0x00]) as? CharacteristicExtendedProperties)
    #expect(extended.reliableWrite && !extended.writableAuxiliaries)
    #expect(extended == CharacteristicExtendedProperties(rawValue: 1))
    #expect(try decodeProfile(0x2900, [0x04, 0x00]).warnings == ["reserved bits set in Characteristic Extended Properties: 0x0004"])
    expectPrefixesTruncate(0x2900, [0x01, 0x00])
    expectTrailingByteRejected(0x2900, [0x01, 0x00])

    // Server Characteristic Configuration (§3.3.3.4): broadcasts.
    let sccd = try decodeProfile(0x2903, [0x01, 0x00], operation: .read)
    #expect(sccd.fields.bool("broadcasts") == true)
    #expect(sccd.summaryText == "broadcasts enabled")
    #expect((typedValue(0x2903, [0x01, 0x00]) as? ServerCharacteristicConfiguration)?.broadcasts == true)
    #expect((typedValue(0x2903, [0x00, 0x00]) as? ServerCharacteristicConfiguration) == ServerCharacteristicConfiguration(rawValue: 0))
    expectTrailingByteRejected(0x2903, [0x01, 0x00])

    // Presentation Format (§3.3.3.5): sint16, exponent −2, degree Celsius (0x272F), namespace
    // Bluetooth SIG, description 0x0000 — how an ESS Temperature 0x2A6E (0.01 °C) is described.
    let cpfBytes: [UInt8] = [0x0E, 0xFE, 0x2F, 0x27, 0x01, 0x00, 0x00]
    let cpf = try decodeProfile(0x2904, cpfBytes, operation: .read)
    #expect(cpf.fields.name("format") == "sint16")
    #expect(cpf.fields.int("exponent") == -2)
    #expect(cpf.fields.text("unit") == "272f")
    #expect(cpf.fields.name("unit") == "degree Celsius")
    #expect(cpf.fields.name("namespace") == "Bluetooth SIG")
    #expect(cpf.fields.name("description") == "unknown")
    #expect(cpf.summaryText == "sint16 ×10^-2, degree Celsius")
    let typed = try CharacteristicPresentationFormat(bytes: cpfBytes)
    #expect(typed == CharacteristicPresentationFormat(format: 0x0E, exponent: -2, unit: 0x272F, namespace: 1, description: 0))
    let registered = try #require(typedValue(0x2904, cpfBytes) as? CharacteristicPresentationFormat)
    #expect(registered == typed)
    #expect(registered.formatName?.description == "sint16" && registered.unitName?.description == "degree Celsius")
    expectPrefixesTruncate(0x2904, cpfBytes)
    expectTrailingByteRejected(0x2904, cpfBytes)
    // uint8 percentage, "main" (a battery level's format), and a reserved format.
    let battery = try decodeProfile(0x2904, [0x04, 0x00, 0xAD, 0x27, 0x01, 0x06, 0x01], operation: .read)
    #expect(battery.summaryText == "uint8, percentage, main")
    #expect(try decodeProfile(0x2904, [0x00, 0x00, 0x00, 0x27, 0x01, 0x00, 0x00]).warnings == ["presentation format 0x00 is reserved"])
  }
}
