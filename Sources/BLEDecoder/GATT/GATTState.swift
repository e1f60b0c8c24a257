import BLECore

/// What the ATT layer knows of GATT servers across a capture: the databases learned (one per
/// server, `table`), the tables given beforehand (`maps`, `cache`) that seed them, and the
/// values that wait for a guess to be labelled in hindsight (GATTHindsight.swift). Each link's
/// own ATT state (bearers, where its databases are) is its connection's `ATTLinkState`.
@usableFromInline package struct GATTState: Sendable {
  /// GATT databases learned from discovery, one per server (a peer by address, or the local
  /// device), in slots that links remember so a PDU finds its database without hashing.
  var table = GATTDatabaseTable()
  /// GATT tables given beforehand (`--gatt`): a capture without discovery uses them.
  let maps: GATTMapSet
  /// Tables learned from earlier captures, asked by a device's address or Database Hash.
  let cache: (any GATTMapLookup)?
  /// The layouts of `maps`, worked out when a connection first needs a match by layout.
  var importedLayouts: [Int: [Int]]?
  /// Whether guesses label the values that came before them (`takeHindsight`): set by a
  /// stream that holds frames back until it knows.
  package var labelsInHindsight = false
  /// Database slots with values waiting for a guess.
  var undecidedSlots: Set<Int> = []
  /// Whether a value waits for a guess or labels wait to be taken (`Dissector.mayHoldBack`).
  @usableFromInline var holdsBack = false
  /// Earlier values that guesses made since the last `takeHindsight` explain.
  @usableFromInline var hindsight: [HindsightLabel] = []

  init(maps: GATTMapSet, cache: (any GATTMapLookup)?) {
    self.maps = maps
    self.cache = cache
  }
}
