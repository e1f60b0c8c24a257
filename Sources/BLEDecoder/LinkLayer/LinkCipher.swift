/// The encryption of an LE link (Core Vol 6 Part E §2; sample data in Vol 6 Part C §1): AES-CCM
/// with the session key, a 13-octet nonce and a 4-octet MIC.
///
/// - The session key is e(LTK, SKD), SKD being SKD_P ∥ SKD_C (the diversifiers of LL_ENC_RSP and
///   LL_ENC_REQ, the central's least significant).
/// - The nonce is the 39-bit packet counter and the direction bit (1: sent by the central),
///   5 octets least significant first, then IV = IV_C ∥ IV_P as the two PDUs carry them.
/// - The one octet of additional data is the data PDU header's first octet with NESN, SN and MD
///   cleared (they change on a retransmission that must still verify).
package struct LinkCipher: Sendable {
  private let aes: AES128
  /// IV_C then IV_P, in the order they travel.
  private let iv: [UInt8]

  /// The largest packet counter (39 bits).
  package static let maximumCounter: UInt64 = (1 << 39) - 1
  package static let micLength = 4

  /// `longTermKey` most significant octet first; the diversifiers and vectors as numbers read
  /// from the PDUs (little-endian on the air).
  package init(longTermKey: AES128.Block, skdCentral: UInt64, skdPeripheral: UInt64, ivCentral: UInt32, ivPeripheral: UInt32) {
    let key = Self.sessionKey(longTermKey: longTermKey, skdCentral: skdCentral, skdPeripheral: skdPeripheral)
    aes = AES128(key: key)
    var iv: [UInt8] = []
    for shift in stride(from: 0, to: 32, by: 8) { iv.append(UInt8(truncatingIfNeeded: ivCentral >> UInt32(shift))) }
    for shift in stride(from: 0, to: 32, by: 8) { iv.append(UInt8(truncatingIfNeeded: ivPeripheral >> UInt32(shift))) }
    self.iv = iv
  }

  /// SK = e(LTK, SKD_P ∥ SKD_C), most significant octet first.
  package static func sessionKey(longTermKey: AES128.Block, skdCentral: UInt64, skdPeripheral: UInt64) -> AES128.Block {
    var diversifier = AES128.Block()
    for i in 0..<8 {
      diversifier[i] = UInt8(truncatingIfNeeded: skdPeripheral >> UInt64(56 - 8 * i))
      diversifier[8 + i] = UInt8(truncatingIfNeeded: skdCentral >> UInt64(56 - 8 * i))
    }
    return AES128(key: longTermKey).encrypt(diversifier)
  }

  /// The plain text of an encrypted payload (`sealed`: the encrypted octets, then the MIC), or
  /// nil when the MIC does not verify: a wrong key, counter or direction, or damaged bytes.
  package func open(header: UInt8, sealed: some Collection<UInt8>, counter: UInt64, fromCentral: Bool) -> [UInt8]? {
    let bytes = Array(sealed)
    guard bytes.count > Self.micLength, bytes.count - Self.micLength <= 251 else { return nil }
    let textLength = bytes.count - Self.micLength
    let nonce = self.nonce(counter: counter, fromCentral: fromCentral)
    var plain = [UInt8](repeating: 0, count: textLength)
    crypt(bytes[0..<textLength], into: &plain, nonce: nonce)
    let expected = tag(plain, header: header, nonce: nonce)
    for i in 0..<Self.micLength where expected[i] != bytes[textLength + i] { return nil }
    return plain
  }

  /// The encrypted payload and its MIC for `plain` (the inverse of `open`; tests and tools).
  package func seal(header: UInt8, plain: [UInt8], counter: UInt64, fromCentral: Bool) -> [UInt8] {
    let nonce = self.nonce(counter: counter, fromCentral: fromCentral)
    var sealed = [UInt8](repeating: 0, count: plain.count)
    crypt(plain[...], into: &sealed, nonce: nonce)
    return sealed + tag(plain, header: header, nonce: nonce)
  }

  private func nonce(counter: UInt64, fromCentral: Bool) -> [UInt8] {
    var nonce: [UInt8] = []
    nonce.reserveCapacity(13)
    let value = (counter & Self.maximumCounter) | (fromCentral ? 1 << 39 : 0)
    for i in 0..<5 { nonce.append(UInt8(truncatingIfNeeded: value >> UInt64(8 * i))) }
    return nonce + iv
  }

  /// A CCM block: a flags octet, the nonce, and a 2-octet number (a counter or a length).
  private func block(flags: UInt8, nonce: [UInt8], number: Int) -> AES128.Block {
    var block = AES128.Block()
    block[0] = flags
    for i in 0..<13 { block[1 + i] = nonce[i] }
    block[14] = UInt8(truncatingIfNeeded: number >> 8)
    block[15] = UInt8(truncatingIfNeeded: number)
    return block
  }

  /// Counter mode from counter 1 (flags 0x01: a 2-octet counter).
  private func crypt(_ input: ArraySlice<UInt8>, into output: inout [UInt8], nonce: [UInt8]) {
    var index = 0
    var counter = 1
    while index < input.count {
      let stream = aes.encrypt(block(flags: 0x01, nonce: nonce, number: counter))
      for i in 0..<min(16, input.count - index) {
        output[index + i] = input[input.startIndex + index + i] ^ stream[i]
      }
      index += 16
      counter += 1
    }
  }

  /// The MIC: CBC-MAC over B0 (flags 0x49: additional data, a 4-octet tag, a 2-octet length),
  /// the additional data block and the plain text, encrypted with counter 0.
  private func tag(_ plain: [UInt8], header: UInt8, nonce: [UInt8]) -> [UInt8] {
    var mac = aes.encrypt(block(flags: 0x49, nonce: nonce, number: plain.count))
    var additional = AES128.Block()
    additional[1] = 1
    additional[2] = header & 0xE3
    mac = aes.encrypt(mac ^ additional)
    var index = 0
    while index < plain.count {
      var chunk = AES128.Block()
      for i in 0..<min(16, plain.count - index) { chunk[i] = plain[index + i] }
      mac = aes.encrypt(mac ^ chunk)
      index += 16
    }
    let first = aes.encrypt(block(flags: 0x01, nonce: nonce, number: 0))
    return (0..<Self.micLength).map { mac[$0] ^ first[$0] }
  }
}
