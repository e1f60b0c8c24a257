#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import BLECore

/// The least of the zip format an Android bugreport needs: the end-of-central-directory record,
/// the central directory, local file headers, and entries stored (method 0) or deflated
/// (method 8, inflated as a stream). Encrypted and zip64 entries are refused. Only regular files:
/// the directory is at the end of the archive.
package enum ZipArchive {
  package struct Entry: Sendable, Equatable {
    package var name: String
    package var method: UInt16
    package var flags: UInt16
    package var compressedSize: UInt32
    package var uncompressedSize: UInt32
    package var localHeaderOffset: UInt32
    package var crc: UInt32 = 0

    /// The name as messages show it, on one line (the one escaper's line style). Names come
    /// from the archive: any bytes.
    package var shownName: String { Escaping.escaped(name, .line) }
  }

  /// Largest central directory read (a bugreport lists a few thousand entries).
  static let maximumDirectorySize = 16 * 1024 * 1024

  /// Opens the capture an Android bugreport zip holds: the full snoop log when the archive has
  /// one as an entry (`FS/data/misc/bluetooth/logs/btsnoop_hci.log`, see `snoopLogs` for the
  /// order when there are several), else the btsnooz summary in the main bugreport text.
  static func openBugreport(_ input: InputSource, damage: DamagePolicy) throws(CaptureError) -> any CaptureReader {
    let entries = try directory(input)
    let logs = snoopLogs(entries)
    if let chosen = logs.first {
      let source = try open(input, chosen)
      let reader = try CaptureFile.open(source, damage: damage, container: "zip entry \(chosen.shownName)")
      var detail = "\(reader.format.detail), \(chosen.shownName) in the zip archive"
      var notice: String?
      if logs.count > 1 {
        let others = logs.dropFirst().prefix(4).map(\.shownName).joined(separator: ", ")
        detail += " (not read: \(others)\(logs.count > 5 ? ", \(logs.count - 5) more" : ""))"
        notice = "read \(chosen.shownName) from the zip archive; it also holds \(logs.count - 1) other snoop log\(logs.count == 2 ? "" : "s") (\(others)\(logs.count > 5 ? ", …" : "")), not read"
      }
      return ContainedReader(reader, format: CaptureFormat(name: reader.format.name, detail: detail, notice: notice))
    }
    guard let main = try mainText(input, entries) else {
      throw .corrupt("a zip archive without a snoop log (btsnoop_hci.log) or a bugreport text file (bugreport-*.txt or one named by main_entry.txt): not a capture")
    }
    let text = try open(input, main)
    do {
      return try Bugreport.open(text: text, container: "bugreport (\(main.shownName) in the zip archive)", damage: damage)
    } catch .notACapture {
      throw .corrupt("a zip archive without a snoop log (btsnoop_hci.log), whose bugreport text \(main.shownName) holds no BTSNOOP_LOG_SUMMARY either: no capture in it")
    }
  }

  /// The snoop logs among `entries`, best first: entries named (last path component)
  /// `btsnoop_hci.log` before its filtered variant, before either rotated (`.last`), before
  /// any other `btsnoop_hci.log…` variant (OEM suffixes); the gd stack's in-memory buffer
  /// (`btsnooz_hci.log`, `.last`: truncated records) comes after all of them. Ties keep the
  /// archive's order. Directories and empty entries are left out.
  static func snoopLogs(_ entries: [Entry]) -> [Entry] {
    func rank(_ entry: Entry) -> Int? {
      guard !entry.name.hasSuffix("/"), entry.uncompressedSize > 0 else { return nil }
      let base = entry.name.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? entry.name
      switch base {
      case "btsnoop_hci.log": return 0
      case "btsnoop_hci.log.filtered": return 1
      case "btsnoop_hci.log.last": return 2
      case "btsnoop_hci.log.filtered.last": return 3
      case "btsnooz_hci.log": return 5
      case "btsnooz_hci.log.last": return 6
      default: return base.hasPrefix("btsnoop_hci.log") ? 4 : nil
      }
    }
    return entries.enumerated().compactMap { index, entry in rank(entry).map { (rank: $0, index: index, entry: entry) } }
      .sorted { ($0.rank, $0.index) < ($1.rank, $1.index) }
      .map(\.entry)
  }

  /// The main text file: the one `main_entry.txt` names, or the top-level `bugreport*.txt`.
  static func mainText(_ input: InputSource, _ entries: [Entry]) throws(CaptureError) -> Entry? {
    if let pointer = entries.first(where: { $0.name == "main_entry.txt" }), pointer.uncompressedSize < 4096 {
      let source = try open(input, pointer)
      let have = try source.fill(4096)
      let named = String(decoding: source.peekBytes(have), as: UTF8.self).trimmingWhitespace
      if let entry = entries.first(where: { $0.name == named }) { return entry }
    }
    return entries.first { !$0.name.contains("/") && $0.name.hasPrefix("bugreport") && $0.name.hasSuffix(".txt") }
  }

  /// The archive's entries, from its central directory.
  package static func directory(_ input: InputSource) throws(CaptureError) -> [Entry] {
    guard input.isRegularFile, input.inflater == nil, input.region == nil, input.position == 0 else {
      throw .corrupt("a zip archive can be read from a file only (its directory is at its end), not from a pipe or inside another container")
    }
    let size = try archiveSize(input)
    let tailSize = Int(min(size, 22 + 65_535))
    let tail = try readAt(input, offset: size - Int64(tailSize), count: tailSize)
    var at = tailSize - 22
    while at >= 0, !(tail[at] == 0x50 && tail[at + 1] == 0x4B && tail[at + 2] == 0x05 && tail[at + 3] == 0x06) { at -= 1 }
    guard at >= 0 else { throw .corrupt("zip archive without an end-of-central-directory record (cut short?)") }
    let count = u16(tail, at + 10)
    let directorySize = u32(tail, at + 12)
    let directoryOffset = u32(tail, at + 16)
    if count == 0xFFFF || directorySize == 0xFFFF_FFFF || directoryOffset == 0xFFFF_FFFF {
      throw .corrupt("zip64 archives are not read (this one is over 4 GiB or 65535 entries)")
    }
    guard Int64(directoryOffset) + Int64(directorySize) <= size, Int(directorySize) <= maximumDirectorySize else {
      throw .corrupt("zip central directory (\(directorySize) bytes at \(directoryOffset)) lies outside the \(size)-byte archive")
    }
    let bytes = try readAt(input, offset: Int64(directoryOffset), count: Int(directorySize))
    var entries: [Entry] = []
    var offset = 0
    while offset + 46 <= bytes.count, entries.count < Int(count) {
      guard u32(bytes, offset) == 0x0201_4B50 else { throw .corrupt("damaged zip central directory at entry \(entries.count + 1)") }
      let nameLength = Int(u16(bytes, offset + 28))
      let skip = nameLength + Int(u16(bytes, offset + 30)) + Int(u16(bytes, offset + 32))
      guard offset + 46 + skip <= bytes.count else { throw .corrupt("damaged zip central directory at entry \(entries.count + 1)") }
      entries.append(
        Entry(
          name: String(decoding: bytes[(offset + 46)..<(offset + 46 + nameLength)], as: UTF8.self),
          method: u16(bytes, offset + 10), flags: u16(bytes, offset + 8), compressedSize: u32(bytes, offset + 20),
          uncompressedSize: u32(bytes, offset + 24), localHeaderOffset: u32(bytes, offset + 42), crc: u32(bytes, offset + 16)))
      offset += 46 + skip
    }
    return entries
  }

  /// A source of the entry's bytes, inflated as they are read.
  static func open(_ input: InputSource, _ entry: Entry) throws(CaptureError) -> InputSource {
    if entry.flags & 1 != 0 { throw .corrupt("zip entry \(entry.shownName) is encrypted; bledissect does not decrypt") }
    if entry.compressedSize == 0xFFFF_FFFF || entry.uncompressedSize == 0xFFFF_FFFF || entry.localHeaderOffset == 0xFFFF_FFFF {
      throw .corrupt("zip entry \(entry.shownName) is a zip64 entry; not read")
    }
    guard entry.method == 0 || entry.method == 8 else {
      throw .corrupt("zip entry \(entry.shownName) uses compression method \(entry.method); bledissect reads stored (0) and deflated (8) entries")
    }
    if entry.method == 0 && entry.compressedSize != entry.uncompressedSize {
      throw .corrupt("zip entry \(entry.shownName) is stored but declares \(entry.compressedSize) bytes in the archive and \(entry.uncompressedSize) uncompressed")
    }
    let size = try archiveSize(input)
    let local = Int64(entry.localHeaderOffset)
    guard local + 30 <= size else { throw .corrupt("zip entry \(entry.shownName): its header lies outside the archive") }
    let header = try readAt(input, offset: local, count: 30)
    guard u32(header, 0) == 0x0403_4B50 else { throw .corrupt("zip entry \(entry.shownName): no local file header at \(local)") }
    let dataOffset = local + 30 + Int64(u16(header, 26)) + Int64(u16(header, 28))
    guard dataOffset + Int64(entry.compressedSize) <= size else {
      throw .corrupt("zip entry \(entry.shownName) declares \(entry.compressedSize) compressed bytes, more than the archive holds")
    }
    if input.fd < 0 {
      // Bytes in memory (fuzz targets): the entry's compressed bytes, copied.
      let bytes = try readAt(input, offset: dataOffset, count: Int(entry.compressedSize))
      let source = InputSource(bytes: bytes, name: "\(input.name):\(entry.shownName)")
      source.declared = declaredContent(entry)
      source.inflationLimits = input.inflationLimits
      if entry.method == 8 {
        try source.startInflating(.raw, subject: capSubject(entry), advice: capAdvice)
      } else {
        // Stored: all there already; counted now, checked where a file's read would end.
        source.declared?.seen = Int64(bytes.count)
        source.declared?.running = Deflate.crc32(bytes)
        source.declaredCountedInMemory = true
      }
      return source
    }
    let source = try InputSource(
      region: input, offset: dataOffset, length: Int64(entry.compressedSize), wrapper: entry.method == 8 ? .raw : nil,
      name: "\(input.name):\(entry.shownName)", subject: capSubject(entry), advice: capAdvice)
    source.declared = declaredContent(entry)
    return source
  }

  /// What a deflated entry's cap message calls it, and how to read past the cap.
  static func capSubject(_ entry: Entry) -> String { "zip entry \(entry.shownName)" }
  static let capAdvice = "to read it all, extract it first (unzip)"

  /// The entry's uncompressed size and CRC-32, which its reader checks (zip writers put the
  /// true ones in the central directory, even when the local header defers them to a data
  /// descriptor).
  static func declaredContent(_ entry: Entry) -> InputSource.DeclaredContent {
    InputSource.DeclaredContent(entry: entry.shownName, size: Int64(entry.uncompressedSize), crc: entry.crc)
  }

  /// The archive's length: the file's, or the bytes given in memory.
  static func archiveSize(_ input: InputSource) throws(CaptureError) -> Int64 {
    if input.fd < 0 { return Int64(input.available) }
    var info = stat()
    guard fstat(input.fd, &info) == 0 else { throw .readFailed(String(cString: strerror(errno))) }
    return Int64(info.st_size)
  }

  static func readAt(_ input: InputSource, offset: Int64, count: Int) throws(CaptureError) -> [UInt8] {
    if input.fd < 0 {
      guard offset >= 0, offset + Int64(count) <= Int64(input.available) else { throw .corrupt("zip archive ends early (at byte \(input.available))") }
      return input.copy(from: Int(offset), count: count)
    }
    var bytes = [UInt8](repeating: 0, count: count)
    var done = 0
    while done < count {
      let got = readDescriptor(input.fd, into: &bytes, at: done, count: count - done, fileOffset: offset + Int64(done))
      if got < 0 && errno == EINTR { continue }
      if got < 0 { throw .readFailed(String(cString: strerror(errno))) }
      if got == 0 { throw .corrupt("zip archive ends early (at byte \(offset + Int64(done)))") }
      done += got
    }
    return bytes
  }

  static func u16(_ bytes: [UInt8], _ at: Int) -> UInt16 { UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8 }
  static func u32(_ bytes: [UInt8], _ at: Int) -> UInt32 { UInt32(u16(bytes, at)) | UInt32(u16(bytes, at + 2)) << 16 }

  /// Writes a zip archive of stored or deflated entries (tests build bugreport fixtures with it).
  package static func archive(_ files: [(name: String, bytes: [UInt8], deflate: Bool)]) -> [UInt8] {
    var output: [UInt8] = []
    var central: [UInt8] = []
    func le16(_ value: Int, _ into: inout [UInt8]) { into += [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF)] }
    func le32(_ value: UInt32, _ into: inout [UInt8]) { le16(Int(value & 0xFFFF), &into); le16(Int(value >> 16), &into) }
    for file in files {
      let data = file.deflate ? Deflate.compress(file.bytes, wrapper: .raw) : file.bytes
      let name = Array(file.name.utf8)
      let crc = Deflate.crc32(file.bytes)
      let offset = UInt32(output.count)
      var fields: [UInt8] = []  // version needed … name length, shared by both headers
      le16(20, &fields); le16(0, &fields); le16(file.deflate ? 8 : 0, &fields); le16(0, &fields); le16(0x21, &fields)
      le32(crc, &fields); le32(UInt32(data.count), &fields); le32(UInt32(file.bytes.count), &fields); le16(name.count, &fields)
      le32(0x0403_4B50, &output); output += fields; le16(0, &output); output += name; output += data
      le32(0x0201_4B50, &central); le16(20, &central); central += fields
      le16(0, &central); le16(0, &central); le16(0, &central); le16(0, &central); le32(0, &central); le32(offset, &central)
      central += name
    }
    let directoryOffset = UInt32(output.count)
    output += central
    le32(0x0605_4B50, &output); le16(0, &output); le16(0, &output); le16(files.count, &output); le16(files.count, &output)
    le32(UInt32(central.count), &output); le32(directoryOffset, &output); le16(0, &output)
    return output
  }
}

extension String {
  fileprivate var trimmingWhitespace: String {
    var text = Substring(self)
    while let last = text.last, last.isWhitespace { text.removeLast() }
    while let first = text.first, first.isWhitespace { text.removeFirst() }
    return String(text)
  }
}

extension CaptureFormatEntry {
  /// An Android bugreport zip (not inside another container): its snoop log, else the summary
  /// in its text.
  static let zip = CaptureFormatEntry(name: "zip") { input, opening throws(CaptureError) in
    guard opening.container == nil, opening.available >= 4, input.peekUInt32BE(0) == 0x504B_0304 else { return nil }
    return try ZipArchive.openBugreport(input, damage: opening.damage)
  }
}
