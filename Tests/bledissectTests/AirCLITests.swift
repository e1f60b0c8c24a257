import Foundation
import Testing

@testable import bledissect

/// Air captures on the command line: one line per packet, the empty PDUs that keep a connection
/// alive left out and counted unless asked for.
@Suite struct AirCLITests {
  @Test func oneLineOutputLeavesOutEmptyPDUsAndSaysHowMany() {
    let path = capturePath("air_ll_phdr.pcapng")
    let short = runCLI(["-1", path])
    #expect(short.status == 0)
    let lines = short.stdout.split(separator: "\n")
    // 16 packets, 7 of them empty PDUs (captures/README.md); #14, one of those, arrived with a
    // wrong CRC, so it is shown as such, not as an empty PDU.
    #expect(lines.count == 10)
    #expect(lines.contains { $0.hasPrefix("#14 ") && $0.contains("CRC error: data PDU, 0 bytes, not decoded") })
    #expect(!lines.contains { $0.contains("Empty PDU") })
    #expect(lines.contains { $0.contains("CONNECT_IND") } && lines.contains { $0.contains("LL_TERMINATE_IND") })
    #expect(short.stderr.contains(": 6 empty link-layer PDUs not shown (--empty shows them)"))
    let all = runCLI(["-1", "--empty", path])
    #expect(all.stdout.split(separator: "\n").count == 16)
    #expect(all.stdout.split(separator: "\n").filter { $0.contains("Empty PDU") }.count == 6)
    #expect(!all.stderr.contains("not shown"))
    // Full output and JSON show every packet.
    #expect(runCLI(["--json", path]).stdout.split(separator: "\n").count == 16)
  }
}
