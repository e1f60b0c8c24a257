import BLECore
import BLEDecoder
import Dispatch
import Foundation

/// What a frame stream hands its frames to: a renderer, an analysis, a diff side.
///
/// Calls come in capture order, from one thread at a time (the stream's second thread when it
/// runs on two). Every frame is complete: all its layers and its typed value decoded.
/// A consumer may be a class (run with `run(into:)`) or a struct (run with `run(into: &consumer)`):
/// a struct's state is then reached without the run-time exclusivity checks a class's stored
/// properties pay per frame, and the stream hands it back when the run ends.
public protocol FrameConsumer {
  /// How much of each frame's field list the consumer shows (`.none` for analyses that read
  /// facts only); the facts are the same whatever it says.
  var fieldDetail: FieldDetail { get }
  /// One frame. The frame is reused once this returns: keep what is needed, not the frame.
  /// Returns false to end the stream early (an output closed).
  mutating func consume(_ frame: inout DissectedFrame) -> Bool
  /// The reader skipped damaged bytes just before the frame that comes next.
  mutating func skippedDamage(_ skip: SkippedDamage)
  /// The input went idle (a pipe waits for its writer): show what was consumed so far.
  mutating func inputIdle()
  /// After the last frame, with the engine's final state.
  mutating func finish(_ end: FrameStream.End)
}

extension FrameConsumer {
  public var fieldDetail: FieldDetail { .all }
  public mutating func skippedDamage(_ skip: SkippedDamage) {}
  public mutating func inputIdle() {}
  public mutating func finish(_ end: FrameStream.End) {}
}

/// Reads a capture, dissects every record and hands the frames to a consumer: the one engine
/// every command runs on. Decoding does not depend on the consumer.
///
/// On two threads (the default), the dissector (sequential: connections, reassembly, GATT
/// state) runs on the calling thread and the consumer on a second one, batches of reused
/// frames going between them; the stateless last stage of dissection (`ValueStage`: typed
/// characteristic values) runs on either side, the share adjusted batch by batch toward the
/// split that keeps both threads busy. On one thread (several files processed at once, one
/// per core) everything runs in turn on the calling thread.
///
/// Latency: before a read that would wait (a pipe, standard input), the frames read so far
/// are handed over and the consumer is told the input is idle; files never wait, so they
/// keep the throughput of full batches.
///
/// Hindsight: a handle no table explains is guessed from a run of its values (three heart-rate
/// values); the frames of the run are held back until the guess is made or given up, at most
/// `heldFrames` frames, then labelled and handed over in order. Streams that hold nothing
/// back lose nothing: the check is one comparison per frame.
public struct FrameStream {
  package enum Threading: Sendable { case two, one }

  /// Which thread decodes characteristic values on two threads.
  package enum ValueShare: Sendable {
    /// Adjusted batch by batch toward the split that keeps both threads busy.
    case adaptive
    /// This many eighths of the frames leave their value to the consumer's thread (0...8).
    case fixed(Int)
  }

  public struct Options: Sendable {
    /// Stop after this many records.
    public var limit = Int.max
    public var registry = DecoderRegistry.standard
    /// GATT tables given beforehand (`--gatt`), for captures without discovery.
    public var maps = GATTMapSet()
    /// Tables learned from earlier captures, asked by device identity (address, Database Hash).
    public var cache: (any GATTMapLookup)?
    /// Long-term keys for links sniffed over the air (`--ltk`, `--keys`, `--keys-from`).
    public var keys = LinkKeyRing()
    package var threading = Threading.two
    package var valueShare = ValueShare.adaptive
    /// Whether frames whose values wait for a guess are held back (a bounded number of them)
    /// until the guess is made, so the values that made it are labelled like the rest. Live
    /// sources turn it off: they show each frame as it comes.
    public var labelsInHindsight = true
    public init() {}
  }

  /// How the stream ended, and what the engine knew then.
  public struct End {
    public var frames: Int
    /// The damage that ended the read, if it did not end cleanly.
    public var failure: SourceFailure?
    /// The dissector's final state: connections still open, GATT databases learned.
    public var dissector: Dissector
  }

  let reader: any RecordSource
  let options: Options

  /// `source`: a capture reader (`CaptureFile.open`) or any other record source.
  public init(source: any RecordSource, options: Options = Options()) {
    self.reader = source
    self.options = options
  }

  /// Runs the stream to its end (or until the consumer stops it); returns how it ended. The
  /// consumer's `finish` has been called when this returns.
  @discardableResult
  public func run(into consumer: some FrameConsumer & AnyObject) -> End {
    var consumer = consumer
    return run(into: &consumer)
  }

  /// The same for a consumer of any kind (a struct keeps its state here, handed back at the end).
  @discardableResult
  public func run<Consumer: FrameConsumer>(into consumer: inout Consumer) -> End {
    switch options.threading {
    case .one: return runOnOneThread(&consumer)
    case .two: return runOnTwoThreads(&consumer)
    }
  }

  func runOnOneThread(_ consumer: inout some FrameConsumer) -> End {
    var dissector = Dissector(registry: options.registry, maps: options.maps, cache: options.cache, keys: options.keys)
    // How much of each frame's field list is kept: what the consumer shows. Decoders do not
    // know it; the list keeps what it is told to.
    let detail = consumer.fieldDetail
    dissector.labelsInHindsight = options.labelsInHindsight
    var frame = DissectedFrame()
    var held = HeldFrames()
    var number = 0
    var failure: SourceFailure?
    let watchesInput = reader.mayWaitForInput
    do {
      while number < options.limit {
        if watchesInput && number > 0 && !reader.nextIsReady() { consumer.inputIdle() }
        guard try reader.nextRecord(into: &frame.record) else { break }
        number += 1
        if frame.record.followsDamage, let skip = reader.damage.last { consumer.skippedDamage(skip) }
        frame.fields.detail = detail
        dissector.dissect(number: number, into: &frame)
        // Nearly always: nothing waits for a guess, the frame goes at once.
        if held.isEmpty && !dissector.mayHoldBack {
          let goOn = consumer.consume(&frame)
          frame.recycle()
          if !goOn { break }
          continue
        }
        if !held.hold(&frame, &dissector.gatt, registry: dissector.registry, &consumer) { break }
      }
    } catch {
      failure = error
    }
    held.releaseAll(&consumer)
    let end = End(frames: number, failure: failure, dissector: dissector)
    consumer.finish(end)
    return end
  }

  /// Small batches, many of them: the faster thread seldom finds the queue empty (or full)
  /// and sleeps less, and a batch's frames stay in cache between the two threads. Measured on
  /// the 1.5 M-frame capture: 16 × 64 took 0.92 s of CPU for text where 3 × 128 took 1.39 s.
  static var batchSize: Int { 64 }
  static var batchesInFlight: Int { 16 }
  /// A batch is also handed over once its records hold this much: 64 records of 256 KiB in
  /// each of 16 batches would otherwise be 256 MiB in flight; this keeps it to 16 MiB.
  static var batchByteLimit: Int { 1 << 20 }
  /// Batches held back for hindsight at most (half of those in flight, so the consumer's
  /// thread always has batches to return).
  static var heldBatches: Int { 8 }
  /// Frames held back for hindsight at most on one thread.
  static var heldFrames: Int { heldBatches * batchSize }

  func runOnTwoThreads<Consumer: FrameConsumer>(_ consumer: inout Consumer) -> End {
    let empty = BatchQueue()
    let filled = BatchQueue()
    for _ in 0..<Self.batchesInFlight { empty.put(FrameBatch(capacity: Self.batchSize)) }
    let finished = DispatchSemaphore(value: 0)
    let side = ConsumerSide(consumer, registry: options.registry)
    // The thread sees the consumer through a non-generic protocol: nothing generic crosses threads.
    let worker: any BatchConsuming = side
    let thread = Thread {
      worker.consumeBatches(from: filled, returningTo: empty)
      finished.signal()
    }
    thread.stackSize = 1 << 20
    thread.start()

    var dissector = Dissector(registry: options.registry, maps: options.maps, cache: options.cache, keys: options.keys)
    let detail = consumer.fieldDetail
    dissector.labelsInHindsight = options.labelsInHindsight
    var number = 0
    var failure: SourceFailure?
    // Eighths of the frames whose value the consumer's thread decodes.
    var leftEighths = 4
    var adapts = true
    if case .fixed(let eighths) = options.valueShare {
      leftEighths = min(max(eighths, 0), 8)
      adapts = false
    }
    var batch = empty.take()
    var batchBytes = 0
    let watchesInput = reader.mayWaitForInput
    // Whether a batch went to the consumer since it was last told the input was idle.
    var handedOver = false
    // Batches held back for hindsight (their frames' values wait for a guess), oldest first.
    var held: [FrameBatch] = []
    // The dissector's GATT state (what hindsight is about) is passed, not captured: a captured
    // variable lives in a box, and every `dissect` through it would pay a dynamic exclusivity check.
    func handOver(_ gatt: inout GATTState, nextFrame: Int) {
      if gatt.labelsInHindsight {
        while let oldest = gatt.oldestUndecidedFrame() {
          let first = held.first.map { $0.frames[0].number } ?? (batch.count > 0 ? batch.frames[0].number : nextFrame)
          if oldest < first {
            // Its frame is gone already: nothing to label.
            gatt.abandonUndecided(through: first - 1)
          } else if held.count < Self.heldBatches {
            held.append(batch)
            batch = empty.take()
            batch.count = 0
            batchBytes = 0
            return
          } else {
            // Waited long enough: the oldest batch goes as it is.
            let released = held.removeFirst()
            gatt.abandonUndecided(through: released.frames[released.count - 1].number)
            filled.put(released)
          }
        }
        for earlier in held { filled.put(earlier) }
        held.removeAll()
      }
      filled.put(batch)
      batch = empty.take()
      batch.count = 0
      batchBytes = 0
    }
    /// Labels held frames that a guess just explained.
    func applyHindsight(_ gatt: inout GATTState, registry: DecoderRegistry) {
      for label in gatt.takeHindsight() {
        for candidate in held + [batch] where candidate.count > 0 {
          let offset = label.frame - candidate.frames[0].number
          if offset >= 0 && offset < candidate.count {
            gatt.applyHindsight(label, to: &candidate.frames[offset], registry: registry)
            break
          }
        }
      }
    }
    do {
      // Records are read straight into the frames, whose byte buffers are reused.
      while number < options.limit {
        if watchesInput && (batch.count > 0 || handedOver) && !reader.nextIsReady() {
          batch.inputIdle = true
          handOver(&dissector.gatt, nextFrame: number + 1)
          handedOver = false
          if side.stopped { break }
        }
        guard try reader.nextRecord(into: &batch.frames[batch.count].record) else { break }
        number += 1
        if batch.frames[batch.count].record.followsDamage, let skip = reader.damage.last {
          batch.damageNotices.append((batch.count, skip))
        }
        batch.frames[batch.count].fields.detail = detail
        dissector.decodeLayers(number: number, into: &batch.frames[batch.count])
        // The value stage here, or on the consumer's thread (`ConsumerSide`).
        if number & 7 >= leftEighths { ValueStage.complete(&batch.frames[batch.count], registry: dissector.registry) }
        batchBytes += batch.frames[batch.count].record.bytes.count
        batch.count += 1
        if dissector.hasHindsight { applyHindsight(&dissector.gatt, registry: dissector.registry) }
        if batch.count == Self.batchSize || batchBytes >= Self.batchByteLimit {
          handOver(&dissector.gatt, nextFrame: number + 1)
          handedOver = true
          // This thread waited for an empty batch: the consumer is behind, decode more here.
          // The consumer waited for a full one: this thread is behind, leave it more.
          if empty.tookWaited() && adapts { leftEighths = max(leftEighths - 1, 0) }
          if filled.tookWaited() && adapts { leftEighths = min(leftEighths + 1, 8) }
          // A stopped consumer (`| head`) is noticed once per batch: a lock per record costs more.
          if side.stopped { break }
        }
      }
    } catch {
      failure = error
    }
    for earlier in held { filled.put(earlier) }
    let end = End(frames: number, failure: failure, dissector: dissector)
    batch.end = end
    filled.put(batch)
    finished.wait()
    if let handedBack = side.consumer.take() { consumer = handedBack }
    return end
  }
}

/// Frames held back on one thread while a value in them waits for a guess (oldest first), and
/// frames to reuse.
struct HeldFrames {
  var frames: [DissectedFrame] = []
  var spare: [DissectedFrame] = []
  var stopped = false

  var isEmpty: Bool { frames.isEmpty }

  /// Takes `frame` in (it is replaced by a cleared one), labels what a guess just explained,
  /// and hands over the frames no guess can still label. Returns false once the consumer stopped.
  mutating func hold(_ frame: inout DissectedFrame, _ gatt: inout GATTState, registry: DecoderRegistry, _ consumer: inout some FrameConsumer) -> Bool {
    for label in gatt.takeHindsight() {
      if let index = frames.firstIndex(where: { $0.number == label.frame }) { gatt.applyHindsight(label, to: &frames[index], registry: registry) }
    }
    frames.append(spare.popLast() ?? DissectedFrame())
    swap(&frame, &frames[frames.count - 1])
    if frames.count > FrameStream.heldFrames {
      // Waited long enough: the oldest frame goes as it is.
      gatt.abandonUndecided(through: frames[0].number)
    }
    let oldest = gatt.oldestUndecidedFrame()
    var count = 0
    while count < frames.count, oldest.map({ frames[count].number < $0 }) ?? true { count += 1 }
    release(count, &consumer)
    return !stopped
  }

  mutating func releaseAll(_ consumer: inout some FrameConsumer) { release(frames.count, &consumer) }

  mutating func release(_ count: Int, _ consumer: inout some FrameConsumer) {
    for index in 0..<count {
      if !stopped && !consumer.consume(&frames[index]) { stopped = true }
      frames[index].recycle()
    }
    spare += frames.prefix(count)
    frames.removeFirst(count)
  }
}

/// A batch of dissected frames handed from the dissecting thread to the consumer's. The
/// frames are reused batch after batch, so their buffers keep their capacity.
// Safety: Sendable because a batch is used by one thread at a time, handed over through `BatchQueue`'s lock.
final class FrameBatch: @unchecked Sendable {
  /// The frames, in memory of their own: reached only through this pointer, never copied.
  // Safety: `capacity` frames, initialized here and deinitialized in `deinit`; indices kept below `count <= capacity`.
  let frames: UnsafeMutablePointer<DissectedFrame>
  let capacity: Int
  var count = 0
  /// Set on the last batch of the stream.
  var end: FrameStream.End?
  /// Set when the input went idle after these frames.
  var inputIdle = false
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
// Safety: `items` and `waited` are read and written only under `lock`.
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

/// What the consumer's thread runs.
protocol BatchConsuming: AnyObject, Sendable {
  func consumeBatches(from filled: BatchQueue, returningTo empty: BatchQueue)
}

/// The consumer's side of a two-thread stream.
// Safety: `consumer` is used by the consumer's thread only between the thread's start and its join; `isStopped` is under `lock`.
final class ConsumerSide<Consumer: FrameConsumer>: BatchConsuming, @unchecked Sendable {
  /// Taken by the consumer's thread for the run (a local: no run-time exclusivity checks per
  /// frame), given back when it ends.
  var consumer: Consumer?
  let registry: DecoderRegistry
  private let lock = NSLock()
  private var isStopped = false

  init(_ consumer: Consumer, registry: DecoderRegistry) {
    self.consumer = consumer
    self.registry = registry.separateCopy()
  }

  /// Whether the consumer asked to stop.
  var stopped: Bool {
    lock.lock()
    defer { lock.unlock() }
    return isStopped
  }

  func consumeBatches(from filled: BatchQueue, returningTo empty: BatchQueue) {
    guard var consumer = consumer.take() else { return }
    defer { self.consumer = consumer }
    var stopping = false
    while true {
      let batch = filled.take()
      if !stopping {
        var notice = 0
        var noticeIndex = batch.damageNotices.first?.index ?? Int.max
        for index in 0..<batch.count {
          if index == noticeIndex {
            consumer.skippedDamage(batch.damageNotices[notice].skip)
            notice += 1
            noticeIndex = notice < batch.damageNotices.count ? batch.damageNotices[notice].index : Int.max
          }
          // Borrowed in place: copying a frame would retain every buffer it holds.
          let frame = batch.frames + index
          ValueStage.complete(&frame.pointee, registry: registry)
          let goOn = consumer.consume(&frame.pointee)
          frame.pointee.recycle()
          if !goOn {
            stopping = true
            lock.lock()
            isStopped = true
            lock.unlock()
            break
          }
        }
        if batch.inputIdle && !stopping { consumer.inputIdle() }
      }
      batch.count = 0
      batch.inputIdle = false
      batch.damageNotices.removeAll(keepingCapacity: true)
      if let end = batch.end {
        consumer.finish(end)
        return
      }
      empty.put(batch)
    }
  }
}
