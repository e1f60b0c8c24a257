import BLECore
import CZlib

/// How far inflation may go, so that a decompression bomb costs no more than a file of ordinary
/// size would. Real captures compress 3 to 10 times (the corpus: at most 8); deflate's most is
/// 1032 times, which is what a bomb uses.
package struct InflationLimits: Sendable, Equatable {
  /// gzip files and zip entries: past `floor` bytes, the inflated bytes may be at most `ratio`
  /// times the compressed bytes inflated so far. No absolute cap: a 10 GB capture gzipped is read;
  /// what a file can cost stays in proportion to its size.
  package var ratio: Int64
  /// Inflated bytes always allowed, whatever the ratio (small, highly compressible files).
  package var floor: Int64
  /// A bugreport's BTSNOOP_LOG_SUMMARY: at most this many base64 characters and this many
  /// inflated bytes (Android keeps at most about 1 MiB of records for it).
  package var summary: Int64

  package init(ratio: Int64 = 100, floor: Int64 = 64 << 20, summary: Int64 = 16 << 20) {
    self.ratio = ratio
    self.floor = floor
    self.summary = summary
  }

  package static let standard = InflationLimits()
}

/// Streaming zlib inflation with bounded buffers: gzip files, zlib streams (btsnooz) and raw
/// deflate (zip entries). Each call produces at most what the caller's buffer holds, so memory
/// does not grow with the output, and never more than the output cap (`Cap`) allows, so the
/// time spent on the output stays in proportion to the compressed input (or under a fixed bound).
final class Inflater {
  typealias Wrapper = Deflate.Wrapper

  /// The most output an inflater gives: `floor` bytes, or `ratio` times the compressed bytes
  /// inflated so far when that is more (no ratio: `floor` is an absolute cap).
  struct Cap: Equatable {
    var floor: Int64
    var ratio: Int64?
    /// What is inflated, for the message: "gzip data", "zip entry NAME".
    var subject: String
    /// How to read past the cap, or (for a cap without a ratio) why it is enough, for the
    /// message ("" for none).
    var advice: String = ""

    static let none = Cap(floor: .max, ratio: nil, subject: "compressed data")

    /// The output allowed once `consumed` compressed bytes were inflated.
    @inline(__always) func allowed(consumed: Int64) -> Int64 {
      guard let ratio else { return floor }
      return max(floor, ratio.saturatingMultiply(consumed))
    }

    func message(produced: Int64, consumed: Int64) -> String {
      let tail = advice.isEmpty ? "" : "; \(advice)"
      guard let ratio else {
        let why = advice.isEmpty ? "" : " (\(advice))"
        return "\(subject) inflates to more than \(Cap.mebibytes(floor)), the cap\(why): stopped there"
      }
      return "\(subject) inflates to more than \(ratio) times its compressed size: stopped at \(produced) bytes from \(consumed) compressed bytes (the cap against decompression bombs: \(ratio) times the compressed size, at least \(Cap.mebibytes(floor)))\(tail)"
    }

    static func mebibytes(_ bytes: Int64) -> String {
      bytes > 0 && bytes % (1 << 20) == 0 ? "\(bytes >> 20) MiB" : "\(bytes) bytes"
    }
  }

  let wrapper: Wrapper
  let cap: Cap
  // Safety: zlib's state and the input buffer are allocated in `init` and freed only in `deinit`.
  let stream: UnsafeMutablePointer<z_stream>
  let input: UnsafeMutablePointer<UInt8>
  let inputCapacity: Int
  /// The source of the byte after the cap: output past it is asked for one byte at a time.
  // Safety: one byte, allocated in `init` and freed only in `deinit`, as `stream`.
  let probe: UnsafeMutablePointer<UInt8>
  /// The compressed source said it has no more bytes.
  var sourceEnded = false
  /// The (last) compressed stream ended; for gzip another member may follow.
  var streamEnded = false
  var finished = false
  var failure: CaptureError?
  /// Compressed bytes handed to zlib so far (for messages).
  var compressedRead: Int64 = 0
  /// Compressed bytes zlib has inflated, and the bytes it gave (all gzip members together).
  private(set) var consumed: Int64 = 0
  private(set) var produced: Int64 = 0

  static let inputChunk = 64 * 1024

  /// `pending`: compressed bytes already read from the source (format detection buffered them).
  init(_ wrapper: Wrapper, pending: [UInt8] = [], cap: Cap = .none) throws(CaptureError) {
    self.wrapper = wrapper
    self.cap = cap
    inputCapacity = max(Self.inputChunk, pending.count)
    // Safety: just allocated, with room for at least `pending.count` bytes (`inputCapacity`).
    let input = UnsafeMutablePointer<UInt8>.allocate(capacity: inputCapacity)
    pending.withUnsafeBufferPointer { if let base = $0.baseAddress { input.update(from: base, count: $0.count) } }
    self.input = input
    probe = .allocate(capacity: 1)
    stream = .allocate(capacity: 1)
    stream.initialize(to: z_stream())
    stream.pointee.next_in = input
    stream.pointee.avail_in = UInt32(pending.count)
    compressedRead = Int64(pending.count)
    guard bledissect_inflate_init2(stream, wrapper.windowBits) == Z_OK else {
      input.deallocate()
      probe.deallocate()
      stream.deallocate()
      throw .readFailed("zlib could not start inflating")
    }
  }

  deinit {
    inflateEnd(stream)
    stream.deinitialize(count: 1)
    stream.deallocate()
    input.deallocate()
    probe.deallocate()
  }

  /// Inflates into `destination` (at most `count` bytes); 0 at the end of the compressed data.
  /// `refill` reads compressed bytes (0 at the end of the source, -1 for "none yet, ask later",
  /// which `read` then returns).
  /// - Throws: `.readFailed` for corrupt data or compressed data cut short, `.inflationCapped`
  ///   when the output would pass the cap (all of it before the cap was given), every time after.
  func read(
    // Safety: the caller lends `count` writable bytes at `destination` for the call alone.
    into destination: UnsafeMutablePointer<UInt8>, count: Int,
    // Safety: `refill` is lent `input` and its capacity, and writes at most that many bytes.
    refill: (UnsafeMutablePointer<UInt8>, Int) throws(CaptureError) -> Int
  ) throws(CaptureError) -> Int {
    if let failure { throw failure }
    if finished || count == 0 { return 0 }
    while true {
      if stream.pointee.avail_in == 0 && !sourceEnded {
        let got = try refill(input, inputCapacity)
        if got < 0 { return -1 }
        if got == 0 {
          sourceEnded = true
        } else {
          stream.pointee.next_in = input
          stream.pointee.avail_in = UInt32(got)
          compressedRead += Int64(got)
        }
      }
      if streamEnded {
        // gzip: another member, or the end (anything else after the last member is ignored,
        // as gzip -d does with trailing zeros).
        if wrapper == .gzip && stream.pointee.avail_in == 0 && !sourceEnded { continue }
        if wrapper == .gzip && stream.pointee.avail_in > 0 && stream.pointee.next_in.pointee == 0x1F {
          inflateReset(stream)
          streamEnded = false
        } else {
          finished = true
          return 0
        }
      }
      // At the cap, one byte is asked for alone: if the stream has one more, it is past the cap
      // (unless inflating it allowed more: the ratio counts the compressed bytes it took).
      let room = cap.allowed(consumed: consumed).saturatingSubtract(self.produced)
      let probing = room <= 0
      stream.pointee.next_out = probing ? probe : destination
      let offered = probing ? 1 : UInt32(min(count, Int(UInt32.max), Int(clamping: room)))
      stream.pointee.avail_out = offered
      let availableBefore = stream.pointee.avail_in
      let status = inflate(stream, Z_NO_FLUSH)
      consumed = consumed.saturatingAdd(Int64(availableBefore - stream.pointee.avail_in))
      let produced = Int(offered - stream.pointee.avail_out)
      if probing && produced > 0 {
        guard self.produced < cap.allowed(consumed: consumed) else {
          return try fail(.inflationCapped(cap.message(produced: self.produced, consumed: consumed)))
        }
        destination.pointee = probe.pointee
      }
      self.produced = self.produced.saturatingAdd(Int64(produced))
      switch status {
      case Z_STREAM_END:
        streamEnded = true
        if produced > 0 { return produced }
      case Z_OK, Z_BUF_ERROR:
        if produced > 0 { return produced }
        if sourceEnded && stream.pointee.avail_in == 0 {
          return try fail(.readFailed("\(wrapper.name) data ends before the end of the compressed stream (truncated after \(compressedRead) compressed bytes)"))
        }
      default:
        let detail = stream.pointee.msg.map { String(cString: $0) } ?? "zlib status \(status)"
        return try fail(.readFailed("corrupt \(wrapper.name) data: \(detail)"))
      }
    }
  }

  private func fail(_ error: CaptureError) throws(CaptureError) -> Int {
    failure = error
    throw error
  }

  /// Inflates into `destination` (at most its count), the compressed bytes taken from `source`
  /// on from `offset` (moved past those taken); 0 at the end of the compressed data.
  func read(into destination: inout [UInt8], from source: [UInt8], offset: inout Int) throws(CaptureError) -> Int {
    guard !destination.isEmpty else { return 0 }
    // Safety: zlib is lent the array's own bytes, and their count, for the call alone.
    return try destination.withUnsafeMutableBufferPointer { target throws(CaptureError) in
      try read(into: target.baseAddress!, count: target.count) { room, size in
        let count = max(0, min(size, source.count - offset))
        // Safety: `count` is at most the room's size and at most what is left of `source`.
        source[offset..<(offset + count)].withUnsafeBufferPointer { if let base = $0.baseAddress { room.update(from: base, count: count) } }
        offset += count
        return count
      }
    }
  }

  /// Inflates all of `bytes` (a whole zlib or raw stream) into memory, refusing more than `limit`
  /// bytes of output (`.inflationCapped`).
  static func inflateAll(_ bytes: ArraySlice<UInt8>, wrapper: Wrapper, limit: Int) throws(CaptureError) -> [UInt8] {
    var output: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    let cap = Cap(floor: Int64(limit), ratio: nil, subject: "\(wrapper.name) data")
    let inflater = try Inflater(wrapper, pending: Array(bytes), cap: cap)
    var taken = 0
    while true {
      let got = try inflater.read(into: &chunk, from: [], offset: &taken)
      if got == 0 { return output }
      output.append(contentsOf: chunk[0..<got])
    }
  }
}

/// Compression through zlib, for writing fixtures and archives (`Deflate.compress`).
package enum Deflate {
  /// What surrounds the deflate data.
  package enum Wrapper: Sendable {
    /// RFC 1952; members may follow one another (as `cat a.gz b.gz` makes).
    case gzip
    /// RFC 1950 (zlib header and Adler-32).
    case zlib
    /// RFC 1951 alone (zip method 8).
    case raw

    /// zlib's `windowBits` for the wrapper.
    var windowBits: Int32 {
      switch self {
      case .gzip: return 16 + 15
      case .zlib: return 15
      case .raw: return -15
      }
    }

    var name: String {
      switch self {
      case .gzip: return "gzip"
      case .zlib: return "zlib"
      case .raw: return "deflate"
      }
    }
  }

  /// Compresses `bytes` whole with zlib's default level.
  package static func compress(_ bytes: [UInt8], wrapper: Wrapper) -> [UInt8] {
    // Safety: zlib's state is freed by the `defer` below, after its last use.
    let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
    stream.initialize(to: z_stream())
    defer {
      deflateEnd(stream)
      stream.deinitialize(count: 1)
      stream.deallocate()
    }
    guard bledissect_deflate_init2(stream, Z_DEFAULT_COMPRESSION, wrapper.windowBits) == Z_OK else { return [] }
    var input = bytes
    let bound = Int(deflateBound(stream, UInt(bytes.count))) + 64
    var output = [UInt8](repeating: 0, count: bound)
    // Safety: zlib is lent both arrays' bytes, with their counts, for this one deflate call.
    let written = input.withUnsafeMutableBufferPointer { source in
      output.withUnsafeMutableBufferPointer { target in
        stream.pointee.next_in = source.baseAddress
        stream.pointee.avail_in = UInt32(source.count)
        stream.pointee.next_out = target.baseAddress
        stream.pointee.avail_out = UInt32(target.count)
        _ = deflate(stream, Z_FINISH)
        return target.count - Int(stream.pointee.avail_out)
      }
    }
    return Array(output[0..<written])
  }

  /// CRC-32 (zip entries).
  package static func crc32(_ bytes: [UInt8]) -> UInt32 {
    // Safety: the array's bytes are lent for the call.
    bytes.withUnsafeBufferPointer { crc32(0, $0) }
  }

  /// CRC-32 of `bytes` continued from `running` (the CRC of the bytes before them).
  // Safety: zlib reads the lent bytes, each part within them, during the call alone.
  static func crc32(_ running: UInt32, _ bytes: UnsafeBufferPointer<UInt8>) -> UInt32 {
    var crc = UInt(running)
    var rest = bytes
    // zlib takes at most UInt32.max bytes per call.
    while !rest.isEmpty {
      // Safety: a prefix and the rest after it, both within the lent bytes.
      let part = UnsafeBufferPointer(rebasing: rest.prefix(Int(Int32.max)))
      crc = CZlib.crc32(crc, part.baseAddress, UInt32(part.count))
      rest = UnsafeBufferPointer(rebasing: rest.dropFirst(part.count))
    }
    return UInt32(truncatingIfNeeded: crc)
  }
}
