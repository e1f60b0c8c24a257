import BLECore

/// A value per direction of a link.
public struct DirectionalPair<Value: Sendable>: Sendable {
  public var hostToController: Value
  public var controllerToHost: Value

  public init(_ value: Value) {
    hostToController = value
    controllerToHost = value
  }

  public subscript(direction: Direction) -> Value {
    get { direction == .hostToController ? hostToController : controllerToHost }
    // In place: a get-then-set would copy a queue held here on every append (quadratic).
    _modify {
      if direction == .hostToController { yield &hostToController } else { yield &controllerToHost }
    }
  }
}

extension Direction {
  public var opposite: Direction { self == .hostToController ? .controllerToHost : .hostToController }
}

/// Rebuilds L2CAP PDUs from ACL fragments of one connection and direction.
///
/// A start fragment (packet boundary 00 or 10; 11 on AMP) carries the 4-byte basic header whose
/// length says how many bytes the PDU has; continuations (01) add to it. At most one PDU is
/// buffered, so memory is bounded by the largest L2CAP PDU (65 539 bytes).
/// The corresponding specification is Core Vol 4, Part E, §5.4.2 and Vol 3, Part A, §3.
public struct ACLReassembler: Sendable {
  /// The PDU so far, L2CAP header included; empty when none is in progress.
  var buffer: [UInt8] = []
  /// Total bytes of the PDU (L2CAP length + 4); nil until the first two bytes are in.
  var expected: Int?
  var firstFrame = 0
  var fragments = 0

  public init() {}

  public var isInProgress: Bool { !buffer.isEmpty }

  /// What one ACL fragment did.
  public enum Outcome: Sendable {
    /// The PDU is complete: its bytes and the frames it spans (first, fragments).
    case complete([UInt8], firstFrame: Int, fragments: Int)
    /// More fragments are needed: bytes held and bytes expected (nil when still unknown).
    case incomplete(have: Int, expected: Int?, firstFrame: Int)
    /// The fragment could not be used (a continuation with nothing to continue).
    case dropped
  }

  /// Adds the payload of one ACL packet. Diagnostics go to `diagnostics`.
  public mutating func append(
    _ payload: ByteView, isStart: Bool, frame: Int, diagnostics: inout [Diagnostic]
  ) -> Outcome {
    if isStart {
      if isInProgress {
        diagnostics.append(Diagnostic(.l2capPDUInterrupted, "a new L2CAP PDU starts while the one from #\(firstFrame) is incomplete (\(buffer.count) of \(expected.map(String.init) ?? "?") bytes); that one is dropped"))
      }
      buffer.removeAll(keepingCapacity: true)
      buffer.append(contentsOf: payload)
      firstFrame = frame
      fragments = 1
      expected = nil
    } else {
      guard isInProgress else {
        diagnostics.append(Diagnostic(.l2capContinuationWithoutStart, "continuation fragment without a start (\(payload.count) bytes dropped)"))
        return .dropped
      }
      buffer.append(contentsOf: payload)
      fragments += 1
    }
    if expected == nil, buffer.count >= 2 {
      expected = (Int(buffer[0]) | Int(buffer[1]) << 8) + 4
    }
    guard let expected, buffer.count >= expected else {
      if buffer.isEmpty { return .dropped }
      return .incomplete(have: buffer.count, expected: self.expected, firstFrame: firstFrame)
    }
    if buffer.count > expected {
      diagnostics.append(Diagnostic(.l2capPDUTrailingBytes, "\(buffer.count - expected) bytes more than the L2CAP length; ignored"))
      buffer.removeSubrange(expected...)
    }
    let pdu = buffer
    buffer = []
    self.expected = nil
    return .complete(pdu, firstFrame: firstFrame, fragments: fragments)
  }

  /// Forgets a PDU in progress (the link went away, or a piece of it was lost); returns a note,
  /// ending with `why`, when one was lost.
  public mutating func reset(_ why: String = "when the link closed") -> String? {
    guard isInProgress else { return nil }
    defer {
      buffer = []
      expected = nil
    }
    return "an L2CAP PDU from #\(firstFrame) was incomplete (\(buffer.count) of \(expected.map(String.init) ?? "?") bytes) \(why)"
  }
}
