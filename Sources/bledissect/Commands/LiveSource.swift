#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import BLECapture

/// Which source `live` reads, from its arguments, and what to say when it cannot be opened.
extension LiveCommand {
  static func label(_ origin: LiveReader.Origin) -> String {
    switch origin {
    case .file(_, let name), .stream(_, let name, _): return name
    case .android(let host, let port): return "\(host):\(port)"
    }
  }

  /// An opening error with what to do about it.
  static func describe(_ error: CaptureError, name: String) -> String {
    let message = error.message
    if case .cannotOpen(let why) = error {
      if why == String(cString: strerror(ENOENT)) {
        return "\(name): \(why), nor its directory (check the path: live waits for a file to be created, in a directory that exists)"
      }
      if why == String(cString: strerror(EACCES)) {
        return "\(name): \(why) (run as a user allowed to read it, e.g. with sudo, or copy it somewhere readable)"
      }
    }
    return "\(name): \(message)"
  }

  /// Which source the arguments name; a usage error or a missing file is printed.
  static func chooseOrigin(_ arguments: ParsedArguments, _ context: CLIContext) -> Result<LiveReader.Origin, ExitCode> {
    func usage(_ message: String) -> Result<LiveReader.Origin, ExitCode> {
      .failure(ExitCode(status: BLEDissectCLI.usageError(message, command: configuration.name, context)))
    }
    let followed = arguments.value("follow").map { Argument($0) }
    let positional = arguments.positionals.first
    if arguments.has("android") {
      if followed != nil { return usage("--android and --follow are two sources: give one") }
      guard let (host, port) = parseAddress(positional?.text) else {
        return usage("--android needs [host:]port (127.0.0.1:8872), not '\(positional?.display ?? "")'")
      }
      return .success(.android(host: host, port: port))
    }
    if followed != nil && positional != nil { return usage("--follow takes one file: unexpected argument '\(positional!.display)'") }
    guard let path = followed ?? positional else { return usage("live needs a source") }
    if path.bytes == [UInt8(ascii: "-")] { return .success(.stream(descriptor: 0, name: "-", owns: false)) }
    guard let status = FileStatus(path.bytes) else {
      let number = errno
      // Not created yet: followed once it is (LiveReader waits, when its directory exists).
      if number == ENOENT { return .success(.file(path: path.bytes, name: path.display)) }
      context.error(describe(.cannotOpen(String(cString: strerror(number))), name: path.display))
      return .failure(ExitCode(status: ExitStatus.unreadable))
    }
    if status.isRegularFile { return .success(.file(path: path.bytes, name: path.display)) }
    if status.mode & UInt32(S_IFMT) == UInt32(S_IFDIR) {
      context.error("\(path.display): is a directory")
      return .failure(ExitCode(status: ExitStatus.unreadable))
    }
    // A FIFO or a device: opened without waiting for a writer (a stop must be able to end the
    // wait), then read as a stream.
    let descriptor = withCPath(path.bytes) { open($0, O_RDONLY | O_NONBLOCK | O_CLOEXEC) }
    guard descriptor >= 0 else {
      context.error(describe(.cannotOpen(String(cString: strerror(errno))), name: path.display))
      return .failure(ExitCode(status: ExitStatus.unreadable))
    }
    _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
    return .success(.stream(descriptor: descriptor, name: path.display, owns: true))
  }

  /// `[host:]port`, `[v6-address]:port`; nil text gives the default.
  static func parseAddress(_ text: String?) -> (String, UInt16)? {
    guard let text, !text.isEmpty else { return ("127.0.0.1", defaultAndroidPort) }
    var host = "127.0.0.1"
    var portText = Substring(text)
    if let colon = text.lastIndex(of: ":") {
      host = String(text[..<colon])
      portText = text[text.index(after: colon)...]
      if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
      if host.isEmpty { return nil }
    }
    guard let port = UInt16(portText), port > 0 else { return nil }
    return (host, port)
  }
}
