import BLECore

/// The GATT map files `--gatt` reads, parsed from their bytes (reading the file is the caller's:
/// the CLI bounds it, the fuzz targets hand bytes in memory): the JSON that `gatt --json` writes,
/// and BlueZ's GATT cache file (`/var/lib/bluetooth/<adapter>/cache/<peer>`, its `[Attributes]`
/// group). Hostile content ends in a `Failure`: one line naming the file, the line and what is
/// wrong, never a trap.
public enum GATTMapFile {
  public struct Failure: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(message: String) { self.message = message }
    public var description: String { message }
  }

  /// Map files larger than this are refused (a map of 4096 devices with full tables is far
  /// smaller).
  public static let maximumBytes = 16 << 20

  /// What the start of a file looks like.
  public enum Kind: Sendable, Equatable {
    /// A JSON object: our map.
    case json
    /// An ini file with BlueZ's groups.
    case blueZ
    /// Anything else (a capture, or not a map at all).
    case other
  }

  /// Tells a map's kind from its first bytes (4096 are enough), not from its name.
  public static func kind(of head: some Collection<UInt8>) -> Kind {
    let text = String(decoding: head, as: UTF8.self)
    let trimmed = text.drop { $0 == " " || $0 == "\n" || $0 == "\r" || $0 == "\t" || $0 == "\u{FEFF}" }
    if trimmed.hasPrefix("{") { return .json }
    if text.contains("[Attributes]") || text.hasPrefix("[General]") || text.hasPrefix("[ServiceRecords]") { return .blueZ }
    return .other
  }

  // MARK: - bledissect GATT map (JSON)

  /// Our map (`gatt --json`). `name` is how messages show the file; `cached`: a map from our
  /// cache, named by the capture it was learned from. Messages name the line and the place in
  /// the document: `map.json:12: devices[0].services[1].start: …`.
  package static func parseJSON(bytes: [UInt8], name: String, cached: Bool = false) throws(Failure) -> [GATTMap] {
    guard bytes.count <= maximumBytes else { throw Failure(message: "\(name): GATT map too large (\(bytes.count) bytes; at most \(maximumBytes))") }
    let document: LineJSON
    do {
      // A byte order mark is no JSON, but editors write one.
      let start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
      document = try LineJSON.parse(bytes: start == 0 ? bytes : Array(bytes[start...]))
    } catch {
      throw Failure(message: "\(name):\(error.line):\(error.column): not a GATT map (not JSON: \(error.message))")
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
    // Notes name the origin: one line, whatever the file says.
    let origin = cached ? "learned from " + (document["capture"]?.string.map { LineJSON.printable($0, limit: 256) } ?? "an earlier capture") : name
    let reader = MapReader(name: name)
    for (index, device) in devices.enumerated() {
      let place = "devices[\(index)]"
      guard device.isObject else { throw reader.failure(device, place, "needs an object, not \(device.typeName)") }
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
      let hash = device["database_hash"]?.string.flatMap(Self.hexBytes)
      // A cached map says when it was saved (shown with the table's provenance).
      let learned = cached ? document["learned"]?.string.map { LineJSON.printable($0) } : nil
      maps.append(GATTMap(
        address: address, addressType: addressType, name: device["name"]?.string, databaseHash: hash, tree: tree, origin: origin,
        learned: learned))
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

  /// Hex digits as bytes (a Database Hash), or nil unless every two are a byte.
  package static func hexBytes(_ hex: some StringProtocol) -> [UInt8]? { Hex.bytes(hex) }

  static func hexDigit(_ byte: UInt8) -> UInt8? { Hex.value(byte) }

  /// A number of 1 to `digits` hex digits and nothing else (no sign, no `0x`).
  static func hexNumber(_ text: some StringProtocol, digits: Int) -> UInt16? {
    guard (1...digits).contains(text.utf8.count) else { return nil }
    var value: UInt16 = 0
    for byte in text.utf8 {
      guard let digit = hexDigit(byte) else { return nil }
      value = value << 4 | UInt16(digit)
    }
    return value
  }

  // MARK: - BlueZ GATT cache

  /// BlueZ's cache file: an ini file whose `[Attributes]` group has one key per attribute, the
  /// handle in four hex digits: `0001=2800:0005:<uuid>` (a primary service and its end; 2801
  /// secondary), `0002=2803:0003:02:<uuid>` (a characteristic: value handle, properties, and
  /// for the Database Hash its 16 bytes before the UUID), `0006=2802:0010:0015:<uuid>` (an
  /// include), `0009=<uuid>` or `0009=<ext props>:<uuid>` (a descriptor). The device's address
  /// is the file's name (`fileName`, the last part of the path); `name` is how messages show
  /// the file. Lines end in LF or CR LF; each failure names its line.
  package static func parseBlueZ(bytes: [UInt8], name: String, fileName: String) throws(Failure) -> [GATTMap] {
    guard bytes.count <= maximumBytes else { throw Failure(message: "\(name): GATT map too large (\(bytes.count) bytes; at most \(maximumBytes))") }
    guard let address = BDAddr(fileName) else {
      throw Failure(message: "\(name): a BlueZ cache file is named by the device's address (AA:BB:CC:DD:EE:FF); this one is not")
    }
    var inAttributes = false
    var inGeneral = false
    var services: [(start: UInt16, end: UInt16, uuid: BluetoothUUID, primary: Bool)] = []
    var characteristics: [(declaration: UInt16, value: UInt16, properties: UInt8, uuid: BluetoothUUID)] = []
    var typed: [(handle: UInt16, uuid: BluetoothUUID)] = []
    var deviceName: String?
    var hash: [UInt8]?
    var number = 0
    var lineStart = 0
    while lineStart < bytes.count {
      let lineEnd = bytes[lineStart...].firstIndex(of: 0x0A) ?? bytes.count
      number += 1
      let line = String(decoding: Self.trimmed(bytes[lineStart..<lineEnd]), as: UTF8.self)
      lineStart = lineEnd + 1
      if line.isEmpty || line.hasPrefix("#") { continue }
      if line.hasPrefix("[") {
        inAttributes = line == "[Attributes]"
        inGeneral = line == "[General]"
        continue
      }
      guard let equals = line.firstIndex(of: "=") else { continue }
      let key = Self.trimmed(line[..<equals])
      let value = Self.trimmed(line[line.index(after: equals)...])
      if inGeneral && key == "Name" { deviceName = String(value) }
      guard inAttributes else { continue }
      let place = "\(name):\(number)"
      guard let handle = hexNumber(key, digits: 4) else {
        throw Failure(message: "\(place): attribute key '\(LineJSON.printable(key))' is not a handle (1 to 4 hex digits)")
      }
      let parts = value.split(separator: ":", omittingEmptySubsequences: false)
      func field(_ index: Int, _ what: String) throws(Failure) -> Substring {
        guard index < parts.count else { throw Failure(message: "\(place): '\(LineJSON.printable(value))' has no \(what) (too few ':'-separated fields)") }
        return parts[index]
      }
      func uuid(_ index: Int) throws(Failure) -> BluetoothUUID {
        let text = try field(index, "UUID")
        guard let uuid = BluetoothUUID(String(text)) else { throw Failure(message: "\(place): '\(LineJSON.printable(text))' is not a UUID") }
        return uuid
      }
      func handleField(_ index: Int, _ what: String) throws(Failure) -> UInt16 {
        let text = try field(index, what)
        guard let number = hexNumber(text, digits: 4) else { throw Failure(message: "\(place): \(what) '\(LineJSON.printable(text))' is not a handle (1 to 4 hex digits)") }
        return number
      }
      guard !value.isEmpty else { throw Failure(message: "\(place): attribute \(key) has no value (a UUID, or a declaration such as 2800:0005:<uuid>)") }
      switch parts[0].lowercased() {
      case "2800", "2801":
        services.append((handle, try handleField(1, "end handle"), try uuid(2), parts[0] == "2800"))
      case "2802":
        typed.append((handle, BluetoothUUID(uuid16: 0x2802)))
      case "2803":
        let valueHandle = try handleField(1, "value handle")
        let propertiesText = try field(2, "properties")
        guard let properties = hexNumber(propertiesText, digits: 2) else {
          throw Failure(message: "\(place): properties '\(LineJSON.printable(propertiesText))' are not 1 or 2 hex digits")
        }
        // The Database Hash characteristic carries the hash before its UUID.
        if parts.count == 5 { hash = hexBytes(parts[3]) }
        characteristics.append((handle, valueHandle, UInt8(properties), try uuid(max(3, parts.count - 1))))
      default:
        typed.append((handle, try uuid(parts.count - 1)))
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

  /// `bytes` without spaces, tabs and carriage returns at either end.
  static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
    func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D }
    var slice = bytes
    while let first = slice.first, isSpace(first) { slice = slice.dropFirst() }
    while let last = slice.last, isSpace(last) { slice = slice.dropLast() }
    return slice
  }

  static func trimmed(_ text: Substring) -> Substring {
    var slice = text
    while let first = slice.first, first == " " || first == "\t" { slice = slice.dropFirst() }
    while let last = slice.last, last == " " || last == "\t" { slice = slice.dropLast() }
    return slice
  }
}
