/// Helpers shared by the test targets (not part of the tool).

/// A small deterministic generator (SplitMix64), so a random test replays from its seed.
public struct SeededGenerator: RandomNumberGenerator {
  public var state: UInt64
  public init(seed: UInt64) { state = seed }
  public mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}

/// Bytes from a hex string such as `"0e0401030c00"` (spaces allowed). Traps on bad input: tests only.
public func hexBytes(_ text: String) -> [UInt8] {
  let digits = Array(text.filter { !$0.isWhitespace }.utf8)
  precondition(digits.count % 2 == 0, "odd number of hex digits")
  func nibble(_ c: UInt8) -> UInt8 {
    switch c {
    case 0x30...0x39: return c - 0x30
    case 0x41...0x46: return c - 0x37
    case 0x61...0x66: return c - 0x57
    default: preconditionFailure("not a hex digit")
    }
  }
  return stride(from: 0, to: digits.count, by: 2).map { nibble(digits[$0]) << 4 | nibble(digits[$0 + 1]) }
}

import BLECore

extension ByteReader {
  /// A reader over a copy of `bytes` kept for the rest of the process (tests only: readers
  /// point into bytes they do not own, and a test's reader must stay valid wherever the test
  /// takes it, closures included). The tool itself pins bytes with `ByteReader.reading`.
  public init(testBytes bytes: [UInt8], layer: ProtocolLayer) {
    let copy = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(bytes.count, 1))
    _ = copy.initialize(from: bytes)
    self.init(ByteView.pinned(UnsafeBufferPointer(copy), count: bytes.count), layer: layer)
  }
}
