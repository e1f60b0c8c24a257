#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import BLECore

/// Reads a capture as it is written (`bledissect live`): a growing file followed like
/// `tail -F`, a pipe or FIFO, or Android's btsnoop feed over TCP, reconnecting when it drops.
///
/// The records are those of the readers (btsnoop, PacketLogger; pcap and pcapng from a pipe);
/// across a truncation, a rotation or a reconnection a new reader starts on the new bytes
/// (their header) and the records go on. It ends when the control asks to stop (the
/// record being read then is not returned), at the end of a pipe, or at an error that
/// reading again would not cure. Events worth a line (truncated, reconnecting) go to `notice`,
/// called on the reading thread.
package final class LiveReader: CaptureReader {
  package enum Origin: Sendable {
    /// A file followed as it grows (a regular file; a FIFO is read as a stream).
    case file(path: [UInt8], name: String)
    /// An open descriptor: standard input, a FIFO.
    case stream(descriptor: Int32, name: String, owns: Bool)
    /// Android's snoop feed (`adb forward tcp:8872 tcp:8872`): a btsnoop header, then records.
    case android(host: String, port: UInt16)
  }

  package let origin: Origin
  let control: LiveControl
  let damagePolicy: DamagePolicy
  let notice: (String) -> Void
  /// How long a followed file's end is waited on before looking again (ms).
  package var pollInterval: Int32 = 50
  /// How long between connection attempts (ms).
  package var retryInterval: Int32 = 1000
  /// Each record read is written here first (`-w`), whole, straight to the file.
  package var recorder: CaptureRecorder?

  var inner: (any CaptureReader)?
  var follower: FileFollower?
  /// A stream's descriptor is read once: its end is the end.
  var streamUsed = false
  /// A followed file: true once a capture was read from it or its creation was waited for;
  /// from then on, a name that names nothing or no capture is waited on, not an error.
  var following = false
  /// A followed name's file is not a capture: said once until it is one again.
  var invalidSaid = false
  package private(set) var frames = 0
  package private(set) var bytes: Int64 = 0
  /// Times the feed was lost and taken up again: connections dropped, files truncated or replaced.
  package private(set) var interruptions = 0
  /// Damage skipped by readers before the current one.
  var earlierDamage = DamageTally()
  /// The first failure to write the recording (it then stops).
  package var recordingFailure: String? { recorder?.failure }

  /// Checks that a file can be read (missing, permission denied, a directory); waits for nothing.
  package init(_ origin: Origin, control: LiveControl, damage: DamagePolicy = .resynchronize, notice: @escaping (String) -> Void) throws(CaptureError) {
    self.origin = origin
    self.control = control
    self.damagePolicy = damage
    self.notice = notice
    if case .file(let path, let name) = origin {
      // Opened now for the error; opened again when read. A name that names nothing yet is
      // waited for (tail -F), when its directory exists: a missing directory is a wrong path.
      do {
        _ = try InputSource(pathBytes: path, name: name)
      } catch {
        guard error == .cannotOpen(String(cString: strerror(ENOENT))), FileSnapshot(path) == nil, Self.directoryExists(of: path) else { throw error }
      }
    }
  }

  /// Whether the directory a path names its file in exists (the current one for a bare name).
  static func directoryExists(of path: [UInt8]) -> Bool {
    guard let slash = path.lastIndex(of: UInt8(ascii: "/")) else { return true }
    let directory = slash == 0 ? [UInt8(ascii: "/")] : Array(path[..<slash])
    var info = stat()
    let found = withCPath(directory) { stat($0, &info) == 0 }
    return found && (info.st_mode & S_IFMT) == S_IFDIR
  }

  package var name: String {
    switch origin {
    case .file(_, let name), .stream(_, let name, _): return name
    case .android(let host, let port): return "\(host):\(port)"
    }
  }

  package var format: CaptureFormat { inner?.format ?? CaptureFormat(name: "live", detail: "not started") }
  package var mayWaitForInput: Bool { true }
  package var damagePlaces: Int { earlierDamage.places + (inner?.damagePlaces ?? 0) }
  package var damage: DamageTally {
    guard let inner else { return earlierDamage }
    var all = inner.damage
    all.places &+= earlierDamage.places
    all.bytes &+= earlierDamage.bytes
    return all
  }

  package func nextIsReady() -> Bool {
    guard let inner else { return false }
    return control.stopRequested || inner.nextIsReady()
  }

  package func next() throws(CaptureError) -> CaptureRecord? {
    var record = CaptureRecord(timestamp: 0, direction: nil, kind: .other(0), bytes: [])
    return try next(into: &record) ? record : nil
  }

  package func next(into record: inout CaptureRecord) throws(CaptureError) -> Bool {
    while true {
      if inner == nil {
        guard try start() else { return false }
      }
      var failure: CaptureError?
      do {
        if try inner!.next(into: &record) {
          frames += 1
          bytes = bytes.saturatingAdd(Int64(record.bytes.count))
          recorder?.keep(record, notice: notice)
          return true
        }
      } catch {
        failure = error
      }
      if control.stopRequested { return false }
      switch origin {
      case .stream:
        if let failure { throw failure }
        return false
      case .file:
        guard let change = follower?.change else {
          if let failure { throw failure }
          return false
        }
        switch change {
        case .truncated: notice("\(name): file truncated; reading it again from the start")
        case .replaced: notice("\(name): now names another file (rotated); reading the new one from its start")
        case .rewritten: notice("\(name): file rewritten; reading it again from the start")
        }
      case .android:
        let why = failure.map { ": \($0.message)" } ?? ""
        notice("\(name): the feed closed the connection\(why); reconnecting every second (Ctrl-C to stop)")
      }
      interruptions += 1
      stop()
      if case .android = origin, control.wait(milliseconds: retryInterval) { return false }
    }
  }

  /// Opens the followed file and the reader of its capture, as tail -F would: a name that
  /// names nothing yet is waited for (said once); a file that is not a capture, once following
  /// began (replaced with something else, or rewritten), is said once and waited on until it
  /// changes and holds a capture header. False when asked to stop.
  func startFile(_ path: [UInt8], name: String) throws(CaptureError) -> Bool {
    while true {
      guard let seen = FileSnapshot(path) else {
        if !following {
          notice("\(name): does not exist yet; waiting for it to be created (Ctrl-C to stop)")
          following = true
        }
        // Not there yet, or rotated away and not there again yet.
        if control.wait(milliseconds: pollInterval) { return false }
        continue
      }
      // A FIFO or a device that came to be named so: opening it could wait for a writer
      // beyond the reach of a stop; it is read as a stream when named at the start.
      if seen.type != UInt32(S_IFREG) && seen.type != UInt32(S_IFDIR) {
        throw .cannotOpen("is not a regular file now (a FIFO or a device): to read it as a stream, start live again naming it")
      }
      let input: InputSource
      do {
        input = try InputSource(pathBytes: path, name: name)
      } catch {
        guard following else { throw error }
        if !awaitChange(path, name: name, from: seen, problem: error.message) { return false }
        continue
      }
      let follower = FileFollower(control, path: path, interval: pollInterval)
      follower.waitingForHeader = { [notice] size in
        let held = size == 0 ? "is empty" : "holds \(size) byte\(size == 1 ? "" : "s"), too few to tell its format"
        notice("\(name) \(held); waiting for more (Ctrl-C to stop)")
      }
      input.live = follower
      self.follower = follower
      do {
        inner = try CaptureFile.open(input, damage: damagePolicy)
      } catch {
        if control.stopRequested { return false }
        // Emptied or replaced again while its header was awaited: start over.
        if follower.change != nil { continue }
        // A read error is the system's, not the content's: waiting would not cure it.
        if !following { throw error }
        if case .readFailed = error { throw error }
        // Waits from the file as it was before this look: changed meanwhile, it is looked at
        // again after one interval.
        if !awaitChange(path, name: name, from: seen, problem: error.message) { return false }
        continue
      }
      follower.restartOnChange = false
      following = true
      if invalidSaid {
        notice("\(name): holds a \(inner!.format.name) capture now; reading it from its start")
        invalidSaid = false
      }
      if inner!.format.name.hasPrefix("pcap") {
        notice("\(name): \(inner!.format.name) files are read to their current end, not followed (follow btsnoop or PacketLogger, or pipe it: tail -c +1 -f FILE | bledissect live -)")
      }
      return true
    }
  }

  /// Says why the followed file cannot be read (once, until it can), then waits until the
  /// file its name names changes (rewritten, grown, truncated, replaced): true to look again,
  /// false when asked to stop.
  func awaitChange(_ path: [UInt8], name: String, from snapshot: FileSnapshot, problem: String) -> Bool {
    if !invalidSaid {
      notice("\(name): \(problem); waiting for a capture header (the file rewritten or replaced)")
      invalidSaid = true
    }
    while true {
      if control.wait(milliseconds: pollInterval) { return false }
      if FileSnapshot(path) != snapshot { return true }
    }
  }

  /// Leaves the current reader, keeping the count of what it skipped.
  func stop() {
    if let inner {
      let skipped = inner.damage
      earlierDamage.places &+= skipped.places
      earlierDamage.bytes &+= skipped.bytes
    }
    inner = nil
    follower = nil
  }

  /// Opens the reader of the origin's bytes (waits for its header); false when asked to stop.
  func start() throws(CaptureError) -> Bool {
    switch origin {
    case .file(let path, let name):
      return try startFile(path, name: name)
    case .stream(let descriptor, let name, let owns):
      if streamUsed { return false }
      streamUsed = true
      let input = InputSource(descriptor: descriptor, name: name, owns: owns)
      input.live = StreamWaiter(control)
      do {
        inner = try CaptureFile.open(input, damage: damagePolicy)
      } catch {
        if control.stopRequested { return false }
        throw error
      }
      return true
    case .android(let host, let port):
      var lastProblem = ""
      // Connecting can take up to 5 s a try: said first, so the wait is not silent.
      notice("\(name): connecting to the Android snoop feed (Ctrl-C to stop)")
      while true {
        let problem: String
        switch AndroidFeed.connect(host: host, port: port, control: control) {
        case .stopped: return false
        case .connected(let socket):
          let input = InputSource(descriptor: socket, name: name, owns: true)
          input.live = StreamWaiter(control)
          do {
            let reader = try CaptureFile.open(input, damage: damagePolicy)
            if reader.format.name == "btsnoop" {
              inner = reader
              notice("\(name): connected, reading the btsnoop feed")
              return true
            }
            problem = "the feed sent a \(reader.format.name) stream, not btsnoop"
          } catch {
            if control.stopRequested { return false }
            switch error {
            case .emptyFile, .readFailed:
              let why = error == .emptyFile ? "" : " (\(error.message))"
              problem = "connected, but the connection closed before the btsnoop header\(why): is the phone attached, with the snoop log on?"
            default:
              problem = "the feed is not a btsnoop stream: \(error.message)"
            }
          }
        case .failed(let why):
          problem = why
        }
        // Said once while it stays the same: retries every second are quiet.
        if problem != lastProblem {
          notice("\(name): \(problem); retrying every second (Ctrl-C to stop)")
          lastProblem = problem
        }
        if control.wait(milliseconds: retryInterval) { return false }
      }
    }
  }
}

/// What a name names, as far as following it goes: which file, how long, when last written.
struct FileSnapshot: Equatable {
  var device: UInt64
  var inode: UInt64
  var size: Int64
  var modifiedSeconds: Int64
  var modifiedNanoseconds: Int64
  /// The file type bits (S_IFMT) of its mode.
  var type: UInt32

  /// Nil when the name names nothing (or nothing that can be looked at).
  init?(_ path: [UInt8]) {
    var info = stat()
    let found = withCPath(path) { stat($0, &info) == 0 }
    guard found else { return nil }
    device = UInt64(info.st_dev)
    inode = UInt64(info.st_ino)
    size = Int64(info.st_size)
    type = UInt32(info.st_mode) & UInt32(S_IFMT)
    #if canImport(Darwin)
    modifiedSeconds = Int64(info.st_mtimespec.tv_sec)
    modifiedNanoseconds = Int64(info.st_mtimespec.tv_nsec)
    #else
    modifiedSeconds = Int64(info.st_mtim.tv_sec)
    modifiedNanoseconds = Int64(info.st_mtim.tv_nsec)
    #endif
  }
}
