import BLEAnalysis

/// The words of a slice (`annotate -w`): each added frame's pcapng comment, and the line that
/// counts what was written.
package enum SliceWords {
  package static func comment(_ reason: SliceContext) -> String { "bledissect: kept for the chosen frames' \(reason.rawValue)" }

  /// The slice's own comment (pcapng's section header).
  package static func fileComment(of capture: String, version: String) -> String { "A slice of \(capture) written by bledissect \(version)" }

  /// The lines for standard error: that no frame matched, when none did; then "70 of 160 frames
  /// written to hr.pcapng: 23 chosen, 47 for context (…)", what the format could not carry and
  /// the links past the plan's bound.
  package static func written(_ selection: SliceSelection, records: Int, of frames: Int, to file: String, skipped: Int, linksLeftOut: Int) -> [String] {
    var lines = selection.chosen == 0 ? [Words.noFrameMatched(frames)] : []
    var words = "\(records) of \(Words.count(frames, "frame")) written to \(file): \(selection.chosen) chosen"
    let added = SliceContext.allCases.compactMap { reason in selection.context[reason].map { "\(reason.rawValue) \($0)" } }
    if !added.isEmpty { words += ", \(selection.context.values.reduce(0, +)) for context (\(added.joined(separator: ", ")))" }
    if skipped > 0 { words += "; \(skipped) the format cannot carry left out" }
    if linksLeftOut > 0 { words += "; frames of links past the first \(SlicePlan.maximumLinks) written without their context" }
    lines.append(words)
    return lines
  }
}
