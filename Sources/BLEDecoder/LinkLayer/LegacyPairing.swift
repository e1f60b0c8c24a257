import BLECore

/// LE legacy pairing as a sniffer sees it (Core Vol 3 Part H §2.3.5): both sides' confirm and
/// random values travel in the clear, so the temporary key (TK) can be found by trying it —
/// 0 for Just Works, 000000–999999 for a passkey — against the central's confirm, and the
/// short-term key that encrypts the link follows from it (as crackle does). Keys distributed
/// on the link once it is encrypted (Encryption Information, Central Identification) are kept
/// for the next connection. LE Secure Connections cannot be recovered this way.
struct PairingTranscript: Sendable {
  /// The Pairing Request and Response as sent (code first): c1's preq and pres.
  var request: [UInt8]?
  var response: [UInt8]?
  /// Each side's Pairing Confirm and Pairing Random, as sent (least significant octet first),
  /// and the frames they were in.
  var confirm = DirectionalPair<[UInt8]?>(nil)
  var random = DirectionalPair<[UInt8]?>(nil)
  var firstFrame = 0
  var lastFrame = 0
  /// Whether the keys were already looked for.
  var tried = false

  /// Whether a legacy pairing was seen whole: both pairing features, the central's confirm and
  /// both randoms (what c1 and s1 need).
  var isWhole: Bool {
    isLegacy && request?.count == 7 && response?.count == 7 && confirm.hostToController != nil && random.hostToController != nil
      && random.controllerToHost != nil
  }

  /// Whether both pairing features say legacy pairing (the SC bit, 0x08 of AuthReq, not set
  /// on both).
  var isLegacy: Bool {
    guard let request, let response, request.count >= 4, response.count >= 4 else { return false }
    return request[3] & 0x08 == 0 || response[3] & 0x08 == 0
  }

  /// Notes an SMP command sent in `direction` in `frame`; returns the LTK it distributes
  /// (Encryption Information), most significant octet first. Its Rand and EDIV (Central
  /// Identification) are not waited for: the MIC tells which link it opens.
  mutating func note(_ command: [UInt8], direction: Direction, frame: Int) -> [UInt8]? {
    guard let code = command.first else { return nil }
    let body = Array(command.dropFirst())
    // Only commands of their own length are kept (a hostile one could be an L2CAP PDU long).
    switch code {
    case 0x01 where command.count == 7:
      self = PairingTranscript()
      request = command
      firstFrame = frame
    case 0x02 where command.count == 7: response = command
    case 0x03 where body.count == 16: confirm[direction] = body
    case 0x04 where body.count == 16:
      random[direction] = body
      lastFrame = frame
    case 0x06 where body.count == 16: return body.reversed()
    default: break
    }
    return nil
  }

  /// Whether both Pairing Randoms were sniffed (what s1 needs): with the confirms missing, a TK
  /// can still be checked by the MIC of the link's first encrypted packet.
  var hasRandoms: Bool { random.hostToController != nil && random.controllerToHost != nil }
  /// Whether the MIC of the first encrypted packet was used to check TKs already.
  var triedMIC = false

  /// The TK and the STK (most significant octet first) when a TK of `passkeys` makes the
  /// central's confirm come out; nil otherwise. `central`, `peripheral`: the addresses and
  /// whether each is random (c1's ia, iat, ra, rat).
  func shortTermKey(central: (BDAddr, random: Bool), peripheral: (BDAddr, random: Bool), passkeys: some Sequence<UInt32>) -> (tk: UInt32, stk: AES128.Block)? {
    guard let found = shortTermKey(central: central, peripheral: peripheral, candidates: passkeys.lazy.map(TemporaryKey.passkey)) else { return nil }
    return (found.tk.passkey ?? 0, found.stk)
  }

  /// The TK and the STK when a TK of `candidates` makes the central's confirm come out.
  func shortTermKey(
    central: (BDAddr, random: Bool), peripheral: (BDAddr, random: Bool), candidates: some Sequence<TemporaryKey>
  ) -> (tk: TemporaryKey, stk: AES128.Block)? {
    guard isWhole, let request, let response, let centralConfirm = confirm.hostToController, let centralRandom = random.hostToController,
      let peripheralRandom = random.controllerToHost
    else { return nil }
    let r = Self.block(reversing: centralRandom)
    let p1 = Self.block(reversing: [central.random ? 1 : 0, peripheral.random ? 1 : 0] + request + response)
    let p2 = Self.block(reversing: Self.bytes(of: peripheral.0) + Self.bytes(of: central.0) + [0, 0, 0, 0])
    let expected = Self.block(reversing: centralConfirm)
    for tk in candidates {
      let aes = AES128(key: tk.block)
      if Self.c1(aes, r: r, p1: p1, p2: p2) == expected {
        return (tk, Self.s1(aes, r1: Self.block(reversing: peripheralRandom), r2: r))
      }
    }
    return nil
  }

  /// The STK s1(TK, Srand, Mrand) of a candidate TK, from the sniffed randoms (nil without them).
  func shortTermKey(_ tk: TemporaryKey) -> AES128.Block? {
    guard let centralRandom = random.hostToController, let peripheralRandom = random.controllerToHost else { return nil }
    return Self.s1(AES128(key: tk.block), r1: Self.block(reversing: peripheralRandom), r2: Self.block(reversing: centralRandom))
  }

  /// c1 (Core Vol 3 Part H §2.2.3): e(k, e(k, r ⊕ p1) ⊕ p2).
  static func c1(_ aes: AES128, r: AES128.Block, p1: AES128.Block, p2: AES128.Block) -> AES128.Block {
    aes.encrypt(aes.encrypt(r ^ p1) ^ p2)
  }

  /// s1 (§2.2.4): e(k, r1' ∥ r2'), each the least significant 64 bits of r1 and r2.
  static func s1(_ aes: AES128, r1: AES128.Block, r2: AES128.Block) -> AES128.Block {
    var r = AES128.Block()
    for i in 0..<8 {
      r[i] = r1[8 + i]
      r[8 + i] = r2[8 + i]
    }
    return aes.encrypt(r)
  }

  /// A TK: the passkey as a 128-bit number (Just Works: 0).
  static func temporaryKey(_ passkey: UInt32) -> AES128.Block {
    var key = AES128.Block()
    for i in 0..<4 { key[15 - i] = UInt8(truncatingIfNeeded: passkey >> UInt32(8 * i)) }
    return key
  }

  /// An address as it travels: least significant octet first.
  static func bytes(of address: BDAddr) -> [UInt8] {
    (0..<6).map { UInt8(truncatingIfNeeded: address.rawValue >> UInt64(8 * $0)) }
  }

  /// 16 octets sent least significant first, as a block (most significant first).
  static func block(reversing bytes: [UInt8]) -> AES128.Block {
    var block = AES128.Block()
    for (index, byte) in bytes.reversed().enumerated() where index < 16 { block[index] = byte }
    return block
  }
}

/// A TK to try on a sniffed LE legacy pairing (Core Vol 3 Part H §2.3.5): a passkey as a
/// 128-bit number (0 for Just Works), or 16 octets known beforehand (out of band, `--tk`).
package struct TemporaryKey: Sendable {
  package var block: AES128.Block
  /// The passkey it is, when it is one.
  package var passkey: UInt32?

  package static func passkey(_ passkey: UInt32) -> TemporaryKey {
    TemporaryKey(block: PairingTranscript.temporaryKey(passkey), passkey: passkey)
  }

  /// How a reader knows it: "TK 0, as Just Works uses", "passkey 000123", "the TK given
  /// (00112233…)".
  package var words: String {
    guard let passkey else { return "the TK given, " + Hex.string((0..<16).map { block[$0] }).uppercased() }
    if passkey == 0 { return "TK 0, as Just Works uses" }
    let digits = String(passkey)
    return "passkey " + String(repeating: "0", count: max(0, 6 - digits.count)) + digits
  }
}
