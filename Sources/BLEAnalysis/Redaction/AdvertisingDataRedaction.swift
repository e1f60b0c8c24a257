import BLECore

/// Advertising and extended inquiry response data (Core Supplement Part A §1): length, type,
/// data, structure after structure. What names a device or carries its address or a secret is
/// replaced; the rest (flags, UUIDs, manufacturer data) stays.
extension RedactionScope {
  mutating func advertisingData(_ reader: inout ByteReader) throws(DecodeError) {
    while reader.remaining >= 1 {
      let length = Int(try reader.readUInt8())
      // A zero length ends significant data (EIR pads with zeros to 240 bytes).
      if length == 0 { return }
      var item = try reader.readReader(count: min(length, reader.remaining))
      guard item.remaining >= 1 else { return }
      let type = try item.readUInt8()
      try advertisingStructure(type: type, &item)
    }
  }

  mutating func advertisingStructure(type: UInt8, _ item: inout ByteReader) throws(DecodeError) {
    switch type {
    case 0x08, 0x09, 0x30:  // Shortened, Complete Local Name; Broadcast Name
      try nameToEnd(&item, label: NameLabel.device)
    case 0x17:  // Public Target Address
      try addresses(&item, .publicAddress)
    case 0x18:  // Random Target Address
      try addresses(&item, .random)
    case 0x1B:  // LE Bluetooth Device Address: address(6), then its type (bit 0: random)
      var look = item
      try look.skip(6)
      let random = look.remaining >= 1 ? try look.readUInt8() & 1 != 0 : false
      try address(&item, AddressKind(randomBit: random))
    case 0x0E, 0x0F, 0x10, 0x1D, 0x1E, 0x22, 0x23, 0x2D:
      // Simple Pairing Hash C and Randomizer R (192 and 256), Security Manager TK Value, LE
      // Secure Connections Confirmation and Random Values, Broadcast_Code.
      try key(&item, count: item.remaining)
    default:
      break
    }
  }
}
