import Foundation
import Testing

@testable import bledissect

/// `diff` on pairs of real captures (../shared/corpus), judged as a strap engineer would: a few
/// lines, none repeated, each a real difference with where it shows. Counts are checked
/// against tshark's reading of the same files (ATT opcodes per handle), taken once and written
/// here with the command that gave them.
@Suite(.enabled(if: corpusRoot != nil, "../shared/corpus is absent"))
struct DiffCorpusTests {
  static func path(_ name: String) -> String { corpusRoot!.appendingPathComponent(name).path }

  /// The text lines after the header, and each line's sentence without its places.
  static func lines(_ a: String, _ b: String) -> (status: Int32, lines: [String], sentences: [String]) {
    let result = runCLI(["diff", "--no-cache", path(a), path(b)])
    let lines = result.stdout.split(separator: "\n").map(String.init).filter { $0.hasPrefix("  ") }
    let sentences = lines.map { line in line.range(of: "  (A #").map { String(line[..<$0.lowerBound]) } ?? line.range(of: "  (B #").map { String(line[..<$0.lowerBound]) } ?? line }
    return (result.status, lines, sentences)
  }

  static func json(_ a: String, _ b: String) throws -> [[String: Any]] {
    let result = runCLI(["diff", "--json", "--no-cache", path(a), path(b)])
    let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    return try #require(object["differences"] as? [[String: Any]])
  }

  /// Few lines, none the same sentence twice, every one placed in A or B (whole-session
  /// figures such as latency medians aside), in both directions.
  static func checkShape(_ a: String, _ b: String, atMost bound: Int) {
    for (x, y) in [(a, b), (b, a)] {
      let found = lines(x, y)
      #expect(found.status == 1)
      #expect(!found.lines.isEmpty && found.lines.count <= bound, "\(x) vs \(y): \(found.lines.count) lines\n\(found.lines.joined(separator: "\n"))")
      #expect(Set(found.sentences).count == found.sentences.count, "a repeated line: \(found.sentences)")
      let unplaced = found.lines.filter { !$0.contains("(A #") && !$0.contains("(B #") && !$0.hasPrefix("  ATT:") }
      #expect(unplaced.isEmpty, "\(unplaced)")
    }
  }

  /// The treadmill pair: the app polls and drives the treadmill through one characteristic
  /// (Write Requests on 0x0055: `tshark -Y "btatt.opcode==0x12" -T fields -e btatt.handle`
  /// counts 637 in A, 945 in B). Was 309 lines, 308 of them "only B did: Write 49535343-…".
  @Test func treadmillPair() throws {
    let (a, b) = ("qdomyos_zwift/treadmill_btsnoop_hci.log", "qdomyos_zwift/treadmill_heart200andstop.log")
    Self.checkShape(a, b, atMost: 3)
    let writes = try Self.json(a, b).filter { $0["kind"] as? String == "writes" }
    #expect(writes.count == 1)
    let write = try #require(writes.first)
    #expect((write["text"] as? String)?.hasPrefix("Write 49535343-8841-43f4-a8d4-ecbe34729bb3 637× (170 distinct) in A, 945× (140) in B") == true, "\(write)")
    #expect(write["a_count"] as? Int == 637 && write["b_count"] as? Int == 945)
    // B's session ended on a supervision timeout (the treadmill was stopped), A's by the app.
    let ending = try #require(try Self.json(a, b).first { $0["kind"] as? String == "disconnect" })
    #expect((ending["b_value"] as? String)?.contains("Connection Timeout") == true)
  }

  /// The DS-D6 pair: AT commands as Write Commands on 0x190B's handle (tshark counts 29 Write
  /// Commands with 29 distinct values in A, 111 with 36 in B). Was 83 lines.
  @Test func dsd6Pair() throws {
    let (a, b) = ("dsd6_tracker/dsd6_btsnoop_hci.log", "dsd6_tracker/dsd6_btsnoop_hci.log.63758160418464951")
    Self.checkShape(a, b, atMost: 3)
    let write = try #require(try Self.json(a, b).first { $0["kind"] as? String == "writes" })
    let text = try #require(write["text"] as? String)
    #expect(text.contains("29× (29 distinct) in A, 111× (36) in B"), "\(text)")
    // The commands read as text: the first one only B sent is AT+BOND.
    #expect(text.contains(#"8 only in B, first "AT+BOND\r\n""#), "\(text)")
  }

  /// The Mi Band 3 pair: a long session with 14 connections (A) and a short one that paired
  /// and discovered descriptors A never looked for. Was 74 lines, 19 of them "X has no CCCD in
  /// B's GATT table" where B simply never searched X's descriptors.
  @Test func miBandPair() throws {
    let (a, b) = ("miband3_blproject/miband3_a1wcap.pcapng", "miband3_blproject/miband3_lescan_cap.pcapng")
    Self.checkShape(a, b, atMost: 18)
    let found = Self.lines(a, b).sentences
    #expect(!found.contains { $0.contains("GATT table") }, "\(found)")
    // What B searched and A never did is one line, naming the 19 characteristics.
    #expect(found.contains { $0.contains("only B discovered the descriptors of") && $0.contains("(19 in all)") })
    #expect(found.contains { $0.contains("14 connections in A, 1 in B") })
    #expect(found.contains { $0.contains("pairing no pairing in A, just works in B") })
  }

  /// Two client stacks: in B the band also asked the laptop (its Exchange MTU Request, answered
  /// by the laptop's host in 0.16 ms) beside the laptop asking the band (419 ms). Was "Exchange
  /// MTU Request answered in 95.6 ms (median) in A, 0.2 ms in B", the band's answer against the
  /// laptop's. Each end's requests are their own measure; one exchange each carries no median.
  @Test func twoClientStacksAreTwoMeasures() throws {
    let (a, b) = ("miband3_blproject/miband3_to_laptop.pcapng", "miband3_blproject/miband3_lescan_cap.pcapng")
    let found = Self.lines(a, b).lines
    #expect(!found.contains { $0.hasPrefix("  ATT:") }, "\(found)")
    // The long capture against it: the central's Read By Type Requests, timed alike, compared.
    let long = Self.lines("miband3_blproject/miband3_a1wcap.pcapng", b).lines.filter { $0.hasPrefix("  ATT:") }
    #expect(long == [
      "  ATT: Read By Type Request from the central answered in 96.8 ms (median of 95) in A, 292.8 ms (median of 11) in B, both timed at the asking host (HCI: the round trip)"
    ])
  }
}

