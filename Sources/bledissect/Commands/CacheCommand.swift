import BLEAnalysis
import BLECapture
import BLECore
import BLERender

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// `bledissect cache list|show ADDRESS|clear`: the GATT tables kept from earlier captures, so a
/// user can see what may name a capture's handles, and reset it.
enum CacheCommand: CLICommand {
  static let configuration = CommandConfiguration(
    name: "cache",
    abstract: "List, show or clear the GATT tables cached from earlier captures.",
    usage: "cache list | cache show <address> | cache clear",
    discussion: """
      Each run that sees a device's GATT discovery keeps its table, one file per device, in
      $XDG_CACHE_HOME/bledissect/gatt (else ~/.cache/bledissect/gatt). A later capture of the
      same device (its address, or the Database Hash it reports) that shows no discovery is
      decoded with it, and says so: '(cached map)' in the header line, gatt.source "cache"
      with the file and when it was learned in JSON, a note on stderr from hr. A cached table
      the traffic contradicts is dropped for that run. A later discovery that agrees with the
      cached table but knows fewer attributes (services only) leaves it, and where it was
      learned; one that contradicts it replaces it. Tables are never matched by layout, and
      at most \(GATTCache.maximumTables) tables (\(GATTCache.maximumBytes >> 20) MiB) of at most \(GATTCache.maximumEntries) attributes are kept,
      the least recently used going first. --no-cache on any command neither uses nor saves it.

        list           one line per table: address, attributes, when learned, from which capture
        show ADDRESS   the table, as 'bledissect gatt' prints one
        clear          remove every table
      """,
    options: [],
    minimumPositionals: 1,
    maximumPositionals: 2,
    positionalWords: ["list", "show", "clear"])

  static func run(_ arguments: ParsedArguments, _ context: CLIContext) -> Int32 {
    guard let directory = DecodingOptions.cacheDirectory(context.environment) else {
      context.error("cache: no cache folder (neither XDG_CACHE_HOME nor HOME is an absolute path)")
      return ExitStatus.usage
    }
    let words = arguments.positionals.map(\.text)
    switch (words[0], words.count) {
    case ("list", 1):
      return list(directory, context)
    case ("show", 2):
      guard let address = BDAddr(words[1]) else {
        context.error("cache show needs a device address (AA:BB:CC:DD:EE:FF), not '\(arguments.positionals[1].display)'")
        return ExitStatus.usage
      }
      return show(address, directory, context)
    case ("clear", 1):
      let removed = GATTCacheFolder.clear(directory)
      context.stdout.append(string: "removed \(removed) table\(removed == 1 ? "" : "s") from \(directory)\n")
      context.stdout.flush()
      return ExitStatus.success
    default:
      context.error("cache takes 'list', 'show ADDRESS' or 'clear' (see bledissect help cache)")
      return ExitStatus.usage
    }
  }

  static func list(_ directory: String, _ context: CLIContext) -> Int32 {
    let entries = GATTCacheFolder.entries(in: directory)
    if entries.isEmpty {
      context.stdout.append(string: "no GATT tables cached in \(directory)\n")
      context.stdout.flush()
      return ExitStatus.success
    }
    context.stdout.append(string: "\(entries.count) GATT table\(entries.count == 1 ? "" : "s") cached in \(directory) (most recently used first)\n")
    var rows: [(used: Int, line: String)] = []
    let cache = GATTCache(directory: directory, touchesOnUse: false)
    for entry in entries {
      var status = stat()
      guard lstat(directory + "/" + entry.name, &status) == 0 else { continue }
      var line = entry.address.description
      if let map = cache.map(for: entry.address) {
        line += "  \(map.entryCount) attributes"
        if let learned = map.learned { line += ", learned \(learned)" }
        line += " from \(map.origin.hasPrefix("learned from ") ? String(map.origin.dropFirst(13)) : map.origin)"
        if let hash = map.databaseHash { line += ", Database Hash \(Hex.string(hash))" }
      } else {
        line += "  unreadable (\(status.st_size) bytes): not used"
      }
      rows.append((FileSystem.modificationTime(status), line))
    }
    for row in rows.sorted(by: { $0.used > $1.used }) { context.stdout.append(string: row.line + "\n") }
    context.stdout.flush()
    for problem in cache.takeProblems() { context.error(problem) }
    return ExitStatus.success
  }

  static func show(_ address: BDAddr, _ directory: String, _ context: CLIContext) -> Int32 {
    let cache = GATTCache(directory: directory, touchesOnUse: false)
    guard let map = cache.map(for: address) else {
      for problem in cache.takeProblems() { context.error(problem) }
      context.error("cache: no table of \(address) in \(directory)")
      return ExitStatus.unreadable
    }
    context.stdout.append(string: "file:     \(map.file ?? "?")\n")
    if let learned = map.learned { context.stdout.append(string: "learned:  \(learned)\n") }
    context.stdout.append(string: "from:     \(map.origin.hasPrefix("learned from ") ? String(map.origin.dropFirst(13)) : map.origin)\n")
    if let hash = map.databaseHash { context.stdout.append(string: "hash:     \(Hex.string(hash))\n") }
    context.stdout.append("\n")
    let device = GATTDevice(
      server: .peer(address), tree: map.tree, addressType: map.addressType, name: map.name, databaseHash: map.databaseHash,
      capturedEntries: true, source: .capture)
    GATTTreeWriter.write([device], to: &context.stdout)
    context.stdout.flush()
    return ExitStatus.success
  }
}
