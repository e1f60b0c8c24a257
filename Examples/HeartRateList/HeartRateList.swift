// A library example: lists every heart-rate value in a capture through the public API.
//
//   swift run HeartRateList captures/hr_strap_session.btsnoop
//
// One line per Heart Rate Measurement a device sent (notification, indication or read): seconds
// since the capture's first frame, the device, bpm, and the RR intervals in milliseconds.

import BLECapture
import BLECore
import BLEDecoder
import BLEEngine
import Foundation

/// Receives the dissected frames in capture order and prints the measurements they carry.
final class HeartRatePrinter: FrameConsumer {
  private var firstTimestamp: Int64?

  func consume(_ frame: inout DissectedFrame) -> Bool {
    let timestamp = frame.record.timestamp
    let first = firstTimestamp ?? timestamp
    firstTimestamp = first
    // The ATT attributes the frame is about; a decoded value is typed by its characteristic.
    for fact in frame.attributes {
      guard let measurement = fact.value(as: HeartRateMeasurement.self) else { continue }
      // Values a device sent; a write carries what the other side sent it.
      guard fact.operation == .notification || fact.operation == .indication || fact.operation == .read else { continue }
      let seconds = Double(Timestamp.elapsed(from: first, to: timestamp)) / 1_000_000
      var line = String(format: "%10.6f", seconds) + "  " + device(frame) + "  " + String(format: "%3d", Int32(measurement.bpm)) + " bpm"
      if !measurement.rrIntervals.isEmpty {
        // To 0.1 ms, halves away from zero (as `bledissect hr` shows them).
        let milliseconds = measurement.rrIntervalsMilliseconds.map { "\(($0 * 10).rounded() / 10)" }
        line += "  RR " + milliseconds.joined(separator: " ") + " ms"
      }
      print(line)
    }
    return true
  }

  /// The device that sent the frame's value: the peer, or the capturing host's adapter when the
  /// host sent it (a capture taken on the strap itself).
  private func device(_ frame: DissectedFrame) -> String {
    let sentByHost = frame.record.direction == .hostToController
    if !sentByHost, let peer = frame.connection?.peer { return peer.description }
    let adapter = frame.connection?.adapter ?? frame.record.adapter
    return sentByHost ? "hci\(adapter)" : "hci\(adapter) connection \(frame.connection?.handle ?? 0)"
  }
}

@main
struct HeartRateList {
  static func main() {
    guard CommandLine.arguments.count == 2 else {
      FileHandle.standardError.write(Data("usage: HeartRateList <capture>\n".utf8))
      exit(64)
    }
    let path = CommandLine.arguments[1]
    do {
      // The format (btsnoop, PacketLogger, pcap, pcapng, gzip, bugreports) is read from the content.
      let reader = try CaptureFile.open(path: path)
      let end = FrameStream(source: reader).run(into: HeartRatePrinter())
      if let failure = end.failure {
        // The frames before the damage were read and printed.
        FileHandle.standardError.write(Data("\(path): \(failure.message)\n".utf8))
        exit(failure.exitStatus)
      }
    } catch {
      FileHandle.standardError.write(Data("\(path): \(error.message)\n".utf8))
      exit(error.exitStatus)
    }
  }
}
