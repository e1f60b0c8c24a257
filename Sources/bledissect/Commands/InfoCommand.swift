import BLECapture
import BLECore

/// `bledissect info FILE...`: the format, the frame count and the time span, without decoding;
/// one block per file, in the order given, a blank line between blocks.
enum InfoCommand: CLICommand {
  static let configuration = CommandConfiguration(
    name: "info",
    abstract: "Show a capture's format, frame count and time span.",
    usage: "info <file>...",
    options: [stopAtDamageOption],
    minimumPositionals: 1,
    maximumPositionals: Int.max)

  /// Skips listed one by one (info prints after reading; the list must stay bounded).
  static let listedSkips = 100

  /// The worst exit status of the files (2 unreadable, 1 damaged, 0).
  static func run(_ arguments: ParsedArguments, _ context: CLIContext) -> Int32 {
    var status: Int32 = 0
    for (index, path) in arguments.positionals.enumerated() {
      if index > 0 { context.stdout.append("\n") }
      status = max(status, runOne(path, arguments, context))
    }
    return status
  }

  static func runOne(_ path: Argument, _ arguments: ParsedArguments, _ context: CLIContext) -> Int32 {
    let reader: any CaptureReader
    switch context.openCapture(path, damage: damagePolicy(arguments)) {
    case .success(let opened): reader = opened
    case .failure(let code): return code.status
    }
    var frames = 0
    var first: Int64?
    var last: Int64 = 0
    // Counted by kind (no String per record), named once at the end.
    var counts: [PacketKind: Int] = [:]
    var failure: CaptureError?
    var skips: [SkippedDamage] = []
    // One record, its buffer reused (a fresh one per record costs an allocation each).
    var record = CaptureRecord(timestamp: 0, direction: nil, kind: .other(0), bytes: [])
    do {
      while try reader.next(into: &record) {
        frames += 1
        if first == nil { first = record.timestamp }
        last = record.timestamp
        counts[record.kind, default: 0] += 1
        if record.followsDamage, skips.count < Self.listedSkips, let skip = reader.damage.last { skips.append(skip) }
      }
    } catch {
      failure = error
    }
    context.stdout.append(string: "file:     \(path.display)\n")
    context.stdout.append(string: "format:   \(reader.format.name), \(reader.format.detail)\n")
    context.stdout.append(string: "frames:   \(frames)\n")
    if let first {
      context.stdout.append("start:    ")
      context.stdout.utcDateTime(first)
      context.stdout.append(" UTC\nduration: ")
      context.stdout.seconds(Timestamp.elapsed(from: first, to: last))
      context.stdout.append(" s\n")
    }
    var kinds: [String: Int] = [:]
    for (kind, count) in counts { kinds[kind.jsonName.description, default: 0] += count }
    for (kind, count) in kinds.sorted(by: { $0.value > $1.value || ($0.value == $1.value && $0.key < $1.key) }) {
      context.stdout.append(string: "  \(kind): \(count)\n")
    }
    let skipped = reader.damage
    if skipped.places > 0 {
      context.stdout.append(string: "skipped:  \(skipped.bytes) damaged bytes in \(skipped.places) place\(skipped.places == 1 ? "" : "s")\n")
    }
    context.stdout.flush()
    // Each skip in order, then the damage that ended the read and the tally.
    for skip in skips { context.error("\(path.display): \(skip.message)") }
    if skipped.places > skips.count {
      context.error("\(path.display): \(skipped.places - skips.count) more damaged places not listed")
    }
    return context.finishRead(path, reader: reader, frames: frames, failure: failure?.sourceFailure)
  }
}
