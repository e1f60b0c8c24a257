import BLECore

/// Long-term keys known before a sniffed capture is read (`--ltk`, a keys file, an HCI capture
/// of the same session), to decrypt its encrypted links. Each key says where it came from, and
/// every packet decrypted with it names that source.
///
/// A key need not say which link it is for: the first encrypted packet of a link (its
/// LL_START_ENC_RSP) tells, since only the right key makes its MIC verify. Keys for the link's
/// devices, or for the Rand and EDIV its LL_ENC_REQ names, are tried first. Bounded: at most
/// `maximumKeys` keys.
public struct LinkKeyRing: Sendable {
  public struct Key: Sendable, Equatable {
    /// The LTK, most significant octet first (as the specification and crackle write it; HCI
    /// carries it least significant first).
    public var key: [UInt8]
    /// The device the key belongs to (either end of the link), when known.
    public var address: BDAddr?
    /// Rand and EDIV as the key's LL_ENC_REQ carries them (an HCI capture gives them).
    public var random: UInt64?
    public var ediv: UInt16?
    /// Where the key came from, as a reader should see it: "--ltk", "keys.txt line 3",
    /// "phone.btsnoop frame 212".
    public var source: String

    public init(key: [UInt8], address: BDAddr? = nil, random: UInt64? = nil, ediv: UInt16? = nil, source: String) {
      self.key = key
      self.address = address
      self.random = random
      self.ediv = ediv
      self.source = source
    }

    /// The key as hex, most significant octet first.
    public var hex: String { Hex.string(key).uppercased() }
  }

  package static let maximumKeys = 4096
  public private(set) var keys: [Key] = []
  /// Passkeys known for sniffed legacy pairings (`--passkey`), tried as their TK with 0.
  package var passkeys: [UInt32] = []
  /// Whether every passkey is tried on a sniffed legacy pairing whose TK is not known
  /// (`--find-passkey`: a million tries, about 1.5 s a link).
  package var searchesPasskeys = false
  package static let maximumPasskeys = 64
  /// TKs of 16 octets known for sniffed legacy pairings (`--tk`: out-of-band data), most
  /// significant octet first.
  package var temporaryKeys: [[UInt8]] = []

  /// The TKs tried on every sniffed legacy pairing: 0 (Just Works), then the passkeys and TKs given.
  package var knownTemporaryKeys: [TemporaryKey] {
    [TemporaryKey.passkey(0)] + passkeys.map(TemporaryKey.passkey)
      + temporaryKeys.compactMap { AES128.block($0).map { TemporaryKey(block: $0, passkey: nil) } }
  }

  /// "HEX" (`--tk`): 32 hex digits, most significant first, as `--ltk` takes a key.
  package static func parseTemporaryKey(_ text: String) -> [UInt8]? { parseKey(text) }

  public init() {}

  public var isEmpty: Bool { keys.isEmpty }

  /// Adds `key` unless the same key for the same device is there; false when the ring is full.
  @discardableResult public mutating func add(_ key: Key) -> Bool {
    guard key.key.count == 16 else { return false }
    if keys.contains(where: { $0.key == key.key && $0.address == key.address && $0.random == key.random && $0.ediv == key.ediv }) { return true }
    guard keys.count < Self.maximumKeys else { return false }
    keys.append(key)
    return true
  }

  /// "HEX" or "HEX@ADDRESS" (`--ltk`): 32 hex digits, most significant first, with or without
  /// 0x and colons or spaces between octets.
  public static func parse(_ text: String, source: String) -> Key? {
    let parts = text.split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
    guard let first = parts.first, let key = parseKey(first) else { return nil }
    var address: BDAddr?
    if parts.count == 2 {
      guard let parsed = BDAddr(parts[1].trimmingWhitespace) else { return nil }
      address = parsed
    }
    return Key(key: key, address: address, source: source)
  }

  static func parseKey(_ text: String) -> [UInt8]? {
    var digits = Substring(text.trimmingWhitespace)
    if digits.hasPrefix("0x") || digits.hasPrefix("0X") { digits = digits.dropFirst(2) }
    let hex = digits.filter { $0 != ":" && $0 != " " && $0 != "-" }
    guard hex.count == 32 else { return nil }
    var key: [UInt8] = []
    var index = hex.startIndex
    while index < hex.endIndex {
      let next = hex.index(index, offsetBy: 2)
      guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
      key.append(byte)
      index = next
    }
    return key
  }

  /// A keys file: one key a line as `--ltk` takes it (HEX or HEX@ADDRESS), or HEX then the
  /// address after a space; blank lines and lines from `#` on are skipped. A line that is
  /// neither is an error naming it.
  package static func parseFile(_ text: String, name: String) -> Result<[Key], KeyFileError> {
    var keys: [Key] = []
    // Lines end in LF or CR LF ("\r\n" is one Character, a newline too).
    for (index, rawLine) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
      let line = rawLine.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init)?.trimmingWhitespace ?? ""
      if line.isEmpty { continue }
      let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
      let text = words.count == 2 && !words[0].contains("@") ? words[0] + "@" + words[1] : line
      guard let key = parse(text, source: "\(name) line \(index + 1)") else {
        // The line as it was, but one line of printable text (a hostile file holds anything).
        let shown = String(String.UnicodeScalarView(line.unicodeScalars.prefix(80).map { $0.value < 0x20 || $0.value == 0x7F ? "?" : $0 }))
        return .failure(KeyFileError(message: "\(name) line \(index + 1): not a key (32 hex digits, optionally @address): '\(shown)'"))
      }
      keys.append(key)
      if keys.count > maximumKeys {
        return .failure(KeyFileError(message: "\(name): more than \(maximumKeys) keys"))
      }
    }
    return .success(keys)
  }

  package struct KeyFileError: Error, Sendable {
    package var message: String
  }

  /// The keys to try on a link, best first: those for its Rand and EDIV, then those for either
  /// of its devices, then those for no device in particular. A key for another device is not
  /// tried.
  func candidates(central: BDAddr?, peripheral: BDAddr?, random: UInt64, ediv: UInt16) -> [Key] {
    func rank(_ key: Key) -> Int? {
      if let address = key.address, address != central, address != peripheral { return nil }
      if let keyRandom = key.random, let keyEDIV = key.ediv {
        // A key an HCI capture tied to a Rand and EDIV fits only an LL_ENC_REQ naming them.
        return keyRandom == random && keyEDIV == ediv ? 0 : nil
      }
      return key.address == nil ? 2 : 1
    }
    // By rank, then in the order given.
    return keys.enumerated().compactMap { index, key in rank(key).map { (key, $0, index) } }
      .sorted { ($0.1, $0.2) < ($1.1, $1.2) }.map(\.0)
  }
}

extension String {
  fileprivate var trimmingWhitespace: String {
    var text = Substring(self)
    while let first = text.first, first.isWhitespace { text = text.dropFirst() }
    while let last = text.last, last.isWhitespace { text = text.dropLast() }
    return String(text)
  }
}

/// Gathers the long-term keys an HCI capture shows (`--keys-from`), each tied to its
/// connection's peer and named by the capture's frame:
/// - LE Enable Encryption (Core Vol 4 Part E §7.8.24): the central's host gives the key with
///   the Rand and EDIV the controller will send in LL_ENC_REQ;
/// - LE Long Term Key Request Reply (§7.8.25): the peripheral's host answers the request
///   event (§7.7.65.5) that named Rand and EDIV.
/// Per-handle state is bounded by the 12-bit handle space, per controller seen.
package struct HCIKeyHarvest: Sendable {
  package private(set) var ring = LinkKeyRing()
  /// Whether keys were left out because the ring was full.
  package private(set) var overflowed = false
  private var peers: [UInt32: BDAddr] = [:]
  private var requests: [UInt32: (random: UInt64, ediv: UInt16)] = [:]
  /// Controllers whose handles are tracked; past this, records of others are skipped.
  static let maximumAdapters = 16
  private var adapters: Set<UInt16> = []

  package init() {}

  /// The keys of a whole source (`--keys-from`); on damage, the frame it came after and why.
  package static func keys(of source: some RecordSource, capture: String) -> (ring: LinkKeyRing, damage: (frame: Int, failure: SourceFailure)?) {
    var harvest = HCIKeyHarvest()
    var record = CaptureRecord(timestamp: 0, direction: nil, kind: .command, bytes: [])
    var number = 0
    do throws(SourceFailure) {
      while try source.nextRecord(into: &record) {
        number += 1
        harvest.take(record, number: number, capture: capture)
      }
    } catch {
      return (harvest.ring, (number, error))
    }
    return (harvest.ring, nil)
  }

  package mutating func take(_ record: CaptureRecord, number: Int, capture: String) {
    guard adapters.contains(record.adapter) || adapters.count < Self.maximumAdapters else { return }
    adapters.insert(record.adapter)
    // Anything short or odd is skipped: the annotating pass reports malformed packets.
    let slotBase = UInt32(record.adapter) << 16
    try? ByteReader.reading(record.bytes, layer: .hci) { (reader: inout ByteReader) throws(DecodeError) in
      try read(&reader, kind: record.kind, slotBase: slotBase, number: number, capture: capture)
    }
  }

  private mutating func read(_ reader: inout ByteReader, kind: PacketKind, slotBase: UInt32, number: Int, capture: String) throws(DecodeError) {
    switch kind {
    case .command:
      let opcode = try reader.readUInt16LE()
      _ = try reader.readUInt8()
      guard opcode == 0x2019 || opcode == 0x201A else { return }
      let handle = try reader.readUInt16LE() & 0x0FFF
      let slot = slotBase | UInt32(handle)
      var random: UInt64?
      var ediv: UInt16?
      if opcode == 0x2019 {
        random = try reader.readUInt64LE()
        ediv = try reader.readUInt16LE()
      } else if let request = requests[slot] {
        (random, ediv) = (request.random, request.ediv)
      }
      let key = Array(try reader.readBytes(count: 16).reversed())
      let name = opcode == 0x2019 ? "LE Enable Encryption" : "LE Long Term Key Request Reply"
      if !ring.add(LinkKeyRing.Key(key: key, address: peers[slot], random: random, ediv: ediv, source: "\(capture) frame \(number) (\(name))")) {
        overflowed = true
      }
    case .event:
      guard try reader.readUInt8() == 0x3E else { return }
      _ = try reader.readUInt8()
      let subevent = try reader.readUInt8()
      switch subevent {
      case 0x01, 0x0A, 0x29:  // (Enhanced) Connection Complete
        guard try reader.readUInt8() == 0 else { return }
        let slot = slotBase | UInt32(try reader.readUInt16LE() & 0x0FFF)
        _ = try reader.readUInt8()  // role
        _ = try reader.readUInt8()  // peer address type
        peers[slot] = try reader.readBDAddr()
        requests[slot] = nil
      case 0x05:  // Long Term Key Request
        let slot = slotBase | UInt32(try reader.readUInt16LE() & 0x0FFF)
        requests[slot] = (try reader.readUInt64LE(), try reader.readUInt16LE())
      default:
        return
      }
    default:
      return
    }
  }
}
