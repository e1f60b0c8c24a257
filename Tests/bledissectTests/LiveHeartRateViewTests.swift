import BLECapture
import BLECore
import BLEEngine
import BLERender
import Foundation
import Testing

@testable import bledissect

/// `live --hr`: hr's rows as measurements arrive, and on a terminal a status line kept under them.
@Suite struct LiveHeartRateViewTests {
  /// The rows the view writes for the strap session, as a terminal would receive them.
  static func terminalOutput(columns: Int) throws -> String {
    let output = JobOutput(direct: OutputBuffer(fd: nil), threading: .one)
    let view = LiveHeartRateView(settings: HRCommand.Settings(), output: output, terminalColumns: columns)
    var options = FrameStream.Options()
    options.threading = .one
    _ = FrameStream(source: try CaptureFile.open(path: capturePath("hr_strap_session.btsnoop")), options: options).run(into: view)
    return output.buffer.text
  }

  @Test func statusLineIsErasedBeforeEachRowAndDrawnAfter() throws {
    let text = try Self.terminalOutput(columns: 200)
    let erase = "\r\u{1B}[K"
    // Lines as the terminal shows them: each erase starts the line again.
    let segments = text.components(separatedBy: erase).filter { !$0.isEmpty }
    let rows = segments.flatMap { $0.split(separator: "\n") }.filter { $0.hasPrefix("#") }
    let reference = runCLI(["hr", "--no-cache", capturePath("hr_strap_session.btsnoop")]).stdout.split(separator: "\n").filter { $0.hasPrefix("#") }
    #expect(rows == reference)
    #expect(rows.count == 21)
    // Every row but the first comes right after an erased status line.
    #expect(text.components(separatedBy: erase + "#").count - 1 == rows.count - 1)
    // Statuses carry the latest reading: the no-contact one after its row.
    #expect(text.contains("D0:B1:ED:00:48:52 120 bpm (no contact) | "))
    // The last word is the final status, ended by a newline.
    #expect(text.hasSuffix(erase + "D0:B1:ED:00:48:52 95 bpm | 154 frames, 21 measurements\n"))
  }

  @Test func statusLineFitsTheTerminal() throws {
    let text = try Self.terminalOutput(columns: 30)
    // Segments between erases that are not rows (nor the header row before the first).
    let statuses = text.components(separatedBy: "\r\u{1B}[K").filter { !$0.isEmpty && !$0.dropLast().contains("\n") && !$0.hasPrefix("#") }
    #expect(!statuses.isEmpty)
    for status in statuses {
      let line = status.hasSuffix("\n") ? String(status.dropLast()) : status
      #expect(line.count <= 29, "\(line)")
    }
    #expect(statuses.contains { $0.hasSuffix("…") })
  }

  /// Without a terminal: exactly hr's output, whatever arrives through the pipe.
  @Test func pipedRowsAreHRRows() throws {
    guard let binary = binaryPath() else {
      Issue.record("bledissect binary not found")
      return
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: binary)
    process.arguments = ["live", "--hr", "--no-cache", "-"]
    process.standardInput = FileHandle(forReadingAtPath: capturePath("hr_strap_session.btsnoop"))
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    #expect(process.terminationStatus == 0)
    #expect(text == runCLI(["hr", "--no-cache", capturePath("hr_strap_session.btsnoop")]).stdout)
    #expect(!text.contains("\u{1B}"))
  }
}
