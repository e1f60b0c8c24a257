import BLECore

/// Reads Apple PacketLogger (`.pklg`) files in both byte orders.
///
/// The format has no magic number, so `detect` checks the first records the way Wireshark does:
/// a plausible length, microseconds below one million and a known record type
/// (shared/reference/capture-formats.md §2).
public final class PacketLoggerReader: CaptureReader {
  let input: InputSource
  let bigEndian: Bool
  public let format: CaptureFormat
  /// Records, flags and damage so far, in one value changed once per record.
  var progress = ReadProgress()
  let damagePolicy: DamagePolicy
  public var damage: DamageTally { progress.damage }
  public var damagePlaces: Int { progress.damage.places }

  /// Record header: length(4), seconds(4), microseconds(4); the type byte follows.
  static let headerSize = 12
  static let recordsChecked = 5

  init(_ input: InputSource, bigEndian: Bool, damage: DamagePolicy = .stop) {
    self.input = input
    self.bigEndian = bigEndian
    damagePolicy = damage
    format = CaptureFormat(name: "packetlogger", detail: bigEndian ? "big-endian" : "little-endian (v2)")
  }

  static func isKnownType(_ type: UInt8) -> Bool {
    switch type {
    case 0x00...0x03, 0x08...0x0D, 0x12, 0x13, 0xF7...0xFE: return true
    default: return false
    }
  }

  /// Returns the byte order (true for big-endian) if the start of `input` reads as PacketLogger.
  static func detect(_ input: InputSource) throws(CaptureError) -> Bool? {
    guard try input.fill(headerSize) >= headerSize else { return nil }
    let little = input.peekUInt32LE(0)
    // Wireshark's rule: a length whose low half is zero and high half is not is the other order.
    let bigEndian = little & 0xFFFF == 0 && little >> 16 != 0
    var offset = 0
    for checked in 0..<recordsChecked {
      // A pipe whose writer has sent one good record so far: that is the evidence there is
      // (waiting for more would hold back the first frame).
      if checked > 0, !input.canFillWithoutWaiting(offset + headerSize + 1) { return bigEndian }
      let have = try input.fill(offset + headerSize + 1)
      // Two good records in a row are as sure as five: a damaged third record is damage, not
      // another format. One good record suffices when it is the whole file.
      let plausible = checked >= 2 ? bigEndian : nil
      if have < offset + headerSize { return checked > 0 && have == offset ? bigEndian : plausible }
      let length = Int(bigEndian ? input.peekUInt32BE(offset) : input.peekUInt32LE(offset))
      let micros = bigEndian ? input.peekUInt32BE(offset + 8) : input.peekUInt32LE(offset + 8)
      guard length >= 8, length < 65_536, micros < 1_000_000 else { return plausible }
      if length > 8 {
        guard have > offset + headerSize, isKnownType(input.peek(offset + headerSize)) else { return plausible }
      }
      offset += 4 + length
      if try input.fill(offset) < offset { return checked > 0 ? bigEndian : plausible }
    }
    return bigEndian
  }

  public var mayWaitForInput: Bool { !input.isRegularFile }

  public func nextIsReady() -> Bool {
    guard input.canFillWithoutWaiting(Self.headerSize) else { return false }
    guard input.available >= Self.headerSize else { return true }
    let length = Int(bigEndian ? input.peekUInt32BE(0) : input.peekUInt32LE(0))
    if length >= 65_536 { return true }
    return input.canFillWithoutWaiting(4 + length)
  }

  public func next() throws(CaptureError) -> CaptureRecord? {
    var recordOffset: Int64
    var length: Int
    var total: Int
    var skipped = false
    // Once, or again after skipping damage (the scan stops only at a record judged readable).
    while true {
      recordOffset = input.position
      let have = try input.fill(Self.headerSize)
      if have == 0 { return nil }
      guard have >= Self.headerSize else {
        throw .damaged(frame: progress.records + 1, offset: recordOffset, reason: "truncated record header (\(have) of 12 bytes)")
      }
      length = Int(bigEndian ? input.peekUInt32BE(0) : input.peekUInt32LE(0))
      let micros = bigEndian ? input.peekUInt32BE(8) : input.peekUInt32LE(8)
      total = 4 + length
      // Unknown record types are read (as `other`): new ones appear. Lengths and microseconds
      // out of range cannot be right.
      let reason: String
      if length < 8 || length >= 65_536 {
        reason = "impossible record length \(length) (8 to 65535)"
      } else if micros >= 1_000_000 {
        reason = "impossible microseconds \(micros) (at most 999999)"
      } else {
        let got = try input.fill(total)
        if got >= total { break }
        reason = "truncated record: needs \(length - 8) bytes after the timestamp, only \(max(got - Self.headerSize, 0)) remain"
        skipped = true
        try skipDamage(frame: progress.records + 1, offset: recordOffset, reason: reason, isTruncation: true)
        continue
      }
      skipped = true
      try skipDamage(frame: progress.records + 1, offset: recordOffset, reason: reason, isTruncation: false)
    }
    let seconds = bigEndian ? input.peekUInt32BE(4) : input.peekUInt32LE(4)
    let micros = bigEndian ? input.peekUInt32BE(8) : input.peekUInt32LE(8)
    _ = progress.counted()
    let timestamp = Timestamp.microseconds(seconds: Int64(seconds), micros: Int64(micros))
    guard length > 8 else {
      input.consume(total)
      var empty = CaptureRecord(timestamp: timestamp, direction: nil, kind: .other(0xFFFF), bytes: [], fileOffset: recordOffset)
      empty.followsDamage = skipped
      return empty
    }
    let type = input.peek(Self.headerSize)
    let kind: PacketKind
    var direction: Direction? = nil
    switch type {
    case 0x00: (kind, direction) = (.command, .hostToController)
    case 0x01: (kind, direction) = (.event, .controllerToHost)
    case 0x02: (kind, direction) = (.acl, .hostToController)
    case 0x03: (kind, direction) = (.acl, .controllerToHost)
    case 0x08: (kind, direction) = (.sco, .hostToController)
    case 0x09: (kind, direction) = (.sco, .controllerToHost)
    case 0x0C, 0x12: (kind, direction) = (.iso, .hostToController)
    case 0x0D, 0x13: (kind, direction) = (.iso, .controllerToHost)
    case 0x0B: kind = .note(.vendorDiagnostic)
    case 0xF7: kind = .note(.syslog)
    case 0xF8: kind = .note(.kernel)
    case 0xF9: kind = .note(.kernelDebug)
    case 0xFA: kind = .note(.error)
    case 0xFB: kind = .note(.power)
    case 0xFC: kind = .note(.note)
    case 0xFD: kind = .note(.config)
    case 0xFE: kind = .note(.newController)
    default: kind = .other(UInt16(type))
    }
    var record = CaptureRecord(
      timestamp: timestamp, direction: direction, kind: kind,
      bytes: input.copy(from: Self.headerSize + 1, count: length - 9), fileOffset: recordOffset)
    record.followsDamage = skipped
    input.consume(total)
    return record
  }

  /// Stops at damage, or skips to the next plausible record (`Resynchronizer.skipDamage`).
  func skipDamage(frame: Int, offset: Int64, reason: String, isTruncation: Bool) throws(CaptureError) {
    // The tally is changed apart: the scan reads `progress` (the flags seen) meanwhile.
    var tally = progress.damage
    defer { progress.damage = tally }
    try Resynchronizer.skipDamage(
      input, headerSize: Self.headerSize, policy: damagePolicy, tally: &tally, frame: frame, offset: offset,
      reason: reason, isTruncation: isTruncation
    ) { input, at in plausibleRecordLength(input, at: at) }
  }

  /// The length of the record whose header starts `at` bytes past the read position, if that
  /// header could be a real one: a length with a type byte, microseconds below a million and a
  /// known type (Wireshark's detection test). Stricter than `next`.
  func plausibleRecordLength(_ input: InputSource, at: Int) -> Int? {
    let length = bigEndian ? input.peekUInt32BE(at) : input.peekUInt32LE(at)
    let micros = bigEndian ? input.peekUInt32BE(at + 8) : input.peekUInt32LE(at + 8)
    guard length > 8, length < 65_536, micros < 1_000_000, input.available > at + Self.headerSize,
      Self.isKnownType(input.peek(at + Self.headerSize))
    else { return nil }
    return 4 + Int(length)
  }
}

extension CaptureFormatEntry {
  /// No magic number: told by its first records being plausible (`detect`), so asked after the
  /// formats that have one.
  static let packetLogger = CaptureFormatEntry(name: "packetlogger") { input, opening throws(CaptureError) in
    guard let bigEndian = try PacketLoggerReader.detect(input) else { return nil }
    return PacketLoggerReader(input, bigEndian: bigEndian, damage: opening.damage)
  }
}
