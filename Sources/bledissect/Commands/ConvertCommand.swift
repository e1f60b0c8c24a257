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
  ]

  static let configuration = CommandConfiguration(
    name: "convert",
    abstract: "Write a capture in another format (btsnoop, pklg, pcap, pcapng).",
    usage: "convert --to <format> <input> <output>",
    discussion: "Formats:\n" + formats.map { "  \($0.0)" + String(repeating: " ", count: 17 - $0.0.count) + $0.2 }.joined(separator: "\n")
      + "\nRecords the target cannot carry (notes in btsnoop H4, SCO in H1) are skipped and counted on stderr.\nThe output may be '-' for standard output.",
    options: [
      OptionSpec(name: "to", short: nil, kind: .value(valueName: "format"), help: "Output format (see above)."),
      stopAtDamageOption,
    ],
    minimumPositionals: 2,
    maximumPositionals: 2)

  static func run(_ arguments: ParsedArguments, _ context: CLIContext) -> Int32 {
    guard let name = arguments.value("to") else {
      return BLEDissectCLI.usageError("convert needs --to <format>", ArgumentParser.help(for: configuration), context)
    }
    guard let format = formats.first(where: { $0.0 == name })?.1 else {
      return BLEDissectCLI.usageError("unknown format '\(name)'", ArgumentParser.help(for: configuration), context)
    }
    let input = arguments.positionals[0]
    let outputPath = arguments.positionals[1]
    let reader: any CaptureReader
    switch context.openCapture(input, damage: damagePolicy(arguments)) {
    case .success(let opened): reader = opened
    case .failure(let code): return code.status
    }
    let fd: Int32 = outputPath == "-" ? 1 : open(outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    guard fd >= 0 else {
      context.error("\(outputPath): \(String(cString: strerror(errno)))")
      return ExitStatus.unreadable
    }
    defer { if fd != 1 { close(fd) } }
    var writer = CaptureWriter(format: format)
    func drain() -> Bool {
      let chunk = writer.takeOutput()
      var offset = 0
      while offset < chunk.count {
        let written = chunk.withUnsafeBufferPointer { write(fd, $0.baseAddress! + offset, chunk.count - offset) }
        if written < 0 {
          if errno == EINTR { continue }
          context.error("\(outputPath): \(String(cString: strerror(errno)))")
          return false
        }
        offset += written
      }
      return true
    }
    var failure: CaptureError?
    var frames = 0
    var damagePlaces = 0
    // A pipe: what was converted is written out before a read that would wait.
    let watchesInput = reader.mayWaitForInput
    do {
      while true {
        if watchesInput, !writer.output.isEmpty, !reader.nextIsReady(), !drain() { return ExitStatus.unreadable }
        guard let record = try reader.next() else { break }
        frames += 1
        if reader.damagePlaces != damagePlaces, let skip = reader.damage.last {
          damagePlaces = reader.damagePlaces
          context.error("\(input): \(skip.message)")
        }
        writer.write(record)
        if writer.output.count >= 1 << 20, !drain() { return ExitStatus.unreadable }
      }
    } catch {
      failure = error
    }
    if !drain() { return ExitStatus.unreadable }
    if writer.skipped > 0 {
      context.error("\(writer.skipped) record\(writer.skipped == 1 ? "" : "s") cannot be carried by \(name) and were skipped")
    }
    return context.finishRead(input, reader: reader, frames: frames, failure: failure)
  }
}
