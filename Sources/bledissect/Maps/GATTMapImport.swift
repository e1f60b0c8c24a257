import BLECapture
import BLECore
import BLEDecoder
import BLEEngine
import Foundation

/// Reads GATT maps given with `--gatt`: the JSON that `gatt --json` writes, BlueZ's GATT cache
/// file (`/var/lib/bluetooth/<adapter>/cache/<peer>`, its `[Attributes]` group), or a capture
/// (the tables its discovery showed). The kind is told by content, not by name.
enum GATTMapImport {
  struct Failure: Error {
    var message: String
  }

  /// Map files larger than this are refused (a map of 4096 devices with full tables is far
  /// smaller); captures have no such limit, they are streamed.
  static let maximumTextBytes = 16 << 20

  static func load(_ path: Argument, context: CLIContext) throws(Failure) -> [GATTMap] {
    let name = path.display
    guard let handle = FileHandle(forReadingAtPath: String(decoding: path.bytes, as: UTF8.self)) else {
      throw Failure(message: "\(name): cannot open the GATT map (\(String(cString: strerror(errno))))")
    }
    let head = (try? handle.read(upToCount: 4096)) ?? Data()
    try? handle.close()
    let text = String(decoding: head, as: UTF8.self)
    let trimmed = text.drop { $0 == " " || $0 == "\n" || $0 == "\r" || $0 == "\t" || $0 == "\u{FEFF}" }
    if trimmed.hasPrefix("{") { return try loadJSON(path) }
    if text.contains("[Attributes]") || text.hasPrefix("[General]") || text.hasPrefix("[ServiceRecords]") {
      return try loadBlueZ(path)
    }
    return try loadCapture(path, context: context)
  }

  static func readText(_ path: Argument) throws(Failure) -> Data {
    let name = path.display
    let url = URL(fileURLWithPath: String(decoding: path.bytes, as: UTF8.self))
    let size = (try? url.resourceValues(forKeys: [.fileSizeKey]).fileSize) ?? 0
    guard size <= maximumTextBytes else { throw Failure(message: "\(name): GATT map too large (\(size) bytes; at most \(maximumTextBytes))") }
    guard let data = try? Data(contentsOf: url) else { throw Failure(message: "\(name): cannot read the GATT map") }
    return data
  }

  // MARK: - bledissect GATT map (JSON)

  /// `cached`: a map from our cache, named by the capture it was learned from. Messages name
  /// the line and the place in the document: `map.json:12: devices[0].services[1].start: …`.
  static func loadJSON(_ path: Argument, cached: Bool = false) throws(Failure) -> [GATTMap] {
    let name = path.display
    let document: LineJSON
    do {
      document = try LineJSON.parse(bytes: [UInt8](try readText(path)))
    } catch let error as Failure {
      throw error
    } catch let error as LineJSON.SyntaxError {
      throw Failure(message: "\(name):\(error.line):\(error.column): not a GATT map (not JSON: \(error.message))")
    } catch {
      throw Failure(message: "\(name): cannot read the GATT map")
    }
    guard document.isObject else { throw Failure(message: "\(name): not a GATT map (not a JSON object)") }
    guard document["format"]?.string == "bledissect-gatt-map" else {
      throw Failure(message: "\(name): not a GATT map (\"format\" is not \"bledissect-gatt-map\")")
    }
    guard let version = document["version"]?.integer, version == 1 else {
      throw Failure(message: "\(name): GATT map version \(document["version"]?.shown ?? "missing") not supported (this bledissect reads version 1)")
    }
    guard let devices = document["devices"]?.array else { throw Failure(message: "\(name): GATT map without a \"devices\" list") }
    var maps: [GATTMap] = []
    let origin = cached ? "learned from " + (document["capture"]?.string ?? "an earlier capture") : name
    let reader = MapReader(name: name)
    for (index, device) in devices.enumerated() {
      let place = "devices[\(index)]"
      var address: BDAddr?
      if let field = device["address"] {
        guard let text = field.string, let parsed = BDAddr(text) else { throw reader.failure(field, place + ".address", "bad address \(field.shown)") }
        address = parsed
      }
      let addressType = device["address_type"]?.string.flatMap(Self.addressType)
      var tree = GATTAttributeTree(services: [], characteristicsOutsideServices: [], otherHandles: [])
      for (serviceIndex, service) in try reader.list(device["services"], place + ".services").enumerated() {
        let where_ = "\(place).services[\(serviceIndex)]"
        tree.services.append(GATTServiceEntry(
          start: try reader.handle(service, "start", where_), end: try reader.handle(service, "end", where_),
          uuid: try reader.uuid(service, "uuid", where_), primary: service["primary"]?.bool ?? true, learnedIn: 0,
          includes: try reader.descriptors(service["includes"], where_ + ".includes"),
          characteristics: try reader.characteristics(service["characteristics"], where_ + ".characteristics")))
      }
      tree.characteristicsOutsideServices = try reader.characteristics(
        device["characteristics_outside_services"], place + ".characteristics_outside_services")
      tree.otherHandles = try reader.descriptors(device["other_handles"], place + ".other_handles")
      let hash = device["database_hash"]?.string.flatMap(Self.bytes)
      maps.append(GATTMap(
        address: address, addressType: addressType, name: device["name"]?.string, databaseHash: hash, tree: tree, origin: origin,
        learned: cached ? document["learned"]?.string : nil))
    }
    return maps
  }

  /// Reads the parts of a map document, each failure naming file, line and place.
  struct MapReader {
    let name: String

    func failure(_ value: LineJSON?, _ place: String, _ message: String) -> Failure {
      Failure(message: "\(name)\(value.map { ":\($0.line)" } ?? ""): \(place): \(message)")
    }

    func list(_ value: LineJSON?, _ place: String) throws(Failure) -> [LineJSON] {
      guard let value else { return [] }
      guard let elements = value.array, elements.allSatisfy(\.isObject) else { throw failure(value, place, "needs a list of objects") }
      return elements
    }

    func handle(_ object: LineJSON, _ key: String, _ place: String) throws(Failure) -> UInt16 {
      let value = object[key]
      guard let number = value?.integer, (0...0xFFFF).contains(number) else {
        throw failure(value ?? object, "\(place).\(key)", "needs a handle (0–65535), not \(value?.shown ?? "nothing")")
      }
      return UInt16(number)
    }

    func uuid(_ object: LineJSON, _ key: String, _ place: String) throws(Failure) -> BluetoothUUID {
      let value = object[key]
      guard let text = value?.string, let uuid = BluetoothUUID(text) else {
        throw failure(value ?? object, "\(place).\(key)", "needs a UUID, not \(value?.shown ?? "nothing")")
      }
      return uuid
    }

    func descriptors(_ value: LineJSON?, _ place: String) throws(Failure) -> [GATTDescriptorEntry] {
      var entries: [GATTDescriptorEntry] = []
      for (index, entry) in try list(value, place).enumerated() {
        let where_ = "\(place)[\(index)]"
        entries.append(GATTDescriptorEntry(handle: try handle(entry, "handle", where_), uuid: try uuid(entry, "uuid", where_), learnedIn: 0))
      }
      return entries
    }

    func characteristics(_ value: LineJSON?, _ place: String) throws(Failure) -> [GATTCharacteristicEntry] {
      var entries: [GATTCharacteristicEntry] = []
      for (index, entry) in try list(value, place).enumerated() {
        let where_ = "\(place)[\(index)]"
        let properties = entry["properties"]
        let bits = properties == nil ? 0 : (properties?.integer ?? -1)
        guard (0...0xFF).contains(bits) else {
          throw failure(properties, where_ + ".properties", "needs 0–255, not \(properties?.shown ?? "nothing")")
        }
        entries.append(GATTCharacteristicEntry(
          declarationHandle: try handle(entry, "declaration_handle", where_), valueHandle: try handle(entry, "value_handle", where_),
          uuid: try uuid(entry, "uuid", where_), properties: UInt8(bits), learnedIn: 0,
          descriptors: try descriptors(entry["descriptors"], where_ + ".descriptors")))
      }
      return entries
    }
  }

  static func addressType(_ text: String) -> AddressType? {
    switch text {
    case "public": return .publicDevice
    case "random": return .randomDevice
    case "public identity": return .publicIdentity
    case "random identity": return .randomIdentity
    default: return nil
    }
  }

  static func bytes(_ hex: String) -> [UInt8]? {
    let digits = Array(hex.utf8)
    guard digits.count % 2 == 0 else { return nil }
    var bytes: [UInt8] = []
    var index = 0
    while index < digits.count {
      guard let byte = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) else { return nil }
      bytes.append(byte)
      index += 2
    }
    return bytes
  }

  // MARK: - BlueZ GATT cache

  /// BlueZ's cache file: an ini file whose `[Attributes]` group has one key per attribute, the
  /// handle in four hex digits: `0001=2800:0005:<uuid>` (a primary service and its end; 2801
  /// secondary), `0002=2803:0003:02:<uuid>` (a characteristic: value handle, properties, and
  /// for the Database Hash its 16 bytes before the UUID), `0006=2802:0010:0015:<uuid>` (an
  /// include), `0009=<uuid>` or `0009=<ext props>:<uuid>` (a descriptor). The device's address
  /// is the file's name.
  static func loadBlueZ(_ path: Argument) throws(Failure) -> [GATTMap] {
    let name = path.display
    let text = String(decoding: try readText(path), as: UTF8.self)
    let fileName = String(name.split(separator: "/").last ?? "")
    guard let address = BDAddr(fileName) else {
      throw Failure(message: "\(name): a BlueZ cache file is named by the device's address (AA:BB:CC:DD:EE:FF); this one is not")
    }
    var group = ""
    var services: [(start: UInt16, end: UInt16, uuid: BluetoothUUID, primary: Bool)] = []
    var characteristics: [(declaration: UInt16, value: UInt16, properties: UInt8, uuid: BluetoothUUID)] = []
    var typed: [(handle: UInt16, uuid: BluetoothUUID)] = []
    var deviceName: String?
    var hash: [UInt8]?
    for (number, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
      let line = rawLine.trimmingCharacters(in: .whitespacesAndNewlines)
      if line.isEmpty || line.hasPrefix("#") { continue }
      if line.hasPrefix("[") {
        group = line
        continue
      }
      guard let equals = line.firstIndex(of: "=") else { continue }
      let key = String(line[..<equals])
      let value = String(line[line.index(after: equals)...])
      if group == "[General]" && key == "Name" { deviceName = value }
      guard group == "[Attributes]" else { continue }
      let place = "\(name):\(number + 1)"
      guard let handle = UInt16(key, radix: 16) else { throw Failure(message: "\(place): attribute key '\(key)' is not a handle in hex") }
      let parts = value.split(separator: ":").map(String.init)
      func field(_ index: Int) throws(Failure) -> String {
        guard index < parts.count else { throw Failure(message: "\(place): '\(value)' has too few fields") }
        return parts[index]
      }
      func parsedUUID(_ text: String) throws(Failure) -> BluetoothUUID {
        guard let uuid = BluetoothUUID(text) else { throw Failure(message: "\(place): '\(text)' is not a UUID") }
        return uuid
      }
      func hexNumber(_ text: String) throws(Failure) -> UInt16 {
        guard let number = UInt16(text, radix: 16) else { throw Failure(message: "\(place): '\(text)' is not a hex number") }
        return number
      }
      switch parts.first?.lowercased() {
      case "2800", "2801":
        services.append((handle, try hexNumber(try field(1)), try parsedUUID(try field(2)), parts[0] == "2800"))
      case "2802":
        typed.append((handle, BluetoothUUID(uuid16: 0x2802)))
      case "2803":
        let valueHandle = try hexNumber(try field(1))
        guard let properties = UInt8(try field(2), radix: 16) else { throw Failure(message: "\(place): bad properties '\(parts[2])'") }
        // The Database Hash characteristic carries the hash before its UUID.
        if parts.count == 5 { hash = bytes(parts[3]) }
        characteristics.append((handle, valueHandle, properties, try parsedUUID(parts[parts.count - 1])))
      default:
        typed.append((handle, try parsedUUID(parts[parts.count - 1])))
      }
    }
    var database = GATTDatabase()
    for service in services { database.addService(start: service.start, end: service.end, uuid: service.uuid, primary: service.primary) }
    for characteristic in characteristics {
      database.addCharacteristic(declaration: characteristic.declaration, valueHandle: characteristic.value, uuid: characteristic.uuid, properties: characteristic.properties)
    }
    for entry in typed { database.setType(entry.uuid, of: entry.handle) }
    guard !database.isEmpty else { throw Failure(message: "\(name): no [Attributes] in this BlueZ cache file (BlueZ keeps them only for devices it discovered)") }
    return [GATTMap(address: address, name: deviceName, databaseHash: hash, tree: database.attributeTree, origin: name)]
  }

  // MARK: - A capture

  /// The tables a capture's discovery showed, one map per peer (by address).
  static func loadCapture(_ path: Argument, context: CLIContext) throws(Failure) -> [GATTMap] {
    let name = path.display
    let reader: any CaptureReader
    do {
      reader = try CaptureFile.open(pathBytes: path.bytes, name: name, damage: .resynchronize)
    } catch {
      throw Failure(message: "\(name): not a GATT map, a BlueZ cache file or a capture (\(error.message))")
    }
    var options = FrameStream.Options()
    options.threading = .one
    let consumer = GATTConsumer()
    let end = FrameStream(source: reader, options: options).run(into: consumer)
    let maps = consumer.devices(end.dissector.databases).compactMap { device -> GATTMap? in
      guard case .peer(let address) = device.server else { return nil }
      return GATTMap(address: address, addressType: device.addressType, name: device.name, databaseHash: device.databaseHash, tree: device.tree, origin: name)
    }
    guard !maps.isEmpty else { throw Failure(message: "\(name): this capture shows no GATT discovery of a device with a known address: no map to take from it") }
    return maps
  }
}
