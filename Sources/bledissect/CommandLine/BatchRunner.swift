#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import BLECapture
import BLECore
import BLEEngine
import BLERender
import Foundation

/// Where one file's job writes its standard output. The job appends to `buffer` and calls
/// `checkpoint` after each unit of output (a row, a frame); `isClosed` says the reader of the
/// final output went away (`| head`), so the job can stop. A writer that appends per frame takes
/// the buffer for its run and gives it back (`buffer = …` after), passing it to `checkpoint`:
/// a class's stored property costs a run-time exclusivity check per access, a value it owns none.
///
/// Alone (one file), `buffer` is the command's standard output itself. In a batch it is a
/// private buffer whose bytes the checkpoint hands, every 64 KiB, to the batch's ordered output.
final class JobOutput {
  /// The output between writers (one thread at a time: the job's, or its stream's consumer's).
  var buffer: OutputBuffer
  /// How the job should run its FrameStream: one thread when several files run at once.
  let threading: FrameStream.Threading
  /// The file's position in the batch (0 for a file alone).
  let index: Int
  /// Whether several files are processed (rows may then name their file).
  let inBatch: Bool
  private let order: OrderedOutput?
  private(set) var isClosed = false

  static let handOverSize = 64 << 10

  /// The output of a file alone: straight to `buffer`.
  init(direct buffer: OutputBuffer, threading: FrameStream.Threading = .two) {
    self.buffer = buffer
    self.threading = threading
    index = 0
    inBatch = false
    order = nil
  }

  fileprivate init(index: Int, order: OrderedOutput, threading: FrameStream.Threading) {
    // A large threshold: the buffer is never flushed by itself (it has no descriptor).
    buffer = OutputBuffer(fd: nil, flushThreshold: Self.handOverSize)
    self.index = index
    self.order = order
    self.threading = threading
    inBatch = true
  }

  /// Passes on what was written to `out` (the buffer, taken by a writer) once there is enough.
  @inline(__always) func checkpoint(_ out: inout OutputBuffer) {
    if out.count >= Self.handOverSize { handOver(&out) }
  }

  /// Passes on everything written so far.
  func handOver() { handOver(&buffer) }

  /// Passes on everything written to `out`, the buffer a writer took.
  func handOver(_ out: inout OutputBuffer) {
    guard let order else {
      out.flush()
      isClosed = out.isClosed
      return
    }
    guard out.count > 0 else { return }
    let open = out.withAppendedBytes(since: 0) { order.deliver(index, $0) }
    isClosed = !open
    // A fresh buffer: one without a descriptor cannot be emptied in place.
    out = OutputBuffer(fd: nil, flushThreshold: Self.handOverSize)
  }
}

/// Runs one job per capture file, several at once, and prints their outputs in the order the
/// files were given: file k's output entirely before file k+1's.
///
/// The file whose turn it is writes straight through; the others keep their output (1 MiB in
/// memory, the rest in an unlinked temporary file) until the files before them are done. Each
/// file's standard error lines follow its output. The exit status is the worst of the files'.
enum BatchRunner {
  /// One file's work: read `file`, write to `output` (checkpointing), report errors through
  /// `context` (`openCapture`, `finishRead`); returns the file's exit status.
  typealias Job = @Sendable (_ file: Argument, _ output: JobOutput, _ context: CLIContext) -> Int32

  /// `-j`, parsed: a positive number of files at once, default the number of processors.
  static func jobCount(_ arguments: ParsedArguments) throws(UsageError) -> Int {
    guard let text = arguments.value("jobs") else { return max(ProcessInfo.processInfo.activeProcessorCount, 1) }
    guard let value = Int(text), value >= 1, value <= 1024 else {
      throw UsageError(message: "--jobs needs a number of files to read at once (1 to 1024), not '\(text)'")
    }
    return value
  }

  /// `header`: a line written before each file's output when several files are given (text
  /// outputs), or nil (machine-readable outputs say the file in their records).
  static func run(
    files: [Argument], jobs: Int, header: (@Sendable (Argument) -> String)?, _ context: CLIContext,
    memoryLimit: Int = 1 << 20, job: @escaping Job
  ) -> Int32 {
    if files.count == 1 {
      let output = JobOutput(direct: context.stdout)
      let status = job(files[0], output, context)
      context.stdout = output.buffer
      context.stdout.flush()
      return status
    }
    let order = OrderedOutput(count: files.count, stdout: context.stdout, stderr: context.stderr, memoryLimit: memoryLimit)
    let workers = min(max(jobs, 1), files.count)
    let threading: FrameStream.Threading = workers > 1 ? .one : .two
    let (environment, isTerminal, columns) = (context.environment, context.stdoutIsTerminal, context.terminalColumns)
    let runOne: @Sendable (Int) -> Void = { index in
      let output = JobOutput(index: index, order: order, threading: threading)
      if let header {
        if index > 0 { output.buffer.byte(0x0A) }
        output.buffer.append(string: header(files[index]))
      }
      let jobContext = CLIContext(
        stdout: OutputBuffer(fd: nil), stderr: OutputBuffer(fd: nil), environment: environment,
        stdoutIsTerminal: isTerminal, terminalColumns: columns)
      let status = order.isClosed ? ExitStatus.success : job(files[index], output, jobContext)
      output.handOver()
      order.finish(index, status: status, errors: jobContext.stderr)
    }
    if workers == 1 {
      for index in files.indices { runOne(index) }
    } else {
      let next = NextIndex(limit: files.count)
      let done = DispatchGroup()
      for _ in 0..<workers {
        done.enter()
        let thread = Thread {
          while let index = next.take() { runOne(index) }
          done.leave()
        }
        // The dissector runs on this thread: give it the stack of a main thread.
        thread.stackSize = 8 << 20
        thread.start()
      }
      done.wait()
    }
    let result = order.result
    context.stdout = result.stdout
    context.stderr = result.stderr
    context.stdout.flush()
    context.stderr.flush()
    return result.worstStatus
  }
}

/// Hands out 0, 1, 2, ... up to a limit, to several threads.
private final class NextIndex: Sendable {
  private let next = Locked(0)
  private let limit: Int
  init(limit: Int) { self.limit = limit }
  func take() -> Int? {
    next.withLock { next in
      guard next < limit else { return nil }
      next += 1
      return next - 1
    }
  }
}

/// The batch's standard output and error, written in file order. Every write to them happens
/// under the lock of `state`, by the thread of the file whose turn it is or of the file that
/// ends a turn.
private final class OrderedOutput: Sendable {
  /// Standard error kept per file (a few lines in practice); beyond it lines are dropped.
  static let errorLimit = 256 << 10
  private let state: Locked<State>

  init(count: Int, stdout: OutputBuffer, stderr: OutputBuffer, memoryLimit: Int) {
    state = Locked(State(memoryLimit: memoryLimit, stdout: stdout, stderr: stderr, files: Array(repeating: Waiting(), count: count)))
  }

  var isClosed: Bool { state.withLock { $0.stdout.isClosed } }
  /// The outputs and the worst status, once every file is done.
  var result: (stdout: OutputBuffer, stderr: OutputBuffer, worstStatus: Int32) {
    state.withLock { ($0.stdout, $0.stderr, $0.worstStatus) }
  }

  /// Bytes of file `index`: written now if it is that file's turn, else kept. Returns whether
  /// the output is still open.
  func deliver(_ index: Int, _ bytes: ByteView) -> Bool { state.withLock { $0.deliver(index, bytes) } }

  /// File `index` is done: print it and every finished file after it once their turn comes.
  func finish(_ index: Int, status: Int32, errors: OutputBuffer) {
    let kept = Array(errors.bytes.prefix(Self.errorLimit))
    state.withLock { $0.finish(index, status: status, errors: kept) }
  }

  struct Waiting {
    var memory: [UInt8] = []
    /// An unlinked temporary file holding what did not fit in memory, written in order after it.
    var spill: Int32 = -1
    var spillFailed: String?
    var done = false
    var errors: [UInt8] = []
  }

  struct State {
    /// Kept in memory per waiting file before it goes to a temporary file (1 MiB; tests use less).
    let memoryLimit: Int
    var stdout: OutputBuffer
    var stderr: OutputBuffer
    var files: [Waiting]
    /// The file whose output is being written.
    var head = 0
    var worstStatus: Int32 = ExitStatus.success

    mutating func deliver(_ index: Int, _ bytes: ByteView) -> Bool {
      if stdout.isClosed { return false }
      if index == head {
        // It became this file's turn while it ran: what it kept goes first.
        writeKept(index)
        append(bytes)
        stdout.flushIfFull()
      } else {
        keep(index, bytes)
      }
      return !stdout.isClosed
    }

    mutating func finish(_ index: Int, status: Int32, errors: [UInt8]) {
      worstStatus = max(worstStatus, status)
      files[index].done = true
      files[index].errors = errors
      while head < files.count, files[head].done {
        writeKept(head)
        // Standard error after the file's output, so a terminal shows them in that order.
        stdout.flush()
        if !files[head].errors.isEmpty {
          stderr.append(string: String(decoding: files[head].errors, as: UTF8.self))
          stderr.flush()
        }
        files[head].errors = []
        head += 1
      }
    }

    private mutating func append(_ bytes: ByteView) {
      // In pieces, so the output never holds more than about its flush threshold plus a piece.
      var offset = bytes.startIndex
      while offset < bytes.endIndex {
        let length = min(64 << 10, bytes.endIndex - offset)
        stdout.append(bytes[offset..<(offset + length)])
        stdout.flushIfFull()
        offset += length
      }
    }

    private mutating func keep(_ index: Int, _ bytes: ByteView) {
      if files[index].spill < 0, files[index].spillFailed == nil, files[index].memory.count + bytes.count <= memoryLimit {
        files[index].memory.append(contentsOf: bytes)
        return
      }
      if files[index].spillFailed != nil { return }
      if files[index].spill < 0 {
        guard let (fd, path) = makeTemporaryFile(Array((NSTemporaryDirectory() + "/bledissect-batch-XXXXXX").utf8)) else {
          spillFailed(index, String(cString: strerror(errno)))
          return
        }
        // Gone from the directory at once: removed by the system however the run ends.
        _ = withCPath(path) { unlink($0) }
        files[index].spill = fd
      }
      if let code = SystemWrite.all(files[index].spill, bytes) { spillFailed(index, SystemWrite.reason(code)) }
    }

    private mutating func spillFailed(_ index: Int, _ reason: String) {
      files[index].spillFailed = reason
      worstStatus = max(worstStatus, ExitStatus.unreadable)
    }

    /// Writes what file `index` kept (memory, then its temporary file) and forgets it.
    private mutating func writeKept(_ index: Int) {
      if !files[index].memory.isEmpty {
        ByteView.pinning(files[index].memory) { append($0) }
        files[index].memory = []
      }
      let fd = files[index].spill
      if fd >= 0 {
        files[index].spill = -1
        defer { close(fd) }
        lseek(fd, 0, SEEK_SET)
        var block = [UInt8](repeating: 0, count: 64 << 10)
        while true {
          let count = readDescriptor(fd, into: &block, count: block.count)
          if count < 0 && errno == EINTR { continue }
          guard count > 0 else {
            if count < 0 { spillFailed(index, String(cString: strerror(errno))) }
            break
          }
          ByteView.pinning(block[0..<count]) { append($0) }
        }
      }
      if let reason = files[index].spillFailed {
        files[index].spillFailed = nil
        stdout.flush()
        stderr.append(string: "bledissect: output of file \(index + 1) cut short: cannot keep it in a temporary file: \(reason)\n")
        stderr.flush()
      }
    }
  }
}
