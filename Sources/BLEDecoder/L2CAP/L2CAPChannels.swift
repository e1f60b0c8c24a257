import BLECore

/// A dynamic (credit-based) channel as seen in one direction: frames travelling that way to
/// this CID belong to it.
struct DynamicChannel: Sendable {
  var psm: UInt16
  /// The receiving side's MTU and MPS for this direction.
  var mtu: UInt16
  var mps: UInt16
  /// The ATT bearer key when the channel carries ATT (EATT on PSM 0x0027, ATT over BR/EDR on 0x001F).
  var bearerKey: UInt32?
  /// BR/EDR basic mode: each PDU's payload is the upper layer's PDU, with no SDU length.
  var basic = false
  var sdu = SDUReassembler()

  /// Everything but the reassembly state.
  struct Settings: Sendable {
    var psm: UInt16
    var mtu: UInt16
    var mps: UInt16
    var bearerKey: UInt32?
    var basic: Bool
    init(_ channel: DynamicChannel) {
      (psm, mtu, mps, bearerKey, basic) = (channel.psm, channel.mtu, channel.mps, channel.bearerKey, channel.basic)
    }
  }

  init(psm: UInt16, mtu: UInt16, mps: UInt16, bearerKey: UInt32? = nil, basic: Bool = false) {
    (self.psm, self.mtu, self.mps, self.bearerKey, self.basic) = (psm, mtu, mps, bearerKey, basic)
  }
}

/// Rebuilds SDUs from K-frames: the first carries the SDU length, the rest only data.
///
/// The corresponding specification is Core Vol 3, Part A, §3.4.3 and §7.
struct SDUReassembler: Sendable {
  var buffer: [UInt8] = []
  var expected = 0
  var firstFrame = 0
  var frames = 0

  enum Outcome {
    case complete([UInt8], firstFrame: Int, frames: Int)
    case incomplete(have: Int, expected: Int)
  }

  var isInProgress: Bool { frames > 0 }

  mutating func append(_ payload: ByteView, frame: Int, mtu: Int?, diagnostics: inout [Diagnostic]) -> Outcome? {
    if buffer.isEmpty && frames == 0 {
      guard payload.count >= 2 else {
        diagnostics.append(Diagnostic(.l2capSDUStartTooShort, "first K-frame of an SDU is \(payload.count) bytes, too short for the SDU length"))
        return nil
      }
      expected = Int(payload[payload.startIndex]) | Int(payload[payload.startIndex + 1]) << 8
      if let mtu, expected > mtu {
        diagnostics.append(Diagnostic(.l2capSDUExceedsMTU, "SDU length \(expected) exceeds the channel MTU \(mtu)"))
      }
      firstFrame = frame
      frames = 1
      buffer.append(contentsOf: payload.dropFirst(2))
    } else {
      frames += 1
      buffer.append(contentsOf: payload)
    }
    if buffer.count < expected { return .incomplete(have: buffer.count, expected: expected) }
    if buffer.count > expected {
      diagnostics.append(Diagnostic(.l2capSDUTrailingBytes, "\(buffer.count - expected) bytes beyond the SDU length; ignored"))
      buffer.removeSubrange(expected...)
    }
    defer {
      buffer = []
      frames = 0
    }
    return .complete(buffer, firstFrame: firstFrame, frames: frames)
  }
}

/// Per-connection L2CAP state: reassembly, dynamic channels, signaling requests in flight.
struct L2CAPChannels: Sendable {
  struct Key: Hashable, Sendable { var direction: Direction; var cid: UInt16 }
  struct PendingConnect: Sendable {
    var psm: UInt16
    var sourceCIDs: [UInt16]
    var mtu: UInt16
    var mps: UInt16
    var basic = false
  }
  /// Channels by the direction frames travel and their destination CID; a link has a few, a
  /// hostile capture may open thousands (the oldest are then forgotten).
  var channels = BoundedDictionary<Key, DynamicChannel>(capacity: 256)
  /// Connection requests by (direction they travelled, identifier): at most 256 identifiers.
  var pending = BoundedDictionary<Key, PendingConnect>(capacity: 512)

  /// Learns dynamic channels from signaling commands that travelled in `direction`.
  mutating func learn(_ commands: [SignalingCommand], direction: Direction) -> [UInt32] {
    var openedBearers: [UInt32] = []
    for command in commands {
      switch command {
      case let .leCreditConnectionRequest(identifier, psm, source, mtu, mps, _):
        pending[Key(direction: direction, cid: UInt16(identifier))] = PendingConnect(psm: psm, sourceCIDs: [source], mtu: mtu, mps: mps)
        channels[Key(direction: direction.opposite, cid: source)] = DynamicChannel(psm: psm, mtu: mtu, mps: mps)
      case let .creditBasedConnectionRequest(identifier, psm, mtu, mps, _, sources):
        pending[Key(direction: direction, cid: UInt16(identifier))] = PendingConnect(psm: psm, sourceCIDs: sources, mtu: mtu, mps: mps)
        for source in sources { channels[Key(direction: direction.opposite, cid: source)] = DynamicChannel(psm: psm, mtu: mtu, mps: mps) }
      case let .leCreditConnectionResponse(identifier, destination, mtu, mps, _, result):
        openedBearers += answer(identifier: identifier, destinations: [destination], mtu: mtu, mps: mps, success: result == 0, direction: direction)
      case let .creditBasedConnectionResponse(identifier, mtu, mps, _, result, destinations):
        // ECRED: some channels may be refused (CID 0) even when others open.
        openedBearers += answer(identifier: identifier, destinations: destinations, mtu: mtu, mps: mps, success: result == 0 || destinations.contains { $0 != 0 }, direction: direction)
      case .creditBasedReconfigureRequest:
        // MTU/MPS changes only loosen limits we check loosely; channels stay as they are.
        break
      case let .connectionRequest(identifier, psm, source):
        pending[Key(direction: direction, cid: UInt16(identifier))] = PendingConnect(psm: psm, sourceCIDs: [source], mtu: 672, mps: 0xFFFF, basic: true)
        channels[Key(direction: direction.opposite, cid: source)] = DynamicChannel(psm: psm, mtu: 672, mps: 0xFFFF, basic: true)
      case let .connectionResponse(identifier, destination, _, result):
        // Result 1 is "pending": a final response follows with the same identifier.
        if result != 1 {
          openedBearers += answer(identifier: identifier, destinations: [destination], mtu: 672, mps: 0xFFFF, success: result == 0, direction: direction)
        }
      case let .disconnectionResponse(_, destination, source):
        // Sent by the side that owns `destination`: frames to it travel the other way.
        channels[Key(direction: direction.opposite, cid: destination)] = nil
        channels[Key(direction: direction, cid: source)] = nil
      default:
        break
      }
    }
    return openedBearers
  }

  mutating func answer(identifier: UInt8, destinations: [UInt16], mtu: UInt16, mps: UInt16, success: Bool, direction: Direction) -> [UInt32] {
    let requestKey = Key(direction: direction.opposite, cid: UInt16(identifier))
    guard let request = pending.removeValue(forKey: requestKey) else { return [] }
    var bearers: [UInt32] = []
    for (index, source) in request.sourceCIDs.enumerated() {
      let destination = index < destinations.count ? destinations[index] : 0
      let toRequester = Key(direction: direction, cid: source)
      guard success, destination != 0 else {
        channels[toRequester] = nil
        continue
      }
      // Frames from the requester travel the way the request did, to the responder's CID.
      var toResponder = DynamicChannel(psm: request.psm, mtu: mtu, mps: mps, basic: request.basic)
      // Key 4 is the fixed channel's bearer: a (hostile) source CID 0 never makes one.
      if request.psm == 0x0027 || (request.basic && request.psm == 0x001F), source != 0 {
        let key = UInt32(source) << 16 | UInt32(destination)
        toResponder.bearerKey = key
        channels[toRequester]?.bearerKey = key
        bearers.append(key)
      }
      channels[Key(direction: direction.opposite, cid: destination)] = toResponder
    }
    return bearers
  }
}
