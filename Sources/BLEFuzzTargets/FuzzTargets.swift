import BLECapture
import BLECore
import BLEDecoder
import BLERender

/// What the fuzz targets run on one input, shared by the libFuzzer binaries (Fuzz/) and the
/// tests that replay the saved crashes (Tests/Fixtures/FuzzRegressions/). Each run checks the
/// pipeline's promises and traps when one is broken, so the fuzzer reports it like a crash.
public enum FuzzTarget: String, CaseIterable, Sendable {
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
  /// Bytes to records, written as btsnoop (Linux monitor) and as pcapng, each read back: the
  /// same records must come back (what each container can carry).
  case roundtrip

  /// What a run saw; the tests assert on it.
  public struct Outcome: Sendable {
    /// Records read (readers) or decoded (packets).
    public var records = 0
    /// The error that ended the read; nil when the capture ended cleanly or the target has none.
    public var error: CaptureError?
    /// Whether the input was skipped (not of the target's format).
    public var skipped = false
    /// Frames rendered, header lines written by the text renderer, lines written as JSON.
    public var frames = 0
    public var textHeaders = 0
    public var jsonLines = 0
    /// Connections open at the end, GATT databases kept.
    public var openConnections = 0
    public var databases = 0
    /// The JSON Lines output, when asked for (tests parse it).
    public var json: [UInt8] = []
  }

  /// Runs the target on `bytes`; traps (precondition) when a promise is broken.
  @discardableResult
  public func run(_ bytes: UnsafeBufferPointer<UInt8>, keepingJSON: Bool = false) -> Outcome {
    switch self {
    case .btsnoop:
      var file = BTSnoopFormat.magic
      file.append(contentsOf: bytes)
      return file.withUnsafeBufferPointer { Self.read($0, render: false, keepingJSON: false) }
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
    }
  }

  public func run(_ bytes: [UInt8], keepingJSON: Bool = false) -> Outcome {
    bytes.withUnsafeBufferPointer { run($0, keepingJSON: keepingJSON) }
  }

  /// Frames read per input at most: a small input cannot hold more, and the cap keeps one run short.
  static let frameLimit = 100_000

  /// Opens `bytes` as a capture and reads every record; with `render`, dissects and renders them.
  static func read(_ bytes: UnsafeBufferPointer<UInt8>, render: Bool, keepingJSON: Bool) -> Outcome {
    var outcome = Outcome()
    let reader: any CaptureReader
    do {
      // As the CLI reads by default: on past damage, so the resynchronization is fuzzed too.
      reader = try CaptureFile.open(InputSource(bytes: bytes, name: "fuzz"), damage: .resynchronize)
    } catch {
      check(error)
      outcome.error = error
      return outcome
    }
    precondition(!reader.format.name.isEmpty && !reader.format.detail.isEmpty, "a reader names its format")
    var session = render ? Session(keepingJSON: keepingJSON) : nil
    var record = CaptureRecord(timestamp: 0, direction: nil, kind: .other(0), bytes: [])
    do {
      while outcome.records < frameLimit, try reader.next(into: &record) {
        outcome.records += 1
        precondition(record.bytes.count <= CaptureFile.maximumPacketLength, "a record longer than any reader accepts")
        precondition(record.fileOffset >= 0 && record.fileOffset < Int64(bytes.count) &+ 8, "a record outside the file")
        session?.show(record, number: outcome.records)
      }
    } catch {
      check(error)
      outcome.error = error
    }
    // Every record takes at least 8 bytes of the file (a pcapng block header is the smallest).
    precondition(outcome.records <= bytes.count / 8 + 1, "\(outcome.records) records from \(bytes.count) bytes")
    session?.finish(into: &outcome)
    return outcome
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
  /// Flag bit 0 puts the record on controller 1 instead of 0. Without a timestamp of their own,
  /// records are 1 ms apart.
  public static func packets(_ bytes: UnsafeBufferPointer<UInt8>, keepingJSON: Bool = false) -> Outcome {
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
      let (kind, direction) = MonitorOpcode.kind(opcode)
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
    var dissector = Dissector()
    var frame = DissectedFrame()
    var text = TextRenderer(verbose: true)
    var json = JSONLinesRenderer()
    var out = OutputBuffer(fd: nil)
    var frames = 0
    var textHeaders = 0
    var jsonLines = 0
    let keepingJSON: Bool
    var kept: [UInt8] = []

    init(keepingJSON: Bool) {
      self.keepingJSON = keepingJSON
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
  static func roundtrip(_ bytes: UnsafeBufferPointer<UInt8>) -> Outcome {
    var outcome = Outcome()
    var records: [CaptureRecord] = []
    do {
      let reader = try CaptureFile.open(InputSource(bytes: bytes, name: "fuzz"))
      while records.count < frameLimit, let record = try reader.next() { records.append(record) }
    } catch {
      outcome.error = error
    }
    outcome.records = records.count
    guard !records.isEmpty else { return outcome }

    // btsnoop with the monitor datalink carries every kind (as its monitor opcode), direction,
    // controller, bytes and timestamp exactly.
    var monitor = CaptureWriter(format: .btsnoopMonitor)
    for record in records { monitor.write(record) }
    precondition(monitor.skipped == 0, "btsnoop (monitor) skipped a record")
    let monitorBack = readBack(monitor.output, "btsnoop (monitor)")
    precondition(monitorBack.count == records.count, "btsnoop (monitor): \(monitorBack.count) of \(records.count) records back")
    for (index, (original, back)) in zip(records, monitorBack).enumerated() {
      let opcode = MonitorOpcode.opcode(for: original.kind, direction: original.direction)!
      let (kind, direction) = MonitorOpcode.kind(opcode)
      precondition(back.kind == kind && back.direction == direction, "btsnoop (monitor) record \(index + 1): kind or direction changed")
      precondition(back.adapter == original.adapter, "btsnoop (monitor) record \(index + 1): controller changed")
      precondition(back.bytes == original.bytes, "btsnoop (monitor) record \(index + 1): bytes changed")
      precondition(back.timestamp == original.timestamp, "btsnoop (monitor) record \(index + 1): timestamp changed")
    }

    // pcapng (link type 201) carries HCI packets with their direction; libpcap splits the 64-bit
    // microseconds into seconds and microseconds, exact for timestamps from 1970 on.
    var pcapng = CaptureWriter(format: .pcapngH4WithDirection)
    let hci = records.filter { $0.kind.isHCIPacket }
    for record in records { pcapng.write(record) }
    precondition(pcapng.skipped == records.count - hci.count, "pcapng skipped an HCI packet")
    let pcapngBack = readBack(pcapng.output, "pcapng")
    precondition(pcapngBack.count == hci.count, "pcapng: \(pcapngBack.count) of \(hci.count) packets back")
    for (index, (original, back)) in zip(hci, pcapngBack).enumerated() {
      precondition(back.kind == original.kind && back.direction == (original.direction ?? .hostToController), "pcapng packet \(index + 1): kind or direction changed")
      precondition(back.bytes == original.bytes, "pcapng packet \(index + 1): bytes changed")
      precondition(original.timestamp < 0 || back.timestamp == original.timestamp, "pcapng packet \(index + 1): timestamp changed")
    }
    return outcome
  }

  static func readBack(_ file: [UInt8], _ name: String) -> [CaptureRecord] {
    var records: [CaptureRecord] = []
    do {
      let reader = try file.withUnsafeBufferPointer { bytes throws(CaptureError) in try CaptureFile.open(InputSource(bytes: bytes, name: name)) }
      while let record = try reader.next() { records.append(record) }
    } catch {
      preconditionFailure("\(name) as written does not read back: \(error.message)")
    }
    return records
  }
}
