import BLECore
@testable import BLEDecoder

/// Finds decoded values by dotted key path (`params.reports.0.address`), for assertions.
extension FieldList {
  /// Looks `path` up as given, then inside the `hci` and `info` layer groups (so HCI tests can
  /// write `params.handle` for `hci.params.handle`).
  func value(_ path: String) -> FieldValue? {
    if let found = exactValue(path) { return found }
    return exactValue("hci." + path) ?? exactValue("info." + path)
  }

  func exactValue(_ path: String) -> FieldValue? {
    let parts = path.split(separator: ".").map(String.init)
    var depth = 0
    var index = 0
    var partIndex = 0
    let list = fields
    while index < list.count, partIndex < parts.count {
      let field = list[index]
      if field.depth < depth { return nil }
      if field.depth > depth {
        index += 1
        continue
      }
      let part = parts[partIndex]
      let parentIsArray = depth > 0 && (enclosingIsArray(of: index))
      let matches: Bool
      if parentIsArray, let wanted = Int(part) {
        matches = elementIndex(of: index) == wanted
      } else {
        matches = field.key.description == part
      }
      if matches {
        partIndex += 1
        if partIndex == parts.count { return field.value }
        depth += 1
      }
      index += 1
    }
    return nil
  }

  private func enclosingIsArray(of index: Int) -> Bool {
    let depth = fields[index].depth
    var cursor = index - 1
    while cursor >= 0 {
      if fields[cursor].depth == depth - 1 {
        if case .array = fields[cursor].value { return true }
        return false
      }
      cursor -= 1
    }
    return false
  }

  private func elementIndex(of index: Int) -> Int {
    let depth = fields[index].depth
    var count = 0
    var cursor = index - 1
    while cursor >= 0, fields[cursor].depth >= depth {
      if fields[cursor].depth == depth { count += 1 }
      cursor -= 1
    }
    return count
  }

  func uint(_ path: String) -> UInt64? {
    switch value(path) {
    case .unsigned(let v, _)?: return v
    case .code(let v, _, _)?: return v
    case .measure(let v, _, _)?: return UInt64(exactly: v)
    default: return nil
    }
  }

  func int(_ path: String) -> Int64? {
    switch value(path) {
    case .signed(let v)?: return v
    case .measure(let v, _, _)?: return v
    case .unsigned(let v, _)?: return Int64(v)
    default: return nil
    }
  }

  func name(_ path: String) -> String? {
    switch value(path) {
    case .code(_, _, let name?)?: return name.description
    case .uuid(_, let name?)?: return name.description
    default: return nil
    }
  }

  func text(_ path: String) -> String? {
    switch value(path) {
    case .text(let t)?: return t
    case .address(let a, _)?: return a.description
    case .uuid(let u, _)?: return u.description
    case .bytes(let b)?: return Hex.string(b)
    default: return nil
    }
  }

  func bool(_ path: String) -> Bool? {
    if case .bool(let b)? = value(path) { return b }
    return nil
  }
}

/// Dissects one record on a fresh or given dissector.
func dissect(_ kind: PacketKind, _ bytes: [UInt8], direction: Direction? = nil, adapter: UInt16 = 0, with dissector: inout Dissector, number: Int = 1) -> DissectedFrame {
  var frame = DissectedFrame()
  let record = CaptureRecord(timestamp: 0, adapter: adapter, direction: direction ?? (kind == .event ? .controllerToHost : .hostToController), kind: kind, bytes: bytes)
  dissector.dissect(record, number: number, into: &frame)
  return frame
}

func dissect(_ kind: PacketKind, _ bytes: [UInt8], direction: Direction? = nil) -> DissectedFrame {
  var dissector = Dissector()
  return dissect(kind, bytes, direction: direction, with: &dissector)
}
