import BLEAnalysis

/// The words of a slice (`annotate -w`): each added frame's pcapng comment, and the line that
/// counts what was written.
package enum SliceWords {
  package static func comment(_ reason: SliceContext) -> String { "bledissect: kept for the chosen frames' \(reason.rawValue)" }

  /// "70 of 160 frames written to hr.pcapng: 23 chosen, 47 for context (…)", then what the
  /// format could not carry and the links past the plan's bound.
  package static func written(_ selection: SliceSelection, of frames: Int, to file: String, skipped: Int, linksLeftOut: Int) -> String {
    let kept = selection.chosen + selection.context.values.reduce(0, +) - skipped
    var words = "\(kept) of \(frames) frame\(frames == 1 ? "" : "s") written to \(file): \(selection.chosen) chosen"
    let added = SliceContext.allCases.compactMap { reason in selection.context[reason].map { "\(reason.rawValue) \($0)" } }
    if !added.isEmpty { words += ", \(selection.context.values.reduce(0, +)) for context (\(added.joined(separator: ", ")))" }
    if skipped > 0 { words += "; \(skipped) the format cannot carry left out" }
    if linksLeftOut > 0 { words += "; frames of links past the first \(SlicePlan.maximumLinks) written without their context" }
    return words
  }
}
