import BLECore

/// The link layer's state for records sniffed over the air: the links, by access address (each
/// link's connection, by the handle it is given, is in the connection table as an HCI one
/// is), and the keys that open their packets. SMP on a sniffed link notes its pairing here too.
struct AirLinkState: Sendable {
  var links = AirLinks()
  var keys: AirKeys
}

/// The keys for sniffed links: given beforehand, given away by the capture (LTKs distributed,
/// STKs of legacy pairings), and what they opened, for what a run says of the keys at its end.
struct AirKeys: Sendable {
  /// Long-term keys given beforehand (`--ltk`, `--keys`, `--keys-from`).
  let given: LinkKeyRing
  /// Keys the capture gave away: STKs worked out from sniffed legacy pairings, LTKs
  /// distributed on links it decrypted.
  var learned = LinkKeyRing()
  /// Passkey searches done (each up to a million c1 runs), and how many a capture may ask for.
  var passkeySearches = 0
  static let maximumPasskeySearches = 2
  /// Packets decrypted, by where their key came from (`LinkKeyRing.Key.source`; as many sources
  /// as keys, which are bounded).
  var decryptedBySource: [String: Int] = [:]
  /// The value of each key the capture gave away, by its source (hex, as `--ltk` takes it).
  var keyValues: [String: String] = [:]
  /// The TKs that fitted a sniffed legacy pairing (`TemporaryKey.words`), the legacy pairings
  /// whose TK was looked for, and the passkey searches that found none: what a run says of the
  /// passkeys and TKs it was given.
  var fittedTemporaryKeys: Set<String> = []
  var legacyPairingsTried = 0
  var failedSearches = 0
  /// The keys that opened a link's packets (bounded), to say which keys given opened none.
  var openedKeys: Set<[UInt8]> = []
  /// The devices of the links sniffed (bounded), to say a key bound to another fits none.
  var devices: Set<BDAddr> = []
  static let maximumDevices = 4096
  /// Key tries (a key at a packet counter) a capture may spend choosing its links' keys.
  static let maximumKeyTrials = 1 << 18
  var trialsLeft = maximumKeyTrials

  init(given: LinkKeyRing) {
    self.given = given
  }

  /// A key the capture gave away: kept for the link, said on the frame with its value in the
  /// byte order `--ltk` takes, and the TK that gave it noted (a TK given that fits nothing is
  /// said at the end).
  mutating func learn(_ key: LinkKeyRing.Key, tk: TemporaryKey?, into frame: inout DissectedFrame) {
    learned.add(key)
    if let tk { fittedTemporaryKeys.insert(tk.words) }
    keyValues[key.source] = key.hex
    frame.diagnostics.append(Diagnostic(.linkLayerKeyFound, "key: \(key.source): \(key.hex) (as --ltk takes it)"))
  }
}
