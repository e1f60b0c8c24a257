import BLECore

/// Where a difference shows in one capture: a frame and its time, in seconds from the
/// capture's first frame.
public struct DifferencePlace: Sendable, Equatable {
  public var frame: Int
  public var seconds: Double
  public init(frame: Int, seconds: Double) {
    self.frame = frame
    self.seconds = seconds
  }
}

/// One difference between two sessions, in words, with the class `--ignore` silences and
/// where it first shows in each capture.
public struct SessionDifference: Sendable {
  public enum Kind: String, Sendable, CaseIterable {
    case devices, gatt, parameters, mtu, phy, security, disconnect, procedure, reads, writes, values, timing, air, rules
  }
  public var kind: Kind
  /// The device (or connection) it is about.
  public var subject: String
  public var text: String
  /// Where it first shows in A and in B; nil where that capture has no such place (something
  /// only the other side did).
  public var inA: DifferencePlace?
  public var inB: DifferencePlace?
  /// Every place it shows, for `-v` (at most `ExchangeLedger.maximumOccurrences` per value
  /// kept; `placesA`/`placesB` say how many there were when that is more than listed).
  public var everyA: [DifferencePlace] = []
  public var everyB: [DifferencePlace] = []
  public var placesA: Int?
  public var placesB: Int?
  /// How many exchanges each side had, when the difference is about a count.
  public var countA: Int?
  public var countB: Int?
  public var a: String?
  public var b: String?

  public init(
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
  public var time: Double { inB?.seconds ?? inA?.seconds ?? 0 }
}
