#if canImport(Glibc)
import Glibc
#endif
import BLECapture
import BLECore
import BLEDecoder
import Foundation
import Testing

import BLETestSupport
@testable import bledissect

/// The stand-in, built once with the toolchain's C compiler; nil where there is none.
let monitorStandIn: String? = {
  #if os(Linux)
  let source = repositoryRoot.appendingPathComponent("Tests/Support/monitor_standin.c").path
  let library = NSTemporaryDirectory() + "bledissect-standin-\(getpid()).so"
  for compiler in ["clang", "cc", "gcc"] {
    guard let path = which(compiler) else { continue }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = ["-shared", "-fPIC", "-o", library, source, "-ldl", "-lpthread"]
    guard (try? process.run()) != nil else { continue }
    process.waitUntilExit()
    if process.terminationStatus == 0 { return library }
  }
  #endif
  return nil
}()

/// `bledissect live` on the Linux monitor channel, end to end through `socket()` itself: the
/// kernel here has no Bluetooth, so an LD_PRELOAD stand-in (Tests/Support/monitor_standin.c,
/// built by this test) answers socket/bind and replays a capture as monitor messages.
@Suite(.serialized, .enabled(if: monitorStandIn != nil, "no C compiler to build Tests/Support/monitor_standin.c, or not Linux"))
struct MonitorLiveTests {
  static func run(_ arguments: [String], environment extra: [String: String], interruptAfter: Double? = nil) throws -> (status: Int32, stdout: String, stderr: String) {
    let binary = try #require(binaryPath())
    let process = Process()
    var environment = hermeticEnvironment
    for (key, value) in extra { environment[key] = value }
    process.environment = environment
    process.executableURL = URL(fileURLWithPath: binary)
    process.arguments = arguments
    let output = Pipe(), errors = Pipe()
    process.standardOutput = output
    process.standardError = errors
    try process.run()
    if let interruptAfter {
      Thread.sleep(forTimeInterval: interruptAfter)
      kill(process.processIdentifier, SIGINT)
    }
    let data = output.fileHandleForReading.readDataToEndOfFile()
    let errorData = errors.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self), String(decoding: errorData, as: UTF8.self))
  }

  static func records(_ path: String) throws -> [CaptureRecord] {
    let reader = try CaptureFile.open(path: path)
    var all: [CaptureRecord] = []
    while let record = try reader.next() { all.append(record) }
    return all
  }

  @Test func everyMessageIsDecodedAndRecorded() throws {
    let library = try #require(monitorStandIn)
    let source = capturePath("hr_strap_session.btsnoop")
    let recording = NSTemporaryDirectory() + "bledissect-monitor-\(getpid()).btsnoop"
    defer { unlink(recording) }
    let result = try Self.run(["live", "--json", "--no-cache", "-w", recording], environment: ["LD_PRELOAD": library, "STANDIN_CAPTURE": source])
    #expect(result.status == 0, "\(result.stderr)")
    let sent = try Self.records(source)
    let names = result.stdout.split(separator: "\n").compactMap { line in
      (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["name"] as? String
    }
    // The same frames as reading the file: names in order.
    let fromFile = runCLI(["--json", "--no-cache", source]).stdout.split(separator: "\n").compactMap { line in
      (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["name"] as? String
    }
    #expect(names.count == sent.count && names == fromFile)
    // The recording holds every record, bytes and kinds as sent.
    let written = try Self.records(recording)
    #expect(written.count == sent.count)
    #expect(zip(written, sent).allSatisfy { $0.bytes == $1.bytes && $0.kind == $1.kind && $0.direction == $1.direction })
    #expect(result.stderr.contains("live: \(sent.count) frames") && result.stderr.contains("\(sent.count) records written"))
  }

  @Test func anInterruptLeavesAValidRecording() throws {
    let library = try #require(monitorStandIn)
    let source = capturePath("hr_strap_session.btsnoop")
    let recording = NSTemporaryDirectory() + "bledissect-monitor-int-\(getpid()).btsnoop"
    defer { unlink(recording) }
    // 50 messages a second and a long hold: stopped in the middle.
    let result = try Self.run(["live", "-1", "--no-cache", "-w", recording],
      environment: ["LD_PRELOAD": library, "STANDIN_CAPTURE": source, "STANDIN_RATE": "50", "STANDIN_HOLD_MS": "20000"], interruptAfter: 1.0)
    #expect(result.status == 0, "\(result.stderr)")
    let written = try Self.records(recording)
    let sent = try Self.records(source)
    #expect(written.count > 5 && written.count < sent.count)
    #expect(zip(written, sent).allSatisfy { $0.bytes == $1.bytes && $0.kind == $1.kind })
    #expect(result.stdout.split(separator: "\n").count == written.count)
  }

  @Test func openingFailuresSayWhatToDo() throws {
    let library = try #require(monitorStandIn)
    let permission = try Self.run(["live"], environment: ["LD_PRELOAD": library, "STANDIN_BIND_ERRNO": "\(EPERM)"])
    #expect(permission.status == 2 && permission.stderr.contains("CAP_NET_RAW"))
    let noBluetooth = try Self.run(["live"], environment: ["LD_PRELOAD": library, "STANDIN_ERRNO": "\(EAFNOSUPPORT)"])
    #expect(noBluetooth.status == 2 && noBluetooth.stderr.contains("no Bluetooth sockets"))
  }

  /// Controllers from NEW_INDEX/INDEX_INFO: those present when reading began, a wanted one
  /// missing, none at all, and one that comes and goes.
  @Test func controllersAreNamedAsTheMonitorAnnouncesThem() throws {
    let library = try #require(monitorStandIn)
    let source = capturePath("hr_strap_session.btsnoop")
    let present = try Self.run(["live", "-1", "--no-cache"],
      environment: ["LD_PRELOAD": library, "STANDIN_CAPTURE": source, "STANDIN_ADAPTERS": "0,1", "STANDIN_LATE_ADAPTER": "2"])
    #expect(present.status == 0, "\(present.stderr)")
    let company = AssignedNumbers.companyName(10)!.description
    #expect(present.stderr.contains("monitor: controllers: hci0 00:1A:7D:DA:71:10 (USB, \(company)); hci1 00:1A:7D:DA:71:11 (USB, \(company))\n"),
      "\(present.stderr)")
    #expect(present.stderr.contains("monitor: hci2 00:1A:7D:DA:71:12 (USB) appeared\n"), "\(present.stderr)")
    #expect(present.stderr.contains("monitor: hci2 went away\n"), "\(present.stderr)")
    // The index records are frames too.
    #expect(present.stdout.split(separator: "\n").filter { $0.contains("New Index") }.count == 3)

    let missing = try Self.run(["live", "-1", "--no-cache", "--index", "hci3"],
      environment: ["LD_PRELOAD": library, "STANDIN_CAPTURE": source, "STANDIN_ADAPTERS": "0", "STANDIN_START_DELAY_MS": "0",
                    "STANDIN_RATE": "2", "STANDIN_LIMIT": "2"])
    #expect(missing.stderr.contains("monitor: hci3 is not here yet (present: hci0 00:1A:7D:DA:71:10 (USB, \(company))); waiting\n"),
      "\(missing.stderr)")

    let none = try Self.run(["live", "-1", "--no-cache"],
      environment: ["LD_PRELOAD": library, "STANDIN_CAPTURE": source, "STANDIN_START_DELAY_MS": "600", "STANDIN_LIMIT": "3"])
    #expect(none.status == 0, "\(none.stderr)")
    #expect(none.stderr.contains("monitor: no Bluetooth controller yet; waiting for one"), "\(none.stderr)")
    #expect(none.stdout.split(separator: "\n").count == 3)
  }

  /// Messages the kernel could not queue are counted where the kernel counts them (SO_MEMINFO),
  /// and said in the closing line: none is lost silently.
  @Test func kernelDropsAreCounted() throws {
    let library = try #require(monitorStandIn)
    let source = capturePath("hr_strap_session.btsnoop")
    let report = NSTemporaryDirectory() + "bledissect-standin-\(getpid()).report"
    defer { unlink(report) }
    // As fast as the feeder can: far faster than live decodes, so the queue overflows.
    let result = try Self.run(["live", "--json", "--no-cache"],
      environment: ["LD_PRELOAD": library, "STANDIN_CAPTURE": source, "STANDIN_REPEAT": "200", "STANDIN_DROP": "1", "STANDIN_REPORT": report])
    #expect(result.status == 0, "\(result.stderr)")
    let counts = try String(contentsOfFile: report, encoding: .utf8).split(separator: " ")
    let sent = Int(counts[1])!, dropped = Int(counts[3])!
    #expect(sent + dropped == 200 * (try Self.records(source)).count)
    #expect(dropped > 0, "the feeder never outran live: nothing to count")
    #expect(result.stdout.split(separator: "\n").count == sent)
    #expect(result.stderr.contains("live: \(sent) frames, ") && result.stderr.contains(", \(dropped) drops (the kernel's queue for this socket was full)"),
      "\(result.stderr)")
  }
}
