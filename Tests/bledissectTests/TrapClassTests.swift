import Foundation
import Testing
import BLECapture
import BLECore
import BLEDecoder
import BLERender
@testable import bledissect

/// One test per class of trap found in issue 7: each builds the one-record (or two-record)
/// capture that used to stop the process with SIGILL, and checks what is shown instead.
@Suite struct TrapClassTests {
  /// LE Connection Complete on handle 0x0040 with peer D0:B1:ED:00:48:52.
  static let connect: [UInt8] = [0x3E, 0x13, 0x01, 0x00, 0x40, 0x00, 0x00, 0x01, 0x52, 0x48, 0x00, 0xED, 0xB1, 0xD0, 0x18, 0x00, 0x00, 0x00, 0x2A, 0x00, 0x00]
  /// ATT Read Request for handle 0x0003 (host to controller) and its Read Response "hi".
  static let readRequest: [UInt8] = [0x40, 0x00, 0x07, 0x00, 0x03, 0x00, 0x04, 0x00, 0x0A, 0x03, 0x00]
  static let readResponse: [UInt8] = [0x40, 0x20, 0x07, 0x00, 0x03, 0x00, 0x04, 0x00, 0x0B, 0x68, 0x69]

  static func file(_ format: CaptureWriteFormat, _ records: [CaptureRecord]) -> String {
    var writer = CaptureWriter(format: format)
    for record in records { writer.write(record) }
    return temporaryFile(writer.output)
  }

  /// A btsnoop timestamp field of 0 and one of 0xFFFF…: microseconds near Int64's two ends once
  /// the btsnoop epoch (year 0) is taken off.
  static let extremeTimes: [Int64] = [Int64.min + 1, Int64.max - 1]

  @Test func attLatencyAcrossTimestampsAtInt64LimitsIsADiagnostic() throws {
    let records = [
      CaptureRecord(timestamp: 0, direction: .controllerToHost, kind: .event, bytes: Self.connect),
      CaptureRecord(timestamp: Self.extremeTimes[1], direction: .hostToController, kind: .acl, bytes: Self.readRequest),
      CaptureRecord(timestamp: Self.extremeTimes[0], direction: .controllerToHost, kind: .acl, bytes: Self.readResponse),
      CaptureRecord(timestamp: Self.extremeTimes[0], direction: .hostToController, kind: .acl, bytes: Self.readRequest),
      CaptureRecord(timestamp: Self.extremeTimes[1], direction: .controllerToHost, kind: .acl, bytes: Self.readResponse),
    ]
    let path = Self.file(.btsnoopH4, records)
    defer { unlink(path) }
    let result = runCLI(["--json", path])
    #expect(result.status == 0, "\(result.stderr)")
    let lines = result.stdout.split(separator: "\n").map { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    #expect(lines.count == 5)
    // Backwards: no latency, a warning instead.
    let backwards = try #require(lines[2])
    #expect((backwards["att"] as? [String: Any])?["latency_ms"] == nil)
    #expect("\(backwards["diagnostics"] ?? "")".contains("timestamp precedes that of frame #2"))
    // Forwards across the whole range: the difference saturates at Int64.max µs.
    let forwards = try #require(lines[4])
    let latency = try #require((forwards["att"] as? [String: Any])?["latency_ms"] as? Double)
    #expect(latency == Double(Int64.max) / 1000)
    // Text renders the same huge latency without trapping.
    let text = runCLI([path])
    #expect(text.status == 0)
    #expect(text.stdout.contains("Latency: 9.223372036854776e+15 ms"), "\(text.stdout)")
  }

  @Test func infoDurationAcrossInt64LimitsSaturates() {
    let records = Self.extremeTimes.map { CaptureRecord(timestamp: $0, direction: .controllerToHost, kind: .event, bytes: [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00]) }
    let path = Self.file(.btsnoopH4, records)
    defer { unlink(path) }
    let result = runCLI(["info", path])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout.contains("frames:   2"))
    #expect(result.stdout.contains("duration: 9223372036854.775807 s"), "\(result.stdout)")
  }

  /// pcapng with if_tsresol 10^0 (seconds) and a 64-bit timestamp of 2^63 - 1 seconds: libpcap
  /// hands over seconds that do not fit in microseconds.
  @Test func pcapngTimestampBeyondMicrosecondRangeClamps() throws {
    var bytes: [UInt8] = []
    func le32(_ value: UInt32) { bytes += withUnsafeBytes(of: value.littleEndian, Array.init) }
    func le16(_ value: UInt16) { bytes += withUnsafeBytes(of: value.littleEndian, Array.init) }
    // Section Header Block.
    le32(0x0A0D_0D0A); le32(28); le32(0x1A2B_3C4D); le16(1); le16(0); le32(0xFFFF_FFFF); le32(0xFFFF_FFFF); le32(28)
    // Interface Description Block: link type 201, snaplen 0, option if_tsresol (9) = 0, end.
    le32(1); le32(32); le16(201); le16(0); le32(0)
    le16(9); le16(1); bytes += [0, 0, 0, 0]; le16(0); le16(0)
    le32(32)
    // Enhanced Packet Block: direction 1 (received), H4 event: Command Complete for HCI Reset.
    let packet: [UInt8] = [0, 0, 0, 1, 0x04, 0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00]
    let padded = (packet.count + 3) & ~3
    le32(6); le32(UInt32(32 + padded)); le32(0); le32(0x7FFF_FFFF); le32(0xFFFF_FFFF)
    le32(UInt32(packet.count)); le32(UInt32(packet.count))
    bytes += packet + [UInt8](repeating: 0, count: padded - packet.count)
    le32(UInt32(32 + padded))
    let path = temporaryFile(bytes)
    defer { unlink(path) }
    let result = runCLI(["--json", path])
    #expect(result.status == 0, "\(result.stderr)")
    let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    #expect(object["name"] as? String == "Command Complete")
    // 2^63 - 1 seconds is far beyond 2^63 - 1 µs: the time saturates there.
    #expect(result.stdout.contains(#""ts":9223372036854.775807,"#), "\(result.stdout)")
    #expect(runCLI(["--time", "abs", path]).status == 0)
    #expect(runCLI(["info", path]).status == 0)
  }

  @Test func hugeRealsRenderInExponentForm() {
    let cases: [(Double, UInt8, String)] = [
      (9.3e15, 2, "9300000000000000"),  // fits: printed whole
      (9.3e15, 3, "9.3e+15"),  // 9.3e18 thousandths do not fit in 63 bits
      (1e20, 2, "1e+20"),
      (-1e20, 0, "-1e+20"),
      (Double.nan, 2, "nan"),
      (Double.infinity, 1, "inf"),
      (812.5, 2, "812.5"),
      (-0.004, 2, "0"),
    ]
    for (value, places, expected) in cases {
      var out = OutputBuffer(fd: nil)
      out.real(value, places: places)
      #expect(out.text == expected, "\(value)")
      #expect(SummaryPart.formatReal(value, places: places) == expected, "\(value)")
    }
    var out = OutputBuffer(fd: nil)
    out.fixed2(1e300)
    out.byte(0x20)
    out.fixed2(-2.5)
    #expect(out.text == "1e+300 -2.50")
  }

  /// Temperature Measurement with an IEEE-11073 FLOAT of 1 × 10^20 °C, decoded and rendered.
  @Test func temperatureOfTenToTheTwentyRenders() throws {
    guard let decoder = ProfileRegistry.decoder(for: BluetoothUUID(uuid16: 0x2A1C)) else {
      Issue.record("no Temperature Measurement decoder")
      return
    }
    var frame = DissectedFrame()
    let context = ValueContext(operation: .indication, uuid: BluetoothUUID(uuid16: 0x2A1C))
    let decoded = decoder.decode([0x00, 0x01, 0x00, 0x00, 0x14])
    let value = try #require(decoded.value)
    #expect(decoded.error == nil)
    value.writeFields(to: &frame.fields, context: context)
    var line = SummaryLine()
    value.summarize(into: &line, context: context)
    #expect(line.text.contains("1e+20"), "\(line.text)")
    var out = OutputBuffer(fd: nil)
    var text = TextRenderer(verbose: true)
    text.render(&frame, to: &out)
    #expect(out.text.contains("1e+20"), "\(out.text)")
  }

  /// A record that claims 0xFFFFFFFF bytes on the wire, written to every format `convert` writes.
  @Test(arguments: [CaptureWriteFormat.btsnoopH4, .btsnoopH1, .btsnoopMonitor, .pcapH4WithDirection, .pcapH4, .pcapMonitor, .pcapngH4WithDirection, .packetLogger(bigEndian: false)])
  func writersClampOriginalLengths(format: CaptureWriteFormat) throws {
    let record = CaptureRecord(timestamp: 1_000_000, direction: .controllerToHost, kind: .event, bytes: [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00], originalLength: 0xFFFF_FFFF)
    var writer = CaptureWriter(format: format)
    writer.write(record)
    let path = temporaryFile(writer.output)
    defer { unlink(path) }
    let reader = try CaptureFile.open(path: path)
    let back = try #require(try reader.next())
    #expect(back.bytes == record.bytes)
    #expect(back.timestamp == record.timestamp)
    #expect(try reader.next() == nil)
  }
}

@Suite struct ExtremeDateTests {
  /// btsnoop's epoch (a raw timestamp of 0) is 1 BC in the proleptic Gregorian calendar; Int64's
  /// ends are hundreds of thousands of years away. All print as ISO 8601 dates, none traps.
  @Test func datesFarFromNowPrintAsISO8601() {
    let cases: [(Int64, String)] = [
      (0, "1970-01-01 00:00:00.000000"),
      (-1, "1969-12-31 23:59:59.999999"),
      (-BTSnoopFormat.unixEpochOffset, "-0001-12-20 00:00:00.000000"),
      (-62_135_596_800_000_000, "0001-01-01 00:00:00.000000"),
      (253_402_300_800_000_000, "10000-01-01 00:00:00.000000"),
      (Int64.max, "294247-01-10 04:00:54.775807"),
      (Int64.min, "-290308-12-21 19:59:05.224192"),
    ]
    for (micros, expected) in cases {
      var out = OutputBuffer(fd: nil)
      out.utcDateTime(micros)
      #expect(out.text == expected, "\(micros)")
    }
  }
}
