import BLECore

/// Android bugreport text (or `dumpsys bluetooth_manager` output): the btsnooz summary between
/// `--- BEGIN:BTSNOOP_LOG_SUMMARY (<n> bytes in) ---` and `--- END:BTSNOOP_LOG_SUMMARY ---`
/// (capture-formats.md §5.3). The text is scanned as a stream; the summary (base64 of a 9-byte
/// preamble and a zlib stream of packed records) is decoded in memory, bounded, into a btsnoop
/// file that the btsnoop reader reads.
public enum Bugreport {
  static let beginMarker = Array("--- BEGIN:BTSNOOP_LOG_SUMMARY".utf8)
  /// Largest base64 text and largest inflated body accepted.
  public static let maximumSummaryBytes = 64 * 1024 * 1024

  /// Whether the first bytes look like text (a bugreport starts with `====` lines; dumpsys with
  /// words): printable ASCII, tabs and line ends.
  static func looksLikeText(_ input: InputSource) -> Bool {
    let count = min(input.available, 16)
    guard count >= 4 else { return false }
    for index in 0..<count {
      let byte = input.peek(index)
      guard (0x20...0x7E).contains(byte) || byte == 0x09 || byte == 0x0A || byte == 0x0D else { return false }
    }
    return true
  }

  /// Finds the summary in the text `input` and opens its records.
  static func open(text input: InputSource, container: String, damage: DamagePolicy) throws(CaptureError) -> any CaptureReader {
    let firstBytes = input.peekBytes(8)
    let base64 = try summaryText(input, container: container, firstBytes: firstBytes)
    let payload = try decodeBase64(base64)
    let (btsnoop, version) = try btsnoop(fromBtsnooz: payload)
    let memory = btsnoop.withUnsafeBufferPointer { InputSource(bytes: $0, name: input.name) }
    let reader = try BTSnoopReader(memory, damage: damage)
    let format = CaptureFormat(name: "btsnooz", detail: "version \(version), Android \(container) BTSNOOP_LOG_SUMMARY")
    return ContainedReader(reader, format: format)
  }

  /// The base64 characters of the first summary section (whitespace included), bounded.
  static func summaryText(_ input: InputSource, container: String, firstBytes: [UInt8]) throws(CaptureError) -> [UInt8] {
    let chunk = 64 * 1024
    let marker = beginMarker
    // Find the marker; keep marker.count - 1 bytes between chunks so it can straddle them.
    search: while true {
      let have = try input.fill(chunk)
      if have >= marker.count {
        var index = 0
        while index + marker.count <= have {
          if input.peek(index) == marker[0] {
            var matches = true
            for offset in 1..<marker.count where input.peek(index + offset) != marker[offset] {
              matches = false
              break
            }
            if matches {
              input.consume(index + marker.count)
              break search
            }
          }
          index += 1
        }
      }
      if have < chunk {
        // Text, but no summary in it: as for any other file that is no capture.
        throw .notACapture(firstBytes: firstBytes)
      }
      input.consume(have - (marker.count - 1))
    }
    // The rest of the BEGIN line.
    while true {
      guard try input.fill(1) > 0 else { throw .corrupt("the BTSNOOP_LOG_SUMMARY section ends at its first line") }
      let byte = input.peek(0)
      input.consume(1)
      if byte == 0x0A { break }
    }
    // Base64 lines up to the END line (or the end of the text).
    var text: [UInt8] = []
    while true {
      let have = try input.fill(chunk)
      if have == 0 { return text }
      for index in 0..<have {
        let byte = input.peek(index)
        if byte == UInt8(ascii: "-") { return text }
        text.append(byte)
      }
      guard text.count <= maximumSummaryBytes else {
        throw .corrupt("BTSNOOP_LOG_SUMMARY is longer than \(maximumSummaryBytes) bytes; refused")
      }
      input.consume(have)
    }
  }

  /// Decodes base64, ignoring whitespace; anything else outside the alphabet is damage.
  static func decodeBase64(_ text: [UInt8]) throws(CaptureError) -> [UInt8] {
    var output: [UInt8] = []
    output.reserveCapacity(text.count / 4 * 3)
    var accumulator: UInt32 = 0
    var bits = 0
    var padding = false
    for (offset, byte) in text.enumerated() {
      let value: UInt32
      switch byte {
      case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = UInt32(byte - UInt8(ascii: "A"))
      case UInt8(ascii: "a")...UInt8(ascii: "z"): value = UInt32(byte - UInt8(ascii: "a")) + 26
      case UInt8(ascii: "0")...UInt8(ascii: "9"): value = UInt32(byte - UInt8(ascii: "0")) + 52
      case UInt8(ascii: "+"): value = 62
      case UInt8(ascii: "/"): value = 63
      case UInt8(ascii: "="):
        padding = true
        continue
      case 0x20, 0x09, 0x0A, 0x0D: continue
      default:
        throw .corrupt("BTSNOOP_LOG_SUMMARY is not base64 (byte 0x\(Hex.string([byte])) at offset \(offset) of the section)")
      }
      guard !padding else {
        throw .corrupt("BTSNOOP_LOG_SUMMARY is not base64 (text after the '=' padding)")
      }
      accumulator = accumulator << 6 | value
      bits += 6
      if bits >= 8 {
        bits -= 8
        output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
        accumulator &= (1 << UInt32(bits)) - 1
      }
    }
    guard bits < 6 else { throw .corrupt("BTSNOOP_LOG_SUMMARY is not base64 (a lone final character)") }
    return output
  }

  /// btsnooz record types (capture-formats.md §5.3) → H4 indicator.
  static func h4Indicator(btsnoozType type: UInt8) -> UInt8 {
    switch type {
    case 0x10: return 4
    case 0x11, 0x21: return 2
    case 0x12, 0x22: return 3
    case 0x17, 0x2D: return 5
    case 0x20: return 1
    default: return type  // read as an `other` record keeping every byte
    }
  }

  /// Converts a btsnooz payload (preamble, zlib body) into a btsnoop file (datalink 1002).
  /// Timestamps: `last_timestamp` (µs since 1970) is the last record's; each record's delta is
  /// the gap to the record before it. A record cut short by the end of the body is written cut
  /// short, so the btsnoop reader reports the truncation.
  public static func btsnoop(fromBtsnooz payload: [UInt8]) throws(CaptureError) -> (bytes: [UInt8], version: Int) {
    guard payload.count >= 9 else {
      throw .corrupt("btsnooz preamble is \(payload.count) bytes, needs 9 (version, last timestamp)")
    }
    let version = Int(payload[0])
    guard version == 1 || version == 2 else { throw .unsupportedVersion(format: "btsnooz", version: UInt32(payload[0])) }
    var lastTimestamp: UInt64 = 0
    for index in (1...8).reversed() { lastTimestamp = lastTimestamp << 8 | UInt64(payload[index]) }
    let body = try Inflater.inflateAll(payload[9...], wrapper: .zlib, limit: maximumSummaryBytes)
    let headerSize = version == 1 ? 7 : 9
    func u16(_ at: Int) -> Int { Int(body[at]) | Int(body[at + 1]) << 8 }
    func u32(_ at: Int) -> UInt64 { UInt64(u16(at)) | UInt64(u16(at + 2)) << 16 }
    // First pass: the sum of the deltas, so the first record's time is known.
    var total: UInt64 = 0
    var offset = 0
    while offset + headerSize <= body.count {
      let length = u16(offset)
      total = total.saturatingAdd(u32(offset + (version == 1 ? 2 : 4)))
      offset += headerSize - 1 + max(length, 1)
    }
    var output = BTSnoopFormat.magic + [0, 0, 0, 1, 0, 0, 0x03, 0xEA]
    output.reserveCapacity(output.count + body.count + body.count / 2)
    func append32(_ value: UInt32) { for shift in stride(from: 24, through: 0, by: -8) { output.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) } }
    // Saturating: a hostile preamble or deltas give clamped times, never wrapped ones.
    var time = Int64(clamping: lastTimestamp).saturatingSubtract(Int64(clamping: total))
    offset = 0
    while offset < body.count {
      guard offset + headerSize <= body.count else {
        // A header cut short: a btsnoop header cut short says the same.
        output.append(contentsOf: body[offset...])
        break
      }
      let length = max(u16(offset), 1)
      let original = version == 2 ? max(u16(offset + 2), length) : length
      time = time.saturatingAdd(Int64(u32(offset + (version == 1 ? 2 : 4))))
      let type = body[offset + headerSize - 1]
      let flags: UInt32 = (type >> 4 == 1 ? 1 : 0) | (type == 0x20 || type == 0x10 ? 2 : 0)
      append32(UInt32(original))
      append32(UInt32(length))
      append32(flags)
      append32(0)
      let stamp = UInt64(bitPattern: time.saturatingAdd(BTSnoopFormat.unixEpochOffset))
      append32(UInt32(truncatingIfNeeded: stamp >> 32))
      append32(UInt32(truncatingIfNeeded: stamp))
      output.append(h4Indicator(btsnoozType: type))
      let dataStart = offset + headerSize
      let dataEnd = min(dataStart + length - 1, body.count)
      output.append(contentsOf: body[dataStart..<dataEnd])
      offset = dataStart + length - 1
    }
    return (output, version)
  }
}
