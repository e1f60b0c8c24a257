/// Text known only at run time (names in a user's decoder file) made into `StaticString`s, so it
/// can go wherever the decoders' own names go (field keys and labels, header words, units)
/// without a second, slower path for strings.
///
/// The one unsafe trick of the project's name handling, kept here: the bytes are copied into
/// memory that is never freed (as a literal's would be), and a `StaticString` is assembled over
/// them. Its layout (a pointer, a byte count, flags: bit 1 set when ASCII; bit 0 clear for a
/// pointer) is fixed by the standard library (`@frozen`); a test checks the round trip. Bounded:
/// past `maximumBytes` in all, text is refused (callers fall back to a placeholder).
public enum InternedText {
  public static let maximumBytes = 4 << 20

  private struct Layout {
    var start: UnsafeRawPointer
    var count: Int
    var flags: UInt8
  }

  nonisolated(unsafe) private static var used = 0

  /// A `StaticString` with `text`'s bytes, or nil past the budget or for an empty text. Call it
  /// while loading (one thread), not per frame.
  public static func make(_ text: String) -> StaticString? {
    var bytes = Array(text.utf8)
    guard !bytes.isEmpty, used + bytes.count + 1 <= maximumBytes,
      MemoryLayout<StaticString>.size == MemoryLayout<Layout>.size
    else { return nil }
    used += bytes.count + 1
    bytes.append(0)  // as literals have
    let storage = UnsafeMutablePointer<UInt8>.allocate(capacity: bytes.count)
    storage.initialize(from: bytes, count: bytes.count)
    let isASCII = bytes.allSatisfy { $0 < 0x80 }
    let layout = Layout(start: UnsafeRawPointer(storage), count: bytes.count - 1, flags: isASCII ? 0b10 : 0)
    return unsafeBitCast(layout, to: StaticString.self)
  }
}
