import BLECore

/// Finds decoded values by dotted key path (`hci.params.reports.0.address`), for assertions.
/// Array elements are addressed by index.
extension FieldList {
  /// The value at `path`, or inside the `hci` and `info` layer groups (so HCI tests can write
  /// `params.handle` for `hci.params.handle`).
  package func value(_ path: String) -> FieldValue? {
    if let found = lookup(path) { return found }
    return lookup("hci." + path) ?? lookup("info." + path)
  }

  /// The value at exactly `path`.
  package func lookup(_ path: String) -> FieldValue? {
    let parts = path.split(separator: ".").map(String.init)
    let list = fields
    var depth = 0
    var part = 0
    var elementCounts: [Int: Int] = [:]
    for (index, field) in list.enumerated() {
      if field.depth < depth { return nil }
      guard field.depth == depth else { continue }
      let matches: Bool
      if depth > 0, Self.parentIsArray(list, index), let wanted = Int(parts[part]) {
        let position = elementCounts[depth, default: 0]
        elementCounts[depth] = position + 1
        matches = position == wanted
      } else {
        matches = field.key.description == parts[part]
      }
      if matches {
        part += 1
        if part == parts.count { return field.value }
        depth += 1
      }
    }
    return nil
  }

  static func parentIsArray(_ list: [Field], _ index: Int) -> Bool {
    let depth = list[index].depth
    var cursor = index - 1
    while cursor >= 0 {
      if list[cursor].depth == depth - 1 {
        if case .array = list[cursor].value { return true }
        return false
      }
      cursor -= 1
    }
    return false
  }

  /// A number (plain, code or whole measure).
  package func uint(_ path: String) -> UInt64? {
    switch value(path) {
    case .unsigned(let v, _)?: return v
    case .code(let v, _, _)?: return v
    case .codeText(let v, _, _)?: return v
    case .measure(let v, _, _)?: return UInt64(exactly: v)
    default: return nil
    }
  }

  package func number(_ path: String) -> UInt64? { uint(path) }

  package func int(_ path: String) -> Int64? {
    switch value(path) {
    case .signed(let v)?: return v
    case .measure(let v, _, _)?: return v
    case .unsigned(let v, _)?: return Int64(v)
    default: return nil
    }
  }

  /// The name of a code or UUID.
  package func name(_ path: String) -> String? {
    switch value(path) {
    case .code(_, _, let name?)?: return name.description
    case .codeText(_, _, let name)?: return name
    case .uuid(_, let name?)?: return name.description
    default: return nil
    }
  }

  /// Text, an address, a UUID, or bytes as lowercase hex.
  package func text(_ path: String) -> String? {
    switch value(path) {
    case .text(let t)?: return t
    case .staticText(let t)?: return t.description
    case .address(let a, _)?: return a.description
    case .uuid(let u, _)?: return u.description
    case .bytes(let b)?: return Hex.string(b)
    default: return nil
    }
  }

  package func string(_ path: String) -> String? { text(path) }

  package func bool(_ path: String) -> Bool? {
    if case .bool(let b)? = value(path) { return b }
    return nil
  }

  /// The numbers of an array of plain values (its direct members).
  package func numbers(_ path: String) -> [UInt64] {
    let parts = path.split(separator: ".").map(String.init)
    let list = fields
    var level = 0
    var part = 0
    var found: Int?
    for (index, field) in list.enumerated() where field.depth == level && field.key.description == parts[part] {
      part += 1
      if part == parts.count {
        found = index
        break
      }
      level += 1
    }
    guard let found else { return [] }
    let depth = list[found].depth + 1
    var result: [UInt64] = []
    for field in list[(found + 1)...] {
      if field.depth < depth { break }
      guard field.depth == depth else { continue }
      switch field.value {
      case .unsigned(let v, _): result.append(v)
      case .measure(let v, _, _): result.append(UInt64(v))
      default: break
      }
    }
    return result
  }

  /// Every unsigned number whose key is in `keys`, anywhere inside the top-level group `group`.
  package func allNumbers(named keys: Set<String>, under group: String) -> [UInt64] {
    var result: [UInt64] = []
    var inside = false
    for field in fields {
      if field.depth == 0 {
        inside = field.key.description == group
        continue
      }
      guard inside, keys.contains(field.key.description) else { continue }
      if case .unsigned(let value, _) = field.value { result.append(value) }
    }
    return result
  }

  /// Every byte value whose key is `key` nested inside the top-level group `group`, as hex.
  package func allBytes(named key: String, under group: String) -> [String] {
    var result: [String] = []
    var inside = false
    for field in fields {
      if field.depth == 0 {
        inside = field.key.description == group
        continue
      }
      guard inside, field.depth > 1, field.key.description == key, case .bytes(let bytes) = field.value else { continue }
      result.append(Hex.string(bytes))
    }
    return result
  }

  /// A UUID value as the little-endian bytes it was sent as (Find By Type Value).
  package func uuidBytes(_ path: String) -> String? {
    guard case .uuid(let uuid, _)? = lookup(path) else { return nil }
    if uuid.width == 2, let short = uuid.uuid16 { return Hex.string([UInt8(short & 0xFF), UInt8(short >> 8)]) }
    var bytes: [UInt8] = []
    for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: uuid.low >> UInt64(shift))) }
    for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: uuid.high >> UInt64(shift))) }
    return Hex.string(bytes)
  }
}
