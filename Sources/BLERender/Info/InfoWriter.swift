import BLEAnalysis
import BLECore

/// `info`'s block for one file: name, format, frames, start and duration, records by kind,
/// damage skipped.
package enum InfoWriter {
  package static func write(_ inventory: CaptureInventory, file: String, format: String, to out: inout OutputBuffer) {
    out.append(string: "file:     \(file)\n")
    out.append(string: "format:   \(format)\n")
    out.append(string: "frames:   \(inventory.frames)\n")
    if let first = inventory.first {
      out.append("start:    ")
      out.utcDateTime(first)
      out.append(" UTC\nduration: ")
      out.seconds(Timestamp.elapsed(from: first, to: inventory.last))
      out.append(" s\n")
    }
    for (kind, count) in inventory.kinds { out.append(string: "  \(kind): \(count)\n") }
    let skipped = inventory.damage
    if skipped.places > 0 {
      out.append(string: "skipped:  \(skipped.bytes) damaged bytes in \(skipped.places) place\(skipped.places == 1 ? "" : "s")\n")
    }
  }
}
