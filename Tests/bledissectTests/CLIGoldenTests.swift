import Foundation
import Testing
import BLETestSupport

/// The command line itself (AnnotateCommand → FrameStream → RenderingConsumer) gives the golden
/// files, whichever way the stream splits its work between threads.
@Suite struct CLIGoldenTests {
  static let arrangements: [[String: String]] = [
    [:], ["BLEDISSECT_THREADS": "1"], ["BLEDISSECT_VALUE_SHARE": "0"], ["BLEDISSECT_VALUE_SHARE": "8"],
  ]

  func golden(_ name: String) throws -> String {
    try String(contentsOf: repositoryRoot.appendingPathComponent("Tests/BLERenderTests/Snapshots/\(name)"), encoding: .utf8)
  }

  @Test(arguments: 0..<4)
  func annotateGivesTheGoldens(arrangement: Int) throws {
    let environment = Self.arrangements[arrangement]
    let text = runCLI(["--color", "never", capturePath("hr_strap_session.btsnoop")], environment: environment)
    #expect(text.status == 0)
    #expect(text.stdout == (try golden("hr_strap_session.txt")))
    let verbose = runCLI(["-v", "--time", "delta", "--color", "never", capturePath("hr_strap_peripheral.btsnoop")], environment: environment)
    #expect(verbose.stdout == (try golden("hr_strap_peripheral.verbose.txt")))
    let long = runCLI(["--color", "never", capturePath("long_values.btsnoop")], environment: environment)
    #expect(long.stdout == (try golden("long_values.txt")))
    for name in ["hr_strap_session", "two_straps", "reconnect_cached", "long_values", "vendor_services", "le_coc", "eatt"] {
      let json = runCLI(["--json", capturePath(name + ".btsnoop")], environment: environment)
      #expect(json.status == 0)
      #expect(json.stdout == (try golden(name + ".jsonl")), "\(name)")
    }
  }
}
