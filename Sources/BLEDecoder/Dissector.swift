import BLECore

/// Turns capture records into decoded frames, layer by layer, keeping per-connection state.
///
/// One owner (the CLI loop or a test) feeds records in capture order. `dissect` never throws:
/// bytes that do not decode become `frame.malformed`, and the next frame starts afresh.
///
/// The coordinator: it owns each layer's state and routes a record up through the layers (HCI
/// or the air's link layer, then L2CAP, then the channel's protocol: ATT, SMP, signaling),
/// handing each layer its own state and what it reads, never the dissector itself.
public struct Dissector: Sendable {
  /// What is decoded by lookup: characteristic decoders, handle overrides, payload hooks.
  public let registry: DecoderRegistry
  /// The open connections, by controller and handle (HCI's table; sniffed links get handles
  /// too). Each holds every layer's state of its link (`LinkState`: L2CAP's, ATT's).
  public internal(set) var connections = ConnectionTable()
  /// L2CAP's state across links: the fixed channels, the reassembly budget.
  var l2cap = L2CAPState()
  /// The ATT layer's knowledge of GATT servers: databases, tables given beforehand, hindsight.
  @usableFromInline package var gatt: GATTState
  /// The link layer's state for records sniffed over the air: the links, and their keys.
  var air: AirLinkState

  public init(registry: DecoderRegistry = .standard, maps: GATTMapSet = GATTMapSet(), cache: (any GATTMapLookup)? = nil, keys: LinkKeyRing = LinkKeyRing()) {
    self.registry = registry
    gatt = GATTState(maps: maps, cache: cache)
    air = AirLinkState(keys: AirKeys(given: keys))
  }

  /// Decodes `record` into `frame` (whose buffers are reused), as frame `number`.
  public mutating func dissect(_ record: CaptureRecord, number: Int, into frame: inout DissectedFrame) {
    frame.record = record
    dissect(number: number, into: &frame)
  }

  /// Decodes the record already in `frame.record` (a reader filled it in place), as frame
  /// `number`: every layer, then the value stage.
  public mutating func dissect(number: Int, into frame: inout DissectedFrame) {
    decodeLayers(number: number, into: &frame)
    ValueStage.complete(&frame, registry: registry)
  }

  /// Every layer of the record in `frame.record` but the value stage (`ValueStage.complete`),
  /// which the engine runs where it decides (on another thread, say). The frame is complete
  /// only after that stage.
  package mutating func decodeLayers(number: Int, into frame: inout DissectedFrame) {
    frame.reset(number: number)
    frame.direction = frame.record.direction
    // The record's bytes are moved out (the frame is modified meanwhile) and pinned while its
    // layers are decoded: readers and views point into them. Then they go back, buffer intact.
    var bytes: [UInt8] = []
    swap(&bytes, &frame.record.bytes)
    let kind = frame.record.kind
    let adapter = frame.record.adapter
    ByteView.pinning(bytes) { view in
      var reader = ByteReader(view, layer: .hci)
      dissect(&reader, kind: kind, adapter: adapter, into: &frame)
    }
    swap(&bytes, &frame.record.bytes)
  }

  mutating func dissect(_ reader: inout ByteReader, kind: PacketKind, adapter: UInt16, into frame: inout DissectedFrame) {
    // Each layer's fields are one top-level group: JSON keys `hci`/`info`, `l2cap`, `att`, ...
    if kind.isHCIPacket {
      frame.fields.beginObject("hci", "HCI", inline: true)
    } else if case .airPacket = kind {
      frame.fields.beginObject("air", "Air", inline: true)
    } else {
      frame.fields.beginObject("info", "Record", inline: true)
    }
    do {
      switch kind {
      case .command:
        var context = HCICommand.Context()
        context.registry = registry
        defer { for event in context.events { frame.linkEvents.append(event) } }
        try HCICommand.decode(&reader, into: &frame, context: &context)
        if let handle = context.handle { label(&frame, handle: handle, createIfMissing: false) }
      case .event:
        var context = HCIEvent.Context()
        context.registry = registry
        context.adapter = adapter
        defer {
          apply(context, to: &frame)
          for event in context.events { frame.linkEvents.append(event) }
        }
        try HCIEvent.decode(&reader, into: &frame, context: &context)
      case .acl:
        try dissectACL(&reader, into: &frame)
      case .sco:
        let handle = try HCIDataPacket.decodeSCO(&reader, into: &frame)
        label(&frame, handle: handle, createIfMissing: true, isLE: false)
      case .iso:
        let handle = try HCIDataPacket.decodeISO(&reader, into: &frame)
        label(&frame, handle: handle, createIfMissing: false)
      case .indexRemoved:
        connections.closeAll(adapter: adapter)
        try MonitorNote.decode(&reader, kind: kind, into: &frame)
      case .airPacket:
        try AirPacket.decode(&reader, into: &frame, &air, connections: &connections, l2cap: &l2cap, gatt: &gatt, registry: registry)
      case .other(let code):
        frame.header = .unknownRecord(type: code)
        frame.fields.bytes("data", "Data", reader.readRemaining())
      default:
        reader.layer = .note
        try MonitorNote.decode(&reader, kind: kind, into: &frame)
      }
    } catch {
      frame.malformed = error
    }
    if !connections.evicted.isEmpty {
      for label in connections.takeEvicted() {
        frame.diagnostics.append(Diagnostic(.hciConnectionForgotten, "connection handle \(label.handle) of hci\(label.adapter) forgotten: more than \(ConnectionTable.maximumOpen) connections open at once"))
      }
    }
    if let repair = frame.record.clockRepair {
      let fault = repair.fault == .goesBack ? "it goes back here" : "its microseconds field holds a second or more"
      let timed = repair.bySnifferClock ? "timed by the sniffer's own clock" : "kept from going back"
      frame.diagnostics.append(Diagnostic(.captureClockBroken, "the capture's record clock is broken (\(fault)): records are \(timed) from here on"))
    }
    frame.fields.closeAll()
  }

  /// Applies what an event did to the connection table and labels the frame with the connection.
  mutating func apply(_ context: HCIEvent.Context, to frame: inout DissectedFrame) {
    let adapter = frame.record.adapter
    switch context.change {
    case .opened(let connection)?:
      if connections.connection(adapter: adapter, handle: connection.handle) != nil {
        frame.diagnostics.append(Diagnostic(.hciDisconnectNotCaptured, "handle \(connection.handle) was still open; its disconnect was not captured"))
      }
      frame.connection = connections.opened(connection).label
    case let .updated(handle, interval, latency, timeout)?:
      frame.connection = connections.update(adapter: adapter, handle: handle, interval: interval, latency: latency, supervisionTimeout: timeout).label
    case .closed(let handle)?:
      let key = ConnectionTable.Key(adapter: adapter, handle: handle)
      for direction in [Direction.hostToController, .controllerToHost] {
        if let slot = connections.slot(key), let lost = connections.entries[slot].link.l2cap.reassemblers[direction].reset() {
          frame.diagnostics.append(Diagnostic(.l2capPDUDropped, lost))
        }
      }
      frame.connection = connections.close(adapter: adapter, handle: handle).label
    case nil:
      if let handle = context.handle { label(&frame, handle: handle, createIfMissing: false) }
    }
  }

  /// Labels a frame with the connection on `handle`; data packets on a handle never seen
  /// connecting create an implicit entry (the capture started mid-connection).
  mutating func label(_ frame: inout DissectedFrame, handle: UInt16, createIfMissing: Bool, isLE: Bool = true) {
    let adapter = frame.record.adapter
    if let slot = connections.slot(ConnectionTable.Key(adapter: adapter, handle: handle)) {
      frame.connection = connections.entries[slot].label
    } else if createIfMissing {
      let (slot, _) = connections.slot(adapter: adapter, handle: handle, isLE: isLE)
      frame.connection = connections.entries[slot].label
      frame.diagnostics.append(Diagnostic(.hciHandleWithoutConnect, "handle \(handle) first seen here without a connect event (capture started mid-connection?)"))
    } else {
      frame.connection = ConnectionLabel(adapter: adapter, handle: handle, generation: 0, peer: nil, peerType: nil)
    }
  }
}

/// What a run learned, for tools and tests (the state is the layers').
extension Dissector {
  /// The databases by server (tests, tools).
  public var databases: [GATTServerIdentity: GATTDatabase] { gatt.table.byServer }
  /// GATT tables given beforehand (`--gatt`): a capture without discovery uses them.
  public var maps: GATTMapSet { gatt.maps }
  /// Tables learned from earlier captures, asked by a device's address or Database Hash.
  public var cache: (any GATTMapLookup)? { gatt.cache }
  /// Whether guesses label the values that came before them (`GATTState.takeHindsight`): set
  /// by a stream that holds frames back until it knows.
  public var labelsInHindsight: Bool {
    get { gatt.labelsInHindsight }
    set { gatt.labelsInHindsight = newValue }
  }
  /// Whether labels wait to be taken (asked after every frame: one comparison).
  @inlinable public var hasHindsight: Bool { !gatt.hindsight.isEmpty }
  /// Whether a stream must hold the frame just dissected: a value waits for a guess, or a
  /// guess just labelled earlier ones (asked after every frame: two comparisons).
  @inlinable public var mayHoldBack: Bool { gatt.holdsBack }

  /// Long-term keys given beforehand (`--ltk`, `--keys`, `--keys-from`), for sniffed links.
  public var keys: LinkKeyRing { air.keys.given }
  /// Keys the capture gave away: STKs worked out from sniffed legacy pairings, LTKs
  /// distributed on links it decrypted.
  package var learnedKeys: LinkKeyRing { air.keys.learned }
  /// Packets decrypted, by where their key came from (`LinkKeyRing.Key.source`).
  package var decryptedBySource: [String: Int] { air.keys.decryptedBySource }
  /// The value of each key the capture gave away, by its source (hex, as `--ltk` takes it).
  package var keyValues: [String: String] { air.keys.keyValues }
  /// The TKs that fitted a sniffed legacy pairing (`TemporaryKey.words`), the legacy pairings
  /// whose TK was looked for, and the passkey searches that found none.
  package var fittedTemporaryKeys: Set<String> { air.keys.fittedTemporaryKeys }
  package var legacyPairingsTried: Int { air.keys.legacyPairingsTried }
  package var failedSearches: Int { air.keys.failedSearches }
  /// The keys that opened a link's packets (bounded), to say which keys given opened none.
  package var openedKeys: Set<[UInt8]> { air.keys.openedKeys }
  /// The devices of the links sniffed (bounded), to say a key bound to another fits none.
  package var airDevices: Set<BDAddr> { air.keys.devices }
}
