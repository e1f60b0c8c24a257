import BLEAnalysis
import BLECapture
import BLERender

/// `bledissect info FILE...`: the format, the frame count and the time span, without decoding;
/// one block per file, in the order given, a blank line between blocks.
enum InfoCommand: CLICommand {
  static let configuration = CommandConfiguration(
    name: "info",
    abstract: "Show a capture's format, frame count and time span.",
    usage: "info <file>...",
    discussion: "The format line says when the file's times are in nanoseconds: they are read to the microsecond.",
    options: [CaptureReading.stopAtDamage],
    minimumPositionals: 1,
    maximumPositionals: Int.max)

  /// The worst exit status of the files (2 unreadable, 1 damaged, 0).
  static func run(_ arguments: ParsedArguments, _ context: CLIContext) -> Int32 {
    var status: Int32 = 0
    for (index, path) in arguments.positionals.enumerated() {
      if index > 0 { context.stdout.append("\n") }
      status = max(status, runOne(path, arguments, context))
    }
    return status
  }

  static func runOne(_ path: Argument, _ arguments: ParsedArguments, _ context: CLIContext) -> Int32 {
    let reader: any CaptureReader
    switch context.openCapture(path, damage: CaptureReading.damagePolicy(arguments)) {
    case .success(let opened): reader = opened
    case .failure(let code): return code.status
    }
    let inventory = CaptureInventory(reading: reader)
    InfoWriter.write(inventory, file: path.display, format: "\(reader.format.name), \(reader.format.detail)", to: &context.stdout)
    context.stdout.flush()
    // Each skip in order, then the damage that ended the read and the tally.
    for skip in inventory.skips { context.error("\(path.display): \(skip.message)") }
    if inventory.damage.places > inventory.skips.count {
      context.error("\(path.display): \(inventory.damage.places - inventory.skips.count) more damaged places not listed")
    }
    return context.finishRead(path, reader: reader, frames: inventory.frames, failure: inventory.failure)
  }
}
