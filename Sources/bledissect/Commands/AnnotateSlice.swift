import BLEAnalysis
import BLECapture
import BLERender

/// `annotate -w FILE`: the slice the filters choose, written instead of printed
/// (BLEAnalysis/Slice/CaptureSlice.swift says what is kept and why).
extension AnnotateCommand {
  static let sliceOption = OptionSpec(
    name: "write", short: "w", kind: .value(valueName: "file"),
    help: "Write the frames the filters choose, with the frames they need to decode the same, to this capture instead of printing them (btsnoop; .pcapng, .pcap, .pklg by extension; pcapng notes why each added frame is there).")

  static func writeSlice(_ path: Argument, to target: Argument, _ settings: RenderSettings, _ context: CLIContext) -> Int32 {
    // Two reads: the context a chosen frame needs may come before it.
    guard path.bytes != [UInt8(ascii: "-")] else {
      return BLEDissectCLI.usageError("-w reads the capture twice: give it as a file, not standard input", command: configuration.name, context)
    }
    guard !FileStatus.sameFile(path.bytes, target.bytes) else {
      context.error("\(target.display) is the capture being read: -w cannot write over its input")
      return ExitStatus.usage
    }
    let reading = CaptureReading(damage: settings.damage, maps: settings.maps)
    var plan = SlicePlan(filter: settings.filter, findings: settings.check)
    guard case .success(let first) = reading.stream(path, threading: .two, into: &plan, context) else { return ExitStatus.unreadable }
    guard let format = CaptureRecorder.format(forName: target.text, airPackets: plan.airPackets > 0) else {
      context.error("\(target.display): the slice of a capture sniffed over the air needs a .pcapng or .pcap name")
      return ExitStatus.usage
    }
    let comment = SliceWords.fileComment(of: path.display, version: BLEDissectCLI.version)
    guard let recorder = LiveCommand.openRecorder(target, format: format, comment: comment, context) else { return ExitStatus.unreadable }
    var failure: String?
    var selection = SliceSelection(plan: plan) { record, reason in
      guard failure == nil else { return }
      failure = recorder.write(record, comment: reason.map(SliceWords.comment))
    }
    _ = reading.stream(path, threading: .two, into: &selection, context, again: true)
    if let failure {
      context.error("\(target.display): \(failure)")
      return ExitStatus.unreadable
    }
    let words = SliceWords.written(selection, records: recorder.records, of: first.end.frames, to: target.display, skipped: recorder.skipped, linksLeftOut: plan.linksLeftOut)
    for line in words { context.error("\(path.display): \(line)") }
    return first.finish(context)
  }
}
