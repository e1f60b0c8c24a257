import BLECore
import BLEDecoder
import BLEEngine

/// One Heart Rate Measurement as `hr` lists it: a row of its table, CSV or JSON Lines.
package struct HeartRateRow {
  package var frame: Int
  package var timestamp: Int64
  /// Microseconds since the capture's first frame.
  package var elapsed: Int64
  /// The device it came from (`HeartRateSeries.deviceLabel`), and its address when the label is one.
  package var device: String
  package var address: BDAddr?
  package var measurement: HeartRateMeasurement
  package var flags: HeartRateFlags
  /// Where the handle's meaning came from: the capture's discovery, or elsewhere (named in the row).
  package var meaning: GATTSource
}

/// The heart-rate series of a capture, frame by frame: which frames carry a measurement, from
/// which device, with which plausibility flags; what the plot needs (`--svg`); and, while no
/// measurement was found, why (`absence`). It writes nothing: each row goes to the caller.
package struct HeartRateSeries {
  package static let maximumPlottedDevices = 64
  package static let maximumMeaningNotes = 64

  /// Only measurements from these devices (`--peer`), when any.
  let peers: [BDAddr]
  /// Whether to gather the plot's tracks and link events.
  let plotting: Bool
  package private(set) var firstTimestamp: Int64?
  /// The last device label, by connection: notifications repeat one connection.
  var lastConnection: ConnectionLabel?
  var lastSentByHost = false
  var lastAddress: BDAddr?
  var lastLabel = ""
  /// The device the last label names, as the plot's link events know it.
  var lastOwner = LinkTimeline.Owner.localHost(adapter: 0)
  var tracks: [String: Int] = [:]
  var trackList: [(label: String, owner: LinkTimeline.Owner, track: HeartRateTrack)] = []
  /// Link events and device names for the plot (only when plotting).
  package private(set) var timeline = LinkTimeline()
  package private(set) var devicesLeftOut = 0
  var devicesSeenLeftOut: Set<String> = []
  /// Each device's plausibility checks (the current device selected with its label).
  var plausibility = HeartRatePlausibilityTable()
  /// Rows found (each row's flags are checked once), and, while there are none, what the
  /// capture showed instead.
  package var rowCount: Int { plausibility.checked }
  package private(set) var absence = HeartRateAbsence()
  /// Notes, once per device and source, that a row's handle was not known from the capture's discovery.
  package private(set) var meaningNotes: [String] = []
  var notedMeanings: Set<String> = []

  package init(peers: [BDAddr], plotting: Bool) {
    self.peers = peers
    self.plotting = plotting
  }

  /// Whether this frame is the capture's first (then the caller writes its header).
  package mutating func start(_ frame: borrowing DissectedFrame) -> Bool {
    guard firstTimestamp == nil else { return false }
    firstTimestamp = frame.record.timestamp
    return true
  }

  /// Hands `body` each measurement `frame` carries, in order.
  package mutating func rows(in frame: inout DissectedFrame, _ body: (borrowing HeartRateRow) -> Void) {
    let timestamp = frame.record.timestamp
    if firstTimestamp == nil { firstTimestamp = timestamp }
    if plotting { timeline.add(&frame, time: plotSeconds(timestamp)) }
    // Most frames carry no attribute: that test is all they cost.
    guard !frame.attributes.isEmpty else { return }
    if rowCount == 0 { absence.observe(frame) }
    let connection = frame.connection
    let sentByHost = frame.direction == .hostToController
    let (number, adapter) = (frame.number, frame.record.adapter)
    // A Reset Energy Expended written to a Heart Rate Control Point: the device's energy may
    // start again (asked of writes only).
    if let opcode = frame.attOpcode, opcode == 0x12 || opcode == 0x52 {
      frame.forEachValue(as: HeartRateControlPoint.self) { _, point in
        guard point.command == .resetEnergyExpended else { return }
        plausibility.energyWasReset(Self.deviceLabel(connection, sentByHost: !sentByHost, adapter: adapter))
      }
    }
    for position in frame.attributes.indices {
      let (found, operation, source, handle) = frame.withAttribute(position) { fact in
        (fact.value(as: HeartRateMeasurement.self), fact.operation, fact.meaning?.source ?? .capture, fact.handle)
      }
      guard let measurement = found else { continue }
      switch operation {
      case .notification, .indication, .read: break
      case .write, .writeWithoutResponse: continue
      }
      if !peers.isEmpty {
        guard let peer = connection?.peer, peers.contains(peer) else {
          absence.otherDevices = absence.otherDevices.saturatingAdd(1)
          continue
        }
      }
      label(connection, sentByHost: sentByHost, adapter: adapter)
      if source != .capture { noteMeaning(source, handle: handle) }
      let flags = plausibility.check(measurement)
      let elapsed = Timestamp.elapsed(from: firstTimestamp ?? timestamp, to: timestamp)
      body(HeartRateRow(
        frame: number, timestamp: timestamp, elapsed: elapsed, device: lastLabel, address: lastAddress, measurement: measurement, flags: flags,
        meaning: source))
      if plotting { track(timestamp, measurement, flags) }
    }
  }

  /// The device a frame's measurement comes from: the peer, or the capturing host when it sent
  /// the notification (a capture taken on the strap).
  /// Takes the frame's parts, not the frame: a copy of it would retain every buffer it holds.
  mutating func label(_ connection: ConnectionLabel?, sentByHost: Bool, adapter recordAdapter: UInt16) {
    if let connection, connection == lastConnection, sentByHost == lastSentByHost { return }
    lastConnection = connection
    lastSentByHost = sentByHost
    defer { plausibility.select(lastLabel) }
    if !sentByHost, let peer = connection?.peer {
      lastAddress = peer
      lastLabel = peer.description
      lastOwner = .peer(peer)
      return
    }
    lastLabel = Self.deviceLabel(connection, sentByHost: sentByHost, adapter: recordAdapter)
    lastAddress = nil
    let adapter = connection?.adapter ?? recordAdapter
    lastOwner = sentByHost ? .localHost(adapter: adapter) : .connection(adapter: adapter, handle: connection?.handle ?? 0)
  }

  /// A device's label as text: the peer's address, the capturing host when it sent the value
  /// (`hciN`: the capture is the device's own), or, for a peer whose address the capture does
  /// not show, its connection: "conn 67 (peer unknown)" ("… on hci1" past the first controller).
  package static func deviceLabel(_ connection: ConnectionLabel?, sentByHost: Bool, adapter: UInt16) -> String {
    if !sentByHost, let peer = connection?.peer { return peer.description }
    let adapter = connection?.adapter ?? adapter
    if sentByHost { return "hci\(adapter)" }
    return "conn \(connection?.handle ?? 0) (peer unknown)" + (adapter == 0 ? "" : " on hci\(adapter)")
  }

  /// Notes once per device and source that a row's handle was not known from the capture's
  /// discovery (the command prints them on stderr after the rows).
  mutating func noteMeaning(_ source: GATTSource, handle: UInt16) {
    let key = lastLabel + "/\(source.rawValue)"
    guard !notedMeanings.contains(key), meaningNotes.count < Self.maximumMeaningNotes else { return }
    notedMeanings.insert(key)
    let how: String
    switch source {
    case .capture: return
    case .imported: how = "from the map given with --gatt"
    case .cache: how = "from the cache (a table saved from an earlier capture)"
    case .layout: how = "by layout (another connection's table that fits this one)"
    case .inferred: how = "by inference from the values (the capture shows no discovery of it)"
    }
    meaningNotes.append("\(lastLabel): handle \(Hex.prefixed(UInt64(handle), width: 4)) is taken as Heart Rate Measurement \(how)")
  }

  // MARK: Plot

  /// Seconds since the capture's first frame: the plot's time axis.
  func plotSeconds(_ timestamp: Int64) -> Double {
    Double(Timestamp.elapsed(from: firstTimestamp ?? timestamp, to: timestamp)) / 1_000_000
  }

  mutating func track(_ timestamp: Int64, _ measurement: HeartRateMeasurement, _ flags: HeartRateFlags) {
    let slot: Int
    if let known = tracks[lastLabel] {
      slot = known
    } else if trackList.count < Self.maximumPlottedDevices {
      slot = trackList.count
      tracks[lastLabel] = slot
      trackList.append((lastLabel, lastOwner, HeartRateTrack()))
    } else {
      // Counted once per device, with the set bounded too.
      if devicesSeenLeftOut.count < 4096, devicesSeenLeftOut.insert(lastLabel).inserted { devicesLeftOut += 1 }
      return
    }
    trackList[slot].track.add(
      time: plotSeconds(timestamp), bpm: Double(measurement.bpm), contactLost: measurement.sensorContact == .notDetected,
      rrMilliseconds: measurement.rrIntervalsMilliseconds, flags: flags)
  }

  /// Each device's panel: named as its GAP name or advertised name with the label `hr` gives it
  /// ("bledissect HR (D0:B1:ED:00:48:52)"), the label alone when no name is known.
  package func plotDevices() -> [HeartRatePlot.Device] {
    trackList.map { entry in
      let count = entry.track.measurements
      let label = timeline.name(for: entry.owner).map { "\($0) (\(entry.label))" } ?? entry.label
      return entry.track.plotDevice(
        label: label, detail: "\(count) measurement\(count == 1 ? "" : "s")", marks: timeline.marks(for: entry.owner))
    }
  }
}
