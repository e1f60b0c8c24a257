import BLECore
import BLEDecoder

/// One broken rule, proved by frames: the `check` command's unit of output.
package struct ConformanceFinding: Sendable, Equatable {
  package enum Severity: String, Sendable {
    case warning, error
  }

  /// Who broke the rule: an ATT role for ATT and GATT rules, a link role for the others.
  package enum Side: String, Sendable {
    case client, server, central, peripheral
    /// The capture does not show which device sent the frame.
    case unknown
  }

  package var rule: ConformanceRule
  /// The rule's, or warning where the proof rests on an assumption (`assumption` says which).
  package var severity: ConformanceFinding.Severity
  package var side: Side
  /// The frame that proves it first, then the others it rests on (the request a response
  /// should have answered, the earlier value it contradicts), ascending.
  package var frames: [Int]
  /// Seconds since the capture's first frame, of the proving frame.
  package var time: Double
  package var connection: ConnectionLabel?
  /// What happened, with the values involved ("Exchange MTU Request with Client Rx MTU 20").
  package var message: String
  /// What the finding assumes, when it is a warning for that reason.
  package var assumption: String?

  package var frame: Int { frames.first ?? 0 }
}

/// Repeats of one rule by one side on one link, shown as one line with a count: the first
/// finding, and the proving frames of the first few.
package struct ConformanceGroup: Sendable, Equatable {
  package var first: ConformanceFinding
  package var count: Int
  /// The proving frame of each of the first `listedFrames` findings.
  package var frames: [Int]
  package static let listedFrames = 8
}

/// What `check` found in one capture.
package struct ConformanceReport: Sendable {
  package var file: String
  package var groups: [ConformanceGroup]
  /// Findings counted one by one (a group of 12 counts 12).
  package var errors: Int
  package var warnings: Int
  /// Frames read.
  package var frames: Int
  /// Why the capture's read ended early, when it did.
  package var damage: String?

  /// The report with only the rules in `rules` (nil: every rule) and none of `ignored`.
  package func keeping(rules: Set<String>?, ignoring ignored: Set<String>) -> ConformanceReport {
    var kept = ConformanceReport(
      file: file, groups: groups.filter { (rules?.contains($0.first.rule.id) ?? true) && !ignored.contains($0.first.rule.id) }, frames: frames)
    kept.damage = damage
    return kept
  }

  /// Findings per rule id, in the catalogue's order.
  package var countsByRule: [(rule: ConformanceRule, count: Int)] {
    var counts: [String: Int] = [:]
    for group in groups { counts[group.first.rule.id, default: 0] += group.count }
    return ConformanceRule.all.compactMap { rule in counts[rule.id].map { (rule, $0) } }
  }

  package init(file: String, groups: [ConformanceGroup], frames: Int) {
    self.file = file
    self.groups = groups
    self.frames = frames
    errors = groups.filter { $0.first.severity == .error }.reduce(0) { $0 + $1.count }
    warnings = groups.filter { $0.first.severity == .warning }.reduce(0) { $0 + $1.count }
  }
}
