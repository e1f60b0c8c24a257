#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A file read whole besides the capture (a GATT map, a decoder file): a regular file, or a
/// pipe, FIFO or device (`--gatt <(…)`, `/dev/stdin`), read through POSIX calls so that every
/// failure has its true reason (errno right after the call that failed) and reads are bounded:
/// never more than the caller's cap plus one byte, whatever the file claims or does not claim
/// (a pipe has no size; `/dev/zero` never ends).
///
/// It is opened without waiting (`O_NONBLOCK`): opening a FIFO would otherwise wait for a
/// writer forever. A pipe with a writer (process substitution) is read as its writer writes; a
/// FIFO with none is given `writerWait` for one to come and write, then refused.
package final class SideFile {
  package struct Failure: Error {
    /// Why, as the system says it ("No such file or directory", "is a directory").
    package var reason: String
    package init(reason: String) { self.reason = reason }
  }

  /// How long a FIFO that nothing writes to is waited for before it is refused.
  package static let writerWait: Int32 = 2000

  package let descriptor: Int32
  /// A regular file: its size is known, and it can be opened again by name (captures are
  /// streamed from the name, not held in memory).
  package let isRegularFile: Bool
  package let isFIFO: Bool
  /// The size `fstat` gives for a regular file.
  package let size: Int64
  /// What was read so far.
  package private(set) var bytes: [UInt8] = []
  /// Whether the end of the file was reached.
  package private(set) var ended = false
  private var waitedForWriter = false
  private var noWriter = false

  package init(pathBytes path: [UInt8]) throws(Failure) {
    guard !path.contains(0) else { throw Failure(reason: "file name holds a NUL byte") }
    let opened = withCPath(path) { open($0, O_RDONLY | O_NONBLOCK | O_CLOEXEC) }
    guard opened >= 0 else { throw Failure(reason: String(cString: strerror(errno))) }
    var info = stat()
    guard fstat(opened, &info) == 0 else {
      let reason = String(cString: strerror(errno))
      close(opened)
      throw Failure(reason: reason)
    }
    let type = info.st_mode & S_IFMT
    guard type != S_IFDIR else {
      close(opened)
      throw Failure(reason: "is a directory")
    }
    descriptor = opened
    isRegularFile = type == S_IFREG
    isFIFO = type == S_IFIFO
    size = isRegularFile ? Int64(info.st_size) : 0
    // Only a FIFO is read without waiting (to tell a writer that is slow from none at all);
    // anything else (a file, a terminal, a device) is read as usual.
    if !isFIFO { _ = fcntl(opened, F_SETFL, fcntl(opened, F_GETFL) & ~O_NONBLOCK) }
  }

  deinit { close(descriptor) }

  /// Reads on until `count` bytes are held or the file ends (`ended`).
  package func read(upTo count: Int) throws(Failure) {
    var chunk = [UInt8](repeating: 0, count: 64 << 10)
    while bytes.count < count, !ended {
      let wanted = min(chunk.count, count - bytes.count)
      let got = readDescriptor(descriptor, into: &chunk, count: wanted)
      if got > 0 {
        bytes += chunk[0..<got]
        noWriter = false
        continue
      }
      if got == 0 {
        // The end; for a FIFO before its first byte, possibly no writer yet: wait a little for
        // one to come and write (a writer that comes and goes empty-handed ends it too), then
        // look once more (a writer that came but has not written yet is waited for).
        if isFIFO, bytes.isEmpty, !waitedForWriter {
          waitedForWriter = true
          noWriter = try !wait(Self.writerWait)
          continue
        }
        if noWriter { throw Failure(reason: "no program writes to this named pipe: nothing came within \(Self.writerWait / 1000) s") }
        ended = true
        continue
      }
      let error = errno
      noWriter = false
      switch error {
      case EINTR: continue
      case EAGAIN, EWOULDBLOCK:
        // A pipe whose writer has written nothing yet: wait for it, as a capture read from a
        // pipe does.
        _ = try wait(-1)
      default: throw Failure(reason: String(cString: strerror(error)))
      }
    }
  }

  /// Waits until the descriptor is readable (or its writer left); false after `milliseconds`
  /// (-1: no limit).
  private func wait(_ milliseconds: Int32) throws(Failure) -> Bool {
    while true {
      var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
      let ready = poll(&entry, 1, milliseconds)
      if ready > 0 { return true }
      if ready == 0 { return false }
      let error = errno
      if error == EINTR { continue }
      throw Failure(reason: String(cString: strerror(error)))
    }
  }
}
