#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Connecting to Android's snoop feed.
enum AndroidFeed {
  enum Outcome {
    case connected(Int32)
    case failed(String)
    case stopped
  }

  static let adbHint = "forward the phone's feed with 'adb forward tcp:8872 tcp:8872' and turn on the Bluetooth HCI snoop log"

  /// One attempt (up to 5 s), abandoned when a stop is requested.
  static func connect(host: String, port: UInt16, control: LiveControl) -> Outcome {
    var hints = addrinfo()
    hints.ai_family = AF_UNSPEC
    #if canImport(Glibc)
    hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
    #else
    hints.ai_socktype = SOCK_STREAM
    #endif
    // Safety: getaddrinfo's list is read only before the deferred freeaddrinfo, one entry at a time.
    var found: UnsafeMutablePointer<addrinfo>?
    let status = getaddrinfo(host, String(port), &hints, &found)
    guard status == 0, let first = found else {
      return .failed("cannot resolve host '\(host)': \(String(cString: gai_strerror(status)))")
    }
    defer { freeaddrinfo(found) }
    var lastError: Int32 = ECONNREFUSED
    // Safety: each entry, and the address it points to, belongs to that list (freed at the end).
    var address: UnsafeMutablePointer<addrinfo>? = first
    while let entry = address {
      address = entry.pointee.ai_next
      let socket = socket(entry.pointee.ai_family, entry.pointee.ai_socktype, entry.pointee.ai_protocol)
      guard socket >= 0 else {
        lastError = errno
        continue
      }
      _ = fcntl(socket, F_SETFD, FD_CLOEXEC)
      let flags = fcntl(socket, F_GETFL)
      _ = fcntl(socket, F_SETFL, flags | O_NONBLOCK)
      var error: Int32 = 0
      if connectSocket(socket, entry.pointee.ai_addr, entry.pointee.ai_addrlen) != 0 {
        error = errno
        if error == EINPROGRESS {
          switch control.waitFor(socket, events: Int32(POLLOUT), milliseconds: 5000) {
          case false?:
            close(socket)
            return .stopped
          case nil:
            error = ETIMEDOUT
          case true?:
            var length = socklen_t(MemoryLayout<Int32>.size)
            error = 0
            if getsockopt(socket, SOL_SOCKET, SO_ERROR, &error, &length) != 0 { error = errno }
          }
        }
      }
      if error == 0 {
        _ = fcntl(socket, F_SETFL, flags)
        return .connected(socket)
      }
      close(socket)
      lastError = error
    }
    if lastError == ECONNREFUSED {
      return .failed("connection refused: nothing listens there; \(adbHint)")
    }
    return .failed("cannot connect: \(String(cString: strerror(lastError)))")
  }
}

/// `connect(2)`, named apart from the enum's method.
// Safety: passes getaddrinfo's address and its length to the system as they are.
@inline(__always)
func connectSocket(_ socket: Int32, _ address: UnsafeMutablePointer<sockaddr>!, _ length: socklen_t) -> Int32 {
  connect(socket, address, length)
}
