import BLEAnalysis
import BLECapture
import BLEEngine

/// How a file command reads each capture: the options every such command takes (damage
/// policy, maps, cache, keys, decoders) and the read they share: open, stream into the
/// command's analysis, say what the keys and the cache did.
struct CaptureReading: Sendable {
  var damage = DamagePolicy.resynchronize
  var maps = DecodingOptions()

  init(damage: DamagePolicy = .resynchronize, maps: DecodingOptions = DecodingOptions()) {
    self.damage = damage
    self.maps = maps
  }

  /// `--stop-at-damage`, shared by the commands that read a capture.
  static let stopAtDamage = OptionSpec(
    name: "stop-at-damage", short: nil, kind: .flag,
    help: "Stop at the first damaged record (as tshark and btmon do) instead of skipping to the next plausible one.")

  /// `-j`, shared by the commands that take several files.
  static let jobs = OptionSpec(
    name: "jobs", short: "j", kind: .value(valueName: "n"),
    help: "Read up to n files at once (default: one per processor); output stays in file order.")

  /// The options of a command that reads several captures, after its own.
  static let batchOptions = [jobs, stopAtDamage] + DecodingOptions.specs

  /// `--stop-at-damage` and the decoding options.
  init(_ arguments: ParsedArguments, _ context: CLIContext) throws(UsageError) {
    damage = Self.damagePolicy(arguments)
    maps = try DecodingOptions.parse(arguments, context)
  }

  static func damagePolicy(_ arguments: ParsedArguments) -> DamagePolicy {
    arguments.has("stop-at-damage") ? .stop : .resynchronize
  }

  /// A capture streamed to its end: the reader (its damage tally) and how the stream ended.
  struct Read {
    let path: Argument
    let reader: any CaptureReader
    let end: FrameStream.End

    /// Says the damage that stopped the read and what was skipped; returns the exit status.
    func finish(_ context: CLIContext) -> Int32 {
      context.finishRead(path, reader: reader, frames: end.frames, failure: end.failure)
    }
  }

  /// Opens `path` (on failure its error is said and its exit status returned) and streams it
  /// into `analysis`. `devices`: the tables as the command listed them, for the cache (`gatt`).
  /// `again`: a second read of the same capture, whose keys and cache were said by the first.
  func stream<Analysis: FrameConsumer>(
    _ path: Argument, threading: FrameStream.Threading, into analysis: inout Analysis, _ context: CLIContext,
    again: Bool = false, devices: (Analysis, FrameStream.End) -> [GATTDevice]? = { _, _ in nil }
  ) -> Result<Read, ExitCode> {
    let reader: any CaptureReader
    switch context.openCapture(path, damage: damage) {
    case .success(let opened): reader = opened
    case .failure(let code): return .failure(code)
    }
    var options = FrameStream.Options()
    options.threading = threading
    maps.apply(to: &options)
    let end = FrameStream(source: reader, options: options).run(into: &analysis)
    if !again { maps.finish(end, capture: path.display, context, devices: devices(analysis, end)) }
    return .success(Read(path: path, reader: reader, end: end))
  }
}
