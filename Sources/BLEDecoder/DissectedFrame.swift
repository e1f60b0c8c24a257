import BLECore

/// A connection as labelled on a frame: which link it is and who is on the other end.
public struct ConnectionLabel: Sendable, Equatable {
  public var adapter: UInt16
  public var handle: UInt16
  /// Counts the connections that used this handle on this controller, from 1.
  public var generation: Int
  public var peer: BDAddr?
  public var peerType: AddressType?
}

/// A piece of a frame's one-line summary.
public enum SummaryPart: Sendable, Equatable {
  case text(StaticString)
  case number(Int)

  public static func == (a: SummaryPart, b: SummaryPart) -> Bool {
    switch (a, b) {
    case let (.text(x), .text(y)): return x.description == y.description
    case let (.number(x), .number(y)): return x == y
    default: return false
    }
  }
}

/// Everything decoded from one record. Reused across frames: `reset` keeps the buffers.
public struct DissectedFrame: Sendable {
  /// 1-based, the same numbering as Wireshark.
  public var number = 0
  public var record = CaptureRecord(timestamp: 0, direction: nil, kind: .other(0), bytes: [])
  /// The protocol item's name for the header line ("LE Set Scan Enable", "Disconnection Complete").
  public var title: StaticString = ""
  /// Short extra words for the header line ("enabled", "reason Remote User Terminated Connection").
  public var summary = ""
  /// More words after `summary`, kept as parts so the frequent frames (ACL data, completed
  /// packets) build no strings; renderers write them straight out.
  public var summaryParts: [SummaryPart] = []
  public var connection: ConnectionLabel?
  /// The HCI-level fields (command, event, data packet header, note).
  public var fields = FieldList()
  /// Set when the bytes of some layer could not be decoded; the fields before it are kept.
  public var malformed: DecodeError?
  public var diagnostics: [Diagnostic] = []

  public init() {}

  public mutating func reset(number: Int, record: CaptureRecord) {
    self.number = number
    self.record = record
    title = ""
    summary = ""
    if !summaryParts.isEmpty { summaryParts.removeAll(keepingCapacity: true) }
    connection = nil
    fields.removeAll()
    malformed = nil
    if !diagnostics.isEmpty { diagnostics.removeAll(keepingCapacity: true) }
  }

  /// The whole summary as text (tests, tools); renderers write the parts directly.
  public var summaryText: String {
    var text = summary
    for part in summaryParts {
      switch part {
      case .text(let words): text += words.description
      case .number(let value): text += String(value)
      }
    }
    return text
  }
}
