#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import BLECapture
import BLECore
import BLERender

/// An exit status carried as an error (for `Result`).
struct ExitCode: Error { var status: Int32 }

/// Exit statuses (documented in `--help` and docs/cli.md).
enum ExitStatus {
  static let success: Int32 = 0
  /// The capture is damaged; everything before the damage was decoded.
  static let damaged: Int32 = 1
  /// The input cannot be read at all.
  static let unreadable: Int32 = 2
  /// Bad command line (EX_USAGE), also convert's output naming its input.
  static let usage: Int32 = 64
}

/// Where a command writes, and what it may know of its environment.
final class CLIContext {
  var stdout: OutputBuffer
  var stderr: OutputBuffer
  let environment: [String: String]
  let stdoutIsTerminal: Bool
  /// The terminal's width when standard output is one and its width is known.
  let terminalColumns: Int?
  /// GATT caches the command used: what its runs learned is saved when it ends.
  var caches: [GATTCache] = []

  init(stdout: OutputBuffer, stderr: OutputBuffer, environment: [String: String], stdoutIsTerminal: Bool, terminalColumns: Int? = nil) {
    self.stdout = stdout
    self.stderr = stderr
    self.environment = environment
    self.stdoutIsTerminal = stdoutIsTerminal
    self.terminalColumns = stdoutIsTerminal ? terminalColumns : nil
  }

  /// Opens a capture; on failure prints the one-line error and returns the exit status instead.
  func openCapture(_ path: Argument, damage: DamagePolicy) -> Result<any CaptureReader, ExitCode> {
    do {
      let reader = try CaptureFile.open(pathBytes: path.bytes, name: path.display, damage: damage)
      // A choice made for the user (which of a bugreport zip's snoop logs was read): one line.
      if let notice = reader.format.notice { self.error("\(path.display): \(notice)") }
      return .success(reader)
    } catch {
      self.error("\(path.display): \(error.message)")
      return .failure(ExitCode(status: error.exitStatus))
    }
  }

  /// Ends a read: the damage that stopped it, then what was skipped; returns the exit status.
  func finishRead(_ path: Argument, reader: any CaptureReader, frames: Int, failure: SourceFailure?) -> Int32 {
    var status = ExitStatus.success
    if let failure {
      error("\(path.display): \(failure.message)")
      status = failure.exitStatus
    }
    let damage = reader.damage
    if damage.places > 0 {
      error("\(path.display): \(frames) frame\(frames == 1 ? "" : "s") read; skipped \(damage.bytes) damaged byte\(damage.bytes == 1 ? "" : "s") in \(damage.places) place\(damage.places == 1 ? "" : "s")")
      status = max(status, ExitStatus.damaged)
    }
    return status
  }

  func error(_ message: String) {
    stderr.append("bledissect: ")
    stderr.append(string: message)
    stderr.byte(0x0A)
    stderr.flush()
  }
}

/// `SendableMetatype`: the command table below is a global shared by every thread.
protocol CLICommand: SendableMetatype {
  static var configuration: CommandConfiguration { get }
  static func run(_ arguments: ParsedArguments, _ context: CLIContext) -> Int32
}

enum BLEDissectCLI {
  static let version = "0.1.0"
  static let commands: [any CLICommand.Type] = [
    AnnotateCommand.self, InfoCommand.self, SummaryCommand.self, GATTCommand.self, HRCommand.self, DiffCommand.self, CheckCommand.self, ConvertCommand.self, LiveCommand.self, CacheCommand.self,
  ]

  static let exitStatusHelp = """
    EXIT STATUS:
      0   the capture was read to its end
      1   the capture is damaged (truncated or corrupt record): btsnoop and PacketLogger are
          read on from the next plausible record, each skip named on stderr (frame number,
          byte offset, bytes skipped) and counted at the end; otherwise (pcap, pcapng,
          --stop-at-damage, a truncated end) frames before the damage were printed, then one
          line on stderr names the frame number and byte offset; also compressed content
          inflating past its cap (a likely decompression bomb), after the frames before it
      2   unreadable: missing or empty file, not a capture, unsupported format or link type
      64  usage error (one line on stderr says what is wrong)
    """

  /// The overview's parts (the man page is made of them too).
  static let overviewAbstract = "Decode Bluetooth HCI captures (btsnoop, PacketLogger, pcap, pcapng) into plain words."
  static let usageLines = ["[annotate] [options] <file>", "<command> [options] <file>"]
  static let overviewDescription = """
    The file may be '-' for standard input. Formats are detected from the content;
    gzip-compressed captures and Android bugreports (.txt, .zip: the btsnoop_hci.log
    in the zip, else the btsnooz summary) are read too.
    """
  static let helpCommandAbstract = "Show help for a command."
  /// The options of the first word alone: (short, long, help).
  static let globalOptions: [OptionSpec] = [
    OptionSpec(name: "version", short: nil, kind: .flag, help: "Show the version."),
    OptionSpec(name: "help", short: "h", kind: .flag, help: "Show this help."),
  ]

  static var overview: String {
    var text = "OVERVIEW: \(overviewAbstract)\n\n"
    text += "USAGE: " + usageLines.map { "bledissect " + $0 }.joined(separator: "\n       ") + "\n\n"
    text += overviewDescription + "\n\nCOMMANDS:\n"
    for command in commands {
      let config = command.configuration
      text += "  " + config.name + String(repeating: " ", count: max(12 - config.name.count, 1)) + config.abstract + "\n"
    }
    text += "  help        \(helpCommandAbstract)\n\n"
    text += "  See 'bledissect help <command>' for a command's options, 'bledissect help --diagnostics'\n"
    text += "  for every diagnostic code, 'bledissect help --rules' for every rule check knows.\n\n"
    text += "OPTIONS:\n"
    for option in globalOptions {
      let left = (option.short.map { "-\($0), " } ?? "") + "--" + option.name
      text += "  " + left + String(repeating: " ", count: 12 - left.count) + option.help + "\n"
    }
    text += "\n" + exitStatusHelp + "\n"
    return text
  }

  /// The documents `help` prints, not listed in the overview: for Scripts/update-cli-docs
  /// (the man page, docs/diagnostics.md and docs/check.md quote them) and packagers.
  static let documents: [String: @Sendable () -> String] = [
    "--man": Manual.manPage, "--diagnostics": DiagnosticList.text, "--rules": RuleList.text,
  ]

  /// Runs one invocation given as text (tests); returns the exit status.
  static func run(_ arguments: [String], _ context: CLIContext) -> Int32 {
    run(arguments: arguments.map { Argument($0) }, context)
  }

  /// Runs one invocation; returns the exit status.
  static func run(arguments: [Argument], _ context: CLIContext) -> Int32 {
    // Bare, the overview (as `help`): what to type next.
    guard let first = arguments.first?.text else {
      context.stdout.append(string: overview)
      return ExitStatus.success
    }
    switch first {
    case "--version", "version" where arguments.count == 1:
      context.stdout.append(string: "bledissect \(version)\n")
      return ExitStatus.success
    case "-h", "--help":
      context.stdout.append(string: overview)
      return ExitStatus.success
    case "help" where arguments.count > 1 && documents[arguments[1].text] != nil:
      guard arguments.count == 2, let document = documents[arguments[1].text] else {
        return usageError("help \(arguments[1].text) takes nothing more", command: nil, context)
      }
      context.stdout.append(string: document())
      return ExitStatus.success
    case "help" where arguments.count > 1 && arguments[1].text == "--completions":
      guard arguments.count == 3, let script = Manual.completions(arguments[2].text) else {
        return usageError("help --completions needs one shell: \(Manual.shells.joined(separator: ", "))", command: nil, context)
      }
      context.stdout.append(string: script)
      return ExitStatus.success
    case "help":
      guard arguments.count > 1, arguments[1].text != "help" else {
        context.stdout.append(string: overview)
        return ExitStatus.success
      }
      let name = arguments[1].text
      guard let command = commands.first(where: { $0.configuration.name == name }) else {
        return usageError("unknown command '\(arguments[1].display)'" + ArgumentParser.suggestion(name, among: commandNames), command: nil, context)
      }
      context.stdout.append(string: help(for: command))
      return ExitStatus.success
    default:
      break
    }
    var command: any CLICommand.Type = AnnotateCommand.self
    var rest = arguments
    if let named = commands.first(where: { $0.configuration.name == first }) {
      command = named
      rest.removeFirst()
    } else if looksLikeACommandWord(arguments[0]) {
      return usageError("unknown command '\(arguments[0].display)'" + ArgumentParser.suggestion(first, among: commandNames), command: nil, context)
    }
    do {
      let parsed = try ArgumentParser.parse(rest, for: command.configuration)
      if parsed.has("help") {
        context.stdout.append(string: help(for: command))
        return ExitStatus.success
      }
      let status = command.run(parsed, context)
      for cache in context.caches { DecodingOptions.saveCache(cache, context) }
      context.caches.removeAll()
      return status
    } catch {
      return usageError(error.message, command: command.configuration.name, context)
    }
  }

  static var commandNames: [String] { commands.map { $0.configuration.name } + ["help"] }

  static func help(for command: any CLICommand.Type) -> String {
    ArgumentParser.help(for: command.configuration) + "\n" + (command.configuration.exitStatus ?? exitStatusHelp) + "\n"
  }

  /// A first word that is no option, no path (no '/' or '.') and no existing file is taken for
  /// a mistyped command rather than a missing capture.
  static func looksLikeACommandWord(_ word: Argument) -> Bool {
    guard let lead = word.bytes.first, lead != UInt8(ascii: "-"),
      !word.bytes.contains(UInt8(ascii: "/")), !word.bytes.contains(UInt8(ascii: ".")), !word.bytes.contains(0)
    else { return false }
    return FileStatus(word.bytes) == nil
  }

  /// A usage error: the problem on one line, then one line saying where help is.
  static func usageError(_ message: String, command: String?, _ context: CLIContext) -> Int32 {
    context.error(message)
    context.stderr.append(string: "see 'bledissect \(command.map { "help \($0)" } ?? "--help")'\n")
    context.stderr.flush()
    return ExitStatus.usage
  }
}

@main
struct BLEDissectMain {
  static func main() {
    // A closed pipe must not kill us: writes then fail with EPIPE and output stops quietly.
    signal(SIGPIPE, SIG_IGN)
    var environment: [String: String] = [:]
    for name in ["NO_COLOR", "TERM", "BLEDISSECT_THREADS", "BLEDISSECT_VALUE_SHARE", "HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "SUDO_UID", "SUDO_GID"] {
      if let value = getenv(name) { environment[name] = String(cString: value) }
    }
    let stdoutIsTerminal = isatty(1) == 1
    let context = CLIContext(
      stdout: OutputBuffer(fd: 1), stderr: OutputBuffer(fd: 2, flushThreshold: 0),
      environment: environment, stdoutIsTerminal: stdoutIsTerminal, terminalColumns: stdoutIsTerminal ? terminalColumns() : nil)
    // The words as bytes: `CommandLine.arguments` repairs bytes that are not UTF-8, and a file
    // named with them could not be opened.
    let arguments = argumentBytes().map { Argument(bytes: $0) }
    let status = BLEDissectCLI.run(arguments: arguments, context)
    context.stdout.flush()
    context.stderr.flush()
    if let problem = context.stdout.writeError {
      let message = "bledissect: cannot write output: \(problem)\n"
      _ = message.withCString { write(2, $0, strlen($0)) }
      exit(ExitStatus.unreadable)
    }
    exit(status)
  }

  /// The width of the terminal on standard output: the kernel's, else `COLUMNS`.
  static func terminalColumns() -> Int? {
    var size = winsize()
    if ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
    if let text = getenv("COLUMNS"), let columns = Int(String(cString: text)), columns > 0 { return columns }
    return nil
  }
}
