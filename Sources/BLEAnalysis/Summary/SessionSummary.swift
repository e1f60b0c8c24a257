import BLECore
import BLEDecoder

// What `bledissect summary` tells about one capture: the devices, the connection attempts, each
// connection's story and activity. Built by `SessionAnalyzer` in one pass, in bounded memory:
// every list has a limit (`SessionSummary.Limits`), and what goes past it is counted, not kept.
// Times are capture timestamps (µs since the Unix epoch), as hostile as the capture made them.

/// The summary of one capture.
package struct SessionSummary: Sendable {
  /// How many of each thing a summary keeps; past a limit things are counted only.
  package enum Limits {
    /// Devices (by address) described; reports from further addresses are counted.
    package static let devices = 1024
    /// Connection attempts listed one by one.
    package static let attempts = 1024
    /// Connections described; frames of further connections are counted only.
    package static let connections = 512
    /// Parameter updates listed per connection.
    package static let parameterUpdates = 32
    /// Characteristics (attribute handles) with activity per connection.
    package static let characteristics = 64
    /// Subscription changes (CCCD writes) listed per connection.
    package static let subscriptions = 64
    /// Longest silences kept per characteristic.
    package static let gaps = 3
    /// Error kinds counted per characteristic and per connection.
    package static let errorKinds = 16
    /// Heart-rate dropouts and contact-loss spans kept (the longest dropouts, the first spans).
    package static let spans = 16
    /// Characters kept of a name read from the capture.
    package static let nameLength = 64
  }

  /// Records read.
  package var frames = 0
  /// The first and last record's timestamps.
  package var firstTimestamp: Int64?
  package var lastTimestamp: Int64?
  /// Whether any HCI command was captured: without commands, who ended a link is unknown.
  package var sawCommands = false
  package var devices: [DeviceSummary] = []
  /// Advertising reports and connections of addresses beyond `Limits.devices`.
  package var untrackedDeviceReports = 0
  package var attempts: [ConnectionAttempt] = []
  /// Attempts beyond `Limits.attempts`, counted only.
  package var attemptsNotListed = 0
  package var connections: [ConnectionSummary] = []
  /// Connections beyond `Limits.connections`, counted only.
  package var connectionsNotListed = 0
  /// ATT request → response time per procedure (the request's opcode), over all connections.
  package var latencies: [ProcedureLatency] = []

  package init() {}

  /// Microseconds from the capture's first frame to `timestamp` (negative when the clock went back).
  package func offset(_ timestamp: Int64) -> Int64 {
    Timestamp.elapsed(from: firstTimestamp ?? timestamp, to: timestamp)
  }

  /// The capture's length in µs (0 for an empty capture).
  package var duration: Int64 {
    guard let firstTimestamp, let lastTimestamp else { return 0 }
    return Timestamp.elapsed(from: firstTimestamp, to: lastTimestamp)
  }
}

/// One device: seen advertising, or as the peer of a connection.
package struct DeviceSummary: Sendable {
  package var address: BDAddr
  package var addressType: AddressType?
  /// The identity address the device distributed when pairing (SMP Identity Address Information).
  package var identity: BDAddr?
  package var identityType: AddressType?
  /// The name from advertising (Complete or Shortened Local Name).
  package var advertisedName: String?
  /// The GAP Device Name read over GATT.
  package var deviceName: String?
  package var appearance: UInt16?
  /// The company of the advertised Manufacturer Specific Data.
  package var company: UInt16?
  /// The Device Information Manufacturer Name String.
  package var manufacturerName: String?
  package var advertisingReports = 0
  package var strongestRSSI: Int8?
  package var weakestRSSI: Int8?
  package var firstSeen: Int64
  package var lastSeen: Int64
  /// Connections to the device (also those beyond `Limits.connections`).
  package var connectionCount = 0
  /// The GATT services learned for it (from the dissector's final databases), in handle order.
  package var services: [ServiceEntry] = []

  package init(address: BDAddr, addressType: AddressType?, time: Int64) {
    self.address = address
    self.addressType = addressType
    firstSeen = time
    lastSeen = time
  }

  /// The name to show: the one read over GATT, else the advertised one.
  package var name: String? { deviceName ?? advertisedName }
}

/// A GATT service of a device's database.
package struct ServiceEntry: Sendable, Equatable {
  package var start: UInt16
  package var end: UInt16
  package var uuid: BluetoothUUID
  package var primary: Bool
  package init(start: UInt16, end: UInt16, uuid: BluetoothUUID, primary: Bool) {
    self.start = start
    self.end = end
    self.uuid = uuid
    self.primary = primary
  }
}

/// A request to connect and what became of it.
package struct ConnectionAttempt: Sendable, Equatable {
  package enum Outcome: Sendable, Equatable {
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
  package var frame: Int?
  package var time: Int64
  package var peer: BDAddr?
  package var peerType: AddressType?
  package var isLE: Bool
  package var outcome: Outcome
  /// The frame that settled it (Command Status, Connection Complete).
  package var endFrame: Int?
  package var cancelRequested = false
}

/// Who ended a link.
package enum DisconnectInitiator: String, Sendable {
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
package struct ParameterChange: Sendable, Equatable {
  package var frame: Int
  package var time: Int64
  /// 0 when the update succeeded; the parameters are then in force.
  package var status: UInt8
  package var parameters: ConnectionParameters
}

/// Pairing and encryption on a link.
package struct SecuritySummary: Sendable, Equatable {
  package enum Method: String, Sendable {
    case justWorks = "just_works"
    case passkeyEntry = "passkey_entry"
    case numericComparison = "numeric_comparison"
    case outOfBand = "out_of_band"
  }

  /// The frame of the first Pairing Request (or Security Request).
  package var pairingFrame: Int?
  package var pairingTime: Int64?
  /// LE Secure Connections (both sides set SC); nil when pairing features were not seen.
  package var secureConnections: Bool?
  package var method: Method?
  /// Pairing Failed's reason, and whether the local host sent it.
  package var failureReason: UInt8?
  package var failureSentByLocalHost: Bool?
  /// Keys distributed (SMP key distribution commands seen).
  package var keysDistributed = false
  /// Encryption on the link now (at disconnect, or at the capture's end).
  package var encrypted = false
  /// When encryption was first turned on.
  package var encryptedSince: Int64?
  /// Encryption Change events with an error status, and the last such status.
  package var encryptionFailures = 0
  package var lastEncryptionStatus: UInt8?

  /// Whether anything about security happened at all.
  package var isEmpty: Bool { pairingFrame == nil && !encrypted && encryptedSince == nil && encryptionFailures == 0 && failureReason == nil }
}

/// One connection (one generation of a handle).
package struct ConnectionSummary: Sendable {
  /// 1-based position in the summary's list.
  package var number: Int
  package var adapter: UInt16
  package var handle: UInt16
  package var generation: Int
  package var peer: BDAddr?
  package var peerType: AddressType?
  /// The local side's own address when the capture shows it (a sniffed link's central).
  package var localAddress: BDAddr?
  package var role: LinkRole?
  /// Whether the capture shows it opening (else it started before the capture).
  package var startSeen: Bool
  package var startFrame: Int
  package var start: Int64
  /// Disconnection Complete (nil while open at the capture's end).
  package var endFrame: Int?
  package var end: Int64?
  /// The last frame of the connection seen (its end when still open).
  package var lastActivity: Int64
  /// The last packet on the link (data, air or HCI event naming it), and its frame: what
  /// "last heard at" says when the capture cannot tell how the link ended.
  package var lastHeard: Int64 = 0
  package var lastHeardFrame = 0
  /// How the capture leaves the link (`SessionAnalyzer.finish` decides, by the rules in
  /// docs/cli.md "How summary decides").
  package var ending: Ending = .openAtEnd
  /// The capture's last frame's time, for a link open at its end.
  package var captureEnd: Int64 = 0
  /// A device of the sniffed link heard advertising after the link's last packet (the
  /// `heardElsewhere` link event): frame, time and device.
  package var heardElsewhere: (frame: Int, time: Int64, device: BDAddr)?
  package var disconnectReason: UInt8?
  package var initiator: DisconnectInitiator?
  /// The reason the local host gave in HCI Disconnect.
  package var disconnectRequestReason: UInt8?
  /// The parameters in force now (after the last successful update).
  package var parameters: ConnectionParameters?
  /// The parameters of Connection Complete.
  package var openingParameters: ConnectionParameters?
  /// Every LE Connection Update Complete, in order (up to `Limits.parameterUpdates`).
  package var updates: [ParameterChange] = []
  package var updatesNotListed = 0
  /// ATT_MTU on the fixed channel after Exchange MTU, and where it was agreed (the response).
  package var mtu: Int?
  package var mtuFrame: Int?
  package var mtuTime: Int64?
  /// The client's MTU in the request that response answered (the agreed `mtu` is the smaller
  /// of it and the server's).
  package var mtuRequested: UInt16?
  /// Distinct EATT (and other non-fixed) ATT channels used.
  package var eattChannels: [UInt16] = []
  /// PHY in force (1 = 1M, 2 = 2M, 3 = Coded), after the last successful update.
  package var transmitPHY: UInt8?
  package var receivePHY: UInt8?
  /// Data length after the last LE Data Length Change.
  package var maxTransmitOctets: UInt16?
  package var maxReceiveOctets: UInt16?
  package var maxTransmitTime: UInt16?
  package var maxReceiveTime: UInt16?
  /// Remote Version Information.
  package var remoteVersion: UInt8?
  package var remoteManufacturer: UInt16?
  package var security = SecuritySummary()
  package var attPDUs = 0
  /// ATT errors by (request opcode << 8 | error code), in order of first appearance.
  package var errors: [ErrorCount] = []
  package var characteristics: [CharacteristicActivity] = []
  /// Attribute operations on handles beyond `Limits.characteristics`.
  package var untrackedOperations = 0
  package var subscriptions: [Subscription] = []
  package var subscriptionsNotListed = 0
  package var heartRate: HeartRateSummary?
  package var battery: BatteryTrend?
  /// What a sniffer saw of the link's packets (captures sniffed over the air only).
  package var air: AirLinkSummary?

  /// Microseconds from the start to its end: the disconnect, the capture's end when it was
  /// still open then, else the last packet heard.
  package var duration: Int64 {
    switch ending {
    case .ended: return Timestamp.elapsed(from: start, to: end ?? lastHeard)
    case .openAtEnd: return Timestamp.elapsed(from: start, to: captureEnd)
    case .lastHeard, .handleReused, .endedUnseen: return Timestamp.elapsed(from: start, to: lastHeard)
    }
  }

  /// How a capture leaves a link.
  package enum Ending: Sendable, Equatable {
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
package struct AirLinkSummary: Sendable {
  /// Data PDUs on the link, damaged ones included.
  package var packets = 0
  package var empty = 0
  package var retransmissions = 0
  /// Packets the sniffer found with a wrong CRC.
  package var damaged = 0
  /// Packets the sniffer missed, as far as their neighbours tell.
  package var missed = 0
  package var decrypted = 0
  /// Encrypted packets not opened (no key, or a wrong MIC).
  package var sealed = 0
  /// Each side's signal: central (host to controller), then peripheral.
  package var signal = [SignalStatistics(), SignalStatistics()]
  /// Silences the sniffer heard on the link, longer than the link may be silent, after which
  /// the link went on (it lost the link's hops): how many, the longest and where it ended.
  package var snifferGaps = 0
  package var longestSnifferGap: (microseconds: Int64, frame: Int)?
  /// Packets stored already decrypted although the link was encrypted.
  package var storedDecrypted = 0
  /// The first retransmission and the first damaged packet: frame and time.
  package var firstRetransmission: (frame: Int, time: Int64)?
  package var firstDamaged: (frame: Int, time: Int64)?

  package init() {}
}

/// Signal strengths heard (dBm): how many, the weakest, the strongest and their mean.
package struct SignalStatistics: Sendable, Equatable {
  package var count = 0
  package var weakest: Int8 = .max
  package var strongest: Int8 = .min
  var sum = 0

  package init() {}

  package var mean: Double? { count == 0 ? nil : Double(sum) / Double(count) }

  mutating func add(_ signal: Int8) {
    count += 1
    sum += Int(signal)
    weakest = min(weakest, signal)
    strongest = max(strongest, signal)
  }
}

/// How often one kind of error happened.
package struct ErrorCount: Sendable, Equatable {
  /// The request's opcode (0 when not known).
  package var request: UInt8
  package var code: UInt8
  package var count: Int
}

/// A silence between two notifications (or indications) of a characteristic.
package struct Gap: Sendable, Equatable {
  /// The last value before the silence.
  package var start: Int64
  package var microseconds: Int64
  /// Whether the silence ran to the end of the link (or capture) while still subscribed.
  package var untilEnd: Bool
  /// The frame of the value that ended it (nil when it ran to the end).
  package var endFrame: Int? = nil
}

/// What happened to one attribute handle on a connection.
package struct CharacteristicActivity: Sendable {
  package var handle: UInt16
  /// Whether the capture's local side served it (a peripheral's HCI capture; on a sniffed link,
  /// the central): both ends of a link may be GATT servers, and a handle is the server's.
  package var servedLocally = false
  /// The characteristic (or, for a descriptor, its own type), when discovery showed it.
  package var uuid: BluetoothUUID?
  package var name: Name?
  /// Where the meaning came from when not from the capture's discovery (a map, the cache, a
  /// layout, a guess).
  package var source: GATTSource = .capture
  package var isDescriptor: Bool
  package var reads = 0
  package var writes = 0
  package var writeCommands = 0
  package var notifications = 0
  package var indications = 0
  package var firstValue: Int64?
  package var lastValue: Int64?
  /// The longest silences between notifications/indications, longest first.
  package var longestGaps: [Gap] = []
  package var errors: [ErrorCount] = []

  /// Notifications and indications.
  package var pushed: Int { notifications.saturatingAdd(indications) }

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
  package var rate: Double? {
    guard pushed > 1, let firstValue, let lastValue else { return nil }
    let span = Timestamp.elapsed(from: firstValue, to: lastValue)
    guard span > 0 else { return nil }
    return Double(pushed - 1) / (Double(span) / 1_000_000)
  }
}

/// One write to a Client Characteristic Configuration descriptor.
package struct Subscription: Sendable {
  package enum Outcome: String, Sendable {
    /// Write Response.
    case accepted
    /// Error Response (`errorCode`).
    case rejected
    /// Sent as Write Command: no answer expected.
    case unacknowledged
    /// A Write Request whose answer the capture does not show.
    case noResponse = "no_response"
  }
  package var frame: Int
  package var time: Int64
  /// The descriptor's handle.
  package var handle: UInt16
  package var characteristic: BluetoothUUID?
  package var characteristicName: Name?
  /// The value written (bit 0 notifications, bit 1 indications).
  package var value: UInt16
  package var outcome: Outcome
  package var errorCode: UInt8?
  package var responseFrame: Int?

  package var notifications: Bool { value & 1 != 0 }
  package var indications: Bool { value & 2 != 0 }
}

/// Heart Rate Measurement notifications on a connection.
package struct HeartRateSummary: Sendable {
  package var measurements = 0
  /// Heart rates in bpm (0 bpm, which some straps send without contact, is left out, and so
  /// are values whose rate is doubtful: `HeartRateFlags.doubtfulRate`).
  package var bpm = RunningStatistics()
  package var zeroReadings = 0
  /// Measurements with each flag, in `HeartRateFlags.all`'s order.
  package var flagCounts = [Int](repeating: 0, count: HeartRateFlags.all.count)
  /// Measurements left out of `bpm` because their rate is doubtful.
  package var leftOutOfRate = 0
  /// The checks, in order (energy going backwards needs the value before).
  var plausibility = HeartRatePlausibility()
  /// RR intervals in ms: count, mean, SDNN.
  package var rr = RunningStatistics()
  /// RMSSD over runs of RR intervals, a run broken by a silence of 2 s or more.
  package var successive = SuccessiveDifferences()
  package var contactDetected = 0
  package var contactNotDetected = 0
  /// Spans of measurements saying "contact not detected", the first `Limits.spans`.
  package var contactLoss: [ClosedTimeSpan] = []
  package var contactLossSpans = 0
  package var contactLossMicroseconds: Int64 = 0
  /// Intervals between measurements, in ms (for the median the dropout rule needs).
  package var intervals = QuantileSketch()
  /// Silences longer than max(2 s, 3 × the median interval so far), the longest `Limits.spans`.
  package var dropouts: [ClosedTimeSpan] = []
  package var dropoutCount = 0
  package var energyExpended: UInt16?
  package var firstTime: Int64?
  package var lastTime: Int64?
  /// Whether the current run of "no contact" measurements started at `lossStart`.
  var lossStart: Int64?

  package init() {}
}

/// A span between two capture timestamps (µs).
package struct ClosedTimeSpan: Sendable, Equatable {
  package var start: Int64
  package var end: Int64
  package var microseconds: Int64 { Timestamp.elapsed(from: start, to: end) }
}

/// Battery Level values (reads and notifications) on a connection.
package struct BatteryTrend: Sendable, Equatable {
  package struct Reading: Sendable, Equatable {
    package var percent: UInt8
    package var time: Int64
    package var frame: Int
  }
  package var first: Reading
  package var last: Reading
  package var minimum: Reading
  package var maximum: Reading
  package var readings = 1
}

/// Latency of one ATT procedure.
package struct ProcedureLatency: Sendable {
  /// The request (or indication) opcode.
  package var opcode: UInt8
  /// Microseconds.
  package var sketch = QuantileSketch()
  package var errors = 0
}
