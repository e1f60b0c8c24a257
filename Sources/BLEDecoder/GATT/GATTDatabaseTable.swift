import BLECore

/// Where a link found its GATT database: a slot of the table, valid while the slot's generation
/// is unchanged (a slot is reused when its database is evicted).
struct GATTDatabaseReference: Sendable, Equatable {
  var slot: Int
  var generation: UInt32
}

/// The GATT databases of one capture, one per server, in stable slots, bounded in number and
/// in total size.
///
/// A hostile capture can show a million peers, or fill each database with 65 535 handles; a real
/// one shows at most a few thousand devices with a few hundred attributes each. Past either
/// limit the least recently used database is forgotten, and the frame that caused it says so.
/// Clock order: a slot used since the hand last passed gets another turn; a new one starts
/// without that turn, so a device seen once goes before one in use.
public struct GATTDatabaseTable: Sendable {
  public static let maximumDatabases = 4096
  /// Services, characteristics, typed handles and resolved handles, summed over all databases.
  package static let maximumEntries = 262_144

  var databases: [GATTDatabase] = []
  var servers: [GATTServerIdentity] = []
  var generations: [UInt32] = []
  var recentlyUsed: [Bool] = []
  var slots: [GATTServerIdentity: Int] = [:]
  /// The sum of the databases' `footprint`s.
  var footprint = 0
  var hand = 0
  /// Slots emptied to bring the footprint down, reused before anything else is evicted.
  var free: [Int] = []
  /// The learned tables' layouts, for connections whose peer is unknown.
  var layoutIndex = GATTLayoutIndex()

  public init() {}

  /// The databases by server (tests, tools).
  public var byServer: [GATTServerIdentity: GATTDatabase] { slots.mapValues { databases[$0] } }

  public var count: Int { slots.count }

  /// The slot of `reference` if it still holds the database the link found there.
  mutating func slot(_ reference: GATTDatabaseReference?) -> Int? {
    guard let reference, generations[reference.slot] == reference.generation else { return nil }
    recentlyUsed[reference.slot] = true
    return reference.slot
  }

  /// The database of `server`, created (evicting another when full) if there is none.
  mutating func reference(for server: GATTServerIdentity, diagnostics: inout [Diagnostic]) -> GATTDatabaseReference {
    if let slot = slots[server] {
      recentlyUsed[slot] = true
      return GATTDatabaseReference(slot: slot, generation: generations[slot])
    }
    let slot: Int
    if let reused = free.popLast() {
      slot = reused
      servers[slot] = server
    } else if databases.count < Self.maximumDatabases {
      slot = databases.count
      databases.append(GATTDatabase())
      servers.append(server)
      generations.append(0)
      // New entries start cold: a device seen once goes before one that keeps being used.
      recentlyUsed.append(false)
    } else {
      slot = evictOne(sparing: nil, diagnostics: &diagnostics)
      servers[slot] = server
    }
    slots[server] = slot
    return GATTDatabaseReference(slot: slot, generation: generations[slot])
  }

  /// Accounts for a database that may have grown or shrunk, evicting others while over budget.
  mutating func settle(_ slot: Int, footprintBefore: Int, diagnostics: inout [Diagnostic]) {
    footprint += databases[slot].footprint - footprintBefore
    while footprint > Self.maximumEntries, slots.count > 1 {
      free.append(evictOne(sparing: slot, diagnostics: &diagnostics))
    }
  }

  /// Forgets the least recently used database (never `sparing`); returns its now empty slot.
  mutating func evictOne(sparing: Int?, diagnostics: inout [Diagnostic]) -> Int {
    // Each pass clears the flags it skips, so the hand stops within two turns.
    while true {
      let slot = hand
      hand = (hand + 1) % databases.count
      if slot == sparing || slots[servers[slot]] != slot { continue }
      if recentlyUsed[slot] {
        recentlyUsed[slot] = false
        continue
      }
      diagnostics.append(Diagnostic(.gattTableForgotten, "GATT table of \(servers[slot]) forgotten: the capture shows more than \(Self.maximumDatabases) servers or \(Self.maximumEntries) attributes (least recently used goes first)"))
      slots[servers[slot]] = nil
      layoutIndex.remove(slot)
      footprint -= databases[slot].footprint
      databases[slot] = GATTDatabase()
      generations[slot] &+= 1
      return slot
    }
  }
}

extension GATTServerIdentity: CustomStringConvertible {
  public var description: String {
    switch self {
    case .peer(let address): return address.description
    case .local(let adapter): return "the local device of hci\(adapter)"
    case let .connection(adapter, handle, generation): return "hci\(adapter) handle \(handle) (connection \(generation))"
    }
  }
}
