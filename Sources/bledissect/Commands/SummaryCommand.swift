import BLEAnalysis
import BLERender

/// `bledissect summary FILE...`: what happened in each capture, on one screen (or one JSON
/// object per file).
enum SummaryCommand: CLICommand {
  static let configuration = CommandConfiguration(
    name: "summary",
    abstract: "Summarize captures: devices, connections, subscriptions, heart rate, battery.",
    usage: "summary [options] <file>...",
    discussion: """
      For each file, in the order given: the devices seen (address, identity, name,
      appearance, maker, GATT services), connection attempts that did not connect, and each
      connection: start, end and who ended it, role, parameters and their updates, ATT MTU,
      PHY, data length, pairing and encryption, subscriptions, activity per characteristic
      (counts, rate, longest silences, errors), heart rate (bpm, RR, RMSSD, SDNN, contact
      loss, dropouts) and battery; then ATT latency per procedure. Times are seconds since
      the capture's first frame. --json writes one JSON object per file, one per line
      (docs/json.md). A damaged capture is summarized up to the damage (status 1).
      """,
    options: [
      OptionSpec(name: "json", short: nil, kind: .flag, help: "Write one JSON object per file (one per line)."),
    ] + CaptureReading.batchOptions,
    minimumPositionals: 1,
    maximumPositionals: Int.max)

  struct Settings: Sendable {
    var json = false
    var reading = CaptureReading()
  }

  static func run(_ arguments: ParsedArguments, _ context: CLIContext) -> Int32 {
    let jobs: Int
    var settings = Settings()
    do {
      jobs = try BatchRunner.jobCount(arguments)
      settings.reading = try CaptureReading(arguments, context)
    } catch {
      return BLEDissectCLI.usageError(error.message, command: configuration.name, context)
    }
    settings.json = arguments.has("json")
    // The text names its file on its first line and the JSON has `file`: no header needed.
    return BatchRunner.run(files: arguments.positionals, jobs: jobs, header: nil, context) { [settings] file, output, context in
      summarize(file, settings: settings, output: output, context)
    }
  }

  /// Summarizes one capture (a batch runner's job); returns its exit status.
  static func summarize(_ path: Argument, settings: Settings, output: JobOutput, _ context: CLIContext) -> Int32 {
    var consumer = SummaryConsumer()
    let read: CaptureReading.Read
    switch settings.reading.stream(path, threading: output.threading, into: &consumer, context) {
    case .success(let done): read = done
    case .failure(let code): return code.status
    }
    let (reader, end) = (read.reader, read.end)
    var report = SummaryReport(file: path.display, format: "\(reader.format.name), \(reader.format.detail)", summary: consumer.summary)
    report.damage = end.failure?.message
    report.skippedBytes = reader.damage.bytes
    report.skippedPlaces = reader.damage.places
    report.tablesFromElsewhere = DecodingOptions.tablesFromElsewhere(end)
    report.findings = consumer.conformance.report(file: path.display)
    if settings.json {
      SummaryJSON.write(report, to: &output.buffer)
    } else {
      SummaryText.write(report, to: &output.buffer)
    }
    output.handOver()
    // Each skip in order, then the damage that ended the read and the tally.
    for skip in consumer.skips { context.error("\(path.display): \(skip.message)") }
    if consumer.skippedPlaces > consumer.skips.count {
      context.error("\(path.display): \(consumer.skippedPlaces - consumer.skips.count) more damaged places not listed")
    }
    return read.finish(context)
  }
}
