import Foundation
import Testing
import BLECapture
import BLECore
import BLEFuzzTargets
import BLETestSupport

/// The fuzz targets' entry points (what Scripts/fuzz runs under libFuzzer), on the inputs the
/// fuzzers once crashed on (Tests/Fixtures/FuzzRegressions/TARGET/) and on the sample captures.
@Suite struct FuzzRegressionTests {
  static let regressionRoot = repositoryRoot.appendingPathComponent("Tests/Fixtures/FuzzRegressions")

  /// Every saved input, as "target/file".
  static let regressions: [String] = FuzzTarget.allCases.flatMap { target -> [String] in
    let folder = regressionRoot.appendingPathComponent(target.rawValue)
    let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
    return names.filter { !$0.hasPrefix(".") }.sorted().map { "\(target.rawValue)/\($0)" }
  }

  @Test func everyRegressionFolderNamesATarget() throws {
    let folders = try FileManager.default.contentsOfDirectory(atPath: Self.regressionRoot.path).filter { !$0.hasPrefix(".") && $0 != "README.md" }
    for folder in folders { #expect(FuzzTarget(rawValue: folder) != nil, "\(folder) is no fuzz target") }
  }

  /// Replays one saved input: the target must not trap (a trap ends the test run), and what
  /// it read must be consistent.
  @Test(arguments: regressions)
  func savedInputReplays(_ name: String) throws {
    let target = try #require(FuzzTarget(rawValue: String(name.prefix { $0 != "/" })))
    let bytes = try [UInt8](Data(contentsOf: Self.regressionRoot.appendingPathComponent(name)))
    let outcome = target.run(bytes, keepingJSON: true)
    try Self.checkConsistent(outcome, target: target, bytes: bytes, name: name)
  }

  /// The same checks on the sample captures, where the figures are known (captures/README.md).
  @Test func sampleCapturesThroughEveryTarget() throws {
    let session = try [UInt8](Data(contentsOf: URL(fileURLWithPath: capturePath("hr_strap_session.btsnoop"))))
    let pklg = try [UInt8](Data(contentsOf: URL(fileURLWithPath: capturePath("hr_strap_session.pklg"))))
    let pcapng = try [UInt8](Data(contentsOf: URL(fileURLWithPath: capturePath("hr_strap_session.pcapng"))))
    let cases: [(FuzzTarget, [UInt8])] = [
      (.btsnoop, Array(session.dropFirst(8))), (.detect, session), (.pipeline, session),
      (.packetlogger, pklg), (.detect, pklg), (.pipeline, pklg),
      (.pcap, pcapng), (.detect, pcapng), (.pipeline, pcapng),
      (.roundtrip, session), (.roundtrip, pklg), (.roundtrip, pcapng),
    ]
    for (target, bytes) in cases {
      let outcome = target.run(bytes, keepingJSON: true)
      #expect(outcome.records == 160, "\(target)")
      #expect(outcome.error == nil, "\(target): \(outcome.error?.message ?? "")")
      #expect(!outcome.skipped, "\(target)")
      try Self.checkConsistent(outcome, target: target, bytes: bytes, name: "\(target)")
      if target == .pipeline {
        #expect(outcome.frames == 160 && outcome.jsonLines == 160 && outcome.textHeaders == 160)
        // The phone's one connection, closed by the disconnect at the end; one GATT server.
        #expect(outcome.openConnections == 0)
        #expect(outcome.databases == 1)
      }
    }
    // The container targets and the monitor target on the same session.
    let records = try Self.records(session)
    let archive = ZipArchive.archive([
      (name: "bugreport-x.txt", bytes: Array("no summary\n".utf8), deflate: true),
      (name: "FS/data/misc/bluetooth/logs/btsnoop_hci.log", bytes: session, deflate: true),
    ])
    var monitor: [UInt8] = [0x00, 0xF1, 0x53, 0x65, 0, 0, 0, 0] + [UInt8](repeating: 0, count: 8)
    for record in records {
      let opcode = try #require(MonitorOpcode.opcode(for: record.kind, direction: record.direction))
      let datagram = [UInt8(opcode & 0xFF), UInt8(opcode >> 8), 0, 0, UInt8(record.bytes.count & 0xFF), UInt8(record.bytes.count >> 8)] + record.bytes
      monitor += [UInt8(datagram.count & 0xFF), UInt8(datagram.count >> 8)] + datagram
    }
    let containers: [(FuzzTarget, [UInt8])] = [
      (.gzip, Array(Deflate.compress(session, wrapper: .gzip).dropFirst(2))),
      (.bugreport, [0x00] + Self.btsnooz(records)),
      (.bugreport, try #require(FuzzTarget.bugreportText([0x00] + Self.btsnooz(records)))),
      (.zip, archive), (.detect, archive), (.pipeline, archive),
      (.monitor, monitor),
    ]
    for (target, bytes) in containers {
      let outcome = target.run(bytes, keepingJSON: true)
      #expect(outcome.records == 160, "\(target)")
      #expect(outcome.error == nil, "\(target): \(outcome.error?.message ?? "")")
      #expect(!outcome.skipped, "\(target)")
      try Self.checkConsistent(outcome, target: target, bytes: bytes, name: "\(target)")
      if target == .monitor || target == .pipeline {
        #expect(outcome.frames == 160 && outcome.jsonLines == 160 && outcome.openConnections == 0 && outcome.databases == 1)
      }
    }
    #expect(FuzzTarget.zip.run(session).skipped)
    #expect(FuzzTarget.bugreport.run([0x02, 0x01]).skipped)
    #expect(FuzzTarget.monitor.run([UInt8](repeating: 0, count: 15)).skipped)
    // Each reader's target takes only its own format.
    #expect(FuzzTarget.pcap.run(session).skipped)
    #expect(FuzzTarget.packetlogger.run(session).skipped)
    #expect(FuzzTarget.packetlogger.run(pcapng).skipped)
  }

  static func records(_ file: [UInt8]) throws -> [CaptureRecord] {
    let reader = try CaptureFile.open(InputSource(bytes: file, name: "records"))
    var records: [CaptureRecord] = []
    while let record = try reader.next() { records.append(record) }
    return records
  }

  /// A btsnooz v2 payload of `records` (capture-formats.md §5.3).
  static func btsnooz(_ records: [CaptureRecord]) -> [UInt8] {
    var body: [UInt8] = []
    var previous = records.first?.timestamp ?? 0
    for record in records {
      let received = record.direction == .controllerToHost
      let type: UInt8
      switch record.kind {
      case .command: type = 0x20
      case .event: type = 0x10
      default: type = received ? 0x11 : 0x21
      }
      let length = record.bytes.count + 1
      let delta = UInt32(record.timestamp - previous)
      previous = record.timestamp
      body += [UInt8(length & 0xFF), UInt8(length >> 8), UInt8(length & 0xFF), UInt8(length >> 8)]
      body += [UInt8(delta & 0xFF), UInt8(delta >> 8 & 0xFF), UInt8(delta >> 16 & 0xFF), UInt8(delta >> 24), type] + record.bytes
    }
    let last = UInt64(records.last?.timestamp ?? 0)
    return [2] + (0..<8).map { UInt8(truncatingIfNeeded: last >> UInt64($0 * 8)) } + Deflate.compress(body, wrapper: .zlib)
  }

  /// The `packets` input format: monitor opcode, flags, length, optional timestamp, bytes.
  @Test func packetsInputFormat() throws {
    // LE Connection Complete (handle 0x0040), then an ATT notification on it with its own
    // timestamp, then a command cut short by the end of the input.
    let connect: [UInt8] = [0x3E, 0x13, 0x01, 0x00, 0x40, 0x00, 0x00, 0x01, 0x52, 0x48, 0x00, 0xED, 0xB1, 0xD0, 0x18, 0x00, 0x00, 0x00, 0x48, 0x00, 0x00]
    let notify: [UInt8] = [0x40, 0x20, 0x09, 0x00, 0x05, 0x00, 0x04, 0x00, 0x1B, 0x10, 0x00, 0x06, 0x48]
    var input: [UInt8] = [3, 0, UInt8(connect.count), 0] + connect
    input += [5, 2, UInt8(notify.count), 0] + [0x40, 0x42, 0x0F, 0, 0, 0, 0, 0] + notify
    input += [2, 1, 0x10, 0x00, 0x03, 0x0C]
    let outcome = FuzzTarget.packets.run(input, keepingJSON: true)
    #expect(outcome.records == 3 && outcome.frames == 3 && outcome.jsonLines == 3)
    let lines = try Self.jsonObjects(outcome.json)
    #expect(lines.map { $0["type"] as? String } == ["event", "acl", "command"])
    #expect(lines.map { $0["dir"] as? String } == ["rx", "rx", "tx"])
    #expect(lines[1]["ts"] as? Double == 1.0)
    #expect(lines[2]["index"] as? Int == 1)
    #expect(lines[2]["len"] as? Int == 2)
    let att = try #require(lines[1]["att"] as? [String: Any])
    #expect(att["handle"] as? Int == 0x10)
    #expect(outcome.openConnections == 1)
  }

  /// What every run must satisfy: records became frames and JSON lines one to one, every line
  /// is one valid JSON object numbered in order, an error has a message, and a reader reads
  /// the same from memory as from a file.
  /// The air-sniffer samples (every air link type) and the corpus's sniffer captures through the
  /// reading targets: `roundtrip` writes them back in their own link type.
  @Test func airCapturesThroughTheReadingTargets() throws {
    var files = ["air_ll.pcap", "air_ll_phdr.pcapng", "air_nordic.pcap", "air_nordic_v2.pcapng", "air_user10.pcap", "air_ppi.pcap"].map { capturePath($0) }
    if let corpus = corpusRoot?.appendingPathComponent("ll_sniffer").path {
      files += ((try? FileManager.default.contentsOfDirectory(atPath: corpus)) ?? []).sorted().map { corpus + "/" + $0 }
    }
    for path in files {
      let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
      let expected = path.hasPrefix(capturePath("air_")) ? 16 : nil
      for target in [FuzzTarget.pcap, .detect, .roundtrip, .pipeline] {
        let outcome = target.run(bytes, keepingJSON: true)
        #expect(outcome.error == nil && !outcome.skipped && outcome.records > 0, "\(target) \(path)")
        if let expected { #expect(outcome.records == expected, "\(target) \(path)") }
        try Self.checkConsistent(outcome, target: target, bytes: bytes, name: "\(target) \(path)")
      }
    }
  }

  static func checkConsistent(_ outcome: FuzzTarget.Outcome, target: FuzzTarget, bytes: [UInt8], name: String) throws {
    if let error = outcome.error { #expect(!error.message.isEmpty, "\(name)") }
    switch target {
    case .pipeline, .packets, .monitor, .gattmap, .bluez, .decoders, .keys:
      #expect(outcome.frames == outcome.records, "\(name)")
      #expect(outcome.textHeaders == outcome.frames && outcome.jsonLines == outcome.frames, "\(name)")
      #expect(outcome.openConnections <= outcome.frames, "\(name)")
      let lines = try jsonObjects(outcome.json)
      #expect(lines.count == outcome.frames, "\(name)")
      #expect(lines.enumerated().allSatisfy { $0.element["frame"] as? Int == $0.offset + 1 }, "\(name): frames numbered in order")
      #expect(outcome.json.split(separator: 0x0A).allSatisfy { JSONKeyChecker.check(Substring(decoding: $0, as: UTF8.self)) == nil }, "\(name): no duplicate keys")
    case .btsnoop, .packetlogger, .pcap, .detect, .roundtrip, .gzip, .bugreport, .zip:
      #expect(outcome.frames == 0, "\(name): readers render nothing")
    case .diff, .check, .redact:
      #expect(outcome.frames == outcome.records, "\(name)")
    }
    // What the reader targets read, as a file: the gzip target's input lacks its magic, the
    // bugreport target's is wrapped in a text.
    var file: [UInt8]? = nil
    switch target {
    case .pipeline, .detect, .roundtrip, .diff, .check, .redact: file = bytes
    case .pcap, .packetlogger, .zip: file = outcome.skipped ? nil : bytes
    case .gzip: file = [0x1F, 0x8B] + bytes
    case .bugreport: file = FuzzTarget.bugreportText(bytes)
    case .btsnoop, .packets, .monitor, .gattmap, .bluez, .decoders, .keys: file = nil
    }
    if let file {
      let fromFile = try readThroughFile(file, damage: target == .roundtrip ? .stop : .resynchronize)
      #expect(fromFile.records == outcome.records, "\(name): \(fromFile.records) records from a file, \(outcome.records) from memory")
      #expect(fromFile.error == outcome.error, "\(name): \(fromFile.error?.message ?? "no error") from a file")
    }
  }

  /// Reads `bytes` the way the CLI does: from a file, through a descriptor.
  static func readThroughFile(_ bytes: [UInt8], damage: DamagePolicy) throws -> (records: Int, error: CaptureError?) {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("fuzz-replay-\(UUID().uuidString)").path
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    defer { try? FileManager.default.removeItem(atPath: path) }
    var records = 0
    do {
      let reader = try CaptureFile.open(path: path, damage: damage)
      while try reader.next() != nil { records += 1 }
      return (records, nil)
    } catch {
      return (records, error)
    }
  }

  static func jsonObjects(_ json: [UInt8]) throws -> [[String: Any]] {
    try json.split(separator: 0x0A).enumerated().map { index, line in
      try #require(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any], "JSON line \(index + 1)")
    }
  }
}
