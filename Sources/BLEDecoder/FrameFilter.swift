import BLECore

/// Which frames to show (`--conn`, `--peer`, `--handle`, `--uuid`, `--layer`, `--opcode`,
/// `--errors`, `--from`/`--to`, `--name`). Every frame is still dissected, so state
/// (connections, GATT databases) stays right; only output is filtered. Values of one kind are
/// alternatives (a frame about any of them passes); kinds combine (a frame must pass every kind
/// given). Two kinds learn from the frames they see (`observe`): the time of the first frame
/// (`--from`/`--to` in seconds since it) and which devices bear a name (`--name`).
public struct FrameFilter: Sendable {
  /// Controllers (`hci0` = 0): frames of these only (records that belong to none are left out).
  public var adapters: [UInt16] = []
  public var connectionHandles: [UInt16] = []
  public var peers: [BDAddr] = []
  public var attributeHandles: [UInt16] = []
  public var uuids: [BluetoothUUID] = []
  /// Frames decoded at least as deep as one of these: `.hci`, `.l2cap`, `.att` or `.gatt`.
  public var layers: [ProtocolLayer] = []
  /// Leaves out the empty data PDUs of air captures (a connection's keep-alive: most of its
  /// packets).
  public var hidesEmptyPDUs = false
  /// ATT opcodes (with their command and signature bits, as on the wire).
  public var opcodes: [UInt8] = []
  /// Only frames with a warning or a part that could not be decoded (and, where the reader
  /// runs `check`, the frames that prove a rule broken: their findings are warnings).
  public var errorsOnly = false
  /// The time window, both ends included.
  public var from: FilterTime?
  public var to: FilterTime?
  /// Devices by name: a frame passes when its device (the connection's peer, the advertiser,
  /// the device a connection is requested to) advertised or read as a name holding one of
  /// these (any case).
  public var names: [String] = [] {
    didSet { lowercasedNames = names.map { $0.lowercased() } }
  }
  private var lowercasedNames: [String] = []
  /// The devices seen bearing one of `names`, learned by `observe` (at most
  /// `maximumNamedDevices`); a reader may also give them up front (a second pass).
  public var namedDevices: Set<BDAddr> = []
  public static let maximumNamedDevices = 1024
  /// The first frame's time (µs since 1970), learned by `observe`, for relative bounds.
  public var origin: Int64?

  public init() {}

  public var isEmpty: Bool {
    adapters.isEmpty && connectionHandles.isEmpty && peers.isEmpty && attributeHandles.isEmpty && uuids.isEmpty && layers.isEmpty
      && !hidesEmptyPDUs && opcodes.isEmpty && !errorsOnly && from == nil && to == nil && names.isEmpty
  }

  /// Whether `observe` must see every frame (before `matches`).
  public var observes: Bool { !names.isEmpty || from?.isRelative == true || to?.isRelative == true }

  /// Learns what later matches need: the first frame's time, and devices' names (advertised,
  /// or a GAP Device Name read from the peer).
  public mutating func observe(_ frame: inout DissectedFrame) {
    if origin == nil { origin = frame.record.timestamp }
    guard !lowercasedNames.isEmpty, namedDevices.count < Self.maximumNamedDevices else { return }
    for case .advertisement(let advertisement) in frame.linkEvents {
      if let name = advertisement.name { learn(name, advertisement.address) }
    }
    if let peer = frame.connection?.peer, frame.direction == .controllerToHost, frame.attOpcode.map(Self.readsValues) == true {
      frame.forEachValue(as: DeviceName.self) { operation, name in
        if operation == .read { learn(name.text, peer) }
      }
    }
  }

  mutating func learn(_ name: String, _ device: BDAddr) {
    let lowered = name.lowercased()
    if lowercasedNames.contains(where: { lowered.contains($0) }) { namedDevices.insert(device) }
  }

  /// Read, Read Blob and Read By Type responses: where a GAP Device Name comes from.
  static func readsValues(_ opcode: UInt8) -> Bool { opcode == 0x0B || opcode == 0x0D || opcode == 0x09 }

  /// The device a frame is about: the connection's peer, else the advertiser of a report or
  /// the device a connection is requested to.
  public static func device(_ frame: borrowing DissectedFrame) -> BDAddr? {
    if let peer = frame.connection?.peer { return peer }
    for event in frame.linkEvents {
      switch event {
      case .advertisement(let advertisement): return advertisement.address
      case .connectRequested(let peer?, _, _): return peer
      default: continue
      }
    }
    return nil
  }

  static func rank(_ layer: ProtocolLayer) -> Int {
    switch layer {
    case .capture, .note: return 0
    case .hci, .advertising, .linkLayer: return 1
    // SDP and RFCOMM ride L2CAP channels as ATT does, but are no step towards ATT: `--layer att`
    // leaves them out, `--layer l2cap` keeps them.
    case .l2cap, .sdp, .rfcomm: return 2
    case .att: return 3
    case .gatt, .profile: return 4
    }
  }

  /// Whether an attribute is, or belongs to, `uuid`: its service, its characteristic, or
  /// (a descriptor) its own type.
  static func names(_ fact: AttributeFact, _ uuid: BluetoothUUID) -> Bool {
    guard let meaning = fact.meaning else { return false }
    // By value: `--uuid 180d` matches a service sent as a 128-bit UUID, and the other way round.
    func same(_ other: BluetoothUUID?) -> Bool { other?.hasSameValue(as: uuid) ?? false }
    if same(meaning.service) || same(meaning.characteristic) { return true }
    return meaning.role == .descriptor && same(meaning.descriptor)
  }

  /// Whether a frame is an empty data PDU sniffed over the air.
  public static func isEmptyPDU(_ frame: borrowing DissectedFrame) -> Bool {
    if case .dataPDU(1, 0, _, _) = frame.header { return true }
    return false
  }

  public func matches(_ frame: DissectedFrame) -> Bool {
    if hidesEmptyPDUs && Self.isEmptyPDU(frame) { return false }
    if !adapters.isEmpty, !adapters.contains(frame.record.adapter) { return false }
    if !connectionHandles.isEmpty {
      guard let handle = frame.connection?.handle, connectionHandles.contains(handle) else { return false }
    }
    if !peers.isEmpty || !names.isEmpty {
      let device = Self.device(frame)
      if !peers.isEmpty { guard let device, peers.contains(device) else { return false } }
      if !names.isEmpty { guard let device, namedDevices.contains(device) else { return false } }
    }
    if !opcodes.isEmpty { guard let opcode = frame.attOpcode, opcodes.contains(opcode) else { return false } }
    if errorsOnly, frame.malformed == nil, !frame.diagnostics.contains(where: { $0.severity == .warning }) { return false }
    if from != nil || to != nil {
      let time = frame.record.timestamp
      if let from, time < from.microseconds(since: origin ?? time) { return false }
      if let to, time > to.microseconds(since: origin ?? time) { return false }
    }
    if !attributeHandles.isEmpty, !attributeHandles.contains(where: frame.namesHandle) { return false }
    if !uuids.isEmpty, !frame.attributes.contains(where: { fact in uuids.contains { Self.names(fact, $0) } }) {
      return false
    }
    if !layers.isEmpty {
      let depth = Self.rank(frame.deepestLayer)
      if !layers.contains(where: { depth >= Self.rank($0) }) { return false }
    }
    return true
  }
}

/// One end of `--from`/`--to`: seconds since the capture's first frame, or a UTC time.
public enum FilterTime: Sendable, Equatable {
  case sinceStart(seconds: Double)
  /// Microseconds since 1970.
  case absolute(Int64)

  public var isRelative: Bool { if case .sinceStart = self { return true } else { return false } }

  /// The bound as a record time, given the first frame's.
  public func microseconds(since origin: Int64) -> Int64 {
    switch self {
    case .absolute(let time): return time
    case .sinceStart(let seconds):
      // Clamped first: a library user may give any Double (NaN counts as 0).
      let micros = seconds.isNaN ? 0 : min(max(seconds * 1_000_000, -9e18), 9e18).rounded()
      return origin.saturatingAdd(Int64(micros))
    }
  }

  /// Seconds (`12.5`), or a UTC date and time (`2026-12-06T05:37:27.5Z`; the `Z` may be left out).
  public init?(_ text: String) {
    if let seconds = Double(text), seconds.isFinite, abs(seconds) < 1e12 {
      self = .sinceStart(seconds: seconds)
      return
    }
    var text = Substring(text)
    if text.hasSuffix("Z") || text.hasSuffix("z") { text = text.dropLast() }
    let halves = text.split(separator: "T", maxSplits: 1, omittingEmptySubsequences: false)
    let date = halves[0].split(separator: "-", omittingEmptySubsequences: false).compactMap { Int($0) }
    guard halves.count == 2, date.count == 3, halves[0].count == 10 else { return nil }
    let clock = halves[1].split(separator: ":", omittingEmptySubsequences: false)
    guard clock.count == 3, let hour = Int(clock[0]), let minute = Int(clock[1]), let second = Double(clock[2]), second.isFinite,
      (1...12).contains(date[1]), (1...31).contains(date[2]), (0...23).contains(hour), (0...59).contains(minute), second >= 0, second < 61,
      (1970...9999).contains(date[0])
    else { return nil }
    // Days since 1970-01-01 of a proleptic Gregorian date (the civil-from-days inverse).
    let year = date[1] <= 2 ? date[0] - 1 : date[0]
    let era = year / 400
    let yearOfEra = year - era * 400
    let dayOfYear = (153 * (date[1] + (date[1] > 2 ? -3 : 9)) + 2) / 5 + date[2] - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    let days = era * 146_097 + dayOfEra - 719_468
    let seconds = Double(days * 86_400 + hour * 3_600 + minute * 60) + second
    self = .absolute(Int64((seconds * 1_000_000).rounded()))
  }
}
