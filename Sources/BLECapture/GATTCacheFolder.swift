#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

import BLECore

/// The GATT cache's folder on disk: one table file per device, named by its address and, when
/// known, its Database Hash (`D0B1ED004852.json`, `D0B1ED004852.<hash>.json`), bounded in count
/// and bytes. What is kept, and when a table replaces another, is the CLI's cache policy.
package enum GATTCacheFolder {
  package static let maximumTables = 256
  package static let maximumBytes = 16 << 20

  package struct Entry {
    package var name: String
    package var address: BDAddr
    package var hash: [UInt8]?
  }

  /// `AABBCCDDEEFF.json` or `AABBCCDDEEFF.<32 hex digits>.json`.
  package static func parseName(_ name: String) -> (address: BDAddr, hash: [UInt8]?)? {
    guard name.hasSuffix(".json") else { return nil }
    let parts = name.dropLast(5).split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count <= 2, parts[0].count == 12, parts[0].allSatisfy(\.isHexDigit), let raw = UInt64(parts[0], radix: 16) else { return nil }
    let address = BDAddr(rawValue: raw)
    if parts.count == 2 {
      guard parts[1].count == 32, let hash = Hex.bytes(parts[1]) else { return nil }
      return (address, hash)
    }
    return (address, nil)
  }

  package static func fileName(_ address: BDAddr, hash: [UInt8]?) -> String {
    let base = String(address.description.filter { $0 != ":" })
    guard let hash, hash.count == 16 else { return base + ".json" }
    return base + "." + Hex.string(hash) + ".json"
  }

  /// The table files in `directory`, in name order.
  package static func entries(in directory: String) -> [Entry] {
    FileSystem.names(in: directory).sorted().compactMap { name in
      parseName(name).map { Entry(name: name, address: $0.address, hash: $0.hash) }
    }
  }

  /// Removes the least recently used tables while the folder holds more than its bounds, and
  /// temporary files left by runs that were stopped mid-save.
  package static func trim(_ directory: String, maximumTables: Int = maximumTables, maximumBytes: Int = maximumBytes) {
    var tables: [(name: String, used: Int, bytes: Int)] = []
    let now = Int(time(nil))
    for name in FileSystem.names(in: directory) {
      var status = stat()
      guard lstat(directory + "/" + name, &status) == 0 else { continue }
      if name.hasSuffix(".tmp") {
        if now - FileSystem.modificationTime(status) > 3600 { unlink(directory + "/" + name) }
        continue
      }
      guard parseName(name) != nil else { continue }
      tables.append((name, FileSystem.modificationTime(status), Int(status.st_size)))
    }
    // Oldest use first; names break ties, so two runs agree on what goes.
    tables.sort { ($0.used, $0.name) < ($1.used, $1.name) }
    // Sizes come from the file system: summed without overflowing, whatever a folder holds.
    var bytes = tables.reduce(0) { $0.saturatingAdd($1.bytes) }
    var count = tables.count
    for table in tables where count > maximumTables || bytes > maximumBytes {
      unlink(directory + "/" + table.name)
      count -= 1
      bytes -= table.bytes
    }
  }

  /// Removes every table; returns how many.
  package static func clear(_ directory: String) -> Int {
    var removed = 0
    for name in FileSystem.names(in: directory) where parseName(name) != nil || name.hasSuffix(".tmp") {
      if unlink(directory + "/" + name) == 0, !name.hasSuffix(".tmp") { removed += 1 }
    }
    return removed
  }
}
