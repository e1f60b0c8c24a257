import Foundation
import Testing
import BLECapture
@testable import bledissect

/// Real captures recorded by other people (../shared/corpus). Skipped when the folder is absent.
@Suite(.enabled(if: corpusRoot != nil, "../shared/corpus is absent"))
struct CorpusTests {
  struct Entry: Sendable, CustomStringConvertible {
    var path: String
    var format: String
    var packets: Int
    var description: String { path }
    /// Air (link-layer) sniffer captures, which hold no HCI (read as air packets; decoded above
    /// the link layer by issue 20's decoder).
    var isLinkLayer: Bool {
      ["DLT 192", "DLT 251", "DLT 256", "DLT 272", "PPI", "linktype 192"].contains { format.contains($0) } || path.hasPrefix("ll_sniffer/")
    }
  }

  /// The summary table of PROVENANCE.md: `| `path` | format | packets | …`.
  static let entries: [Entry] = {
    guard let root = corpusRoot,
      let text = try? String(contentsOf: root.appendingPathComponent("PROVENANCE.md"), encoding: .utf8)
    else { return [] }
    var result: [Entry] = []
    for line in text.split(separator: "\n") where line.hasPrefix("| `") {
      let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
      guard cells.count >= 3, let packets = Int(cells[2]) else { continue }
      result.append(Entry(path: cells[0].trimmingCharacters(in: CharacterSet(charactersIn: "`")), format: cells[1], packets: packets))
    }
    return result
  }()

  @Test func provenanceListsTheCorpus() {
    #expect(Self.entries.count >= 39)
  }

  @Test(arguments: entries)
  func readsWithTheDocumentedFrameCount(entry: Entry) throws {
    let path = corpusRoot!.appendingPathComponent(entry.path).path
    let reader = try CaptureFile.open(path: path)
    var count = 0
    while try reader.next() != nil { count += 1 }
    #expect(count == entry.packets, "\(entry.path)")
  }

  /// Every capture, air-sniffer ones included. The only lines on stderr are the count of empty
  /// link-layer PDUs that one-line output leaves out (air captures), and the keys packets were
  /// decrypted with (crackle's legacy pairing gives its own away).
  @Test(arguments: entries)
  func annotatesToTheEndWithStatus0(entry: Entry) {
    let path = corpusRoot!.appendingPathComponent(entry.path).path
    let decrypted = entry.path.hasPrefix("ll_sniffer/crackle_pairing") ? ["\(path): 3 packets decrypted with the STK worked out from the pairing at #566–#576 (TK 0, as Just Works uses), key 59D4B35ECE0DF548C10EFE17E9DA1F4C"] : []
    for arguments in [["-1", path], ["--json", path], [path]] {
      let result = runCLI(arguments)
      #expect(result.status == 0, "\(arguments): \(result.stderr)")
      let notes = result.stderr.split(separator: "\n").filter { !$0.hasSuffix(" empty link-layer PDUs not shown (--empty shows them)") }
      #expect(notes.map { String($0.dropFirst("bledissect: ".count)) } == decrypted, "\(arguments): \(result.stderr)")
      if arguments[0] != "-1" { #expect(result.stderr.split(separator: "\n").count == decrypted.count) }
      if arguments[0] == "--json" {
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == entry.packets)
        // Every line is valid JSON with unique keys (the first problem is enough).
        if let problem = lines.lazy.compactMap({ JSONKeyChecker.check($0) }).first {
          Issue.record("\(entry.path): \(problem)")
        }
      }
    }
  }
}
