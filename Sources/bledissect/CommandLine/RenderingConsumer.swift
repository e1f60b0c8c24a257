import BLECapture
import BLECore
import BLEDecoder
import BLEEngine
import BLERender

/// Where rendered bytes go: the CLI context's standard output or error, owned by the stream's
/// consumer thread while the stream runs.
final class OutputSink: @unchecked Sendable {
  // One thread at a time uses it (the stream's consumer, then the command): no run-time
  // exclusivity check per frame.
  @exclusivity(unchecked) var buffer: OutputBuffer
  init(_ buffer: OutputBuffer) { self.buffer = buffer }
}

/// `annotate`'s consumer: the frames that pass the filter, rendered to standard output; the
/// damage the reader skipped, on standard error in order with the frames.
final class RenderingConsumer<Renderer: FrameRenderer>: FrameConsumer {
  // Used by the consumer's thread only: no run-time exclusivity check per frame.
  @exclusivity(unchecked) var renderer: Renderer
  let filter: FrameFilter
  let filtering: Bool
  let output: OutputSink
  let errors: OutputSink
  /// Starts each line on standard error (the capture's name).
  let label: String
  /// Called once when the output closes (`| head`): a live source stops waiting for input.
  var whenOutputCloses: (() -> Void)?

  init(renderer: Renderer, filter: FrameFilter, output: OutputSink, errors: OutputSink, label: String) {
    self.renderer = renderer
    self.filter = filter
    self.filtering = !filter.isEmpty
    self.output = output
    self.errors = errors
    self.label = label
  }

  var fieldDetail: FieldDetail { renderer.fieldDetail }

  func consume(_ frame: inout DissectedFrame) -> Bool {
    if filtering && !filter.matches(frame) {
      renderer.skip(&frame)
      return true
    }
    renderer.render(&frame, to: &output.buffer)
    return stillOpen()
  }

  func stillOpen() -> Bool {
    if !output.buffer.isClosed { return true }
    whenOutputCloses?()
    whenOutputCloses = nil
    return false
  }

  /// One line on stderr, after the frames before it have been written out.
  func skippedDamage(_ skip: SkippedDamage) {
    output.buffer.flush()
    errors.buffer.append(string: "bledissect: \(label): \(skip.message)\n")
    errors.buffer.flush()
  }

  func inputIdle() {
    output.buffer.flush()
    // A closed output is found when flushing: the stream stops at its next record.
    if output.buffer.isClosed { _ = stillOpen() }
  }

  func finish(_ end: FrameStream.End) { renderer.finish(to: &output.buffer) }
}
