import Foundation
import Testing
import BLECapture
import BLECore
import BLEDecoder
import BLERender

/// The repository root, found from this file's path (Tests/BLERenderTests/…).
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

func capturePath(_ name: String) -> String { repositoryRoot.appendingPathComponent("captures/\(name)").path }

/// Reads, dissects and renders a whole capture in memory.
func render<R: FrameRenderer>(records: [CaptureRecord], with renderer: inout R) -> String {
  var out = OutputBuffer(fd: nil)
  var dissector = Dissector()
  var frame = DissectedFrame()
  for (index, record) in records.enumerated() {
    dissector.dissect(record, number: index + 1, into: &frame)
    renderer.render(&frame, to: &out)
  }
  renderer.finish(to: &out)
  return out.text
}

func readAll(path: String) throws -> [CaptureRecord] {
  let reader = try CaptureFile.open(path: path)
  var records: [CaptureRecord] = []
  while let record = try reader.next() { records.append(record) }
  return records
}

func readAll(bytes: [UInt8]) throws -> [CaptureRecord] {
  let path = NSTemporaryDirectory() + "bledissect-render-\(UUID().uuidString)"
  _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
  defer { try? FileManager.default.removeItem(atPath: path) }
  return try readAll(path: path)
}

func jsonLines(_ records: [CaptureRecord]) -> String {
  var renderer = JSONLinesRenderer()
  return render(records: records, with: &renderer)
}

/// Compares `actual` with `Snapshots/<name>`; `RECORD_SNAPSHOTS=1 swift test` rewrites it.
/// A missing snapshot fails the test (after writing it, so it can be reviewed and committed).
func assertSnapshot(_ actual: String, named name: String, sourceLocation: SourceLocation = #_sourceLocation) {
  let url = repositoryRoot.appendingPathComponent("Tests/BLERenderTests/Snapshots/\(name)")
  let record = ProcessInfo.processInfo.environment["RECORD_SNAPSHOTS"] != nil
  guard !record, let expected = try? String(contentsOf: url, encoding: .utf8) else {
    try? actual.write(to: url, atomically: true, encoding: .utf8)
    if !record { Issue.record("snapshot \(name) was missing; recorded it", sourceLocation: sourceLocation) }
    return
  }
  if expected != actual {
    let expectedLines = expected.split(separator: "\n", omittingEmptySubsequences: false)
    let actualLines = actual.split(separator: "\n", omittingEmptySubsequences: false)
    let firstDifference = zip(expectedLines, actualLines).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(expectedLines.count, actualLines.count)
    let want = firstDifference < expectedLines.count ? String(expectedLines[firstDifference]) : "<end>"
    let got = firstDifference < actualLines.count ? String(actualLines[firstDifference]) : "<end>"
    Issue.record("snapshot \(name) differs at line \(firstDifference + 1):\n  expected: \(want)\n  actual:   \(got)", sourceLocation: sourceLocation)
  }
}
