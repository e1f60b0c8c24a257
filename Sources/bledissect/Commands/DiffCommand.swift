import BLEAnalysis
import BLECapture
import BLECore
import BLEDecoder
import BLEEngine
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
        help: "Leave out a class of differences: devices, gatt, parameters, mtu, phy, security, disconnect, procedure, reads, writes, values, timing, air. Repeatable.",
        choices: SessionDifference.Kind.allCases.map(\.rawValue)),
      OptionSpec(name: "threshold", short: nil, kind: .value(valueName: "name=value"),
        help: "Change a threshold: gap_factor (3), gap_s (5), bpm (10), share (0.5: counts differing by half). Repeatable."),
      stopAtDamageOption,
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
    let maps: DecodingOptions
    do {
      maps = try DecodingOptions.parse(arguments, context)
    } catch {
      return BLEDissectCLI.usageError(error.message, command: configuration.name, context)
    }
    let damage = damagePolicy(arguments)
    let paths = arguments.positionals
    // Both captures at once, one thread each.
    let results = ResultBox()
    DispatchQueue.concurrentPerform(iterations: 2) { index in
      results.set(index, read(paths[index], damage: damage, maps: maps))
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
      writeJSON(differences, notes: notes, paths, sides, verbose: arguments.has("verbose"), &context.stdout)
    } else {
      writeText(differences, notes: notes, paths, sides, verbose: arguments.has("verbose"), &context.stdout)
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

  final class ResultBox: @unchecked Sendable {
    private let lock = NSLock()
    private var results: [Int: Result] = [:]
    func set(_ index: Int, _ result: Result) {
      lock.lock()
      results[index] = result
      lock.unlock()
    }
    func get(_ index: Int) -> Result {
      lock.lock()
      defer { lock.unlock() }
      return results[index] ?? Result(side: nil, errors: [], status: 2)
    }
  }

  static func read(_ path: Argument, damage: DamagePolicy, maps: DecodingOptions) -> Result {
    let context = CLIContext(stdout: OutputBuffer(fd: nil), stderr: OutputBuffer(fd: nil), environment: [:], stdoutIsTerminal: false)
    let reader: any CaptureReader
    switch context.openCapture(path, damage: damage) {
    case .success(let opened): reader = opened
    case .failure(let code): return Result(side: nil, errors: context.stderr.bytes, status: code.status)
    }
    var options = FrameStream.Options()
    options.threading = .one
    maps.apply(to: &options)
    var consumer = DiffConsumer()
    let end = FrameStream(source: reader, options: options).run(into: &consumer)
    maps.finish(end, capture: path.display, context)
    let status = context.finishRead(path, reader: reader, frames: end.frames, failure: end.failure)
    return Result(side: consumer.side, errors: context.stderr.bytes, status: status)
  }

  /// `notes`: what the comparison left alone and why (latencies timed differently), under the
  /// A:/B: lines, after the tables' origins.
  static func writeText(
    _ differences: [SessionDifference], notes: [String] = [], _ paths: [Argument], _ sides: [DiffSide], verbose: Bool, _ out: inout OutputBuffer
  ) {
    out.append(string: "A: \(paths[0].display)\nB: \(paths[1].display)\n")
    for note in tableNotes(sides) + notes { out.append(string: "\(note)\n") }
    if differences.isEmpty {
      out.append("equivalent\n")
      return
    }
    out.append(string: "\(differences.count) difference\(differences.count == 1 ? "" : "s"), in the order they show in B (frame and seconds from the start in A, B):\n")
    for difference in differences {
      var line = "  \(difference.subject): \(difference.text)"
      let places = [difference.inA.map { "A \(placeText($0))" }, difference.inB.map { "B \(placeText($0))" }].compactMap { $0 }
      if !places.isEmpty { line += "  (\(places.joined(separator: ", ")))" }
      out.append(string: line + "\n")
      guard verbose else { continue }
      for (side, every, count) in [("A", difference.everyA, difference.placesA), ("B", difference.everyB, difference.placesB)] where every.count > 1 {
        // Eight places to a line, so that hundreds stay readable.
        for start in stride(from: 0, to: every.count, by: 8) {
          let chunk = every[start..<min(start + 8, every.count)].map(placeText).joined(separator: ", ")
          out.append(string: "      \(start == 0 ? "\(side):" : "  ") \(chunk)\n")
        }
        if let count, count > every.count { out.append(string: "         (the first \(every.count) of \(count) places)\n") }
      }
    }
  }

  static func placeText(_ place: DifferencePlace) -> String {
    "#\(place.frame) \(String(format: "%.3f", place.seconds)) s"
  }

  /// Tables a side did not learn from its own discovery (a map, the cache): what it knew of
  /// names there came from elsewhere, and the output says so.
  static func tableNotes(_ sides: [DiffSide]) -> [String] {
    var notes: [String] = []
    for (letter, side) in zip(["A", "B"], sides) {
      for (address, provenance) in side.tableSources.sorted(by: { $0.key.description < $1.key.description }) {
        let how: String
        switch provenance.source {
        case .cache: how = "from the GATT cache"
        case .imported: how = "from a --gatt map"
        case .layout: how = "matched by layout to another table"
        case .inferred: how = "inferred"
        case .capture: how = "from the capture"
        }
        notes.append("\(letter)'s GATT table of \(address): \(how) (\(provenance.origin))")
      }
    }
    return notes
  }

  static func writeJSON(
    _ differences: [SessionDifference], notes: [String] = [], _ paths: [Argument], _ sides: [DiffSide], verbose: Bool, _ out: inout OutputBuffer
  ) {
    var json = JSONWriter(out: out)
    json.open()
    json.string("format", "bledissect-diff")
    json.int("version", 2)
    json.string("a", paths[0].display)
    json.string("b", paths[1].display)
    json.openArray("gatt_maps")
    for (letter, side) in zip(["a", "b"], sides) {
      for (address, provenance) in side.tableSources.sorted(by: { $0.key.description < $1.key.description }) {
        json.open()
        json.string("side", letter)
        json.string("device", "\(address)")
        json.string("source", "\(provenance.source.key)")
        json.string("origin", provenance.origin)
        json.close()
      }
    }
    json.closeArray()
    json.openArray("notes")
    for note in notes { json.stringElement(note) }
    json.closeArray()
    json.bool("equivalent", differences.isEmpty)
    json.openArray("differences")
    for difference in differences {
      json.open()
      json.string("kind", difference.kind.rawValue)
      json.string("subject", difference.subject)
      json.string("text", difference.text)
      json.number("time_s", difference.time)
      if let a = difference.a { json.string("a_value", a) }
      if let b = difference.b { json.string("b_value", b) }
      if let count = difference.countA { json.int("a_count", count) }
      if let count = difference.countB { json.int("b_count", count) }
      for (key, place) in [("a_at", difference.inA), ("b_at", difference.inB)] {
        guard let place else { continue }
        json.open(key)
        json.int("frame", place.frame)
        json.number("time_s", place.seconds)
        json.close()
      }
      if verbose {
        for (key, every) in [("a_every", difference.everyA), ("b_every", difference.everyB)] where !every.isEmpty {
          json.openArray(key)
          for place in every {
            json.open()
            json.int("frame", place.frame)
            json.number("time_s", place.seconds)
            json.close()
          }
          json.closeArray()
        }
        if let count = difference.placesA, count > difference.everyA.count { json.int("a_places", count) }
        if let count = difference.placesB, count > difference.everyB.count { json.int("b_places", count) }
      }
      json.close()
    }
    json.closeArray()
    json.close()
    out = json.out
    out.byte(0x0A)
  }
}
