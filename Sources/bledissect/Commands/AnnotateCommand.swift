import BLECapture
import BLECore
import BLEDecoder
import BLERender

/// `bledissect [annotate] FILE`: every frame decoded, as text or JSON Lines.
enum AnnotateCommand: CLICommand {
  static let configuration = CommandConfiguration(
    name: "annotate",
    abstract: "Annotate every frame of a capture (the default command).",
    usage: "annotate [options] <file>",
    discussion: """
      Reads btsnoop (datalinks 1001, 1002, 2001), Apple PacketLogger (.pklg, both byte orders),
      pcap and pcapng (link types 187, 201, 254). Use '-' to read standard input.
      Each frame gets a header line (number, time, direction, kind, connection, summary) and
      indented detail lines; --json writes one JSON object per frame (docs/json.md).
      """,
    options: [
      OptionSpec(name: "json", short: "j", kind: .flag, help: "Write JSON Lines, one object per frame."),
      OptionSpec(name: "format", short: nil, kind: .value(valueName: "text|json"), help: "Output format (default text)."),
      OptionSpec(name: "time", short: "t", kind: .value(valueName: "rel|abs|delta"), help: "Time column: since the first frame (default), UTC, or since the previous frame."),
      OptionSpec(name: "color", short: nil, kind: .value(valueName: "auto|always|never"), help: "Colour the text output (default auto: only on a terminal, never with NO_COLOR)."),
      OptionSpec(name: "oneline", short: "1", kind: .flag, help: "Text: only the header line of each frame."),
      OptionSpec(name: "verbose", short: "v", kind: .flag, help: "Text: also show lengths, opcode parts and other low-level fields."),
      OptionSpec(name: "count", short: "c", kind: .value(valueName: "n"), help: "Stop after n frames."),
    ],
    minimumPositionals: 1,
    maximumPositionals: 1)

  static func run(_ arguments: ParsedArguments, _ context: CLIContext) -> Int32 {
    var json = arguments.has("json")
    if let format = arguments.value("format") {
      switch format {
      case "text": json = false
      case "json", "jsonl": json = true
      default:
        return BLEDissectCLI.usageError("--format must be text or json, not '\(format)'", ArgumentParser.help(for: configuration), context)
      }
    }
    var time = TimeDisplay.relative
    if let value = arguments.value("time") {
      guard let parsed = TimeDisplay(rawValue: value) else {
        return BLEDissectCLI.usageError("--time must be rel, abs or delta, not '\(value)'", ArgumentParser.help(for: configuration), context)
      }
      time = parsed
    }
    var color = context.stdoutIsTerminal && (context.environment["NO_COLOR"] ?? "").isEmpty && context.environment["TERM"] != "dumb"
    switch arguments.value("color") {
    case nil, "auto"?: break
    case "always"?: color = true
    case "never"?: color = false
    case let other?:
      return BLEDissectCLI.usageError("--color must be auto, always or never, not '\(other)'", ArgumentParser.help(for: configuration), context)
    }
    var limit = Int.max
    if let value = arguments.value("count") {
      guard let count = Int(value), count >= 0 else {
        return BLEDissectCLI.usageError("--count needs a whole number, not '\(value)'", ArgumentParser.help(for: configuration), context)
      }
      limit = count
    }
    let path = arguments.positionals[0]
    if json {
      var renderer = JSONLinesRenderer()
      return annotate(path: path, renderer: &renderer, limit: limit, verboseFields: true, context)
    }
    let verbose = arguments.has("verbose")
    var renderer = TextRenderer(time: time, color: color, details: !arguments.has("oneline"), verbose: verbose)
    return annotate(path: path, renderer: &renderer, limit: limit, verboseFields: verbose, context)
  }

  /// The main loop: read, dissect, render, one frame at a time in reused buffers.
  static func annotate<R: FrameRenderer>(path: String, renderer: inout R, limit: Int, verboseFields: Bool, _ context: CLIContext) -> Int32 {
    let reader: any CaptureReader
    switch context.openCapture(path) {
    case .success(let opened): reader = opened
    case .failure(let code): return code.status
    }
    var dissector = Dissector()
    var frame = DissectedFrame()
    // Plain text hides verbose fields, so they need not be built at all.
    frame.fields.keepsVerbose = verboseFields
    var number = 0
    do {
      while number < limit, let record = try reader.next() {
        number += 1
        dissector.dissect(record, number: number, into: &frame)
        renderer.render(frame, to: &context.stdout)
        if context.stdout.isClosed { return ExitStatus.success }
      }
    } catch {
      renderer.finish(to: &context.stdout)
      context.stdout.flush()
      context.error("\(path): \(error.message)")
      return error.exitStatus
    }
    renderer.finish(to: &context.stdout)
    return ExitStatus.success
  }
}
