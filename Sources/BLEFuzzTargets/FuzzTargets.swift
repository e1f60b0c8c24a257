#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import BLECapture
import BLECore
import BLEDecoder
import BLERender

/// What the fuzz targets run on one input, shared by the libFuzzer binaries (Fuzz/) and the
/// tests that replay the saved crashes (Tests/Fixtures/FuzzRegressions/). Each run checks the
/// pipeline's promises and traps when one is broken, so the fuzzer reports it like a crash.
package enum FuzzTarget: String, CaseIterable, Sendable {
  /// The btsnoop reader: the input is a btsnoop file without its 8-byte magic.
  case btsnoop
  /// The PacketLogger reader: the input is a whole file (no magic: detection decides).
  case packetlogger
  /// libpcap through our stream: the input is a whole pcap or pcapng file.
  case pcap
  /// Format detection and whichever reader it picks, on any bytes.
  case detect
  /// Bytes to records to frames to text (verbose) and JSON Lines, as `annotate` does.
  case pipeline
  /// Records straight to the dissector and both renderers (see `FuzzTarget.packets`).
  case packets
  /// Bytes to records, written as btsnoop (Linux monitor), as pcapng (link type 201) and, for
  /// pcap input, as pcapng of the input's own link type, each read back: the same records must
  /// come back (what each container can carry).
  case roundtrip
  /// gzip input inflated as read (`InputSource`, `Inflater`), then detection and whichever
  /// reader the inflated bytes pick: the input is a gzip file without its 2-byte magic.
  case gzip
  /// An Android bugreport's btsnooz summary (base64, zlib, v1/v2 records): see `bugreportText`.
  case bugreport
  /// A zip archive (an Android bugreport zip: the snoop log entry, else the main text's
  /// summary) read from memory through `ZipArchive`; inputs not starting `PK\3\4` are skipped.
  case zip
  /// Linux monitor datagrams through `MonitorSocketReader.parse` (the socket reader's parsing),
  /// dissected and rendered, then written as btsnoop (monitor) and read back: see `monitor`.
  case monitor
  /// Our GATT map (`gatt --json`, read by `--gatt`): `GATTMapFile.parseJSON`, then the maps
  /// given to the dissector over a fixed conversation that touches their handles (see
  /// `FuzzTarget.gattMap`).
  case gattmap
  /// A BlueZ GATT cache file (read by `--gatt`): `GATTMapFile.parseBlueZ`, then the same
  /// conversation.
  case bluez
  /// A decoder file (`--decoders`), optionally followed by a NUL byte and values:
  /// `DecoderFile.parse`, then every decoder over the values (see `FuzzTarget.decoders`).
  case decoders
  /// A keys file (`--keys`), optionally followed by a NUL byte and HCI packets for
  /// `--keys-from`: `LinkKeyRing.parseFile` and `HCIKeyHarvest`, then the keys over an
  /// encrypted sniffed link (see `FuzzTarget.keys`).
  case keys
  /// Any bytes as a capture read for `diff` (`DiffConsumer`), then compared with itself (must
  /// be equivalent) and with an empty side (see `FuzzTarget.diff`).
  case diff
  /// Any bytes as a capture read by `check` (`ConformanceAnalysis`), then its text and JSON
  /// writers (see `FuzzTarget.check`).
  case check
  /// Any bytes as a capture through `convert --redact=all --comments` (`CaptureRedactor`,
  /// `FrameComments`): see `FuzzTarget.redact`.
  case redact

  /// What a run saw; the tests assert on it.
  package struct Outcome: Sendable {
    /// Records read (readers) or decoded (packets).
    package var records = 0
    /// The error that ended the read; nil when the capture ended cleanly or the target has none.
    package var error: CaptureError?
    /// Whether the input was skipped (not of the target's format).
    package var skipped = false
    /// Frames rendered, header lines written by the text renderer, lines written as JSON.
    package var frames = 0
    package var textHeaders = 0
    package var jsonLines = 0
    /// Connections open at the end, GATT databases kept.
    package var openConnections = 0
    package var databases = 0
    /// The JSON Lines output, when asked for (tests parse it).
    package var json: [UInt8] = []
    /// Side files: the maps or decoders parsed, or why the file was refused (one line).
    package var parsed = 0
    package var refusal: String?
  }

  /// Runs the target on the bytes libFuzzer lends (its C entry point), copied first.
  @discardableResult
  // Safety: libFuzzer's `data` and `size`, valid for this call; copied before anything reads them.
  package func run(_ bytes: UnsafeBufferPointer<UInt8>, keepingJSON: Bool = false) -> Outcome {
    run(Array(bytes), keepingJSON: keepingJSON)
  }

  /// Runs the target on `bytes`; traps (precondition) when a promise is broken.
  @discardableResult
  package func run(_ bytes: [UInt8], keepingJSON: Bool = false) -> Outcome {
    switch self {
    case .btsnoop:
      var file = BTSnoopFormat.magic
      file.append(contentsOf: bytes)
      return Self.read(file, render: false, keepingJSON: false)
    case .packetlogger:
      // Only PacketLogger: inputs that start like another format belong to other targets.
      if let first = bytes.first, first == 0x62 || first == 0x0A || first == 0xA1 || first == 0xD4 || first == 0x4D {
        return Outcome(skipped: true)
      }
      return Self.read(bytes, render: false, keepingJSON: false)
    case .pcap:
      guard bytes.count >= 4 else { return Outcome(skipped: true) }
      let magic = UInt32(bytes[0]) << 24 | UInt32(bytes[1]) << 16 | UInt32(bytes[2]) << 8 | UInt32(bytes[3])
      switch magic {
      case 0xA1B2_C3D4, 0xD4C3_B2A1, 0xA1B2_3C4D, 0x4D3C_B2A1, 0x0A0D_0D0A: break
      default: return Outcome(skipped: true)
      }
      return Self.read(bytes, render: false, keepingJSON: false)
    case .detect:
      return Self.read(bytes, render: false, keepingJSON: false)
    case .pipeline:
      return Self.read(bytes, render: true, keepingJSON: keepingJSON)
    case .packets:
      return Self.packets(bytes, keepingJSON: keepingJSON)
    case .roundtrip:
      return Self.roundtrip(bytes)
    case .gzip:
      var file: [UInt8] = [0x1F, 0x8B]
      file.append(contentsOf: bytes)
      return Self.read(file, render: false, keepingJSON: false)
    case .bugreport:
      guard let text = Self.bugreportText(bytes) else { return Outcome(skipped: true) }
      return Self.read(text, render: false, keepingJSON: false)
    case .zip:
      guard bytes.count >= 4, bytes[0] == 0x50, bytes[1] == 0x4B, bytes[2] == 0x03, bytes[3] == 0x04 else { return Outcome(skipped: true) }
      return Self.read(bytes, render: false, keepingJSON: false)
    case .monitor:
      return Self.monitor(bytes, keepingJSON: keepingJSON)
    case .gattmap:
      return Self.gattMap(bytes, keepingJSON: keepingJSON)
    case .bluez:
      return Self.blueZ(bytes, keepingJSON: keepingJSON)
    case .decoders:
      return Self.decoders(bytes, keepingJSON: keepingJSON)
    case .keys:
      return Self.keys(bytes, keepingJSON: keepingJSON)
    case .diff:
      return Self.diff(bytes)
    case .check:
      return Self.check(bytes)
    case .redact:
      return Self.redact(bytes)
    }
  }

  /// Frames read per input at most: a small input cannot hold more, and the cap keeps one run short.
  static let frameLimit = 100_000

  /// The inflation caps of the reading targets: lower than the CLI's, so that inputs of a few KiB
  /// reach them (a ratio of 16 past 256 KiB; summaries of 32 KiB), and runs stay short.
  package static let inflationLimits = InflationLimits(ratio: 16, floor: 256 << 10, summary: 32 << 10)

  /// No record of `count` input bytes lies further than this into the content: inflated gzip or
  /// zip entries stop at the cap, and a btsnooz summary's body at its cap, each byte of which
  /// makes at most 25 / 7 bytes of btsnoop (a 7-byte record header becomes 24 bytes and an H4
  /// indicator).
  static func inflatedBound(_ count: Int) -> Int64 {
    let limits = inflationLimits
    let inflated = max(limits.floor, limits.ratio.saturatingMultiply(Int64(count)), Int64(count))
    return max(inflated, limits.summary.saturatingMultiply(4)).saturatingAdd(64)
  }

  /// Opens `bytes` as the CLI opens a capture: read on past damage, so the resynchronization is
  /// fuzzed too; inflation caps lowered (`inflationLimits`), so that small inputs reach them.
  static func open(_ bytes: [UInt8]) throws(CaptureError) -> any CaptureReader {
    let input = InputSource(bytes: bytes, name: "fuzz")
    input.inflationLimits = inflationLimits
    return try CaptureFile.open(input, damage: .resynchronize)
  }

  /// Opens `bytes` as a capture and reads every record; with `render`, dissects and renders them.
  static func read(_ bytes: [UInt8], render: Bool, keepingJSON: Bool) -> Outcome {
    var outcome = Outcome()
    let reader: any CaptureReader
    do {
      reader = try open(bytes)
    } catch {
      check(error)
      outcome.error = error
      return outcome
    }
    precondition(!reader.format.name.isEmpty && !reader.format.detail.isEmpty, "a reader names its format")
    if let notice = reader.format.notice { precondition(!notice.isEmpty && !notice.utf8.contains(0x0A), "a notice is one line") }
    // Records from compressed content (gzip, a zip entry, a btsnooz summary) are bounded by
    // what the content inflates to, not by the input: only by `frameLimit` here.
    let compressed = reader.format.name == "btsnooz" || Self.startsCompressed(bytes)
    var session = render ? Session(keepingJSON: keepingJSON) : nil
    var record = CaptureRecord(timestamp: 0, direction: nil, kind: .other(0), bytes: [])
    do {
      while outcome.records < frameLimit, try reader.next(into: &record) {
        outcome.records += 1
        precondition(record.bytes.count <= CaptureFile.maximumPacketLength, "a record longer than any reader accepts")
        precondition(record.fileOffset >= 0 && (compressed || record.fileOffset < Int64(bytes.count) &+ 8), "a record outside the file")
        precondition(record.fileOffset < inflatedBound(bytes.count), "a record past the inflation cap")
        session?.show(record, number: outcome.records)
      }
    } catch {
      check(error)
      outcome.error = error
    }
    // Every record takes at least 8 bytes of the file (a pcapng block header is the smallest).
    precondition(compressed || outcome.records <= bytes.count / 8 + 1, "\(outcome.records) records from \(bytes.count) bytes")
    session?.finish(into: &outcome)
    return outcome
  }

  /// Whether detection unwraps `bytes` (gzip, zip) before reading records.
  static func startsCompressed(_ bytes: [UInt8]) -> Bool {
    guard bytes.count >= 2 else { return false }
    if bytes[0] == 0x1F && bytes[1] == 0x8B { return true }
    return bytes.count >= 4 && bytes[0] == 0x50 && bytes[1] == 0x4B && bytes[2] == 0x03 && bytes[3] == 0x04
  }

  /// A `CaptureError` reaches the user as one non-empty line.
  static func check(_ error: CaptureError) {
    let message = error.message
    precondition(!message.isEmpty && !message.utf8.contains(UInt8(ascii: "\n")), "an error message is one line")
    precondition(error.exitStatus == 1 || error.exitStatus == 2, "an error's exit status is 1 or 2")
  }

  /// The `packets` input: records one after another, each a 4-byte header (Linux monitor
  /// opcode, flags, length little-endian), then 8 bytes of timestamp when flag bit 1 is set, then
  /// the packet; the last record takes what remains when its length runs past the end.
  /// Flag bit 0 puts the record on controller 1 instead of 0; flag bit 2 makes it an air packet
  /// (`.airPacket`: `AirPacketHeader`, then a link-layer packet), whatever the opcode. Without a
  /// timestamp of their own, records are 1 ms apart.
  package static func packets(_ bytes: [UInt8], keepingJSON: Bool = false) -> Outcome {
    var outcome = Outcome()
    var session = Session(keepingJSON: keepingJSON)
    var at = 0
    var timestamp: Int64 = 1_700_000_000_000_000
    while at + 4 <= bytes.count, outcome.records < frameLimit {
      let opcode = UInt16(bytes[at])
      let flags = bytes[at + 1]
      let length = Int(bytes[at + 2]) | Int(bytes[at + 3]) << 8
      at += 4
      if flags & 2 != 0 {
        guard at + 8 <= bytes.count else { break }
        var value: UInt64 = 0
        for index in 0..<8 { value |= UInt64(bytes[at + index]) << (8 * index) }
        timestamp = Int64(bitPattern: value)
        at += 8
      } else {
        timestamp = timestamp &+ 1000
      }
      let count = min(length, bytes.count - at)
      let (kind, direction) = flags & 4 != 0 ? (PacketKind.airPacket, nil) : MonitorOpcode.kind(opcode)
      let record = CaptureRecord(
        timestamp: timestamp, adapter: UInt16(flags & 1), direction: direction, kind: kind,
        bytes: Array(bytes[at..<(at + count)]))
      at += count
      outcome.records += 1
      session.show(record, number: outcome.records)
    }
    session.finish(into: &outcome)
    return outcome
  }

  /// Dissects and renders frames the way `annotate` does (every other frame's value decoded at
  /// rendering, as the two-thread pipeline may), checking each frame's output.
  struct Session {
    var dissector: Dissector
    var frame = DissectedFrame()
    var text = TextRenderer(verbose: true)
    var json = JSONLinesRenderer()
    var out = OutputBuffer(fd: nil)
    var frames = 0
    var textHeaders = 0
    var jsonLines = 0
    let keepingJSON: Bool
    var kept: [UInt8] = []

    init(keepingJSON: Bool, dissector: Dissector = Dissector()) {
      self.keepingJSON = keepingJSON
      self.dissector = dissector
    }

    mutating func show(_ record: CaptureRecord, number: Int) {
      dissector.dissect(record, number: number, into: &frame)
      frames += 1

      let textStart = out.count
      text.render(&frame, to: &out)
      out.withAppendedBytes(since: textStart) { text in
        // A header line `#<number> ...`, then detail lines; always whole lines.
        precondition(text.count > 2 && text[0] == UInt8(ascii: "#") && text.last == 0x0A, "frame \(number): text is not whole lines under a header")
      }
      textHeaders += 1

      let jsonStart = out.count
      json.render(&frame, to: &out)
      out.withAppendedBytes(since: jsonStart) { line in
        // One object on one line: the only newline is the last byte, no raw control characters.
        precondition(line.count > 2 && line[0] == UInt8(ascii: "{") && line[line.count - 2] == UInt8(ascii: "}"), "frame \(number): JSON is not one object")
        precondition(line.last == 0x0A && !line.dropLast().contains { $0 < 0x20 }, "frame \(number): JSON line has a raw control character")
        if keepingJSON { kept.append(contentsOf: line) }
      }
      jsonLines += 1

      if out.count > 1 << 20 { out = OutputBuffer(fd: nil) }
    }

    mutating func finish(into outcome: inout Outcome) {
      text.finish(to: &out)
      json.finish(to: &out)
      outcome.frames = frames
      outcome.textHeaders = textHeaders
      outcome.jsonLines = jsonLines
      outcome.openConnections = dissector.connections.openConnections.count
      // Each frame opens at most one connection (a connect event, or data on a new handle).
      precondition(outcome.openConnections <= frames, "more open connections than frames")
      outcome.databases = dissector.databases.count
      outcome.json = kept
      precondition(outcome.frames == outcome.records, "every record read became a frame")
    }
  }
}

extension FuzzTarget {
  /// Reads `bytes`, writes the records in two containers, reads each back and compares.
  static func roundtrip(_ bytes: [UInt8]) -> Outcome {
    var outcome = Outcome()
    var records: [CaptureRecord] = []
    var linkType: PcapLinkType?
    do {
      let reader = try CaptureFile.open(InputSource(bytes: bytes, name: "fuzz"))
      linkType = (reader as? PcapReader)?.linkType
      while records.count < frameLimit, let record = try reader.next() { records.append(record) }
    } catch {
      outcome.error = error
    }
    outcome.records = records.count
    guard !records.isEmpty else { return outcome }

    // Air-sniffer packets have no monitor opcode: the monitor carries every other kind.
    checkMonitorRoundtrip(records.filter { $0.kind != .airPacket })
    if let linkType { checkLinkTypeRoundtrip(records, linkType) }

    // pcapng (link type 201) carries HCI packets with their direction; libpcap splits the 64-bit
    // microseconds into seconds and microseconds, exact for timestamps from 1970 on.
    var pcapng = CaptureWriter(format: .pcapngH4WithDirection)
    let hci = records.filter { $0.kind.isHCIPacket }
    for record in records { pcapng.write(record) }
    precondition(pcapng.skipped == records.count - hci.count, "pcapng skipped an HCI packet")
    let pcapngBack = readBack(pcapng.output, "pcapng")
    precondition(pcapngBack.count == hci.count, "pcapng: \(pcapngBack.count) of \(hci.count) packets back")
    for (index, (original, back)) in Swift.zip(hci, pcapngBack).enumerated() {
      precondition(back.kind == original.kind && back.direction == (original.direction ?? .hostToController), "pcapng packet \(index + 1): kind or direction changed")
      precondition(back.bytes == original.bytes, "pcapng packet \(index + 1): bytes changed")
      precondition(original.timestamp < 0 || back.timestamp == original.timestamp, "pcapng packet \(index + 1): timestamp changed")
    }
    return outcome
  }

  /// btsnoop with the monitor datalink carries every kind (as its monitor opcode), direction,
  /// controller, bytes and timestamp exactly: `records` written so read back unchanged.
  static func checkMonitorRoundtrip(_ records: [CaptureRecord]) {
    guard !records.isEmpty else { return }
    var monitor = CaptureWriter(format: .btsnoopMonitor)
    for record in records { monitor.write(record) }
    precondition(monitor.skipped == 0, "btsnoop (monitor) skipped a record")
    let monitorBack = readBack(monitor.output, "btsnoop (monitor)")
    precondition(monitorBack.count == records.count, "btsnoop (monitor): \(monitorBack.count) of \(records.count) records back")
    for (index, (original, back)) in Swift.zip(records, monitorBack).enumerated() {
      let opcode = MonitorOpcode.opcode(for: original.kind, direction: original.direction)!
      let (kind, direction) = MonitorOpcode.kind(opcode)
      precondition(back.kind == kind && back.direction == direction, "btsnoop (monitor) record \(index + 1): kind or direction changed")
      precondition(back.adapter == original.adapter, "btsnoop (monitor) record \(index + 1): controller changed")
      precondition(back.bytes == original.bytes, "btsnoop (monitor) record \(index + 1): bytes changed")
      precondition(back.timestamp == original.timestamp, "btsnoop (monitor) record \(index + 1): timestamp changed")
    }
  }

  /// pcapng of the capture's own link type carries what that link type read: the records it
  /// writes come back with their kind and bytes; of an air packet, the link-layer packet and
  /// what the sniffer's header says as far as the link type carries it (a value the format
  /// reads as not known is written as its default), so that the records read back are written
  /// and read back again unchanged.
  static func checkLinkTypeRoundtrip(_ records: [CaptureRecord], _ linkType: PcapLinkType) {
    let name = "pcapng (link type \(linkType.value))"
    func write(_ records: [CaptureRecord]) -> (file: [UInt8], carried: [CaptureRecord]) {
      var writer = CaptureWriter(format: .pcapng(linkType))
      var carried: [CaptureRecord] = []
      for record in records {
        let skipped = writer.skipped
        writer.write(record)
        if writer.skipped == skipped { carried.append(record) }
      }
      return (writer.output, carried)
    }
    let (file, carried) = write(records)
    let back = readBack(file, name)
    precondition(back.count == carried.count, "\(name): \(back.count) of \(carried.count) records back")
    for (index, (original, copy)) in Swift.zip(carried, back).enumerated() {
      precondition(copy.kind == original.kind, "\(name) record \(index + 1): kind changed")
      let header = original.kind == .airPacket ? AirPacketHeader.size : 0
      precondition(copy.bytes.dropFirst(header) == original.bytes.dropFirst(header), "\(name) record \(index + 1): bytes changed")
      precondition(original.timestamp < 0 || copy.timestamp == original.timestamp, "\(name) record \(index + 1): timestamp changed")
    }
    let (again, carriedAgain) = write(back)
    precondition(carriedAgain.count == back.count, "\(name): a record read back is not written again")
    let backAgain = readBack(again, name)
    precondition(backAgain.count == back.count, "\(name): \(backAgain.count) of \(back.count) records back the second time")
    for (index, (first, second)) in Swift.zip(back, backAgain).enumerated() {
      precondition(second.kind == first.kind && second.bytes == first.bytes, "\(name) record \(index + 1): changed when written again")
    }
  }

  static func readBack(_ file: [UInt8], _ name: String) -> [CaptureRecord] {
    var records: [CaptureRecord] = []
    do {
      let reader = try CaptureFile.open(InputSource(bytes: file, name: name))
      while let record = try reader.next() { records.append(record) }
    } catch {
      preconditionFailure("\(name) as written does not read back: \(error.message)")
    }
    return records
  }
}

extension FuzzTarget {
  /// The `bugreport` input as the bugreport text read: input starting with a printable byte
  /// (or tab, line feed, carriage return) is the text itself (the section search, base64);
  /// `00` then a btsnooz payload (version, last timestamp, zlib stream), and `01` then the
  /// 9-byte preamble and the records uncompressed (compressed here, so that mutations reach
  /// the records), are each wrapped in a bugreport text as base64 lines of 76; anything else
  /// is skipped (nil).
  package static func bugreportText(_ bytes: [UInt8]) -> [UInt8]? {
    guard let mode = bytes.first else { return nil }
    if (0x20...0x7E).contains(mode) || mode == 0x09 || mode == 0x0A || mode == 0x0D { return Array(bytes) }
    let payload: [UInt8]
    switch mode {
    case 0x00: payload = Array(bytes.dropFirst())
    case 0x01:
      let preamble = bytes.dropFirst().prefix(9)
      payload = Array(preamble) + Deflate.compress(Array(bytes.dropFirst(1 + preamble.count)), wrapper: .zlib)
    default: return nil
    }
    var text = Array("========================================================\n== dumpstate: fuzz\n".utf8)
    text += Array("--- BEGIN:BTSNOOP_LOG_SUMMARY (\(payload.count) bytes in) ---\n".utf8)
    let encoded = base64(payload)
    var at = 0
    while at < encoded.count {
      let end = min(at + 76, encoded.count)
      text += encoded[at..<end]
      text.append(0x0A)
      at = end
    }
    text += Array("--- END:BTSNOOP_LOG_SUMMARY ---\n".utf8)
    return text
  }

  static func base64(_ bytes: [UInt8]) -> [UInt8] {
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    var output: [UInt8] = []
    output.reserveCapacity((bytes.count + 2) / 3 * 4)
    var at = 0
    while at < bytes.count {
      let count = min(3, bytes.count - at)
      var group = UInt32(bytes[at]) << 16
      if count > 1 { group |= UInt32(bytes[at + 1]) << 8 }
      if count > 2 { group |= UInt32(bytes[at + 2]) }
      for index in 0..<4 {
        output.append(index <= count ? alphabet[Int(group >> UInt32(18 - 6 * index) & 0x3F)] : UInt8(ascii: "="))
      }
      at += 3
    }
    return output
  }

  /// The `monitor` input: a start time (16 bytes: seconds and microseconds, each an Int64
  /// little-endian, any values), then datagrams, each a 2-byte little-endian length and that
  /// many bytes (the last takes what remains), stamped 1 ms apart. Each datagram goes through
  /// `MonitorSocketReader.parse` as a received one does: datagrams shorter than the header are
  /// no record; the others become records with the datagram's payload, shown as `live` shows
  /// them, then written as btsnoop (monitor) as `live -w` does and read back unchanged.
  package static func monitor(_ bytes: [UInt8], keepingJSON: Bool = false) -> Outcome {
    guard bytes.count >= 16 else { return Outcome(skipped: true) }
    func le64(_ at: Int) -> Int64 {
      var value: UInt64 = 0
      for index in 0..<8 { value |= UInt64(bytes[at + index]) << (8 * UInt64(index)) }
      return Int64(bitPattern: value)
    }
    let seconds = le64(0)
    var micros = le64(8)
    var outcome = Outcome()
    var session = Session(keepingJSON: keepingJSON)
    var records: [CaptureRecord] = []
    var record = CaptureRecord(timestamp: 0, adapter: 0, direction: nil, kind: .other(0), bytes: [])
    var at = 16
    while at + 2 <= bytes.count, outcome.records < frameLimit {
      let length = min(Int(bytes[at]) | Int(bytes[at + 1]) << 8, bytes.count - at - 2)
      let datagram = Array(bytes[(at + 2)..<(at + 2 + length)])
      at += 2 + length
      let time = timeval(tv_sec: .init(truncatingIfNeeded: seconds), tv_usec: .init(truncatingIfNeeded: micros))
      micros = micros &+ 1000
      let timestamp = MonitorSocketReader.timestamp(time)
      switch MonitorSocketReader.parse(datagram: datagram[...], timestamp: timestamp, into: &record) {
      case .tooShort:
        precondition(datagram.count < 6, "a whole monitor header taken for too short")
        continue
      case .whole, .lengthDisagrees:
        precondition(datagram.count >= 6, "a monitor record from a datagram shorter than its header")
      }
      let opcode = UInt16(datagram[0]) | UInt16(datagram[1]) << 8
      let (kind, direction) = MonitorOpcode.kind(opcode)
      precondition(record.kind == kind && record.direction == direction, "monitor opcode \(opcode) read as another kind")
      precondition(record.adapter == UInt16(datagram[2]) | UInt16(datagram[3]) << 8, "monitor index changed")
      precondition(record.bytes.elementsEqual(datagram.dropFirst(6)) && record.originalLength == datagram.count - 6, "monitor payload changed")
      precondition(record.timestamp == timestamp, "monitor time stamp changed")
      outcome.records += 1
      session.show(record, number: outcome.records)
      records.append(record)
    }
    session.finish(into: &outcome)
    checkMonitorRoundtrip(records)
    return outcome
  }
}
