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
