#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import BLECore

/// A buffered, forward-only byte source over a file descriptor (a file, a pipe or stdin).
///
/// Readers ask for exactly the bytes of the next header or record; the buffer grows only to the
/// largest record asked for, which each format bounds before asking, so memory stays flat.
// Safety: Sendable so a reader can be handed to the thread that reads it; one thread at a time uses it.
public final class InputSource: @unchecked Sendable {
  let fd: Int32
  let ownsDescriptor: Bool
  /// The buffer, managed by hand: reading it involves no array (no exclusivity tracking or
  /// uniqueness checks on the per-record path).
  // Safety: `bufferSize` bytes, allocated by the initializers and `makeRoom`, freed in `deinit`.
  var buffer: UnsafeMutablePointer<UInt8>
  var bufferSize: Int
  /// Next unread byte in `buffer`.
  var start = 0
  /// One past the last valid byte in `buffer`.
  var end = 0
  var reachedEOF = false
  /// File offset of `buffer[0]`: moved only when the buffer is compacted or bypassed, so that
  /// consuming bytes (per record) writes `start` alone.
  var bufferOffset: Int64 = 0
  /// File offset of `buffer[start]`.
  public var position: Int64 { bufferOffset &+ Int64(start) }
  public let name: String
  /// Whether the descriptor is a regular file: reads from it never wait for a writer.
  package let isRegularFile: Bool
  /// The source whose descriptor a region reads (kept open while the region is read).
  var owner: InputSource?
  /// Set for live inputs (`bledissect live`): what happens before a read that would wait and at
  /// the end of a followed file. Nil for everything else (the end of a file is its end).
  package var live: (any LiveInputWaiting)?

  static let chunkSize = 256 * 1024

  /// Set once the content turned out to be compressed (`startInflating`): reads then return
  /// inflated bytes, and `position` counts them.
  var inflater: Inflater?
  /// How far compressed content read through this source may inflate; zip entries and summaries
  /// found in it get the same. Set before the capture is opened (tests and fuzz targets lower it).
  package var inflationLimits = InflationLimits.standard
  /// Where the content comes from when it is made as it is read (a btsnooz summary converted to
  /// btsnoop): no descriptor then.
  var producer: (any ContentProducer)?
  /// A part of a regular file read with `pread` (a zip entry): the next offset and the bytes left.
  var region: (offset: Int64, remaining: Int64)?

  /// What a zip entry's directory says its content is: checked against the bytes as they are
  /// read (more than declared as soon as they come; fewer, and the CRC-32, at the end).
  struct DeclaredContent {
    let entry: String
    let size: Int64
    let crc: UInt32
    var seen: Int64 = 0
    var running: UInt32 = 0
  }
  var declared: DeclaredContent?
  /// Bytes given in memory that are a whole zip entry (`declared` counted them all at the
  /// start): the end check runs where a file's read would find the end, so both agree.
  var declaredCountedInMemory = false

  /// Opens `path`, or standard input for `-`.
  public convenience init(path: String) throws(CaptureError) {
    try self.init(pathBytes: Array(path.utf8), name: path)
  }

  /// Opens the file named by `pathBytes` exactly as the system spells it (file names need not
  /// be UTF-8), or standard input for `-`; `name` is how messages show it.
  public init(pathBytes: [UInt8], name: String) throws(CaptureError) {
    self.name = name
    if pathBytes == [UInt8(ascii: "-")] {
      fd = 0
      ownsDescriptor = false
    } else {
      guard !pathBytes.contains(0) else { throw .cannotOpen("file name holds a NUL byte") }
      let opened = withCPath(pathBytes) { open($0, O_RDONLY) }
      guard opened >= 0 else { throw .cannotOpen(String(cString: strerror(errno))) }
      var info = stat()
      if fstat(opened, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
        close(opened)
        throw .cannotOpen("is a directory")
      }
      fd = opened
      ownsDescriptor = true
    }
    isRegularFile = Self.isRegularFile(fd)
    buffer = .allocate(capacity: Self.chunkSize)
    bufferSize = Self.chunkSize
  }

  /// Wraps an already-open descriptor (tests, live feeds).
  public init(descriptor: Int32, name: String, owns: Bool) {
    fd = descriptor
    ownsDescriptor = owns
    self.name = name
    isRegularFile = Self.isRegularFile(descriptor)
    buffer = .allocate(capacity: Self.chunkSize)
    bufferSize = Self.chunkSize
  }

  static func isRegularFile(_ fd: Int32) -> Bool {
    var info = stat()
    return fstat(fd, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
  }

  /// Reads `bytes` from memory, as if a file held them (fuzz targets, tests): no descriptor.
  public init(bytes: [UInt8], name: String) {
    fd = -1
    ownsDescriptor = false
    self.name = name
    bufferSize = max(bytes.count, 1)
    // Safety: just allocated, with room for all of `bytes`.
    let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: bufferSize)
    bytes.withUnsafeBufferPointer { if let base = $0.baseAddress { buffer.update(from: base, count: $0.count) } }
    self.buffer = buffer
    end = bytes.count
    reachedEOF = true
    isRegularFile = true
  }

  deinit {
    if ownsDescriptor { close(fd) }
    buffer.deallocate()
  }

  public var available: Int { end - start }

  /// Makes at least `count` bytes available unless the input ends first; returns what is available.
  @discardableResult
  package func fill(_ count: Int) throws(CaptureError) -> Int {
    if end - start >= count { return end - start }
    if reachedEOF {
      if declaredCountedInMemory { try checkDeclared(buffer, 0) }
      return end - start
    }
    makeRoom(for: count)
    while end - start < count {
      if let live, !isRegularFile, !live.awaitReadable(fd) {
        reachedEOF = true
        break
      }
      let got = try readSome(into: buffer + end, count: bufferSize - end)
      if got == 0 {
        // A followed file: its writer may add more (the waiter sleeps, then says read again).
        if let live, isRegularFile, live.atEndOfFile(fd) { continue }
        reachedEOF = true
        break
      }
      end += got
    }
    return end - start
  }

  /// Whether `count` bytes are buffered, or the input ends before them, without waiting for a
  /// writer: reads only what a pipe already holds (poll with no timeout before each read).
  /// Always true for regular files. A read error answers true: the next `fill` reports it.
  package func canFillWithoutWaiting(_ count: Int) -> Bool {
    if end - start >= count || reachedEOF || (isRegularFile && live == nil) { return true }
    makeRoom(for: count)
    while end - start < count {
      if isRegularFile {
        // A followed file: a read never waits; at its end the next record is not written yet.
        let got: Int
        do {
          got = try readSome(into: buffer + end, count: bufferSize - end)
        } catch {
          return true  // the next `fill` reports it
        }
        if got == 0 { return false }
        end += got
        continue
      }
      let got: Int
      do {
        got = try readSome(into: buffer + end, count: bufferSize - end, mayWait: false)
      } catch {
        return true  // the next `fill` reports it
      }
      // Nothing to read yet: a read would wait.
      if got < 0 { return false }
      if got == 0 {
        reachedEOF = true
        return true
      }
      end += got
    }
    return true
  }

  /// Whether a read of the descriptor would return at once (poll with no timeout). Errors and
  /// hang-ups answer true: the read reports them.
  private func descriptorIsReady() -> Bool {
    while true {
      var request = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      let ready = poll(&request, 1, 0)
      if ready < 0 && errno == EINTR { continue }
      return ready != 0
    }
  }

  /// Reads what the source holds next (inflated when compressed); 0 at its end. Unless
  /// `mayWait`, -1 when the descriptor has nothing yet (compressed input is asked for only then).
  // Safety: `destination` is room for `count` bytes, in `buffer` or libpcap's, for this call alone.
  private func readSome(into destination: UnsafeMutablePointer<UInt8>, count: Int, mayWait: Bool = true) throws(CaptureError) -> Int {
    let got = try readContent(into: destination, count: count, mayWait: mayWait)
    if declared != nil, got >= 0 { try checkDeclared(destination, got) }
    return got
  }

  /// Counts what a zip entry gave against its directory's sizes and CRC-32.
  // Safety: `bytes` are the `count` bytes just read, lent for this call alone.
  private func checkDeclared(_ bytes: UnsafeMutablePointer<UInt8>, _ count: Int) throws(CaptureError) {
    guard var check = declared else { return }
    if count > 0 {
      check.seen += Int64(count)
      // Safety: as above: the `count` bytes just read.
      check.running = Deflate.crc32(check.running, UnsafeBufferPointer(start: bytes, count: count))
      declared = check
      if check.seen > check.size {
        throw .corrupt("zip entry \(check.entry) holds more than the \(check.size) bytes its directory entry declares")
      }
      return
    }
    if check.seen != check.size {
      throw .corrupt("zip entry \(check.entry) holds \(check.seen) bytes; its directory entry declares \(check.size)")
    }
    if check.running != check.crc {
      throw .corrupt("zip entry \(check.entry) fails its CRC-32 check (\(Self.hex(check.running)) computed, \(Self.hex(check.crc)) declared)")
    }
  }

  static func hex(_ value: UInt32) -> String {
    let digits = String(value, radix: 16)
    return "0x" + String(repeating: "0", count: 8 - digits.count) + digits
  }

  // Safety: as `readSome`: room for `count` bytes, lent for this call alone.
  private func readContent(into destination: UnsafeMutablePointer<UInt8>, count: Int, mayWait: Bool) throws(CaptureError) -> Int {
    if let producer {
      let made = try producer.read(upTo: count)
      // Safety: a producer gives at most `count` bytes, the room the caller lent at `destination`.
      made.withUnsafeBufferPointer { if let base = $0.baseAddress { destination.update(from: base, count: min($0.count, count)) } }
      return min(made.count, count)
    }
    guard let inflater else {
      if !mayWait && !descriptorIsReady() { return -1 }
      return try readSource(into: destination, count: count)
    }
    return try inflater.read(into: destination, count: count) { target, size throws(CaptureError) in
      if !mayWait && !isRegularFile && !descriptorIsReady() { return -1 }
      return try readSource(into: target, count: size)
    }
  }

  /// Reads the underlying bytes: the descriptor, or the file region; 0 at the end (and always
  /// for bytes given in memory, which were all buffered at the start).
  // Safety: as `readSome`; read(2) and pread(2) write at most `count` bytes there.
  private func readSource(into destination: UnsafeMutablePointer<UInt8>, count: Int) throws(CaptureError) -> Int {
    if fd < 0 { return 0 }
    while true {
      let got: Int
      if let region {
        let wanted = Int(min(Int64(count), region.remaining))
        if wanted == 0 { return 0 }
        got = pread(fd, destination, wanted, off_t(region.offset))
        if got > 0 { self.region = (region.offset + Int64(got), region.remaining - Int64(got)) }
      } else {
        got = read(fd, destination, count)
      }
      if got < 0 {
        if errno == EINTR || errno == EAGAIN { continue }
        throw .readFailed(String(cString: strerror(errno)))
      }
      return got
    }
  }

  /// From here on, the content is `wrapper`-compressed: the bytes buffered so far (from the
  /// start) become the inflater's first input, and reads return inflated bytes from offset 0,
  /// up to the cap of `inflationLimits` (`subject` and `advice` name it in the message).
  func startInflating(_ wrapper: Inflater.Wrapper, subject: String, advice: String) throws(CaptureError) {
    // Safety: `start..<end` are the buffered bytes, within the buffer; copied out at once.
    let pending = Array(UnsafeBufferPointer(start: buffer + start, count: end - start))
    inflater = try Inflater(wrapper, pending: pending, cap: ratioCap(subject: subject, advice: advice))
    start = 0
    end = 0
    bufferOffset = 0
    reachedEOF = false
  }

  /// The cap for gzip files and zip entries: `inflationLimits`' ratio and floor.
  func ratioCap(subject: String, advice: String) -> Inflater.Cap {
    Inflater.Cap(floor: inflationLimits.floor, ratio: inflationLimits.ratio, subject: subject, advice: advice)
  }

  /// Reads `length` bytes of the regular file open in `input` from `offset` on (not owning it),
  /// `wrapper`-compressed or not (a zip entry; `subject` and `advice` name its cap in messages).
  init(
    region input: InputSource, offset: Int64, length: Int64, wrapper: Inflater.Wrapper?, name: String, subject: String, advice: String
  ) throws(CaptureError) {
    fd = input.fd
    ownsDescriptor = false
    owner = input
    self.name = name
    isRegularFile = true
    buffer = .allocate(capacity: Self.chunkSize)
    bufferSize = Self.chunkSize
    region = (offset, length)
    inflationLimits = input.inflationLimits
    if let wrapper {
      inflater = try Inflater(wrapper, cap: ratioCap(subject: subject, advice: advice))
    }
  }

  /// Reads what `producer` makes (a btsnooz summary as btsnoop); `name` is for messages.
  init(producer: any ContentProducer, name: String, limits: InflationLimits) {
    fd = -1
    ownsDescriptor = false
    self.name = name
    isRegularFile = true
    buffer = .allocate(capacity: Self.chunkSize)
    bufferSize = Self.chunkSize
    self.producer = producer
    inflationLimits = limits
  }

  /// Makes room in the buffer for `count` unread bytes from the read position.
  private func makeRoom(for count: Int) {
    if start + count > bufferSize {
      // Move the unread bytes to the front; grow only when one request is larger than the buffer.
      let unread = end - start
      if count > bufferSize {
        let grownSize = max(count, bufferSize * 2)
        // Safety: the unread bytes fit the larger buffer; the old one is freed after the copy.
        let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: grownSize)
        grown.update(from: buffer + start, count: unread)
        buffer.deallocate()
        buffer = grown
        bufferSize = grownSize
      } else if unread > 0 {
        _ = memmove(buffer, buffer + start, unread)
      }
      bufferOffset &+= Int64(start)
      start = 0
      end = unread
    }
  }

  /// The byte at `index` past the read position; the caller has filled that far.
  @inline(__always) public func peek(_ index: Int) -> UInt8 {
    assert(index >= 0 && start + index < end, "peek past the filled bytes")
    return buffer[start + index]
  }

  // Safety: at most the `available` bytes from `start`, copied out at once.
  package func peekBytes(_ count: Int) -> [UInt8] { Array(UnsafeBufferPointer(start: buffer + start, count: min(count, available))) }

  @inline(__always) package func peekUInt32BE(_ index: Int) -> UInt32 {
    let i = start + index
    assert(index >= 0 && i + 4 <= end, "peek past the filled bytes")
    return UInt32(buffer[i]) << 24 | UInt32(buffer[i + 1]) << 16 | UInt32(buffer[i + 2]) << 8 | UInt32(buffer[i + 3])
  }

  @inline(__always) package func peekUInt32LE(_ index: Int) -> UInt32 {
    let i = start + index
    assert(index >= 0 && i + 4 <= end, "peek past the filled bytes")
    return UInt32(buffer[i]) | UInt32(buffer[i + 1]) << 8 | UInt32(buffer[i + 2]) << 16 | UInt32(buffer[i + 3]) << 24
  }

  @inline(__always) package func peekUInt64BE(_ index: Int) -> UInt64 {
    UInt64(peekUInt32BE(index)) << 32 | UInt64(peekUInt32BE(index + 4))
  }

  /// Copies `count` filled bytes starting `offset` past the read position.
  package func copy(from offset: Int, count: Int) -> [UInt8] {
    let from = start + offset
    precondition(offset >= 0 && count >= 0 && from + count <= end, "copy past the filled bytes")
    // Safety: the precondition keeps the copy within the filled bytes.
    return Array(UnsafeBufferPointer(start: buffer + from, count: count))
  }

  /// Replaces `destination`'s contents with `count` filled bytes from `offset` past the read
  /// position, keeping its capacity (no allocation once it is large enough).
  package func copy(from offset: Int, count: Int, into destination: inout [UInt8]) {
    // Checked in debug builds only: readers copy what `fill` made available, once a record.
    assert(offset >= 0 && count >= 0 && start + offset + count <= end, "copy past the filled bytes")
    // Safety: within the filled bytes, as readers only copy what `fill` said is there (one call resizes and copies).
    destination.replaceSubrange(0..<destination.count, with: UnsafeBufferPointer(start: buffer + start + offset, count: count))
  }

  package func consume(_ count: Int) {
    start += count
  }

  /// Hands buffered bytes to `destination` (for libpcap's FILE*), returning how many were copied.
  // Safety: libpcap lends `max` bytes at `destination`; at most that many are copied.
  func drain(into destination: UnsafeMutableRawPointer, max: Int) -> Int {
    let count = min(max, available)
    if count > 0 {
      _ = memcpy(destination, buffer + start, count)
      consume(count)
    }
    return count
  }

  /// Why `readThrough` last failed (libpcap sees only -1).
  var readThroughFailure: CaptureError?

  /// Reads directly from the descriptor once the buffer is drained (used by libpcap's FILE*).
  // Safety: as `drain`: libpcap lends `max` bytes at `destination`, and no more are written.
  func readThrough(into destination: UnsafeMutableRawPointer, max: Int) -> Int {
    let buffered = drain(into: destination, max: max)
    if buffered == 0 && reachedEOF && declaredCountedInMemory {
      do {
        try checkDeclared(buffer, 0)
      } catch {
        readThroughFailure = error
        errno = EIO
        return -1
      }
    }
    if buffered > 0 || reachedEOF { return buffered }
    if let live, !isRegularFile, !live.awaitReadable(fd) {
      reachedEOF = true
      return 0
    }
    do {
      let got = try readSome(into: destination.assumingMemoryBound(to: UInt8.self), count: max)
      bufferOffset &+= Int64(got)
      return got
    } catch {
      readThroughFailure = error
      errno = EIO
      return -1
    }
  }
}


/// Content made as it is read (`InputSource(producer:)`).
protocol ContentProducer: AnyObject {
  /// The next bytes, at most `count` of them; none at the end.
  func read(upTo count: Int) throws(CaptureError) -> ArraySlice<UInt8>
}

/// What a live input does where a file's reading would end or a pipe's would wait
/// (`LiveReader`): wait for data or for a request to stop, follow a growing file.
package protocol LiveInputWaiting: AnyObject {
  /// Before a read of a descriptor that may wait (a pipe, a socket): waits until it is
  /// readable (true) or the reading should stop (false: the input ends here).
  func awaitReadable(_ fd: Int32) -> Bool
  /// A read of a regular file found its end: waits a little and returns true to read again
  /// (the writer may have added more), or false to end the input here (a request to stop, the
  /// file truncated or replaced).
  func atEndOfFile(_ fd: Int32) -> Bool
}
