import BLECore
import BLEDecoder
import BLEEngine
import BLERender
import Foundation

/// `--gatt`, `--decode-as`, `--no-cache` and `--decoders`, shared by every command that
/// decodes: what is known of devices' GATT tables before the capture is read, the cache that
/// keeps tables learned from one capture for later captures of the same device, and the user's
/// own decoders (files given, and those in the config directory).
struct DecodingOptions: Sendable {
  var maps = GATTMapSet()
  var overrides: [HandleOverride] = []
  var userDecoders: [UserDecoder] = []
  /// Where tables are cached (nil: not at all: `--no-cache`, or no HOME).
  var cacheDirectory: String?
  /// The cache, read lazily by device identity while decoding.
  var cache: GATTCache?

  static let specs: [OptionSpec] = [
    OptionSpec(
      name: "gatt", short: nil, kind: .value(valueName: "file"),
      help: "GATT tables to use where the capture shows no discovery: a 'gatt --json' map, a capture, or a BlueZ cache file (/var/lib/bluetooth/<adapter>/cache/<address>). Repeatable."),
    OptionSpec(
      name: "decode-as", short: nil, kind: .value(valueName: "handle=uuid[@address]"),
      help: "Decode the attribute at handle as this characteristic (0x0010=2a37), on every device or only on the one given. Repeatable."),
    OptionSpec(
      name: "decoders", short: nil, kind: .value(valueName: "file"),
      help: "Decoders of your own (docs/decoders.md); those in $XDG_CONFIG_HOME/bledissect/decoders/*.json are read too. Repeatable."),
    OptionSpec(
      name: "no-cache", short: nil, kind: .flag,
      help: "Neither use nor save the GATT tables cached from earlier captures (in $XDG_CACHE_HOME/bledissect/gatt)."),
  ]

  /// The cache directory: `$XDG_CACHE_HOME/bledissect/gatt`, else `$HOME/.cache/bledissect/gatt`.
  static func cacheDirectory(_ environment: [String: String]) -> String? {
    if let base = environment["XDG_CACHE_HOME"], base.hasPrefix("/") { return base + "/bledissect/gatt" }
    if let home = environment["HOME"], home.hasPrefix("/") { return home + "/.cache/bledissect/gatt" }
    return nil
  }

  /// The directory of decoder files read on every run: `$XDG_CONFIG_HOME/bledissect/decoders`,
  /// else `$HOME/.config/bledissect/decoders`.
  static func decoderDirectory(_ environment: [String: String]) -> String? {
    if let base = environment["XDG_CONFIG_HOME"], base.hasPrefix("/") { return base + "/bledissect/decoders" }
    if let home = environment["HOME"], home.hasPrefix("/") { return home + "/.config/bledissect/decoders" }
    return nil
  }

  /// Decoder files are small; larger ones are refused.
  static let maximumDecoderFileBytes = 1 << 20

  /// Reads a decoder file (a pipe too), at most `maximumDecoderFileBytes` of it: a larger one,
  /// or a pipe or device that goes on past it, is refused after one byte more.
  static func loadDecoders(_ path: String) throws(UsageError) -> [UserDecoder] {
    let name = Argument(path).display
    let file: SideFile
    do {
      file = try SideFile(pathBytes: Array(path.utf8))
    } catch {
      throw UsageError(message: "\(name): cannot open the decoder file (\(error.reason))")
    }
    if file.isRegularFile, file.size > Int64(maximumDecoderFileBytes) {
      throw UsageError(message: "\(name): decoder file too large (\(file.size) bytes; at most \(maximumDecoderFileBytes))")
    }
    do {
      try file.read(upTo: maximumDecoderFileBytes + 1)
    } catch {
      throw UsageError(message: "\(name): cannot read the decoder file (\(error.reason))")
    }
    guard file.bytes.count <= maximumDecoderFileBytes else {
      throw UsageError(message: "\(name): decoder file too large (more than \(maximumDecoderFileBytes) bytes)")
    }
    do {
      return try DecoderFile.parse(String(decoding: file.bytes, as: UTF8.self), file: name)
    } catch {
      throw UsageError(message: error.message)
    }
  }

  /// Reads the options; a bad value or map file is a usage error (one line).
  static func parse(_ arguments: ParsedArguments, _ context: CLIContext) throws(UsageError) -> DecodingOptions {
    var options = DecodingOptions()
    if !arguments.has("no-cache") { options.cacheDirectory = cacheDirectory(context.environment) }
    for text in arguments.allValues("decode-as") {
      guard let override = parseOverride(text) else {
        throw UsageError(message: "--decode-as needs handle=uuid or handle=uuid@address (0x0010=2a37), not '\(text)'")
      }
      options.overrides.append(override)
    }
    // The config directory's decoders first, then those given: a later one for the same UUID wins.
    if let directory = decoderDirectory(context.environment), let names = try? FileManager.default.contentsOfDirectory(atPath: directory) {
      for name in names.sorted() where name.hasSuffix(".json") { options.userDecoders += try loadDecoders(directory + "/" + name) }
    }
    for path in arguments.allValues("decoders") { options.userDecoders += try loadDecoders(path) }
    // Nothing of the cache is read here: the dissector asks it by device when needed.
    if let directory = options.cacheDirectory {
      let cache = GATTCache(directory: directory)
      options.cache = cache
      context.caches.append(cache)
    }
    for path in arguments.allValues("gatt").map({ Argument($0) }) {
      do {
        for map in try GATTMapImport.load(path, context: context) where !options.maps.add(map, source: .imported) {
          throw UsageError(message: "\(path.display): GATT map too large (more than \(GATTMapSet.maximumEntriesPerMap) entries, or \(GATTMapSet.maximumMaps) devices)")
        }
      } catch let failure as GATTMapImport.Failure {
        throw UsageError(message: failure.message)
      } catch let error as UsageError {
        throw error
      } catch {
        throw UsageError(message: "\(path.display): \(error)")
      }
    }
    return options
  }

  static func parseOverride(_ text: String) -> HandleOverride? {
    let halves = text.split(separator: "=", maxSplits: 1).map(String.init)
    guard halves.count == 2, let handle = AnnotateCommand.parseNumber(halves[0]), handle <= 0xFFFF else { return nil }
    let target = halves[1].split(separator: "@", maxSplits: 1).map(String.init)
    guard let uuid = BluetoothUUID(target[0]) else { return nil }
    var peer: BDAddr?
    if target.count == 2 {
      guard let address = BDAddr(target[1]) else { return nil }
      peer = address
    }
    return HandleOverride(handle: UInt16(handle), uuid: uuid, peer: peer)
  }

  /// The stream options these give.
  func apply(to options: inout FrameStream.Options) {
    options.maps = maps
    options.cache = cache
    for decoder in userDecoders { options.registry.register(decoder) }
    for override in overrides { options.registry.override(override) }
  }

  /// After a run: the tables the capture's discovery showed are kept for the cache (saved
  /// when the command ends); problems with cache files found during the run are said.
  /// `devices`: the tables as a command already listed them (`gatt`, with the names and hashes
  /// its consumer read), else worked out here.
  func finish(_ end: FrameStream.End, capture: String, _ context: CLIContext, devices: [GATTDevice]? = nil) {
    guard let cache else { return }
    for problem in cache.takeProblems() { context.error(problem) }
    cache.keep(devices ?? GATTConsumer().devices(end.dissector.databases), capture: capture)
  }

  /// Saves what the runs of a command kept for the cache (called once the command is done).
  static func saveCache(_ cache: GATTCache, _ context: CLIContext) {
    do {
      for note in try cache.flush() { context.error(note) }
    } catch {
      let reason = (error as? GATTCache.SaveError)?.description ?? error.localizedDescription
      context.error("could not save GATT tables to the cache \(cache.directory) (\(reason)); use --no-cache to skip it")
    }
  }

  /// The tables of a run that did not come from the capture's own discovery (a map given,
  /// the cache, a layout), by server, in the order `gatt` lists them.
  static func tablesFromElsewhere(_ end: FrameStream.End) -> [(server: GATTServerIdentity, provenance: GATTMapProvenance)] {
    end.dissector.databases
      .sorted { GATTConsumer.sortKey($0.key).lexicographicallyPrecedes(GATTConsumer.sortKey($1.key)) }
      .compactMap { server, database in database.provenance.map { (server, $0) } }
  }

  /// One line saying where a table came from: "GATT table of X from the cache (learned from
  /// CAPTURE at TIME, FILE)".
  static func describe(_ server: GATTServerIdentity, _ provenance: GATTMapProvenance) -> String {
    switch provenance.source {
    case .cache:
      var line = "GATT table of \(server) from the cache (\(provenance.origin)"
      if let learned = provenance.learned { line += " at \(learned)" }
      if let file = provenance.file { line += ", \(file)" }
      return line + ")"
    case .layout:
      return "GATT table of \(server) matched by layout with \(provenance.origin)"
    default:
      return "GATT table of \(server) from the map \(provenance.origin)"
    }
  }

  /// The tables of a run that came from the cache, for commands whose output does not name
  /// them (`hr`): one line each, for standard error.
  static func cachedTables(_ end: FrameStream.End) -> [String] {
    tablesFromElsewhere(end).filter { $0.provenance.source == .cache }.map {
      describe($0.server, $0.provenance) + ": the capture did not show its discovery; --no-cache decodes without it"
    }
  }
}
