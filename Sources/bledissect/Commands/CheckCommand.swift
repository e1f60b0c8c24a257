import BLEAnalysis
import BLEEngine
import BLERender

/// `bledissect check FILE...`: which side broke which rule of the specifications, frame by
/// frame, with the clause (docs/check.md lists the rules).
enum CheckCommand: CLICommand {
  static let configuration = CommandConfiguration(
    name: "check",
    abstract: "Check captures against the Bluetooth specifications: which side broke which rule, at which frame.",
    usage: "check [options] <file>...",
    discussion: """
      Reads each capture and lists the rules of the Core, GATT and service specifications
      that its frames prove broken: one line per finding with the proving frame, severity,
      rule id, the side at fault (client/server for ATT and GATT, central/peripheral for
      L2CAP and SMP), what happened with the values involved, and the clause. Repeats of one
      rule on one link are one line with their count. error: a "shall" the frames prove
      broken; warning: a "should", or a proof resting on an assumption the line names. Gates
      keep a capture's own gaps quiet: a connection whose start is missing, records the
      capture cut short, a sniffer that missed packets, handles no connection opened, tables
      from a map or the cache. 'help --rules' lists every rule (docs/check.md).
      """,
    options: [
      OptionSpec(name: "json", short: nil, kind: .flag, help: "One JSON object per finding, then one per file with the counts (docs/json.md)."),
      OptionSpec(name: "rule", short: nil, kind: .value(valueName: "ID"), help: "Check only this rule (e.g. ATT-01). Repeatable."),
      OptionSpec(name: "ignore", short: nil, kind: .value(valueName: "ID"), help: "Leave this rule out. Repeatable."),
      OptionSpec(name: "strict", short: nil, kind: .flag, help: "Warnings fail too (exit status 1)."),
    ] + CaptureReading.batchOptions,
    exitStatus: """
      EXIT STATUS (a linter's):
        0   no error found (warnings allowed, unless --strict)
        1   at least one error (or, with --strict, a warning)
        2   a capture is unreadable or damaged (what could be read is still checked)
        64  usage error (one line on stderr says what is wrong)
      """,
    minimumPositionals: 1,
    maximumPositionals: Int.max)

  struct Settings: Sendable {
    var json = false
    var strict = false
    /// Rules to report (nil: all).
    var rules: Set<String>?
    var ignored: Set<String> = []
    var threading = FrameStream.Threading.two
    var reading = CaptureReading()
  }

  static func run(_ arguments: ParsedArguments, _ context: CLIContext) -> Int32 {
    var chosen = Settings()
    let jobs: Int
    do {
      jobs = try BatchRunner.jobCount(arguments)
      chosen.reading = try CaptureReading(arguments, context)
      let named = try arguments.allValues("rule").map(rule)
      if !named.isEmpty { chosen.rules = Set(named) }
      chosen.ignored = Set(try arguments.allValues("ignore").map(rule))
    } catch {
      return BLEDissectCLI.usageError(error.message, command: configuration.name, context)
    }
    chosen.json = arguments.has("json")
    chosen.strict = arguments.has("strict")
    let settings = chosen
    return BatchRunner.run(files: arguments.positionals, jobs: jobs, header: nil, context) { file, output, context in
      var fileSettings = settings
      fileSettings.threading = output.threading
      return check(file, settings: fileSettings, output: output, context)
    }
  }

  /// A rule id as the user typed it, checked against the catalogue.
  static func rule(_ text: String) throws(UsageError) -> String {
    guard let rule = ConformanceRule.named(text) else {
      throw UsageError(message: "no rule '\(text)': 'bledissect help --rules' lists them (e.g. ATT-01)")
    }
    return rule.id
  }

  static func check(_ path: Argument, settings: Settings, output: JobOutput, _ context: CLIContext) -> Int32 {
    var analysis = ConformanceAnalysis()
    let read: CaptureReading.Read
    switch settings.reading.stream(path, threading: settings.threading, into: &analysis, context) {
    case .success(let done): read = done
    case .failure(let code): return code.status
    }
    var report = analysis.report(file: path.display).keeping(rules: settings.rules, ignoring: settings.ignored)
    report.damage = read.end.failure?.message
    if settings.json {
      CheckWriter.json(report, to: &output.buffer)
    } else {
      CheckWriter.text(report, to: &output.buffer)
    }
    output.handOver()
    if read.finish(context) != ExitStatus.success { return ExitStatus.unreadable }
    return report.errors > 0 || (settings.strict && report.warnings > 0) ? 1 : 0
  }
}
