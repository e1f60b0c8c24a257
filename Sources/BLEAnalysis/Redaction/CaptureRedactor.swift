import BLECore
import BLEDecoder

/// Rewrites a capture's records so it can be shared: addresses, names, keys (and, asked for,
/// health values) replaced where the protocols put them, everything else as it was, so the
/// result decodes to the same frames.
///
/// Fed the decoded frames in order (`redact`), it walks each record's structure itself with
/// `ByteReader` (HCI parameters by opcode and event code, advertising data, L2CAP PDUs
/// reassembled as the decoder reassembles them, SMP, ATT, link-layer PDUs) and takes from the
/// decoder what the bytes do not say: which characteristic a handle is (a Device Name, a
/// serial number), which way a packet went, whether a sniffed packet is encrypted or a
/// retransmission. A record that a PDU still being reassembled spans is held until the PDU is
/// complete, then handed out (`takeReady`) in order, with its CRC brought up to date for an
/// air packet.
///
/// A piece of a PDU whose start is not in the capture cannot be parsed and is left out
/// (counted: `tally.dropped`); encrypted air payloads are written as they are
/// (`tally.encryptedLeft`). As a last check, each record handed out is searched for the bytes
/// of the originals replaced so far (`tally.leftoverRecords`): reported, never replaced.
package struct CaptureRedactor: Sendable {
  package let kinds: RedactionKinds
  var scope: RedactionScope
  /// Records not handed out yet, oldest first; `queue[i]` is record `firstID + i`.
  var queue: [Held] = []
  var firstID = 0
  var ready: [CaptureRecord] = []
  var assemblies: [AssemblyKey: Assembly] = [:]
  /// Per side of a sniffed link: its last data packet (for retransmissions).
  var lastAirData: [AssemblyKey: LastAirData] = [:]
  /// Per sniffed link (access address): its last data payloads as captured and as written.
  var recentAirData: [UInt32: [(original: [UInt8], written: [UInt8])]] = [:]
  static let recentPackets = 8
  /// Records handed out so far (output frame numbers for the report).
  var written = 0

  /// PDUs being reassembled at once; past it the oldest is redacted as far as it goes.
  static let maximumAssemblies = 1024
  /// Records, and bytes in them, held back at most; past either, the PDU holding the oldest is
  /// redacted as far as it goes.
  static let maximumHeld = 1 << 15
  static let maximumHeldBytes = 16 << 20
  var heldBytes = 0
  /// Frames named in the report of leftovers.
  static let reportedLeftovers = 8

  package init(kinds: RedactionKinds) {
    self.kinds = kinds
    scope = RedactionScope(kinds: kinds)
  }

  package var tally: RedactionTally { scope.tally }

  struct Held: Sendable {
    var record: CaptureRecord
    /// The PDU being reassembled that this record holds a piece of.
    var waitingOn: AssemblyKey?
    var drop = false
    /// An air packet: where its PDU (header and payload) lies, and the PDU as captured.
    var airPDU: Range<Int>?
    var originalPDU: [UInt8] = []
    /// An air data packet's side, and its payload's place (retransmissions copy it).
    var airSide: AssemblyKey?
    var airPayload: Range<Int>?
  }

  /// A link's direction: an HCI connection (controller, handle) or a sniffed link (access address).
  struct AssemblyKey: Hashable, Sendable {
    var link: UInt64
    var fromHost: Bool
  }

  struct Piece: Sendable {
    var record: Int
    var at: Int
    var pduOffset: Int
    var count: Int
  }

  struct Assembly: Sendable {
    var bytes: [UInt8] = []
    /// The PDU's length with its header (nil until the header is in).
    var expected: Int?
    var pieces: [Piece] = []
    var opened: Int
  }

  struct LastAirData: Sendable {
    var record: Int
    var payload: [UInt8]
    /// Where its piece went in the PDU being reassembled (nil: a whole PDU or a control PDU).
    var pduOffset: Int?
    /// Its payload as written (once handed out).
    var written: [UInt8]?
  }

  // MARK: Frames in

  /// Takes the next frame's record (in capture order) and redacts what it can now.
  package mutating func redact(_ frame: inout DissectedFrame) {
    let id = firstID + queue.count
    queue.append(Held(record: frame.record))
    heldBytes += frame.record.bytes.count
    scope.notesOriginals = frame.malformed == nil
    switch frame.record.kind {
    case .command: hciPacket(id, headerLength: 3, frame.record.bytes, .command)
    case .event: hciPacket(id, headerLength: 2, frame.record.bytes, .event)
    case .acl: acl(id, &frame)
    case .airPacket: air(id, &frame)
    case .indexAdded, .indexInfo:
      apply(id, at: 0, scope.walk(frame.record.bytes, limit: frame.record.bytes.count, .monitor(frame.record.kind)))
    default:
      break
    }
    release()
  }

  /// The records whose redaction is done, in order (each once).
  package mutating func takeReady() -> [CaptureRecord] {
    // Swapped out: returning `ready` and then emptying it copied its storage every frame.
    var taken: [CaptureRecord] = []
    swap(&taken, &ready)
    return taken
  }

  /// At the end: PDUs still incomplete are redacted as far as they go, and every record is ready.
  package mutating func finish() {
    for key in assemblies.sorted(by: { $0.value.opened < $1.value.opened }).map(\.key) {
      completeAlone(key)
    }
    release()
  }

  /// A command or event: the walk runs over the bytes padded to the longest parameters (255),
  /// so a packet cut short is redacted as far as it goes.
  mutating func hciPacket(_ id: Int, headerLength: Int, _ bytes: [UInt8], _ walk: RedactionScope.Walk) {
    let padded = bytes + [UInt8](repeating: 0, count: max(0, headerLength + 255 - bytes.count))
    apply(id, at: 0, scope.walk(padded, limit: bytes.count, walk))
  }

  /// Writes edits into held record `id`, its bytes from `at`.
  mutating func apply(_ id: Int, at: Int, _ edits: [RedactionEdit]) {
    guard !edits.isEmpty else { return }
    let index = id - firstID
    for edit in edits {
      for (offset, byte) in edit.bytes.enumerated() {
        let position = at + edit.offset + offset
        if position >= 0, position < queue[index].record.bytes.count { queue[index].record.bytes[position] = byte }
      }
    }
  }

  // MARK: HCI ACL data

  mutating func acl(_ id: Int, _ frame: inout DissectedFrame) {
    let bytes = frame.record.bytes
    guard bytes.count >= 4 else { return }
    let word = UInt16(bytes[0]) | UInt16(bytes[1]) << 8
    let handle = word & 0x0FFF
    let boundary = (word >> 12) & 0x03
    let declared = Int(UInt16(bytes[2]) | UInt16(bytes[3]) << 8)
    // Qualcomm's debug records ride on a handle no connection opened: not L2CAP.
    if case .vendorDebugRecord = frame.header { return }
    let direction = frame.direction ?? frame.record.direction ?? .hostToController
    let key = AssemblyKey(link: UInt64(frame.record.adapter) << 16 | UInt64(handle), fromHost: direction == .hostToController)
    // The ACL header's length bounds the payload, as the decoder reads it (bytes past it are
    // no part of the PDU).
    let payload = 4..<min(bytes.count, 4 + declared)
    if bytes.count - 4 < declared {
      // Cut short by the capture (Android's filtered logs): redacted as far as it goes, alone.
      if boundary != 1 {
        redactAlone(id, at: 4, Array(bytes[payload]), frame: &frame)
      } else if !payload.isEmpty {
        drop(id)
      }
      return
    }
    add(id, key: key, start: boundary != 1, at: 4, Array(bytes[payload]), frame: &frame)
  }

  /// Adds a piece to the PDU of `key` (a start opens a new one; the one still open is redacted
  /// as far as it goes), and completes the PDU when its length is in. Returns where the piece
  /// went in the PDU (nil: it went nowhere).
  @discardableResult
  mutating func add(_ id: Int, key: AssemblyKey, start: Bool, at: Int, _ piece: [UInt8], frame: inout DissectedFrame) -> Int? {
    if start {
      if assemblies[key] != nil { completeAlone(key) }
      if assemblies.count >= Self.maximumAssemblies, let oldest = assemblies.min(by: { $0.value.opened < $1.value.opened })?.key {
        completeAlone(oldest)
      }
    } else if assemblies[key] == nil {
      if !piece.isEmpty { drop(id) }
      return nil
    }
    guard !piece.isEmpty else { return nil }
    var assembly = assemblies.removeValue(forKey: key) ?? Assembly(opened: id)
    let pduOffset = assembly.bytes.count
    assembly.pieces.append(Piece(record: id, at: at, pduOffset: pduOffset, count: piece.count))
    assembly.bytes += piece
    queue[id - firstID].waitingOn = key
    if assembly.expected == nil, assembly.bytes.count >= 2 {
      assembly.expected = 4 + Int(UInt16(assembly.bytes[0]) | UInt16(assembly.bytes[1]) << 8)
    }
    if let expected = assembly.expected, assembly.bytes.count >= expected {
      // Complete in this frame: the frame's facts are this PDU's.
      let meanings = AttributeMeanings(&frame)
      finishAssembly(assembly, key: key, attChannel: frame.att?.channel, meanings: meanings)
    } else {
      assemblies[key] = assembly
    }
    return pduOffset
  }

  /// Redacts the PDU of `key` as far as it goes (padded; no facts: it did not complete in the
  /// frame at hand).
  mutating func completeAlone(_ key: AssemblyKey) {
    guard let assembly = assemblies.removeValue(forKey: key) else { return }
    finishAssembly(assembly, key: key, attChannel: nil, meanings: .none)
  }

  /// Redacts a PDU and writes its edits into the records that carry its pieces.
  mutating func finishAssembly(_ assembly: Assembly, key: AssemblyKey, attChannel: UInt16?, meanings: AttributeMeanings) {
    let length = assembly.bytes.count
    let padded = assembly.bytes + [UInt8](repeating: 0, count: max(0, (assembly.expected ?? 4) - length))
    let edits = scope.walk(padded, limit: length, .l2cap(attChannel: attChannel, meanings: meanings))
    for piece in assembly.pieces where piece.record >= firstID {
      let index = piece.record - firstID
      for edit in edits {
        for (offset, byte) in edit.bytes.enumerated() {
          let pduPosition = edit.offset + offset
          guard pduPosition >= piece.pduOffset, pduPosition < piece.pduOffset + piece.count else { continue }
          let position = piece.at + pduPosition - piece.pduOffset
          if position < queue[index].record.bytes.count { queue[index].record.bytes[position] = byte }
        }
      }
      if queue[index].waitingOn == key { queue[index].waitingOn = nil }
    }
  }

  /// A start piece cut short: redacted alone, as far as it goes.
  mutating func redactAlone(_ id: Int, at: Int, _ piece: [UInt8], frame: inout DissectedFrame) {
    guard piece.count >= 4 else { return }
    let expected = 4 + Int(UInt16(piece[0]) | UInt16(piece[1]) << 8)
    let padded = piece + [UInt8](repeating: 0, count: max(0, expected - piece.count))
    let meanings = AttributeMeanings(&frame)
    let channel = frame.att?.channel
    apply(id, at: at, scope.walk(padded, limit: piece.count, .l2cap(attChannel: channel, meanings: meanings)))
  }

  mutating func drop(_ id: Int) {
    queue[id - firstID].drop = true
    scope.tally.dropped += 1
  }

  // MARK: Out

  /// Hands out the records at the head that wait for nothing.
  mutating func release() {
    while queue.count > Self.maximumHeld || heldBytes > Self.maximumHeldBytes, let key = queue.first?.waitingOn { completeAlone(key) }
    var released = 0
    while released < queue.count, queue[released].waitingOn == nil {
      var held = queue[released]
      heldBytes -= held.record.bytes.count
      if !held.drop {
        finishAir(&held, id: firstID + released)
        written += 1
        check(held.record.bytes)
        ready.append(held.record)
      }
      released += 1
    }
    if released > 0 {
      queue.removeFirst(released)
      firstID += released
    }
  }

  /// The safety net: the bytes of an original replaced so far, still in a record handed out.
  mutating func check(_ bytes: [UInt8]) {
    let found = scope.originals.find(in: bytes)
    guard !found.isEmpty else { return }
    scope.tally.leftoverRecords += 1
    scope.tally.leftoverKinds.formUnion(found)
    if scope.tally.leftoverFrames.count < Self.reportedLeftovers { scope.tally.leftoverFrames.append(written) }
  }
}
