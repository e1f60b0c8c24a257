import BLECore
import Foundation
import Testing

@testable import bledissect

/// Every diagnostic in JSON carries its catalogue code, with the catalogue's severity and layer;
/// the codes named here are those the captures are known to hold.
@Suite struct DiagnosticCodeTests {
  static func codes(_ file: String) throws -> [(code: String, severity: String, layer: String)] {
    let result = runCLI(["--json", "--no-cache", capturePath(file)])
    #expect(result.status == 0)
    var found: [(String, String, String)] = []
    for line in result.stdout.split(separator: "\n") {
      let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
      for diagnostic in (object["diagnostics"] as? [[String: Any]]) ?? [] {
        found.append((diagnostic["code"] as? String ?? "", diagnostic["severity"] as? String ?? "", diagnostic["layer"] as? String ?? ""))
      }
    }
    return found
  }

  @Test(arguments: [
    ("late_midstream.btsnoop", "hci.handle_without_connect"),
    ("air/passkey_pairing_sniffed.pcap", "ll.tk_out_of_band"),
    ("air_ll.pcap", "ll.packets_missed"),
    ("long_values.btsnoop", "att.prepare_queue_cancelled"),
  ])
  func jsonDiagnosticsCarryCatalogueCodes(file: String, expected: String) throws {
    let found = try Self.codes(file)
    let catalogue = Dictionary(uniqueKeysWithValues: DiagnosticKind.all.map { ($0.code, $0) })
    for (code, severity, layer) in found {
      let kind = try #require(catalogue[code], "\(file): unknown code '\(code)'")
      #expect(kind.severity.rawValue == severity && kind.layer.rawValue == layer, "\(code)")
    }
    #expect(found.contains { $0.code == expected }, "\(file): no \(expected) among \(Set(found.map(\.code)).sorted())")
  }
}
