import BLEAnalysis
import BLECapture
import BLEDecoder

/// Reads GATT maps given with `--gatt`: the JSON that `gatt --json` writes, BlueZ's GATT cache
/// file (`/var/lib/bluetooth/<adapter>/cache/<peer>`, its `[Attributes]` group), or a capture
/// (the tables its discovery showed). The kind is told by content, not by name.
enum GATTMapImport {
  /// Map files larger than this are refused (a map of 4096 devices with full tables is far
  /// smaller); captures have no such limit when given as files, they are streamed.
  static let maximumTextBytes = GATTMapFile.maximumBytes

  /// What the start of a file needs to tell a map's kind.
  static let headBytes = 4096

  static func load(_ path: Argument, context: CLIContext) throws(UsageError) -> [GATTMap] {
    let file = try SideFile.open(path, "GATT map")
    try file.read(upTo: headBytes, path, "GATT map")
    switch GATTMapFile.kind(of: file.bytes) {
    case .json:
      return try parseJSON(try file.whole(limit: maximumTextBytes, path, "GATT map"), name: path.display, cached: false)
    case .blueZ:
      return try parseBlueZ(try file.whole(limit: maximumTextBytes, path, "GATT map"), path)
    case .other:
      // A capture: a file is streamed from its name, without a size limit; a pipe's bytes are
      // held in memory, so they are bounded like a map's.
      if file.isRegularFile { return try loadCapture(path, context: context) }
      try file.read(upTo: maximumTextBytes + 1, path, "GATT map")
      guard file.bytes.count <= maximumTextBytes else {
        throw UsageError(message: "\(path.display): not a GATT map or BlueZ cache file, and more than \(maximumTextBytes) bytes: too large to hold as a capture from a pipe or device (give the capture as a file)")
      }
      return try loadCapture(file.bytes, name: path.display, context: context)
    }
  }

  // MARK: - bledissect GATT map (JSON)

  /// `cached`: a map from our cache, named by the capture it was learned from. Messages name
  /// the line and the place in the document: `map.json:12: devices[0].services[1].start: …`
  /// (the parsing is `GATTMapFile.parseJSON`'s).
  static func loadJSON(_ path: Argument, cached: Bool = false) throws(UsageError) -> [GATTMap] {
    try parseJSON(try SideFile.open(path, "GATT map").whole(limit: maximumTextBytes, path, "GATT map"), name: path.display, cached: cached)
  }

  static func parseJSON(_ bytes: [UInt8], name: String, cached: Bool) throws(UsageError) -> [GATTMap] {
    do {
      return try GATTMapFile.parseJSON(bytes: bytes, name: name, cached: cached)
    } catch {
      throw UsageError(message: error.message)
    }
  }

  // MARK: - BlueZ GATT cache

  /// BlueZ's cache file (`GATTMapFile.parseBlueZ`): the device's address is the file's name.
  static func parseBlueZ(_ bytes: [UInt8], _ path: Argument) throws(UsageError) -> [GATTMap] {
    let fileName = String(decoding: path.bytes.split(separator: UInt8(ascii: "/")).last ?? [], as: UTF8.self)
    do {
      return try GATTMapFile.parseBlueZ(bytes: bytes, name: path.display, fileName: fileName)
    } catch {
      throw UsageError(message: error.message)
    }
  }

  // MARK: - A capture

  /// The tables a capture's discovery showed, one map per peer (by address): from its name (a
  /// file, streamed), or from its bytes (a pipe's, held in memory).
  static func loadCapture(_ path: Argument, context: CLIContext) throws(UsageError) -> [GATTMap] {
    try maps(path.display) { () throws(CaptureError) in try CaptureFile.open(pathBytes: path.bytes, name: path.display, damage: .resynchronize) }
  }

  static func loadCapture(_ bytes: [UInt8], name: String, context: CLIContext) throws(UsageError) -> [GATTMap] {
    try maps(name) { () throws(CaptureError) in
      try CaptureFile.open(InputSource(bytes: bytes, name: name), damage: .resynchronize)
    }
  }

  static func maps(_ name: String, _ open: () throws(CaptureError) -> any CaptureReader) throws(UsageError) -> [GATTMap] {
    let reader: any CaptureReader
    do { reader = try open() } catch {
      throw UsageError(message: "\(name): not a GATT map, a BlueZ cache file or a capture (\(error.message))")
    }
    let maps = GATTConsumer.maps(reader, origin: name)
    guard !maps.isEmpty else { throw UsageError(message: "\(name): this capture shows no GATT discovery of a device with a known address: no map to take from it") }
    return maps
  }
}
