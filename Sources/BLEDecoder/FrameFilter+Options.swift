import BLECore

/// A filter value that does not read as its option needs (the words say what it needs).
public struct FilterValueError: Error, Sendable {
  public var message: String
}

extension FrameFilter {
  /// The options a filter reads, as `add` takes them (without the dashes).
  public static let optionNames = ["index", "conn", "peer", "handle", "uuid", "layer", "opcode", "errors", "from", "to", "name"]

  /// Adds one value of a filter option (`--conn 0x40` is `add("conn", "0x40")`; `--errors`
  /// takes no value).
  public mutating func add(_ option: String, _ text: String) throws(FilterValueError) {
    func fail(_ needs: String) -> FilterValueError { FilterValueError(message: "--\(option) needs \(needs), not '\(text)'") }
    switch option {
    case "index":
      let digits = text.lowercased().hasPrefix("hci") ? String(text.dropFirst(3)) : text
      guard let value = UInt16(digits), value < 0xFFFF else { throw fail("a controller (hci0 or 0)") }
      adapters.append(value)
    case "conn":
      guard let value = Self.number(text), value <= 0x0EFF else { throw fail("a connection handle (0 to 0x0eff)") }
      connectionHandles.append(UInt16(value))
    case "peer":
      guard let address = BDAddr(text) else { throw fail("an address like C0:11:22:33:44:55") }
      peers.append(address)
    case "handle":
      guard let value = Self.number(text), value <= 0xFFFF else { throw fail("an attribute handle (0x0001 to 0xffff)") }
      attributeHandles.append(UInt16(value))
    case "uuid":
      guard let uuid = BluetoothUUID(text) else { throw fail("a UUID (180d, 0x2a37 or 128-bit)") }
      uuids.append(uuid)
    case "layer":
      let layers: [String: ProtocolLayer] = ["hci": .hci, "l2cap": .l2cap, "att": .att, "gatt": .gatt]
      guard let layer = layers[text.lowercased()] else { throw FilterValueError(message: "--layer must be hci, l2cap, att or gatt, not '\(text)'") }
      self.layers.append(layer)
    case "opcode":
      guard let opcode = Self.attOpcode(text) else { throw fail("an ATT opcode (0x1b, or its name: handle_value_notification)") }
      opcodes.append(opcode)
    case "errors":
      errorsOnly = true
    case "from", "to":
      guard let time = FilterTime(text) else { throw fail("seconds since the first frame (12.5) or a UTC time (2026-12-06T05:37:27Z)") }
      if option == "from" { from = time } else { to = time }
    case "name":
      guard !text.isEmpty else { throw fail("a device name (or part of one)") }
      names.append(text)
    default:
      throw FilterValueError(message: "--\(option) is not a filter")
    }
  }

  /// A decimal number or 0x-prefixed hex.
  package static func number(_ text: String) -> UInt32? {
    if text.lowercased().hasPrefix("0x") { return UInt32(text.dropFirst(2), radix: 16) }
    return UInt32(text)
  }

  /// An ATT opcode by number, or by name in any case with spaces, '_' or '-' between words.
  static func attOpcode(_ text: String) -> UInt8? {
    if let value = number(text) { return value <= 0xFF ? UInt8(value) : nil }
    func words(_ name: String) -> String { name.lowercased().filter { $0.isLetter || $0.isNumber } }
    let wanted = words(text)
    return (0...255).lazy.map(UInt8.init).first { AssignedNumbers.attOpcodeName($0).map { words($0.description) } == wanted }
  }
}
