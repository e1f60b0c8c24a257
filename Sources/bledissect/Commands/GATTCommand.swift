import BLEAnalysis
import BLERender

/// `bledissect gatt FILE...`: each GATT server's attribute table as the capture's discovery
/// showed it, with the frame each entry was learned in; `--json` writes it as a GATT map
/// (docs/json.md, "GATT maps").
enum GATTCommand: CLICommand {
  static let configuration = CommandConfiguration(
    name: "gatt",
    abstract: "Show each device's GATT attribute table (services, characteristics, descriptors).",
    usage: "gatt [options] <file>...",
    discussion: """
      Lists what the capture's discovery showed of each GATT server (a peer by its address,
      or the local device for captures taken on the server), as a tree: service (handle
      range), characteristic (value handle and properties), descriptors; '#N' is the frame
      each entry was learned in. --json writes one GATT map per capture (docs/json.md).
      Several files are read in parallel (-j) and printed in the order given, each after a
      '==> FILE <==' line (text) or with its name in "capture" (JSON); the exit status is
      the worst of the files'.
      """,
    options: [
      OptionSpec(name: "json", short: nil, kind: .flag, help: "Write a GATT map: one JSON object per capture, on one line."),
    ] + CaptureReading.batchOptions,
    minimumPositionals: 1,
    maximumPositionals: Int.max)

  static func run(_ arguments: ParsedArguments, _ context: CLIContext) -> Int32 {
    let jobs: Int
    let reading: CaptureReading
    do {
      jobs = try BatchRunner.jobCount(arguments)
      reading = try CaptureReading(arguments, context)
    } catch {
      return BLEDissectCLI.usageError(error.message, command: configuration.name, context)
    }
    let json = arguments.has("json")
    return BatchRunner.run(files: arguments.positionals, jobs: jobs, header: json ? nil : fileHeader, context) { file, output, context in
      listTables(file, json: json, reading: reading, output: output, context)
    }
  }

  static func listTables(_ path: Argument, json: Bool, reading: CaptureReading, output: JobOutput, _ context: CLIContext) -> Int32 {
    var consumer = GATTConsumer()
    var devices: [GATTDevice] = []
    let read: CaptureReading.Read
    switch reading.stream(path, threading: output.threading, into: &consumer, context, devices: { consumer, end in
      devices = consumer.devices(end.dissector.databases)
      return devices
    }) {
    case .success(let done): read = done
    case .failure(let code): return code.status
    }
    if json {
      GATTMapWriter.write(devices, capture: path.display, to: &output.buffer)
    } else {
      GATTTreeWriter.write(devices, to: &output.buffer)
    }
    output.handOver()
    return read.finish(context)
  }
}

/// The line before each file's text output in a batch, as `head` and `tail` write it.
@Sendable func fileHeader(_ file: Argument) -> String { "==> \(file.display) <==\n" }
