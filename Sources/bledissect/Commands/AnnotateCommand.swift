import BLEAnalysis
import BLECapture
import BLEDecoder
import BLEEngine
import BLERender

/// `bledissect [annotate] FILE`: every frame decoded, as text or JSON Lines.
enum AnnotateCommand: CLICommand {
  static let configuration = CommandConfiguration(
    name: "annotate",
    abstract: "Annotate every frame of a capture (the default command).",
    usage: "annotate [options] <file>",
    discussion: """
      Reads btsnoop (datalinks 1001, 1002, 2001), Apple PacketLogger (.pklg, both byte orders),
      pcap and pcapng (HCI: link types 187, 201, 254; LE air sniffers: 251, 256, 272 nRF Sniffer,
      157 its legacy form, 192 PPI from Ubertooth), any of those gzip-compressed, and Android
      bugreports: from a .zip the btsnoop_hci.log it holds, else (and from a .txt) the
      btsnooz summary in the text. Use '-' to read standard input.
      Each frame gets a header line (number, time, direction, protocol, connection, summary)
      and indented detail lines; --json writes one JSON object per frame (docs/json.md).
      With -1, values come before their attribute's name; on a terminal, a line wider than the
      terminal leaves out the peer's address, then is cut and ends in '…'.
      Filters: a filter given twice shows frames matching either value; different filters
      must all match. Times do not change with filters: hidden frames still count.
      Short options bundle: -1v, -c5, -tabs.
      """,
    options: renderingOptions + [sliceOption] + DecodingOptions.specs,
    minimumPositionals: 1,
    maximumPositionals: 1)

  /// The options of the output, filters and damage, shared with `live`.
  static let renderingOptions: [OptionSpec] = [
    OptionSpec(name: "json", short: nil, kind: .flag, help: "Write JSON Lines, one object per frame."),
    OptionSpec(name: "format", short: nil, kind: .value(valueName: "text|json"), help: "Output format (default text)."),
    OptionSpec(name: "time", short: "t", kind: .value(valueName: "rel|abs|delta"), help: "Time column: seconds since the capture's first frame (default), UTC, or since the previous frame."),
    OptionSpec(name: "color", short: nil, kind: .value(valueName: "auto|always|never"), help: "Colour the text output (default auto: only on a terminal, never with NO_COLOR)."),
    OptionSpec(name: "oneline", short: "1", kind: .flag, help: "Text: only the header line of each frame."),
    OptionSpec(name: "empty", kind: .flag, help: "With -1: show the empty link-layer PDUs of air captures too (left out and counted otherwise)."),
    OptionSpec(name: "verbose", short: "v", kind: .flag, help: "Text: also show lengths, opcode parts and other low-level fields."),
    OptionSpec(name: "check", short: nil, kind: .flag,
      help: "Mark the frames that prove a rule of the specifications broken (check's findings): [! RULE] on the header line, then the rule, severity, side, what happened and the clause. Findings a later frame reveals are check's only."),
    OptionSpec(name: "count", short: "c", kind: .value(valueName: "n"), help: "Stop after n frames (counted before filtering)."),
    OptionSpec(name: "conn", short: nil, kind: .value(valueName: "handle"), help: "Only frames of this connection handle (decimal or 0x hex)."),
    OptionSpec(name: "peer", short: nil, kind: .value(valueName: "address"), help: "Only frames of this device (AA:BB:CC:DD:EE:FF): its connections, its advertising, the connection requests to it."),
    OptionSpec(name: "index", short: nil, kind: .value(valueName: "hciN"), help: "Only frames of this controller (hci0 or 0; monitor captures and live)."),
    OptionSpec(name: "handle", short: nil, kind: .value(valueName: "h"), help: "Only ATT frames naming this attribute handle (decimal or 0x hex)."),
    OptionSpec(name: "uuid", short: nil, kind: .value(valueName: "uuid"), help: "Only ATT frames about this service or characteristic (180d, 0x2a37, 128-bit)."),
    OptionSpec(name: "layer", short: nil, kind: .value(valueName: "hci|l2cap|att|gatt"), help: "Only frames decoded at least this deep (any case: ATT or att)."),
    OptionSpec(name: "opcode", short: nil, kind: .value(valueName: "op"), help: "Only ATT PDUs with this opcode (0x1b, or its name: handle_value_notification)."),
    OptionSpec(name: "errors", short: nil, kind: .flag, help: "Only frames with a warning or a part that did not decode, and frames that prove a rule broken (as --check marks them)."),
    OptionSpec(name: "from", short: nil, kind: .value(valueName: "time"), help: "Only frames from this time on: seconds since the first frame (12.5) or UTC (2026-12-06T05:37:27Z)."),
    OptionSpec(name: "to", short: nil, kind: .value(valueName: "time"), help: "Only frames up to this time (as --from)."),
    OptionSpec(name: "name", short: nil, kind: .value(valueName: "name"), help: "Only frames of devices whose advertised or GAP name holds this (any case), from the frame it was first seen in."),
    CaptureReading.stopAtDamage,
  ]

  static func run(_ arguments: ParsedArguments, _ context: CLIContext) -> Int32 {
    let settings: RenderSettings
    do { settings = try RenderSettings.parse(arguments, context) } catch {
      return BLEDissectCLI.usageError(error.message, command: configuration.name, context)
    }
    let path = arguments.positionals[0]
    if let target = arguments.value("write") { return writeSlice(path, to: Argument(target), settings, context) }
    let reader: any CaptureReader
    switch context.openCapture(path, damage: settings.damage) {
    case .success(let opened): reader = opened
    case .failure(let code): return code.status
    }
    let end = stream(reader, settings: settings, label: path.display, context)
    return context.finishRead(path, reader: reader, frames: end.frames, failure: end.failure)
  }

  /// Reads `reader` to its end through the renderer the settings ask for (text or JSON Lines),
  /// writing to the context's standard output; the GATT cache is updated at the end.
  /// `whenOutputCloses` is called when standard output closes (a reader of a pipe left).
  /// `threading` is `.one` for live sources: their frames come far slower than one thread
  /// decodes, and a second thread waiting for each small batch costs more than it saves.
  static func stream(
    _ reader: any CaptureReader, settings: RenderSettings, label: String, threading: FrameStream.Threading = .two,
    live: Bool = false, whenOutputCloses: (() -> Void)? = nil, _ context: CLIContext
  ) -> FrameStream.End {
    if settings.json {
      return stream(
        reader, renderer: JSONLinesRenderer(), settings: settings, label: label, threading: threading, live: live, whenOutputCloses: whenOutputCloses,
        context)
    }
    // One line per frame on a terminal: a line longer than the terminal is cut (ending in
    // "…") rather than wrapped; piped output is never cut.
    let renderer = TextRenderer(
      time: settings.time, color: settings.color, details: !settings.oneLine, verbose: settings.verbose,
      lineWidth: settings.oneLine ? context.terminalColumns : nil)
    return stream(reader, renderer: renderer, settings: settings, label: label, threading: threading, live: live, whenOutputCloses: whenOutputCloses, context)
  }

  static func stream<R: FrameRenderer>(
    _ reader: any CaptureReader, renderer: R, settings: RenderSettings, label: String, threading: FrameStream.Threading,
    live: Bool = false, whenOutputCloses: (() -> Void)?, _ context: CLIContext
  ) -> FrameStream.End {
    var options = FrameStream.Options()
    options.limit = settings.limit
    options.threading = threading
    // Live: each frame as it comes (a file's first values are labelled once a guess is made).
    options.labelsInHindsight = !live
    settings.maps.apply(to: &options)
    // For measurements (docs/performance.md): one thread, every value decoded in turn.
    if context.environment["BLEDISSECT_THREADS"] == "1" { options.threading = .one }
    if let share = context.environment["BLEDISSECT_VALUE_SHARE"].flatMap(Int.init) { options.valueShare = .fixed(share) }
    // The buffers go to the consumer for the run and come back with it.
    var consumer = RenderingConsumer(renderer: renderer, filter: settings.filter, output: context.stdout, errors: context.stderr, label: label)
    consumer.whenOutputCloses = whenOutputCloses
    if settings.check {
      var analysis = ConformanceAnalysis()
      analysis.keepsEachFinding = true
      consumer.conformance = analysis
    }
    let end = FrameStream(source: reader, options: options).run(into: &consumer)
    context.stdout = consumer.output
    context.stderr = consumer.errors
    settings.maps.finish(end, capture: label, context)
    context.stdout.flush()
    return end
  }

  /// Values of one filter option given more than once are alternatives.
  static func parseFilter(_ arguments: ParsedArguments) throws(UsageError) -> FrameFilter {
    var filter = FrameFilter()
    for option in FrameFilter.optionNames {
      let values = option == "errors" ? (arguments.has(option) ? [""] : []) : arguments.allValues(option)
      for text in values {
        do { try filter.add(option, text) } catch { throw UsageError(message: error.message) }
      }
    }
    return filter
  }
}
