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

  /// Reads the options; a bad value is a usage error (printed, status 64).
  static func parse(_ arguments: ParsedArguments, command: String, _ context: CLIContext) -> Result<RenderSettings, ExitCode> {
    func usage(_ message: String) -> Result<RenderSettings, ExitCode> {
      .failure(ExitCode(status: BLEDissectCLI.usageError(message, command: command, context)))
    }
    var settings = RenderSettings()
    settings.json = arguments.has("json")
    if let format = arguments.value("format") {
      switch format.lowercased() {
      case "text": settings.json = false
      case "json", "jsonl": settings.json = true
      default: return usage("--format must be text or json, not '\(format)'")
      }
    }
    if let value = arguments.value("time") {
      guard let parsed = TimeDisplay(rawValue: value.lowercased()) else { return usage("--time must be rel, abs or delta, not '\(value)'") }
      settings.time = parsed
    }
    settings.color = context.stdoutIsTerminal && (context.environment["NO_COLOR"] ?? "").isEmpty && context.environment["TERM"] != "dumb"
    switch arguments.value("color")?.lowercased() {
    case nil, "auto"?: break
    case "always"?: settings.color = true
    case "never"?: settings.color = false
    case let other?: return usage("--color must be auto, always or never, not '\(other)'")
    }
    if let value = arguments.value("count") {
      guard let count = Int(value), count >= 0 else { return usage("--count needs a whole number, not '\(value)'") }
      settings.limit = count
    }
    do {
      settings.filter = try AnnotateCommand.parseFilter(arguments)
    } catch {
      return usage(error.message)
    }
    do {
      settings.maps = try DecodingOptions.parse(arguments, context)
    } catch {
      return usage(error.message)
    }
    settings.verbose = arguments.has("verbose")
    settings.oneLine = arguments.has("oneline")
    // --errors also takes the frames that prove a rule broken: check's findings mark them.
    settings.check = arguments.has("check") || arguments.has("errors")
    settings.filter.hidesEmptyPDUs = settings.oneLine && !settings.json && !arguments.has("empty")
    settings.damage = CaptureReading.damagePolicy(arguments)
    return .success(settings)
  }
}
