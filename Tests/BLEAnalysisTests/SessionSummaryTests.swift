import BLECapture
import BLECore
import BLEDecoder
import BLEEngine
import BLETestSupport
import Foundation
import Testing

@testable import BLEAnalysis

let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

func capturePath(_ name: String) -> String { repositoryRoot.appendingPathComponent("captures/\(name)").path }

/// The summary of a sample capture (or of its first `limit` records).
func summarize(_ name: String, threading: FrameStream.Threading = .two, limit: Int = .max) throws -> SessionSummary {
  try summarize(reader: CaptureFile.open(path: capturePath(name)), threading: threading, limit: limit)
}

func summarize(reader: any CaptureReader, threading: FrameStream.Threading = .two, limit: Int = .max) -> SessionSummary {
  var options = FrameStream.Options()
  options.threading = threading
  options.limit = limit
  var consumer = SummaryConsumer()
  FrameStream(source: reader, options: options).run(into: &consumer)
  return consumer.summary
}

/// A btsnoop file (datalink 1002, H4) from records of (flags, bytes), 1 s apart from 2025.
func btsnoop(_ records: [(flags: UInt32, bytes: [UInt8])], spacing: Int64 = 1_000_000) -> [UInt8] {
  var file: [UInt8] = Array("btsnoop\0".utf8) + [0, 0, 0, 1, 0, 0, 0x03, 0xEA]
  func be32(_ value: UInt32) { for shift in stride(from: 24, through: 0, by: -8) { file.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) } }
  // btsnoop time: µs since year 0 (0x00dcddb30f2f8000 is 1970-01-01).
  var time: Int64 = 0x00DC_DDB3_0F2F_8000 + 1_735_689_600_000_000
  for record in records {
    be32(UInt32(record.bytes.count))
    be32(UInt32(record.bytes.count))
    be32(record.flags)
    be32(0)
    be32(UInt32(truncatingIfNeeded: time >> 32))
    be32(UInt32(truncatingIfNeeded: time))
    file += record.bytes
    time += spacing
  }
  return file
}

func writeTemporary(_ bytes: [UInt8]) -> String {
  let path = NSTemporaryDirectory() + "bledissect-summary-\(UUID().uuidString).btsnoop"
  _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
  return path
}

func btsnoopRecords(_ name: String) throws -> [(flags: UInt32, bytes: [UInt8])] { try BLETestSupport.btsnoopRecords(path: capturePath(name)) }

let strap = BDAddr("D0:B1:ED:00:48:52")!

@Suite struct SessionSummaryTests {
  /// captures/README.md: one connection to the strap as central, MTU 247, 21 HR notifications
  /// (values from Scripts/captures/make_hr_session.py), battery 87 read then 86 notified.
  @Test(arguments: [FrameStream.Threading.one, .two])
  func theStrapSession(threading: FrameStream.Threading) throws {
    let summary = try summarize("hr_strap_session.btsnoop", threading: threading)
    #expect(summary.frames == 160)
    #expect(summary.connections.count == 1)
    let connection = try #require(summary.connections.first)
    #expect(connection.peer == strap && connection.role == .central && connection.handle == 1 && connection.startSeen)
    #expect(connection.startFrame == 39 && connection.endFrame == 160)
    #expect(connection.mtu == 247 && connection.mtuFrame == 42)
    #expect(connection.openingParameters?.intervalMilliseconds == 15)
    #expect(connection.openingParameters?.supervisionTimeoutMilliseconds == 720)
    #expect(connection.updates.map(\.parameters.intervalMilliseconds) == [50, 60])
    #expect(connection.updates.map(\.frame) == [117, 157])
    #expect(connection.parameters == ConnectionParameters(interval: 48, latency: 4, supervisionTimeout: 600))
    #expect(connection.disconnectReason == 0x13 && connection.initiator == .localHost && connection.disconnectRequestReason == 0x13)
    #expect(connection.security.isEmpty)

    // Subscriptions: HRM (CCCD 0x11) and Battery Level (CCCD 0x19), both answered by Write Response.
    #expect(connection.subscriptions.map(\.handle) == [0x11, 0x19])
    #expect(connection.subscriptions.map(\.characteristic) == [BluetoothUUID(uuid16: 0x2A37), BluetoothUUID(uuid16: 0x2A19)])
    #expect(connection.subscriptions.allSatisfy { $0.outcome == .accepted && $0.notifications && !$0.indications })
    #expect(connection.subscriptions.map(\.responseFrame) == [123, 129])

    let hrm = try #require(connection.characteristics.first { $0.handle == 0x10 })
    #expect(hrm.uuid == BluetoothUUID(uuid16: 0x2A37) && hrm.notifications == 21 && hrm.reads == 0)
    let rate = try #require(hrm.rate)
    #expect(abs(rate - 1.0) < 0.01)  // one a second
    #expect(connection.characteristics.first { $0.handle == 0x15 }?.writes == 1)  // control point
    #expect(connection.characteristics.first { $0.handle == 0x18 }.map { [$0.reads, $0.notifications] } == [1, 1])

    // Heart rate, by hand: 72 + 73 + … + 95 = 2372 over 21 measurements.
    let hr = try #require(connection.heartRate)
    #expect(hr.measurements == 21)
    #expect(hr.bpm.minimum == 72 && hr.bpm.maximum == 184)
    #expect(abs(hr.bpm.mean! - 2372.0 / 21) < 1e-9)
    let raw: [Double] = [830, 819, 790, 785, 750, 620, 610, 605, 600, 520, 515, 510, 410, 408, 384, 335, 334, 333, 334, 335, 336, 334,
      333, 332, 341, 340, 342, 341, 340, 339, 341, 342, 361, 362, 512, 647, 650]
    let ms = raw.map { $0 * 1000 / 1024 }
    let mean = ms.reduce(0, +) / Double(ms.count)
    let sdnn = (ms.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(ms.count - 1)).squareRoot()
    let differences = zip(ms.dropFirst(), ms).map { $0 - $1 }
    let rmssd = (differences.map { $0 * $0 }.reduce(0, +) / Double(differences.count)).squareRoot()
    #expect(hr.rr.count == 37)
    #expect(abs(hr.rr.standardDeviation! - sdnn) < 1e-6 && abs(sdnn - 164.28) < 0.01)
    #expect(abs(hr.successive.rmssd! - rmssd) < 1e-6 && abs(rmssd - 46.005) < 0.001)
    // "Not detected" in measurements 1–2, 9, 11–12 and 18–20 (four spans); each span ends at
    // the next measurement.
    #expect(hr.contactNotDetected == 8 && hr.contactLossSpans == 4)
    #expect(hr.contactLoss.map { summary.offset($0.start) / 100_000 } == [3, 83, 103, 173])
    #expect(hr.dropoutCount == 0 && hr.dropouts.isEmpty)
    #expect(hr.energyExpended == 4)

    let battery = try #require(connection.battery)
    #expect(battery.first.percent == 87 && battery.first.frame == 111)
    #expect(battery.last.percent == 86 && battery.last.frame == 150)
    #expect(battery.minimum.percent == 86 && battery.maximum.percent == 87 && battery.readings == 2)

    // The device, from advertising and from reads over GATT.
    #expect(summary.devices.count == 1)
    let device = try #require(summary.devices.first)
    #expect(device.address == strap && device.addressType == .randomDevice)
    #expect(device.advertisedName == "bledissect HR" && device.deviceName == "bledissect HR")
    #expect(device.appearance == 0x0341)  // Heart Rate Sensor: Heart Rate Belt
    #expect(device.manufacturerName == "bledissect labs")
    #expect(device.advertisingReports == 2 && device.strongestRSSI == -50 && device.connectionCount == 1)
    #expect(device.services.map(\.uuid) == [0x1800, 0x1801, 0x180D, 0x180F, 0x180A].map { BluetoothUUID(uuid16: $0) })
    #expect(device.services.first.map { [$0.start, $0.end] } == [1, 5])

    #expect(summary.attempts.count == 1)
    #expect(summary.attempts.first?.frame == 37 && summary.attempts.first?.outcome == .connected(connection: 1))

    // Latency of the 8 reads (Read Request → Read Response).
    let reads = try #require(summary.latencies.first { $0.opcode == 0x0A })
    #expect(reads.sketch.count == 8 && reads.errors == 0)
    #expect(reads.sketch.minimum == 165 && reads.sketch.maximum == 223)
  }

  /// Two straps at once: A = 60…80 bpm, battery 87; B = 140…160 bpm, battery 55.
  @Test func twoStraps() throws {
    let summary = try summarize("two_straps.btsnoop")
    #expect(summary.connections.count == 2)
    let (a, b) = (summary.connections[0], summary.connections[1])
    #expect(a.peer == strap && b.peer == BDAddr("D0:B1:ED:00:48:53"))
    #expect(a.handle == 1 && b.handle == 2)
    #expect(a.heartRate?.measurements == 21 && b.heartRate?.measurements == 21)
    #expect(a.heartRate?.bpm.minimum == 60 && a.heartRate?.bpm.maximum == 80 && a.heartRate?.bpm.mean == 70)
    #expect(b.heartRate?.bpm.minimum == 140 && b.heartRate?.bpm.maximum == 160 && b.heartRate?.bpm.mean == 150)
    #expect(a.heartRate?.rr.count == 0 && a.heartRate?.contactDetected == 21)
    #expect(a.battery?.first.percent == 87 && a.battery?.readings == 1)
    #expect(b.battery?.first.percent == 55)
    #expect(a.mtu == 247 && b.mtu == 247)
    #expect(a.initiator == .localHost && b.initiator == .localHost)
    #expect(a.endFrame! < b.endFrame!)  // A is disconnected first
    #expect(summary.devices.map(\.deviceName) == ["bledissect HR A", "bledissect HR B"])
    #expect(summary.attempts.map(\.outcome) == [.connected(connection: 1), .connected(connection: 2)])
  }

  /// Two connections to one strap; the second subscribes without discovery (handles cached).
  @Test func reconnectionReusesDiscovery() throws {
    let summary = try summarize("reconnect_cached.btsnoop")
    #expect(summary.connections.count == 2)
    #expect(summary.connections.map(\.handle) == [1, 1])
    #expect(summary.connections.map(\.generation) == [1, 2])
    #expect(summary.devices.count == 1 && summary.devices[0].connectionCount == 2)
    let second = summary.connections[1]
    #expect(second.subscriptions.first?.characteristic == BluetoothUUID(uuid16: 0x2A37))
    #expect(second.subscriptions.first?.outcome == .accepted)
    #expect(summary.connections[0].heartRate.map { [$0.bpm.minimum, $0.bpm.maximum] } == [70, 74])
    #expect(second.heartRate.map { [$0.bpm.minimum, $0.bpm.maximum] } == [75, 79])
    #expect(second.battery?.first.percent == 86)
    #expect(summary.connections[0].battery == nil)
  }

  /// EATT: notifications on bearer 0x0041, discovery on 0x0040.
  @Test func eattBearers() throws {
    let summary = try summarize("eatt.btsnoop")
    let connection = try #require(summary.connections.first)
    #expect(connection.eattChannels.sorted() == [0x40, 0x41])
    #expect(connection.mtu == 247)
    #expect(connection.characteristics.first { $0.handle == 0x12 }?.notifications == 5)
    #expect(connection.heartRate.map { [$0.bpm.minimum, $0.bpm.maximum, Double($0.measurements)] } == [100, 104, 5])
  }

  /// Before the connection: an advertiser and no connection; then an attempt still pending.
  @Test func capturesWithoutConnections() throws {
    let scanning = try summarize("hr_strap_session.btsnoop", limit: 36)
    #expect(scanning.connections.isEmpty && scanning.attempts.isEmpty)
    #expect(scanning.devices.count == 1 && scanning.devices[0].advertisingReports == 2 && scanning.devices[0].connectionCount == 0)
    let connecting = try summarize("hr_strap_session.btsnoop", limit: 38)
    #expect(connecting.attempts.map(\.outcome) == [.neverCompleted])
    #expect(connecting.connections.isEmpty)
    // Cut mid-connection: the link is still open at the end.
    let open = try summarize("hr_strap_session.btsnoop", limit: 140)
    #expect(open.connections.count == 1 && open.connections[0].end == nil && open.connections[0].initiator == nil)
    #expect(open.connections[0].heartRate?.measurements == 11)
    #expect(open.connections[0].characteristics.first { $0.handle == 0x10 }?.notifications == 11)
  }

  @Test func emptyCapture() throws {
    let path = writeTemporary(btsnoop([]))
    defer { try? FileManager.default.removeItem(atPath: path) }
    let summary = summarize(reader: try CaptureFile.open(path: path))
    #expect(summary.frames == 0 && summary.firstTimestamp == nil && summary.duration == 0)
    #expect(summary.devices.isEmpty && summary.connections.isEmpty && summary.latencies.isEmpty)
  }

  /// A capture that starts during the connection (records from #120 on): the link is found
  /// from its data, with no peer address, and ends with the local host's Disconnect.
  @Test func captureStartingMidConnection() throws {
    let records = try btsnoopRecords("hr_strap_session.btsnoop")
    let path = writeTemporary(btsnoop(Array(records[119...])))
    defer { try? FileManager.default.removeItem(atPath: path) }
    let summary = summarize(reader: try CaptureFile.open(path: path))
    #expect(summary.connections.count == 1)
    let connection = try #require(summary.connections.first)
    #expect(!connection.startSeen && connection.openingParameters == nil)
    #expect(connection.initiator == .localHost && connection.disconnectReason == 0x13)
    #expect(connection.updates.count == 1)
    #expect(connection.characteristics.first { $0.handle == 0x10 }?.notifications == 21)
    // Without the discovery, the handle's values are known to be heart rates only once three
    // plausible ones in a row were seen (HandleGuesses); the stream holds the first two back
    // until then and labels them in hindsight, so all 21 count.
    let heartRate = try #require(connection.heartRate)
    #expect(heartRate.measurements == 21)
  }

  /// Thousands of connections to thousands of devices: every table stays at its limit and
  /// the rest is counted.
  @Test func hostileManyConnectionsStayBounded() throws {
    var records: [(flags: UInt32, bytes: [UInt8])] = []
    let total = 3000
    for index in 0..<total {
      let handle = UInt16(index % 0x0EFF)
      let address = (0..<6).map { UInt8(truncatingIfNeeded: (index + 1) >> ($0 * 8)) }
      // LE Connection Complete (success, central, random peer), then Disconnection Complete 0x08.
      records.append((3, [0x04, 0x3E, 0x13, 0x01, 0x00, UInt8(handle & 0xFF), UInt8(handle >> 8), 0x00, 0x01] + address + [0x0C, 0x00, 0x00, 0x00, 0x48, 0x00, 0x00]))
      records.append((3, [0x04, 0x05, 0x04, 0x00, UInt8(handle & 0xFF), UInt8(handle >> 8), 0x08]))
    }
    let path = writeTemporary(btsnoop(records, spacing: 1000))
    defer { try? FileManager.default.removeItem(atPath: path) }
    let summary = summarize(reader: try CaptureFile.open(path: path))
    #expect(summary.connections.count == SessionSummary.Limits.connections)
    #expect(summary.connectionsNotListed == total - SessionSummary.Limits.connections)
    #expect(summary.devices.count == SessionSummary.Limits.devices)
    #expect(summary.untrackedDeviceReports == total - SessionSummary.Limits.devices)
    // No HCI command in the capture, but 0x08 says the link was lost, not who ended it.
    #expect(summary.connections.allSatisfy { $0.initiator == .linkLost && $0.disconnectReason == 0x08 })
  }

  /// Who ended a link, from the reason and whether the host asked.
  @Test func disconnectInitiator() {
    var analyzer = SessionAnalyzer()
    #expect(analyzer.initiator(reason: 0x13, requested: false) == .unknown)  // no commands seen
    analyzer.summary.sawCommands = true
    #expect(analyzer.initiator(reason: 0x13, requested: false) == .peer)
    #expect(analyzer.initiator(reason: 0x13, requested: true) == .localHost)
    #expect(analyzer.initiator(reason: 0x16, requested: false) == .localHost)
    #expect(analyzer.initiator(reason: 0x08, requested: false) == .linkLost)
  }

  /// Pairing methods (Core Vol 3 Part H tables 2.7 and 2.8).
  @Test func pairingMethods() {
    typealias Features = (io: UInt8, oob: UInt8, auth: UInt8)
    func method(_ a: Features, _ b: Features) -> SecuritySummary.Method {
      SessionAnalyzer.pairingMethod(initiator: a, responder: b, secure: a.auth & 0x08 != 0 && b.auth & 0x08 != 0)
    }
    // No MITM on either side: Just Works whatever the IO.
    #expect(method((4, 0, 0x09), (4, 0, 0x09)) == .justWorks)
    // DisplayYesNo both, SC + MITM: numeric comparison; legacy: Just Works.
    #expect(method((1, 0, 0x0D), (1, 0, 0x0D)) == .numericComparison)
    #expect(method((1, 0, 0x05), (1, 0, 0x05)) == .justWorks)
    // KeyboardOnly against DisplayOnly with MITM: passkey.
    #expect(method((2, 0, 0x05), (0, 0, 0x05)) == .passkeyEntry)
    // NoInputNoOutput on one side: Just Works.
    #expect(method((4, 0, 0x0D), (3, 0, 0x0D)) == .justWorks)
    // OOB: one side suffices under SC, both are needed in legacy pairing.
    #expect(method((0, 1, 0x0D), (0, 0, 0x0D)) == .outOfBand)
    #expect(method((0, 1, 0x05), (0, 0, 0x05)) == .justWorks)
  }

  /// Doubtful values are counted by flag, and those with a doubtful rate (out of range, or RR
  /// intervals that disagree) are left out of minimum, mean and maximum.
  @Test func flaggedHeartRatesStayOutOfTheRate() throws {
    var analyzer = SessionAnalyzer()
    let index = analyzer.openLink(adapter: 0, handle: 1, generation: 1, peer: strap, peerType: .randomDevice, role: .central,
      parameters: nil, startSeen: true, frame: 1, time: 0)
    var time: Int64 = 0
    // 256 and 300 bpm, as a misreporting strap sent them; 120 bpm with RR of 1 s; 72 bpm without contact.
    let values: [(bpm: UInt16, flags: UInt8, rr: [UInt16])] = [
      (70, 0x16, [878]), (300, 0x06, []), (72, 0x06, []), (256, 0x06, []), (120, 0x16, [1024]), (74, 0x06, []), (72, 0x04, []),
    ]
    for value in values {
      time += 1_000_000
      analyzer.heartRate(HeartRateMeasurement(flags: value.flags, bpm: value.bpm, energyExpended: nil, rrIntervals: value.rr), index: index, time: time)
    }
    let hr = try #require(analyzer.summary.connections[index].heartRate)
    #expect(hr.measurements == 7)
    #expect(hr.leftOutOfRate == 3)
    #expect(hr.bpm.minimum == 70 && hr.bpm.maximum == 74 && hr.bpm.count == 4)
    #expect(abs(hr.bpm.mean! - 72) < 1e-9)
    let counts = Dictionary(uniqueKeysWithValues: zip(HeartRateFlags.all.map(\.word), hr.flagCounts))
    #expect(counts == ["bpm_out_of_range": 2, "rr_out_of_range": 0, "rr_inconsistent": 1, "energy_backwards": 0, "no_contact": 1])
  }

  /// Dropouts: silences longer than max(2 s, 3 × the median interval); RR runs break there.
  @Test func heartRateDropouts() {
    var analyzer = SessionAnalyzer()
    let index = analyzer.openLink(adapter: 0, handle: 1, generation: 1, peer: strap, peerType: .randomDevice, role: .central,
      parameters: nil, startSeen: true, frame: 1, time: 0)
    var time: Int64 = 0
    func beat(_ bpm: UInt16, after micros: Int64, rr: [UInt16] = [1024]) {
      time += micros
      analyzer.heartRate(HeartRateMeasurement(flags: 0x16, bpm: bpm, energyExpended: nil, rrIntervals: rr), index: index, time: time)
    }
    for _ in 0..<10 { beat(60, after: 1_000_000) }
    beat(60, after: 2_500_000)  // under 3 × 1 s: a late beat, not a dropout
    beat(60, after: 5_000_000)  // a dropout
    for _ in 0..<5 { beat(60, after: 1_000_000, rr: [1024, 1124]) }
    let hr = analyzer.summary.connections[index].heartRate!
    #expect(hr.measurements == 17)
    #expect(hr.dropoutCount == 1)
    #expect(hr.dropouts == [ClosedTimeSpan(start: 12_500_000, end: 17_500_000)])
    // RMSSD: runs of 1000 ms (no differences) broken at both long silences; then alternating
    // 1000 / 1097.66 ms: differences of ±97.66 ms.
    let step = 100.0 * 1000 / 1024
    #expect(abs(hr.successive.rmssd! - (Double(9) * step * step / Double(10 + 9)).squareRoot()) < 1e-9)
    #expect(hr.intervals.quantile(0.5).map { abs($0 - 1000) < 10 } == true)
  }

  /// Notifications that stop while the link stays up: the silence to the end is a gap.
  @Test func silenceUntilTheEnd() throws {
    var analyzer = SessionAnalyzer()
    let index = analyzer.openLink(adapter: 0, handle: 1, generation: 1, peer: nil, peerType: nil, role: .central,
      parameters: nil, startSeen: true, frame: 1, time: 0)
    let found = analyzer.activity(0x10, servedLocally: false, index: index)
    let activity = try #require(found)
    for second in 1...5 { analyzer.pushed(activity, indication: false, index: index, frame: second + 1, time: Int64(second) * 1_000_000) }
    analyzer.settleActivities(index, at: 65_000_000)
    let gaps = analyzer.summary.connections[index].characteristics[activity].longestGaps
    #expect(gaps.first == Gap(start: 5_000_000, microseconds: 60_000_000, untilEnd: true))
    #expect(gaps.count == SessionSummary.Limits.gaps)
  }
}

extension SessionSummaryTests {
  /// The strap's L2CAP Connection Parameter Update Request is a link event of its own, with
  /// the values it asked (captures/README.md: hr_strap_session holds one, from the strap).
  @Test func parameterRequestsAreFacts() throws {
    let reader = try CaptureFile.open(path: capturePath("hr_strap_session.btsnoop"))
    var dissector = Dissector()
    var frame = DissectedFrame()
    var requests: [LinkEvent] = []
    var number = 0
    while let record = try reader.next() {
      number += 1
      dissector.dissect(record, number: number, into: &frame)
      for event in frame.linkEvents { if case .parametersRequested = event { requests.append(event) } }
    }
    #expect(requests.count == 1)
    guard case .parametersRequested(_, let minimum, let maximum, let latency, let timeout)? = requests.first else { return }
    // Read from the raw record: the L2CAP signaling PDU's parameters, little-endian.
    let records = try btsnoopRecords("hr_strap_session.btsnoop")
    let raw = try #require(records.first { $0.bytes.count >= 21 && $0.bytes[0] == 0x02 && $0.bytes[7] == 0x05 && $0.bytes[9] == 0x12 }?.bytes)
    func le(_ at: Int) -> UInt16 { UInt16(raw[at]) | UInt16(raw[at + 1]) << 8 }
    #expect([minimum, maximum, latency, timeout] == [le(13), le(15), le(17), le(19)])
  }
}
