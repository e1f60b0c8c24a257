import BLECore

/// Pairs ATT PDUs: a response answers the request pending in the other direction (ATT is
/// sequential: one request per client direction), a confirmation the pending indication.
/// Records which frame was answered and how long it took.
enum ATTPairing {
  /// Finds what `pdu` answers, takes it off the bearer, and notes it on the frame.
  static func pair(_ pdu: inout ATTPDU, _ bearer: inout ATTBearer, _ frame: inout DissectedFrame) {
    let direction = pdu.link.direction
    switch pdu.kind {
    case .response:
      pdu.answered = bearer.pending[direction.opposite]
      bearer.pending[direction.opposite] = nil
      guard let pending = pdu.answered else {
        frame.diagnostics.append(Diagnostic(.attResponseWithoutRequest, "\(ATTLayer.opName(pdu.opcode)) without a pending request"))
        return
      }
      if pdu.opcode != 0x01 && pdu.opcode != pending.opcode &+ 1 {
        frame.diagnostics.append(Diagnostic(
          .attResponseMismatch, "\(ATTLayer.opName(pdu.opcode)) does not answer the pending \(ATTLayer.opName(pending.opcode)) (#\(pending.frame))"))
      }
      frame.fields.uint("request_frame", "Answers frame", pending.frame)
      answered(pending, pdu.link, &frame)
    case .confirmation:
      pdu.answered = bearer.pendingIndication[direction.opposite]
      bearer.pendingIndication[direction.opposite] = nil
      guard let pending = pdu.answered else {
        frame.diagnostics.append(Diagnostic(.attConfirmationWithoutIndication, "Handle Value Confirmation without a pending indication"))
        return
      }
      frame.fields.uint("request_frame", "Confirms frame", pending.frame)
      answered(pending, pdu.link, &frame)
      if let handle = pending.handle { frame.fields.addVerbose("handle", "Handle", .unsigned(UInt64(handle), .hex(4))) }
    case .request:
      if let pending = bearer.pending[direction] {
        frame.diagnostics.append(Diagnostic(.attRequestWhilePending, "request sent while \(ATTLayer.opName(pending.opcode)) (#\(pending.frame)) is still pending"))
      }
    default:
      break
    }
  }

  /// Keeps a request (and an indication, which its step queues itself) pending on the bearer.
  static func open(_ pdu: ATTPDU, _ bearer: inout ATTBearer) {
    if pdu.kind == .request { bearer.pending[pdu.link.direction] = pdu.opened }
  }

  /// The answered request on the frame's facts, and the time since it. Timestamps come from the
  /// file: their difference is clamped, and one that runs backwards is said, not shown as a latency.
  static func answered(_ pending: PendingRequest, _ link: ATTLinkContext, _ frame: inout DissectedFrame) {
    frame.att?.requestFrame = pending.frame
    frame.att?.requestOpcode = pending.opcode
    let elapsed = Timestamp.elapsed(from: pending.timestamp, to: link.timestamp)
    if elapsed < 0 {
      frame.diagnostics.append(Diagnostic(.attTimestampBackwards, "timestamp precedes that of frame #\(pending.frame): no latency"))
      return
    }
    frame.att?.latency = elapsed
    frame.fields.real("latency_ms", "Latency", Double(elapsed) / 1000, places: 3, unit: "ms")
  }
}
