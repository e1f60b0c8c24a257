/// AES-128 in the forward direction only (FIPS-197): LE encryption (CCM's counter mode and
/// CBC-MAC) and the SMP key functions (c1, s1) never run the inverse cipher.
///
/// Keys and blocks are most significant octet first, as FIPS-197 and the Core specification's
/// `e()` write them (HCI and the air carry them least significant octet first: callers reverse).
/// Written for clarity, not speed: only encrypted payloads and key recovery call it.
package struct AES128: Sendable {
  package typealias Block = SIMD16<UInt8>

  /// The 11 round keys.
  private let roundKeys: [Block]

  package init(key: Block) {
    // Key expansion (FIPS-197 §5.2): 44 words, each the word 4 back XOR the previous one,
    // that one rotated, substituted and XORed with the round constant every 4th word.
    var words = [UInt32](repeating: 0, count: 44)
    for i in 0..<4 {
      words[i] = UInt32(key[4 * i]) << 24 | UInt32(key[4 * i + 1]) << 16 | UInt32(key[4 * i + 2]) << 8 | UInt32(key[4 * i + 3])
    }
    var roundConstant: UInt8 = 1
    for i in 4..<44 {
      var word = words[i - 1]
      if i % 4 == 0 {
        word = word << 8 | word >> 24
        word = Self.substitute(word) ^ UInt32(roundConstant) << 24
        roundConstant = Self.double(roundConstant)
      }
      words[i] = words[i - 4] ^ word
    }
    var keys: [Block] = []
    keys.reserveCapacity(11)
    for round in 0..<11 {
      var block = Block()
      for column in 0..<4 {
        let word = words[4 * round + column]
        for row in 0..<4 { block[4 * column + row] = UInt8(truncatingIfNeeded: word >> (24 - 8 * row)) }
      }
      keys.append(block)
    }
    roundKeys = keys
  }

  /// A key from 16 octets, most significant first.
  package init?(keyBytes bytes: some Collection<UInt8>) {
    guard let block = Self.block(bytes) else { return nil }
    self.init(key: block)
  }

  package func encrypt(_ input: Block) -> Block {
    var state = input ^ roundKeys[0]
    for round in 1..<10 {
      state = Self.mixColumns(Self.shiftRows(Self.subBytes(state))) ^ roundKeys[round]
    }
    return Self.shiftRows(Self.subBytes(state)) ^ roundKeys[10]
  }

  /// 16 octets as a block, in their order; nil unless there are exactly 16.
  package static func block(_ bytes: some Collection<UInt8>) -> Block? {
    guard bytes.count == 16 else { return nil }
    var block = Block()
    for (index, byte) in bytes.enumerated() { block[index] = byte }
    return block
  }

  // MARK: The round functions (FIPS-197 §5.1). The state is column by column: row r of
  // column c is octet 4c + r.

  private static func subBytes(_ state: Block) -> Block {
    var out = Block()
    for i in 0..<16 { out[i] = sBox[Int(state[i])] }
    return out
  }

  /// Row r moves r columns left.
  private static func shiftRows(_ s: Block) -> Block {
    Block(s[0], s[5], s[10], s[15], s[4], s[9], s[14], s[3], s[8], s[13], s[2], s[7], s[12], s[1], s[6], s[11])
  }

  /// Each column times the polynomial {03}x³ + {01}x² + {01}x + {02} in GF(2⁸).
  private static func mixColumns(_ s: Block) -> Block {
    var out = Block()
    for c in 0..<4 {
      let (a0, a1, a2, a3) = (s[4 * c], s[4 * c + 1], s[4 * c + 2], s[4 * c + 3])
      let all = a0 ^ a1 ^ a2 ^ a3
      out[4 * c] = a0 ^ all ^ double(a0 ^ a1)
      out[4 * c + 1] = a1 ^ all ^ double(a1 ^ a2)
      out[4 * c + 2] = a2 ^ all ^ double(a2 ^ a3)
      out[4 * c + 3] = a3 ^ all ^ double(a3 ^ a0)
    }
    return out
  }

  private static func substitute(_ word: UInt32) -> UInt32 {
    var out: UInt32 = 0
    for shift in stride(from: 0, to: 32, by: 8) { out |= UInt32(sBox[Int((word >> UInt32(shift)) & 0xFF)]) << UInt32(shift) }
    return out
  }

  /// Multiplication by x in GF(2⁸) modulo x⁸ + x⁴ + x³ + x + 1.
  private static func double(_ value: UInt8) -> UInt8 {
    value << 1 ^ (value & 0x80 != 0 ? 0x1B : 0)
  }

  /// The S-box, worked out rather than typed (FIPS-197 §5.1.1): the multiplicative inverse in
  /// GF(2⁸) (0 for 0), then the affine map b ⊕ rotl(b,1) ⊕ rotl(b,2) ⊕ rotl(b,3) ⊕ rotl(b,4) ⊕ 0x63.
  static let sBox: [UInt8] = (0..<256).map { value in
    func multiply(_ a: UInt8, _ b: UInt8) -> UInt8 {
      var (a, b, product): (UInt8, UInt8, UInt8) = (a, b, 0)
      while b != 0 {
        if b & 1 != 0 { product ^= a }
        a = double(a)
        b >>= 1
      }
      return product
    }
    // x^254 is x's inverse (x^255 = 1 for x ≠ 0).
    var inverse: UInt8 = 1
    for _ in 0..<254 { inverse = multiply(inverse, UInt8(value)) }
    if value == 0 { inverse = 0 }
    func rotate(_ b: UInt8, _ n: UInt8) -> UInt8 { b << n | b >> (8 - n) }
    return inverse ^ rotate(inverse, 1) ^ rotate(inverse, 2) ^ rotate(inverse, 3) ^ rotate(inverse, 4) ^ 0x63
  }
}
