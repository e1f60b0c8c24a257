import BLECore

/// The role the local controller plays on a link.
public enum LinkRole: UInt8, Sendable {
  case central = 0
  case peripheral = 1
}

/// One connection: opened by a connect event (or implicitly by the first packet on an unknown
/// handle), updated by parameter updates, closed by Disconnection Complete.
public struct Connection: Sendable, Equatable {
  public static func == (a: Connection, b: Connection) -> Bool {
    a.adapter == b.adapter && a.handle == b.handle && a.generation == b.generation && a.peer == b.peer
      && a.peerType == b.peerType && a.role == b.role && a.interval == b.interval && a.latency == b.latency
      && a.supervisionTimeout == b.supervisionTimeout && a.openedInFrame == b.openedInFrame && a.isLE == b.isLE
  }

  public var adapter: UInt16
  public var handle: UInt16
  public var generation: Int
  public var peer: BDAddr?
  public var peerType: AddressType?
  public var role: LinkRole?
  /// Connection interval in units of 1.25 ms.
  public var interval: UInt16?
  public var latency: UInt16?
  /// Supervision timeout in units of 10 ms.
  public var supervisionTimeout: UInt16?
  /// Frame that opened it; nil for a connection first seen mid-capture.
  public var openedInFrame: Int?
  public var isLE: Bool
  /// The local side's own address when the capture shows it (a sniffed link's central).
  public var localAddress: BDAddr? = nil
  /// The layers' state of this link: L2CAP reassembly and channels, ATT bearers.
  var link = LinkState()
  /// Used since the table's eviction hand last passed (see `ConnectionTable.maximumOpen`); a
  /// new connection starts without it, so one seen once goes before one in use.
  var recentlyUsed = false

  public var label: ConnectionLabel {
    ConnectionLabel(adapter: adapter, handle: handle, generation: generation, peer: peer, peerType: peerType, localAddress: localAddress)
  }
}

/// Per-connection state of the layers above HCI, hung off `Connection`: each layer's part is
/// its own (`L2CAPLinkState`, `ATTLinkState`, `ClassicLinkState`); a layer is handed its part, not the table.
public struct LinkState: Sendable {
  var l2cap = L2CAPLinkState()
  var att = ATTLinkState()
  /// SDP and RFCOMM (BR/EDR links).
  var classic = ClassicLinkState()
  /// The direction of the last PDU start, for ACL continuations in formats that do not say.
  var lastStartDirection = Direction.controllerToHost
  public init() {}
}

/// What an event did to the set of connections; the dissector applies it to the table.
enum ConnectionChange: Sendable {
  case opened(Connection)
  case updated(handle: UInt16, interval: UInt16, latency: UInt16, supervisionTimeout: UInt16)
  case closed(handle: UInt16)
}

/// Open connections keyed by controller index and connection handle.
///
/// Handles are reused after a disconnect, so each (controller, handle) pair counts generations.
/// The table is bounded: a capture may show data on every handle of thousands of controllers
/// without a single disconnect, so past `maximumOpen` the least recently used connection is
/// forgotten (clock order), and the frame that caused it says so.
public struct ConnectionTable: Sendable {
  /// Far more than controllers hold at once (a few dozen links each).
  public static let maximumOpen = 1024
  /// Generation counters kept for handles not open now, before the oldest are dropped.
  static let maximumGenerations = 65_536
  struct Key: Hashable { var adapter: UInt16; var handle: UInt16 }
  /// Open connections in no particular order; `slots` finds them. Layers reach a connection's
  /// state through its slot (`entries[slot]`), so nothing is copied on the per-packet path.
  var entries: [Connection] = []
  var slots: [Key: Int] = [:]
  var generations: [Key: Int] = [:]
  /// The eviction hand over `entries`.
  var hand = 0
  /// Connections forgotten to make room, not yet reported by the dissector.
  var evicted: [ConnectionLabel] = []

  public init() {}

  public var openConnections: [Connection] {
    entries.sorted { ($0.adapter, $0.handle) < ($1.adapter, $1.handle) }
  }

  public func connection(adapter: UInt16, handle: UInt16) -> Connection? {
    slots[Key(adapter: adapter, handle: handle)].map { entries[$0] }
  }

  /// The last key looked up and its slot: consecutive packets are usually on one link.
  var lastKey: Key?
  var lastSlot = 0

  mutating func slot(_ key: Key) -> Int? {
    if key == lastKey { return lastSlot }
    guard let slot = slots[key] else { return nil }
    // Set on the uncached path only: the hand moves only in `store`, which clears `lastKey`.
    entries[slot].recentlyUsed = true
    lastKey = key
    lastSlot = slot
    return slot
  }

  mutating func nextGeneration(_ key: Key) -> Int {
    if generations.count >= Self.maximumGenerations, generations[key] == nil {
      // Counters of handles that are not open go; a reused handle then counts from 1 again.
      generations = generations.filter { slots[$0.key] != nil }
    }
    let generation = (generations[key] ?? 0) &+ 1
    generations[key] = generation
    return generation
  }

  mutating func store(_ entry: Connection, _ key: Key) {
    lastKey = nil
    if let slot = slots[key] {
      entries[slot] = entry
    } else {
      if entries.count >= Self.maximumOpen { evictOne() }
      slots[key] = entries.count
      entries.append(entry)
    }
  }

  /// Forgets the least recently used connection: a used one gets a second turn.
  mutating func evictOne() {
    while true {
      if hand >= entries.count { hand = 0 }
      if entries[hand].recentlyUsed {
        entries[hand].recentlyUsed = false
        hand += 1
        continue
      }
      evicted.append(entries[hand].label)
      remove(slot: hand, key: Key(adapter: entries[hand].adapter, handle: entries[hand].handle))
      return
    }
  }

  /// The connections forgotten since the last call.
  mutating func takeEvicted() -> [ConnectionLabel] {
    defer { evicted.removeAll() }
    return evicted
  }

  /// Records a new connection; a still-open one on the same handle is replaced (its
  /// disconnect was not captured).
  @discardableResult
  mutating func opened(_ connection: Connection) -> Connection {
    let key = Key(adapter: connection.adapter, handle: connection.handle)
    var entry = connection
    entry.generation = nextGeneration(key)
    store(entry, key)
    return entry
  }

  /// The slot of the open connection on `handle`, creating an implicit entry when none was
  /// seen opening.
  mutating func slot(adapter: UInt16, handle: UInt16, isLE: Bool) -> (slot: Int, created: Bool) {
    let key = Key(adapter: adapter, handle: handle)
    if let slot = slots[key] { return (slot, false) }
    let entry = Connection(
      adapter: adapter, handle: handle, generation: nextGeneration(key), peer: nil, peerType: nil, role: nil,
      interval: nil, latency: nil, supervisionTimeout: nil, openedInFrame: nil, isLE: isLE)
    store(entry, key)
    return (slots[key]!, true)
  }

  mutating func update(adapter: UInt16, handle: UInt16, interval: UInt16, latency: UInt16, supervisionTimeout: UInt16) -> Connection {
    let (slot, _) = slot(adapter: adapter, handle: handle, isLE: true)
    entries[slot].interval = interval
    entries[slot].latency = latency
    entries[slot].supervisionTimeout = supervisionTimeout
    return entries[slot]
  }

  /// Removes the connection, returning it (or an implicit one for a handle never seen).
  mutating func close(adapter: UInt16, handle: UInt16) -> Connection {
    let key = Key(adapter: adapter, handle: handle)
    let (slot, _) = slot(adapter: adapter, handle: handle, isLE: true)
    let entry = entries[slot]
    remove(slot: slot, key: key)
    return entry
  }

  mutating func remove(slot: Int, key: Key) {
    lastKey = nil
    slots[key] = nil
    let last = entries.count - 1
    if slot != last {
      entries[slot] = entries[last]
      slots[Key(adapter: entries[slot].adapter, handle: entries[slot].handle)] = slot
    }
    entries.removeLast()
  }

  /// Forgets every connection of a controller (index removed or reset).
  mutating func closeAll(adapter: UInt16) {
    for entry in entries where entry.adapter == adapter {
      let key = Key(adapter: entry.adapter, handle: entry.handle)
      if let slot = slots[key] { remove(slot: slot, key: key) }
    }
  }
}
