import BLEAnalysis
import BLECapture
import BLECore
import BLEEngine
import BLERender

extension FuzzTarget {
  /// `check`'s analysis over any bytes read as a capture, then both of its writers: every
  /// finding's frames lie within the frames read, the counts add up, and no raw control byte
  /// reaches the text (names and messages come from the capture).
  static func check(_ bytes: [UInt8]) -> Outcome {
    var analysis = ConformanceAnalysis()
    let (opened, stopped) = stream(bytes, into: &analysis)
    var outcome = opened
    guard let end = stopped else { return outcome }
    let report = analysis.report(file: "fuzz")
    var counted = 0
    for group in report.groups {
      precondition(group.count >= 1 && !group.frames.isEmpty, "an empty group of \(group.first.rule)")
      precondition(!group.first.message.isEmpty, "a finding of \(group.first.rule) says nothing")
      for frame in group.first.frames + group.frames {
        precondition(frame >= 1 && frame <= end.frames, "\(group.first.rule) names frame \(frame) of \(end.frames)")
      }
      counted += group.count
    }
    precondition(report.errors + report.warnings == counted, "the counts do not add up")
    var text = OutputBuffer(fd: nil)
    CheckWriter.text(report, to: &text)
    for byte in text.bytes where (byte < 0x20 && byte != 0x0A) || byte == 0x7F {
      preconditionFailure("a raw control byte \(byte) in check's text")
    }
    var json = OutputBuffer(fd: nil)
    CheckWriter.json(report, to: &json)
    outcome.frames = end.frames
    return outcome
  }
}
