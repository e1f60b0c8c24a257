import BLECore
import BLEDecoder

// What `bledissect summary` tells about one capture: the devices, the connection attempts, each
// connection's story and activity. Built by `SessionAnalyzer` in one pass, in bounded memory:
// every list has a limit (`SessionSummary.Limits`), and what goes past it is counted, not kept.
// Times are capture timestamps (µs since the Unix epoch), as hostile as the capture made them.

/// The summary of one capture.
public struct SessionSummary: Sendable {
  /// How many of each thing a summary keeps; past a limit things are counted only.
  public enum Limits {
    /// Devices (by address) described; reports from further addresses are counted.
    public static let devices = 1024
    /// Connection attempts listed one by one.
    public static let attempts = 1024
    /// Connections described; frames of further connections are counted only.
    public static let connections = 512
    /// Parameter updates listed per connection.
    public static let parameterUpdates = 32
    /// Characteristics (attribute handles) with activity per connection.
    public static let characteristics = 64
    /// Subscription changes (CCCD writes) listed per connection.
    public static let subscriptions = 64
    /// Longest silences kept per characteristic.
    public static let gaps = 3
    /// Error kinds counted per characteristic and per connection.
    public static let errorKinds = 16
    /// Heart-rate dropouts and contact-loss spans kept (the longest dropouts, the first spans).
    public static let spans = 16
    /// Characters kept of a name read from the capture.
    public static let nameLength = 64
  }

  /// Records read.
  public var frames = 0
  /// The first and last record's timestamps.
  public var firstTimestamp: Int64?
  public var lastTimestamp: Int64?
  /// Whether any HCI command was captured: without commands, who ended a link is unknown.
  public var sawCommands = false
  public var devices: [DeviceSummary] = []
  /// Advertising reports and connections of addresses beyond `Limits.devices`.
  public var untrackedDeviceReports = 0
  public var attempts: [ConnectionAttempt] = []
  /// Attempts beyond `Limits.attempts`, counted only.
  public var attemptsNotListed = 0
  public var connections: [ConnectionSummary] = []
  /// Connections beyond `Limits.connections`, counted only.
  public var connectionsNotListed = 0
  /// ATT request → response time per procedure (the request's opcode), over all connections.
  public var latencies: [ProcedureLatency] = []

  public init() {}

  /// Microseconds from the capture's first frame to `timestamp` (negative when the clock went back).
  public func offset(_ timestamp: Int64) -> Int64 {
    Timestamp.elapsed(from: firstTimestamp ?? timestamp, to: timestamp)
  }

  /// The capture's length in µs (0 for an empty capture).
  public var duration: Int64 {
    guard let firstTimestamp, let lastTimestamp else { return 0 }
    return Timestamp.elapsed(from: firstTimestamp, to: lastTimestamp)
  }
}

/// One device: seen advertising, or as the peer of a connection.
public struct DeviceSummary: Sendable {
  public var address: BDAddr
  public var addressType: AddressType?
  /// The identity address the device distributed when pairing (SMP Identity Address Information).
  public var identity: BDAddr?
  public var identityType: AddressType?
  /// The name from advertising (Complete or Shortened Local Name).
  public var advertisedName: String?
  /// The GAP Device Name read over GATT.
  public var deviceName: String?
  public var appearance: UInt16?
  /// The company of the advertised Manufacturer Specific Data.
  public var company: UInt16?
  /// The Device Information Manufacturer Name String.
  public var manufacturerName: String?
  public var advertisingReports = 0
  public var strongestRSSI: Int8?
  public var weakestRSSI: Int8?
  public var firstSeen: Int64
  public var lastSeen: Int64
  /// Connections to the device (also those beyond `Limits.connections`).
  public var connectionCount = 0
  /// The GATT services learned for it (from the dissector's final databases), in handle order.
  public var services: [ServiceEntry] = []

  public init(address: BDAddr, addressType: AddressType?, time: Int64) {
    self.address = address
    self.addressType = addressType
    firstSeen = time
    lastSeen = time
  }

  /// The name to show: the one read over GATT, else the advertised one.
  public var name: String? { deviceName ?? advertisedName }
}

/// A GATT service of a device's database.
public struct ServiceEntry: Sendable, Equatable {
  public var start: UInt16
  public var end: UInt16
  public var uuid: BluetoothUUID
  public var primary: Bool
  public init(start: UInt16, end: UInt16, uuid: BluetoothUUID, primary: Bool) {
    self.start = start
    self.end = end
    self.uuid = uuid
    self.primary = primary
  }
}

/// A request to connect and what became of it.
public struct ConnectionAttempt: Sendable, Equatable {
  public enum Outcome: Sendable, Equatable {
    /// Connected: the number of the connection in `SessionSummary.connections` (1-based; nil
    /// when the connection was beyond the limit).
    case connected(connection: Int?)
    /// The controller refused the command at once (Command Status with an error).
    case rejected(status: UInt8)
    /// Connection Complete came with an error status.
    case failed(status: UInt8)
    /// The host cancelled the attempt (and the controller confirmed it, or never answered).
    case cancelled
    /// No Connection Complete before the capture ended.
    case neverCompleted
  }

  /// The frame of the request; nil for a failed Connection Complete no request was seen for.
  public var frame: Int?
  public var time: Int64
  public var peer: BDAddr?
  public var peerType: AddressType?
  public var isLE: Bool
  public var outcome: Outcome
  /// The frame that settled it (Command Status, Connection Complete).
  public var endFrame: Int?
  public var cancelRequested = false
}

/// Who ended a link.
public enum DisconnectInitiator: String, Sendable {
  /// An HCI Disconnect for the handle came first, or the reason is 0x16 (Connection Terminated
  /// By Local Host).
  case localHost = "local_host"
  case peer
  /// The link was lost (0x08 Connection Timeout, 0x22 LL Response Timeout, 0x3E Failed To Be
  /// Established): neither side ended it.
  case linkLost = "link_lost"
  /// The capture does not tell (it shows no HCI commands).
  case unknown
}

/// Connection parameters at a moment.
public struct ParameterChange: Sendable, Equatable {
  public var frame: Int
  public var time: Int64
  /// 0 when the update succeeded; the parameters are then in force.
  public var status: UInt8
  public var parameters: ConnectionParameters
}

/// Pairing and encryption on a link.
public struct SecuritySummary: Sendable, Equatable {
  public enum Method: String, Sendable {
    case justWorks = "just_works"
    case passkeyEntry = "passkey_entry"
    case numericComparison = "numeric_comparison"
    case outOfBand = "out_of_band"
  }

  /// The frame of the first Pairing Request (or Security Request).
  public var pairingFrame: Int?
  public var pairingTime: Int64?
  /// LE Secure Connections (both sides set SC); nil when pairing features were not seen.
  public var secureConnections: Bool?
  public var method: Method?
  /// Pairing Failed's reason, and whether the local host sent it.
  public var failureReason: UInt8?
  public var failureSentByLocalHost: Bool?
  /// Keys distributed (SMP key distribution commands seen).
  public var keysDistributed = false
  /// Encryption on the link now (at disconnect, or at the capture's end).
  public var encrypted = false
  /// When encryption was first turned on.
  public var encryptedSince: Int64?
  /// Encryption Change events with an error status, and the last such status.
  public var encryptionFailures = 0
  public var lastEncryptionStatus: UInt8?

  /// Whether anything about security happened at all.
  public var isEmpty: Bool { pairingFrame == nil && !encrypted && encryptedSince == nil && encryptionFailures == 0 && failureReason == nil }
}

/// One connection (one generation of a handle).
public struct ConnectionSummary: Sendable {
  /// 1-based position in the summary's list.
  public var number: Int
  public var adapter: UInt16
  public var handle: UInt16
  public var generation: Int
  public var peer: BDAddr?
  public var peerType: AddressType?
  /// The local side's own address when the capture shows it (a sniffed link's central).
  public var localAddress: BDAddr?
  public var role: LinkRole?
  /// Whether the capture shows it opening (else it started before the capture).
  public var startSeen: Bool
  public var startFrame: Int
  public var start: Int64
  /// Disconnection Complete (nil while open at the capture's end).
  public var endFrame: Int?
  public var end: Int64?
  /// The last frame of the connection seen (its end when still open).
  public var lastActivity: Int64
  /// The last packet on the link (data, air or HCI event naming it), and its frame: what
  /// "last heard at" says when the capture cannot tell how the link ended.
  public var lastHeard: Int64 = 0
  public var lastHeardFrame = 0
  /// How the capture leaves the link (`SessionAnalyzer.finish` decides, by the rules in
  /// docs/cli.md "How summary decides").
  public var ending: Ending = .openAtEnd
  /// The capture's last frame's time, for a link open at its end.
  public var captureEnd: Int64 = 0
  /// A device of the sniffed link heard advertising after the link's last packet (the
  /// `heardElsewhere` link event): frame, time and device.
  public var heardElsewhere: (frame: Int, time: Int64, device: BDAddr)?
  public var disconnectReason: UInt8?
  public var initiator: DisconnectInitiator?
  /// The reason the local host gave in HCI Disconnect.
  public var disconnectRequestReason: UInt8?
  /// The parameters in force now (after the last successful update).
  public var parameters: ConnectionParameters?
  /// The parameters of Connection Complete.
  public var openingParameters: ConnectionParameters?
  /// Every LE Connection Update Complete, in order (up to `Limits.parameterUpdates`).
  public var updates: [ParameterChange] = []
  public var updatesNotListed = 0
  /// ATT_MTU on the fixed channel after Exchange MTU, and where it was agreed (the response).
  public var mtu: Int?
  public var mtuFrame: Int?
  public var mtuTime: Int64?
  /// The client's MTU in the request that response answered (the agreed `mtu` is the smaller
  /// of it and the server's).
  public var mtuRequested: UInt16?
  /// Distinct EATT (and other non-fixed) ATT channels used.
  public var eattChannels: [UInt16] = []
  /// PHY in force (1 = 1M, 2 = 2M, 3 = Coded), after the last successful update.
  public var transmitPHY: UInt8?
  public var receivePHY: UInt8?
  /// Data length after the last LE Data Length Change.
  public var maxTransmitOctets: UInt16?
  public var maxReceiveOctets: UInt16?
  public var maxTransmitTime: UInt16?
  public var maxReceiveTime: UInt16?
  /// Remote Version Information.
  public var remoteVersion: UInt8?
  public var remoteManufacturer: UInt16?
  public var security = SecuritySummary()
  public var attPDUs = 0
  /// ATT errors by (request opcode << 8 | error code), in order of first appearance.
  public var errors: [ErrorCount] = []
  public var characteristics: [CharacteristicActivity] = []
  /// Attribute operations on handles beyond `Limits.characteristics`.
  public var untrackedOperations = 0
  public var subscriptions: [Subscription] = []
  public var subscriptionsNotListed = 0
  public var heartRate: HeartRateSummary?
  public var battery: BatteryTrend?
  /// What a sniffer saw of the link's packets (captures sniffed over the air only).
  public var air: AirLinkSummary?

  /// Microseconds from the start to its end: the disconnect, the capture's end when it was
  /// still open then, else the last packet heard.
  public var duration: Int64 {
    switch ending {
    case .ended: return Timestamp.elapsed(from: start, to: end ?? lastHeard)
    case .openAtEnd: return Timestamp.elapsed(from: start, to: captureEnd)
    case .lastHeard, .handleReused, .endedUnseen: return Timestamp.elapsed(from: start, to: lastHeard)
    }
  }

  /// How a capture leaves a link.
  public enum Ending: Sendable, Equatable {
    /// Its disconnect is in the capture: HCI Disconnection Complete, LL_TERMINATE_IND, or a
    /// sniffed link's silence its devices' advertising proved a loss.
    case ended
    /// Open at the capture's end: an HCI capture (its host hears every link), or a sniffed
    /// link heard within its supervision timeout of the end.
    case openAtEnd
    /// A sniffed link silent for longer than its supervision timeout when the capture ended:
    /// whether the devices dropped it or the sniffer lost it, the capture cannot tell.
    case lastHeard
    /// Its handle was taken by a later connection (`connection`, opened in `frame`) without
    /// its disconnect in the capture.
    case handleReused(connection: Int, frame: Int)
    /// A sniffed link whose device was heard advertising to be connected (or in a
    /// CONNECT_IND) in `frame`, after the link's last packet: it ended unseen.
    case endedUnseen(frame: Int, time: Int64, device: BDAddr)
  }
}

/// A sniffed link's packets: how many, what became of them, and how strong each side was
/// heard — what tells a flaky radio link from a flaky device.
public struct AirLinkSummary: Sendable {
  /// Data PDUs on the link, damaged ones included.
  public var packets = 0
  public var empty = 0
  public var retransmissions = 0
  /// Packets the sniffer found with a wrong CRC.
  public var damaged = 0
  /// Packets the sniffer missed, as far as their neighbours tell.
  public var missed = 0
  public var decrypted = 0
  /// Encrypted packets not opened (no key, or a wrong MIC).
  public var sealed = 0
  /// Each side's signal: central (host to controller), then peripheral.
  public var signal = [SignalStatistics(), SignalStatistics()]
  /// Silences the sniffer heard on the link, longer than the link may be silent, after which
  /// the link went on (it lost the link's hops): how many, the longest and where it ended.
  public var snifferGaps = 0
  public var longestSnifferGap: (microseconds: Int64, frame: Int)?
  /// Packets stored already decrypted although the link was encrypted.
  public var storedDecrypted = 0
  /// The first retransmission and the first damaged packet: frame and time.
  public var firstRetransmission: (frame: Int, time: Int64)?
  public var firstDamaged: (frame: Int, time: Int64)?

  public init() {}
}

/// Signal strengths heard (dBm): how many, the weakest, the strongest and their mean.
public struct SignalStatistics: Sendable, Equatable {
  public var count = 0
  public var weakest: Int8 = .max
  public var strongest: Int8 = .min
  var sum = 0

  public init() {}

  public var mean: Double? { count == 0 ? nil : Double(sum) / Double(count) }

  mutating func add(_ signal: Int8) {
    count += 1
    sum += Int(signal)
    weakest = min(weakest, signal)
    strongest = max(strongest, signal)
  }
}

/// How often one kind of error happened.
public struct ErrorCount: Sendable, Equatable {
  /// The request's opcode (0 when not known).
  public var request: UInt8
  public var code: UInt8
  public var count: Int
}

/// A silence between two notifications (or indications) of a characteristic.
public struct Gap: Sendable, Equatable {
  /// The last value before the silence.
  public var start: Int64
  public var microseconds: Int64
  /// Whether the silence ran to the end of the link (or capture) while still subscribed.
  public var untilEnd: Bool
  /// The frame of the value that ended it (nil when it ran to the end).
  public var endFrame: Int? = nil
}

/// What happened to one attribute handle on a connection.
public struct CharacteristicActivity: Sendable {
  public var handle: UInt16
  /// Whether the capture's local side served it (a peripheral's HCI capture; on a sniffed link,
  /// the central): both ends of a link may be GATT servers, and a handle is the server's.
  public var servedLocally = false
  /// The characteristic (or, for a descriptor, its own type), when discovery showed it.
  public var uuid: BluetoothUUID?
  public var name: Name?
  /// Where the meaning came from when not from the capture's discovery (a map, the cache, a
  /// layout, a guess).
  public var source: GATTSource = .capture
  public var isDescriptor: Bool
  public var reads = 0
  public var writes = 0
  public var writeCommands = 0
  public var notifications = 0
  public var indications = 0
  public var firstValue: Int64?
  public var lastValue: Int64?
  /// The longest silences between notifications/indications, longest first.
  public var longestGaps: [Gap] = []
  public var errors: [ErrorCount] = []

  /// Notifications and indications.
  public var pushed: Int { notifications.saturatingAdd(indications) }

  /// Counts a notification or indication at `time`, and the silence before it.
  mutating func notePush(indication: Bool, at time: Int64, frame: Int) {
    if indication {
      indications = indications.saturatingAdd(1)
    } else {
      notifications = notifications.saturatingAdd(1)
    }
    if let lastValue {
      noteGap(Gap(start: lastValue, microseconds: Timestamp.elapsed(from: lastValue, to: time), untilEnd: false, endFrame: frame))
    } else {
      firstValue = time
    }
    lastValue = time
  }

  /// Keeps `gap` if it is among the longest (`SessionSummary.Limits.gaps`).
  mutating func noteGap(_ gap: Gap) {
    guard gap.microseconds > 0 else { return }
    let limit = SessionSummary.Limits.gaps
    if longestGaps.count == limit, let shortest = longestGaps.last, shortest.microseconds >= gap.microseconds { return }
    let position = longestGaps.firstIndex { $0.microseconds < gap.microseconds } ?? longestGaps.count
    longestGaps.insert(gap, at: position)
    if longestGaps.count > limit { longestGaps.removeLast() }
  }

  /// Pushed values per second, over the time from the first to the last.
  public var rate: Double? {
    guard pushed > 1, let firstValue, let lastValue else { return nil }
    let span = Timestamp.elapsed(from: firstValue, to: lastValue)
    guard span > 0 else { return nil }
    return Double(pushed - 1) / (Double(span) / 1_000_000)
  }
}

/// One write to a Client Characteristic Configuration descriptor.
public struct Subscription: Sendable {
  public enum Outcome: String, Sendable {
    /// Write Response.
    case accepted
    /// Error Response (`errorCode`).
    case rejected
    /// Sent as Write Command: no answer expected.
    case unacknowledged
    /// A Write Request whose answer the capture does not show.
    case noResponse = "no_response"
  }
  public var frame: Int
  public var time: Int64
  /// The descriptor's handle.
  public var handle: UInt16
  public var characteristic: BluetoothUUID?
  public var characteristicName: Name?
  /// The value written (bit 0 notifications, bit 1 indications).
  public var value: UInt16
  public var outcome: Outcome
  public var errorCode: UInt8?
  public var responseFrame: Int?

  public var notifications: Bool { value & 1 != 0 }
  public var indications: Bool { value & 2 != 0 }
}

/// Heart Rate Measurement notifications on a connection.
public struct HeartRateSummary: Sendable {
  public var measurements = 0
  /// Heart rates in bpm (0 bpm, which some straps send without contact, is left out, and so
  /// are values whose rate is doubtful: `HeartRateFlags.doubtfulRate`).
  public var bpm = RunningStatistics()
  public var zeroReadings = 0
  /// Measurements with each flag, in `HeartRateFlags.all`'s order.
  public var flagCounts = [Int](repeating: 0, count: HeartRateFlags.all.count)
  /// Measurements left out of `bpm` because their rate is doubtful.
  public var leftOutOfRate = 0
  /// The checks, in order (energy going backwards needs the value before).
  var plausibility = HeartRatePlausibility()
  /// RR intervals in ms: count, mean, SDNN.
  public var rr = RunningStatistics()
  /// RMSSD over runs of RR intervals, a run broken by a silence of 2 s or more.
  public var successive = SuccessiveDifferences()
  public var contactDetected = 0
  public var contactNotDetected = 0
  /// Spans of measurements saying "contact not detected", the first `Limits.spans`.
  public var contactLoss: [ClosedTimeSpan] = []
  public var contactLossSpans = 0
  public var contactLossMicroseconds: Int64 = 0
  /// Intervals between measurements, in ms (for the median the dropout rule needs).
  public var intervals = QuantileSketch()
  /// Silences longer than max(2 s, 3 × the median interval so far), the longest `Limits.spans`.
  public var dropouts: [ClosedTimeSpan] = []
  public var dropoutCount = 0
  public var energyExpended: UInt16?
  public var firstTime: Int64?
  public var lastTime: Int64?
  /// Whether the current run of "no contact" measurements started at `lossStart`.
  var lossStart: Int64?

  public init() {}
}

/// A span between two capture timestamps (µs).
public struct ClosedTimeSpan: Sendable, Equatable {
  public var start: Int64
  public var end: Int64
  public var microseconds: Int64 { Timestamp.elapsed(from: start, to: end) }
}

/// Battery Level values (reads and notifications) on a connection.
public struct BatteryTrend: Sendable, Equatable {
  public struct Reading: Sendable, Equatable {
    public var percent: UInt8
    public var time: Int64
    public var frame: Int
  }
  public var first: Reading
  public var last: Reading
  public var minimum: Reading
  public var maximum: Reading
  public var readings = 1
}

/// Latency of one ATT procedure.
public struct ProcedureLatency: Sendable {
  /// The request (or indication) opcode.
  public var opcode: UInt8
  /// Microseconds.
  public var sketch = QuantileSketch()
  public var errors = 0
}
