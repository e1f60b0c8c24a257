import BLECore

/// A decoder a user wrote: what it decodes (a UUID, or a handle, on one device or all) and how.
public struct UserDecoder: Sendable {
  public enum Target: Sendable, Equatable {
    case uuid(BluetoothUUID)
    case handle(UInt16, peer: BDAddr?)
  }
  public var target: Target
  public var format: DeclaredFormat
}

/// Why a decoder file was refused: `file:line: where: what`.
public struct DecoderFileError: Error, Sendable, CustomStringConvertible {
  public var message: String
  public var description: String { message }
}

/// Reads a decoder file (docs/decoders.md):
///
/// ```json
/// {"format": "bledissect-decoders", "version": 1, "decoders": [
///   {"uuid": "2a19", "name": "Battery Level", "fields": [{"name": "percent", "type": "u8", "unit": "%"}]}
/// ]}
/// ```
public enum DecoderFile {
  /// Bounds: a hostile file cannot make decoding slow or large.
  package static let maximumDecoders = 1024
  package static let maximumFields = 64

  public static func parse(_ text: String, file: String) throws(DecoderFileError) -> [UserDecoder] {
    let root: LineJSON
    do {
      root = try LineJSON.parse(text)
    } catch {
      throw DecoderFileError(message: "\(file):\(error.line):\(error.column): \(error.message)")
    }
    func fail(_ node: LineJSON, _ place: String, _ message: String) -> DecoderFileError {
      DecoderFileError(message: "\(file):\(node.line): \(place): \(message)")
    }
    guard case .object = root.value else { throw fail(root, "the file", "needs a JSON object") }
    guard case .string("bledissect-decoders")? = root["format"]?.value else {
      throw fail(root["format"] ?? root, "format", "needs to be \"bledissect-decoders\"")
    }
    guard case .number(1, _)? = root["version"]?.value else { throw fail(root["version"] ?? root, "version", "needs to be 1") }
    guard let list = root["decoders"], case .array(let entries) = list.value else {
      throw fail(root["decoders"] ?? root, "decoders", "needs a list of decoders")
    }
    guard entries.count <= maximumDecoders else { throw fail(list, "decoders", "more than \(maximumDecoders) decoders") }
    var decoders: [UserDecoder] = []
    for (index, entry) in entries.enumerated() {
      decoders.append(try decoder(entry, place: "decoders[\(index)]", fail))
    }
    return decoders
  }

  typealias Fail = (LineJSON, String, String) -> DecoderFileError

  static func decoder(_ entry: LineJSON, place: String, _ fail: Fail) throws(DecoderFileError) -> UserDecoder {
    guard case .object(let members) = entry.value else { throw fail(entry, place, "needs an object") }
    let known: Set = ["uuid", "handle", "peer", "name", "key", "fields"]
    if let unknown = members.first(where: { !known.contains($0.key) }) {
      throw fail(unknown.value, "\(place).\(LineJSON.printable(unknown.key))", "unknown key (expected one of \(known.sorted().joined(separator: ", ")))")
    }
    let target: UserDecoder.Target
    switch (entry["uuid"], entry["handle"]) {
    case (let uuidNode?, nil):
      guard case .string(let text) = uuidNode.value, let uuid = BluetoothUUID(text) else {
        throw fail(uuidNode, "\(place).uuid", "needs a UUID (\"2a37\", \"0x2a37\" or 128-bit)")
      }
      target = .uuid(uuid)
    case (nil, let handleNode?):
      guard case .number(let number, _) = handleNode.value, number == number.rounded(), (1...0xFFFF).contains(number) else {
        throw fail(handleNode, "\(place).handle", "needs a handle, 1–65535")
      }
      var peer: BDAddr?
      if let peerNode = entry["peer"] {
        guard case .string(let text) = peerNode.value, let address = BDAddr(text) else {
          throw fail(peerNode, "\(place).peer", "needs an address like D0:B1:ED:00:48:52")
        }
        peer = address
      }
      target = .handle(UInt16(number), peer: peer)
    case (.some, .some):
      throw fail(entry, place, "give \"uuid\" or \"handle\", not both")
    case (nil, nil):
      throw fail(entry, place, "needs \"uuid\" or \"handle\"")
    }
    let name = try string(entry["name"], "\(place).name", fail) ?? "Value"
    let key = try string(entry["key"], "\(place).key", fail) ?? snakeCase(name)
    guard isKey(key) else { throw fail(entry["key"] ?? entry, "\(place).key", "'\(LineJSON.printable(key))' is not a JSON key of lowercase letters, digits and _") }
    guard let fieldsNode = entry["fields"], case .array(let list) = fieldsNode.value, !list.isEmpty else {
      throw fail(entry["fields"] ?? entry, "\(place).fields", "needs a list of at least one field")
    }
    guard list.count <= maximumFields else { throw fail(fieldsNode, "\(place).fields", "more than \(maximumFields) fields") }
    var fields: [DeclaredField] = []
    var names: [String] = []
    for (index, node) in list.enumerated() {
      let field = try self.field(node, place: "\(place).fields[\(index)]", earlier: names, fields, fail)
      names.append(field.name)
      fields.append(field.field)
    }
    guard let internedName = NameTable.intern(name), let internedKey = NameTable.intern(key) else {
      throw fail(entry, place, "too much text in decoder files (at most \(NameTable.maximumBytes) bytes in all)")
    }
    return UserDecoder(target: target, format: DeclaredFormat(name: internedName, key: internedKey, fields: fields))
  }

  static func field(
    _ node: LineJSON, place: String, earlier: [String], _ previous: [DeclaredField], _ fail: Fail
  ) throws(DecoderFileError) -> (name: String, field: DeclaredField) {
    guard case .object(let members) = node.value else { throw fail(node, place, "needs an object") }
    let known: Set = ["name", "label", "type", "from", "mask", "shift", "if", "repeat", "min", "length", "scale", "offset", "unit", "places", "enum", "hidden"]
    if let unknown = members.first(where: { !known.contains($0.key) }) {
      throw fail(unknown.value, "\(place).\(LineJSON.printable(unknown.key))", "unknown key (expected one of \(known.sorted().joined(separator: ", ")))")
    }
    guard let name = try string(node["name"], "\(place).name", fail) else { throw fail(node, "\(place).name", "every field needs a name") }
    guard isKey(name) else { throw fail(node["name"]!, "\(place).name", "'\(LineJSON.printable(name))' is not a JSON key of lowercase letters, digits and _") }
    func earlierField(_ key: String, _ what: String) throws(DecoderFileError) -> Int {
      guard let text = try string(node[key], "\(place).\(what)", fail) else { throw fail(node, "\(place).\(what)", "needs the name of an earlier field") }
      guard let index = earlier.lastIndex(of: text) else {
        throw fail(node[key]!, "\(place).\(what)", "'\(LineJSON.printable(text))' is not an earlier field (fields are read in order)")
      }
      guard case .unsigned = previous[index].kind else {
        if case .signed = previous[index].kind { return index }
        if case .derived = previous[index].kind { return index }
        throw fail(node[key]!, "\(place).\(what)", "'\(LineJSON.printable(text))' is not an integer field")
      }
      return index
    }
    let kind: DeclaredField.Kind
    if node["from"] != nil {
      guard node["type"] == nil else { throw fail(node, place, "give \"type\" (read bytes) or \"from\" (bits of an earlier field), not both") }
      let source = try earlierField("from", "from")
      kind = .derived(field: source, mask: try integer(node["mask"], "\(place).mask", fail) ?? UInt64.max,
        shift: UInt8(min(try integer(node["shift"], "\(place).shift", fail) ?? 0, 63)))
    } else {
      guard let type = try string(node["type"], "\(place).type", fail) else { throw fail(node, "\(place).type", "needs a type (u8, u16, s16be, sfloat, utf8, …) or \"from\"") }
      let length = try integer(node["length"], "\(place).length", fail).map { Int(min($0, 512)) }
      guard let parsed = Self.kind(type, length: length) else {
        throw fail(node["type"]!, "\(place).type", "unknown type '\(LineJSON.printable(type))' (u8…u64, s8…s64, with 'be' for big-endian: u16be; sfloat, float, f32, f64, utf8, bytes)")
      }
      kind = parsed
    }
    let label = try string(node["label"], "\(place).label", fail) ?? String(name.map { $0 == "_" ? " " : $0 })
    guard let key = NameTable.intern(name), let labelText = NameTable.intern(label) else {
      throw fail(node, place, "too much text in decoder files")
    }
    var field = DeclaredField(key: key, label: labelText, kind: kind)
    if let condition = node["if"] {
      guard case .object = condition.value else { throw fail(condition, "\(place).if", "needs {\"field\": name, \"mask\": n, \"equals\": n}") }
      let source = try { () throws(DecoderFileError) -> Int in
        guard let text = try string(condition["field"], "\(place).if.field", fail), let index = earlier.lastIndex(of: text) else {
          throw fail(condition, "\(place).if.field", "needs the name of an earlier integer field")
        }
        return index
      }()
      let mask = try integer(condition["mask"], "\(place).if.mask", fail) ?? UInt64.max
      let equals = try integer(condition["equals"], "\(place).if.equals", fail) ?? mask
      field.condition = (source, mask, equals)
    }
    if let node = node["repeat"] {
      guard case .bool(let value) = node.value else { throw fail(node, "\(place).repeat", "needs true or false") }
      field.repeats = value
    }
    if let minimum = try integer(node["min"], "\(place).min", fail) {
      guard field.repeats else { throw fail(node["min"]!, "\(place).min", "only a list (\"repeat\": true) has a minimum count") }
      field.minimumCount = Int(min(minimum, 4096))
    }
    if let node = node["hidden"] {
      guard case .bool(let value) = node.value else { throw fail(node, "\(place).hidden", "needs true or false") }
      field.hidden = value
    }
    field.scale = try real(node["scale"], "\(place).scale", fail)
    field.offset = try real(node["offset"], "\(place).offset", fail)
    if let unit = try string(node["unit"], "\(place).unit", fail) { field.unit = NameTable.intern(unit) }
    if let places = try integer(node["places"], "\(place).places", fail) { field.places = UInt8(min(places, 9)) }
    if let names = node["enum"] {
      guard case .object(let entries) = names.value else { throw fail(names, "\(place).enum", "needs an object of value → name (\"1\": \"Chest\")") }
      for entry in entries {
        let number = entry.key.hasPrefix("0x") ? UInt64(entry.key.dropFirst(2), radix: 16) : UInt64(entry.key)
        guard let number, case .string(let text) = entry.value.value, let interned = NameTable.intern(text) else {
          throw fail(entry.value, "\(place).enum.\(LineJSON.printable(entry.key))", "needs a number key (\"1\", \"0x1f\") and a name")
        }
        field.names[number] = interned
      }
    }
    return (name, field)
  }

  static func kind(_ type: String, length: Int?) -> DeclaredField.Kind? {
    switch type {
    case "sfloat": return .sfloat
    case "float": return .float11073
    case "f32": return .float32
    case "f64": return .float64
    case "utf8": return .utf8(length: length)
    case "bytes": return .bytes(length: length)
    default: break
    }
    var text = Substring(type)
    let bigEndian = text.hasSuffix("be")
    if bigEndian || text.hasSuffix("le") { text = text.dropLast(2) }
    guard let sign = text.first, sign == "u" || sign == "s", let bits = Int(text.dropFirst()), bits % 8 == 0, (8...64).contains(bits) else {
      return nil
    }
    return sign == "u" ? .unsigned(bytes: bits / 8, bigEndian: bigEndian) : .signed(bytes: bits / 8, bigEndian: bigEndian)
  }

  static func string(_ node: LineJSON?, _ place: String, _ fail: Fail) throws(DecoderFileError) -> String? {
    guard let node else { return nil }
    guard case .string(let text) = node.value, !text.isEmpty else { throw fail(node, place, "needs a non-empty string, not \(node.typeName)") }
    return text
  }

  static func integer(_ node: LineJSON?, _ place: String, _ fail: Fail) throws(DecoderFileError) -> UInt64? {
    guard let node else { return nil }
    switch node.value {
    case .number(let number, _) where number >= 0 && number == number.rounded() && number < 1.8e19: return UInt64(number)
    case .string(let text) where text.hasPrefix("0x"): if let number = UInt64(text.dropFirst(2), radix: 16) { return number }
    default: break
    }
    throw fail(node, place, "needs a whole number (or \"0x…\"), not \(node.typeName)")
  }

  static func real(_ node: LineJSON?, _ place: String, _ fail: Fail) throws(DecoderFileError) -> Double? {
    guard let node else { return nil }
    guard case .number(let number, _) = node.value else { throw fail(node, place, "needs a number, not \(node.typeName)") }
    return number
  }

  static func isKey(_ text: String) -> Bool {
    !text.isEmpty && text.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x5F }
  }

  static func snakeCase(_ name: String) -> String {
    var key = ""
    for scalar in name.lowercased().unicodeScalars {
      if ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar) { key.unicodeScalars.append(scalar) } else if !key.hasSuffix("_") { key += "_" }
    }
    while key.hasSuffix("_") { key.removeLast() }
    return key.isEmpty ? "value" : key
  }
}

extension DecoderRegistry {
  /// Adds a user's decoder: by UUID it replaces a built-in one; by handle it works like
  /// `--decode-as` with a private UUID of its own.
  public mutating func register(_ user: UserDecoder) {
    let place = declare(user.format)
    switch user.target {
    case .uuid(let uuid):
      register(CharacteristicDecoder(uuid: uuid, key: user.format.key, declaredFormat: place))
    case let .handle(handle, peer):
      // A UUID no real characteristic has (the bledissect base with the handle and peer in it).
      let uuid = BluetoothUUID(high: 0xB1ED_0000_0000_0000 | UInt64(handle) << 16, low: (peer?.rawValue ?? 0) | 0xFFFF_0000_0000_0000)
      register(CharacteristicDecoder(uuid: uuid, key: user.format.key, declaredFormat: place))
      override(HandleOverride(handle: handle, uuid: uuid, peer: peer))
    }
  }
}
