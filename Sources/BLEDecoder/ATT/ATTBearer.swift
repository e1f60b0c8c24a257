import BLECore

/// What an ATT opcode is, for pairing and for deciding which side is the server.
public enum ATTMethodKind: Sendable, Equatable {
  case request, response, command, notification, indication, confirmation, unknown

  public init(opcode: UInt8) {
    switch opcode {
    case 0x02, 0x04, 0x06, 0x08, 0x0A, 0x0C, 0x0E, 0x10, 0x12, 0x16, 0x18, 0x20: self = .request
    case 0x01, 0x03, 0x05, 0x07, 0x09, 0x0B, 0x0D, 0x0F, 0x11, 0x13, 0x17, 0x19, 0x21: self = .response
    case 0x1B, 0x23: self = .notification
    case 0x1D: self = .indication
    case 0x1E: self = .confirmation
    default: self = opcode & 0x40 != 0 ? .command : .unknown
    }
  }

  /// True for PDUs a client sends to a server.
  public var isClientToServer: Bool {
    self == .request || self == .command || self == .confirmation
  }
}

/// A request waiting for its response, with what the response needs to be understood.
struct PendingRequest: Sendable {
  var opcode: UInt8
  var frame: Int
  var timestamp: Int64
  var handle: UInt16?
  var offset: UInt16 = 0
  var startHandle: UInt16 = 0
  var endHandle: UInt16 = 0
  /// Read By Type / Read By Group Type / Find By Type Value attribute type.
  var type: BluetoothUUID?
  /// Lists only a few requests have, kept out of line: most requests have neither, and empty
  /// arrays still cost a release per PDU.
  struct Lists: Sendable {
    var findValue: [UInt8] = []
    var handles: [UInt16] = []
  }
  var lists: Lists?
  /// Find By Type Value: the value searched for (a service UUID in primary service discovery).
  var findValue: [UInt8] {
    get { lists?.findValue ?? [] }
    set { lists = Lists(findValue: newValue, handles: lists?.handles ?? []) }
  }
  /// Read Multiple (Variable): the handles asked for.
  var handles: [UInt16] {
    get { lists?.handles ?? [] }
    set { lists = Lists(findValue: lists?.findValue ?? [], handles: newValue) }
  }
}

/// A long read in progress: Read, then Read Blob at increasing offsets.
struct LongRead: Sendable {
  var handle: UInt16
  var value: [UInt8]
  var firstFrame: Int
}

/// One queued Prepare Write.
struct PreparedWrite: Sendable {
  var handle: UInt16
  var offset: UInt16
  var part: [UInt8]
  var frame: Int
}

/// The Prepare Write requests a client queued and has not executed yet, bounded: an attribute
/// value is at most 512 bytes (Core Vol 3 Part F 3.2.9) and servers answer Prepare Queue Full
/// long before these limits, so parts beyond them are counted, not kept.
struct PrepareQueue: Sendable {
  static let maximumParts = 1024
  static let maximumBytes = 65_536
  var parts: [PreparedWrite] = []
  var bytes = 0
  /// Parts not kept because the queue was full.
  var dropped = 0
  /// The latest request, kept or not, which its response should echo.
  var latest: PreparedWrite?

  var isEmpty: Bool { parts.isEmpty && dropped == 0 }
  var count: Int { parts.count + dropped }

  /// Queues `part`; false when the queue is full and the part was only counted.
  mutating func append(_ part: PreparedWrite) -> Bool {
    latest = part
    guard parts.count < Self.maximumParts, part.part.count <= Self.maximumBytes - bytes else {
      dropped += 1
      return false
    }
    parts.append(part)
    bytes += part.part.count
    return true
  }
}

/// State of one ATT bearer (the LE fixed channel 0x0004, or one EATT channel).
///
/// ATT is sequential per bearer: one outstanding request per client direction, one outstanding
/// indication per server direction. Requests are keyed by the direction they travelled.
public struct ATTBearer: Sendable {
  /// ATT_MTU in force (23 on LE until Exchange MTU completes; the channel MTU on EATT).
  public var mtu: Int
  var clientMTU: UInt16?
  var pending = DirectionalPair<PendingRequest?>(nil)
  var pendingIndication = DirectionalPair<PendingRequest?>(nil)
  var longRead = DirectionalPair<LongRead?>(nil)
  var prepared = DirectionalPair(PrepareQueue())

  public init(mtu: Int = 23) { self.mtu = mtu }
}
