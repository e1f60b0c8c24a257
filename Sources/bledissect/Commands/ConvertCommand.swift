#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import BLECapture
import BLECore

/// `bledissect convert IN OUT --to FORMAT`: rewrites a capture in another container format.
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
    abstract: "Write a capture in another format (btsnoop, pklg, pcap, pcapng).",
    usage: "convert --to <format> <input> <output>",
    discussion: "Formats:\n" + formats.map { "  \($0.0)" + String(repeating: " ", count: 17 - $0.0.count) + $0.2 }.joined(separator: "\n")
      + "\nRecords the target cannot carry (notes in btsnoop H4, SCO in H1, HCI in the air-sniffer link types,"
      + "\nair packets in the HCI ones) are skipped and counted on stderr."
      + "\nThe output may be '-' for standard output. A file is written under a temporary name beside it and"
      + "\nrenamed at the end, so a failed convert leaves the output as it was; an output that is the input"
      + "\n(the same file by any name or link) is refused with status 64.",
    options: [
      OptionSpec(name: "to", short: nil, kind: .value(valueName: "format"), help: "Output format (see above).", choices: formats.map { $0.0 }),
      CaptureReading.stopAtDamage,
    ],
    minimumPositionals: 2,
    maximumPositionals: 2)

  static func run(_ arguments: ParsedArguments, _ context: CLIContext) -> Int32 {
    guard let name = arguments.value("to")?.lowercased() else {
      return BLEDissectCLI.usageError("convert needs --to <format>", command: configuration.name, context)
    }
    guard let format = formats.first(where: { $0.0 == name })?.1 else {
      return BLEDissectCLI.usageError(
        "unknown format '\(name)'" + ArgumentParser.suggestion(name, among: formats.map { $0.0 }), command: configuration.name, context)
    }
    let input = arguments.positionals[0]
    let output = arguments.positionals[1]
    let toStandardOutput = output.bytes == [UInt8(ascii: "-")]
    if !toStandardOutput, input.bytes != [UInt8(ascii: "-")], let inputFile = FileStatus(input.bytes), let outputFile = FileStatus(output.bytes),
      inputFile.device == outputFile.device, inputFile.inode == outputFile.inode
    {
      // Not through `usageError`: one line says it all.
      context.error("\(output.display) is the same file as the input \(input.display): convert cannot write over its input")
      return ExitStatus.usage
    }
    let reader: any CaptureReader
    switch context.openCapture(input, damage: CaptureReading.damagePolicy(arguments)) {
    case .success(let opened): reader = opened
    case .failure(let code): return code.status
    }
    var target: OutputFile
    do {
      target = toStandardOutput ? .standardOutput : try OutputFile.create(output.bytes)
    } catch {
      context.error("\(output.display): \(error.reason)")
      return ExitStatus.unreadable
    }
    var writer = CaptureWriter(format: format)
    var status = ExitStatus.success
    /// Writes what the writer holds; false when the output failed (the message is printed)
    /// or was closed (a pipe whose reader left: quiet, status 0).
    func drain() -> Bool {
      guard let code = SystemWrite.all(target.descriptor, writer.takeOutput()) else { return true }
      if code == EPIPE {
        status = ExitStatus.success
      } else {
        context.error("\(output.display): \(SystemWrite.reason(code))")
        status = ExitStatus.unreadable
      }
      return false
    }
    var outputFailed = false
    var failure: CaptureError?
    var frames = 0
    // A pipe: what was converted is written out before a read that would wait.
    let watchesInput = reader.mayWaitForInput
    do {
      while true {
        if watchesInput, !writer.output.isEmpty, !reader.nextIsReady(), !drain() {
          outputFailed = true
          break
        }
        guard let record = try reader.next() else { break }
        frames += 1
        if record.followsDamage, let skip = reader.damage.last { context.error("\(input.display): \(skip.message)") }
        writer.write(record)
        if writer.output.count >= 1 << 20, !drain() {
          outputFailed = true
          break
        }
      }
    } catch {
      failure = error
    }
    if !outputFailed, !drain() { outputFailed = true }
    if outputFailed {
      // Whatever was written is not the capture: the name keeps what it held before.
      target.discard()
      return status
    }
    // A damaged input (status 1) still gives a whole capture of the records before the damage.
    if let problem = target.finish() {
      context.error("\(output.display): \(problem)")
      return ExitStatus.unreadable
    }
    if writer.skipped > 0 {
      context.error("\(writer.skipped) record\(writer.skipped == 1 ? "" : "s") cannot be carried by \(name) and were skipped")
    }
    return context.finishRead(input, reader: reader, frames: frames, failure: failure?.sourceFailure)
  }
}
