import BLEAnalysis
import BLECapture
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
      jobsOption,
      stopAtDamageOption,
    ] + DecodingOptions.specs,
    minimumPositionals: 1,
    maximumPositionals: Int.max)

  enum Format: Sendable { case text, csv, json }

  struct Settings: Sendable {
    var format = Format.text
    var absoluteTime = false
    var peers: [BDAddr] = []
    var svg: Argument?
    var damage = DamagePolicy.resynchronize
    var maps = DecodingOptions()
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
    } catch {
      return BLEDissectCLI.usageError(error.message, command: configuration.name, context)
    }
    settings.damage = damagePolicy(arguments)
    do {
      settings.maps = try DecodingOptions.parse(arguments, context)
    } catch {
      return BLEDissectCLI.usageError(error.message, command: configuration.name, context)
    }
    let header = settings.format == .text ? fileHeader : nil
    let fixed = settings
    if settings.format == .csv && arguments.positionals.count > 1 {
      // One header row for the whole batch, whichever files can be read.
      context.stdout.append("file,frame,time,device,bpm,contact,energy_kj,rr_ms,flags\n")
    }
    return BatchRunner.run(files: arguments.positionals, jobs: jobs, header: header, context) { file, output, context in
      measurements(file, settings: fixed, output: output, context)
    }
  }

  static func measurements(_ path: Argument, settings: Settings, output: JobOutput, _ context: CLIContext) -> Int32 {
    let reader: any CaptureReader
    switch context.openCapture(path, damage: settings.damage) {
    case .success(let opened): reader = opened
    case .failure(let code): return code.status
    }
    var options = FrameStream.Options()
    options.threading = output.threading
    settings.maps.apply(to: &options)
    var consumer = HeartRateRows(settings: settings, file: output.inBatch ? path.display : nil, output: output)
    let end = FrameStream(source: reader, options: options).run(into: &consumer)
    output.buffer = consumer.out
    settings.maps.finish(end, capture: path.display, context)
    output.handOver()
    // Where a row's meaning came from when not from the capture: said here (and in JSON and
    // CSV rows' `meaning`), as annotate's "(inferred)" says it.
    for line in DecodingOptions.cachedTables(end) { context.error("\(path.display): \(line)") }
    for line in consumer.meaningNotes { context.error("\(path.display): \(line)") }
    // No row: say why, rather than leave a bare header.
    if consumer.rowCount == 0 && end.failure == nil { context.error("\(path.display): " + consumer.absence.reason(end, peers: settings.peers)) }
    var status = context.finishRead(path, reader: reader, frames: end.frames, failure: end.failure)
    if settings.svg != nil, consumer.timeline.eventsLeftOut > 0 {
      context.error("\(path.display): link events of devices past the first \(LinkTimeline.maximumDevices) are not marked on the plot (\(consumer.timeline.eventsLeftOut) left out)")
    }
    if consumer.devicesLeftOut > 0 {
      context.error("\(path.display): only the first \(HeartRateRows.maximumPlottedDevices) devices are plotted; \(consumer.devicesLeftOut) more left out")
    }
    if let svg = settings.svg {
      let plot = HeartRatePlot(title: "Heart rate — \(path.display)", devices: consumer.plotDevices())
      if !FileManager.default.createFile(atPath: svg.text, contents: Data(plot.svg().utf8)) {
        context.error("\(svg.display): cannot write the SVG plot")
        status = max(status, ExitStatus.unreadable)
      }
    }
    return status
  }
}

/// Writes a row per heart-rate measurement as frames come; gathers the plot when asked. A
/// struct, run with `run(into: &rows)`: its state is touched per row without run-time checks.
struct HeartRateRows: FrameConsumer {
  static let maximumPlottedDevices = 64
  let settings: HRCommand.Settings
  let output: JobOutput
  /// The output, taken from `output` for the run (the caller gives it back).
  var out: OutputBuffer
  /// The file's name for batch rows (CSV column, JSON key), already quoted for its format.
  let fileField: String?
  var firstTimestamp: Int64?
  var headerWritten = false
  /// The last device label written, by connection: notifications repeat one connection.
  var lastConnection: ConnectionLabel?
  var lastSentByHost = false
  var lastLabel = PackedText()
  var labelIsAddress = false
  var lastLabelString = ""
  /// The device the last label names, as the plot's link events know it.
  var lastOwner = LinkTimeline.Owner.localHost(adapter: 0)
  var tracks: [String: Int] = [:]
  var trackList: [(label: String, owner: LinkTimeline.Owner, track: HeartRateTrack)] = []
  /// Link events and device names for the plot (only with --svg).
  var timeline = LinkTimeline()
  var devicesLeftOut = 0
  var devicesSeenLeftOut: Set<String> = []
  /// Each device's plausibility checks (the current device selected with its label).
  var plausibility = HeartRatePlausibilityTable()
  /// Rows written (each row's flags are checked once), and, while there are none, what the
  /// capture showed instead.
  var rowCount: Int { plausibility.checked }
  var absence = HeartRateAbsence()
  /// Called before each row is written, and after it with the device's label (`live --hr`
  /// erases and redraws its status line around rows).
  var beforeRow: ((inout OutputBuffer) -> Void)?
  var afterRow: ((String, HeartRateMeasurement) -> Void)?

  init(settings: HRCommand.Settings, file: String?, output: JobOutput) {
    self.settings = settings
    self.output = output
    out = output.buffer
    switch (file, settings.format) {
    case (let file?, .csv): fileField = "\"" + file.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    case (let file?, .json):
      var buffer = OutputBuffer(fd: nil)
      buffer.jsonString(file)
      fileField = buffer.text
    default: fileField = nil
    }
  }

  var fieldDetail: FieldDetail { .none }

  mutating func consume(_ frame: inout DissectedFrame) -> Bool {
    let timestamp = frame.record.timestamp
    if firstTimestamp == nil {
      firstTimestamp = timestamp
      writeHeader()
    }
    if settings.svg != nil { timeline.add(&frame, time: plotSeconds(timestamp)) }
    // Most frames carry no attribute: that test is all they cost.
    guard !frame.attributes.isEmpty else { return true }
    if rowCount == 0 { absence.observe(frame) }
    let connection = frame.connection
    let sentByHost = frame.direction == .hostToController
    let (number, adapter) = (frame.number, frame.record.adapter)
    // A Reset Energy Expended written to a Heart Rate Control Point: the device's energy may
    // start again (asked of writes only).
    if let opcode = frame.attOpcode, opcode == 0x12 || opcode == 0x52 {
      frame.forEachValue(as: HeartRateControlPoint.self) { _, point in
        guard point.command == .resetEnergyExpended else { return }
        plausibility.energyWasReset(Self.deviceLabel(connection, sentByHost: !sentByHost, adapter: adapter))
      }
    }
    for position in frame.attributes.indices {
      let (found, operation, source, handle) = frame.withAttribute(position) { fact in
        (fact.value(as: HeartRateMeasurement.self), fact.operation, fact.meaning?.source ?? .capture, fact.handle)
      }
      guard let measurement = found else { continue }
      switch operation {
      case .notification, .indication, .read: break
      case .write, .writeWithoutResponse: continue
      }
      if !settings.peers.isEmpty {
        guard let peer = connection?.peer, settings.peers.contains(peer) else {
          absence.otherDevices = absence.otherDevices.saturatingAdd(1)
          continue
        }
      }
      label(connection, sentByHost: sentByHost, adapter: adapter)
      meaning = source
      if source != .capture { noteMeaning(source, handle: handle) }
      beforeRow?(&out)
      let flags = plausibility.check(measurement)
      row(number, timestamp, measurement, flags)
      afterRow?(lastLabelString, measurement)
      if settings.svg != nil { track(timestamp, measurement, flags) }
    }
    output.checkpoint(&out)
    return !output.isClosed
  }

  mutating func finish(_ end: FrameStream.End) {
    // A capture with no frame still gets its header row.
    if firstTimestamp == nil { writeHeader() }
  }

  // MARK: Rows

  static let frameWidth = 7
  static let deviceWidth = 17
  /// The time column's widths, as annotate's: relative seconds, UTC date and time.
  static let secondsWidth = 12
  static let dateTimeWidth = 26

  mutating func writeHeader() {
    guard !headerWritten else { return }
    headerWritten = true
    switch settings.format {
    case .json: return
    case .csv:
      // In a batch the command wrote the one header row before the files' rows.
      guard !output.inBatch else { return }
      out.append("frame,time,device,bpm,contact,energy_kj,rr_ms,flags\n")
    case .text:
      out.append(string: "frame".padding(toLength: Self.frameWidth, withPad: " ", startingAt: 0) + " ")
      let timeWidth = settings.absoluteTime ? Self.dateTimeWidth : Self.secondsWidth
      out.append(string: String(repeating: " ", count: max(timeWidth - 4, 0)) + "time ")
      out.append(string: "device".padding(toLength: Self.deviceWidth, withPad: " ", startingAt: 0))
      out.append("  bpm contact      energy_kj rr_ms\n")
    }
  }

  /// The device a frame's measurement comes from: the peer, or the capturing host when it sent
  /// the notification (a capture taken on the strap).
  /// Takes the frame's parts, not the frame: a copy of it would retain every buffer it holds.
  mutating func label(_ connection: ConnectionLabel?, sentByHost: Bool, adapter recordAdapter: UInt16) {
    if let connection, connection == lastConnection, sentByHost == lastSentByHost { return }
    lastConnection = connection
    lastSentByHost = sentByHost
    defer { plausibility.select(lastLabelString) }
    if !sentByHost, let peer = connection?.peer {
      lastLabel = OutputBuffer.addressText(peer)
      labelIsAddress = true
      lastLabelString = peer.description
      lastOwner = .peer(peer)
      return
    }
    lastLabelString = Self.deviceLabel(connection, sentByHost: sentByHost, adapter: recordAdapter)
    labelIsAddress = false
    let adapter = connection?.adapter ?? recordAdapter
    lastOwner = sentByHost ? .localHost(adapter: adapter) : .connection(adapter: adapter, handle: connection?.handle ?? 0)
  }

  /// A device's label as text: the peer's address, the capturing host when it sent the value
  /// (`hciN`: the capture is the device's own), or, for a peer whose address the capture does
  /// not show, its connection: "conn 67 (peer unknown)" ("… on hci1" past the first controller).
  static func deviceLabel(_ connection: ConnectionLabel?, sentByHost: Bool, adapter: UInt16) -> String {
    if !sentByHost, let peer = connection?.peer { return peer.description }
    let adapter = connection?.adapter ?? adapter
    if sentByHost { return "hci\(adapter)" }
    return "conn \(connection?.handle ?? 0) (peer unknown)" + (adapter == 0 ? "" : " on hci\(adapter)")
  }

  /// Where the meaning of the row being written came from (a map, the cache, a guess: not the
  /// capture's own discovery), and the notes said once per device and source.
  var meaning: GATTSource = .capture
  var meaningNotes: [String] = []
  var notedMeanings: Set<String> = []
  static let maximumMeaningNotes = 64

  /// Notes once per device and source that a row's handle was not known from the capture's
  /// discovery (printed on stderr after the rows).
  mutating func noteMeaning(_ source: GATTSource, handle: UInt16) {
    let key = lastLabelString + "/\(source.rawValue)"
    guard !notedMeanings.contains(key), meaningNotes.count < Self.maximumMeaningNotes else { return }
    notedMeanings.insert(key)
    let how: String
    switch source {
    case .capture: return
    case .imported: how = "from the map given with --gatt"
    case .cache: how = "from the cache (a table saved from an earlier capture)"
    case .layout: how = "by layout (another connection's table that fits this one)"
    case .inferred: how = "by inference from the values (the capture shows no discovery of it)"
    }
    meaningNotes.append("\(lastLabelString): handle \(Hex.prefixed(UInt64(handle), width: 4)) is taken as Heart Rate Measurement \(how)")
  }

  mutating func writeLabel() {
    if labelIsAddress { out.append(lastLabel) } else { out.append(string: lastLabelString) }
  }

  mutating func writeTime(_ timestamp: Int64) {
    if settings.absoluteTime {
      out.utcDateTime(timestamp)
    } else {
      out.seconds(Timestamp.elapsed(from: firstTimestamp ?? timestamp, to: timestamp))
    }
  }

  mutating func row(_ number: Int, _ timestamp: Int64, _ measurement: HeartRateMeasurement, _ flags: HeartRateFlags) {
    switch settings.format {
    case .text: textRow(number, timestamp, measurement, flags)
    case .csv: csvRow(number, timestamp, measurement, flags)
    case .json: jsonRow(number, timestamp, measurement, flags)
    }
  }

  mutating func textRow(_ number: Int, _ timestamp: Int64, _ measurement: HeartRateMeasurement, _ flags: HeartRateFlags) {
    var start = out.count
    out.byte(UInt8(ascii: "#"))
    out.decimal(number)
    out.spaces(Self.frameWidth - (out.count - start))
    out.byte(0x20)
    start = out.count
    writeTime(timestamp)
    out.alignRight(from: start, width: settings.absoluteTime ? Self.dateTimeWidth : Self.secondsWidth)
    out.byte(0x20)
    start = out.count
    writeLabel()
    out.spaces(Self.deviceWidth - (out.count - start))
    out.byte(0x20)
    start = out.count
    out.decimal(Int(measurement.bpm))
    out.alignRight(from: start, width: 4)
    out.byte(0x20)
    start = out.count
    out.append(measurement.sensorContact.word)
    out.spaces(12 - (out.count - start))
    out.byte(0x20)
    start = out.count
    if let energy = measurement.energyExpended { out.decimal(Int(energy)) } else { out.byte(UInt8(ascii: "-")) }
    out.alignRight(from: start, width: 9)
    for (index, raw) in measurement.rrIntervals.enumerated() {
      out.byte(index == 0 ? 0x20 : UInt8(ascii: " "))
      out.real(HeartRateMeasurement.milliseconds(raw), places: 1)
    }
    if !flags.isEmpty {
      out.append("  ! ")
      out.append(string: flags.spaced)
    }
    out.byte(0x0A)
  }

  mutating func csvRow(_ number: Int, _ timestamp: Int64, _ measurement: HeartRateMeasurement, _ flags: HeartRateFlags) {
    if let fileField {
      out.append(string: fileField)
      out.byte(UInt8(ascii: ","))
    }
    if settings.absoluteTime {
      out.decimal(number)
      out.byte(UInt8(ascii: ","))
      out.utcDateTime(timestamp)
    }
    // The rest at once: a row per measurement is most of what `hr` does.
    let room = 96 + lastLabelString.utf8.count + measurement.rrIntervals.count * (TextFormat.maximumReal + 1)
    out.compose(maximumBytes: room) { row in
      if !settings.absoluteTime {
        row.number(number)
        row.byte(UInt8(ascii: ","))
        row.seconds(Timestamp.elapsed(from: firstTimestamp ?? timestamp, to: timestamp))
      }
      row.byte(UInt8(ascii: ","))
      if labelIsAddress { lastLabel.write(to: &row) } else { row.string(lastLabelString) }
      row.byte(UInt8(ascii: ","))
      row.number(Int(measurement.bpm))
      row.byte(UInt8(ascii: ","))
      row.text(measurement.sensorContact.word)
      row.byte(UInt8(ascii: ","))
      if let energy = measurement.energyExpended { row.number(Int(energy)) }
      row.byte(UInt8(ascii: ","))
      var first = true
      for raw in measurement.rrIntervals {
        if !first { row.byte(UInt8(ascii: " ")) }
        first = false
        row.fixed(HeartRateMeasurement.exactMilliseconds(raw))
      }
      row.byte(UInt8(ascii: ","))
    }
    if !flags.isEmpty { out.append(string: flags.spaced) }
    out.byte(0x0A)
  }

  mutating func jsonRow(_ number: Int, _ timestamp: Int64, _ measurement: HeartRateMeasurement, _ flags: HeartRateFlags) {
    out.byte(UInt8(ascii: "{"))
    if let fileField {
      out.append(#""file":"#)
      out.append(string: fileField)
      out.byte(UInt8(ascii: ","))
    }
    out.append(#""frame":"#)
    out.decimal(number)
    out.append(#","time":"#)
    out.seconds(Timestamp.elapsed(from: firstTimestamp ?? timestamp, to: timestamp))
    out.append(#","ts":"#)
    out.unixSeconds(timestamp)
    out.append(#","device":""#)
    writeLabel()
    out.append(#"","bpm":"#)
    out.decimal(Int(measurement.bpm))
    out.append(#","sensor_contact":""#)
    out.append(measurement.sensorContact.word)
    out.append(#"","energy_expended_kj":"#)
    if let energy = measurement.energyExpended { out.decimal(Int(energy)) } else { out.append("null") }
    if meaning != .capture {
      out.append(#","meaning":""#)
      out.append(meaning.key)
      out.byte(UInt8(ascii: "\""))
    }
    out.append(#","rr_intervals_ms":["#)
    for (index, raw) in measurement.rrIntervals.enumerated() {
      if index > 0 { out.byte(UInt8(ascii: ",")) }
      out.fixed(HeartRateMeasurement.exactMilliseconds(raw))
    }
    out.byte(UInt8(ascii: "]"))
    if !flags.isEmpty {
      out.append(#","flags":["#)
      out.append(string: flags.jsonList)
      out.byte(UInt8(ascii: "]"))
    }
    out.append("}\n")
  }

  // MARK: Plot

  /// Seconds since the capture's first frame: the plot's time axis.
  mutating func plotSeconds(_ timestamp: Int64) -> Double {
    Double(Timestamp.elapsed(from: firstTimestamp ?? timestamp, to: timestamp)) / 1_000_000
  }

  mutating func track(_ timestamp: Int64, _ measurement: HeartRateMeasurement, _ flags: HeartRateFlags) {
    let slot: Int
    if let known = tracks[lastLabelString] {
      slot = known
    } else if trackList.count < Self.maximumPlottedDevices {
      slot = trackList.count
      tracks[lastLabelString] = slot
      trackList.append((lastLabelString, lastOwner, HeartRateTrack()))
    } else {
      // Counted once per device, with the set bounded too.
      if devicesSeenLeftOut.count < 4096, devicesSeenLeftOut.insert(lastLabelString).inserted { devicesLeftOut += 1 }
      return
    }
    trackList[slot].track.add(
      time: plotSeconds(timestamp), bpm: Double(measurement.bpm), contactLost: measurement.sensorContact == .notDetected,
      rrMilliseconds: measurement.rrIntervalsMilliseconds, flags: flags)
  }

  /// Each device's panel: named as its GAP name or advertised name with the label `hr` gives it
  /// ("bledissect HR (D0:B1:ED:00:48:52)"), the label alone when no name is known.
  func plotDevices() -> [HeartRatePlot.Device] {
    trackList.map { entry in
      let count = entry.track.measurements
      let label = timeline.name(for: entry.owner).map { "\($0) (\(entry.label))" } ?? entry.label
      return entry.track.plotDevice(
        label: label, detail: "\(count) measurement\(count == 1 ? "" : "s")", marks: timeline.marks(for: entry.owner))
    }
  }
}
