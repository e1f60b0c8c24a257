import BLECore

/// Android bugreport text (or `dumpsys bluetooth_manager` output): the btsnooz summary between
/// `--- BEGIN:BTSNOOP_LOG_SUMMARY (<n> bytes in) ---` and `--- END:BTSNOOP_LOG_SUMMARY ---`
/// (capture-formats.md §5.3). The text is scanned as a stream and the summary's base64 decoded as
/// it comes, keeping only the decoded payload (a 9-byte preamble and a zlib stream of packed
/// records, bounded); its records are inflated and converted to btsnoop as they are read
/// (`BtsnoozConverter`), and the btsnoop reader reads them.
package enum Bugreport {
  static let beginMarker = Array("--- BEGIN:BTSNOOP_LOG_SUMMARY".utf8)
  /// Largest base64 text and largest inflated body accepted by default
  /// (`InflationLimits.summary`): Android keeps at most about 1 MiB of records for the summary.
  package static let maximumSummaryBytes = Int(InflationLimits.standard.summary)

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
    let limit = input.inflationLimits.summary
    let payload = try summaryPayload(input, firstBytes: firstBytes, limit: limit)
    let converter = try BtsnoozConverter(payload: payload, limit: limit)
    let source = InputSource(producer: converter, name: input.name, limits: input.inflationLimits)
    let reader = try BTSnoopReader(source, damage: damage)
    let format = CaptureFormat(name: "btsnooz", detail: "version \(converter.version), Android \(container) BTSNOOP_LOG_SUMMARY")
    return ContainedReader(reader, format: format)
  }

  /// The decoded base64 of the first summary section: its lines up to the END line (or the end of
  /// the text), at most `limit` characters (whitespace included).
  static func summaryPayload(_ input: InputSource, firstBytes: [UInt8], limit: Int64) throws(CaptureError) -> [UInt8] {
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
    // Base64 lines up to the END line (or the end of the text), decoded as they come.
    var decoder = Base64Decoder()
    while true {
      let have = try input.fill(chunk)
      if have == 0 { return try decoder.finish() }
      for index in 0..<have {
        let byte = input.peek(index)
        if byte == UInt8(ascii: "-") { return try decoder.finish() }
        try decoder.feed(byte)
        guard decoder.characters <= limit else {
          throw .corrupt("BTSNOOP_LOG_SUMMARY is longer than \(limit) bytes; refused")
        }
      }
      input.consume(have)
    }
  }

  /// Decodes base64, ignoring whitespace; anything else outside the alphabet is damage.
  static func decodeBase64(_ text: [UInt8]) throws(CaptureError) -> [UInt8] {
    var decoder = Base64Decoder()
    for byte in text { try decoder.feed(byte) }
    return try decoder.finish()
  }

  /// base64 decoded a character at a time, whitespace ignored; errors name the offset in the text.
  struct Base64Decoder {
    private(set) var output: [UInt8] = []
    /// Characters fed so far (the offset of the next one in the section).
    private(set) var characters: Int64 = 0
    private var accumulator: UInt32 = 0
    private var bits = 0
    private var padding = false

    mutating func feed(_ byte: UInt8) throws(CaptureError) {
      let offset = characters
      characters &+= 1
      let value: UInt32
      switch byte {
      case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = UInt32(byte - UInt8(ascii: "A"))
      case UInt8(ascii: "a")...UInt8(ascii: "z"): value = UInt32(byte - UInt8(ascii: "a")) + 26
      case UInt8(ascii: "0")...UInt8(ascii: "9"): value = UInt32(byte - UInt8(ascii: "0")) + 52
      case UInt8(ascii: "+"): value = 62
      case UInt8(ascii: "/"): value = 63
      case UInt8(ascii: "="):
        padding = true
        return
      case 0x20, 0x09, 0x0A, 0x0D: return
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

    func finish() throws(CaptureError) -> [UInt8] {
      guard bits < 6 else { throw .corrupt("BTSNOOP_LOG_SUMMARY is not base64 (a lone final character)") }
      return output
    }
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
}

extension CaptureFormatEntry {
  /// A bugreport's text (or dumpsys output), told by its first bytes being text: asked last.
  static let bugreportText = CaptureFormatEntry(name: "bugreport text") { input, opening throws(CaptureError) in
    guard Bugreport.looksLikeText(input) else { return nil }
    // A bugreport's summary is read to the end of its text, which a followed file never
    // reaches: that text is not followed.
    if input.live is FileFollower {
      throw .corrupt("text, not a capture (starts with \(input.peekBytes(4).map { Hex.string([$0]) }.joined(separator: " ")) …): live --follow reads btsnoop and PacketLogger files")
    }
    return try Bugreport.open(text: input, container: opening.container ?? "bugreport", damage: opening.damage)
  }
}
