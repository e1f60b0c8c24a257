import BLEAnalysis
import BLECore
import BLEDecoder

/// A frame's packet comment for pcapng (`convert --comments`): its header line as one-line
/// output (`-1 --check`) shows it, less the frame number and time (Wireshark shows its own),
/// without colour; then each `check` finding it proves, one per line.
package struct FrameComments {
  var renderer = TextRenderer(time: .relative, color: false, details: false)
  var line = OutputBuffer(fd: nil)
  var conformance = ConformanceAnalysis()
  /// Decodes records given as records (a redacted capture's: its comments say what the file
  /// holds, not what the input held).
  var dissector = Dissector()
  var scratch = DissectedFrame()
  var decoded = 0

  package init() {
    conformance.keepsEachFinding = true
  }

  /// The converted file's own comment (pcapng's section header): what was redacted, and what
  /// the packet comments hold; nil when neither was asked for.
  package static func sectionComment(redaction kinds: String?, comments: Bool) -> String? {
    var lines: [String] = []
    if let kinds { lines.append("Redacted by bledissect convert --redact=\(kinds): replaced values, not the captured ones.") }
    if comments { lines.append("Packet comments: bledissect's header line and check findings.") }
    return lines.isEmpty ? nil : lines.joined(separator: "\n")
  }

  /// The fields the renderer shows: none (the header line is derived from facts).
  package var fieldDetail: FieldDetail { renderer.fieldDetail }

  /// The comment of a decoded frame (the frames of one capture, in order).
  package mutating func comment(for frame: inout DissectedFrame) -> String {
    _ = conformance.consume(&frame)
    var findings: [String] = []
    for finding in conformance.fresh where finding.frame == frame.number {
      let words = RenderingConsumer<TextRenderer>.words(finding)
      frame.diagnostics.append(Diagnostic(finding.rule.diagnosticKind, words))
      findings.append(words)
    }
    line.removeAll()
    renderer.render(&frame, to: &line)
    let text = line.withAppendedBytes(since: 0) { Self.headerWords($0) }
    return ([text] + findings.map { "check: " + $0 }).joined(separator: "\n")
  }

  /// The comment of a record as written (decoded here, in order).
  package mutating func comment(for record: CaptureRecord) -> String {
    decoded += 1
    // The reused frame, taken out of `self` while `self` renders it.
    var frame = DissectedFrame()
    swap(&frame, &scratch)
    // One-line words need no field lists (FrameStream sets the same for its consumers).
    frame.fields.detail = .none
    dissector.dissect(record, number: decoded, into: &frame)
    let text = comment(for: &frame)
    frame.recycle()
    swap(&frame, &scratch)
    return text
  }

  /// A header line without its number and time columns (`#12   0.012345 `) and its newline.
  static func headerWords(_ bytes: ByteView) -> String {
    var index = bytes.startIndex
    let end = bytes.endIndex
    func skip(while test: (UInt8) -> Bool) {
      while index < end, test(bytes[index]) { index += 1 }
    }
    skip { $0 == UInt8(ascii: "#") }
    skip { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    skip { $0 == 0x20 }
    skip { $0 != 0x20 }  // the time
    if index < end { index += 1 }
    var last = end
    while last > index, bytes[last - 1] == 0x0A { last -= 1 }
    return String(decoding: bytes[index..<last], as: UTF8.self)
  }
}
