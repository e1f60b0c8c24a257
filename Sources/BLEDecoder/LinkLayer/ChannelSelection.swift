/// Which data channel a connection event uses (Core Vol 6 Part B §4.5.8), from the channel
/// map and the hop increment (algorithm #1) or the access address (algorithm #2). A sniffed
/// link's events, counted from the packets' times, are checked against the channel the sniffer
/// heard each packet on.
enum ChannelSelection {
  /// The used channels of a channel map (bit n: channel n, 37 bits), ascending.
  static func usedChannels(_ map: UInt64) -> [UInt8] {
    (0..<37).compactMap { map >> UInt64($0) & 1 == 1 ? UInt8($0) : nil }
  }

  /// Algorithm #1 (§4.5.8.2): the unmapped channel moves on by the hop increment each event,
  /// from 0 before event 0; one not in use is remapped to the used channel at its index modulo
  /// their count. Nil without used channels.
  static func algorithm1(event: UInt16, hop: UInt8, used: [UInt8]) -> UInt8? {
    guard !used.isEmpty else { return nil }
    let unmapped = UInt8((Int(event) + 1) * Int(hop) % 37)
    return used.contains(unmapped) ? unmapped : used[Int(unmapped) % used.count]
  }

  /// Algorithm #2 (§4.5.8.3): a pseudo-random number from the event counter and the channel
  /// identifier (the access address's halves XORed), three rounds of a bit permutation and a
  /// multiply-add; unmapped, it is taken modulo 37, else scaled into the used channels.
  static func algorithm2(event: UInt16, accessAddress: UInt32, used: [UInt8]) -> UInt8? {
    guard !used.isEmpty else { return nil }
    let identifier = UInt16(truncatingIfNeeded: accessAddress >> 16) ^ UInt16(truncatingIfNeeded: accessAddress)
    var value = event ^ identifier
    for _ in 0..<3 {
      value = permuted(value)
      value = 17 &* value &+ identifier  // MAM: (17 a + b) mod 2^16
    }
    let random = value ^ identifier
    let unmapped = UInt8(random % 37)
    if used.contains(unmapped) { return unmapped }
    return used[Int(UInt32(used.count) * UInt32(random) >> 16)]
  }

  /// Each octet's bits in reverse order (the PERM step).
  static func permuted(_ value: UInt16) -> UInt16 {
    func reversed(_ byte: UInt8) -> UInt8 {
      var (input, output) = (byte, UInt8(0))
      for _ in 0..<8 {
        output = output << 1 | input & 1
        input >>= 1
      }
      return output
    }
    return UInt16(reversed(UInt8(value >> 8))) << 8 | UInt16(reversed(UInt8(value & 0xFF)))
  }
}
