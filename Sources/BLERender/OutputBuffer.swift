#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import BLECore

/// The one buffered writer all output goes through (a struct passed `inout`, so appends need no
/// run-time exclusivity checks): bytes are appended and written out in
/// large blocks. A closed pipe (`bledissect FILE | head`) sets `isClosed` instead of failing.
public struct OutputBuffer {
  public var bytes: [UInt8] = []
  let fd: Int32?
  let flushThreshold: Int
  public private(set) var isClosed = false
  public private(set) var writeError: String?

  /// Writes to `fd` (1 for standard output); with nil, collects everything in `bytes` (tests).
  public init(fd: Int32?, flushThreshold: Int = 64 * 1024) {
    self.fd = fd
    self.flushThreshold = flushThreshold
    bytes.reserveCapacity(flushThreshold + 4096)
  }

  @inline(__always) public mutating func flushIfFull() {
    if bytes.count >= flushThreshold, fd != nil { flush() }
  }

  public mutating func flush() {
    guard let fd, !bytes.isEmpty else { return }
    if isClosed {
      bytes.removeAll(keepingCapacity: true)
      return
    }
    var written = 0
    bytes.withUnsafeBufferPointer { buffer in
      while written < buffer.count {
        let result = write(fd, buffer.baseAddress! + written, buffer.count - written)
        if result < 0 {
          if errno == EINTR { continue }
          if errno == EPIPE { isClosed = true } else { writeError = String(cString: strerror(errno)); isClosed = true }
          return
        }
        written += result
      }
    }
    bytes.removeAll(keepingCapacity: true)
  }

  public var text: String { String(decoding: bytes, as: UTF8.self) }

  // MARK: Appending

  @inline(__always) public mutating func byte(_ value: UInt8) { bytes.append(value) }

  @inline(__always) public mutating func append(_ text: StaticString) {
    if text.hasPointerRepresentation {
      bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    } else {
      append(text.description)
    }
  }

  @inline(__always) public mutating func append(_ text: String) {
    var copy = text
    copy.withUTF8 { bytes.append(contentsOf: $0) }
  }

  public mutating func spaces(_ count: Int) {
    for _ in 0..<max(count, 0) { bytes.append(0x20) }
  }

  public mutating func decimal(_ value: UInt64) {
    if value < 10 {
      bytes.append(0x30 + UInt8(value))
      return
    }
    var count = 0
    var rest = value
    while rest > 0 { count += 1; rest /= 10 }
    let start = bytes.count
    for _ in 0..<count { bytes.append(0x30) }
    rest = value
    var index = start + count - 1
    while rest > 0 {
      bytes[index] = 0x30 + UInt8(rest % 10)
      rest /= 10
      index -= 1
    }
  }

  public mutating func decimal(_ value: Int64) {
    if value < 0 {
      bytes.append(UInt8(ascii: "-"))
      decimal(UInt64(value.magnitude))
    } else {
      decimal(UInt64(value))
    }
  }

  @inline(__always) public mutating func decimal(_ value: Int) { decimal(Int64(value)) }

  /// Exactly `width` digits, zero-padded (fractions of seconds).
  public mutating func zeroPadded(_ value: UInt64, width: Int) {
    var divisor: UInt64 = 1
    for _ in 1..<width { divisor *= 10 }
    var rest = value
    while divisor > 0 {
      bytes.append(0x30 + UInt8((rest / divisor) % 10))
      rest %= divisor
      divisor /= 10
    }
  }

  public mutating func hexPrefixed(_ value: UInt64, width: Int) {
    bytes.append(UInt8(ascii: "0"))
    bytes.append(UInt8(ascii: "x"))
    var shift = (width - 1) * 4
    while shift >= 0 {
      bytes.append(Hex.lower[Int((value >> UInt64(shift)) & 0xF)])
      shift -= 4
    }
  }

  public mutating func hexBytes(_ data: ArraySlice<UInt8>, separator: UInt8? = nil) {
    var first = true
    for value in data {
      if let separator, !first { bytes.append(separator) }
      bytes.append(Hex.lower[Int(value >> 4)])
      bytes.append(Hex.lower[Int(value & 0x0F)])
      first = false
    }
  }

  public mutating func double(_ value: Double) {
    if value == value.rounded(), abs(value) < 1e15 {
      decimal(Int64(value))
      append(".0")
    } else {
      append(value.description)
    }
  }

  /// `value` with exactly two decimals.
  public mutating func fixed2(_ value: Double) {
    let hundredths = Int64((value * 100).rounded())
    if hundredths < 0 { byte(UInt8(ascii: "-")) }
    let magnitude = hundredths.magnitude
    decimal(magnitude / 100)
    byte(UInt8(ascii: "."))
    zeroPadded(magnitude % 100, width: 2)
  }

  /// A JSON string literal: quotes, backslashes and control characters escaped.
  public mutating func jsonString(_ text: String) {
    bytes.append(UInt8(ascii: "\""))
    var copy = text
    copy.withUTF8 { utf8 in
      for value in utf8 {
        switch value {
        case UInt8(ascii: "\""): bytes.append(UInt8(ascii: "\\")); bytes.append(value)
        case UInt8(ascii: "\\"): bytes.append(UInt8(ascii: "\\")); bytes.append(value)
        case 0x0A: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "n"))
        case 0x0D: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "r"))
        case 0x09: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "t"))
        case 0..<0x20, 0x7F:
          append("\\u00")
          bytes.append(Hex.lower[Int(value >> 4)])
          bytes.append(Hex.lower[Int(value & 0x0F)])
        default: bytes.append(value)
        }
      }
    }
    bytes.append(UInt8(ascii: "\""))
  }

  public mutating func jsonString(_ text: StaticString) {
    if text.hasPointerRepresentation {
      let view = UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount)
      // Names from our tables rarely need escaping; check before taking the slow path.
      if !view.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") || $0 == 0x7F }) {
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: view)
        bytes.append(UInt8(ascii: "\""))
        return
      }
    }
    jsonString(text.description)
  }
}
