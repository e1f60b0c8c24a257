import BLECapture
import BLEDecoder
import BLERender

/// What annotate and live read from their options: output, filters, damage, decoding.
struct RenderSettings {
  var json = false
  var time = TimeDisplay.relative
  var color = false
  var verbose = false
  var oneLine = false
  var limit = Int.max
  var filter = FrameFilter()
  /// `--check`: frames that prove a rule of the specifications broken carry the finding.
  var check = false
  var damage = DamagePolicy.resynchronize
  var maps = DecodingOptions()

  /// Reads the options; a bad value is a usage error.
  static func parse(_ arguments: ParsedArguments, _ context: CLIContext) throws(UsageError) -> RenderSettings {
    func usage(_ message: String) -> UsageError { UsageError(message: message) }
    var settings = RenderSettings()
    settings.json = arguments.has("json")
    if let format = arguments.value("format") {
      switch format.lowercased() {
      case "text": settings.json = false
      case "json", "jsonl": settings.json = true
      default: throw usage("--format must be text or json, not '\(format)'")
      }
    }
    if let value = arguments.value("time") {
      guard let parsed = TimeDisplay(rawValue: value.lowercased()) else { throw usage("--time must be rel, abs or delta, not '\(value)'") }
      settings.time = parsed
    }
    settings.color = context.stdoutIsTerminal && (context.environment["NO_COLOR"] ?? "").isEmpty && context.environment["TERM"] != "dumb"
    switch arguments.value("color")?.lowercased() {
    case nil, "auto"?: break
    case "always"?: settings.color = true
    case "never"?: settings.color = false
    case let other?: throw usage("--color must be auto, always or never, not '\(other)'")
    }
    if let value = arguments.value("count") {
      guard let count = Int(value), count >= 1 else { throw usage("--count needs a number of frames, 1 or more, not '\(value)'") }
      settings.limit = count
    }
    settings.filter = try AnnotateCommand.parseFilter(arguments)
    settings.maps = try DecodingOptions.parse(arguments, context)
    settings.verbose = arguments.has("verbose")
    settings.oneLine = arguments.has("oneline")
    // --errors also takes the frames that prove a rule broken: check's findings mark them.
    settings.check = arguments.has("check") || arguments.has("errors")
    settings.filter.hidesEmptyPDUs = settings.oneLine && !settings.json && !arguments.has("empty")
    settings.damage = CaptureReading.damagePolicy(arguments)
    return settings
  }
}
