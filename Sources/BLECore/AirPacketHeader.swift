/// What an air sniffer knew of how a link-layer packet travelled, the same whatever the capture
/// format: every reader of a sniffer link type writes this before the packet in a record of
/// kind `.airPacket`, and the link-layer decoder reads it back.
///
/// Layout (6 bytes, our own; formats give more or less of it):
///
/// | byte | content |
/// |---|---|
/// | 0 | channel index, 0–39 (Core Vol 6 Part B §1.4.1: 37–39 the primary advertising channels; readers of formats that give the RF channel or the frequency convert it), 0xFF: not known |
/// | 1 | signal in dBm, two's complement (0x7F: not known) |
/// | 2 | PHY: 0 LE 1M, 1 LE 2M, 2 LE Coded (0xFF: not known) |
/// | 3 | flags: 0x01 CRC checked, 0x02 CRC valid, 0x04 direction known, 0x08 sent by the central, 0x10 MIC checked, 0x20 MIC valid, 0x40 decrypted by the sniffer, 0x80 event counter known |
/// | 4–5 | connection event counter, little-endian |
///
/// The packet follows from its access address (4 bytes) to its CRC (3 bytes), as the sniffer gave
/// it: on LE Coded, the formats put the coding indicator (1 byte) after the access address.
public struct AirPacketHeader: Sendable, Equatable {
  public static let size = 6

  public enum PHY: UInt8, Sendable {
    case le1M = 0, le2M = 1, leCoded = 2
  }

  /// Whether the sniffer checked the CRC (or MIC), and what it found.
  public enum Check: Sendable, Equatable {
    case notChecked, valid, invalid
  }

  public var channel: UInt8?
  public var signal: Int8?
  public var phy: PHY?
  public var crc = Check.notChecked
  /// True when the central sent it, false when the peripheral did; nil when not known (the
  /// decoder tells data packets apart by their sequence numbers then).
  public var fromCentral: Bool?
  public var mic = Check.notChecked
  /// Whether the sniffer decrypted the payload itself.
  public var decryptedBySniffer = false
  public var eventCounter: UInt16?

  public init(
    channel: UInt8? = nil, signal: Int8? = nil, phy: PHY? = nil, crc: Check = .notChecked, fromCentral: Bool? = nil,
    mic: Check = .notChecked, decryptedBySniffer: Bool = false, eventCounter: UInt16? = nil
  ) {
    self.channel = channel
    self.signal = signal
    self.phy = phy
    self.crc = crc
    self.fromCentral = fromCentral
    self.mic = mic
    self.decryptedBySniffer = decryptedBySniffer
    self.eventCounter = eventCounter
  }

  /// Reads the header a reader wrote (values out of range read as not known).
  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    let channel = try reader.readUInt8()
    let signal = Int8(bitPattern: try reader.readUInt8())
    let phy = try reader.readUInt8()
    let flags = try reader.readUInt8()
    let counter = try reader.readUInt16LE()
    self.channel = channel < 40 ? channel : nil
    self.signal = signal == 0x7F ? nil : signal
    self.phy = PHY(rawValue: phy)
    crc = flags & 0x01 == 0 ? .notChecked : (flags & 0x02 != 0 ? .valid : .invalid)
    fromCentral = flags & 0x04 == 0 ? nil : flags & 0x08 != 0
    mic = flags & 0x10 == 0 ? .notChecked : (flags & 0x20 != 0 ? .valid : .invalid)
    decryptedBySniffer = flags & 0x40 != 0
    eventCounter = flags & 0x80 == 0 ? nil : counter
  }

  /// The six bytes, appended to `bytes`.
  public func append(to bytes: inout [UInt8]) {
    var flags: UInt8 = 0
    if crc != .notChecked { flags |= 0x01 }
    if crc == .valid { flags |= 0x02 }
    if let fromCentral { flags |= fromCentral ? 0x0C : 0x04 }
    if mic != .notChecked { flags |= 0x10 }
    if mic == .valid { flags |= 0x20 }
    if decryptedBySniffer { flags |= 0x40 }
    if eventCounter != nil { flags |= 0x80 }
    let counter = eventCounter ?? 0
    bytes.append(channel ?? 0xFF)
    bytes.append(UInt8(bitPattern: signal ?? 0x7F))
    bytes.append(phy?.rawValue ?? 0xFF)
    bytes.append(flags)
    bytes.append(UInt8(counter & 0xFF))
    bytes.append(UInt8(counter >> 8))
  }
}
