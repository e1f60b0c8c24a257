import BLEAnalysis
import BLECapture
import BLECore
import BLEEngine
import BLERender

extension ConversionOutput: RecordSink {}

/// `bledissect convert IN OUT --to FORMAT`: rewrites a capture in another container format,
/// with `--redact` and `--comments` decoding it first.
enum ConvertCommand: CLICommand {
  static let formats: [(String, CaptureWriteFormat, String)] = [
    ("btsnoop", .btsnoopH4, "btsnoop, datalink 1002 (H4), as Android writes"),
    ("btsnoop-h1", .btsnoopH1, "btsnoop, datalink 1001 (H1: commands, events, ACL only)"),
    ("btsnoop-monitor", .btsnoopMonitor, "btsnoop, datalink 2001 (Linux monitor), as btmon -w writes"),
    ("pklg", .packetLogger(bigEndian: true), "Apple PacketLogger, big-endian"),
    ("pklg-le", .packetLogger(bigEndian: false), "Apple PacketLogger v2, little-endian"),
    ("pcap", .pcapH4WithDirection, "pcap, link type 201 (H4 with direction)"),
    ("pcap-monitor", .pcapMonitor, "pcap, link type 254 (Linux monitor)"),
    ("pcap-h4", .pcapH4, "pcap, link type 187 (H4, no direction: ACL direction is lost)"),
    ("pcapng", .pcapngH4WithDirection, "pcapng, link type 201"),
    ("pcap-ll", .pcap(.bluetoothLELL), "pcap, link type 251 (LE air packets, no header: channel, signal, checks lost)"),
    ("pcapng-ll", .pcapng(.bluetoothLELL), "pcapng, link type 251"),
    ("pcap-ll-phdr", .pcap(.bluetoothLELLWithPHDR), "pcap, link type 256 (LE air packets with RF header)"),
    ("pcapng-ll-phdr", .pcapng(.bluetoothLELLWithPHDR), "pcapng, link type 256"),
    ("pcap-nordic", .pcap(.nordicBLE), "pcap, link type 272 (nRF Sniffer, protocol version 3)"),
    ("pcapng-nordic", .pcapng(.nordicBLE), "pcapng, link type 272"),
    ("pcap-user10", .pcap(.nordicBLELegacy), "pcap, link type 157 (USER10 as nRF Sniffer 1 used it, protocol version 1)"),
    ("pcapng-user10", .pcapng(.nordicBLELegacy), "pcapng, link type 157"),
    ("pcap-ppi", .pcap(.ppi), "pcap, link type 192 (PPI with Ubertooth's LE field)"),
    ("pcapng-ppi", .pcapng(.ppi), "pcapng, link type 192"),
  ]

  static let configuration = CommandConfiguration(
    name: "convert",
    abstract: "Write a capture in another format (btsnoop, pklg, pcap, pcapng), redacted or commented if asked.",
    usage: "convert --to <format> [--redact[=<kinds>]] [--comments] <input> <output>",
    discussion: "Formats:\n" + formats.map { "  \($0.0)" + String(repeating: " ", count: 17 - $0.0.count) + $0.2 }.joined(separator: "\n")
      + "\nRecords the target cannot carry (notes in btsnoop H4, SCO in H1, HCI in the air-sniffer link types,"
      + "\nair packets in the HCI ones) are skipped and counted on stderr; when none can be, nothing is written"
      + "\nand the status is 1, with a format that carries them."
      + "\n--redact replaces what identifies devices and people, so a capture can be shared: addresses by"
      + "\npseudonyms of the same type (the same one wherever an address occurs), names and Device Information"
      + "\nstrings by placeholders of the same length, keys, pairing values and passkeys by other bytes; with"
      + "\n'values', health values too. The output decodes to the same frames (air packets' CRCs follow the"
      + "\nchanges; encrypted air payloads stay as captured). A piece of a PDU whose start is not in the capture"
      + "\nis left out. Stderr counts what was replaced, and names records still holding an original's bytes."
      + "\n--comments gives each packet its header line (as -1 --check shows it) and check findings (pcapng)."
      + "\nThe output may be '-' for standard output. A file is written under a temporary name beside it and"
      + "\nrenamed at the end, so a failed convert leaves the output as it was; an output that is the input"
      + "\n(the same file by any name or link) is refused with status 64.",
    options: [
      OptionSpec(name: "to", short: nil, kind: .value(valueName: "format"), help: "Output format (see above).", choices: formats.map { $0.0 }),
      OptionSpec(
        name: "redact", short: nil, kind: .value(valueName: "kinds"),
        help: "Replace addresses, names and keys (the default), or the kinds listed: addresses,names,keys,values (or all).",
        choices: ["addresses", "names", "keys", "values", "all"], valueIsOptional: true),
      OptionSpec(name: "comments", short: nil, kind: .flag, help: "Write each frame's header line and check findings as its packet comment (pcapng formats)."),
      CaptureReading.stopAtDamage,
    ],
    minimumPositionals: 2,
    maximumPositionals: 2)

  static func run(_ arguments: ParsedArguments, _ context: CLIContext) -> Int32 {
    func usage(_ message: String) -> Int32 { BLEDissectCLI.usageError(message, command: configuration.name, context) }
    guard let name = arguments.value("to")?.lowercased() else { return usage("convert needs --to <format>") }
    guard let format = formats.first(where: { $0.0 == name })?.1 else {
      let names = formats.map { $0.0 }
      return usage("unknown format '\(name)'" + ArgumentParser.suggestion(name, among: names) + "; the formats: " + names.joined(separator: ", "))
    }
    var kinds: RedactionKinds?
    do {
      kinds = try arguments.value("redact").map { list throws(RedactionKinds.UnknownWord) in try RedactionKinds(list: list) }
    } catch {
      return usage("--redact takes addresses, names, keys, values or all, not '\(error.word)'")
    }
    let comments = arguments.has("comments")
    if case .pcapng = format {} else if comments { return usage("--comments needs a pcapng format: the others have no place for a packet's comment") }
    let input = arguments.positionals[0]
    let output = arguments.positionals[1]
    let toStandardOutput = output.bytes == [UInt8(ascii: "-")]
    if !toStandardOutput, input.bytes != [UInt8(ascii: "-")], FileStatus.sameFile(input.bytes, output.bytes) {
      // Not through `usageError`: one line says it all.
      context.error("\(output.display) is the same file as the input \(input.display): convert cannot write over its input")
      return ExitStatus.usage
    }
    let reader: any CaptureReader
    switch context.openCapture(input, damage: CaptureReading.damagePolicy(arguments)) {
    case .success(let opened): reader = opened
    case .failure(let code): return code.status
    }
    let target: OutputFile
    do {
      target = toStandardOutput ? .standardOutput : try OutputFile.create(output.bytes)
    } catch {
      context.error("\(output.display): \(error.reason)")
      return ExitStatus.unreadable
    }
    let sectionComment = FrameComments.sectionComment(redaction: kinds?.list, comments: comments)
    var writing = ConversionOutput(format: format, comment: sectionComment, target: target)
    writing.onDamage = { context.error("\(input.display): \($0.message)") }
    let frames: Int
    let failure: SourceFailure?
    if kinds == nil && !comments {
      let copied = writing.copy(from: reader)
      (frames, failure) = (copied.frames, copied.failure?.sourceFailure)
    } else {
      var consumer = ConvertingConsumer(sink: writing, redact: kinds, comments: comments)
      let end = FrameStream(source: reader).run(into: &consumer)
      (writing, frames, failure) = (consumer.sink, end.frames, end.failure)
      if let kinds, let tally = consumer.redactor?.tally, !writing.stopped {
        for line in [tally.summary(kinds: kinds)] + tally.warnings { context.error("\(input.display): \(line)") }
      }
    }
    if writing.stopped || !writing.drain() {
      // Whatever was written is not the capture: the name keeps what it held before.
      target.discard()
      if let reason = writing.failure { context.error("\(output.display): \(reason)") }
      return writing.failure == nil ? ExitStatus.success : ExitStatus.unreadable
    }
    let skipped = writing.writer.skipped
    let suggestion = writing.suggestion.map { "; --to \($0) carries them" } ?? ""
    if skipped > 0, skipped == writing.records {
      target.discard()
      context.error("none of the \(skipped) records can be carried by \(name): nothing written\(suggestion)")
      return ExitStatus.damaged
    }
    // A damaged input (status 1) still gives a whole capture of the records before the damage.
    if let problem = target.finish() {
      context.error("\(output.display): \(problem)")
      return ExitStatus.unreadable
    }
    if skipped > 0 {
      context.error("\(skipped) record\(skipped == 1 ? "" : "s") cannot be carried by \(name) and were skipped\(suggestion)")
    }
    return context.finishRead(input, reader: reader, frames: frames, failure: failure)
  }
}
