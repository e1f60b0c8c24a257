import BLECore

/// A btsnooz summary (capture-formats.md §5.3) as a btsnoop file (datalink 1002), made as it is
/// read: the zlib body is inflated a chunk at a time and its packed records rewritten as btsnoop
/// records, so memory holds the compressed payload and a few fixed buffers, never the body.
///
/// Timestamps count back from the preamble's `last_timestamp` (the last record's time) by the sum
/// of the deltas, so the body is inflated twice: once at the start to add the deltas up (and to
/// report corrupt or truncated zlib data before any frame, as a whole-body read would), then as
/// the records are read. Both passes stop at `limit` inflated bytes: the second one then gives
/// the records before the cap and ends with `.inflationCapped`, and the times count back from the
/// last record before the cap.
///
/// A record cut short by the end of the body is written cut short, and a header cut short is
/// written as its bytes, so the btsnoop reader reports the truncation as for a file.
final class BtsnoozConverter: ContentProducer {
  let version: Int
  /// The bytes of a packed record header: 7 (v1) or 9 (v2).
  let headerSize: Int
  /// The preamble and the zlib stream after it.
  let payload: [UInt8]
  let limit: Int64
  /// Time of the first record (µs since 1970), from the first pass.
  let firstTime: Int64

  /// The second pass: its inflater, how far into `payload` it was fed, what it parsed so far.
  private var inflater: Inflater
  private var fed = 9
  private var scanner: Scanner
  private var time: Int64
  private var ended = false
  /// Inflated body bytes, a chunk at a time.
  private var chunk = [UInt8](repeating: 0, count: BtsnoozConverter.chunkSize)
  /// btsnoop bytes made and not yet read: each chunk's (a 7-byte record becomes 25 bytes, so a
  /// chunk makes at most `chunkSize` × 25 / 7 bytes).
  private var staged = [UInt8](repeating: 0, count: BtsnoozConverter.stagedCapacity)
  private var stagedStart = 0
  private var stagedEnd = 0
  /// The most bytes `staged` held at once (tests: never more than `stagedCapacity`).
  private(set) var mostStaged = 0

  static let chunkSize = 64 * 1024
  static let stagedCapacity = chunkSize * 4 + BTSnoopFormat.headerSize

  /// `payload`: preamble and zlib body, as decoded from base64. Runs the first pass.
  /// - Throws: `.corrupt` for a short preamble, `.unsupportedVersion`, `.readFailed` for corrupt
  ///   or truncated zlib data.
  init(payload: [UInt8], limit: Int64) throws(CaptureError) {
    guard payload.count >= 9 else {
      throw .corrupt("btsnooz preamble is \(payload.count) bytes, needs 9 (version, last timestamp)")
    }
    guard payload[0] == 1 || payload[0] == 2 else { throw .unsupportedVersion(format: "btsnooz", version: UInt32(payload[0])) }
    version = Int(payload[0])
    headerSize = version == 1 ? 7 : 9
    var lastTimestamp: UInt64 = 0
    for index in (1...8).reversed() { lastTimestamp = lastTimestamp << 8 | UInt64(payload[index]) }
    self.payload = payload
    self.limit = limit
    // First pass: the sum of the deltas (saturating: a hostile preamble or deltas give clamped
    // times, never wrapped ones).
    let total = try Self.sumOfDeltas(payload, headerSize: headerSize, limit: limit)
    firstTime = Int64(clamping: lastTimestamp).saturatingSubtract(Int64(clamping: total))
    time = firstTime
    scanner = Scanner(headerSize: headerSize)
    inflater = try Self.makeInflater(limit: limit)
    // The btsnoop file header comes first.
    let header = BTSnoopFormat.magic + [0, 0, 0, 1, 0, 0, 0x03, 0xEA]
    staged.replaceSubrange(0..<header.count, with: header)
    stagedEnd = header.count
  }

  /// The first pass: the deltas of the records whose headers lie before the end of the body or
  /// the cap, added up.
  static func sumOfDeltas(_ payload: [UInt8], headerSize: Int, limit: Int64) throws(CaptureError) -> UInt64 {
    var total: UInt64 = 0
    var scanner = Scanner(headerSize: headerSize)
    let inflater = try makeInflater(limit: limit)
    var chunk = [UInt8](repeating: 0, count: chunkSize)
    var offset = 9
    do {
      while true {
        let got = try inflater.read(into: &chunk, from: payload, offset: &offset)
        if got == 0 { return total }
        scanner.scan(chunk[0..<got]) { header in
          total = total.saturatingAdd(UInt64(header.delta))
        } data: { _ in }
      }
    } catch {
      // At the cap: the second pass gives the records before it, then the error.
      guard case .inflationCapped = error else { throw error }
      return total
    }
  }

  static func makeInflater(limit: Int64) throws(CaptureError) -> Inflater {
    let cap = Inflater.Cap(
      floor: limit, ratio: nil, subject: "the BTSNOOP_LOG_SUMMARY's zlib data",
      advice: "Android keeps at most about 1 MiB of records for a summary")
    return try Inflater(.zlib, cap: cap)
  }

  func read(upTo count: Int) throws(CaptureError) -> ArraySlice<UInt8> {
    while stagedStart == stagedEnd {
      if ended { return [] }
      try convertChunk()
    }
    let taken = min(count, stagedEnd - stagedStart)
    defer { stagedStart += taken }
    return staged[stagedStart..<(stagedStart + taken)]
  }

  /// Inflates the next chunk of the body into btsnoop bytes (`staged`, which is empty).
  private func convertChunk() throws(CaptureError) {
    stagedStart = 0
    stagedEnd = 0
    let got = try inflater.read(into: &chunk, from: payload, offset: &fed)
    if got == 0 {
      ended = true
      // A header cut short: its bytes, as a btsnoop header cut short says the same.
      let partial = scanner.partialHeader
      staged.replaceSubrange(0..<partial.count, with: partial)
      stagedEnd = partial.count
      return
    }
    scanner.scan(chunk[0..<got]) { header in
      time = time.saturatingAdd(Int64(header.delta))
      let type = header.type
      let flags: UInt32 = (type >> 4 == 1 ? 1 : 0) | (type == 0x20 || type == 0x10 ? 2 : 0)
      let stamp = UInt64(bitPattern: time.saturatingAdd(BTSnoopFormat.unixEpochOffset))
      put32(UInt32(header.original))
      put32(UInt32(header.length))
      put32(flags)
      put32(0)
      put32(UInt32(truncatingIfNeeded: stamp >> 32))
      put32(UInt32(truncatingIfNeeded: stamp))
      staged[stagedEnd] = Bugreport.h4Indicator(btsnoozType: type)
      stagedEnd += 1
    } data: { bytes in
      staged.replaceSubrange(stagedEnd..<(stagedEnd + bytes.count), with: bytes)
      stagedEnd += bytes.count
    }
    mostStaged = max(mostStaged, stagedEnd)
  }

  @inline(__always) private func put32(_ value: UInt32) {
    staged[stagedEnd] = UInt8(truncatingIfNeeded: value >> 24)
    staged[stagedEnd + 1] = UInt8(truncatingIfNeeded: value >> 16)
    staged[stagedEnd + 2] = UInt8(truncatingIfNeeded: value >> 8)
    staged[stagedEnd + 3] = UInt8(truncatingIfNeeded: value)
    stagedEnd += 4
  }

  /// A packed record header: lengths count the type byte (at least 1: a 0 is read as 1).
  struct Header {
    var length: Int
    var original: Int
    var delta: UInt32
    var type: UInt8
  }

  /// The packed records of the body, parsed across chunk boundaries: each complete header, then
  /// the record's data as it comes (`length - 1` bytes, fewer when the body ends first).
  struct Scanner {
    let headerSize: Int
    private var header: [UInt8]
    private var headerHave = 0
    private var dataLeft = 0

    init(headerSize: Int) {
      self.headerSize = headerSize
      header = [UInt8](repeating: 0, count: headerSize)
    }

    /// The bytes of a header the body's end cut short (empty when none).
    var partialHeader: [UInt8] { dataLeft == 0 ? Array(header[0..<headerHave]) : [] }

    mutating func scan(_ bytes: ArraySlice<UInt8>, header onHeader: (Header) -> Void, data onData: (ArraySlice<UInt8>) -> Void) {
      var at = bytes.startIndex
      while at < bytes.endIndex {
        if dataLeft > 0 {
          let take = min(dataLeft, bytes.endIndex - at)
          onData(bytes[at..<(at + take)])
          dataLeft -= take
          at += take
          continue
        }
        let take = min(headerSize - headerHave, bytes.endIndex - at)
        for index in 0..<take { header[headerHave + index] = bytes[at + index] }
        headerHave += take
        at += take
        guard headerHave == headerSize else { break }
        headerHave = 0
        let length = max(u16(0), 1)
        let parsed = Header(
          length: length, original: headerSize == 9 ? max(u16(2), length) : length,
          delta: u32(headerSize == 9 ? 4 : 2), type: header[headerSize - 1])
        onHeader(parsed)
        dataLeft = length - 1
      }
    }

    private func u16(_ at: Int) -> Int { Int(header[at]) | Int(header[at + 1]) << 8 }
    private func u32(_ at: Int) -> UInt32 { UInt32(u16(at)) | UInt32(u16(at + 2)) << 16 }
  }
}
