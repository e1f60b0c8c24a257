#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import BLECore

/// What `convert` writes into: a `CaptureWriter` drained into the output a megabyte at a time,
/// and what could not be written (records the format cannot carry, by kind; a failed output).
package struct ConversionOutput {
  package var writer: CaptureWriter
  package let target: OutputFile
  /// Why writing failed (nil: it did not, or the output was a pipe whose reader left).
  package private(set) var failure: String?
  /// The output failed or was closed: nothing more is written.
  package private(set) var stopped = false
  /// Records skipped because the format cannot carry them: air packets, HCI packets, others.
  package private(set) var skippedAir = 0
  package private(set) var skippedHCI = 0
  package private(set) var records = 0
  /// Told of the damage the reader skipped, in order with the records.
  package var onDamage: (SkippedDamage) -> Void = { _ in }

  package init(format: CaptureWriteFormat, comment: String?, target: OutputFile) {
    writer = CaptureWriter(format: format, comment: comment)
    self.target = target
  }

  /// Writes a record (with its packet comment, where the format has a place for one); false
  /// once the output stopped.
  package mutating func write(_ record: CaptureRecord, comment: String?) -> Bool {
    records += 1
    let skipped = writer.skipped
    writer.write(record, comment: comment)
    if writer.skipped > skipped {
      if record.kind == .airPacket { skippedAir += 1 } else if record.kind.isHCIPacket { skippedHCI += 1 }
    }
    return writer.output.count < 1 << 20 || drain()
  }

  /// Writes out what the writer holds; false when the output failed or was closed.
  package mutating func drain() -> Bool {
    guard !stopped else { return false }
    guard let code = SystemWrite.all(target.descriptor, writer.takeOutput()) else { return true }
    if code != EPIPE { failure = SystemWrite.reason(code) }
    stopped = true
    return false
  }

  package mutating func skippedDamage(_ skip: SkippedDamage) { onDamage(skip) }

  /// The input waits (a pipe): what was converted so far is written out.
  package mutating func inputIdle() {
    if !writer.output.isEmpty { _ = drain() }
  }

  /// Copies every record of `reader` as it is; returns how many were read and the damage that
  /// ended the read, if any. Stops early when the output stops.
  package mutating func copy(from reader: any CaptureReader) -> (frames: Int, failure: CaptureError?) {
    var frames = 0
    // A pipe: what was converted is written out before a read that would wait.
    let watchesInput = reader.mayWaitForInput
    do {
      while true {
        if watchesInput, !writer.output.isEmpty, !reader.nextIsReady(), !drain() { break }
        guard let record = try reader.next() else { break }
        frames += 1
        if record.followsDamage, let skip = reader.damage.last { onDamage(skip) }
        if !write(record, comment: nil) { break }
      }
    } catch {
      return (frames, error)
    }
    return (frames, nil)
  }

  /// A format that carries the records this one could not (nil: none were skipped, or they were
  /// of another kind), named as `convert --to` names them.
  package var suggestion: String? {
    if skippedAir > 0 { return "pcapng-ll-phdr (or another of the -ll, -nordic, -user10, -ppi formats)" }
    if skippedHCI > 0 { return "pcapng (or btsnoop-monitor, pklg)" }
    return nil
  }
}
