#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// The one write loop every writer uses (output buffer, recorder, convert, the cache, batch
/// spill files, standard-error notices): `write(2)` until every byte is out, again after a
/// signal interrupted it.
public enum SystemWrite {
  /// Writes `count` bytes from `bytes`; nil when all were written, else the `errno` of the
  /// failing call (`EIO` when the system wrote nothing without saying why).
  // Safety: the caller lends `count` readable bytes at `bytes` for the call.
  public static func all(_ descriptor: Int32, _ bytes: UnsafeRawPointer, count: Int) -> Int32? {
    var written = 0
    while written < count {
      let result = write(descriptor, bytes + written, count - written)
      if result < 0 {
        if errno == EINTR { continue }
        return errno
      }
      if result == 0 { return EIO }
      written += result
    }
    return nil
  }

  /// `all` over an array's bytes.
  public static func all(_ descriptor: Int32, _ bytes: [UInt8]) -> Int32? {
    ByteView.pinning(bytes) { all(descriptor, $0) }
  }

  /// `all` over lent bytes.
  public static func all(_ descriptor: Int32, _ bytes: ByteView) -> Int32? {
    guard !bytes.isEmpty else { return nil }
    // Safety: the view's bytes are pinned for this call; write(2) reads `count` of them from its start.
    return all(descriptor, UnsafeRawPointer(bytes.base + bytes.startIndex), count: bytes.count)
  }

  /// The system's words for `code` ("Broken pipe").
  public static func reason(_ code: Int32) -> String { String(cString: strerror(code)) }
}
