import BLECore
import BLEDecoder

/// What the heart-rate plot marks on its time axis: a link event of one kind.
package enum LinkMarkKind: Int, CaseIterable, Sendable, Comparable {
  case connected, disconnected, subscribed, unsubscribed, mtuExchanged, parametersRequested, parametersUpdated

  package static func < (a: LinkMarkKind, b: LinkMarkKind) -> Bool { a.rawValue < b.rawValue }
}

/// One mark: an event, or several of one kind merged once a device's list is full.
package struct LinkMark: Sendable, Equatable {
  /// What the label says beyond the kind.
  package enum Detail: Sendable, Equatable {
    case plain
    /// Merged events whose details differ.
    case mixed
    /// A disconnection's HCI reason.
    case reason(UInt8)
    /// The ATT_MTU in force after an exchange.
    case mtu(Int)
    /// LE Connection Update Complete: interval in 1.25 ms units, peripheral latency.
    case parameters(interval: UInt16, latency: UInt16)
    /// LE Connection Update Complete with an error status.
    case failed(status: UInt8)
    /// A subscription to indications rather than notifications.
    case indications
  }

  package var kind: LinkMarkKind
  /// Seconds; a merged mark spans its events.
  package var start: Double
  package var end: Double
  package var count: Int
  package var detail: Detail

  package init(kind: LinkMarkKind, time: Double, detail: Detail = .plain) {
    self.kind = kind
    start = time
    end = time
    count = 1
    self.detail = detail
  }

  /// Takes in `other` (of the same kind).
  mutating func merge(_ other: LinkMark) {
    start = Swift.min(start, other.start)
    end = Swift.max(end, other.end)
    count = count.saturatingAdd(other.count)
    if detail != other.detail { detail = .mixed }
  }

  /// The label's words for `count` events of `kind` with `detail` ("disconnected: Connection
  /// Timeout", "MTU 247", "interval 50 ms"), with "×N" for more than one.
  package static func words(kind: LinkMarkKind, detail: Detail, count: Int) -> String {
    var text: String
    switch (kind, detail) {
    case (.connected, _): text = "connected"
    case (.disconnected, .reason(let reason)): text = "disconnected: " + reasonText(reason)
    case (.disconnected, _): text = "disconnected"
    case (.subscribed, .indications): text = "subscribed HR (indications)"
    case (.subscribed, _): text = "subscribed HR"
    case (.unsubscribed, _): text = "unsubscribed HR"
    case (.mtuExchanged, .mtu(let mtu)): text = "MTU \(mtu)"
    case (.mtuExchanged, _): text = "MTU exchange"
    case (.parametersRequested, _): text = "parameters requested"
    case (.parametersUpdated, .parameters(let interval, let latency)):
      text = "interval " + SVGText.decimal(Double(interval) * 1.25, places: 2) + " ms"
      if latency > 0 { text += ", latency \(latency)" }
    case (.parametersUpdated, .failed(let status)): text = "parameter update failed: " + reasonText(status)
    case (.parametersUpdated, _): text = "parameters updated"
    }
    return count > 1 ? text + " ×\(count)" : text
  }

  static func reasonText(_ code: UInt8) -> String {
    AssignedNumbers.hciErrorName(code).map { $0.description } ?? Hex.prefixed(UInt64(code), width: 2)
  }
}

/// Marks of one kind in time order, bounded: past `maximumCount`, neighbours closer than a
/// resolution merge, the resolution chosen to leave half the list (and never shrinking), so
/// 100 000 reconnects keep at most `maximumCount` marks, each counting what it stands for.
package struct MarkList: Sendable, Equatable {
  package static let maximumCount = 256
  package private(set) var marks: [LinkMark] = []
  /// Marks less than this far apart (seconds) merge; 0 until the list first fills.
  package private(set) var resolution = 0.0

  package init() {}

  private func closeEnough(_ earlier: LinkMark, _ later: LinkMark) -> Bool {
    resolution == .infinity || later.start - earlier.end < resolution
  }

  /// Adds a mark; one with a non-finite time is left out. Marks come mostly in time order; one
  /// that comes earlier (a subscription recognised after the fact) is put in its place.
  package mutating func add(_ mark: LinkMark) {
    guard mark.start.isFinite, mark.end.isFinite else { return }
    var position = marks.count
    while position > 0, marks[position - 1].start > mark.start { position -= 1 }
    if position > 0, closeEnough(marks[position - 1], mark) {
      marks[position - 1].merge(mark)
    } else if position < marks.count, closeEnough(mark, marks[position]) {
      marks[position].merge(mark)
    } else {
      marks.insert(mark, at: position)
    }
    if marks.count > Self.maximumCount {
      // The gap below which merging leaves half the list: the narrowest gaps go first, and the
      // list keeps room to tell the next events apart (doubling a resolution instead can jump
      // past every gap of a steady storm and leave one mark for the whole capture).
      var gaps = zip(marks, marks.dropFirst()).map { $1.start - $0.end }
      gaps.sort()
      let kept = Self.maximumCount / 2 - 1
      resolution = Swift.max(resolution, gaps[gaps.count - 1 - kept].nextUp)
      var merged: [LinkMark] = []
      merged.reserveCapacity(marks.count)
      for mark in marks {
        if let last = merged.last, closeEnough(last, mark) { merged[merged.count - 1].merge(mark) } else { merged.append(mark) }
      }
      marks = merged
    }
  }
}

/// The link events of a capture that the heart-rate plot marks (connection, disconnection with
/// its reason, subscription to Heart Rate Measurement, ATT MTU exchange, connection parameter
/// requests and updates) and the names devices go by, gathered frame by frame in bounded memory:
/// per device and kind a `MarkList`, at most `maximumDevices` devices, `maximumNames` names.
///
/// It reads facts only: link events, ATT facts, typed values.
package struct LinkTimeline: Sendable {
  /// Whose measurements a plot panel shows, as `hr` labels them: a peer by address, the
  /// capturing host itself (a capture taken on the strap), or a connection whose peer is unknown.
  package enum Owner: Hashable, Sendable {
    case peer(BDAddr)
    case localHost(adapter: UInt16)
    case connection(adapter: UInt16, handle: UInt16)
  }

  /// Devices (peers, or connections without a known peer) whose events are kept.
  package static let maximumDevices = 128
  /// Names kept (peers seen advertising a name or read over GATT).
  package static let maximumNames = 4096
  /// Links followed at once; past it the table starts afresh (handles opened and never closed).
  static let maximumOpenLinks = 4096
  /// CCCD writes of unknown characteristic kept per link until its heart rate shows where it is.
  static let maximumPending = 4

  static let heartRateMeasurement = BluetoothUUID(uuid16: 0x2A37)
  static let configuration = BluetoothUUID(uuid16: 0x2902)

  /// A device as events name it: by peer address, else by connection.
  struct Key: Hashable {
    var adapter: UInt16
    var peer: BDAddr?
    /// The connection handle when the peer is unknown (0 otherwise).
    var handle: UInt16
  }

  struct PendingConfiguration {
    var handle: UInt16
    var time: Double
    var value: UInt16
  }

  struct Names {
    var read: String?
    var advertised: String?
  }

  var keyIndex: [Key: Int] = [:]
  var keys: [Key] = []
  /// Per device, one list per `LinkMarkKind`.
  var lists: [[MarkList]] = []
  /// Events of devices past `maximumDevices`: counted only.
  package private(set) var eventsLeftOut = 0
  /// Open links by adapter and handle: the device they belong to (-1: past the bound).
  var open: [UInt32: Int] = [:]
  var pending: [UInt32: [PendingConfiguration]] = [:]
  var names: [BDAddr: Names] = [:]
  /// Names read from the capturing host's own GATT server (a capture taken on the strap).
  var localNames: [UInt16: String] = [:]

  package init() {}

  static func linkKey(adapter: UInt16, handle: UInt16) -> UInt32 { UInt32(adapter) << 16 | UInt32(handle) }

  // MARK: - Frames

  /// Takes in one frame at `time` seconds (the plot's time axis).
  package mutating func add(_ frame: inout DissectedFrame, time: Double) {
    if !frame.linkEvents.isEmpty {
      for event in frame.linkEvents { linkEvent(event, frame: frame, time: time) }
    }
    if let att = frame.att {
      guard let connection = frame.connection else { return }
      attFrame(att, frame: &frame, connection: connection, time: time)
    }
  }

  mutating func linkEvent(_ event: LinkEvent, frame: DissectedFrame, time: Double) {
    let adapter = frame.record.adapter
    switch event {
    case .advertisement(let fact):
      guard let name = fact.name, !name.isEmpty else { return }
      // A complete name is not replaced by a shorter (shortened) one.
      let known = names[fact.address]?.advertised
      if (known?.count ?? 0) < name.count || (known?.count == name.count && known != name) {
        setName(fact.address) { $0.advertised = SessionAnalyzer.clipped(name) }
      }
    case .connected(let status, let handle, let peer, _, _, _):
      guard status == 0 else { return }
      let index = device(Key(adapter: adapter, peer: peer, handle: peer == nil ? handle : 0))
      if open.count >= Self.maximumOpenLinks {
        open.removeAll()
        pending.removeAll()
      }
      let link = Self.linkKey(adapter: adapter, handle: handle)
      open[link] = index
      pending[link] = nil
      mark(.connected, device: index, time: time)
    case .disconnected(let status, let handle, let reason):
      guard status == 0 else { return }
      let link = Self.linkKey(adapter: adapter, handle: handle)
      mark(.disconnected, device: device(adapter: adapter, handle: handle, label: frame.connection), time: time, detail: .reason(reason))
      open[link] = nil
      pending[link] = nil
    case .parametersUpdated(let status, let handle, let parameters):
      let detail: LinkMark.Detail =
        status == 0 ? .parameters(interval: parameters.interval, latency: parameters.latency) : .failed(status: status)
      mark(.parametersUpdated, device: device(adapter: adapter, handle: handle, label: frame.connection), time: time, detail: detail)
    case .parametersRequested(let handle, _, _, _, _):
      // The strap asking for other connection parameters (Core Vol 3 Part A §4.20).
      mark(.parametersRequested, device: device(adapter: adapter, handle: handle, label: frame.connection), time: time)
    default:
      break
    }
  }

  mutating func attFrame(_ att: ATTFact, frame: inout DissectedFrame, connection: ConnectionLabel, time: Double) {
    if case .exchangeMTUResponse(_, let mtu) = att.operation, att.channel == 4 {
      mark(.mtuExchanged, device: device(for: connection), time: time, detail: .mtu(mtu))
      return
    }
    guard !frame.attributes.isEmpty else { return }
    let link = Self.linkKey(adapter: connection.adapter, handle: connection.handle)
    switch att.opcode {
    case 0x12, 0x52:  // Write Request, Write Command: a subscription changes
      for index in frame.attributes.indices {
        frame.withAttribute(index) { fact in
          guard let configuration = fact.value(as: ClientCharacteristicConfiguration.self) else { return }
          let meaning = fact.meaning
          if meaning?.characteristic == Self.heartRateMeasurement {
            subscription(configuration.rawValue, device: device(for: connection), time: time)
          } else if meaning?.characteristic == nil, meaning?.descriptor == Self.configuration {
            // A CCCD whose characteristic is not known yet (a table inferred from the traffic):
            // kept until the link's heart rate shows its handle.
            var list = pending[link] ?? []
            guard list.count < Self.maximumPending else { return }
            list.append(PendingConfiguration(handle: fact.handle, time: time, value: configuration.rawValue))
            pending[link] = list
          }
        }
      }
    case 0x1B, 0x1D:  // Handle Value Notification, Indication
      // Most frames are notifications: without a pending write they cost no lookup.
      guard !pending.isEmpty, let waiting = pending[link] else { return }
      var valueHandle: UInt16?
      for fact in frame.attributes where fact.meaning?.characteristic == Self.heartRateMeasurement || fact.value(as: HeartRateMeasurement.self) != nil {
        valueHandle = fact.handle
        break
      }
      guard let valueHandle else { return }
      // The CCCD of a characteristic is the descriptor right after its value in every table
      // that has no other descriptors before it: the usual layout, and the only guess there is.
      let device = device(for: connection)
      for entry in waiting where entry.handle == valueHandle &+ 1 {
        subscription(entry.value, device: device, time: entry.time)
      }
      pending[link] = nil
    default:
      break
    }
    if att.opcode == 0x0B || att.opcode == 0x09 || att.opcode == 0x0D {
      // A GAP Device Name read: the server's name, the peer's when it came from the controller.
      let fromHost = frame.direction == .hostToController
      frame.forEachValue(as: DeviceName.self) { operation, name in
        guard operation == .read, !name.text.isEmpty else { return }
        if fromHost {
          if localNames[connection.adapter] != nil || localNames.count < 16 { localNames[connection.adapter] = SessionAnalyzer.clipped(name.text) }
        } else if let peer = connection.peer {
          setName(peer) { $0.read = SessionAnalyzer.clipped(name.text) }
        }
      }
    }
  }

  mutating func subscription(_ value: UInt16, device: Int, time: Double) {
    if value & 0x03 == 0 {
      mark(.unsubscribed, device: device, time: time)
    } else {
      mark(.subscribed, device: device, time: time, detail: value & 0x01 == 0 ? .indications : .plain)
    }
  }

  mutating func setName(_ address: BDAddr, _ change: (inout Names) -> Void) {
    guard names[address] != nil || names.count < Self.maximumNames else { return }
    change(&names[address, default: Names()])
  }

  // MARK: - Devices

  /// The device of a frame's connection.
  mutating func device(for connection: ConnectionLabel) -> Int {
    if let known = open[Self.linkKey(adapter: connection.adapter, handle: connection.handle)], connection.peer == nil || known < 0 || keys[known].peer == connection.peer {
      return known
    }
    return device(Key(adapter: connection.adapter, peer: connection.peer, handle: connection.peer == nil ? connection.handle : 0))
  }

  /// The device of an event that names a handle: the frame's connection when it is that one.
  mutating func device(adapter: UInt16, handle: UInt16, label: ConnectionLabel?) -> Int {
    if let label, label.adapter == adapter, label.handle == handle { return device(for: label) }
    if let known = open[Self.linkKey(adapter: adapter, handle: handle)] { return known }
    return device(Key(adapter: adapter, peer: nil, handle: handle))
  }

  /// The device's index, made when new; -1 past `maximumDevices`.
  mutating func device(_ key: Key) -> Int {
    if let known = keyIndex[key] { return known }
    guard keys.count < Self.maximumDevices else { return -1 }
    keys.append(key)
    lists.append(Array(repeating: MarkList(), count: LinkMarkKind.allCases.count))
    keyIndex[key] = keys.count - 1
    return keys.count - 1
  }

  mutating func mark(_ kind: LinkMarkKind, device: Int, time: Double, detail: LinkMark.Detail = .plain) {
    guard device >= 0 else {
      eventsLeftOut = eventsLeftOut.saturatingAdd(1)
      return
    }
    lists[device][kind.rawValue].add(LinkMark(kind: kind, time: time, detail: detail))
  }

  // MARK: - Results

  /// The marks of `owner`'s links, in time order, bounded per kind as each device's are.
  package func marks(for owner: Owner) -> [LinkMark] {
    let matching = keys.indices.filter { index in
      let key = keys[index]
      switch owner {
      case .peer(let address): return key.peer == address
      case .localHost(let adapter): return key.adapter == adapter
      case .connection(let adapter, let handle): return key.peer == nil && key.adapter == adapter && key.handle == handle
      }
    }
    var result: [LinkMark] = []
    for kind in LinkMarkKind.allCases {
      if matching.count == 1, let only = matching.first {
        result += lists[only][kind.rawValue].marks
        continue
      }
      var combined = MarkList()
      for mark in matching.flatMap({ lists[$0][kind.rawValue].marks }).sorted(by: { $0.start < $1.start }) { combined.add(mark) }
      result += combined.marks
    }
    return result.sorted { ($0.start, $0.kind) < ($1.start, $1.kind) }
  }

  /// The name `owner` goes by: for a peer the one read over GATT (Device Name), else the one it
  /// advertised, as `summary` names devices; for the capturing host, its own Device Name read by
  /// the peer; nil when none was seen.
  package func name(for owner: Owner) -> String? {
    switch owner {
    case .peer(let address): return names[address].flatMap { $0.read ?? $0.advertised }
    case .localHost(let adapter): return localNames[adapter]
    case .connection: return nil
    }
  }
}
