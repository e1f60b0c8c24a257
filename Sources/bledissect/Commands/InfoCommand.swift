import BLECapture
import BLECore

/// `bledissect info FILE`: the format, the frame count and the time span, without decoding.
enum InfoCommand: CLICommand {
  static let configuration = CommandConfiguration(
    name: "info",
    abstract: "Show a capture's format, frame count and time span.",
    usage: "info <file>",
    options: [],
    minimumPositionals: 1,
    maximumPositionals: 1)

  static func run(_ arguments: ParsedArguments, _ context: CLIContext) -> Int32 {
    let path = arguments.positionals[0]
    let reader: any CaptureReader
    switch context.openCapture(path) {
    case .success(let opened): reader = opened
    case .failure(let code): return code.status
    }
    var frames = 0
    var first: Int64?
    var last: Int64 = 0
    // Counted by kind (no String per record), named once at the end.
    var counts: [PacketKind: Int] = [:]
    var status = ExitStatus.success
    var damage: String?
    do {
      while let record = try reader.next() {
        frames += 1
        if first == nil { first = record.timestamp }
        last = record.timestamp
        counts[record.kind, default: 0] += 1
      }
    } catch {
      damage = error.message
      status = error.exitStatus
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
    if let damage {
      context.stdout.flush()
      context.error("\(path.display): \(damage)")
    }
    return status
  }
}
