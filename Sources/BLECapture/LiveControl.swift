#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A request to stop a live read, made from any thread (a signal source's handler): a
/// self-pipe that every wait of a live input watches, so a read waiting for a writer, a
/// followed file's pause and a reconnection's pause all end at once.
package final class LiveControl: Sendable {
  let readEnd: Int32
  let writeEnd: Int32

  /// `watchedOutput`: a descriptor whose closing also asks to stop (-1 for none).
  package init(watchedOutput: Int32 = -1) {
    self.watchedOutput = watchedOutput
    var ends: [Int32] = [-1, -1]
    if pipe(&ends) != 0 { ends = [-1, -1] }
    readEnd = ends[0]
    writeEnd = ends[1]
    for end in ends where end >= 0 {
      _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
      _ = fcntl(end, F_SETFD, FD_CLOEXEC)
    }
  }

  deinit {
    if readEnd >= 0 { close(readEnd) }
    if writeEnd >= 0 { close(writeEnd) }
  }

  /// Asks the live read to end (safe from any thread; the pipe is never drained, so it stays
  /// asked).
  package func requestStop() {
    var byte: UInt8 = 1
    _ = write(writeEnd, &byte, 1)
  }

  /// The pipe's write end, for a signal handler: writing one byte to it is requesting a stop.
  package var writeDescriptor: Int32 { writeEnd }

  /// A descriptor whose closing also asks to stop (standard output when it is a pipe: its
  /// reader leaving, `| head`, ends a wait that no new record would end): watched for errors
  /// and hang-ups only. -1 for none.
  package let watchedOutput: Int32

  package var stopRequested: Bool { wait(milliseconds: 0) }

  /// Sleeps up to `milliseconds`; true as soon as a stop is (or was) requested.
  package func wait(milliseconds: Int32) -> Bool {
    waitFor(-1, milliseconds: milliseconds) == false
  }

  /// Waits until `fd` is readable (or at its end, or in error: the read says which): true; or
  /// until a stop is requested: false. `events` may ask for writability instead.
  package func waitFor(_ fd: Int32, events: Int32 = Int32(POLLIN), milliseconds: Int32 = -1) -> Bool? {
    // A negative descriptor is ignored by poll: then this only sleeps.
    var requests = [
      pollfd(fd: fd, events: Int16(events), revents: 0),
      pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0),
      pollfd(fd: watchedOutput, events: 0, revents: 0),
    ]
    while true {
      let ready = poll(&requests, 3, milliseconds)
      if ready < 0 && errno == EINTR { continue }
      if requests[1].revents != 0 || requests[2].revents != 0 { return false }
      if ready <= 0 { return nil }
      return true
    }
  }
}

/// Waits of a pipe, a FIFO or a socket: until data comes or a stop is requested. The end of
/// input is its end.
final class StreamWaiter: LiveInputWaiting {
  let control: LiveControl
  init(_ control: LiveControl) { self.control = control }
  func awaitReadable(_ fd: Int32) -> Bool { control.waitFor(fd) == true }
  func atEndOfFile(_ fd: Int32) -> Bool { false }
}

/// Follows a growing file (`tail -F`): at its end, looks every `interval` ms for more, for the
/// file shrinking (truncated: read it again from the start) and for its name now naming
/// another file (rotated: read the new one). While the header is awaited (`restartOnChange`),
/// any change of the file at its end (grown, rewritten in place) starts the reading over, so a
/// file rewritten while its first bytes were not yet a capture is read from its new start.
final class FileFollower: LiveInputWaiting {
  enum Change { case truncated, replaced, rewritten }
  let control: LiveControl
  let path: [UInt8]
  let interval: Int32
  private(set) var change: Change?
  /// Set while the capture's header is read (the reader is being opened).
  var restartOnChange = true
  /// Told once, with the file's size, when the header is waited for at the file's end (an
  /// empty or short file: silence would look like a hang).
  var waitingForHeader: ((Int64) -> Void)?

  init(_ control: LiveControl, path: [UInt8], interval: Int32) {
    self.control = control
    self.path = path
    self.interval = interval
  }

  func awaitReadable(_ fd: Int32) -> Bool { control.waitFor(fd) == true }

  func atEndOfFile(_ fd: Int32) -> Bool {
    if change != nil { return false }
    var open = stat()
    let size = fstat(fd, &open) == 0 ? Int64(open.st_size) : nil
    if let size {
      let offset = lseek(fd, 0, SEEK_CUR)
      if offset >= 0 && size < Int64(offset) {
        change = .truncated
        return false
      }
      var named = stat()
      let found = withCPath(path) { stat($0, &named) == 0 }
      // A name that names nothing for now (between the rename and the new file) is waited for.
      if found && (named.st_ino != open.st_ino || named.st_dev != open.st_dev) {
        change = .replaced
        return false
      }
    }
    if restartOnChange, let said = waitingForHeader {
      waitingForHeader = nil
      said(size ?? 0)
    }
    let before = restartOnChange ? FileSnapshot(path) : nil
    if control.wait(milliseconds: interval) { return false }
    if restartOnChange, FileSnapshot(path) != before {
      change = .rewritten
      return false
    }
    return true
  }
}
