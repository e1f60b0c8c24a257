/// Helpers shared by the test targets (not part of the tool).

/// A small deterministic generator (SplitMix64), so a random test replays from its seed.
package struct SeededGenerator: RandomNumberGenerator {
  package var state: UInt64
  package init(seed: UInt64) { state = seed }
  package mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}

/// Bytes from a hex string such as `"0e0401030c00"` (spaces allowed). Traps on bad input: tests only.
package func hexBytes(_ text: String) -> [UInt8] {
  let digits = Array(text.filter { !$0.isWhitespace }.utf8)
  precondition(digits.count % 2 == 0, "odd number of hex digits")
  func nibble(_ c: UInt8) -> UInt8 {
    switch c {
    case 0x30...0x39: return c - 0x30
    case 0x41...0x46: return c - 0x37
    case 0x61...0x66: return c - 0x57
    default: preconditionFailure("not a hex digit")
    }
  }
  return stride(from: 0, to: digits.count, by: 2).map { nibble(digits[$0]) << 4 | nibble(digits[$0 + 1]) }
}

import BLECore
import Foundation

extension ByteReader {
  /// A reader over a copy of `bytes` kept for the rest of the process (tests only: readers
  /// point into bytes they do not own, and a test's reader must stay valid wherever the test
  /// takes it, closures included). The tool itself pins bytes with `ByteReader.reading`.
  package init(testBytes bytes: [UInt8], layer: ProtocolLayer) {
    // Safety: a copy never freed, so the reader's bytes stay valid wherever a test takes it.
    let copy = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(bytes.count, 1))
    _ = copy.initialize(from: bytes)
    self.init(ByteView.pinned(UnsafeBufferPointer(copy), count: bytes.count), layer: layer)
  }
}

/// The records of a btsnoop file (the header's flags and the packet bytes),
/// read without the project's readers: to cut sample captures into new ones, and to find the
/// frame number of a known PDU as ground truth.
package func btsnoopRecords(path: String) throws -> [(flags: UInt32, bytes: [UInt8])] {
  let data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
  func be32(_ at: Int) -> UInt32 { data[at..<at + 4].reduce(0) { $0 << 8 | UInt32($1) } }
  var records: [(UInt32, [UInt8])] = []
  var offset = 16
  while offset + 24 <= data.count {
    let length = Int(be32(offset + 4))
    guard offset + 24 + length <= data.count else { break }
    records.append((be32(offset + 8), Array(data[offset + 24..<offset + 24 + length])))
    offset += 24 + length
  }
  return records
}

/// The frame numbers (from 1) of the ACL records of a btsnoop file whose L2CAP payload (after
/// the H4, ACL and L2CAP headers) starts with `pdu`.
package func btsnoopFrames(path: String, pdu: [UInt8]) throws -> [Int] {
  try btsnoopRecords(path: path).enumerated().compactMap { index, record in
    let bytes = record.bytes
    guard bytes.first == 0x02, bytes.count >= 9 + pdu.count, Array(bytes[9..<9 + pdu.count]) == pdu else { return nil }
    return index + 1
  }
}

/// The repository's root (this file is Sources/BLETestSupport/TestSupport.swift).
package let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// `../shared/corpus` beside the repository, when present (it is not in a fresh clone).
package let sharedCorpusRoot: URL? = {
  let url = repositoryRoot.deletingLastPathComponent().appendingPathComponent("shared/corpus")
  return FileManager.default.fileExists(atPath: url.appendingPathComponent("PROVENANCE.md").path) ? url : nil
}()

/// Whether `../shared/corpus` holds `path` (relative to it).
package func sharedCorpusHas(_ path: String) -> Bool {
  guard let root = sharedCorpusRoot else { return false }
  return FileManager.default.fileExists(atPath: root.appendingPathComponent(path).path)
}

/// The path of `tool` on the PATH, if it is there.
package func which(_ tool: String) -> String? {
  for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
    let path = "\(directory)/\(tool)"
    if FileManager.default.isExecutableFile(atPath: path) { return path }
  }
  return nil
}

/// Runs a program in `environment` (this process's when nil), returning its exit status and
/// standard output; its standard error is discarded.
package func runTool(_ path: String, _ arguments: [String], environment: [String: String]? = nil) throws -> (Int32, Data) {
  let process = Process()
  if let environment { process.environment = environment }
  process.executableURL = URL(fileURLWithPath: path)
  process.arguments = arguments
  let output = Pipe()
  process.standardOutput = output
  process.standardError = FileHandle.nullDevice
  try process.run()
  let data = output.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  return (process.terminationStatus, data)
}
