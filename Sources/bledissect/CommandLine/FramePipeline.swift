import Dispatch
import Foundation
import BLECapture
import BLECore
import BLEDecoder
import BLERender

/// A batch of dissected frames handed from the dissecting thread to the rendering one. The
/// frames are reused batch after batch, so their buffers keep their capacity.
final class FrameBatch: @unchecked Sendable {
  /// The frames, in memory of their own: reached only through this pointer, never copied.
  let frames: UnsafeMutablePointer<DissectedFrame>
  let capacity: Int
  var count = 0
  /// Set on the last batch of the capture.
  var isLast = false
  /// Set when the input went idle (a pipe): the rendering thread then flushes the output, so
  /// frames show as their bytes arrive, not when 64 KiB have gathered.
  var flushesOutput = false
  /// Damage the reader skipped just before the frame at `index`: reported in order.
  var damageNotices: [(index: Int, skip: SkippedDamage)] = []

  init(capacity: Int) {
    self.capacity = capacity
    frames = .allocate(capacity: capacity)
    frames.initialize(repeating: DissectedFrame(), count: capacity)
  }

  deinit {
    frames.deinitialize(count: capacity)
    frames.deallocate()
  }
}

/// A blocking queue of batches between two threads.
final class BatchQueue: @unchecked Sendable {
  private var items: [FrameBatch] = []
  private let lock = NSLock()
  private let available = DispatchSemaphore(value: 0)
  /// Whether a `take` found the queue empty since the last `tookWaited()`: the taking thread
  /// is the faster one.
  private var waited = false

  func put(_ batch: FrameBatch) {
    lock.lock()
    items.append(batch)
    lock.unlock()
    available.signal()
  }

  func take() -> FrameBatch {
    // The other thread usually hands a batch over within microseconds: look a few times, then
    // give the processor away a few times, before sleeping (waking a sleeping thread costs
    // more). Looking long would steal the time the other thread needs when the two share a
    // processor.
    for attempt in 0..<200 {
      lock.lock()
      let ready = !items.isEmpty
      if !ready { waited = true }
      lock.unlock()
      if ready { break }
      if attempt >= 100 { sched_yield() }
    }
    available.wait()
    lock.lock()
    defer { lock.unlock() }
    return items.removeFirst()
  }

  /// Whether a taker had to wait since the last call; clears the mark.
  func tookWaited() -> Bool {
    lock.lock()
    defer { lock.unlock() }
    let result = waited
    waited = false
    return result
  }
}

/// Dissecting is sequential (connection and GATT state), rendering is not: the two run on two
/// threads, so a capture takes about as long as the slower of the two instead of their sum.
/// Characteristic values (pure work) are decoded on either side: the dissecting thread leaves
/// a share of them to the rendering thread, adjusted batch by batch toward the share that
/// keeps both threads equally busy. Frames reach the output in capture order.
struct FramePipeline<R: FrameRenderer> {
  static var batchSize: Int { 512 }

  /// Dissects every record of `reader` (at most `limit`) and renders the frames that pass
  /// `filter`; returns the capture error that ended the read, if any, and the number of frames
  /// read. `keepsSummaries` is off for outputs that show no summary line (JSON Lines).
  /// `defersValueDecoding` is where the share of values decoded on the rendering thread starts
  /// (text renders lightly: all of them). Damage the reader skips is reported on `errors`, in
  /// order with the frames (stdout is flushed first), each line starting with `label`.
  static func run(
    reader: any CaptureReader, renderer: R, limit: Int,
    filter: FrameFilter, output: OutputSink, errors: OutputSink, label: String
  ) -> (failure: CaptureError?, frames: Int) {
    let empty = BatchQueue()
    let filled = BatchQueue()
    for _ in 0..<3 { empty.put(FrameBatch(capacity: batchSize)) }
    let finished = DispatchSemaphore(value: 0)
    let state = RenderState(renderer: renderer, output: output, errors: errors, label: label, filter: filter)
    // The thread sees the renderer through a non-generic protocol: nothing generic crosses threads.
    let worker: any BatchRendering = state
    let thread = Thread {
      worker.renderBatches(from: filled, returningTo: empty)
      finished.signal()
    }
    thread.stackSize = 1 << 20
    thread.start()

    var dissector = Dissector()
    var number = 0
    var failure: CaptureError?
    var batch = empty.take()
    // A batch is also handed over once its records hold this much: 512 records of 256 KiB in
    // each of three batches would otherwise be 384 MiB in flight.
    let batchByteLimit = 4 << 20
    var batchBytes = 0
    // A pipe: before a read that would wait, what was read is handed over and shown. (Files
    // never wait, so they pay nothing for this.)
    let watchesInput = reader.mayWaitForInput
    // Whether a batch went to the rendering thread since it was last asked to flush.
    var outputPending = false
    var damageSeen = reader.damagePlaces
    do {
      // Records are read straight into the frames, whose byte buffers are reused.
      while number < limit {
        if watchesInput && (batch.count > 0 || outputPending) && !reader.nextIsReady() {
          batch.flushesOutput = true
          filled.put(batch)
          batch = empty.take()
          batch.count = 0
          outputPending = false
          batchBytes = 0
          if state.outputClosed { break }
        }
        guard try reader.next(into: &batch.frames[batch.count].record) else { break }
        number += 1
        if reader.damagePlaces != damageSeen {
          damageSeen = reader.damagePlaces
          if let skip = reader.damage.last { batch.damageNotices.append((batch.count, skip)) }
        }
        dissector.dissect(number: number, into: &batch.frames[batch.count])
        batch.count += 1
        batchBytes += batch.frames[batch.count - 1].record.bytes.count
        if batch.count == batchSize || batchBytes >= batchByteLimit {
          filled.put(batch)
          outputPending = true
          batch = empty.take()
          batch.count = 0
          batchBytes = 0
          // A closed output (`| head`) is noticed once per batch: a lock per record costs more.
          if state.outputClosed { break }
        }
      }
    } catch {
      failure = error
    }
    batch.isLast = true
    filled.put(batch)
    finished.wait()
    return (failure, number)
  }
}

/// Where rendered bytes go: the CLI context's standard output, owned by the render thread
/// while the pipeline runs.
final class OutputSink: @unchecked Sendable {
  var buffer: OutputBuffer
  init(_ buffer: OutputBuffer) { self.buffer = buffer }
}

/// What the render thread runs.
protocol BatchRendering: AnyObject, Sendable {
  func renderBatches(from filled: BatchQueue, returningTo empty: BatchQueue)
}

/// The render thread's side.
final class RenderState<R: FrameRenderer>: BatchRendering, @unchecked Sendable {
  var renderer: R
  let output: OutputSink
  let errors: OutputSink
  let label: String
  let filter: FrameFilter
  private let lock = NSLock()
  private var closed = false

  init(renderer: R, output: OutputSink, errors: OutputSink, label: String, filter: FrameFilter) {
    self.renderer = renderer
    self.output = output
    self.errors = errors
    self.label = label
    self.filter = filter
  }

  /// One line on stderr, after the frames before it have been written out.
  func report(_ skip: SkippedDamage, output: inout OutputBuffer) {
    output.flush()
    errors.buffer.append(string: "bledissect: \(label): \(skip.message)\n")
    errors.buffer.flush()
  }

  var outputClosed: Bool {
    lock.lock()
    defer { lock.unlock() }
    return closed
  }

  func renderBatches(from filled: BatchQueue, returningTo empty: BatchQueue) {
    let filtering = !filter.isEmpty
    while true {
      let batch = filled.take()
      if !outputClosed {
        // Borrow the frames in place (copying one would retain every buffer it holds); the
        // renderer and the output live in locals meanwhile, so no access can alias a frame.
        var renderer = self.renderer
        var buffer = output.buffer
        defer {
          self.renderer = renderer
          output.buffer = buffer
        }
        do {
          var notice = 0
          var noticeIndex = batch.damageNotices.first?.index ?? Int.max
          for index in 0..<batch.count {
            if index == noticeIndex {
              report(batch.damageNotices[notice].skip, output: &buffer)
              notice += 1
              noticeIndex = notice < batch.damageNotices.count ? batch.damageNotices[notice].index : Int.max
            }
            let frame = batch.frames + index
            if filtering && !filter.matches(frame.pointee) {
              renderer.skip(&frame.pointee)
              frame.pointee.releaseLargeBuffers()
              continue
            }
            renderer.render(&frame.pointee, to: &buffer)
            frame.pointee.releaseLargeBuffers()
            if buffer.isClosed {
              lock.lock()
              closed = true
              lock.unlock()
              break
            }
          }
          if batch.flushesOutput { buffer.flush() }
        }
      }
      batch.count = 0
      batch.flushesOutput = false
      batch.damageNotices.removeAll(keepingCapacity: true)
      if batch.isLast {
        renderer.finish(to: &output.buffer)
        return
      }
      empty.put(batch)
    }
  }
}
