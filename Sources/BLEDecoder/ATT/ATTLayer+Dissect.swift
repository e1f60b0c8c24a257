import BLECore

/// ATT's state of one link (its connection's `link.att`): its bearers, which side is the
/// client, and where its GATT databases are.
struct ATTLinkState: Sendable {
  /// The ATT bearer of the fixed channel (CID 4): outside the dictionary, since nearly every
  /// PDU uses it.
  var fixedBearer = ATTBearer()
  /// Other ATT bearers: a CID pair for each EATT channel, and BR/EDR ATT channels. LE has 64
  /// dynamic CIDs per side; older bearers are forgotten past that.
  var bearers = BoundedDictionary<UInt32, ATTBearer>(capacity: 64)

  /// The ATT bearer with `key` (4: the fixed channel), modified in place.
  subscript(bearer key: UInt32) -> ATTBearer {
    get { key == 4 ? fixedBearer : bearers[key, default: ATTBearer()] }
    _modify {
      if key == 4 { yield &fixedBearer } else { yield &bearers[key, default: ATTBearer()] }
    }
  }
  /// Whether the capturing host is the GATT client on the fixed bearer, once a request in a
  /// known direction showed it (direction inference uses it before the connection role).
  var localIsClient: Bool?
  /// Where this link's GATT databases are in `GATTState.table` (found once per link).
  var localDatabase: GATTDatabaseReference?
  var peerDatabase: GATTDatabaseReference?
}

extension ATTLayer {
  /// The ATT layer's entry point: a PDU on the bearer `bearerKey` (4: the fixed channel) of
  /// `connection`'s link, whose ATT state is `link`. Finds the database of the PDU's server
  /// (seeding it from a table given beforehand when the capture shows none), decodes the PDU
  /// (`decode`), then accounts for what the database learned.
  static func dissect(
    _ reader: inout ByteReader, bearerKey: UInt32, channel: UInt16, direction: Direction, connection: ConnectionLabel,
    link: inout ATTLinkState, gatt: inout GATTState, registry: DecoderRegistry, into frame: inout DissectedFrame
  ) throws(DecodeError) {
    // Whose attribute table the PDU is about: ours, or the peer's (by address when known).
    let opcode = try reader.peekUInt8()
    let local = serverIsLocal(opcode: opcode, direction: direction)
    if bearerKey == 4, frame.record.direction != nil, ATTMethodKind(opcode: try reader.peekUInt8()) == .request {
      link.localIsClient = !local
    }
    let database: Int
    if let known = gatt.table.slot(local ? link.localDatabase : link.peerDatabase) {
      database = known
    } else {
      let reference = gatt.table.reference(for: server(local: local, of: connection), diagnostics: &frame.diagnostics)
      database = reference.slot
      if local { link.localDatabase = reference } else { link.peerDatabase = reference }
    }
    // A table given beforehand is used once a PDU names a value's handle while the capture's
    // own discovery has shown nothing (a capture with discovery never needs it).
    if !gatt.table.databases[database].wasSeeded, gatt.table.databases[database].isEmpty,
      GATTState.namesValueHandle(try reader.peekUInt8())
    {
      gatt.seed(database, for: server(local: local, of: connection), &frame)
    }
    let context = ATTLinkContext(
      frameNumber: frame.number, timestamp: frame.record.timestamp, direction: direction,
      channel: channel, bearer: bearerKey, peer: connection.peer)
    let footprint = gatt.table.databases[database].footprint
    let revision = gatt.table.databases[database].revision
    let wasEmpty = gatt.table.databases[database].isEmpty
    defer {
      if gatt.table.databases[database].revision != revision { gatt.table.layoutIndex.markChanged(database) }
      if gatt.table.databases[database].guesses.pendingCount > 0 || !gatt.table.databases[database].guesses.settled.isEmpty {
        gatt.collectHindsight(database, decidedIn: frame.number, registry: registry)
      }
      gatt.table.settle(database, footprintBefore: footprint, diagnostics: &frame.diagnostics)
    }
    // Both are modified in place: copying them out would copy their storage on every PDU. The
    // fixed channel's bearer is reached directly: through the subscript's coroutine, every PDU
    // would allocate the coroutine's frame.
    if bearerKey == 4 {
      try decode(&reader, bearer: &link.fixedBearer, database: &gatt.table.databases[database], link: context, registry: registry, frame: &frame)
    } else {
      try decode(&reader, bearer: &link[bearer: bearerKey], database: &gatt.table.databases[database], link: context, registry: registry, frame: &frame)
    }
    // A Database Hash read by type before any discovery identifies the table, whatever the
    // address (a private address changes; the hash does not). One that differs from the hash
    // of the map a table was seeded from says the map is not this device's table.
    if opcode == 0x09 || opcode == 0x0B, !frame.attributes.isEmpty {
      for index in frame.attributes.indices {
        guard let hash = frame.attributes[index].value(as: DatabaseHash.self) else { continue }
        gatt.table.databases[database].reportedHash = hash.bytes
        if wasEmpty && (!gatt.maps.isEmpty || gatt.cache != nil) {
          gatt.seedByHash(database, hash.bytes, &frame)
        } else if let seeded = gatt.table.databases[database].seededHash, seeded != hash.bytes {
          gatt.dropSeededTable(database, because: "the device reports Database Hash \(Hex.string(hash.bytes)), not the table's \(Hex.string(seeded))", &frame)
        }
        break
      }
    }
  }

  /// The GATT server a PDU is about: the local side, or the peer (by address when the capture
  /// showed it, else the connection itself).
  static func server(local: Bool, of connection: ConnectionLabel) -> GATTServerIdentity {
    if local { return connection.localServer }
    if let peer = connection.peer { return .peer(peer) }
    return .connection(adapter: connection.adapter, handle: connection.handle, generation: connection.generation)
  }
}
