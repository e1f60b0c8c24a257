import BLECore

/// What a sniffed link's encryption start has shown (LL_ENC_REQ, LL_ENC_RSP), and once a key
/// opened its first encrypted packet, the cipher and each direction's packet counter.
///
/// Core Vol 6 Part E §2.2: each direction counts its encrypted packets from 0 (LL_START_ENC_RSP
/// is packet 0 both ways); a retransmission keeps its counter. A packet the sniffer missed
/// shows as a jump: the next packet opens only with a later counter, so a few are tried.
struct LinkEncryption: Sendable {
  var request: (random: UInt64, ediv: UInt16, skd: UInt64, iv: UInt32)?
  var response: (skd: UInt64, iv: UInt32)?
  var cipher: LinkCipher?
  /// Where the key came from (`LinkKeyRing.Key.source`), and the key.
  var keySource = ""
  var key: [UInt8] = []
  /// The counter the next new packet of each direction should carry.
  var counters = DirectionalPair<UInt64>(0)
  /// Whether every key was tried on the link's first encrypted packet and none opened it.
  var noKeyFits = false
  var saidNoKeyFits = false

  /// Packets one direction may have lost before the one being opened.
  static let missedPacketWindow: UInt64 = 16

  /// LL_ENC_REQ starts a new session (also after a pause): what was known goes.
  mutating func requested(random: UInt64, ediv: UInt16, skd: UInt64, iv: UInt32) {
    self = LinkEncryption()
    request = (random, ediv, skd, iv)
  }

  enum Opening {
    /// The plain text; `missed`: packets of that direction the sniffer lost before it.
    /// `flipped`: the MIC verified only as sent by the other side (the sniffer's direction
    /// flag was wrong, as seen on real sniffers).
    case opened([UInt8], counter: UInt64, missed: UInt64, keySource: String, flipped: Bool)
    case sealed(Reason)
  }

  enum Reason: Equatable {
    /// No key was given.
    case noKeys
    /// LL_ENC_REQ or LL_ENC_RSP was not seen: the session key cannot be worked out.
    case noKeyExchange
    /// No key given opens this link's packets.
    case noKeyFits
    /// The capture used up the key tries it may spend (`AirKeys.maximumKeyTrials`).
    case noTrialsLeft
    /// The key opened earlier packets, but not this one: damaged, or more packets lost than
    /// `missedPacketWindow`.
    case micFailed
  }

  /// Opens a packet (`header`: the PDU header's first octet; `sealed`: payload then MIC),
  /// choosing the key on the link's first encrypted packet from `candidates`.
  /// `trials`: the (key, counter) tries the capture may still spend choosing keys, so that a
  /// hostile one with many links and a large key file stays bounded; each costs a few AES runs.
  mutating func open(header: UInt8, sealed: ByteView, direction: Direction, trials: inout Int, candidates: () -> [LinkKeyRing.Key]) -> Opening {
    // The sniffer's direction first; then the other: a wrong flag would hide the packet
    // (crackle tries both too). The nonce's direction bit makes only the true one verify.
    let first = openOnce(header: header, sealed: sealed, direction: direction, trials: &trials, candidates: candidates)
    guard case .sealed(let reason) = first, reason == .micFailed || (reason == .noKeyFits && cipher == nil && !triedFlipped) else { return first }
    if cipher == nil {
      // Choosing the key: every key again with the other direction, once a link.
      triedFlipped = true
      noKeyFits = false
    }
    let second = openOnce(header: header, sealed: sealed, direction: direction.opposite, trials: &trials, candidates: candidates)
    guard case let .opened(plain, counter, missed, source, _) = second else { return first }
    return .opened(plain, counter: counter, missed: missed, keySource: source, flipped: true)
  }

  /// Whether the keys were tried with the other direction on the first packet.
  var triedFlipped = false

  private mutating func openOnce(header: UInt8, sealed: ByteView, direction: Direction, trials: inout Int, candidates: () -> [LinkKeyRing.Key]) -> Opening {
    let fromCentral = direction == .hostToController
    if cipher == nil {
      if noKeyFits { return .sealed(.noKeyFits) }
      guard let request, let response else { return .sealed(.noKeyExchange) }
      let keys = candidates()
      if keys.isEmpty { return .sealed(.noKeys) }
      for key in keys {
        guard let longTermKey = AES128.block(key.key) else { continue }
        guard trials > 0 else {
          noKeyFits = true
          return .sealed(.noTrialsLeft)
        }
        trials = trials.saturatingSubtract(Int(Self.missedPacketWindow) + 1)
        let trial = LinkCipher(longTermKey: longTermKey, skdCentral: request.skd, skdPeripheral: response.skd, ivCentral: request.iv, ivPeripheral: response.iv)
        if let opening = Self.open(trial, header: header, sealed: sealed, from: counters[direction], fromCentral: fromCentral) {
          cipher = trial
          keySource = key.source
          self.key = key.key
          let missed = opening.counter - counters[direction]
          counters[direction] = opening.counter.saturatingAdd(1)
          return .opened(opening.plain, counter: opening.counter, missed: missed, keySource: key.source, flipped: false)
        }
      }
      noKeyFits = true
      return .sealed(.noKeyFits)
    }
    guard let cipher, let opening = Self.open(cipher, header: header, sealed: sealed, from: counters[direction], fromCentral: fromCentral) else {
      return .sealed(.micFailed)
    }
    let missed = opening.counter - counters[direction]
    counters[direction] = opening.counter.saturatingAdd(1)
    return .opened(opening.plain, counter: opening.counter, missed: missed, keySource: keySource, flipped: false)
  }

  /// Tries counters `first` up to `missedPacketWindow` further; the first whose MIC verifies.
  private static func open(_ cipher: LinkCipher, header: UInt8, sealed: ByteView, from first: UInt64, fromCentral: Bool) -> (plain: [UInt8], counter: UInt64)? {
    let last = min(first.saturatingAdd(missedPacketWindow), LinkCipher.maximumCounter)
    guard first <= last else { return nil }
    for counter in first...last {
      if let plain = cipher.open(header: header, sealed: sealed, counter: counter, fromCentral: fromCentral) { return (plain, counter) }
    }
    return nil
  }
}
