#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import BLECapture
import BLECore
import BLEDecoder
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
    switch RenderSettings.parse(arguments, command: configuration.name, context) {
    case .success(let parsed): settings = parsed
    case .failure(let code): return code.status
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
      if case .file(let followed, _) = origin, namesTheSameFile(followed, path.bytes) {
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

  /// Whether two names name one file: the same device and inode when both exist; else (the
  /// followed file not created yet) the same directory, resolved, and the same last name.
  static func namesTheSameFile(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    if let first = FileStatus(a), let second = FileStatus(b) { return first.device == second.device && first.inode == second.inode }
    func resolved(_ path: [UInt8]) -> [UInt8]? {
      let slash = path.lastIndex(of: UInt8(ascii: "/"))
      let directory = slash.map { $0 == 0 ? [UInt8(ascii: "/")] : Array(path[..<$0]) } ?? [UInt8(ascii: ".")]
      let name = slash.map { Array(path[($0 + 1)...]) } ?? path
      guard let real = withCPath(directory, { realpath($0, nil) }) else { return nil }
      defer { free(real) }
      return Array(String(cString: real).utf8) + [UInt8(ascii: "/")] + name
    }
    guard let first = resolved(a), let second = resolved(b) else { return false }
    return first == second
  }

  /// The Linux monitor channel: every controller's traffic, as btmon sees it. Opening it needs
  /// CAP_NET_RAW; files (`-w`) are then written as the user who ran sudo.
  static func monitor(_ arguments: ParsedArguments, settings: RenderSettings, _ context: CLIContext) -> Int32 {
    let reader: MonitorSocketReader
    do {
      reader = try MonitorSocketReader()
    } catch {
      context.error("live: \(error.message)")
      return ExitStatus.unreadable
    }
    dropPrivileges(context)
    let control = makeControl()
    reader.control = control
    reader.notice = { message in writeToStandardError("bledissect: \(message)\n") }
    let wanted = settings.filter.adapters
    reader.adapterEvent = { event in
      if let message = describe(event, wanted: wanted) { writeToStandardError("bledissect: monitor: \(message)\n") }
    }
    var recording: Argument?
    if let value = arguments.value("write") {
      let path = Argument(value)
      guard let recorder = openRecorder(path, context) else { return ExitStatus.unreadable }
      reader.recorder = recorder
      recording = path
    }
    let handlers = SignalStop(control)
    let end = stream(reader, label: "monitor", settings: settings, heartRate: arguments.has("hr"), control: control, context)
    handlers.restore()
    var summary = "live: \(end.frames) frame\(end.frames == 1 ? "" : "s"), \(reader.bytes) byte\(reader.bytes == 1 ? "" : "s"), \(reader.malformed) malformed"
    // Messages the kernel could not queue for us: lost before we saw them.
    if let drops = reader.kernelDrops {
      summary += ", \(drops) drop\(drops == 1 ? "" : "s")" + (drops > 0 ? " (the kernel's queue for this socket was full)" : "")
    }
    if let recording, let recorder = reader.recorder, recorder.failure == nil {
      summary += "; \(recorder.records) record\(recorder.records == 1 ? "" : "s") written to \(recording.display)"
    }
    var status = end.failure == nil ? 0 : ExitStatus.unreadable
    if let failure = end.failure { context.error("monitor: \(failure.message)") }
    context.error(summary)
    if reader.recordingFailure != nil { status = max(status, ExitStatus.unreadable) }
    return status
  }

  /// The stop control of a live read; standard output is watched when it is a pipe (its
  /// reader leaving, `| head`, then ends a wait no new record would end).
  static func makeControl() -> LiveControl {
    let control = LiveControl()
    var output = stat()
    if fstat(1, &output) == 0, output.st_mode & S_IFMT == S_IFIFO { control.watchedOutput = 1 }
    return control
  }

  /// The `-w` file, created with its format's header; nil (and the reason said) when it cannot be.
  static func openRecorder(_ path: Argument, _ context: CLIContext) -> CaptureRecorder? {
    do {
      return try CaptureRecorder(pathBytes: path.bytes, name: path.display, format: CaptureRecorder.format(forName: path.text))
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
    rowSettings.maps = settings.maps
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

  /// A line for what the monitor said about controllers; `wanted` is `--index`'s list.
  static func describe(_ event: MonitorAdapterEvent, wanted: [UInt16]) -> String? {
    switch event {
    case .present(let adapters):
      if adapters.isEmpty {
        return "no Bluetooth controller yet; waiting for one (plug an adapter in, or unblock it: rfkill unblock bluetooth)"
      }
      let present = Set(adapters.map(\.index))
      let missing = wanted.filter { !present.contains($0) }
      let list = adapters.map(describe).joined(separator: "; ")
      if !missing.isEmpty {
        let names = missing.map { "hci\($0)" }.joined(separator: ", ")
        return "\(names) \(missing.count == 1 ? "is" : "are") not here yet (present: \(list)); waiting"
      }
      return "controllers: \(list)"
    case .appeared(let adapter):
      return "\(describe(adapter)) appeared"
    case .removed(let adapter):
      return "\(adapter.name.isEmpty ? "hci\(adapter.index)" : adapter.name) went away"
    }
  }

  /// "hci0 00:1A:7D:DA:71:13 (USB, Cambridge Silicon Radio)": name, address, bus, maker.
  static func describe(_ adapter: MonitorAdapter) -> String {
    var details: [String] = []
    if let bus = MonitorOpcode.busName(adapter.bus) { details.append(bus.description) }
    if adapter.type == 1 { details.append("AMP") }
    if let company = adapter.manufacturer {
      details.append(AssignedNumbers.companyName(company)?.description ?? "company 0x\(String(company, radix: 16, uppercase: false))")
    }
    let name = adapter.name.isEmpty ? "hci\(adapter.index)" : adapter.name
    return "\(name) \(adapter.address)" + (details.isEmpty ? "" : " (\(details.joined(separator: ", ")))")
  }

  /// After opening the monitor as root through sudo: go on as the user who ran sudo, so files
  /// written (`-w`) belong to them. Without sudo's variables, nothing changes.
  static func dropPrivileges(_ context: CLIContext) {
    guard getuid() == 0, let uid = context.environment["SUDO_UID"].flatMap(UInt32.init), let gid = context.environment["SUDO_GID"].flatMap(UInt32.init) else {
      return
    }
    if setgid(gid) != 0 || setuid(uid) != 0 {
      context.error("live: could not drop root privileges to uid \(uid) (\(String(cString: strerror(errno)))); stopping")
      exit(ExitStatus.unreadable)
    }
  }

  static func label(_ origin: LiveReader.Origin) -> String {
    switch origin {
    case .file(_, let name), .stream(_, let name, _): return name
    case .android(let host, let port): return "\(host):\(port)"
    }
  }

  /// An opening error with what to do about it.
  static func describe(_ error: CaptureError, name: String) -> String {
    let message = error.message
    if case .cannotOpen(let why) = error {
      if why == String(cString: strerror(ENOENT)) {
        return "\(name): \(why), nor its directory (check the path: live waits for a file to be created, in a directory that exists)"
      }
      if why == String(cString: strerror(EACCES)) {
        return "\(name): \(why) (run as a user allowed to read it, e.g. with sudo, or copy it somewhere readable)"
      }
    }
    return "\(name): \(message)"
  }

  /// Which source the arguments name; a usage error or a missing file is printed.
  static func chooseOrigin(_ arguments: ParsedArguments, _ context: CLIContext) -> Result<LiveReader.Origin, ExitCode> {
    func usage(_ message: String) -> Result<LiveReader.Origin, ExitCode> {
      .failure(ExitCode(status: BLEDissectCLI.usageError(message, command: configuration.name, context)))
    }
    let followed = arguments.value("follow").map { Argument($0) }
    let positional = arguments.positionals.first
    if arguments.has("android") {
      if followed != nil { return usage("--android and --follow are two sources: give one") }
      guard let (host, port) = parseAddress(positional?.text) else {
        return usage("--android needs [host:]port (127.0.0.1:8872), not '\(positional?.display ?? "")'")
      }
      return .success(.android(host: host, port: port))
    }
    if followed != nil && positional != nil { return usage("--follow takes one file: unexpected argument '\(positional!.display)'") }
    guard let path = followed ?? positional else { return usage("live needs a source") }
    if path.bytes == [UInt8(ascii: "-")] { return .success(.stream(descriptor: 0, name: "-", owns: false)) }
    guard let status = FileStatus(path.bytes) else {
      let number = errno
      // Not created yet: followed once it is (LiveReader waits, when its directory exists).
      if number == ENOENT { return .success(.file(path: path.bytes, name: path.display)) }
      context.error(describe(.cannotOpen(String(cString: strerror(number))), name: path.display))
      return .failure(ExitCode(status: ExitStatus.unreadable))
    }
    if status.isRegularFile { return .success(.file(path: path.bytes, name: path.display)) }
    if status.mode & UInt32(S_IFMT) == UInt32(S_IFDIR) {
      context.error("\(path.display): is a directory")
      return .failure(ExitCode(status: ExitStatus.unreadable))
    }
    // A FIFO or a device: opened without waiting for a writer (a stop must be able to end the
    // wait), then read as a stream.
    let descriptor = withCPath(path.bytes) { open($0, O_RDONLY | O_NONBLOCK | O_CLOEXEC) }
    guard descriptor >= 0 else {
      context.error(describe(.cannotOpen(String(cString: strerror(errno))), name: path.display))
      return .failure(ExitCode(status: ExitStatus.unreadable))
    }
    _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
    return .success(.stream(descriptor: descriptor, name: path.display, owns: true))
  }

  /// `[host:]port`, `[v6-address]:port`; nil text gives the default.
  static func parseAddress(_ text: String?) -> (String, UInt16)? {
    guard let text, !text.isEmpty else { return ("127.0.0.1", defaultAndroidPort) }
    var host = "127.0.0.1"
    var portText = Substring(text)
    if let colon = text.lastIndex(of: ":") {
      host = String(text[..<colon])
      portText = text[text.index(after: colon)...]
      if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
      if host.isEmpty { return nil }
    }
    guard let port = UInt16(portText), port > 0 else { return nil }
    return (host, port)
  }
}

/// Writes a line to standard error at once (notices from the reading thread).
func writeToStandardError(_ text: String) {
  var bytes = Array(text.utf8)
  var offset = 0
  while offset < bytes.count {
    let written = bytes.withUnsafeMutableBufferPointer { write(2, $0.baseAddress! + offset, $0.count - offset) }
    if written < 0 && errno == EINTR { continue }
    if written <= 0 { return }
    offset += written
  }
}

/// The write end of the live control's self-pipe, for the signal handler (set before the
/// handler is installed, read only by it).
nonisolated(unsafe) private var signalPipe: Int32 = -1

/// SIGINT, SIGTERM and SIGHUP ask the live read to stop: the handler only writes one byte to
/// the control's self-pipe (async-signal-safe); every wait of the reader watches that pipe.
struct SignalStop {
  static let signals: [Int32] = [SIGINT, SIGTERM, SIGHUP]

  init(_ control: LiveControl) {
    signalPipe = control.writeDescriptor
    // A parent may have started us with these blocked (they are inherited: a thread pool's
    // thread spawning us); threads started from here on inherit this thread's mask.
    var unblocked = sigset_t()
    sigemptyset(&unblocked)
    for number in Self.signals { sigaddset(&unblocked, number) }
    _ = pthread_sigmask(SIG_UNBLOCK, &unblocked, nil)
    for number in Self.signals {
      _ = signal(number) { _ in
        var byte: UInt8 = 1
        _ = write(signalPipe, &byte, 1)
      }
    }
  }

  /// Back to the default dispositions (a second Ctrl-C after the end kills, as usual).
  func restore() {
    for number in Self.signals { _ = signal(number, SIG_DFL) }
  }
}
