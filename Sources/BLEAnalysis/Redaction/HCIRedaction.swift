import BLECore

/// HCI commands and events (Core Vol 4 Part E §7): the parameters that carry an address, a
/// name, a key or a pairing value, by opcode and event code. The reader starts at the
/// parameters (after the opcode or event code and the length).
extension RedactionScope {
  mutating func command(opcode: UInt16, _ p: inout ByteReader) throws(DecodeError) {
    switch opcode {
    // MARK: LE Controller commands (OGF 0x08)
    case 0x2005:  // LE Set Random Address
      try address(&p, .random)
    case 0x2006:  // LE Set Advertising Parameters: intervals(4) type(1) own type(1), peer
      try p.skip(6)
      try typedAddress(&p)
    case 0x2008, 0x2009:  // LE Set Advertising Data, LE Set Scan Response Data: length(1) data(31)
      try lengthPrefixedAdvertisingData(&p)
    case 0x200D:  // LE Create Connection: scan interval(2) window(2) filter policy(1), peer
      try p.skip(5)
      try typedAddress(&p)
    case 0x2011, 0x2012, 0x2028, 0x202B, 0x202C, 0x204E, 0x2047, 0x2048:
      // Filter accept list add/remove, resolving list remove, read peer/local RPA, privacy
      // mode, periodic advertiser list add/remove: type(1) address(6) first
      try typedAddress(&p)
    case 0x2017:  // LE Encrypt: key(16) plaintext(16)
      try key(&p, count: 16)
      try key(&p, count: 16)
    case 0x2019:  // LE Enable Encryption: handle(2) Rand(8) EDIV(2) LTK(16)
      try p.skip(2)
      try key(&p, count: 8)
      try key(&p, count: 2)
      try key(&p, count: 16)
    case 0x201A:  // LE Long Term Key Request Reply: handle(2) LTK(16)
      try p.skip(2)
      try key(&p, count: 16)
    case 0x2026, 0x205E:  // LE Generate DHKey (v1, v2): remote public key(64)
      try key(&p, count: 64)
    case 0x2027:  // LE Add Device To Resolving List: type(1) address(6) peer IRK(16) local IRK(16)
      try typedAddress(&p)
      try key(&p, count: 16)
      try key(&p, count: 16)
    case 0x2035:  // LE Set Advertising Set Random Address: handle(1) address(6)
      try p.skip(1)
      try address(&p, .random)
    case 0x2036:  // LE Set Extended Advertising Parameters: handle(1) properties(2) intervals(6) map(1) own type(1), peer
      try p.skip(11)
      try typedAddress(&p)
    case 0x2037, 0x2038:  // LE Set Extended Advertising / Scan Response Data: handle op fragment length data
      try p.skip(3)
      try lengthPrefixedAdvertisingData(&p)
    case 0x203F:  // LE Set Periodic Advertising Data: handle op length data
      try p.skip(2)
      try lengthPrefixedAdvertisingData(&p)
    case 0x2043:  // LE Extended Create Connection: filter policy(1) own type(1), peer
      try p.skip(2)
      try typedAddress(&p)
    case 0x2085:  // LE Extended Create Connection v2: advertising handle(1) subevent(1) filter(1) own type(1), peer
      try p.skip(4)
      try typedAddress(&p)
    case 0x2044:  // LE Periodic Advertising Create Sync: options(1) SID(1), advertiser
      try p.skip(2)
      try typedAddress(&p)

    // MARK: BR/EDR link control (OGF 0x01), link policy (0x02), baseband (0x03)
    case 0x0405, 0x0408, 0x0409, 0x040A, 0x040C, 0x040E, 0x0419, 0x041A, 0x0429, 0x042A, 0x042B, 0x042C, 0x042D, 0x042F, 0x0433,
      0x0434, 0x043D, 0x080B, 0x0C0D, 0x0C12:
      // Create Connection (Cancel), Accept/Reject Connection Request, Link Key and PIN Code
      // negative replies, Remote Name Request (Cancel), Accept/Reject Synchronous Connection,
      // IO Capability Request Reply, User Confirmation replies, User Passkey and Remote OOB
      // negative replies, IO Capability negative reply, Enhanced Accept Synchronous, Switch
      // Role, Read and Delete Stored Link Key: the address first
      try address(&p, .publicAddress)
    case 0x040B:  // Link Key Request Reply: address(6) key(16)
      try address(&p, .publicAddress)
      try key(&p, count: 16)
    case 0x040D:  // PIN Code Request Reply: address(6) PIN length(1) PIN(16)
      try address(&p, .publicAddress)
      let length = Int(try p.readUInt8())
      try pin(&p, length: length)
    case 0x042E:  // User Passkey Request Reply: address(6) passkey(4)
      try address(&p, .publicAddress)
      try passkey(&p)
    case 0x0430:  // Remote OOB Data Request Reply: address(6) C(16) R(16)
      try address(&p, .publicAddress)
      try key(&p, count: 16)
      try key(&p, count: 16)
    case 0x0445:  // Remote OOB Extended Data Request Reply: address(6) C192 R192 C256 R256
      try address(&p, .publicAddress)
      for _ in 0..<4 { try key(&p, count: 16) }
    case 0x0C05:  // Set Event Filter: type(1) condition type(1); an address condition (2) for inquiry (1) and connection setup (2)
      let type = try p.readUInt8()
      if type == 1 || type == 2, try p.readUInt8() == 2 { try address(&p, .publicAddress) }
    case 0x0C11:  // Write Stored Link Key: count(1), then per key address(6) key(16)
      let count = Int(try p.readUInt8())
      for _ in 0..<count {
        try address(&p, .publicAddress)
        try key(&p, count: 16)
      }
    case 0x0C13:  // Write Local Name: name(248)
      try name(&p, count: min(248, p.remaining), label: NameLabel.device)
    case 0x0C52:  // Write Extended Inquiry Response: FEC(1) EIR(240)
      try p.skip(1)
      try advertisingData(&p)
    default:
      break
    }
  }

  /// A length(1) then that much advertising data.
  mutating func lengthPrefixedAdvertisingData(_ p: inout ByteReader) throws(DecodeError) {
    let length = Int(try p.readUInt8())
    var data = try p.readReader(count: min(length, p.remaining))
    try advertisingData(&data)
  }

  mutating func event(code: UInt8, _ p: inout ByteReader) throws(DecodeError) {
    switch code {
    case 0x0E:  // Command Complete: packets(1) opcode(2) return parameters
      try p.skip(1)
      let opcode = try p.readUInt16LE()
      try returnParameters(opcode: opcode, &p)
    case 0x3E:
      try leMetaEvent(&p)
    case 0x02, 0x22:  // Inquiry Result (with RSSI): count(1), then per response address(6) and 8 bytes
      let count = Int(try p.readUInt8())
      for _ in 0..<count {
        try address(&p, .publicAddress)
        try p.skip(8)
      }
    case 0x2F:  // Extended Inquiry Result: count(1) address(6) 8 bytes EIR(240)
      try p.skip(1)
      try address(&p, .publicAddress)
      try p.skip(8)
      try advertisingData(&p)
    case 0x03, 0x2C:  // Connection Complete, Synchronous Connection Complete: status(1) handle(2) address
      try p.skip(3)
      try address(&p, .publicAddress)
    case 0x04, 0x16, 0x17, 0x20, 0x31, 0x32, 0x34, 0x35, 0x3C, 0x3D:
      // Connection Request, PIN Code Request, Link Key Request, Page Scan Repetition Mode
      // Change, IO Capability Request/Response, User Passkey Request, Remote OOB Data
      // Request, Keypress Notification, Remote Host Supported Features: the address first
      try address(&p, .publicAddress)
    case 0x07:  // Remote Name Request Complete: status(1) address(6) name(248)
      try p.skip(1)
      try address(&p, .publicAddress)
      try name(&p, count: min(248, p.remaining), label: NameLabel.device)
    case 0x12, 0x36:  // Role Change, Simple Pairing Complete: status(1) address
      try p.skip(1)
      try address(&p, .publicAddress)
    case 0x15:  // Return Link Keys: count(1), then per key address(6) key(16)
      let count = Int(try p.readUInt8())
      for _ in 0..<count {
        try address(&p, .publicAddress)
        try key(&p, count: 16)
      }
    case 0x18:  // Link Key Notification: address(6) key(16) type(1)
      try address(&p, .publicAddress)
      try key(&p, count: 16)
    case 0x33, 0x3B:  // User Confirmation Request, User Passkey Notification: address(6) value(4)
      try address(&p, .publicAddress)
      try passkey(&p)
    default:
      break
    }
  }

  /// Command Complete's return parameters that carry an address, a name or a secret.
  mutating func returnParameters(opcode: UInt16, _ p: inout ByteReader) throws(DecodeError) {
    switch opcode {
    case 0x1009:  // Read BD_ADDR: status(1) address(6)
      try p.skip(1)
      try address(&p, .publicAddress)
    case 0x0408, 0x040B, 0x040C, 0x040D, 0x040E, 0x041A, 0x042B, 0x042C, 0x042D, 0x042E, 0x042F, 0x0430, 0x0433, 0x0434, 0x0445:
      // The replies and cancels that return status(1) address(6)
      try p.skip(1)
      try address(&p, .publicAddress)
    case 0x202B, 0x202C:  // LE Read Peer/Local Resolvable Address: status(1) address(6)
      try p.skip(1)
      try address(&p, .random)
    case 0x0C14:  // Read Local Name: status(1) name(248)
      try p.skip(1)
      try name(&p, count: min(248, p.remaining), label: NameLabel.device)
    case 0x0C51:  // Read Extended Inquiry Response: status(1) FEC(1) EIR(240)
      try p.skip(2)
      try advertisingData(&p)
    case 0x0C57:  // Read Local OOB Data: status(1) C(16) R(16)
      try p.skip(1)
      try key(&p, count: 16)
      try key(&p, count: 16)
    case 0x0C7D:  // Read Local OOB Extended Data: status(1) C192 R192 C256 R256
      try p.skip(1)
      for _ in 0..<4 { try key(&p, count: 16) }
    case 0x2017:  // LE Encrypt: status(1) encrypted data(16)
      try p.skip(1)
      try key(&p, count: 16)
    case 0x2018:  // LE Rand: status(1) random number(8)
      try p.skip(1)
      try key(&p, count: 8)
    default:
      break
    }
  }

  mutating func leMetaEvent(_ p: inout ByteReader) throws(DecodeError) {
    let subevent = try p.readUInt8()
    switch subevent {
    case 0x01, 0x0A, 0x29:  // (Enhanced) Connection Complete: status(1) handle(2) role(1), peer; then the RPAs
      try p.skip(4)
      try typedAddress(&p)
      if subevent != 0x01 {
        try address(&p, .random)
        try address(&p, .random)
      }
    case 0x02:  // Advertising Report: count(1), then per report type(1), address, length(1) data rssi(1)
      let count = Int(try p.readUInt8())
      for _ in 0..<count {
        try p.skip(1)
        try typedAddress(&p)
        try lengthPrefixedAdvertisingData(&p)
        try p.skip(1)
      }
    case 0x05:  // Long Term Key Request: handle(2) Rand(8) EDIV(2)
      try p.skip(2)
      try key(&p, count: 8)
      try key(&p, count: 2)
    case 0x08:  // Read Local P-256 Public Key Complete: status(1) key(64)
      try p.skip(1)
      try key(&p, count: 64)
    case 0x09:  // Generate DHKey Complete: status(1) DHKey(32)
      try p.skip(1)
      try key(&p, count: 32)
    case 0x0B:  // Directed Advertising Report: count(1), then per report type(1), address, direct address, rssi(1)
      let count = Int(try p.readUInt8())
      for _ in 0..<count {
        try p.skip(1)
        try typedAddress(&p)
        try typedAddress(&p)
        try p.skip(1)
      }
    case 0x0D:  // Extended Advertising Report
      let count = Int(try p.readUInt8())
      for _ in 0..<count {
        // type(2), address, PHYs(2) SID(1) TX power(1) RSSI(1) periodic interval(2), direct address, length(1) data
        try p.skip(2)
        try typedAddress(&p)
        try p.skip(7)
        try typedAddress(&p)
        try lengthPrefixedAdvertisingData(&p)
      }
    case 0x0E, 0x24:  // Periodic Advertising Sync Established (v1, v2): status(1) sync handle(2) SID(1), advertiser
      try p.skip(4)
      try typedAddress(&p)
    case 0x0F:  // Periodic Advertising Report: sync handle(2) TX power(1) RSSI(1) CTE type(1) status(1), length data
      try p.skip(6)
      try lengthPrefixedAdvertisingData(&p)
    case 0x25:  // Periodic Advertising Report v2: as v1 with counter(2) subevent(1) before the status
      try p.skip(9)
      try lengthPrefixedAdvertisingData(&p)
    case 0x13:  // Scan Request Received: advertising handle(1), scanner
      try p.skip(1)
      try typedAddress(&p)
    case 0x18, 0x26:  // Periodic Advertising Sync Transfer Received (v1, v2): status handle service data sync handle SID, advertiser
      try p.skip(8)
      try typedAddress(&p)
    default:
      break
    }
  }

  /// Linux monitor records that carry the controller's own address (New Index, Index Info).
  mutating func monitorRecord(kind: PacketKind, _ p: inout ByteReader) throws(DecodeError) {
    switch kind {
    case .indexAdded:  // type(1) bus(1) address(6) name(8)
      try p.skip(2)
      try address(&p, .publicAddress)
    case .indexInfo:  // address(6) manufacturer(2)
      try address(&p, .publicAddress)
    default:
      break
    }
  }
}
