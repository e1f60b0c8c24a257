import BLEAnalysis
import BLECapture
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
  /// Long-term keys for sniffed links: `--ltk`, `--keys`, `--keys-from`.
  var keys = LinkKeyRing()

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
      name: "ltk", short: nil, kind: .value(valueName: "key[@address]"),
      help: "A long-term key (32 hex digits, most significant first) to decrypt links sniffed over the air; only on links of that device when an address is given. Repeatable."),
    OptionSpec(
      name: "keys", short: nil, kind: .value(valueName: "file"),
      help: "Long-term keys from a file: one a line, as --ltk takes them or 'key address'; '#' starts a comment. Repeatable."),
    OptionSpec(
      name: "keys-from", short: nil, kind: .value(valueName: "capture"),
      help: "Long-term keys from an HCI capture of the same session (its LE Enable Encryption and Long Term Key Request Reply commands), to decrypt an air capture. Repeatable."),
    OptionSpec(
      name: "passkey", short: nil, kind: .value(valueName: "number"),
      help: "The passkey (000000–999999) of a sniffed LE legacy pairing: its keys are worked out from the pairing, as for Just Works (TK 0, always tried). Repeatable."),
    OptionSpec(
      name: "tk", short: nil, kind: .value(valueName: "key"),
      help: "The TK (32 hex digits, most significant first) of a sniffed LE legacy pairing that used out-of-band data: its keys are worked out from the pairing. Repeatable."),
    OptionSpec(
      name: "find-passkey", short: nil, kind: .flag,
      help: "Try every passkey on a sniffed LE legacy pairing whose TK is not known (a million tries, about 1.5 s a link; at most two links a capture)."),
    OptionSpec(
      name: "no-cache", short: nil, kind: .flag,
      help: "Neither use nor save the GATT tables cached from earlier captures (in $XDG_CACHE_HOME/bledissect/gatt)."),
  ]

  /// The cache directory: `$XDG_CACHE_HOME/bledissect/gatt`, else `$HOME/.cache/bledissect/gatt`.
  static func cacheDirectory(_ environment: [String: String]) -> String? { xdg(environment, "XDG_CACHE_HOME", ".cache", "gatt") }

  /// The directory of decoder files read on every run: `$XDG_CONFIG_HOME/bledissect/decoders`,
  /// else `$HOME/.config/bledissect/decoders`.
  static func decoderDirectory(_ environment: [String: String]) -> String? { xdg(environment, "XDG_CONFIG_HOME", ".config", "decoders") }

  /// A bledissect directory under an XDG base directory (absolute paths only), else under HOME.
  static func xdg(_ environment: [String: String], _ variable: String, _ fallback: String, _ leaf: String) -> String? {
    if let base = environment[variable], base.hasPrefix("/") { return base + "/bledissect/" + leaf }
    if let home = environment["HOME"], home.hasPrefix("/") { return home + "/" + fallback + "/bledissect/" + leaf }
    return nil
  }

  /// Decoder files are small; larger ones are refused.
  static let maximumDecoderFileBytes = 1 << 20

  /// Reads a decoder file (a pipe too), at most `maximumDecoderFileBytes` of it.
  static func loadDecoders(_ path: String) throws(UsageError) -> [UserDecoder] {
    let path = Argument(path)
    let bytes = try SideFile.open(path, "decoder file").whole(limit: maximumDecoderFileBytes, path, "decoder file")
    do {
      return try DecoderFile.parse(String(decoding: bytes, as: UTF8.self), file: path.display)
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
    try loadKeys(arguments, into: &options.keys)
    for path in arguments.allValues("gatt").map({ Argument($0) }) {
      for map in try GATTMapImport.load(path, context: context) where !options.maps.add(map, source: .imported) {
        throw UsageError(message: "\(path.display): GATT map too large (more than \(GATTMapSet.maximumEntriesPerMap) entries, or \(GATTMapSet.maximumMaps) devices)")
      }
    }
    return options
  }

  /// Key files are small; larger ones are refused.
  static let maximumKeyFileBytes = 1 << 20

  /// `--passkey`, `--find-passkey`, `--ltk`, `--keys` and `--keys-from`, in that order (keys for a device first are tried first
  /// anyway). A key that is not one, or a file that cannot be read, is a usage error.
  static func loadKeys(_ arguments: ParsedArguments, into ring: inout LinkKeyRing) throws(UsageError) {
    func add(_ key: LinkKeyRing.Key, from name: String) throws(UsageError) {
      guard ring.add(key) else { throw UsageError(message: "\(name): more than \(LinkKeyRing.maximumKeys) keys in all") }
    }
    for text in arguments.allValues("passkey") {
      guard let passkey = UInt32(text.trimmingCharacters(in: .whitespaces)), passkey <= 999_999 else {
        throw UsageError(message: "--passkey needs a number from 000000 to 999999, not '\(text)'")
      }
      guard ring.passkeys.count < LinkKeyRing.maximumPasskeys else {
        throw UsageError(message: "--passkey: more than \(LinkKeyRing.maximumPasskeys) passkeys")
      }
      ring.passkeys.append(passkey)
    }
    ring.searchesPasskeys = arguments.has("find-passkey")
    for text in arguments.allValues("tk") {
      guard let key = LinkKeyRing.parseTemporaryKey(text) else {
        throw UsageError(message: "--tk needs 32 hex digits (--tk 00112233445566778899AABBCCDDEEFF), not '\(text)'")
      }
      guard ring.temporaryKeys.count < LinkKeyRing.maximumPasskeys else {
        throw UsageError(message: "--tk: more than \(LinkKeyRing.maximumPasskeys) TKs")
      }
      ring.temporaryKeys.append(key)
    }
    for text in arguments.allValues("ltk") {
      guard let key = LinkKeyRing.parse(text, source: "--ltk") else {
        throw UsageError(message: "--ltk needs 32 hex digits, optionally @address (--ltk 4C68384139F574D836BCF34E9DFB01BF@D0:B1:ED:00:48:52), not '\(text)'")
      }
      try add(key, from: "--ltk")
    }
    for path in arguments.allValues("keys").map({ Argument($0) }) {
      let bytes = try SideFile.open(path, "keys file").whole(limit: maximumKeyFileBytes, path, "keys file")
      switch LinkKeyRing.parseFile(String(decoding: bytes, as: UTF8.self), name: path.display) {
      case .success(let keys): for key in keys { try add(key, from: path.display) }
      case .failure(let failure): throw UsageError(message: failure.message)
      }
    }
    for path in arguments.allValues("keys-from").map({ Argument($0) }) {
      let reader: any CaptureReader
      do {
        reader = try CaptureFile.open(pathBytes: path.bytes, name: path.display, damage: .resynchronize)
      } catch {
        throw UsageError(message: "\(path.display): cannot read it as a capture for --keys-from (\(error.message))")
      }
      let (ring, damage) = HCIKeyHarvest.keys(of: reader, capture: path.display)
      if let damage {
        throw UsageError(message: "\(path.display): the capture for --keys-from is damaged after frame \(damage.frame) (\(damage.failure.message))")
      }
      guard !ring.isEmpty else {
        throw UsageError(message: "\(path.display): this capture shows no long-term key (no LE Enable Encryption or Long Term Key Request Reply) for --keys-from")
      }
      for key in ring.keys { try add(key, from: path.display) }
    }
  }

  static func parseOverride(_ text: String) -> HandleOverride? {
    let halves = text.split(separator: "=", maxSplits: 1).map(String.init)
    guard halves.count == 2, let handle = FrameFilter.number(halves[0]), handle <= 0xFFFF else { return nil }
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
    options.keys = keys
    for decoder in userDecoders { options.registry.register(decoder) }
    for override in overrides { options.registry.override(override) }
  }

  /// After a run: the tables the capture's discovery showed are kept for the cache (saved
  /// when the command ends); problems with cache files found during the run are said.
  /// `devices`: the tables as a command already listed them (`gatt`, with the names and hashes
  /// its consumer read), else worked out here.
  func finish(_ end: FrameStream.End, capture: String, _ context: CLIContext, devices: [GATTDevice]? = nil) {
    // Keys are named on every output: where frames do not show them (one line each, hr,
    // summary, diff), this is the only place.
    let dissector = end.dissector
    for (source, count) in dissector.decryptedBySource.sorted(by: { $0.key < $1.key }) {
      // A key the capture gave away is printed as --ltk takes it: for the next capture of the devices.
      let value = dissector.keyValues[source].map { ", key \($0)" } ?? ""
      context.error("\(capture): \(count) packet\(count == 1 ? "" : "s") decrypted with \(source)\(value)")
    }
    // What was given and fitted nothing is said: a key for another device, a wrong passkey.
    for key in keys.keys where !dissector.openedKeys.contains(key.key) {
      var why = ""
      if let address = key.address, !dissector.airDevices.contains(address) { why = ": no sniffed link of \(address) in this capture" }
      context.error("\(capture): the key \(key.hex) (\(key.source)) opened no link\(why)")
    }
    let givenTemporaryKeys = keys.knownTemporaryKeys.dropFirst()
    for tk in givenTemporaryKeys where !dissector.fittedTemporaryKeys.contains(tk.words) {
      let option = tk.passkey != nil ? "--passkey" : "--tk"
      let pairings = dissector.legacyPairingsTried == 0 ? "this capture shows no sniffed legacy pairing" : "no legacy pairing of this capture fits it"
      context.error("\(capture): \(option): \(tk.words) fits nothing: \(pairings)")
    }
    if dissector.failedSearches > 0 {
      context.error("\(capture): --find-passkey: no passkey fitted \(dissector.failedSearches == 1 ? "the legacy pairing" : "\(dissector.failedSearches) legacy pairings") searched")
    } else if keys.searchesPasskeys && dissector.legacyPairingsTried == 0 {
      context.error("\(capture): --find-passkey: this capture shows no sniffed legacy pairing to search")
    }
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

  /// The tables of a run that came from the cache, for commands whose output does not name
  /// them (`hr`): one line each, for standard error.
  static func cachedTables(_ end: FrameStream.End) -> [String] {
    tablesFromElsewhere(end).filter { $0.provenance.source == .cache }.map {
      Words.provenance($0.server, $0.provenance) + ": the capture did not show its discovery; --no-cache decodes without it"
    }
  }
}

/// Side files (maps, decoders, keys) are read through these: each one-line error names the
/// file and what it was given as (`what`: "GATT map").
extension SideFile {
  static func open(_ path: Argument, _ what: String) throws(UsageError) -> SideFile {
    do {
      return try SideFile(pathBytes: path.bytes)
    } catch {
      throw UsageError(message: "\(path.display): cannot open the \(what) (\(error.reason))")
    }
  }

  func read(upTo count: Int, _ path: Argument, _ what: String) throws(UsageError) {
    do {
      try read(upTo: count)
    } catch {
      throw UsageError(message: "\(path.display): cannot read the \(what) (\(error.reason))")
    }
  }

  /// The whole file, at most `limit` bytes: a larger one (or a pipe or device that goes on past
  /// it) is refused after reading one byte more, never held whole.
  func whole(limit: Int, _ path: Argument, _ what: String) throws(UsageError) -> [UInt8] {
    if isRegularFile, size > Int64(limit) {
      throw UsageError(message: "\(path.display): \(what) too large (\(size) bytes; at most \(limit))")
    }
    try read(upTo: limit + 1, path, what)
    guard bytes.count <= limit else { throw UsageError(message: "\(path.display): \(what) too large (more than \(limit) bytes)") }
    return bytes
  }
}
