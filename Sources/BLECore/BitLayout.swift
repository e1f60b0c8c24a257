/// What the bits of a flags value mean, for text output with `-v` (each bit field on its own
/// line, as Wireshark shows them): `.... ..1. = Sensor contact status: detected`.
///
/// A layout is a literal, so a field holding it stays plain data (no reference to count):
/// entries separated by `;`, each `MASK:Label` or `MASK:Label=word0|word1|…`, MASK in hex.
/// A field's words are indexed by its value (the masked bits shifted down); a one-bit field
/// with no words reads `no`/`yes`; a value past the words, or a wider field with none, reads
/// as its number.
///
///     "01:Heart rate value format=UINT8|UINT16;06:Sensor contact=not supported|not supported|not detected|detected"
public enum BitLayout {
  /// One bit field of `value` in `layout`: its bits as Wireshark draws them (`width` hex
  /// digits, `.` for the bits outside the field), its label and its word.
  public struct Line: Sendable, Equatable {
    public var bits: String
    public var label: String
    public var word: String
  }

  /// The lines of `value` (shown as `width` hex digits) under `layout`; an entry the layout
  /// spells wrongly is left out.
  public static func lines(_ value: UInt64, width: UInt8, layout: Name) -> [Line] {
    let digits = Int(min(max(width, 1), 16))
    let bitCount = digits * 4
    var lines: [Line] = []
    for entry in layout.description.split(separator: ";", omittingEmptySubsequences: true) {
      guard let colon = entry.firstIndex(of: ":"), let mask = UInt64(entry[entry.startIndex..<colon], radix: 16), mask != 0 else { continue }
      let rest = entry[entry.index(after: colon)...]
      let label: Substring
      var words: [Substring] = []
      if let equals = rest.firstIndex(of: "=") {
        label = rest[rest.startIndex..<equals]
        words = rest[rest.index(after: equals)...].split(separator: "|", omittingEmptySubsequences: false)
      } else {
        label = rest
      }
      let field = (value & mask) >> UInt64(mask.trailingZeroBitCount)
      let word: String
      if field < UInt64(words.count) {
        word = String(words[Int(field)])
      } else if words.isEmpty && mask.nonzeroBitCount == 1 {
        word = field == 0 ? "no" : "yes"
      } else {
        word = String(field)
      }
      var bits = ""
      bits.reserveCapacity(bitCount + digits)
      for position in stride(from: bitCount - 1, through: 0, by: -1) {
        let bit: UInt64 = 1 << UInt64(position)
        if mask & bit == 0 {
          bits.append(".")
        } else {
          bits.append(value & bit != 0 ? "1" : "0")
        }
        if position % 4 == 0 && position > 0 { bits.append(" ") }
      }
      lines.append(Line(bits: bits, label: String(label), word: word))
    }
    return lines
  }
}
