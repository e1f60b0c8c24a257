import BLEAnalysis
import BLECore
import BLERender
import Foundation

/// `bledissect diff A B`: what differs between two sessions, in a few lines.
enum DiffCommand: CLICommand {
  static let configuration = CommandConfiguration(
    name: "diff",
    abstract: "Compare two captures of the same device: what differs between a working and a broken session.",
    usage: "diff [options] <a> <b>",
    discussion: """
      Compares what the sessions did, not their bytes: devices (matched by identity address,
      then by name), their GATT tables as far as both captures looked (characteristics by
      UUID; moved handles reported once), what the GATT client discovered, subscribed to, read
      and wrote (values per characteristic: strings as text, decoded values in words, payloads
      in hex; repeated exchanges counted on one line), each connection's parameters, MTU, PHY,
      security and ending (by role: a phone's and a strap's capture of one session compare
      equal), and values and timing beyond thresholds (a silence 3 times and 5 s longer than
      the other side's longest, push counts differing by half, mean heart rates 10 bpm apart,
      a median ATT latency 3 times and 50 ms slower). Latencies are compared only like with
      like: the same procedure asked by the same end, timed the same way (a host's round trip
      or its own answers in an HCI capture, the air in a sniffed one); otherwise a line under
      A:/B: says why not. Each line ends with where the difference first shows: frame number and seconds from the
      start, in A and in B. Handles, timestamps and time-of-day values are not compared. The
      exit status is diff(1)'s: 0 equivalent, 1 different, 2 trouble (below).
      """,
    options: [
      OptionSpec(name: "json", short: nil, kind: .flag, help: "Write the comparison as one JSON object (docs/json.md)."),
      OptionSpec(name: "verbose", short: "v", kind: .flag, help: "Also list every place each difference shows (frame and seconds), eight to a line."),
      OptionSpec(name: "ignore", short: nil, kind: .value(valueName: "kind"),
        help: "Leave out a class of differences: devices, gatt, parameters, mtu, phy, security, disconnect, procedure, reads, writes, values, timing, air, rules (a rule of the specifications broken in one capture only, as check finds it). Repeatable.",
        choices: SessionDifference.Kind.allCases.map(\.rawValue)),
      OptionSpec(name: "threshold", short: nil, kind: .value(valueName: "name=value"),
        help: "Change a threshold: gap_factor (3), gap_s (5), bpm (10), share (0.5: counts differing by half). Repeatable."),
      CaptureReading.stopAtDamage,
    ] + DecodingOptions.specs,
    exitStatus: """
      EXIT STATUS (diff(1)'s):
        0   the sessions are equivalent
        1   they differ
        2   trouble: a capture is unreadable (missing or empty file, not a capture, unsupported
            format or link type: nothing is compared), or damaged (a truncated or corrupt record,
            skipped or, with --stop-at-damage, ending the read: the comparison of what could be
            read is printed, and one line on stderr says it is incomplete)
        64  usage error (one line on stderr says what is wrong)
      """,
    minimumPositionals: 2,
    maximumPositionals: 2)

  static func run(_ arguments: ParsedArguments, _ context: CLIContext) -> Int32 {
    var ignored: Set<SessionDifference.Kind> = []
    for text in arguments.allValues("ignore") {
      guard let kind = SessionDifference.Kind(rawValue: text.lowercased()) else {
        return BLEDissectCLI.usageError(
          "--ignore takes one of \(SessionDifference.Kind.allCases.map(\.rawValue).joined(separator: ", ")), not '\(text)'", command: configuration.name, context)
      }
      ignored.insert(kind)
    }
    var diff = SessionDiff()
    for text in arguments.allValues("threshold") {
      let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
      guard parts.count == 2, let value = Double(parts[1]), value >= 0, value.isFinite else {
        return BLEDissectCLI.usageError("--threshold needs name=value (gap_factor=3, gap_s=5, bpm=10, share=0.5), not '\(text)'", command: configuration.name, context)
      }
      switch parts[0] {
      case "gap_factor": diff.thresholds.gapFactor = value
      case "gap_s": diff.thresholds.gapSeconds = value
      case "bpm": diff.thresholds.bpm = value
      case "share": diff.thresholds.share = value
      default:
        return BLEDissectCLI.usageError("--threshold: unknown name '\(parts[0])' (gap_factor, gap_s, bpm, share)", command: configuration.name, context)
      }
    }
    let reading: CaptureReading
    do {
      reading = try CaptureReading(arguments, context)
    } catch {
      return BLEDissectCLI.usageError(error.message, command: configuration.name, context)
    }
    let paths = arguments.positionals
    // Both captures at once, one thread each.
    let results = ResultBox()
    DispatchQueue.concurrentPerform(iterations: 2) { index in
      results.set(index, read(paths[index], reading))
    }
    var unreadable = false
    var damaged: [String] = []
    var sides: [DiffSide] = []
    for index in 0..<2 {
      let result = results.get(index)
      for byte in result.errors { context.stderr.byte(byte) }
      if let side = result.side { sides.append(side) }
      if result.status >= ExitStatus.unreadable {
        unreadable = true
      } else if result.status == ExitStatus.damaged {
        damaged.append(index == 0 ? "A" : "B")
      }
    }
    context.stderr.flush()
    guard sides.count == 2, !unreadable else { return trouble }
    var differences = diff.compare(sides[0], sides[1])
    differences.removeAll { ignored.contains($0.kind) }
    let notes = diff.notes(sides[0], sides[1])
    if arguments.has("json") {
      DiffWriter.json(differences, notes: notes, paths.map(\.display), sides, verbose: arguments.has("verbose"), &context.stdout)
    } else {
      DiffWriter.text(differences, notes: notes, paths.map(\.display), sides, verbose: arguments.has("verbose"), &context.stdout)
    }
    context.stdout.flush()
    // A damaged side was compared only as far as it could be read: a difference may be
    // missing or be the damage's doing, so the answer is not reliable (diff(1)'s trouble).
    if !damaged.isEmpty {
      let which = damaged.count == 2 ? "A and B are" : "\(damaged[0]) is"
      context.error("diff: \(which) damaged: the comparison covers only what could be read (status 2)")
      return trouble
    }
    return differences.isEmpty ? equivalent : different
  }

  /// diff(1)'s exit statuses.
  static let equivalent: Int32 = 0
  static let different: Int32 = 1
  static let trouble: Int32 = 2

  struct Result: Sendable {
    var side: DiffSide?
    var errors: [UInt8]
    var status: Int32
  }

  final class ResultBox: Sendable {
    private let results = Locked<[Int: Result]>([:])
    func set(_ index: Int, _ result: Result) { results.withLock { $0[index] = result } }
    func get(_ index: Int) -> Result { results.withLock { $0[index] } ?? Result(side: nil, errors: [], status: 2) }
  }

  static func read(_ path: Argument, _ reading: CaptureReading) -> Result {
    let context = CLIContext(stdout: OutputBuffer(fd: nil), stderr: OutputBuffer(fd: nil), environment: [:], stdoutIsTerminal: false)
    var consumer = DiffConsumer()
    switch reading.stream(path, threading: .one, into: &consumer, context) {
    case .success(let read):
      let status = read.finish(context)  // says the damage first
      return Result(side: consumer.side, errors: context.stderr.bytes, status: status)
    case .failure(let code): return Result(side: nil, errors: context.stderr.bytes, status: code.status)
    }
  }
}
