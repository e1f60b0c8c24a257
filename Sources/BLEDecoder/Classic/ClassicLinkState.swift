import BLECore

/// The BR/EDR protocols' state of one link (its connection's `link.classic`): SDP transactions
/// and what the records said, RFCOMM's multiplexer session.
struct ClassicLinkState: Sendable {
  var sdp = SDPLinkState()
  var rfcomm = RFCOMMLinkState()

  /// Bytes held by responses still being joined.
  var heldBytes: Int { (sdp.sessions.hostToController.partial?.bytes.capacity ?? 0) + (sdp.sessions.controllerToHost.partial?.bytes.capacity ?? 0) }

  /// Forgets the responses being joined; returns how many there were.
  mutating func dropPartialResponses() -> Int {
    var dropped = 0
    for direction in [Direction.hostToController, .controllerToHost] where sdp.sessions[direction].partial != nil {
      sdp.sessions[direction].partial = nil
      dropped += 1
    }
    return dropped
  }
}

/// SDP on one link: a session per side that asks (by the direction its requests travel), and
/// the RFCOMM server channels each side's records advertised.
struct SDPLinkState: Sendable {
  var sessions = DirectionalPair(SDPSession())
  /// By the direction the advertising side's frames travel: its RFCOMM server channels and the
  /// services on them (a side has at most 30).
  var rfcommServices = DirectionalPair([UInt8: BluetoothUUID]())

  /// The service advertised on `channel` by the side whose frames travel `direction`.
  func rfcommService(channel: UInt8, from direction: Direction) -> BluetoothUUID? { rfcommServices[direction][channel] }
}

/// One client's SDP exchange: its last request, and the response being joined.
struct SDPSession: Sendable {
  var request: SDPRequest?
  var partial: SDPPartialResponse?
  /// The continuation state of a response too long to join: its later parts are not joined
  /// either, and say nothing more.
  var abandoned: [UInt8]?
  /// The service class each record handle was found by (a Service Search Request's pattern):
  /// names the profile-specific attributes of a Service Attribute Response.
  var recordClasses = BoundedDictionary<UInt32, BluetoothUUID>(capacity: 64)
}

struct SDPRequest: Sendable {
  var pdu: UInt8
  var transaction: UInt16
  var frame: Int
  var pattern: [BluetoothUUID]
  var handle: UInt32?
  var continuation: [UInt8]
}

/// A response split over several PDUs, joined until the one without a continuation state.
struct SDPPartialResponse: Sendable {
  var pdu: UInt8
  var bytes: [UInt8]
  var firstFrame: Int
  var parts: Int
  /// The continuation state the last part gave: the next request carries it.
  var continuation: [UInt8]
  /// The request's search pattern, for naming the records' attributes.
  var pattern: [BluetoothUUID]
  var handle: UInt32?
}

/// RFCOMM on one link (one multiplexer session: RFCOMM §5.2 allows one between two devices).
struct RFCOMMLinkState: Sendable {
  /// Which way the frames of the side that started the multiplexer travel: learned from the
  /// SABM on DLCI 0, or else from a frame's C/R bit.
  var initiator: Direction?
  /// DLCIs granted credit-based flow control, or refused it.
  var creditFlow: UInt64 = 0
  var noCreditFlow: UInt64 = 0

  /// Whether a UIH frame with P/F set on `dlci` carries a credits octet, and whether that is
  /// known from the negotiation (else inferred: every RFCOMM 1.1 stack grants credit-based flow
  /// control, and without it P/F is not set on UIH frames).
  func carriesCredits(dlci: UInt8) -> (credits: Bool, inferred: Bool) {
    let bit: UInt64 = 1 << UInt64(dlci & 63)
    if noCreditFlow & bit != 0 { return (false, false) }
    return (true, creditFlow & bit == 0 && creditFlow == 0)
  }
}
