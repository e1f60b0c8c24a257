import BLECore

/// A replacement in the bytes being walked: where, and what goes there.
struct RedactionEdit: Sendable, Equatable {
  var offset: Int
  var bytes: [UInt8]
}

/// The labels of the placeholders that replace names and user strings.
enum NameLabel {
  static let device = "Device"
  static let manufacturer = "Maker"
  static let model = "Model"
  static let serial = "Serial"
  static let firmware = "FW"
  static let hardware = "HW"
  static let software = "SW"
  static let user = "User"
}

/// What a walk over one buffer (an HCI packet's parameters, an L2CAP PDU, an air PDU) needs:
/// the kinds asked for, the replacements so far (consistent across the capture), the tally,
/// and the edits this buffer collects. The walkers read structure with a bounds-checked
/// `ByteReader` and call these where a protocol puts an address, a name or a key; each reads
/// the original there and records its replacement at the same offset.
struct RedactionScope: Sendable {
  let kinds: RedactionKinds
  var pseudonyms = Pseudonyms()
  var tally = RedactionTally()
  var originals = OriginalBytes()
  /// Whether the originals replaced are kept for the safety net: not from a frame the decoder
  /// found malformed (an "address" read from a report that lacks one would be found again in
  /// every record carrying the same bytes, where they are no address).
  var notesOriginals = true
  /// Where the bytes of the buffer being walked end (past it, padding): an original read
  /// partly from padding is no original.
  var limit = Int.max
  /// The edits of the buffer being walked (offsets as the walk's reader gives them).
  var edits: [RedactionEdit] = []

  init(kinds: RedactionKinds) {
    self.kinds = kinds
    tally.kinds = kinds
  }

  /// An address at the reader's place (6 bytes, little-endian as HCI and the link layer carry it).
  mutating func address(_ reader: inout ByteReader, _ kind: AddressKind) throws(DecodeError) {
    let offset = reader.offset
    let original = try reader.readBDAddr().rawValue
    guard kinds.contains(.addresses), !Pseudonyms.isPlaceholder(original) else { return }
    let before = pseudonyms.addresses.count
    let fresh = pseudonyms.pseudonym(for: original, kind: kind)
    if pseudonyms.addresses.count > before { tally.distinctAddresses += 1 }
    if notesOriginals && reader.offset <= limit { originals.note(address: original) }
    edits.append(RedactionEdit(offset: offset, bytes: Self.littleEndian(fresh)))
    tally.addresses += 1
  }

  /// An HCI address type (1 byte) then the address.
  mutating func typedAddress(_ reader: inout ByteReader) throws(DecodeError) {
    let type = try reader.readUInt8()
    // 0xFF: anonymous advertisers (no address).
    if type == 0xFF {
      try reader.skip(6)
      return
    }
    try address(&reader, AddressKind(hciType: type))
  }

  /// Several addresses of one kind in a row (an AD structure's target addresses).
  mutating func addresses(_ reader: inout ByteReader, _ kind: AddressKind) throws(DecodeError) {
    while reader.remaining >= 6 { try address(&reader, kind) }
    try reader.skip(reader.remaining)
  }

  /// A key or pairing value of `count` bytes. All zeros (no key: Secure Connections' EDIV and
  /// Rand, an unset value) stays.
  mutating func key(_ reader: inout ByteReader, count: Int) throws(DecodeError) {
    let offset = reader.offset
    let original = Array(try reader.readBytes(count: count))
    guard kinds.contains(.keys), original.contains(where: { $0 != 0 }) else { return }
    edits.append(RedactionEdit(offset: offset, bytes: pseudonyms.replacement(for: original)))
    if notesOriginals && reader.offset <= limit { originals.note(key: original) }
    tally.keys += 1
  }

  /// A six-digit value (passkey, numeric comparison) as 4 bytes.
  mutating func passkey(_ reader: inout ByteReader) throws(DecodeError) {
    let offset = reader.offset
    let original = Array(try reader.readBytes(count: 4))
    guard kinds.contains(.keys) else { return }
    edits.append(RedactionEdit(offset: offset, bytes: pseudonyms.passkey(for: original)))
    tally.keys += 1
  }

  /// A PIN code: `length` digits of a 16-byte field (what follows them stays).
  mutating func pin(_ reader: inout ByteReader, length: Int) throws(DecodeError) {
    let offset = reader.offset
    let field = Array(try reader.readBytes(count: 16))
    let used = Array(field.prefix(max(0, min(length, 16))))
    guard kinds.contains(.keys), !used.isEmpty else { return }
    edits.append(RedactionEdit(offset: offset, bytes: pseudonyms.pin(for: used)))
    if notesOriginals && reader.offset <= limit { originals.note(key: used) }
    tally.keys += 1
  }

  /// A name or user string of `count` bytes: up to its first NUL, replaced by a placeholder as
  /// long (what follows the NUL, padding, stays).
  mutating func name(_ reader: inout ByteReader, count: Int, label: String) throws(DecodeError) {
    let offset = reader.offset
    let field = try reader.readBytes(count: count)
    let end = field.firstIndex(of: 0) ?? field.endIndex
    let original = Array(field[field.startIndex..<end])
    guard kinds.contains(.names), !original.isEmpty else { return }
    edits.append(RedactionEdit(offset: offset, bytes: pseudonyms.placeholder(for: original, label: label)))
    if notesOriginals && reader.offset <= limit { originals.note(name: original) }
    tally.names += 1
  }

  /// The rest of the reader as a name.
  mutating func nameToEnd(_ reader: inout ByteReader, label: String) throws(DecodeError) {
    try name(&reader, count: reader.remaining, label: label)
  }

  /// Opaque bytes that identify a device (System ID): replaced as a key would be, counted as a name.
  mutating func identifier(_ reader: inout ByteReader, count: Int) throws(DecodeError) {
    let offset = reader.offset
    let original = Array(try reader.readBytes(count: count))
    guard kinds.contains(.names), original.contains(where: { $0 != 0 }) else { return }
    edits.append(RedactionEdit(offset: offset, bytes: pseudonyms.replacement(for: original)))
    if notesOriginals && reader.offset <= limit { originals.note(key: original) }
    tally.names += 1
  }

  /// A health value written at the reader's place (the original's bytes read past).
  mutating func value(_ reader: inout ByteReader, _ replacement: [UInt8]) throws(DecodeError) {
    let offset = reader.offset
    let original = Array(try reader.readBytes(count: replacement.count))
    guard kinds.contains(.values) else { return }
    if original != replacement { edits.append(RedactionEdit(offset: offset, bytes: replacement)) }
    tally.values += 1
  }

  static func littleEndian(_ address: UInt64) -> [UInt8] {
    (0..<6).map { UInt8(truncatingIfNeeded: address >> (8 * UInt64($0))) }
  }

  /// What a walk starts at.
  enum Walk: Sendable {
    /// An HCI command or event from its opcode or event code.
    case command, event
    /// A Linux monitor record of this kind.
    case monitor(PacketKind)
    /// An L2CAP PDU from its basic header.
    case l2cap(attChannel: UInt16?, meanings: AttributeMeanings)
    /// An air packet's PDU from its header: advertising, or a data payload's LL control PDU.
    case advertisingPDU, linkControl
  }

  /// Walks `bytes` from offset 0 and returns the edits; a walk that runs out of bytes keeps
  /// the edits made before. `bytes` may be padded past what the record holds: edits past
  /// `limit` are cut off there.
  mutating func walk(_ bytes: [UInt8], limit: Int, _ what: Walk) -> [RedactionEdit] {
    edits.removeAll(keepingCapacity: true)
    self.limit = limit
    defer { self.limit = .max }
    ByteReader.reading(bytes, layer: .hci) { (reader: inout ByteReader) in
      do {
        switch what {
        case .command:
          let opcode = try reader.readUInt16LE()
          try reader.skip(1)
          try command(opcode: opcode, &reader)
        case .event:
          let code = try reader.readUInt8()
          try reader.skip(1)
          try event(code: code, &reader)
        case .monitor(let kind): try monitorRecord(kind: kind, &reader)
        case let .l2cap(channel, meanings): try l2capPDU(&reader, attChannel: channel, meanings: meanings)
        case .advertisingPDU: try advertisingPDU(&reader)
        case .linkControl: try linkControl(&reader)
        }
      } catch {}
    }
    var kept: [RedactionEdit] = []
    for edit in edits where edit.offset < limit {
      let count = min(edit.bytes.count, limit - edit.offset)
      kept.append(RedactionEdit(offset: edit.offset, bytes: Array(edit.bytes.prefix(count))))
    }
    edits.removeAll(keepingCapacity: true)
    return kept
  }
}

/// The originals replaced so far, as byte strings to look for in what is written (the safety
/// net): addresses in both byte orders, names and keys of 6 bytes or more. Indexed by their
/// first four bytes, so a record is searched in one pass whatever the number of originals.
struct OriginalBytes: Sendable {
  private var byPrefix: [UInt32: [Int]] = [:]
  private(set) var needles: [(bytes: [UInt8], kind: String)] = []
  private var known: Set<[UInt8]> = []
  static let maximumNeedles = 1 << 16

  mutating func note(address: UInt64) {
    let little = RedactionScope.littleEndian(address)
    add(little, "address")
    add(little.reversed(), "address")
  }

  mutating func note(name: [UInt8]) {
    if name.count >= 6 { add(name, "name") }
  }

  mutating func note(key: [UInt8]) {
    // A value of few distinct bytes (a pattern, a test key of ones) would be found everywhere.
    if key.count >= 6, Set(key).count >= 3 { add(key, "key") }
  }

  private mutating func add(_ bytes: [UInt8], _ kind: String) {
    guard needles.count < Self.maximumNeedles, !known.contains(bytes) else { return }
    known.insert(bytes)
    byPrefix[Self.prefix(bytes, 0), default: []].append(needles.count)
    needles.append((bytes, kind))
  }

  static func prefix(_ bytes: [UInt8], _ at: Int) -> UInt32 {
    UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
  }

  /// The kinds of the originals found in `bytes` from `start` (empty: none).
  func find(in bytes: [UInt8], from start: Int = 0) -> Set<String> {
    var found: Set<String> = []
    guard !byPrefix.isEmpty, bytes.count >= start + 6 else { return found }
    for at in start...(bytes.count - 6) {
      guard let candidates = byPrefix[Self.prefix(bytes, at)] else { continue }
      for index in candidates {
        let needle = needles[index].bytes
        if bytes.count - at >= needle.count, bytes[at..<(at + needle.count)].elementsEqual(needle) { found.insert(needles[index].kind) }
      }
    }
    return found
  }
}
