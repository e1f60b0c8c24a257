import Testing
import BLECore
import BLETestSupport
@testable import BLEDecoder
@testable import BLERender

// SMP PDUs below are the L2CAP payload on CID 0x0006, quoted from the captures in shared/corpus
// (file, 1-based frame number as Wireshark counts it), or built from the layouts of Core Vol 3
// Part H §3.5-3.6 where no capture has the command (Pairing Failed, Keypress Notification).

private struct Decoded {
  var fields = FieldList()
  var command = SMPCommandFact.empty
  /// The command's name and details, as BLERender words them.
  var summary: String { HeaderWords.securityManagerWords(command) }
}

private func decode(_ bytes: [UInt8]) throws(DecodeError) -> Decoded {
  var result = Decoded()
  var reader = ByteReader(testBytes: bytes, layer: .hci)
  try SecurityManager.decode(&reader, into: &result.fields, command: &result.command)
  #expect(reader.isAtEnd)
  #expect(result.fields.depth == 0)
  return result
}

private func failure(_ bytes: [UInt8]) -> (error: DecodeError, fields: FieldList)? {
  var fields = FieldList()
  var command = SMPCommandFact.empty
  var reader = ByteReader(testBytes: bytes, layer: .l2cap)
  do {
    try SecurityManager.decode(&reader, into: &fields, command: &command)
    return nil
  } catch {
    return (error, fields)
  }
}

/// Every strict prefix of `bytes` throws a `DecodeError` at layer `.l2cap` and leaves the field groups closed.
private func expectPrefixesThrow(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
  for count in 0..<bytes.count {
    guard let (error, fields) = failure(Array(bytes[..<count])) else {
      Issue.record("prefix of \(count) bytes decoded without error", sourceLocation: sourceLocation)
      continue
    }
    #expect(error.layer == .l2cap, sourceLocation: sourceLocation)
    #expect(fields.depth == 0, sourceLocation: sourceLocation)
  }
}

private func codeText(_ fields: FieldList, _ path: String) -> (value: UInt64, name: String)? {
  if case let .codeText(value, _, name)? = fields.value(path) { return (value, name) }
  return nil
}

private func address(_ fields: FieldList, _ path: String) -> (address: String, type: AddressType?)? {
  if case let .address(address, type)? = fields.value(path) { return (address.description, type) }
  return nil
}

@Suite("Security Manager")
struct SecurityManagerTests {
  @Test func pairingRequest() throws {
    // pogo_plus/pogo_plus_pair_2017_12_13.log frame 118: KeyboardDisplay, AuthReq 0x0d, all keys.
    let bytes = hexBytes("01 04 00 0d 10 0f 0f")
    let result = try decode(bytes)
    #expect(result.fields.uint("code") == 1)
    #expect(result.fields.name("code") == "Pairing Request")
    #expect(result.fields.name("io_capability") == "KeyboardDisplay")
    #expect(result.fields.name("oob_data_flag") == "OOB data not present")
    #expect(result.fields.uint("auth_req.bits") == 0x0D)
    #expect(result.fields.name("auth_req.bonding_flags") == "Bonding")
    #expect(result.fields.bool("auth_req.mitm") == true)
    #expect(result.fields.bool("auth_req.sc") == true)
    #expect(result.fields.bool("auth_req.keypress") == false)
    #expect(result.fields.bool("auth_req.ct2") == false)
    #expect(result.fields.uint("max_key_size") == 16)
    #expect(codeText(result.fields, "initiator_key_distribution")?.value == 0x0F)
    #expect(codeText(result.fields, "initiator_key_distribution")?.name == "EncKey, IdKey, SignKey, LinkKey")
    #expect(codeText(result.fields, "responder_key_distribution")?.name == "EncKey, IdKey, SignKey, LinkKey")
    #expect(result.summary == "Pairing Request: KeyboardDisplay, bonding, MITM, SC, key size 16")
    expectPrefixesThrow(bytes)
  }

  @Test func pairingRequestWithCT2() throws {
    // miband3_blproject/miband3_to_laptop.pcapng frame 45: DisplayYesNo, AuthReq 0x2d (CT2 set),
    // initiator keys EncKey, SignKey, LinkKey.
    let result = try decode(hexBytes("01 01 00 2d 10 0d 0f"))
    #expect(result.fields.name("io_capability") == "DisplayYesNo")
    #expect(result.fields.bool("auth_req.ct2") == true)
    #expect(codeText(result.fields, "initiator_key_distribution")?.name == "EncKey, SignKey, LinkKey")
    #expect(result.summary == "Pairing Request: DisplayYesNo, bonding, MITM, SC, CT2, key size 16")
    // miband2_ec521/miband2_galaxy_s7_btsnoop_hci.log frame 14138: AuthReq 0x25 (bonding, MITM, CT2).
    let miband2 = try decode(hexBytes("01 04 00 25 10 07 07"))
    #expect(miband2.fields.bool("auth_req.sc") == false)
    #expect(miband2.summary == "Pairing Request: KeyboardDisplay, bonding, MITM, CT2, key size 16")
  }

  @Test func pairingResponse() throws {
    // pogo_plus/pogo_plus_pair_2017_12_13.log frame 125: NoInputNoOutput, bonding, IdKey / EncKey.
    let bytes = hexBytes("02 03 00 01 10 02 01")
    let result = try decode(bytes)
    #expect(result.fields.name("code") == "Pairing Response")
    #expect(result.fields.name("io_capability") == "NoInputNoOutput")
    #expect(result.fields.bool("auth_req.mitm") == false)
    #expect(codeText(result.fields, "initiator_key_distribution")?.name == "IdKey")
    #expect(codeText(result.fields, "responder_key_distribution")?.name == "EncKey")
    #expect(result.summary == "Pairing Response: NoInputNoOutput, bonding, key size 16")
    expectPrefixesThrow(bytes)
  }

  @Test func confirmAndRandom() throws {
    // btstack/btstack_le_pairing.pklg frames 138 and 148.
    let confirm = hexBytes("03 845a879a0fa942ba48c579a07070a9c8")
    #expect(try decode(confirm).fields.text("confirm") == "845a879a0fa942ba48c579a07070a9c8")
    #expect(try decode(confirm).summary == "Pairing Confirm")
    expectPrefixesThrow(confirm)
    let random = hexBytes("04 fdd406450f1edc84d543acf75ec03629")
    #expect(try decode(random).fields.text("random") == "fdd406450f1edc84d543acf75ec03629")
    expectPrefixesThrow(random)
  }

  @Test func pairingFailed() throws {
    // Built from §3.5.5: every reason 0x01-0x0F has a name; 0x10 does not.
    let bytes = hexBytes("05 08")
    let result = try decode(bytes)
    #expect(result.fields.name("reason") == "Unspecified Reason")
    #expect(result.summary == "Pairing Failed: Unspecified Reason")
    expectPrefixesThrow(bytes)
    #expect(try decode([0x05, 0x01]).fields.name("reason") == "Passkey Entry Failed")
    #expect(try decode([0x05, 0x0B]).fields.name("reason") == "DHKey Check Failed")
    #expect(try decode([0x05, 0x0F]).fields.name("reason") == "Key Rejected")
    for reason: UInt8 in 1...0x0F { #expect(SecurityManager.failureReasonName(reason) != nil) }
    let reserved = try decode([0x05, 0x10])
    #expect(reserved.fields.uint("reason") == 0x10)
    #expect(reserved.fields.name("reason") == nil)
    #expect(reserved.summary == "Pairing Failed: reason 0x10")
  }

  @Test func keyDistribution() throws {
    // btstack/btstack_le_pairing.pklg frames 176, 177, 178, 179, 180 (keys sent by the responder).
    let ltk = hexBytes("06 ef2fd90b047ae9a1cfc3a383b7383073")
    #expect(try decode(ltk).fields.text("ltk") == "ef2fd90b047ae9a1cfc3a383b7383073")
    expectPrefixesThrow(ltk)

    let central = hexBytes("07 5bb4 cf10705f3c2de3b3")
    let identification = try decode(central)
    #expect(identification.fields.name("code") == "Central Identification")
    #expect(identification.fields.uint("ediv") == 0xB45B)
    #expect(identification.fields.uint("random_number") == 0xB3E3_2D3C_5F70_10CF)
    #expect(identification.summary == "Central Identification: EDIV 0xb45b")
    expectPrefixesThrow(central)

    let irk = hexBytes("08 00000000000000000000000000000000")
    #expect(try decode(irk).fields.text("irk") == "00000000000000000000000000000000")
    expectPrefixesThrow(irk)

    let identity = hexBytes("09 00 ef3207dc1b00")
    let decoded = try decode(identity)
    let identityAddress = try #require(address(decoded.fields, "address"))
    #expect(identityAddress.address == "00:1B:DC:07:32:EF")
    #expect(identityAddress.type == .publicDevice)
    #expect(decoded.summary == "Identity Address Information: 00:1B:DC:07:32:EF (public)")
    expectPrefixesThrow(identity)

    // btstack/btstack_le_pairing.pklg frame 190: CSRK from the initiator.
    let csrk = hexBytes("0a 8d025f429499b15ff5c5232972789102")
    #expect(try decode(csrk).fields.text("csrk") == "8d025f429499b15ff5c5232972789102")
    expectPrefixesThrow(csrk)

    // Built: a random static identity address, and a reserved address type.
    let random = try decode(hexBytes("09 01 665544332211"))
    #expect(address(random.fields, "address")?.type == .randomDevice)
    let reserved = try decode(hexBytes("09 02 665544332211"))
    #expect(reserved.fields.uint("address_type") == 2)
    #expect(address(reserved.fields, "address")?.type == nil)
  }

  @Test func securityRequest() throws {
    // btstack/btstack_le_pairing.pklg frame 133: bonding.
    let bytes = hexBytes("0b 01")
    let result = try decode(bytes)
    #expect(result.fields.name("code") == "Security Request")
    #expect(result.fields.name("auth_req.bonding_flags") == "Bonding")
    #expect(result.summary == "Security Request: bonding")
    expectPrefixesThrow(bytes)
    // pogo_plus/pogo_plus_pair_2017_12_13.log frame 116: no bonding.
    let none = try decode(hexBytes("0b 00"))
    #expect(none.fields.name("auth_req.bonding_flags") == "No Bonding")
    #expect(none.summary == "Security Request: no bonding")
  }

  @Test func secureConnectionsKeys() throws {
    // ll_sniffer/bsniffhub_sc_justworks_fragments_dlt256.pcap frame 124: Pairing Public Key.
    let x = "a3eedbfd1e42eb6e5723deb5b1f4252fb9b0ddd39e9d2fda0fb1ac6eaa8e95e2"
    let y = "fb4a441e436c856ff6446db7833ed3d84a9c9030599fe07eb0a067c3c66b3c33"
    let key = hexBytes("0c" + x + y)
    let result = try decode(key)
    #expect(result.fields.name("code") == "Pairing Public Key")
    #expect(result.fields.text("public_key_x") == x)
    #expect(result.fields.text("public_key_y") == y)
    expectPrefixesThrow(key)

    // Same file frame 136: Pairing DHKey Check.
    let check = hexBytes("0d 8909c022aa970d264c35329eac6abf05")
    #expect(try decode(check).fields.text("dhkey_check") == "8909c022aa970d264c35329eac6abf05")
    expectPrefixesThrow(check)
  }

  @Test func keypressNotification() throws {
    // Built from §3.5.8: passkey digit entered.
    let bytes = hexBytes("0e 01")
    let result = try decode(bytes)
    #expect(result.fields.name("notification_type") == "Passkey digit entered")
    #expect(result.summary == "Pairing Keypress Notification: Passkey digit entered")
    expectPrefixesThrow(bytes)
    #expect(try decode([0x0E, 0x04]).fields.name("notification_type") == "Passkey entry completed")
  }

  @Test func trailingBytes() {
    // btstack/btstack_le_pairing.pklg frame 133 with a stray byte: fields kept, then flagged.
    let failed = failure(hexBytes("0b 01 ff"))
    #expect(failed?.error == DecodeError(.lengthMismatch(field: "SMP command length", declared: 2, actual: 3), layer: .l2cap, offset: 2))
    #expect(failed?.fields.name("auth_req.bonding_flags") == "Bonding")
    #expect(failed?.fields.text("extra") == "ff")
    #expect(failed?.fields.depth == 0)
  }

  @Test func unknownCode() throws {
    // Built: code 0x0F is not assigned; its data stays raw.
    let result = try decode(hexBytes("0f 0102"))
    #expect(result.fields.uint("code") == 0x0F)
    #expect(result.fields.name("code") == nil)
    #expect(result.fields.text("data") == "0102")
    #expect(result.summary == "SMP command 0x0f")
    #expect(SecurityManager.name(0x0F).description == "Unknown SMP Command")
    #expect(SecurityManager.name(0x07).description == "Central Identification")
  }

  @Test func randomBytesNeverTrap() {
    var generator = SeededGenerator(seed: 0x5EC0)
    for _ in 0..<5000 {
      let count = Int.random(in: 0...70, using: &generator)
      var bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
      if count > 0 { bytes[0] = UInt8.random(in: 0...0x10, using: &generator) }
      var fields = FieldList()
      var command = SMPCommandFact.empty
      var reader = ByteReader(testBytes: bytes, layer: .l2cap)
      do {
        try SecurityManager.decode(&reader, into: &fields, command: &command)
      } catch {
        #expect(error.layer == .l2cap)
      }
      #expect(fields.depth == 0)
    }
  }
}
