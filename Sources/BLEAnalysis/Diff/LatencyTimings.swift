import BLECore
import BLEDecoder

/// What a capture's ATT latency measures, by where it was timed. Latencies are compared only
/// when both captures timed them the same way.
package enum LatencyClock: String, Sendable, Hashable, CaseIterable {
  /// An HCI capture of the end that asked: from the request its host sent to the answer its
  /// host got, the whole round trip through both controllers and the air.
  case askingHost = "asking_host"
  /// An HCI capture of the end that answered: from the request its host got to the answer it
  /// sent, its own answer time.
  case answeringHost = "answering_host"
  /// A sniffer: from the request on the air to the answer on the air, which comes a connection
  /// event or more later (a server answers in a later event, never in the request's).
  case air

  /// How the numbers were taken, for the sentences that name them.
  package var words: String {
    switch self {
    case .askingHost: return "at the asking host (HCI: the round trip)"
    case .answeringHost: return "at the answering host (HCI: its own answer time)"
    case .air: return "on the air (sniffed: an answer comes a connection event or more after its request)"
    }
  }
}

/// The ATT latencies of one capture, by procedure (the request's opcode, an indication's),
/// by which end asked (the central or the peripheral: two client stacks are two measures) and
/// by how the capture timed them. Bounded: at most `maximumKeys` groups (the opcodes that have
/// answers make far fewer).
package struct LatencyTimings: Sendable {
  package static let maximumKeys = 64

  package struct Key: Hashable, Sendable {
    package var opcode: UInt8
    /// Whether the central sent the request (or the indication).
    package var centralAsked: Bool
    package var clock: LatencyClock
  }

  package struct Timing: Sendable {
    /// Microseconds.
    package var sketch = QuantileSketch()
  }

  package internal(set) var timings: [Key: Timing] = [:]
  /// Answers not counted because the groups were full.
  package internal(set) var notCounted = 0

  package init() {}

  /// Counts an answer's latency.
  mutating func add(_ key: Key, microseconds: Int64) {
    guard timings[key] != nil || timings.count < Self.maximumKeys else {
      notCounted = notCounted.saturatingAdd(1)
      return
    }
    timings[key, default: Timing()].sketch.add(Double(microseconds))
  }

  /// The groups of the requests one end sent, by opcode and clock.
  func asked(byCentral central: Bool) -> [Key: Timing] { timings.filter { $0.key.centralAsked == central } }
}
