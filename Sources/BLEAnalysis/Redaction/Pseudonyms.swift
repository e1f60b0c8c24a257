import BLECore

/// How an address found in a capture is to be read, for its pseudonym.
enum AddressKind: Sendable, Equatable {
  /// A public (IEEE) address: the pseudonym is public too, under the documentation OUI.
  case publicAddress
  /// A random address: the pseudonym keeps its two top bits (11 static, 01 resolvable private,
  /// 00 non-resolvable private).
  case random
  /// The capture does not say: read by its value (a random address's sub-type bits are kept).
  case unknown

  /// From an HCI address type (0 public, 1 random, 2 public identity, 3 random identity).
  init(hciType: UInt8) {
    switch hciType {
    case 0, 2: self = .publicAddress
    case 1, 3: self = .random
    default: self = .unknown
    }
  }

  /// From a link-layer TxAdd/RxAdd bit.
  init(randomBit: Bool) { self = randomBit ? .random : .publicAddress }
}

/// The replacements of one redaction, the same for the same original wherever it occurs:
/// address pseudonyms, name placeholders, key bytes. Replacements come from a fixed-seed
/// generator, never from the original, so nothing of the original can be worked back from
/// them, and the same capture redacts to the same bytes.
struct Pseudonyms: Sendable {
  /// Original address (48 bits) → pseudonym.
  private(set) var addresses: [UInt64: UInt64] = [:]
  /// Pseudonyms given, so no two originals share one.
  private var given: Set<UInt64> = []
  private var publicCount: UInt64 = 0
  /// Original bytes (a key, a pairing value, a passkey) → replacement.
  private var byteValues: [[UInt8]: [UInt8]] = [:]
  /// Original name bytes → placeholder number, per label.
  private var names: [[UInt8]: (label: String, number: Int)] = [:]
  private var nameCounts: [String: Int] = [:]
  private var random = SplitMix(seed: 0x6C65_6469_7373_6563)

  /// Tables past this many entries make fresh replacements without remembering them (a
  /// capture full of distinct advertisers must not grow memory without bound).
  static let maximumEntries = 1 << 16
  /// Names looked through for one a shortened name begins (a scan per new name).
  static let prefixSearchLimit = 1024

  /// The documentation OUI range of RFC 7042 §2.1.2 (00-00-5E-00-53-00 to -FF), counted on
  /// past it: every public pseudonym is plainly not a real device's.
  static let publicBase: UInt64 = 0x0000_5E00_5300

  /// Whether an address is a placeholder rather than a device's (all zeros, all ones: "none",
  /// "any"), left as it is.
  static func isPlaceholder(_ raw: UInt64) -> Bool { raw == 0 || raw == 0xFFFF_FFFF_FFFF }

  mutating func pseudonym(for original: UInt64, kind: AddressKind) -> UInt64 {
    if let known = addresses[original] { return known }
    var fresh: UInt64
    repeat {
      switch kind {
      case .publicAddress:
        fresh = Self.publicBase &+ publicCount
        publicCount &+= 1
      case .random, .unknown:
        // The sub-type bits kept; the rest random, never all zeros or all ones (Core Vol 6
        // Part B §1.3.2).
        let top = original & 0xC000_0000_0000
        var rest = random.next() & 0x3FFF_FFFF_FFFF
        if rest == 0 || rest == 0x3FFF_FFFF_FFFF { rest = 0x1234_5678_9ABC }
        fresh = top | rest
      }
    } while given.contains(fresh) || fresh == original
    if addresses.count < Self.maximumEntries {
      addresses[original] = fresh
      given.insert(fresh)
    }
    return fresh
  }

  /// Replacement bytes for a key or pairing value of the same length (consistent per original).
  mutating func replacement(for original: [UInt8]) -> [UInt8] {
    if let known = byteValues[original] { return known }
    var fresh = [UInt8](repeating: 0, count: original.count)
    repeat {
      var word: UInt64 = 0
      for index in fresh.indices {
        if index % 8 == 0 { word = random.next() }
        fresh[index] = UInt8(truncatingIfNeeded: word >> (8 * UInt64(index % 8)))
      }
    } while fresh == original && !fresh.isEmpty
    remember(original, fresh)
    return fresh
  }

  /// A six-digit passkey or numeric comparison value (0…999999, little-endian 32 bits).
  mutating func passkey(for original: [UInt8]) -> [UInt8] {
    if let known = byteValues[original] { return known }
    var value: UInt32
    var fresh: [UInt8]
    repeat {
      value = UInt32(random.next() % 1_000_000)
      fresh = [UInt8(value & 0xFF), UInt8((value >> 8) & 0xFF), UInt8((value >> 16) & 0xFF), UInt8(value >> 24)]
    } while fresh == original
    remember(original, fresh)
    return fresh
  }

  /// Decimal digits for a PIN code, as long as the original.
  mutating func pin(for original: [UInt8]) -> [UInt8] {
    if let known = byteValues[original] { return known }
    var fresh: [UInt8]
    repeat {
      fresh = original.map { _ in UInt8(ascii: "0") + UInt8(random.next() % 10) }
    } while fresh == original && !fresh.isEmpty
    remember(original, fresh)
    return fresh
  }

  private mutating func remember(_ original: [UInt8], _ fresh: [UInt8]) {
    if byteValues.count < Self.maximumEntries { byteValues[original] = fresh }
  }

  /// A placeholder as long as `original` (bytes, UTF-8 or not): `<label><n>` then `x`s, cut
  /// to the length. The same original gets the same placeholder; a shortened name that
  /// begins a name seen before gets the beginning of that name's placeholder.
  mutating func placeholder(for original: [UInt8], label: String) -> [UInt8] {
    let entry: (label: String, number: Int)
    if let known = names[original] {
      entry = known
    } else if names.count <= Self.prefixSearchLimit,
      // The earliest such name's (a dictionary's order changes from run to run): the same
      // capture gives the same bytes.
      let longer = names.filter({ $0.key.count > original.count && $0.key.starts(with: original) }).values
        .min(by: { ($0.label, $0.number) < ($1.label, $1.number) })
    {
      entry = longer
      if names.count < Self.maximumEntries { names[original] = entry }
    } else {
      let number = nameCounts[label, default: 0] + 1
      nameCounts[label] = number
      entry = (label, number)
      if names.count < Self.maximumEntries { names[original] = entry }
    }
    let stem = Array("\(entry.label)\(entry.number)".utf8)
    var text = [UInt8](repeating: UInt8(ascii: "x"), count: original.count)
    for index in 0..<min(stem.count, text.count) { text[index] = stem[index] }
    return text
  }
}

/// SplitMix64: small, fast, and seeded, so a redaction replays.
struct SplitMix: Sendable {
  var state: UInt64
  init(seed: UInt64) { state = seed }
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}
