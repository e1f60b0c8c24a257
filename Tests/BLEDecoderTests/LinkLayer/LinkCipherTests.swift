import BLECore
import Testing

@testable import BLEDecoder

/// AES-128 and LE link encryption against published vectors: FIPS-197 Appendix C.1, and the
/// Core specification's encryption sample data (Vol 6 Part C §1: the session key of §1.1 and
/// the four packets of §1.2, two each way).
@Suite struct LinkCipherTests {
  static func bytes(_ hex: String) -> [UInt8] {
    var out: [UInt8] = []
    var index = hex.startIndex
    while index < hex.endIndex {
      let next = hex.index(index, offsetBy: 2)
      out.append(UInt8(hex[index..<next], radix: 16)!)
      index = next
    }
    return out
  }

  static func block(_ hex: String) -> AES128.Block { AES128.block(bytes(hex))! }

  @Test func aesMatchesFIPS197() {
    let aes = AES128(key: Self.block("000102030405060708090a0b0c0d0e0f"))
    #expect(aes.encrypt(Self.block("00112233445566778899aabbccddeeff")) == Self.block("69c4e0d86a7b0430d8cdb78070b4c55a"))
  }

  @Test func sBoxIsAPermutationWithTheKnownCorners() {
    #expect(Set(AES128.sBox).count == 256)
    #expect(AES128.sBox[0x00] == 0x63)
    #expect(AES128.sBox[0x53] == 0xED)  // FIPS-197 §5.1.1's example
    #expect(AES128.sBox[0xFF] == 0x16)
  }

  // Core Vol 6 Part C §1: LTK, and the diversifiers and vectors as LL_ENC_REQ / LL_ENC_RSP carry
  // them (SKD_C 0xACBDCEDFE0F10213, IV_C 0xBADCAB24, SKD_P 0x0213243546576879, IV_P 0xDEAFBABE).
  static let longTermKey = block("4C68384139F574D836BCF34E9DFB01BF")
  static let cipher = LinkCipher(
    longTermKey: longTermKey, skdCentral: 0xACBD_CEDF_E0F1_0213, skdPeripheral: 0x0213_2435_4657_6879,
    ivCentral: 0xBADC_AB24, ivPeripheral: 0xDEAF_BABE)

  @Test func sessionKeyMatchesTheSpecification() {
    let key = LinkCipher.sessionKey(longTermKey: Self.longTermKey, skdCentral: 0xACBD_CEDF_E0F1_0213, skdPeripheral: 0x0213_2435_4657_6879)
    #expect(key == Self.block("99AD1B5226A37E3E058E3B8E27C2C666"))
  }

  /// LL_START_ENC_RSP each way (packet counter 0), then a 27-octet LL data PDU each way
  /// (counter 1): header, plain payload, and the payload with its MIC as sent.
  static let packets: [(header: UInt8, counter: UInt64, fromCentral: Bool, plain: String, sealed: String)] = [
    (0x0F, 0, true, "06", "9FCDA7F448"),
    (0x07, 0, false, "06", "A34C13A415"),
    (0x0E, 1, true, "1700636465666768696A6B6C6D6E6F707131323334353637383930",
     "7A70D66415226DF26B17839A060405596BD6564F796B5B9CE6FF32F75A6D33"),
    (0x06, 1, false, "17003736353433323130414243444546474849 4A4B4C4D4E4F5051".replacingOccurrences(of: " ", with: ""),
     "F38881E7BD94C9C369B9A66846DD4786AA8C39CE540D0DAE3ADCDF89B96088"),
  ]

  @Test func packetsMatchTheSpecification() throws {
    for packet in Self.packets {
      let sealed = Self.cipher.seal(header: packet.header, plain: Self.bytes(packet.plain), counter: packet.counter, fromCentral: packet.fromCentral)
      #expect(sealed == Self.bytes(packet.sealed))
      let opened = try #require(Self.cipher.open(header: packet.header, sealed: Self.bytes(packet.sealed), counter: packet.counter, fromCentral: packet.fromCentral))
      #expect(opened == Self.bytes(packet.plain))
    }
  }

  @Test func aWrongCounterDirectionHeaderOrOctetFailsTheMIC() {
    let packet = Self.packets[2]
    let sealed = Self.bytes(packet.sealed)
    #expect(Self.cipher.open(header: packet.header, sealed: sealed, counter: 0, fromCentral: true) == nil)
    #expect(Self.cipher.open(header: packet.header, sealed: sealed, counter: 1, fromCentral: false) == nil)
    #expect(Self.cipher.open(header: 0x0D, sealed: sealed, counter: 1, fromCentral: true) == nil)  // LLID 1 for 2
    for index in sealed.indices {
      var damaged = sealed
      damaged[index] ^= 0x01
      #expect(Self.cipher.open(header: packet.header, sealed: damaged, counter: 1, fromCentral: true) == nil)
    }
    // NESN, SN and MD are not authenticated: a retransmission with other bits still opens.
    #expect(Self.cipher.open(header: packet.header ^ 0x1C, sealed: sealed, counter: 1, fromCentral: true) != nil)
    // Nothing but a MIC, or less, is no packet.
    #expect(Self.cipher.open(header: 0x0F, sealed: [1, 2, 3, 4], counter: 0, fromCentral: true) == nil)
    #expect(Self.cipher.open(header: 0x0F, sealed: [1, 2], counter: 0, fromCentral: true) == nil)
  }
}

/// The legacy pairing functions against Core Vol 3 Part H §2.2.3 (c1) and §2.2.4 (s1).
@Suite struct LegacyPairingTests {
  @Test func c1MatchesTheSpecification() {
    // k 0, r 0x5783D52156AD6F0E6388274EC6702EE0, preq 0x07071000000101, pres 0x05000800000302,
    // iat 1, rat 0, ia A1:A2:A3:A4:A5:A6, ra B1:B2:B3:B4:B5:B6.
    let r = LinkCipherTests.block("5783D52156AD6F0E6388274EC6702EE0")
    let preq: [UInt8] = [0x01, 0x01, 0x00, 0x00, 0x10, 0x07, 0x07]
    let pres: [UInt8] = [0x02, 0x03, 0x00, 0x00, 0x08, 0x00, 0x05]
    let p1 = PairingTranscript.block(reversing: [1, 0] + preq + pres)
    #expect(p1 == LinkCipherTests.block("05000800000302070710000001010001"))
    let ia = BDAddr("A1:A2:A3:A4:A5:A6")!
    let ra = BDAddr("B1:B2:B3:B4:B5:B6")!
    let p2 = PairingTranscript.block(reversing: PairingTranscript.bytes(of: ra) + PairingTranscript.bytes(of: ia) + [0, 0, 0, 0])
    #expect(p2 == LinkCipherTests.block("00000000A1A2A3A4A5A6B1B2B3B4B5B6"))
    let aes = AES128(key: PairingTranscript.temporaryKey(0))
    #expect(PairingTranscript.c1(aes, r: r, p1: p1, p2: p2) == LinkCipherTests.block("1E1E3FEF878988EAD2A74DC5BEF13B86"))
  }

  @Test func s1MatchesTheSpecification() {
    let aes = AES128(key: PairingTranscript.temporaryKey(0))
    let stk = PairingTranscript.s1(
      aes, r1: LinkCipherTests.block("000F0E0D0C0B0A091122334455667788"), r2: LinkCipherTests.block("010203040506070899AABBCCDDEEFF00"))
    #expect(stk == LinkCipherTests.block("9A1FE1F0E8B0F49B5B4216AE796DA062"))
  }

  @Test func aPasskeyIsFoundFromTheSniffedConfirm() throws {
    // A pairing built with passkey 123456: the central's confirm from c1, as a sniffer sees it.
    let ia = BDAddr("C0:B1:ED:00:50:48")!
    let ra = BDAddr("D0:B1:ED:00:48:52")!
    let preq: [UInt8] = [0x01, 0x02, 0x00, 0x05, 0x10, 0x07, 0x07]
    let pres: [UInt8] = [0x02, 0x00, 0x00, 0x05, 0x10, 0x07, 0x07]
    let mrand: [UInt8] = (0..<16).map { UInt8($0 * 7 + 1) }
    let srand: [UInt8] = (0..<16).map { UInt8(0xF0 - $0 * 3) }
    let aes = AES128(key: PairingTranscript.temporaryKey(123_456))
    let p1 = PairingTranscript.block(reversing: [1, 1] + preq + pres)
    let p2 = PairingTranscript.block(reversing: PairingTranscript.bytes(of: ra) + PairingTranscript.bytes(of: ia) + [0, 0, 0, 0])
    let confirm = PairingTranscript.c1(aes, r: PairingTranscript.block(reversing: mrand), p1: p1, p2: p2)
    var transcript = PairingTranscript()
    _ = transcript.note(preq, direction: .hostToController, frame: 1)
    _ = transcript.note(pres, direction: .controllerToHost, frame: 2)
    _ = transcript.note([0x03] + (0..<16).map { confirm[15 - $0] }, direction: .hostToController, frame: 3)
    _ = transcript.note([0x04] + mrand, direction: .hostToController, frame: 5)
    _ = transcript.note([0x04] + srand, direction: .controllerToHost, frame: 6)
    #expect(transcript.shortTermKey(central: (ia, true), peripheral: (ra, true), passkeys: 0...0) == nil)
    let found = try #require(transcript.shortTermKey(central: (ia, true), peripheral: (ra, true), passkeys: 123_000...124_000))
    #expect(found.tk == 123_456)
    #expect(found.stk == PairingTranscript.s1(aes, r1: PairingTranscript.block(reversing: srand), r2: PairingTranscript.block(reversing: mrand)))
  }
}

/// Which keys a link tries, in which order.
@Suite struct LinkKeyRingTests {
  static func key(_ byte: UInt8, address: String? = nil, random: UInt64? = nil, ediv: UInt16? = nil) -> LinkKeyRing.Key {
    LinkKeyRing.Key(key: [UInt8](repeating: byte, count: 16), address: address.flatMap(BDAddr.init), random: random, ediv: ediv, source: "key \(byte)")
  }

  @Test func keysForTheLinkComeFirstAndOthersAreNotTried() {
    var ring = LinkKeyRing()
    ring.add(Self.key(1))
    ring.add(Self.key(2, address: "11:22:33:44:55:66"))
    ring.add(Self.key(3, address: "D0:B1:ED:00:48:52"))
    ring.add(Self.key(4, random: 0x1234, ediv: 0x99))
    ring.add(Self.key(5, random: 0x5555, ediv: 0x99))
    ring.add(Self.key(6))
    let tried = ring.candidates(central: BDAddr("C0:B1:ED:00:50:48"), peripheral: BDAddr("D0:B1:ED:00:48:52"), random: 0x1234, ediv: 0x99)
    // Rand and EDIV first; then the link's device; then keys for no device, in the order given.
    #expect(tried.map(\.source) == ["key 4", "key 3", "key 1", "key 6"])
  }

  @Test func keysParseAsTheyAreWritten() {
    #expect(LinkKeyRing.parse("0x4C68384139F574D836BCF34E9DFB01BF", source: "t")?.key.first == 0x4C)
    #expect(LinkKeyRing.parse("4c:68:38:41:39:f5:74:d8:36:bc:f3:4e:9d:fb:01:bf@D0:B1:ED:00:48:52", source: "t")?.address == BDAddr("D0:B1:ED:00:48:52"))
    #expect(LinkKeyRing.parse("4C68384139F574D836BCF34E9DFB01", source: "t") == nil)
    #expect(LinkKeyRing.parse("@", source: "t") == nil)
    #expect(LinkKeyRing.parse("4C68384139F574D836BCF34E9DFB01BF@nowhere", source: "t") == nil)
    guard case .success(let keys) = LinkKeyRing.parseFile("# keys\r\n4C68384139F574D836BCF34E9DFB01BF D0:B1:ED:00:48:52\r\n\r\n", name: "f") else {
      Issue.record("a CR LF file")
      return
    }
    #expect(keys.map(\.source) == ["f line 2"] && keys.first?.address == BDAddr("D0:B1:ED:00:48:52"))
  }
}
