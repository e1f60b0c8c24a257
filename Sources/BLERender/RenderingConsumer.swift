import BLEAnalysis
import BLECore
import BLEDecoder
import BLEEngine

/// `annotate`'s consumer: the frames that pass the filter, rendered to standard output; the
/// damage the reader skipped, on standard error in order with the frames. A struct that owns
/// both buffers while the stream runs (run with `run(into: &consumer)`, then read back): its
/// renderer and buffers are touched per frame without run-time exclusivity checks.
package struct RenderingConsumer<Renderer: FrameRenderer>: FrameConsumer {
  package var renderer: Renderer
  package var filter: FrameFilter
  package let filtering: Bool
  /// Whether the user chose frames (not only -1's hiding of empty PDUs).
  let selecting: Bool
  package var output: OutputBuffer
  package var errors: OutputBuffer
  /// Starts each line on standard error (the capture's name).
  package let label: String
  /// Called once when the output closes (`| head`): a live source stops waiting for input.
  package var whenOutputCloses: (() -> Void)?
  /// `--check`: `check`'s analysis over every frame (shown or not); a frame that proves a rule
  /// broken carries the finding as a diagnostic, which the renderers show.
  package var conformance: ConformanceAnalysis?

  package init(renderer: Renderer, filter: FrameFilter, output: OutputBuffer, errors: OutputBuffer, label: String) {
    self.renderer = renderer
    self.filter = filter
    self.filtering = !filter.isEmpty
    var chosen = filter
    chosen.hidesEmptyPDUs = false
    self.selecting = !chosen.isEmpty
    self.output = output
    self.errors = errors
    self.label = label
  }

  package var fieldDetail: FieldDetail { renderer.fieldDetail }

  package mutating func consume(_ frame: inout DissectedFrame) -> Bool {
    if conformance != nil { markFindings(&frame) }
    if filtering {
      if filter.observes { filter.observe(&frame) }
      if !filter.matches(frame) {
        if filter.hidesEmptyPDUs && FrameFilter.isEmptyPDU(frame) { emptyPDUsHidden += 1 }
        renderer.skip(&frame)
        return true
      }
    }
    shown += 1
    renderer.render(&frame, to: &output)
    return stillOpen()
  }

  package mutating func stillOpen() -> Bool {
    if !output.isClosed { return true }
    whenOutputCloses?()
    whenOutputCloses = nil
    return false
  }

  /// One line on stderr, after the frames before it have been written out.
  package mutating func skippedDamage(_ skip: SkippedDamage) {
    output.flush()
    errors.append(string: "bledissect: \(label): \(skip.message)\n")
    errors.flush()
  }

  package mutating func inputIdle() {
    output.flush()
    // A closed output is found when flushing: the stream stops at its next record.
    if output.isClosed { _ = stillOpen() }
  }

  package mutating func finish(_ end: FrameStream.End) {
    renderer.finish(to: &output)
    // Filters that matched nothing say so, rather than leave a silent empty output.
    if selecting && shown == 0 && end.frames > 0 {
      output.flush()
      errors.append(string: "bledissect: \(label): \(Words.noFrameMatched(end.frames))\n")
    }
    if emptyPDUsHidden > 0 {
      output.flush()
      errors.append(string: "bledissect: \(label): \(emptyPDUsHidden) empty link-layer PDUs not shown (--empty shows them)\n")
    }
  }

  mutating func markFindings(_ frame: inout DissectedFrame) {
    _ = conformance!.consume(&frame)
    for finding in conformance!.fresh where finding.frame == frame.number {
      frame.diagnostics.append(Diagnostic(finding.rule.diagnosticKind, Self.words(finding)))
    }
  }

  /// A finding as a frame's diagnostic says it: the rule first (the header's mark reads it).
  static func words(_ finding: ConformanceFinding) -> String {
    var words = "\(finding.rule.id) \(finding.severity.rawValue), \(finding.side.rawValue): \(finding.message)"
    if finding.frames.count > 1 { words += "; see " + finding.frames.dropFirst().map { "#\($0)" }.joined(separator: ", ") }
    if let assumption = finding.assumption { words += "; assumes \(assumption)" }
    return words + " [\(finding.rule.clause)]"
  }

  /// Empty air data PDUs left out of one-line output.
  package var emptyPDUsHidden = 0
  /// Frames rendered (those the filter passed).
  package var shown = 0
}
