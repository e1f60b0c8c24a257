import BLEAnalysis
import BLECapture
import BLEDecoder

/// Reads GATT maps given with `--gatt`: the JSON that `gatt --json` writes, BlueZ's GATT cache
/// file (`/var/lib/bluetooth/<adapter>/cache/<peer>`, its `[Attributes]` group), or a capture
/// (the tables its discovery showed). The kind is told by content, not by name.
enum GATTMapImport {
  struct Failure: Error {
    var message: String
  }

  /// Map files larger than this are refused (a map of 4096 devices with full tables is far
  /// smaller); captures have no such limit when given as files, they are streamed.
  static let maximumTextBytes = GATTMapFile.maximumBytes

  /// What the start of a file needs to tell a map's kind.
  static let headBytes = 4096

  static func load(_ path: Argument, context: CLIContext) throws(Failure) -> [GATTMap] {
    let name = path.display
    let file = try open(path)
    try read(file, upTo: headBytes, name)
    switch GATTMapFile.kind(of: file.bytes) {
    case .json:
      return try parseJSON(try readWhole(file, name), name: name, cached: false)
    case .blueZ:
      return try parseBlueZ(try readWhole(file, name), path)
    case .other:
      // A capture: a file is streamed from its name, without a size limit; a pipe's bytes are
      // held in memory, so they are bounded like a map's.
      if file.isRegularFile { return try loadCapture(path, context: context) }
      try read(file, upTo: maximumTextBytes + 1, name)
      guard file.bytes.count <= maximumTextBytes else {
        throw Failure(message: "\(name): not a GATT map or BlueZ cache file, and more than \(maximumTextBytes) bytes: too large to hold as a capture from a pipe or device (give the capture as a file)")
      }
      let bytes = file.bytes
      return try loadCapture(bytes, name: name, context: context)
    }
  }

  /// Opens a map file (a pipe too), with the system's reason when it cannot be.
  static func open(_ path: Argument) throws(Failure) -> SideFile {
    do {
      return try SideFile(pathBytes: path.bytes)
    } catch {
      throw Failure(message: "\(path.display): cannot open the GATT map (\(error.reason))")
    }
  }

  static func read(_ file: SideFile, upTo count: Int, _ name: String) throws(Failure) {
    do {
      try file.read(upTo: count)
    } catch {
      throw Failure(message: "\(name): cannot read the GATT map (\(error.reason))")
    }
  }

  /// The whole file, at most `maximumTextBytes`: a larger one (or a pipe or device that goes on
  /// past it) is refused after reading one byte more, never held whole.
  static func readWhole(_ file: SideFile, _ name: String) throws(Failure) -> [UInt8] {
    if file.isRegularFile, file.size > Int64(maximumTextBytes) {
      throw Failure(message: "\(name): GATT map too large (\(file.size) bytes; at most \(maximumTextBytes))")
    }
    try read(file, upTo: maximumTextBytes + 1, name)
    guard file.bytes.count <= maximumTextBytes else {
      throw Failure(message: "\(name): GATT map too large (more than \(maximumTextBytes) bytes)")
    }
    return file.bytes
  }

  // MARK: - bledissect GATT map (JSON)

  /// `cached`: a map from our cache, named by the capture it was learned from. Messages name
  /// the line and the place in the document: `map.json:12: devices[0].services[1].start: …`
  /// (the parsing is `GATTMapFile.parseJSON`'s).
  static func loadJSON(_ path: Argument, cached: Bool = false) throws(Failure) -> [GATTMap] {
    try parseJSON(try readWhole(try open(path), path.display), name: path.display, cached: cached)
  }

  static func parseJSON(_ bytes: [UInt8], name: String, cached: Bool) throws(Failure) -> [GATTMap] {
    do {
      return try GATTMapFile.parseJSON(bytes: bytes, name: name, cached: cached)
    } catch {
      throw Failure(message: error.message)
    }
  }

  // MARK: - BlueZ GATT cache

  /// BlueZ's cache file (`GATTMapFile.parseBlueZ`): the device's address is the file's name.
  static func parseBlueZ(_ bytes: [UInt8], _ path: Argument) throws(Failure) -> [GATTMap] {
    let fileName = String(decoding: path.bytes.split(separator: UInt8(ascii: "/")).last ?? [], as: UTF8.self)
    do {
      return try GATTMapFile.parseBlueZ(bytes: bytes, name: path.display, fileName: fileName)
    } catch {
      throw Failure(message: error.message)
    }
  }

  // MARK: - A capture

  /// The tables a capture's discovery showed, one map per peer (by address): from its name (a
  /// file, streamed), or from its bytes (a pipe's, held in memory).
  static func loadCapture(_ path: Argument, context: CLIContext) throws(Failure) -> [GATTMap] {
    try maps(path.display) { () throws(CaptureError) in try CaptureFile.open(pathBytes: path.bytes, name: path.display, damage: .resynchronize) }
  }

  static func loadCapture(_ bytes: [UInt8], name: String, context: CLIContext) throws(Failure) -> [GATTMap] {
    try maps(name) { () throws(CaptureError) in
      try CaptureFile.open(InputSource(bytes: bytes, name: name), damage: .resynchronize)
    }
  }

  static func maps(_ name: String, _ open: () throws(CaptureError) -> any CaptureReader) throws(Failure) -> [GATTMap] {
    let reader: any CaptureReader
    do { reader = try open() } catch {
      throw Failure(message: "\(name): not a GATT map, a BlueZ cache file or a capture (\(error.message))")
    }
    let maps = GATTConsumer.maps(reader, origin: name)
    guard !maps.isEmpty else { throw Failure(message: "\(name): this capture shows no GATT discovery of a device with a known address: no map to take from it") }
    return maps
  }
}
