#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import BLECapture
import BLECore
import BLEEngine

/// `bledissect live`: decodes a capture while it is written: a growing file (`--follow`), a
/// pipe or FIFO, or Android's btsnoop feed over TCP (`--android`), with annotate's output.
enum LiveCommand: CLICommand {
  static let defaultAndroidPort: UInt16 = 8872

  static let configuration = CommandConfiguration(
    name: "live",
    abstract: "Decode HCI traffic live: the Linux monitor channel, a growing file, a pipe, Android's feed.",
    usage: "live [options] [--follow <file> | --android [[host:]port] | -]",
    discussion: """
      --follow FILE reads a btsnoop or PacketLogger file as it grows (like tail -F): its end
      is looked at every 50 ms; a file that shrinks is read again from its start, a name that
      comes to name another file (rotation) is opened again, each said on stderr. A file not
      created yet is waited for (its directory must exist); a file replaced with something
      that is not a capture is waited on until it holds a capture header. '-' (or a FIFO) is
      read as bytes arrive, until its writer closes it: any capture format, so a sniffer's
      pcap stream (nRF Sniffer, Sniffle: link types 256, 272) is decoded as it comes.
      --android connects to Android's btsnoop feed (default 127.0.0.1:8872, reached with
      'adb forward tcp:8872 tcp:8872'); when the connection is refused or drops, it says so
      on stderr and tries again every second.
      Output, filters and decoding options are annotate's. Frames are shown as they come.
      Ctrl-C (SIGINT), SIGTERM and SIGHUP end it cleanly (status 0), after one line on stderr:
      frames, bytes of packets, drops (connections lost, files truncated or replaced); damage
      skipped on the way is said on stderr as it is met, not in the status.
      -w FILE writes every record received to FILE as it comes (btsnoop H4; pcapng or pcap
      or PacketLogger by the name's extension), each record whole, so the file is a valid
      capture at any moment.
      Without a source: the Linux Bluetooth monitor channel (every controller, as btmon),
      which needs CAP_NET_RAW (sudo, or setcap cap_net_raw+ep); under sudo, files are
      written as the user who ran it. Stderr names the controllers present (or says none is
      yet), and those that come and go.
      --hr shows heart-rate measurements only, a row each as hr writes them; on a terminal a
      status line under them keeps each strap's latest reading.
      """,
    options: [
      OptionSpec(name: "follow", short: "f", kind: .value(valueName: "file"), help: "Follow a growing btsnoop or PacketLogger file (a FIFO is read as a stream)."),
      OptionSpec(name: "android", short: nil, kind: .flag, help: "Read Android's btsnoop feed over TCP at [host:]port (the argument; default 127.0.0.1:8872)."),
      OptionSpec(name: "hr", short: nil, kind: .flag, help: "Show heart-rate measurements only, a row each (hr's columns); a status line on a terminal."),
      OptionSpec(name: "write", short: "w", kind: .value(valueName: "file"), help: "Also write every record received to this file (btsnoop; .pcapng, .pcap, .pklg by extension)."),
    ] + AnnotateCommand.renderingOptions + DecodingOptions.specs,
    exitStatus: """
      EXIT STATUS:
        0   ended by Ctrl-C (SIGINT), SIGTERM, SIGHUP or its output closing (damage skipped on
            the way is said on stderr, not in the status), or a pipe or FIFO read to its end
        1   a pipe or FIFO read to its end with damage skipped, or a read ended by damage
            (--stop-at-damage, a truncated last record), as annotate
        2   the source cannot be read: no permission, a missing directory, not a capture, the
            monitor channel unavailable; or -w could not write
        64  usage error (one line on stderr says what is wrong)
      """,
    minimumPositionals: 0,
    maximumPositionals: 1)

  static func run(_ arguments: ParsedArguments, _ context: CLIContext) -> Int32 {
    let settings: RenderSettings
    do { settings = try RenderSettings.parse(arguments, context) } catch {
      return BLEDissectCLI.usageError(error.message, command: configuration.name, context)
    }
    if arguments.positionals.isEmpty && !arguments.has("android") && arguments.value("follow") == nil {
      return monitor(arguments, settings: settings, context)
    }
    let origin: LiveReader.Origin
    switch chooseOrigin(arguments, context) {
    case .success(let chosen): origin = chosen
    case .failure(let code): return code.status
    }
    let control = makeControl()
    let reader: LiveReader
    do {
      reader = try LiveReader(origin, control: control, damage: settings.damage) { message in
        writeToStandardError("bledissect: \(message)\n")
      }
    } catch {
      context.error(describe(error, name: label(origin)))
      return ExitStatus.unreadable
    }
    var recording: (path: Argument, recorder: CaptureRecorder)?
    if let value = arguments.value("write") {
      let path = Argument(value)
      if case .file(let followed, _) = origin, FileStatus.sameFile(followed, path.bytes) {
        context.error("\(path.display) is the file being followed: -w cannot write over its input")
        return ExitStatus.usage
      }
      guard let recorder = openRecorder(path, context) else { return ExitStatus.unreadable }
      reader.recorder = recorder
      recording = (path, recorder)
    }
    let handlers = SignalStop(control)
    let end = stream(reader, label: reader.name, settings: settings, heartRate: arguments.has("hr"), control: control, context)
    handlers.restore()
    var summary = "live: \(end.frames) frame\(end.frames == 1 ? "" : "s"), \(reader.bytes) byte\(reader.bytes == 1 ? "" : "s")"
    summary += ", \(reader.interruptions) drop\(reader.interruptions == 1 ? "" : "s")"
    if let recording {
      let records = recording.recorder.records
      summary += "; \(records) record\(records == 1 ? "" : "s") written to \(recording.path.display)"
      let skipped = recording.recorder.skipped
      if skipped > 0 { summary += " (\(skipped) skipped: the format cannot carry them)" }
    }
    var status = context.finishRead(Argument(reader.name), reader: reader, frames: end.frames, failure: end.failure)
    // Stopped (a signal, or the output closing): live's normal end, status 0 as its help says,
    // whatever damage was skipped on the way (each skip was said on stderr, and counted above).
    if control.stopRequested { status = ExitStatus.success }
    context.error(summary)
    if reader.recordingFailure != nil { status = max(status, ExitStatus.unreadable) }
    return status
  }

  /// The stop control of a live read; standard output is watched when it is a pipe (its
  /// reader leaving, `| head`, then ends a wait no new record would end).
  static func makeControl() -> LiveControl {
    var output = stat()
    let outputIsPipe = fstat(1, &output) == 0 && output.st_mode & S_IFMT == S_IFIFO
    return LiveControl(watchedOutput: outputIsPipe ? 1 : -1)
  }

  /// The `-w` file, created with its format's header; nil (and the reason said) when it cannot be.
  static func openRecorder(_ path: Argument, format: CaptureWriteFormat? = nil, comment: String? = nil, _ context: CLIContext) -> CaptureRecorder? {
    do {
      let format = format ?? CaptureRecorder.format(forName: path.text)
      return try CaptureRecorder(pathBytes: path.bytes, name: path.display, format: format, comment: comment)
    } catch {
      context.error("\(path.display): \(error.message)")
      return nil
    }
  }

  /// Decodes the live source to its end (or a stop): annotate's output, or with `--hr` the
  /// heart-rate rows. One thread: frames come far slower than one thread decodes, and a second
  /// thread waiting for each small batch costs more than it saves.
  static func stream(
    _ reader: any CaptureReader, label: String, settings: RenderSettings, heartRate: Bool, control: LiveControl, _ context: CLIContext
  ) -> FrameStream.End {
    guard heartRate else {
      return AnnotateCommand.stream(reader, settings: settings, label: label, threading: .one, live: true, whenOutputCloses: { control.requestStop() }, context)
    }
    var rowSettings = HRCommand.Settings()
    rowSettings.format = settings.json ? .json : .text
    rowSettings.absoluteTime = settings.time == .absolute
    rowSettings.peers = settings.filter.peers
    rowSettings.reading.maps = settings.maps
    let output = JobOutput(direct: context.stdout, threading: .one)
    let columns = context.stdoutIsTerminal && !settings.json ? (context.terminalColumns ?? 80) : nil
    let view = LiveHeartRateView(settings: rowSettings, output: output, terminalColumns: columns)
    view.whenOutputCloses = { control.requestStop() }
    var options = FrameStream.Options()
    options.threading = .one
    options.labelsInHindsight = false
    settings.maps.apply(to: &options)
    let end = FrameStream(source: reader, options: options).run(into: view)
    settings.maps.finish(end, capture: label, context)
    context.stdout = output.buffer
    context.stdout.flush()
    return end
  }

}

/// Writes a line to standard error at once (notices from the reading thread).
func writeToStandardError(_ text: String) {
  _ = SystemWrite.all(2, Array(text.utf8))
}
