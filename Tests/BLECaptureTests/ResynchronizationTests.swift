import Foundation
import Testing
import BLECore
import BLETestSupport
@testable import BLECapture

/// Reading on after damage (`DamagePolicy.resynchronize`): real captures with one record's header
/// corrupted, garbage inserted between records, and hostile inputs.
@Suite struct ResynchronizationTests {
  static let captures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("captures")

  static func capture(_ name: String) throws -> [UInt8] {
    Array(try Data(contentsOf: captures.appendingPathComponent(name)))
  }

  /// Start offsets of the records, found by walking the length fields (independently of the readers).
  static func recordOffsets(btsnoop bytes: [UInt8]) -> [Int] {
    var offsets: [Int] = []
    var offset = 16
    while offset + 24 <= bytes.count {
      offsets.append(offset)
      offset += 24 + Int(bigEndian32(bytes, offset + 4))
    }
    return offsets
  }

  static func recordOffsets(packetLoggerBigEndian bytes: [UInt8]) -> [Int] {
    var offsets: [Int] = []
    var offset = 0
    while offset + 12 <= bytes.count {
      offsets.append(offset)
      offset += 4 + Int(bigEndian32(bytes, offset))
    }
    return offsets
  }

  static func bigEndian32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
    UInt32(bytes[at]) << 24 | UInt32(bytes[at + 1]) << 16 | UInt32(bytes[at + 2]) << 8 | UInt32(bytes[at + 3])
  }

  struct Read {
    var records: [CaptureRecord] = []
    var error: CaptureError?
    var damage = DamageTally()
    /// Every skip, in order (the tally keeps the last one).
    var skips: [SkippedDamage] = []
    /// The largest the input buffer grew.
    var largestBuffer = 0
  }

  static func read(_ bytes: [UInt8], _ policy: DamagePolicy) -> Read {
    let path = CaptureFixtures.temporaryFile(bytes, name: "resync")
    defer { unlink(path) }
    var result = Read()
    do {
      let input = try InputSource(path: path)
      let reader = try CaptureFile.open(input, damage: policy)
      var places = 0
      while let record = try reader.next() {
        result.records.append(record)
        result.largestBuffer = max(result.largestBuffer, input.bufferSize)
        if reader.damagePlaces != places, let last = reader.damage.last {
          places = reader.damagePlaces
          result.skips.append(last)
        }
      }
      result.damage = reader.damage
      result.largestBuffer = max(result.largestBuffer, input.bufferSize)
    } catch {
      result.error = error
    }
    return result
  }

  static func expectSame(_ got: ArraySlice<CaptureRecord>, _ want: ArraySlice<CaptureRecord>, shift: Int64 = 0, _ what: String) {
    #expect(got.count == want.count, "\(what): \(got.count) records, want \(want.count)")
    for (a, b) in zip(got, want) {
      #expect(CaptureReaderTests.same(a, b) && a.fileOffset == b.fileOffset + shift, "\(what): \(a) != \(b)")
    }
  }

  // MARK: One damaged header in a real capture

  @Test func btsnoopImpossibleLengthInTheMiddleIsSkipped() throws {
    let original = try Self.capture("hr_strap_session.btsnoop")
    let offsets = Self.recordOffsets(btsnoop: original)
    let all = Self.read(original, .stop).records
    try #require(all.count == offsets.count && all.count == 160)
    let damaged = 79  // record #80
    var bytes = original
    bytes.replaceSubrange((offsets[damaged] + 4)..<(offsets[damaged] + 8), with: [0xFF, 0xFF, 0xFF, 0xF0])

    let result = Self.read(bytes, .resynchronize)
    #expect(result.error == nil)
    Self.expectSame(result.records[...], all[..<damaged] + all[(damaged + 1)...], "btsnoop")
    let recordSize = offsets[damaged + 1] - offsets[damaged]
    #expect(result.damage.places == 1)
    #expect(result.damage.bytes == Int64(recordSize))
    #expect(
      result.damage.last
        == SkippedDamage(frame: 80, offset: Int64(offsets[damaged]), byteCount: recordSize, reason: "impossible included length 4294967280 (at most 262144)"))
    #expect(result.damage.last?.message == "damaged capture at frame 80 (byte offset 3052): impossible included length 4294967280 (at most 262144); skipped 32 bytes, reading on at byte offset 3084")

    // Stopping, as before: the records before the damage, then the error naming it.
    let stopped = Self.read(bytes, .stop)
    Self.expectSame(stopped.records[...], all[..<damaged], "btsnoop, stop")
    #expect(stopped.error == .damaged(frame: 80, offset: Int64(offsets[damaged]), reason: "impossible included length 4294967280 (at most 262144)"))
    #expect(stopped.damage.places == 0)
  }

  @Test func btsnoopIncludedLongerThanOriginalIsDamage() throws {
    let original = try Self.capture("hr_strap_session.btsnoop")
    let offsets = Self.recordOffsets(btsnoop: original)
    let all = Self.read(original, .stop).records
    let damaged = 120
    var bytes = original
    // Original length := 1: fewer bytes than the record includes.
    bytes.replaceSubrange(offsets[damaged]..<(offsets[damaged] + 4), with: [0, 0, 0, 1])
    let included = Self.bigEndian32(original, offsets[damaged] + 4)
    let result = Self.read(bytes, .resynchronize)
    #expect(result.error == nil)
    Self.expectSame(result.records[...], all[..<damaged] + all[(damaged + 1)...], "btsnoop")
    #expect(result.skips == [SkippedDamage(
      frame: damaged + 1, offset: Int64(offsets[damaged]), byteCount: offsets[damaged + 1] - offsets[damaged],
      reason: "impossible included length \(included) (more than the original length 1)")])
    #expect(Self.read(bytes, .stop).records.count == damaged)
  }

  @Test func packetLoggerImpossibleLengthInTheMiddleIsSkipped() throws {
    let original = try Self.capture("hr_strap_session.pklg")
    let offsets = Self.recordOffsets(packetLoggerBigEndian: original)
    let all = Self.read(original, .stop).records
    try #require(all.count == offsets.count && all.count == 160)
    let damaged = 90
    var bytes = original
    bytes.replaceSubrange(offsets[damaged]..<(offsets[damaged] + 4), with: [0x7F, 0, 0, 0])
    let result = Self.read(bytes, .resynchronize)
    #expect(result.error == nil)
    Self.expectSame(result.records[...], all[..<damaged] + all[(damaged + 1)...], "pklg")
    #expect(result.skips == [SkippedDamage(
      frame: damaged + 1, offset: Int64(offsets[damaged]), byteCount: offsets[damaged + 1] - offsets[damaged],
      reason: "impossible record length 2130706432 (8 to 65535)")])
    let stopped = Self.read(bytes, .stop)
    Self.expectSame(stopped.records[...], all[..<damaged], "pklg, stop")
    #expect(stopped.error == .damaged(frame: damaged + 1, offset: Int64(offsets[damaged]), reason: "impossible record length 2130706432 (8 to 65535)"))
  }

  @Test func packetLoggerImpossibleMicrosecondsAreDamage() throws {
    let original = try Self.capture("hr_strap_session.pklg")
    let offsets = Self.recordOffsets(packetLoggerBigEndian: original)
    let all = Self.read(original, .stop).records
    let damaged = 30
    var bytes = original
    bytes.replaceSubrange((offsets[damaged] + 8)..<(offsets[damaged] + 12), with: [0x00, 0x0F, 0x42, 0x40])  // 1 000 000
    let result = Self.read(bytes, .resynchronize)
    Self.expectSame(result.records[...], all[..<damaged] + all[(damaged + 1)...], "pklg")
    #expect(result.skips.map(\.reason) == ["impossible microseconds 1000000 (at most 999999)"])
    #expect(result.damage.bytes == Int64(offsets[damaged + 1] - offsets[damaged]))
  }

  @Test func damageInTheFirstRecordIsSkipped() throws {
    let original = try Self.capture("hr_strap_session.btsnoop")
    let all = Self.read(original, .stop).records
    var bytes = original
    bytes.replaceSubrange(16..<24, with: repeatElement(0xEE, count: 8))
    let result = Self.read(bytes, .resynchronize)
    Self.expectSame(result.records[...], all.dropFirst(), "btsnoop")
    #expect(result.skips.map(\.frame) == [1])
    #expect(result.skips.map(\.offset) == [16])
  }

  // MARK: Garbage between records

  /// Seeded garbage whose first bytes cannot start a record (lengths beyond every limit).
  static func garbage(_ count: Int, seed: UInt64) -> [UInt8] {
    var generator = SeededGenerator(seed: seed)
    return [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF] + (8..<max(count, 8)).map { _ in UInt8.random(in: 0...255, using: &generator) }
  }

  @Test(arguments: [8, 9, 23, 24, 25, 1000, 70_000])
  func btsnoopGarbageBetweenRecordsIsSkippedExactly(count: Int) throws {
    let original = try Self.capture("hr_strap_session.btsnoop")
    let offsets = Self.recordOffsets(btsnoop: original)
    let all = Self.read(original, .stop).records
    let at = 100
    let bytes = Array(original[..<offsets[at]]) + Self.garbage(count, seed: UInt64(count)) + Array(original[offsets[at]...])
    let result = Self.read(bytes, .resynchronize)
    #expect(result.error == nil)
    Self.expectSame(result.records[..<at], all[..<at], "before")
    Self.expectSame(result.records[at...], all[at...], shift: Int64(count), "after \(count) bytes of garbage")
    #expect(result.skips == [SkippedDamage(frame: at + 1, offset: Int64(offsets[at]), byteCount: count, reason: "impossible included length 4294967295 (at most 262144)")])
  }

  @Test(arguments: [CaptureWriteFormat.packetLogger(bigEndian: true), .packetLogger(bigEndian: false), .btsnoopH1, .btsnoopMonitor])
  func garbageBetweenRecordsIsSkippedInEveryFormat(format: CaptureWriteFormat) throws {
    let records = CaptureFixtures.records
    let before = CaptureFixtures.bytes(format, Array(records.prefix(3)))
    let whole = CaptureFixtures.bytes(format)
    let count = 333
    let bytes = before + Self.garbage(count, seed: 7) + Array(whole[before.count...])
    let result = Self.read(bytes, .resynchronize)
    #expect(result.error == nil)
    #expect(result.records.count == records.count)
    for (got, want) in zip(result.records, records) { #expect(CaptureReaderTests.same(got, want), "\(format)") }
    #expect(result.skips.map(\.byteCount) == [count])
    #expect(result.skips.map(\.offset) == [Int64(before.count)])
  }

  /// A place is found when two plausible records follow it (a lone record between two
  /// damaged stretches is skipped with them, and counted).
  @Test func manyDamagedPlacesAreEachCounted() throws {
    let records = CaptureFixtures.records
    var bytes = CaptureFixtures.bytes(.btsnoopH4, [records[0]])
    let pair = Array(CaptureFixtures.bytes(.btsnoopH4, [records[4], records[5]]).dropFirst(16))
    var expectedBytes = 0
    for place in 0..<500 {
      let junk = Self.garbage(8 + place % 50, seed: UInt64(place))
      expectedBytes += junk.count
      bytes += junk + pair
    }
    let result = Self.read(bytes, .resynchronize)
    #expect(result.error == nil)
    #expect(result.records.count == 1001)
    #expect(result.damage.places == 500)
    #expect(result.damage.bytes == Int64(expectedBytes))
    #expect(result.skips.map(\.frame) == Array(stride(from: 2, through: 1000, by: 2)))

    // A lone record between two stretches of garbage goes with them.
    let single = Array(CaptureFixtures.bytes(.btsnoopH4, [records[4]]).dropFirst(16))
    let lone = CaptureFixtures.bytes(.btsnoopH4, [records[0]]) + Self.garbage(40, seed: 1) + single + Self.garbage(40, seed: 2) + pair
    let loneResult = Self.read(lone, .resynchronize)
    #expect(loneResult.records.count == 3)
    #expect(loneResult.skips.map(\.byteCount) == [40 + single.count + 40])
  }

  // MARK: The end of the file, and hostile input

  /// A truncated last record stays what it was: the records before, then the truncation.
  @Test(arguments: [CaptureWriteFormat.btsnoopH4, .btsnoopH1, .btsnoopMonitor, .packetLogger(bigEndian: true), .packetLogger(bigEndian: false)])
  func truncationAtTheEndIsReportedAsBefore(format: CaptureWriteFormat) {
    let full = CaptureFixtures.bytes(format)
    let withoutLast = CaptureFixtures.bytes(format, Array(CaptureFixtures.records.dropLast()))
    for cut in (withoutLast.count + 1)..<full.count {
      let resynchronized = Self.read(Array(full[..<cut]), .resynchronize)
      let stopped = Self.read(Array(full[..<cut]), .stop)
      #expect(resynchronized.records.count == CaptureFixtures.records.count - 1, "\(format) cut at \(cut)")
      #expect(resynchronized.error == stopped.error, "\(format) cut at \(cut)")
      #expect(resynchronized.error?.message.contains("truncated") == true, "\(format) cut at \(cut)")
      #expect(resynchronized.damage.places == 0)
    }
  }

  static let btsnoopHeader = BTSnoopFormat.magic + [0, 0, 0, 1, 0, 0, 0x03, 0xEA]

  @Test func garbageToTheEndIsDamageNamingWhatWasSearched() {
    var generator = SeededGenerator(seed: 0xDEAD)
    let garbage = [UInt8](repeating: 0xFF, count: 8) + (0..<499_992).map { _ in UInt8.random(in: 0...255, using: &generator) }
    let result = Self.read(Self.btsnoopHeader + garbage, .resynchronize)
    #expect(result.records.isEmpty)
    #expect(result.error == .damaged(frame: 1, offset: 16, reason: "impossible included length 4294967295 (at most 262144); no plausible record in the 500000 bytes to the end"))
  }

  @Test func theSearchGivesUpAfterOneMebibyte() {
    var generator = SeededGenerator(seed: 0xBEEF)
    let garbage = [UInt8](repeating: 0xFF, count: 8) + (0..<(3 << 20)).map { _ in UInt8.random(in: 0...255, using: &generator) }
    let result = Self.read(Self.btsnoopHeader + garbage, .resynchronize)
    #expect(result.records.isEmpty)
    #expect(result.error == .damaged(frame: 1, offset: 16, reason: "impossible included length 4294967295 (at most 262144); no plausible record in the next 1048576 bytes"))
    #expect(result.largestBuffer <= 1 << 20)
  }

  /// Headers that each look right, claiming 200 000 bytes, one after another: every one is
  /// judged (a look 200 000 bytes ahead finds no second header), and the buffer stays small.
  @Test func repeatingPlausibleHeadersStayBounded() {
    let time = (1_764_480_000_000_000 as Int64) &+ BTSnoopFormat.unixEpochOffset
    var unit: [UInt8] = [0x00, 0x03, 0x0D, 0x40, 0x00, 0x03, 0x0D, 0x40, 0, 0, 0, 0, 0, 0, 0, 0]
    unit += (0..<8).map { UInt8(truncatingIfNeeded: UInt64(bitPattern: time) >> (56 - 8 * UInt64($0))) }
    unit.append(0x01)
    var bytes = Self.btsnoopHeader + [UInt8](repeating: 0xFF, count: 24)
    while bytes.count < 3 << 20 { bytes += unit }
    let result = Self.read(bytes, .resynchronize)
    #expect(result.records.isEmpty)
    #expect(result.error?.message.hasSuffix("no plausible record in the next 1048576 bytes") == true, "\(String(describing: result.error))")
    #expect(result.largestBuffer <= 1 << 20)
  }
}
