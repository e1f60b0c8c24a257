import Foundation
import Testing
import BLECore
@testable import BLECapture

/// Decompression bombs (issue 17): gzip files, zip entries and btsnooz summaries stop at their
/// inflation cap (`InflationLimits`) with one clear error, after every frame before the cap;
/// legitimate compressed captures are read whole; what the readers hold stays bounded.
@Suite struct InflationCapTests {
  /// Caps small enough for tests: past 1 MiB, 100 times the compressed size; summaries 64 KiB.
  static let limits = InflationLimits(ratio: 100, floor: 1 << 20, summary: 64 << 10)

  struct Read {
    var reader: (any CaptureReader)?
    var records: [CaptureRecord] = []
    var error: CaptureError?
  }

  static func read(_ input: InputSource, limits: InflationLimits = limits) -> Read {
    var result = Read()
    input.inflationLimits = limits
    do {
      let reader = try CaptureFile.open(input)
      result.reader = reader
      while let record = try reader.next() { result.records.append(record) }
    } catch {
      result.error = error
    }
    return result
  }

  static func read(file bytes: [UInt8], limits: InflationLimits = limits) throws -> Read {
    let path = CaptureFixtures.temporaryFile(bytes)
    defer { unlink(path) }
    return read(try InputSource(path: path), limits: limits)
  }

  static func read(memory bytes: [UInt8], limits: InflationLimits = limits) -> Read {
    read(InputSource(bytes: bytes, name: "memory"), limits: limits)
  }

  /// 300 good records (the fixture session, 1 µs apart), as btsnoop.
  static let goodRecords: [CaptureRecord] = (0..<300).map { index in
    var record = CaptureFixtures.records[index % CaptureFixtures.records.count]
    record.timestamp = CaptureFixtures.base + Int64(index)
    return record
  }

  /// The good records, then `zeros` zero bytes: empty btsnoop records (24 bytes each) that
  /// deflate squeezes about 1000 times, as a bomb does.
  static func bomb(zeros: Int) -> (plain: [UInt8], bomb: [UInt8]) {
    let plain = CaptureFixtures.bytes(.btsnoopH4, goodRecords)
    return (plain, plain + [UInt8](repeating: 0, count: zeros))
  }

  /// The good records come back as written; after them, empty records up to the cap.
  static func expectBombRead(_ result: Read, plainSize: Int, cap: Int) {
    let empties = (cap - plainSize) / BTSnoopFormat.recordHeaderSize
    #expect(result.records.count == goodRecords.count + empties)
    for (read, written) in zip(result.records, goodRecords) { #expect(CaptureReaderTests.same(read, written)) }
    #expect(result.records.dropFirst(goodRecords.count).allSatisfy { $0.bytes.isEmpty && $0.kind == .other(0xFFFF) })
    // Every frame read lies before the cap.
    if let last = result.records.last { #expect(last.fileOffset + 24 <= Int64(cap)) }
    #expect(result.error?.exitStatus == 1)
  }

  @Test func gzipBombStopsAtTheCapAfterTheFramesBeforeIt() throws {
    let (plain, bomb) = Self.bomb(zeros: 8 << 20)
    let gzipped = Deflate.compress(bomb, wrapper: .gzip)
    // Far past the ratio (deflate squeezes zeros about 1000 times): the 1 MiB floor is the cap.
    try #require(gzipped.count * 100 < 1 << 20)
    let result = try Self.read(file: gzipped)
    Self.expectBombRead(result, plainSize: plain.count, cap: 1 << 20)
    guard case .inflationCapped(let message)? = result.error else {
      Issue.record("expected the cap, got \(String(describing: result.error))")
      return
    }
    #expect(message.hasPrefix("gzip data inflates to more than 100 times its compressed size: stopped at 1048576 bytes from "))
    #expect(
      message.hasSuffix(
        " compressed bytes (the cap against decompression bombs: 100 times the compressed size, at least 1 MiB); to read it all, decompress it first (gzip -dc)"))
    // What was held: the buffers at their initial sizes; the inflater gave exactly the cap.
    let input = try #require(((result.reader as? ContainedReader)?.reader as? BTSnoopReader)?.input)
    let inflater = try #require(input.inflater)
    #expect(inflater.produced == 1 << 20)
    #expect(inflater.inputCapacity == Inflater.inputChunk)
    #expect(input.bufferSize == InputSource.chunkSize)
  }

  @Test func zipBombEntryStopsAtTheCap() throws {
    let (plain, bomb) = Self.bomb(zeros: 8 << 20)
    let archive = ZipArchive.archive([
      (name: "version.txt", bytes: Array("2.0".utf8), deflate: false),
      (name: "FS/data/misc/bluetooth/logs/btsnoop_hci.log", bytes: bomb, deflate: true),
    ])
    // From a file (the CLI) and from memory (the fuzz targets): the same.
    for result in [try Self.read(file: archive), Self.read(memory: archive)] {
      Self.expectBombRead(result, plainSize: plain.count, cap: 1 << 20)
      guard case .inflationCapped(let message)? = result.error else {
        Issue.record("expected the cap, got \(String(describing: result.error))")
        continue
      }
      #expect(
        message.hasPrefix(
          "zip entry FS/data/misc/bluetooth/logs/btsnoop_hci.log inflates to more than 100 times its compressed size: stopped at 1048576 bytes from "))
      #expect(message.hasSuffix("; to read it all, extract it first (unzip)"))
    }
  }

  /// A btsnooz summary is inflated as read: its body never lies in memory, and past the cap the
  /// records before it come with their true times (counted back from the last before the cap).
  @Test(arguments: [UInt8(1), 2])
  func btsnoozBombStopsAtTheCap(version: UInt8) throws {
    let source = BugreportFixtures.sessionRecords
    let good = BugreportFixtures.btsnoozBody(source, version: version)
    // Zero records (a header of zeros: length 0 read as 1, type 0, delta 0) past the 64 KiB cap.
    let body = good + [UInt8](repeating: 0, count: 1 << 20)
    let payload = BugreportFixtures.preamble(source, version: version) + Deflate.compress(body, wrapper: .zlib)
    let result = try Self.read(file: BugreportFixtures.bugreportText(payload))
    let headerSize = version == 1 ? 7 : 9
    let cap = 64 << 10
    #expect(result.records.count == source.count + (cap - good.count) / headerSize)
    BugreportTests.expectSame(Array(result.records.prefix(source.count)), source, version: Int(version))
    // The zero records: one byte each (their type, kept as an unknown H4 indicator), at the time
    // of the last good record.
    #expect(result.records.dropFirst(source.count).allSatisfy { $0.bytes == [0] && $0.timestamp == source.last?.timestamp })
    #expect(
      result.error
        == .inflationCapped(
          "the BTSNOOP_LOG_SUMMARY's zlib data inflates to more than 65536 bytes, the cap (Android keeps at most about 1 MiB of records for a summary): stopped there"
        ))
    #expect(result.error?.exitStatus == 1)
    // Held: the compressed payload, and buffers of fixed sizes.
    let input = try #require(((result.reader as? ContainedReader)?.reader as? BTSnoopReader)?.input)
    let converter = try #require(input.producer as? BtsnoozConverter)
    #expect(converter.payload.count == payload.count)
    #expect(converter.mostStaged > 0 && converter.mostStaged <= BtsnoozConverter.stagedCapacity)
    #expect(input.bufferSize == InputSource.chunkSize)
  }

  /// The cap on a summary's base64 text: refused before anything is inflated.
  @Test func summaryTextLongerThanTheCapIsRefused() throws {
    let payload = BugreportFixtures.btsnooz(BugreportFixtures.sessionRecords, version: 2)
    let text = BugreportFixtures.bugreportText(payload)
    let tight = InflationLimits(ratio: 100, floor: 1 << 20, summary: 1024)
    #expect(try Self.read(file: text, limits: tight).error == .corrupt("BTSNOOP_LOG_SUMMARY is longer than 1024 bytes; refused"))
    #expect(try Self.read(file: text).error == nil)
  }

  /// A large capture that compresses as captures do (well under 100 times) is read whole past
  /// the floor, exactly as the uncompressed file, whether gzip-compressed or in a zip.
  @Test func legitimateCompressedCaptureReadsAsTheUncompressedOne() throws {
    let session = BugreportFixtures.sessionRecords
    var records: [CaptureRecord] = []
    for round in 0..<720 {
      for record in session {
        var copy = record
        copy.timestamp = record.timestamp + Int64(round) * 3_600_000_123
        records.append(copy)
      }
    }
    let plain = CaptureFixtures.bytes(.btsnoopH4, records)
    let gzipped = Deflate.compress(plain, wrapper: .gzip)
    // Past the floor (1 MiB) several times over, within the ratio.
    try #require(plain.count > 4 << 20 && gzipped.count * 100 > plain.count)
    let expected = try Self.read(file: plain)
    #expect(expected.error == nil && expected.records.count == records.count)
    let archive = ZipArchive.archive([(name: "FS/data/misc/bluetooth/logs/btsnoop_hci.log", bytes: plain, deflate: true)])
    for result in [try Self.read(file: gzipped), try Self.read(file: archive)] {
      #expect(result.error == nil)
      #expect(result.records.count == expected.records.count)
      #expect(zip(result.records, expected.records).allSatisfy { CaptureReaderTests.same($0, $1) && $0.fileOffset == $1.fileOffset })
    }
  }

  /// Output exactly at an absolute cap is allowed; one byte more is not, and the bytes before
  /// the cap are all given.
  @Test func theCapIsExact() throws {
    let cap = 100_000
    let exact = Deflate.compress([UInt8](repeating: 7, count: cap), wrapper: .zlib)
    #expect(try Inflater.inflateAll(exact[...], wrapper: .zlib, limit: cap).count == cap)
    let over = Deflate.compress([UInt8](repeating: 7, count: cap + 1), wrapper: .zlib)
    let inflater = try Inflater(.zlib, pending: over, cap: Inflater.Cap(floor: Int64(cap), ratio: nil, subject: "test data"))
    var given = 0
    var chunk = [UInt8](repeating: 0, count: 4096)
    do {
      while true {
        let got = try chunk.withUnsafeMutableBufferPointer { buffer throws(CaptureError) in
          try inflater.read(into: buffer.baseAddress!, count: buffer.count) { _, _ in 0 }
        }
        if got == 0 { break }
        given += got
      }
      Issue.record("expected the cap")
    } catch {
      #expect(error == .inflationCapped("test data inflates to more than 100000 bytes, the cap: stopped there"))
    }
    #expect(given == cap)
    #expect(inflater.produced == Int64(cap))
  }

  /// Past the floor, the cap grows with the compressed bytes inflated: compressed content that is
  /// hard to squeeze earns room for a highly compressed part after it, up to the ratio.
  @Test func theRatioCountsTheCompressedBytesInflated() throws {
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    let noise: [UInt8] = (0..<(256 << 10)).map { _ in
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return UInt8(truncatingIfNeeded: state >> 56)
    }
    let compressed = Deflate.compress(noise + [UInt8](repeating: 0, count: 8 << 20), wrapper: .gzip)
    let cap = Inflater.Cap(floor: 64 << 10, ratio: 4, subject: "gzip data")
    let inflater = try Inflater(.gzip, pending: compressed, cap: cap)
    var chunk = [UInt8](repeating: 0, count: 64 << 10)
    var given: Int64 = 0
    var failure: CaptureError?
    do {
      while true {
        let got = try chunk.withUnsafeMutableBufferPointer { buffer throws(CaptureError) in
          try inflater.read(into: buffer.baseAddress!, count: buffer.count) { _, _ in 0 }
        }
        if got == 0 { break }
        given += Int64(got)
      }
    } catch {
      failure = error
    }
    guard case .inflationCapped(let message)? = failure else {
      Issue.record("expected the cap, got \(String(describing: failure))")
      return
    }
    // The noise took about its own size compressed: about 4 × 256 KiB is allowed, past the floor.
    #expect(given == inflater.produced)
    #expect(inflater.consumed > 256 << 10)
    #expect(given <= 4 * inflater.consumed && given > 4 * inflater.consumed - 64)
    #expect(given >= 1 << 20)
    #expect(
      message
        == "gzip data inflates to more than 4 times its compressed size: stopped at \(given) bytes from \(inflater.consumed) compressed bytes (the cap against decompression bombs: 4 times the compressed size, at least 65536 bytes)"
    )
  }
}
