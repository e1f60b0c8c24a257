import BLECore

/// Constants of the btsnoop format (shared/reference/capture-formats.md §1).
public enum BTSnoopFormat {
  package static let magic: [UInt8] = Array("btsnoop".utf8) + [0]
  package static let headerSize = 16
  package static let recordHeaderSize = 24
  /// btsnoop timestamps count microseconds from 0000-01-01; this is 1970-01-01 on that scale.
  package static let unixEpochOffset: Int64 = 0x00DC_DDB3_0F2F_8000

  public enum Datalink: UInt32, Sendable {
    case h1 = 1001, h4 = 1002, bcsp = 1003, h5 = 1004, linuxMonitor = 2001, simulator = 2002
  }
}

/// Reads btsnoop version 1 with datalinks 1001 (H1), 1002 (H4) and 2001 (Linux monitor).
public final class BTSnoopReader: CaptureReader {
  let input: InputSource
  public let datalink: BTSnoopFormat.Datalink
  public let format: CaptureFormat
  /// Records, flags and damage so far, in one value changed once per record.
  var progress = ReadProgress()
  let damagePolicy: DamagePolicy
  public var damage: DamageTally { progress.damage }
  public var damagePlaces: Int { progress.damage.places }

  init(_ input: InputSource, damage: DamagePolicy = .stop) throws(CaptureError) {
    self.input = input
    damagePolicy = damage
    guard try input.fill(BTSnoopFormat.headerSize) >= BTSnoopFormat.headerSize else {
      throw .damaged(frame: 0, offset: 0, reason: "btsnoop header is \(input.available) bytes, needs 16")
    }
    let version = input.peekUInt32BE(8)
    let code = input.peekUInt32BE(12)
    guard version == 1 else { throw .unsupportedVersion(format: "btsnoop", version: version) }
    switch BTSnoopFormat.Datalink(rawValue: code) {
    case .h1?: datalink = .h1
    case .h4?: datalink = .h4
    case .linuxMonitor?: datalink = .linuxMonitor
    case .bcsp?: throw .unsupportedLinkType(format: "btsnoop", linkType: code, name: "BCSP")
    case .h5?: throw .unsupportedLinkType(format: "btsnoop", linkType: code, name: "H5 three-wire UART")
    case .simulator?: throw .unsupportedLinkType(format: "btsnoop", linkType: code, name: "BlueZ simulator PHY")
    case nil: throw .unsupportedLinkType(format: "btsnoop", linkType: code, name: "unknown datalink")
    }
    let detail: String
    switch datalink {
    case .h1: detail = "datalink 1001 (H1)"
    case .h4: detail = "datalink 1002 (H4)"
    default: detail = "datalink 2001 (Linux monitor)"
    }
    format = CaptureFormat(name: "btsnoop", detail: detail)
    input.consume(BTSnoopFormat.headerSize)
  }

  public func next() throws(CaptureError) -> CaptureRecord? {
    var record = CaptureRecord(timestamp: 0, direction: nil, kind: .other(0), bytes: [])
    return try next(into: &record) ? record : nil
  }

  public var mayWaitForInput: Bool { !input.isRegularFile }

  public func nextIsReady() -> Bool {
    guard input.canFillWithoutWaiting(BTSnoopFormat.recordHeaderSize) else { return false }
    guard input.available >= BTSnoopFormat.recordHeaderSize else { return true }
    let length = input.peekUInt32BE(4)
    if length > CaptureFile.maximumPacketLength { return true }
    return input.canFillWithoutWaiting(BTSnoopFormat.recordHeaderSize + Int(length))
  }

  public func next(into record: inout CaptureRecord) throws(CaptureError) -> Bool {
    var recordOffset: Int64
    var includedLength: UInt32
    var originalLength: UInt32
    var total: Int
    var skipped = false
    // Once, or again after skipping damage (the scan stops only at a record judged readable).
    while true {
      recordOffset = input.position
      let have = try input.fill(BTSnoopFormat.recordHeaderSize)
      if have == 0 { return false }
      guard have >= BTSnoopFormat.recordHeaderSize else {
        throw .damaged(frame: progress.records + 1, offset: recordOffset, reason: "truncated record header (\(have) of 24 bytes)")
      }
      originalLength = input.peekUInt32BE(0)
      includedLength = input.peekUInt32BE(4)
      total = BTSnoopFormat.recordHeaderSize + Int(includedLength)
      // Lengths no writer produces are damage. (Other fields are judged only when looking for
      // the next record after damage: writers disagree about flags, and clocks jump.)
      let reason: String
      if includedLength > CaptureFile.maximumPacketLength {
        reason = "impossible included length \(includedLength) (at most \(CaptureFile.maximumPacketLength))"
      } else if includedLength > originalLength {
        reason = "impossible included length \(includedLength) (more than the original length \(originalLength))"
      } else {
        let got = try input.fill(total)
        if got >= total { break }
        reason = "truncated record: needs \(includedLength) bytes of packet data, only \(got - BTSnoopFormat.recordHeaderSize) remain"
        skipped = true
        try skipDamage(frame: progress.records + 1, offset: recordOffset, reason: reason, isTruncation: true)
        continue
      }
      skipped = true
      try skipDamage(frame: progress.records + 1, offset: recordOffset, reason: reason, isTruncation: false)
    }
    let length = Int(includedLength)
    let flags = input.peekUInt32BE(8)
    let rawTime = Int64(bitPattern: input.peekUInt64BE(16))
    _ = progress.counted(flags: flags)
    record.followsDamage = skipped
    record.timestamp = rawTime &- BTSnoopFormat.unixEpochOffset
    record.fileOffset = recordOffset
    record.adapter = 0
    switch datalink {
    case .h4:
      record.direction = flags & 1 == 0 ? .hostToController : .controllerToHost
      if length == 0 {
        record.kind = .other(0xFFFF)
        record.bytes.removeAll(keepingCapacity: true)
      } else {
        let kind = PacketKind(h4Indicator: input.peek(BTSnoopFormat.recordHeaderSize))
        // H4 packets of a known kind drop their indicator; unknown ones keep every byte.
        let skip = kind.isHCIPacket ? 1 : 0
        record.kind = kind
        input.copy(from: BTSnoopFormat.recordHeaderSize + skip, count: length - skip, into: &record.bytes)
      }
      record.originalLength = max(Int(originalLength) - 1, 0)
    case .h1:
      switch flags & 3 {
      case 2: (record.kind, record.direction) = (.command, .hostToController)
      case 3: (record.kind, record.direction) = (.event, .controllerToHost)
      case 0: (record.kind, record.direction) = (.acl, .hostToController)
      default: (record.kind, record.direction) = (.acl, .controllerToHost)
      }
      input.copy(from: BTSnoopFormat.recordHeaderSize, count: length, into: &record.bytes)
      record.originalLength = Int(originalLength)
    default:
      (record.kind, record.direction) = MonitorOpcode.kind(UInt16(truncatingIfNeeded: flags))
      record.adapter = UInt16(truncatingIfNeeded: flags >> 16)
      input.copy(from: BTSnoopFormat.recordHeaderSize, count: length, into: &record.bytes)
      record.originalLength = Int(originalLength)
    }
    input.consume(total)
    return true
  }

  /// Stops at damage, or skips to the next plausible record (`Resynchronizer.skipDamage`).
  func skipDamage(frame: Int, offset: Int64, reason: String, isTruncation: Bool) throws(CaptureError) {
    // The tally is changed apart: the scan reads `progress` (the flags seen) meanwhile.
    var tally = progress.damage
    defer { progress.damage = tally }
    try Resynchronizer.skipDamage(
      input, headerSize: BTSnoopFormat.recordHeaderSize, policy: damagePolicy, tally: &tally, frame: frame, offset: offset,
      reason: reason, isTruncation: isTruncation
    ) { input, at in plausibleRecordLength(input, at: at) }
  }

  /// Timestamps a record found after damage may have: years 1900 to 2200 (devices without a
  /// clock write 1970 plus uptime).
  static let plausibleTimes: ClosedRange<Int64> = -2_208_988_800_000_000...7_258_118_400_000_000

  /// The length of the record whose header starts `at` bytes past the read position, if that
  /// header could be a real one: lengths possible, flags of a kind seen (or defined), a
  /// plausible time, an H4 indicator that names a packet. Stricter than `next`, so a record it
  /// accepts is read without damage.
  func plausibleRecordLength(_ input: InputSource, at: Int) -> Int? {
    let original = input.peekUInt32BE(at)
    let included = input.peekUInt32BE(at + 4)
    guard included <= original, original <= CaptureFile.maximumPacketLength else { return nil }
    let flags = input.peekUInt32BE(at + 8)
    switch datalink {
    case .linuxMonitor:
      // Opcodes are small (21 defined), controller indexes too, or 0xFFFF for none.
      let index = flags >> 16
      guard flags & 0xFFFF < 64, index < 256 || index == 0xFFFF else { return nil }
    default:
      // Bits 0-1 are defined; bumble sets 0x10 (capture-formats.md §1.3).
      guard flags & ~(progress.flagsSeen | 0x13) == 0 else { return nil }
    }
    let time = Int64(bitPattern: input.peekUInt64BE(at + 16)) &- BTSnoopFormat.unixEpochOffset
    guard Self.plausibleTimes.contains(time) else { return nil }
    if datalink == .h4 {
      guard included > 0 else { return nil }
      if input.available > at + BTSnoopFormat.recordHeaderSize {
        guard (1...5).contains(input.peek(at + BTSnoopFormat.recordHeaderSize)) else { return nil }
      }
    }
    return BTSnoopFormat.recordHeaderSize + Int(included)
  }
}

extension CaptureFormatEntry {
  static let btsnoop = CaptureFormatEntry(name: "btsnoop") { input, opening throws(CaptureError) in
    guard opening.available >= 8, input.peekBytes(8) == BTSnoopFormat.magic else { return nil }
    return try BTSnoopReader(input, damage: opening.damage)
  }
}
