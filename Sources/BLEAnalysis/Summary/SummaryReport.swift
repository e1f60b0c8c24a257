import BLECore
import BLEDecoder

/// A summary with what the command knows of its file.
package struct SummaryReport {
  package var file: String
  package var format: String
  package var summary: SessionSummary
  /// The damage that ended the read, if it did not end cleanly.
  package var damage: String?
  package var skippedBytes: Int64 = 0
  package var skippedPlaces = 0
  /// GATT tables not from the capture's discovery (a map, the cache, a layout).
  package var tablesFromElsewhere: [(server: GATTServerIdentity, provenance: GATTMapProvenance)] = []
  /// What `check` finds in the capture (summary gives the counts per rule).
  package var findings: ConformanceReport?

  package init(file: String, format: String, summary: SessionSummary) {
    self.file = file
    self.format = format
    self.summary = summary
  }
}
