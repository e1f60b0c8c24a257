import BLECore
import BLEDecoder
import BLEEngine
import BLERender

/// `live --hr`: one row per heart-rate measurement (hr's rows: frame, time, device, bpm,
/// contact, energy, RR), written as each arrives. On a terminal, a status line under the rows
/// shows each strap's latest reading, erased before new rows and drawn again after them.
final class LiveHeartRateView: FrameConsumer {
  // Its row callbacks run while it is consuming: they must not touch `rows`.
  var rows: HeartRateRows
  let output: JobOutput
  let terminalColumns: Int?
  /// Latest reading per device, in the order first seen; at most `maximumStraps`.
  var straps: [(label: String, bpm: UInt16, contact: HeartRateMeasurement.SensorContact)] = []
  static let maximumStraps = 16
  var frames = 0
  var measurements = 0
  var statusShown = false
  /// Called when standard output closes (its reader left): the live source should stop.
  var whenOutputCloses: (() -> Void)?
  /// Rows written since the status line was last drawn.
  var rowsWritten = false

  /// `terminalColumns` is nil when standard output is not a terminal: then no status line.
  init(settings: HRCommand.Settings, output: JobOutput, terminalColumns: Int?) {
    rows = HeartRateRows(settings: settings, file: nil, output: output)
    self.output = output
    self.terminalColumns = terminalColumns
    rows.beforeRow = { [unowned self] out in eraseStatus(&out) }
    rows.afterRow = { [unowned self] label, measurement in note(label, measurement) }
  }

  var fieldDetail: FieldDetail { .none }

  func consume(_ frame: inout DissectedFrame) -> Bool {
    frames += 1
    let open = rows.consume(&frame)
    if rowsWritten {
      rowsWritten = false
      drawStatus(&rows.out)
    }
    return open
  }

  func inputIdle() {
    if !statusShown { drawStatus(&rows.out) }
    output.handOver(&rows.out)
    if output.isClosed { whenOutputCloses?() }
  }

  func finish(_ end: FrameStream.End) {
    rows.finish(end)
    // The status line stays as the last word, ended.
    if statusShown { rows.out.byte(0x0A) }
    statusShown = false
    // The rows took the output for the run: it goes back.
    output.buffer = rows.out
  }

  func note(_ label: String, _ measurement: HeartRateMeasurement) {
    measurements += 1
    rowsWritten = true
    if let index = straps.firstIndex(where: { $0.label == label }) {
      straps[index].bpm = measurement.bpm
      straps[index].contact = measurement.sensorContact
    } else if straps.count < Self.maximumStraps {
      straps.append((label, measurement.bpm, measurement.sensorContact))
    }
  }

  func eraseStatus(_ out: inout OutputBuffer) {
    guard statusShown else { return }
    out.append("\r\u{1B}[K")
    statusShown = false
  }

  /// "♥ 00:22:D0:AA:BB:CC 72 bpm · conn 64 (peer unknown) 80 bpm (no contact) │ 1234 frames, 56 measurements",
  /// cut to the terminal's width.
  func drawStatus(_ out: inout OutputBuffer) {
    guard let columns = terminalColumns else { return }
    var text = straps.isEmpty ? "waiting for heart-rate measurements" : straps.map { strap in
      "\(strap.label) \(strap.bpm) bpm" + (strap.contact == .notDetected ? " (no contact)" : "")
    }.joined(separator: " · ")
    text += " | \(frames) frame\(frames == 1 ? "" : "s"), \(measurements) measurement\(measurements == 1 ? "" : "s")"
    if text.count > columns - 1 { text = String(text.prefix(max(columns - 2, 0))) + "…" }
    out.append("\r\u{1B}[K")
    out.append(string: text)
    statusShown = true
  }
}
