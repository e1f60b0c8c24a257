import BLEAnalysis
import BLECapture
import BLECore
import BLEDecoder
import BLERender
import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The GATT tables learned from earlier captures, one file per device in
/// `$XDG_CACHE_HOME/bledissect/gatt`, named by the device's address and, when the capture read
/// it, its Database Hash: `D0B1ED004852.json`, `D0B1ED004852.<hash>.json`.
///
/// Memory of identities, not a guess: the dissector asks for a device's table by address or
/// by Database Hash, and only when a connection needs a table the capture never discovered.
/// Nothing is read at start-up: the folder's names are listed on the first question (the
/// index), and a file is read when its device is asked for. Bounded: a table of more than
/// `maximumEntries` attributes is neither saved nor read, and past `maximumTables` files or
/// `maximumBytes` the least recently used go (a table used is touched).
final class GATTCache: GATTMapLookup, Sendable {
  static let maximumTables = GATTCacheFolder.maximumTables
  static let maximumBytes = GATTCacheFolder.maximumBytes
  /// Real devices have a few hundred attributes.
  static let maximumEntries = 2048
  /// A table of `maximumEntries` in our JSON takes about 300 KB.
  static let maximumFileBytes = 1 << 20

  let directory: String
  /// What the run read and keeps to save, behind a lock (several files are read at once).
  private let state = Locked(State())

  struct State {
    var index: Index?
    /// Tables read so far, by file name (nil: unreadable, asked once), and their files' bytes:
    /// at most `maximumBytes` are read in one run, whatever the folder holds.
    var loaded: [String: GATTMap?] = [:]
    var loadedBytes = 0
    /// Problems with cache files, said once per run (the caller prints them).
    var problems: [String] = []
    /// Tables to save when the command ends, by device (the richer of two discoveries, else
    /// the latest: `replaces`). Saved only then, so that every capture of one run (`-j` jobs
    /// too) sees the cache as it was when the run began: an answer never depends on which
    /// file of the run was decoded first.
    var pending: [BDAddr: (device: GATTDevice, capture: String, learned: Date)] = [:]
    var pendingOrder: [BDAddr] = []
  }

  /// The folder's table files by device address and by Database Hash.
  struct Index {
    var byAddress: [BDAddr: String] = [:]
    var byHash: [[UInt8]: String] = [:]
  }

  /// Whether a table read is marked as used (not when the `cache` command only looks).
  let touchesOnUse: Bool

  init(directory: String, touchesOnUse: Bool = true) {
    self.directory = directory
    self.touchesOnUse = touchesOnUse
  }

  func map(for address: BDAddr) -> GATTMap? {
    state.withLock { state in
      guard let name = listed(&state).byAddress[address] else { return nil }
      return read(name, &state)
    }
  }

  func map(hash: [UInt8]) -> GATTMap? {
    state.withLock { state in
      guard let name = listed(&state).byHash[hash] else { return nil }
      return read(name, &state)
    }
  }

  /// The problems found so far, cleared.
  func takeProblems() -> [String] {
    state.withLock { state in
      defer { state.problems.removeAll() }
      return state.problems
    }
  }

  private func listed(_ state: inout State) -> Index {
    if let index = state.index { return index }
    var built = Index()
    for entry in GATTCacheFolder.entries(in: directory) {
      built.byAddress[entry.address] = entry.name
      if let hash = entry.hash { built.byHash[hash] = entry.name }
    }
    state.index = built
    return built
  }

  private func read(_ name: String, _ state: inout State) -> GATTMap? {
    if let done = state.loaded[name] { return done }
    let map = load(name, &state)
    state.loaded[name] = map
    return map
  }

  private func load(_ name: String, _ state: inout State) -> GATTMap? {
    let path = directory + "/" + name
    guard let parsed = GATTCacheFolder.parseName(name) else { return nil }
    var status = stat()
    guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
    guard Int(status.st_size) <= Self.maximumFileBytes else {
      state.problems.append("cache file \(path) is too large (\(status.st_size) bytes; at most \(Self.maximumFileBytes)): not used")
      return nil
    }
    guard state.loadedBytes + Int(status.st_size) <= Self.maximumBytes else {
      state.problems.append("cache file \(path) not used: this run already read \(state.loadedBytes) bytes of cached tables (at most \(Self.maximumBytes))")
      return nil
    }
    state.loadedBytes += Int(status.st_size)
    guard let maps = try? GATTMapImport.loadJSON(Argument(path), cached: true), maps.count == 1, var map = maps.first,
      map.address == parsed.address
    else {
      state.problems.append("cache file \(path) is not a table of \(parsed.address): not used (bledissect cache clear removes it)")
      return nil
    }
    guard map.entryCount <= Self.maximumEntries else {
      state.problems.append("cache file \(path) holds \(map.entryCount) attributes (at most \(Self.maximumEntries)): not used")
      return nil
    }
    map.file = path
    // Used: least recently used files go first when the cache is full.
    if touchesOnUse { utimes(path, nil) }
    return map
  }

  // MARK: - Saving

  /// Keeps the tables a capture's discovery showed (peers with entries learned from the
  /// capture), to be saved by `flush`.
  func keep(_ devices: [GATTDevice], capture: String, now: Date = Date()) {
    state.withLock { state in
      for device in devices where device.capturedEntries {
        guard case .peer(let address) = device.server else { continue }
        if let kept = state.pending[address] {
          guard Self.replaces(device.tree, hash: device.databaseHash, kept: kept.device.tree, keptHash: kept.device.databaseHash) else { continue }
        } else {
          // Bounded like the folder: more devices than it keeps would be trimmed anyway.
          guard state.pending.count < Self.maximumTables else { continue }
          state.pendingOrder.append(address)
        }
        state.pending[address] = (device, capture, now)
      }
    }
  }

  /// Whether a newer discovery of a device's table replaces the one kept: the cache never
  /// trades a table for a poorer one. Another Database Hash is another table (the newer
  /// replaces it); otherwise the tables are compared handle by handle
  /// (`GATTTableComparison`): one that agrees with the kept table and knows fewer handles
  /// (a capture that discovered the services only) leaves it, with its provenance.
  static func replaces(_ newer: GATTAttributeTree, hash: [UInt8]?, kept: GATTAttributeTree, keptHash: [UInt8]?) -> Bool {
    if let hash, let keptHash, hash != keptHash { return true }
    return GATTTableComparison(kept: kept, newer: newer).newerReplacesKept
  }

  /// The table a cache file holds, read for a comparison when saving (nil: unreadable, or
  /// over the bounds, and then replaced).
  static func storedTable(_ path: String) -> GATTMap? {
    var status = stat()
    guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG, Int(status.st_size) <= maximumFileBytes,
      let maps = try? GATTMapImport.loadJSON(Argument(path), cached: true), maps.count == 1, let map = maps.first,
      map.entryCount <= maximumEntries
    else { return nil }
    return map
  }

  /// Saves the kept tables, one file per device, written whole and renamed into place (other
  /// runs may save at once); then trims the folder to its bounds. Returns notes for tables not
  /// saved (too large); throws when the folder cannot be written.
  func flush() throws -> [String] {
    let saves = state.withLock { state in
      defer {
        state.pending.removeAll()
        state.pendingOrder.removeAll()
      }
      return state.pendingOrder.compactMap { state.pending[$0] }
    }
    guard !saves.isEmpty else { return [] }
    var notes: [String] = []
    try FileSystem.makeFolder(directory)
    let existing = GATTCacheFolder.entries(in: directory)
    for save in saves {
      guard case .peer(let address) = save.device.server else { continue }
      // The table already saved for the device stays when it is the richer one.
      if let stored = existing.first(where: { $0.address == address }),
        let table = Self.storedTable(directory + "/" + stored.name), table.address == address,
        !Self.replaces(save.device.tree, hash: save.device.databaseHash, kept: table.tree, keptHash: table.databaseHash ?? stored.hash)
      {
        continue
      }
      let map = GATTMap(address: address, tree: save.device.tree, origin: save.capture)
      guard map.entryCount <= Self.maximumEntries else {
        notes.append("GATT table of \(address) not cached: \(map.entryCount) attributes (at most \(Self.maximumEntries))")
        continue
      }
      var out = OutputBuffer(fd: nil)
      GATTMapWriter.write([save.device], capture: save.capture, learned: Self.utcText(save.learned), to: &out)
      guard out.bytes.count <= Self.maximumFileBytes else {
        notes.append("GATT table of \(address) not cached: \(out.bytes.count) bytes (at most \(Self.maximumFileBytes))")
        continue
      }
      let name = GATTCacheFolder.fileName(address, hash: save.device.databaseHash)
      let target = directory + "/" + name
      // Unique per save, not only per process: several runs may save the same device at once.
      let temporary = target + ".\(getpid()).\(UUID().uuidString).tmp"
      try FileSystem.writeNew(out.bytes, to: temporary)
      if rename(temporary, target) != 0 {
        let failure = SaveError(path: target, code: errno)
        unlink(temporary)
        throw failure
      }
      // The device's table under another Database Hash is out of date.
      for entry in existing where entry.address == address && entry.name != name { unlink(directory + "/" + entry.name) }
    }
    GATTCacheFolder.trim(directory)
    return notes
  }

  /// "2026-12-03T10:14:36Z" (ISO 8601, UTC, seconds).
  static func utcText(_ date: Date) -> String {
    var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
    var parts = tm()
    gmtime_r(&seconds, &parts)
    func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
    return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
  }

  /// Why a table could not be saved: the file and the system's reason.
  typealias SaveError = FileSystem.Failure
}
