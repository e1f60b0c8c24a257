import BLECore

/// What a reader does at a record header that cannot be right (an impossible length, say).
public enum DamagePolicy: Sendable, Equatable {
  /// End the read with `CaptureError.damaged` (what tshark and btmon do).
  case stop
  /// Skip forward to the next plausible record and read on, counting the bytes skipped.
  case resynchronize
}

/// The search for the next record after damage, shared by the btsnoop and PacketLogger readers.
enum Resynchronizer {
  /// How far past the damage to look before giving up.
  static let window = 1 << 20

  enum Outcome {
    /// The read position is now the start of a plausible record; this many bytes were skipped.
    case found(skipped: Int)
    /// No plausible record starts in the window.
    case windowExhausted
    /// The input ended first; this many bytes from the damage on were looked at.
    case endOfInput(remaining: Int)
  }

  /// What a reader does at a damaged record: throws it under `.stop`, else skips to the next
  /// plausible record (`scan`) and tallies the skip. A truncation that no plausible record
  /// follows is the end of the capture and reported as such.
  static func skipDamage(
    _ input: InputSource, headerSize: Int, policy: DamagePolicy, tally: inout DamageTally,
    frame: Int, offset: Int64, reason: String, isTruncation: Bool,
    recordLength: (InputSource, Int) -> Int?
  ) throws(CaptureError) {
    let damaged = CaptureError.damaged(frame: frame, offset: offset, reason: reason)
    guard policy == .resynchronize else { throw damaged }
    switch try scan(input, headerSize: headerSize, recordLength: recordLength) {
    case .found(let skipped):
      tally.add(SkippedDamage(frame: frame, offset: offset, byteCount: skipped, reason: reason))
    case .windowExhausted:
      if isTruncation { throw damaged }
      throw .damaged(frame: frame, offset: offset, reason: "\(reason); no plausible record in the next \(window) bytes")
    case .endOfInput(let remaining):
      if isTruncation { throw damaged }
      throw .damaged(frame: frame, offset: offset, reason: "\(reason); no plausible record in the \(remaining) bytes to the end")
    }
  }

  /// Consumes bytes from the read position (a damaged header) one at a time until a plausible
  /// record header starts there and is followed by another one, or by the end of the input
  /// (or by a header the end of the input cuts: that truncation is reported as such).
  /// `recordLength(input, at)` judges the header `at` bytes past the read position, which has
  /// `headerSize` bytes filled (and the byte after, when the input has it): the whole record's
  /// length if it could start a record, else nil. It must accept only records the reader reads
  /// without damage, so the read after a `found` makes progress.
  ///
  /// Each offset costs a bounded amount of work and the buffer never holds more than one
  /// record and a header past the offset being judged: linear time, bounded memory.
  static func scan(
    _ input: InputSource, headerSize: Int, recordLength: (InputSource, Int) -> Int?
  ) throws(CaptureError) -> Outcome {
    var skipped = 0
    while skipped < window {
      // The damaged header's first byte is never a record start.
      input.consume(1)
      skipped += 1
      let have = try input.fill(headerSize + 1)
      if have < headerSize { return .endOfInput(remaining: skipped + have) }
      guard let total = recordLength(input, 0) else { continue }
      let got = try input.fill(total + headerSize + 1)
      if got < total { continue }
      if got < total + headerSize || recordLength(input, total) != nil { return .found(skipped: skipped) }
    }
    return .windowExhausted
  }
}

/// What a reader has read so far: its records, the flag bits of good ones, the damage it
/// skipped. One value, changed once per record: each stored property of a reader (a class)
/// costs a run-time exclusivity check per access.
struct ReadProgress: Sendable {
  private(set) var records = 0
  /// The flag bits of the good records read (btsnoop): a record found after damage may carry them too.
  private(set) var flagsSeen: UInt32 = 0
  var damage = DamageTally()

  /// Counts a good record with `flags`; returns its number (1-based).
  mutating func counted(flags: UInt32 = 0) -> Int {
    records &+= 1
    flagsSeen |= flags
    return records
  }
}
