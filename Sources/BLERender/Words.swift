import BLEDecoder

/// How the report writers word things several of them say.
package enum Words {
  /// One line saying where a table came from: "GATT table of X from the cache (learned from
  /// CAPTURE at TIME, FILE)".
  package static func provenance(_ server: GATTServerIdentity, _ provenance: GATTMapProvenance) -> String {
    switch provenance.source {
    case .cache:
      var line = "GATT table of \(server) from the cache (\(provenance.origin)"
      if let learned = provenance.learned { line += " at \(learned)" }
      if let file = provenance.file { line += ", \(file)" }
      return line + ")"
    case .layout:
      return "GATT table of \(server) matched by layout with \(provenance.origin)"
    default:
      return "GATT table of \(server) from the map \(provenance.origin)"
    }
  }

  /// "1 frame", "2 frames".
  package static func count(_ number: Int, _ noun: String) -> String {
    "\(number) \(noun)\(number == 1 ? "" : "s")"
  }

  /// What annotate and a slice say when their filters chose nothing.
  package static func noFrameMatched(_ frames: Int) -> String { "no frame matched the filters (\(count(frames, "frame")) read)" }
}
