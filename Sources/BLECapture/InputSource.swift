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
public final class InputSource: @unchecked Sendable {
  let fd: Int32
  let ownsDescriptor: Bool
  /// The buffer, managed by hand: reading it involves no array (no exclusivity tracking or
  /// uniqueness checks on the per-record path).
  var buffer: UnsafeMutablePointer<UInt8>
  var bufferSize: Int
  /// Next unread byte in `buffer`.
  var start = 0
  /// One past the last valid byte in `buffer`.
  var end = 0
  var reachedEOF = false
  /// File offset of `buffer[start]`.
  public private(set) var position: Int64 = 0
  public let name: String

  static let chunkSize = 256 * 1024

  /// Opens `path`, or standard input for `-`.
  public init(path: String) throws(CaptureError) {
    self.name = path
    if path == "-" {
      fd = 0
      ownsDescriptor = false
    } else {
      let opened = open(path, O_RDONLY)
      guard opened >= 0 else { throw .cannotOpen(String(cString: strerror(errno))) }
      var info = stat()
      if fstat(opened, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
        close(opened)
        throw .cannotOpen("is a directory")
      }
      fd = opened
      ownsDescriptor = true
    }
    buffer = .allocate(capacity: Self.chunkSize)
    bufferSize = Self.chunkSize
  }

  /// Wraps an already-open descriptor (tests, live feeds).
  public init(descriptor: Int32, name: String, owns: Bool) {
    fd = descriptor
    ownsDescriptor = owns
    self.name = name
    buffer = .allocate(capacity: Self.chunkSize)
    bufferSize = Self.chunkSize
  }

  /// Reads `bytes` from memory, as if a file held them (fuzz targets, tests): no descriptor.
  public init(bytes: UnsafeBufferPointer<UInt8>, name: String) {
    fd = -1
    ownsDescriptor = false
    self.name = name
    bufferSize = max(bytes.count, 1)
    buffer = .allocate(capacity: bufferSize)
    if let base = bytes.baseAddress { buffer.update(from: base, count: bytes.count) }
    end = bytes.count
    reachedEOF = true
  }

  deinit {
    if ownsDescriptor { close(fd) }
    buffer.deallocate()
  }

  public var available: Int { end - start }

  /// Makes at least `count` bytes available unless the input ends first; returns what is available.
  @discardableResult
  public func fill(_ count: Int) throws(CaptureError) -> Int {
    if end - start >= count || reachedEOF { return end - start }
    if start + count > bufferSize {
      // Move the unread bytes to the front; grow only when one request is larger than the buffer.
      let unread = end - start
      if count > bufferSize {
        let grownSize = max(count, bufferSize * 2)
        let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: grownSize)
        grown.update(from: buffer + start, count: unread)
        buffer.deallocate()
        buffer = grown
        bufferSize = grownSize
      } else if unread > 0 {
        _ = memmove(buffer, buffer + start, unread)
      }
      start = 0
      end = unread
    }
    while end - start < count {
      let got = read(fd, buffer + end, bufferSize - end)
      if got < 0 {
        if errno == EINTR { continue }
        throw .readFailed(String(cString: strerror(errno)))
      }
      if got == 0 {
        reachedEOF = true
        break
      }
      end += got
    }
    return end - start
  }

  /// The byte at `index` past the read position; the caller has filled that far.
  @inline(__always) public func peek(_ index: Int) -> UInt8 { buffer[start + index] }

  public func peekBytes(_ count: Int) -> [UInt8] { Array(UnsafeBufferPointer(start: buffer + start, count: min(count, available))) }

  @inline(__always) public func peekUInt32BE(_ index: Int) -> UInt32 {
    let i = start + index
    return UInt32(buffer[i]) << 24 | UInt32(buffer[i + 1]) << 16 | UInt32(buffer[i + 2]) << 8 | UInt32(buffer[i + 3])
  }

  @inline(__always) public func peekUInt32LE(_ index: Int) -> UInt32 {
    let i = start + index
    return UInt32(buffer[i]) | UInt32(buffer[i + 1]) << 8 | UInt32(buffer[i + 2]) << 16 | UInt32(buffer[i + 3]) << 24
  }

  @inline(__always) public func peekUInt64BE(_ index: Int) -> UInt64 {
    UInt64(peekUInt32BE(index)) << 32 | UInt64(peekUInt32BE(index + 4))
  }

  /// Copies `count` filled bytes starting `offset` past the read position.
  public func copy(from offset: Int, count: Int) -> [UInt8] {
    let from = start + offset
    return Array(UnsafeBufferPointer(start: buffer + from, count: count))
  }

  /// Replaces `destination`'s contents with `count` filled bytes from `offset` past the read
  /// position, keeping its capacity (no allocation once it is large enough).
  public func copy(from offset: Int, count: Int, into destination: inout [UInt8]) {
    let from = start + offset
    // Resize only when the length changes (records of one kind often repeat theirs), then copy.
    let have = destination.count
    if have > count {
      destination.removeLast(have - count)
    } else if have < count {
      destination.append(contentsOf: repeatElement(0, count: count - have))
    }
    if count > 0 {
      destination.withUnsafeMutableBufferPointer { $0.baseAddress!.update(from: buffer + from, count: count) }
    }
  }

  public func consume(_ count: Int) {
    start += count
    position += Int64(count)
  }

  /// Hands buffered bytes to `destination` (for libpcap's FILE*), returning how many were copied.
  func drain(into destination: UnsafeMutableRawPointer, max: Int) -> Int {
    let count = min(max, available)
    if count > 0 {
      _ = memcpy(destination, buffer + start, count)
      consume(count)
    }
    return count
  }

  /// Reads directly from the descriptor once the buffer is drained (used by libpcap's FILE*).
  func readThrough(into destination: UnsafeMutableRawPointer, max: Int) -> Int {
    let buffered = drain(into: destination, max: max)
    if buffered > 0 || reachedEOF { return buffered }
    while true {
      let got = read(fd, destination, max)
      if got < 0 && errno == EINTR { continue }
      if got > 0 { position += Int64(got) }
      return got
    }
  }
}
