import BLEAnalysis
import BLECore
import BLEDecoder

/// `check`'s output for one capture: a line per finding (repeats of one rule on one link
/// folded into one line with their count), then nothing else; or one JSON object per finding
/// and one closing object with the counts.
package enum CheckWriter {
  package static func text(_ report: ConformanceReport, to out: inout OutputBuffer) {
    let counts = "\(Words.count(report.errors, "error")), \(Words.count(report.warnings, "warning"))"
    out.append(string: "\(report.file): \(report.groups.isEmpty ? "no findings" : counts) (\(Words.count(report.frames, "frame")))\n")
    for group in report.groups {
      let finding = group.first
      var line = "#\(finding.frame)  \(finding.severity.rawValue)  \(finding.rule.id)  \(finding.side.rawValue)"
      if let connection = finding.connection { line += "  " + link(connection) }
      line += ": " + finding.message
      if group.count > 1 {
        let shown = group.frames.map { "#\($0)" }.joined(separator: ", ")
        line += " (\(group.count) times\(finding.connection == nil ? "" : " on this link"): \(shown)\(group.count > group.frames.count ? ", …" : ""))"
      }
      let others = finding.frames.dropFirst()
      if !others.isEmpty { line += "; see " + others.map { "#\($0)" }.joined(separator: ", ") }
      if let assumption = finding.assumption { line += "; assumes \(assumption)" }
      line += "  [\(finding.rule.clause)]\n"
      out.append(string: line)
    }
  }

  /// The link as the finding's reader finds it in annotate: its handle and the peer.
  static func link(_ connection: ConnectionLabel) -> String {
    "conn \(Hex.prefixed(UInt64(connection.handle), width: 4)) " + (connection.peer.map { "\($0)" } ?? "(peer unknown)")
  }

  package static func json(_ report: ConformanceReport, to out: inout OutputBuffer) {
    var json = JSONWriter(out: out)
    for group in report.groups {
      let finding = group.first
      json.open()
      json.string("file", report.file)
      json.int("frame", finding.frame)
      json.openArray("frames")
      for frame in finding.frames { json.element(frame) }
      json.closeArray()
      json.number("time_s", finding.time)
      json.string("rule", finding.rule.id)
      json.string("severity", finding.severity.rawValue)
      json.string("side", finding.side.rawValue)
      json.string("message", finding.message)
      json.string("spec", finding.rule.clause)
      if let assumption = finding.assumption { json.string("assumption", assumption) }
      if let connection = finding.connection {
        json.int("conn", Int(connection.handle))
        if let peer = connection.peer { json.string("peer", "\(peer)") }
      }
      json.int("count", group.count)
      json.openArray("first_frames")
      for frame in group.frames { json.element(frame) }
      json.closeArray()
      json.close()
      json.out.byte(0x0A)
    }
    json.open()
    json.string("file", report.file)
    json.int("frames", report.frames)
    json.int("errors", report.errors)
    json.int("warnings", report.warnings)
    json.open("rules")
    for (rule, count) in report.countsByRule { json.int(rule.id, count) }
    json.close()
    if let damage = report.damage { json.string("damage", damage) }
    json.close()
    out = json.out
    out.byte(0x0A)
  }
}
