#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Text known only at run time (names in a user's decoder file) made into `StaticString`s, so it
/// can go wherever the decoders' own names go (field keys and labels, header words, units)
/// without a second, slower path for strings.
///
/// The one unsafe trick of the project's name handling, kept here: the bytes are copied into
/// memory that is never freed (as a literal's would be), and a `StaticString` is assembled over
/// them. Its layout (a pointer, a byte count, flags: bit 1 set when ASCII; bit 0 clear for a
/// pointer) is fixed by the standard library (`@frozen`); a test checks the round trip. Bounded:
/// past `maximumBytes` in all, text is refused (callers fall back to a placeholder). The bytes
/// are packed into chunks (one allocation per 64 KiB, not one per name), under a lock (tests
/// load decoder files on several threads at once).
public enum InternedText {
  public static let maximumBytes = 4 << 20
  static let chunkBytes = 64 << 10

  private struct Layout {
    var start: UnsafeRawPointer
    var count: Int
    var flags: UInt8
  }

  /// Everything made so far, behind one lock.
  private final class Store: @unchecked Sendable {
    let mutex: UnsafeMutablePointer<pthread_mutex_t>
    var used = 0
    /// Every allocation (chunks, and texts too long to share one), freed only by `releaseAll`.
    var blocks: [UnsafeMutablePointer<UInt8>] = []
    var next: UnsafeMutablePointer<UInt8>?
    var left = 0

    init() {
      mutex = .allocate(capacity: 1)
      pthread_mutex_init(mutex, nil)
    }

    func locked<T>(_ body: () -> T) -> T {
      pthread_mutex_lock(mutex)
      defer { pthread_mutex_unlock(mutex) }
      return body()
    }

    func allocate(_ count: Int) -> UnsafeMutablePointer<UInt8> {
      if count > InternedText.chunkBytes / 4 {
        let block = UnsafeMutablePointer<UInt8>.allocate(capacity: count)
        blocks.append(block)
        return block
      }
      if left < count {
        let chunk = UnsafeMutablePointer<UInt8>.allocate(capacity: InternedText.chunkBytes)
        blocks.append(chunk)
        next = chunk
        left = InternedText.chunkBytes
      }
      let start = next!
      next = start + count
      left -= count
      return start
    }
  }

  private static let store = Store()

  /// A `StaticString` with `text`'s bytes, or nil past the budget or for an empty text. Call it
  /// while loading, not per frame.
  public static func make(_ text: String) -> StaticString? {
    var bytes = Array(text.utf8)
    guard !bytes.isEmpty, MemoryLayout<StaticString>.size == MemoryLayout<Layout>.size else { return nil }
    bytes.append(0)  // as literals have
    let storage: UnsafeMutablePointer<UInt8>? = store.locked {
      guard store.used + bytes.count <= maximumBytes else { return nil }
      store.used += bytes.count
      return store.allocate(bytes.count)
    }
    guard let storage else { return nil }
    storage.initialize(from: bytes, count: bytes.count)
    let isASCII = bytes.allSatisfy { $0 < 0x80 }
    let layout = Layout(start: UnsafeRawPointer(storage), count: bytes.count - 1, flags: isASCII ? 0b10 : 0)
    return unsafeBitCast(layout, to: StaticString.self)
  }

  /// Frees all text made so far and restores the budget. Only for a process that reads decoder
  /// files again and again (the `decoders` fuzz target, after each input): no `StaticString`
  /// made here may be used afterwards.
  package static func releaseAll() {
    var blocks = store.locked { () -> [UnsafeMutablePointer<UInt8>] in
      defer {
        store.blocks = []
        store.used = 0
        store.next = nil
        store.left = 0
      }
      return store.blocks
    }
    for block in blocks { block.deallocate() }
    blocks.removeAll()
  }
}
