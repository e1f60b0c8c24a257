import BLEAnalysis
import BLECore
import BLEDecoder
import BLEEngine
import BLERender
import Foundation

/// `bledissect hr FILE...`: one row per Heart Rate Measurement, as text, CSV or JSON Lines,
/// written as the frames come (memory does not grow with the capture); `--svg` also plots them.
enum HRCommand: CLICommand {
  static let configuration = CommandConfiguration(
    name: "hr",
    abstract: "List heart-rate measurements (bpm, contact, energy, RR intervals); plot them as SVG.",
    usage: "hr [options] <file>...",
    discussion: """
      One row per Heart Rate Measurement notification or indication: frame, time, device,
      bpm, sensor contact, energy expended (kJ) and RR intervals (ms). Times are seconds
      since the capture's first frame (--time abs: UTC). --csv writes a header row and
      the RR intervals space-separated in one column; --json writes JSON Lines (docs/json.md).
      Doubtful values carry flags (text: after '!'; CSV: a flags column; JSON: "flags"):
      bpm_out_of_range, rr_out_of_range, rr_inconsistent, energy_backwards (without a Reset
      Energy Expended in between), no_contact.
      --svg plots heart rate and RR intervals per device, named as it read or advertised
      its name with its address ("bledissect HR (D0:B1:ED:00:48:52)"), with dropouts (a gap
      longer than max(2 s, 3 × the device's median interval)) and losses of sensor contact
      shaded, flagged values marked (the axes cover plausible values only; a value beyond
      them is marked at the edge with its number), and labelled vertical marks for each
      connection, disconnection (with its reason), Heart Rate Measurement subscription,
      ATT MTU exchange and connection parameter request or update.
      Several files are read in parallel (-j) and printed in the order given: text after a
      '==> FILE <==' line, CSV and JSON with a "file" column or key (one CSV header row);
      the exit status is the worst of the files'. A capture with no measurement gets one
      line on stderr saying why: no Heart Rate Measurement in it, one never subscribed to
      (its handles named), notifications enabled but none arrived, values that did not
      decode, or measurements only from devices --peer left out.
      """,
    options: [
      OptionSpec(name: "csv", short: nil, kind: .flag, help: "Write CSV with a header row."),
      OptionSpec(name: "json", short: nil, kind: .flag, help: "Write JSON Lines, one object per measurement."),
      OptionSpec(name: "svg", short: nil, kind: .value(valueName: "file"), help: "Also write an SVG plot of heart rate, RR intervals, flags and link events per device (one capture only)."),
      OptionSpec(name: "peer", short: nil, kind: .value(valueName: "address"), help: "Only measurements from this device (AA:BB:CC:DD:EE:FF); given twice, either."),
      OptionSpec(name: "time", short: "t", kind: .value(valueName: "rel|abs"), help: "Seconds since the capture's first frame (default), or UTC."),
    ] + CaptureReading.batchOptions,
    minimumPositionals: 1,
    maximumPositionals: Int.max)

  struct Settings: Sendable {
    var format = HeartRateRowWriter.Format.text
    var absoluteTime = false
    var peers: [BDAddr] = []
    var svg: Argument?
    var reading = CaptureReading()
  }

  static func run(_ arguments: ParsedArguments, _ context: CLIContext) -> Int32 {
    var settings = Settings()
    let jobs: Int
    do throws(UsageError) {
      jobs = try BatchRunner.jobCount(arguments)
      if arguments.has("csv") && arguments.has("json") { throw UsageError(message: "--csv and --json cannot be used together") }
      settings.format = arguments.has("csv") ? .csv : (arguments.has("json") ? .json : .text)
      switch arguments.value("time")?.lowercased() {
      case nil, "rel"?: break
      case "abs"?: settings.absoluteTime = true
      case let other?: throw UsageError(message: "--time must be rel or abs, not '\(other)'")
      }
      for text in arguments.allValues("peer") {
        guard let address = BDAddr(text) else { throw UsageError(message: "--peer needs an address like C0:11:22:33:44:55, not '\(text)'") }
        settings.peers.append(address)
      }
      if let svg = arguments.value("svg") {
        guard arguments.positionals.count == 1 else { throw UsageError(message: "--svg plots one capture; give one file") }
        settings.svg = Argument(svg)
      }
      settings.reading = try CaptureReading(arguments, context)
    } catch {
      return BLEDissectCLI.usageError(error.message, command: configuration.name, context)
    }
    let header = settings.format == .text ? fileHeader : nil
    let fixed = settings
    if settings.format == .csv && arguments.positionals.count > 1 {
      // One header row for the whole batch, whichever files can be read.
      context.stdout.append(string: HeartRateRowWriter.batchCSVHeader)
    }
    return BatchRunner.run(files: arguments.positionals, jobs: jobs, header: header, context) { file, output, context in
      measurements(file, settings: fixed, output: output, context)
    }
  }

  static func measurements(_ path: Argument, settings: Settings, output: JobOutput, _ context: CLIContext) -> Int32 {
    var consumer = HeartRateRows(settings: settings, file: output.inBatch ? path.display : nil, output: output)
    let read: CaptureReading.Read
    switch settings.reading.stream(path, threading: output.threading, into: &consumer, context) {
    case .success(let done): read = done
    case .failure(let code): return code.status
    }
    let end = read.end
    output.buffer = consumer.out
    output.handOver()
    // Where a row's meaning came from when not from the capture: said here (and in JSON and
    // CSV rows' `meaning`), as annotate's "(inferred)" says it.
    for line in DecodingOptions.cachedTables(end) { context.error("\(path.display): \(line)") }
    for line in consumer.series.meaningNotes { context.error("\(path.display): \(line)") }
    // No row: say why, rather than leave a bare header.
    if consumer.series.rowCount == 0 && end.failure == nil { context.error("\(path.display): " + consumer.series.absence.reason(end, peers: settings.peers)) }
    var status = read.finish(context)
    if settings.svg != nil, consumer.series.timeline.eventsLeftOut > 0 {
      context.error("\(path.display): link events of devices past the first \(LinkTimeline.maximumDevices) are not marked on the plot (\(consumer.series.timeline.eventsLeftOut) left out)")
    }
    if consumer.series.devicesLeftOut > 0 {
      context.error("\(path.display): only the first \(HeartRateSeries.maximumPlottedDevices) devices are plotted; \(consumer.series.devicesLeftOut) more left out")
    }
    if let svg = settings.svg {
      let plot = HeartRatePlot(title: "Heart rate — \(path.display)", devices: consumer.series.plotDevices())
      if !FileManager.default.createFile(atPath: svg.text, contents: Data(plot.svg().utf8)) {
        context.error("\(svg.display): cannot write the SVG plot")
        status = max(status, ExitStatus.unreadable)
      }
    }
    return status
  }
}

/// `hr`'s consumer: the series (BLEAnalysis) finds the rows, the writer (BLERender) writes each
/// as it comes. A struct, run with `run(into: &rows)`: touched per row without run-time checks.
struct HeartRateRows: FrameConsumer {
  var series: HeartRateSeries
  var writer: HeartRateRowWriter
  let output: JobOutput
  /// The output, taken from `output` for the run (the caller gives it back).
  var out: OutputBuffer
  /// Called before each row is written, and after it with the device's label (`live --hr`
  /// erases and redraws its status line around rows).
  var beforeRow: ((inout OutputBuffer) -> Void)?
  var afterRow: ((String, HeartRateMeasurement) -> Void)?

  init(settings: HRCommand.Settings, file: String?, output: JobOutput) {
    series = HeartRateSeries(peers: settings.peers, plotting: settings.svg != nil)
    writer = HeartRateRowWriter(format: settings.format, absoluteTime: settings.absoluteTime, file: file)
    self.output = output
    out = output.buffer
  }

  var fieldDetail: FieldDetail { .none }

  mutating func consume(_ frame: inout DissectedFrame) -> Bool {
    if series.start(frame) { writer.header(to: &out) }
    series.rows(in: &frame) { row in
      beforeRow?(&out)
      writer.write(row, to: &out)
      afterRow?(row.device, row.measurement)
    }
    output.checkpoint(&out)
    return !output.isClosed
  }

  mutating func finish(_ end: FrameStream.End) {
    // A capture with no frame still gets its header row.
    if series.firstTimestamp == nil { writer.header(to: &out) }
  }
}
