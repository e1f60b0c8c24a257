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

/// `live` without a source: the Linux Bluetooth monitor channel, as btmon reads it.
extension LiveCommand {
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
}
