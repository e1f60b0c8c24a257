#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

import BLECore

/// A file's identity (`stat` follows symbolic links, so a link to the input is the input).
package struct FileStatus {
  package var device: UInt64
  package var inode: UInt64
  package var mode: UInt32

  package init?(_ path: [UInt8]) {
    var info = stat()
    guard withCPath(path, { stat($0, &info) }) == 0 else { return nil }
    device = UInt64(info.st_dev)
    inode = UInt64(info.st_ino)
    mode = UInt32(info.st_mode)
  }

  package var isRegularFile: Bool { mode & UInt32(S_IFMT) == UInt32(S_IFREG) }
}

extension FileStatus {
  /// Whether two names name one file: the same device and inode when both exist; else (the
  /// followed file not created yet) the same directory, resolved, and the same last name.
  package static func sameFile(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    if let first = Self(a), let second = Self(b) { return first.device == second.device && first.inode == second.inode }
    func resolved(_ path: [UInt8]) -> [UInt8]? {
      let slash = path.lastIndex(of: UInt8(ascii: "/"))
      let directory = slash.map { $0 == 0 ? [UInt8(ascii: "/")] : Array(path[..<$0]) } ?? [UInt8(ascii: ".")]
      let name = slash.map { Array(path[($0 + 1)...]) } ?? path
      guard let real = withCPath(directory, { realpath($0, nil) }) else { return nil }
      defer { free(real) }
      return Array(String(cString: real).utf8) + [UInt8(ascii: "/")] + name
    }
    guard let first = resolved(a), let second = resolved(b) else { return false }
    return first == second
  }
}

/// Calls `body` with `path` as a NUL-terminated C string (file names are bytes, not text).
// Safety: the terminated copy lives for the whole call (`body` must not keep the pointer); C reads it up to its NUL.
package func withCPath<T>(_ path: [UInt8], _ body: (UnsafePointer<CChar>) -> T) -> T {
  (path + [0]).withUnsafeBufferPointer { bytes in bytes.withMemoryRebound(to: CChar.self) { body($0.baseAddress!) } }
}

/// `mkstemp(3)` on `template` (its last six bytes `XXXXXX`): the new file's descriptor and name,
/// or nil (`errno` says why).
package func makeTemporaryFile(_ template: [UInt8]) -> (descriptor: Int32, path: [UInt8])? {
  var name = template + [0]
  // Safety: mkstemp rewrites the X's of the NUL-terminated copy in place, within its length.
  let descriptor = name.withUnsafeMutableBufferPointer { bytes in
    bytes.withMemoryRebound(to: CChar.self) { mkstemp($0.baseAddress!) }
  }
  guard descriptor >= 0 else { return nil }
  name.removeLast()
  return (descriptor, name)
}

/// One `read(2)` (or `pread(2)` at `fileOffset`) of at most `count` bytes into `bytes` from
/// `index` on: what the call returned (-1 with `errno`).
package func readDescriptor(_ descriptor: Int32, into bytes: inout [UInt8], at index: Int = 0, count: Int, fileOffset: Int64? = nil) -> Int {
  precondition(index >= 0 && count >= 0 && index + count <= bytes.count, "read past the array")
  guard count > 0 else { return 0 }
  // Safety: the precondition above keeps the `count` bytes from `index` inside the array.
  return bytes.withUnsafeMutableBytes { buffer in
    let target = buffer.baseAddress! + index
    if let fileOffset { return pread(descriptor, target, count, off_t(fileOffset)) }
    return read(descriptor, target, count)
  }
}

/// The program's arguments (after its name) as the bytes the system gave: file names need not
/// be UTF-8, and `CommandLine.arguments` repairs what is not.
package func argumentBytes() -> [[UInt8]] {
  var arguments: [[UInt8]] = []
  for index in 1..<Int(CommandLine.argc) {
    // Safety: argv holds argc NUL-terminated strings for the life of the process; strlen stops at the NUL.
    guard let word = CommandLine.unsafeArgv[index] else { continue }
    arguments.append(Array(UnsafeBufferPointer(start: word, count: strlen(word)).map { UInt8(bitPattern: $0) }))
  }
  return arguments
}

/// Where convert writes. A regular file (or a new one) is written under a temporary name in
/// its directory and renamed over it at the end, so the name never holds half a capture;
/// anything else (a device, a FIFO) is written in place; `-` is standard output.
package enum OutputFile {
  case standardOutput
  case direct(descriptor: Int32)
  case replacing(descriptor: Int32, temporary: [UInt8], final: [UInt8])

  package struct Failure: Error { package var reason: String }

  package static func create(_ path: [UInt8]) throws(Failure) -> OutputFile {
    guard !path.contains(0) else { throw Failure(reason: "file name holds a NUL byte") }
    var final = path
    var existingMode: UInt32?
    if let existing = FileStatus(path) {
      guard existing.isRegularFile else {
        let descriptor = withCPath(path) { open($0, O_WRONLY | O_TRUNC) }
        guard descriptor >= 0 else { throw Failure(reason: String(cString: strerror(errno))) }
        return .direct(descriptor: descriptor)
      }
      existingMode = existing.mode & 0o7777
      // A symbolic link keeps pointing at the file it named: replace that file, not the link.
      if let resolved = withCPath(path, { realpath($0, nil) }) {
        // Safety: realpath returned a NUL-terminated string of its own, freed only after the copy.
        final = Array(UnsafeBufferPointer(start: resolved, count: strlen(resolved)).map { UInt8(bitPattern: $0) })
        free(resolved)
      }
    }
    let slash = final.lastIndex(of: UInt8(ascii: "/"))
    let directory = slash.map { Array(final[...$0]) } ?? []
    let base = slash.map { Array(final[($0 + 1)...]) } ?? final
    let template = directory + Array(".".utf8) + base + Array(".bledissect-XXXXXX".utf8)
    guard let (descriptor, temporary) = makeTemporaryFile(template) else { throw Failure(reason: String(cString: strerror(errno))) }
    // mkstemp makes the file 0600; give it the mode the replaced file had, or the usual one.
    let mode: mode_t
    if let existingMode {
      mode = mode_t(existingMode)
    } else {
      let mask = umask(0)
      _ = umask(mask)
      mode = 0o644 & ~mask
    }
    _ = fchmod(descriptor, mode)
    return .replacing(descriptor: descriptor, temporary: temporary, final: final)
  }

  package var descriptor: Int32 {
    switch self {
    case .standardOutput: return 1
    case .direct(let descriptor), .replacing(let descriptor, _, _): return descriptor
    }
  }

  /// Closes the output and puts it in place; the reason when that failed.
  package func finish() -> String? {
    switch self {
    case .standardOutput: return nil
    case .direct(let descriptor):
      return close(descriptor) == 0 ? nil : String(cString: strerror(errno))
    case let .replacing(descriptor, temporary, final):
      if fsync(descriptor) != 0 || close(descriptor) != 0 {
        let reason = String(cString: strerror(errno))
        _ = withCPath(temporary) { unlink($0) }
        return reason
      }
      let renamed = withCPath(temporary) { from in withCPath(final) { to in rename(from, to) } }
      if renamed != 0 {
        let reason = String(cString: strerror(errno))
        _ = withCPath(temporary) { unlink($0) }
        return reason
      }
      return nil
    }
  }

  /// Closes the output; a temporary file is removed.
  package func discard() {
    switch self {
    case .standardOutput: return
    case .direct(let descriptor): close(descriptor)
    case let .replacing(descriptor, temporary, _):
      close(descriptor)
      _ = withCPath(temporary) { unlink($0) }
    }
  }
}

/// Folders and whole files with POSIX calls, so that a failure gives the system's reason (the
/// GATT cache's files).
package enum FileSystem {
  package struct Failure: Error, CustomStringConvertible {
    package var path: String
    package var code: Int32
    package init(path: String, code: Int32) {
      self.path = path
      self.code = code
    }
    package var description: String { "\(path): \(String(cString: strerror(code)))" }
  }

  /// Creates `path` and its missing parents (mode 0700), like `mkdir -p`.
  package static func makeFolder(_ path: String) throws(Failure) {
    var prefix = ""
    for part in path.split(separator: "/") {
      prefix += "/" + part
      if mkdir(prefix, 0o700) != 0 && errno != EEXIST { throw Failure(path: prefix, code: errno) }
    }
    var status = stat()
    guard stat(path, &status) == 0 else { throw Failure(path: path, code: errno) }
    guard status.st_mode & S_IFMT == S_IFDIR else { throw Failure(path: path, code: ENOTDIR) }
  }

  /// Writes `bytes` to a new file at `path` (it must not exist), with POSIX calls so that a
  /// failure gives the system's reason.
  package static func writeNew(_ bytes: [UInt8], to path: String) throws(Failure) {
    let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else { throw Failure(path: path, code: errno) }
    if let code = SystemWrite.all(descriptor, bytes) {
      close(descriptor)
      unlink(path)
      throw Failure(path: path, code: code)
    }
    guard close(descriptor) == 0 else {
      let failure = Failure(path: path, code: errno)
      unlink(path)
      throw failure
    }
  }

  package static func modificationTime(_ status: stat) -> Int {
    #if canImport(Darwin)
      return Int(status.st_mtimespec.tv_sec)
    #else
      return Int(status.st_mtim.tv_sec)
    #endif
  }

  /// The names in `directory` (not `.` and `..`), in the order the system lists them; none
  /// when it cannot be read.
  package static func names(in directory: String) -> [String] {
    guard let folder = opendir(directory) else { return [] }
    defer { closedir(folder) }
    var names: [String] = []
    while let entry = readdir(folder) {
      // Safety: d_name is a fixed array inside the entry, valid until the next readdir; read up to its NUL.
      let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
        String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
      }
      if name != "." && name != ".." { names.append(name) }
    }
    return names
  }
}
