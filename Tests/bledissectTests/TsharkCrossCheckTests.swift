import Foundation
import Testing
import BLECapture
import BLETestSupport
@testable import bledissect

/// Frame counts must equal Wireshark's for every HCI capture: ours in captures/, every format we
/// write, and the corpus (when present). Skipped when tshark is not installed (`Scripts/setup --with-tools`).
@Suite(.enabled(if: which("tshark") != nil, "tshark is not installed"))
struct TsharkCrossCheckTests {
  static func tsharkFrameCount(_ path: String) throws -> Int {
    // One line per frame with only its number; -n avoids name lookups.
    let (status, data) = try runProgram(which("tshark")!, ["-n", "-r", path, "-T", "fields", "-e", "frame.number"])
    #expect(status == 0, "tshark failed on \(path)")
    return String(decoding: data, as: UTF8.self).split(separator: "\n").count
  }

  static func ourFrameCount(_ path: String) throws -> Int {
    let reader = try CaptureFile.open(path: path)
    var count = 0
    while try reader.next() != nil { count += 1 }
    return count
  }

  static let sampleCaptures = [
    "hr_strap_session.btsnoop", "hr_strap_peripheral.btsnoop", "hr_strap_session.pklg", "hr_strap_session.pcapng",
  ]

  @Test(arguments: sampleCaptures)
  func sampleCapturesMatch(name: String) throws {
    let path = capturePath(name)
    #expect(try Self.ourFrameCount(path) == Self.tsharkFrameCount(path))
  }

  /// Every format `convert` writes, as Wireshark reads it (a check on our writers too): the
  /// air-sniffer link types from an air capture (16 packets), the others from an HCI capture.
  @Test(arguments: ConvertCommand.formats.map(\.0))
  func everyWrittenFormatMatches(format: String) throws {
    let output = NSTemporaryDirectory() + "bledissect-tshark-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: output) }
    let air: Bool
    switch ConvertCommand.formats.first(where: { $0.0 == format })?.1 {
    case .pcap(let linkType)?, .pcapng(let linkType)?: air = [157, 192, 251, 256, 272].contains(linkType.value)
    default: air = false
    }
    let input = capturePath(air ? "air_nordic.pcap" : "hr_strap_peripheral.btsnoop")
    let result = runCLI(["convert", "--to", format, input, output])
    #expect(result.status == 0)
    let ours = try Self.ourFrameCount(output)
    #expect(ours == (air ? 16 : 180))
    #expect(ours == (try Self.tsharkFrameCount(output)), "\(format)")
  }

  @Test(.enabled(if: corpusRoot != nil, "../shared/corpus is absent"), arguments: CorpusTests.entries.filter { !$0.isLinkLayer })
  func corpusMatches(entry: CorpusTests.Entry) throws {
    let path = corpusRoot!.appendingPathComponent(entry.path).path
    #expect(try Self.ourFrameCount(path) == Self.tsharkFrameCount(path), "\(entry.path)")
  }
}
