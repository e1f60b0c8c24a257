import BLECore

/// Where a difference shows in one capture: a frame and its time, in seconds from the
/// capture's first frame.
package struct DifferencePlace: Sendable, Equatable {
  package var frame: Int
  package var seconds: Double
  package init(frame: Int, seconds: Double) {
    self.frame = frame
    self.seconds = seconds
  }
}

/// One difference between two sessions, in words, with the class `--ignore` silences and
/// where it first shows in each capture.
package struct SessionDifference: Sendable {
  package enum Kind: String, Sendable, CaseIterable {
    case devices, gatt, parameters, mtu, phy, security, disconnect, procedure, reads, writes, values, timing, air, rules
  }
  package var kind: Kind
  /// The device (or connection) it is about.
  package var subject: String
  package var text: String
  /// Where it first shows in A and in B; nil where that capture has no such place (something
  /// only the other side did).
  package var inA: DifferencePlace?
  package var inB: DifferencePlace?
  /// Every place it shows, for `-v` (at most `ExchangeLedger.maximumOccurrences` per value
  /// kept; `placesA`/`placesB` say how many there were when that is more than listed).
  package var everyA: [DifferencePlace] = []
  package var everyB: [DifferencePlace] = []
  package var placesA: Int?
  package var placesB: Int?
  /// How many exchanges each side had, when the difference is about a count.
  package var countA: Int?
  package var countB: Int?
  package var a: String?
  package var b: String?

  package init(
    kind: Kind, subject: String, text: String, inA: DifferencePlace? = nil, inB: DifferencePlace? = nil, a: String? = nil, b: String? = nil
  ) {
    self.kind = kind
    self.subject = subject
    self.text = text
    self.inA = inA
    self.inB = inB
    self.a = a
    self.b = b
  }

  /// For ordering: where it shows in B, else in A (seconds).
  package var time: Double { inB?.seconds ?? inA?.seconds ?? 0 }
}
