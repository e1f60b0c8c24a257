import BLECapture
import BLECore
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
      pcap and pcapng (link types 187, 201, 254), any of those gzip-compressed, and the
      btsnooz summary of Android bugreports (.txt, .zip). Use '-' to read standard input.
      Each frame gets a header line (number, time, direction, protocol, connection, summary)
      and indented detail lines; --json writes one JSON object per frame (docs/json.md).
      With -1 on a terminal, a line wider than the terminal is cut and ends in '…'.
      Filters: a filter given twice shows frames matching either value; different filters
      must all match. Times do not change with filters: hidden frames still count.
      Short options bundle: -1v, -c5, -tabs.
      """,
    options: [
      OptionSpec(name: "json", short: "j", kind: .flag, help: "Write JSON Lines, one object per frame."),
      OptionSpec(name: "format", short: nil, kind: .value(valueName: "text|json"), help: "Output format (default text)."),
      OptionSpec(name: "time", short: "t", kind: .value(valueName: "rel|abs|delta"), help: "Time column: seconds since the capture's first frame (default), UTC, or since the previous frame."),
      OptionSpec(name: "color", short: nil, kind: .value(valueName: "auto|always|never"), help: "Colour the text output (default auto: only on a terminal, never with NO_COLOR)."),
      OptionSpec(name: "oneline", short: "1", kind: .flag, help: "Text: only the header line of each frame."),
      OptionSpec(name: "verbose", short: "v", kind: .flag, help: "Text: also show lengths, opcode parts and other low-level fields."),
      OptionSpec(name: "count", short: "c", kind: .value(valueName: "n"), help: "Stop after n frames (counted before filtering)."),
      OptionSpec(name: "conn", short: nil, kind: .value(valueName: "handle"), help: "Only frames of this connection handle (decimal or 0x hex)."),
      OptionSpec(name: "peer", short: nil, kind: .value(valueName: "address"), help: "Only frames of connections to this device (AA:BB:CC:DD:EE:FF)."),
      OptionSpec(name: "handle", short: nil, kind: .value(valueName: "h"), help: "Only ATT frames naming this attribute handle (decimal or 0x hex)."),
      OptionSpec(name: "uuid", short: nil, kind: .value(valueName: "uuid"), help: "Only ATT frames about this service or characteristic (180d, 0x2a37, 128-bit)."),
      OptionSpec(name: "layer", short: nil, kind: .value(valueName: "hci|l2cap|att|gatt"), help: "Only frames decoded at least this deep (any case: ATT or att)."),
      stopAtDamageOption,
    ] + DecodingOptions.specs,
    minimumPositionals: 1,
    maximumPositionals: 1)

  static func run(_ arguments: ParsedArguments, _ context: CLIContext) -> Int32 {
    var json = arguments.has("json")
    if let format = arguments.value("format") {
      switch format.lowercased() {
      case "text": json = false
      case "json", "jsonl": json = true
      default:
        return BLEDissectCLI.usageError("--format must be text or json, not '\(format)'", command: configuration.name, context)
      }
    }
    var time = TimeDisplay.relative
    if let value = arguments.value("time") {
      guard let parsed = TimeDisplay(rawValue: value.lowercased()) else {
        return BLEDissectCLI.usageError("--time must be rel, abs or delta, not '\(value)'", command: configuration.name, context)
      }
      time = parsed
    }
    var color = context.stdoutIsTerminal && (context.environment["NO_COLOR"] ?? "").isEmpty && context.environment["TERM"] != "dumb"
    switch arguments.value("color")?.lowercased() {
    case nil, "auto"?: break
    case "always"?: color = true
    case "never"?: color = false
    case let other?:
      return BLEDissectCLI.usageError("--color must be auto, always or never, not '\(other)'", command: configuration.name, context)
    }
    var limit = Int.max
    if let value = arguments.value("count") {
      guard let count = Int(value), count >= 0 else {
        return BLEDissectCLI.usageError("--count needs a whole number, not '\(value)'", command: configuration.name, context)
      }
      limit = count
    }
    var filter = FrameFilter()
    do {
      filter = try parseFilter(arguments)
    } catch {
      return BLEDissectCLI.usageError(error.message, command: configuration.name, context)
    }
    let maps: DecodingOptions
    do {
      maps = try DecodingOptions.parse(arguments, context)
    } catch {
      return BLEDissectCLI.usageError(error.message, command: configuration.name, context)
    }
    let path = arguments.positionals[0]
    let damage = damagePolicy(arguments)
    if json {
      let renderer = JSONLinesRenderer()
      return annotate(path: path, renderer: renderer, limit: limit, filter: filter, damage: damage, maps: maps, context)
    }
    let verbose = arguments.has("verbose")
    let oneLine = arguments.has("oneline")
    // One line per frame on a terminal: a line longer than the terminal is cut (ending in
    // "…") rather than wrapped; piped output is never cut.
    let renderer = TextRenderer(time: time, color: color, details: !oneLine, verbose: verbose, lineWidth: oneLine ? context.terminalColumns : nil)
    return annotate(path: path, renderer: renderer, limit: limit, filter: filter, damage: damage, maps: maps, context)
  }

  /// The main loop: read, dissect, render, one frame at a time in reused buffers.
  static func annotate<R: FrameRenderer>(
    path: Argument, renderer: R, limit: Int, filter: FrameFilter = FrameFilter(), damage: DamagePolicy = .resynchronize,
    maps: DecodingOptions = DecodingOptions(), _ context: CLIContext
  ) -> Int32 {
    let reader: any CaptureReader
    switch context.openCapture(path, damage: damage) {
    case .success(let opened): reader = opened
    case .failure(let code): return code.status
    }
    let sink = OutputSink(context.stdout)
    let errors = OutputSink(context.stderr)
    var options = FrameStream.Options()
    options.limit = limit
    maps.apply(to: &options)
    // For measurements (docs/performance.md): one thread, every value decoded in turn.
    if context.environment["BLEDISSECT_THREADS"] == "1" { options.threading = .one }
    if let share = context.environment["BLEDISSECT_VALUE_SHARE"].flatMap(Int.init) { options.valueShare = .fixed(share) }
    let consumer = RenderingConsumer(renderer: renderer, filter: filter, output: sink, errors: errors, label: path.display)
    let end = FrameStream(source: reader, options: options).run(into: consumer)
    let (failure, frames) = (end.failure, end.frames)
    maps.finish(end, capture: path.display, context)
    context.stdout = sink.buffer
    context.stderr = errors.buffer
    context.stdout.flush()
    return context.finishRead(path, reader: reader, frames: frames, failure: failure)
  }

  /// Values of one filter option given more than once are alternatives.
  static func parseFilter(_ arguments: ParsedArguments) throws(UsageError) -> FrameFilter {
    var filter = FrameFilter()
    for text in arguments.allValues("conn") {
      guard let value = parseNumber(text), value <= 0x0EFF else { throw UsageError(message: "--conn needs a connection handle (0 to 0x0eff), not '\(text)'") }
      filter.connectionHandles.append(UInt16(value))
    }
    for text in arguments.allValues("peer") {
      guard let address = BDAddr(text) else { throw UsageError(message: "--peer needs an address like C0:11:22:33:44:55, not '\(text)'") }
      filter.peers.append(address)
    }
    for text in arguments.allValues("handle") {
      guard let value = parseNumber(text), value <= 0xFFFF else { throw UsageError(message: "--handle needs an attribute handle (0x0001 to 0xffff), not '\(text)'") }
      filter.attributeHandles.append(UInt16(value))
    }
    for text in arguments.allValues("uuid") {
      guard let uuid = BluetoothUUID(text) else { throw UsageError(message: "--uuid needs a UUID (180d, 0x2a37 or 128-bit), not '\(text)'") }
      filter.uuids.append(uuid)
    }
    for text in arguments.allValues("layer") {
      switch text.lowercased() {
      case "hci": filter.layers.append(.hci)
      case "l2cap": filter.layers.append(.l2cap)
      case "att": filter.layers.append(.att)
      case "gatt": filter.layers.append(.gatt)
      default: throw UsageError(message: "--layer must be hci, l2cap, att or gatt, not '\(text)'")
      }
    }
    return filter
  }

  /// A decimal number or 0x-prefixed hex.
  static func parseNumber(_ text: String) -> UInt32? {
    if text.lowercased().hasPrefix("0x") { return UInt32(text.dropFirst(2), radix: 16) }
    return UInt32(text)
  }
}
