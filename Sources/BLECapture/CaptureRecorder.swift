#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import BLECore

/// Writes records to a capture file as they come (`live -w`): the header at once, then each
/// record whole in one `write(2)`, nothing kept in memory, so the file is a valid capture after
/// every record, whatever ends the process.
package final class CaptureRecorder {
  package let name: String
  package let format: CaptureWriteFormat
  let fd: Int32
  var writer: CaptureWriter
  package private(set) var records = 0
  /// Records the format cannot carry (notes in btsnoop H4).
  package var skipped: Int { writer.skipped }

  /// Creates (or empties) the file and writes the format's header.
  package init(pathBytes: [UInt8], name: String, format: CaptureWriteFormat, comment: String? = nil) throws(CaptureError) {
    self.name = name
    self.format = format
    guard !pathBytes.contains(0) else { throw .cannotOpen("file name holds a NUL byte") }
    let opened = withCPath(pathBytes) { open($0, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644) }
    guard opened >= 0 else { throw .cannotOpen(String(cString: strerror(errno))) }
    fd = opened
    writer = CaptureWriter(format: format, comment: comment)
    if let problem = flush() {
      close(fd)
      throw .cannotOpen(problem)
    }
  }

  deinit { close(fd) }

  /// The format for a file name: pcapng, pcap or pklg by extension, else btsnoop (H4).
  package static func format(forName name: String) -> CaptureWriteFormat {
    let lowered = name.lowercased()
    if lowered.hasSuffix(".pcapng") { return .pcapngH4WithDirection }
    if lowered.hasSuffix(".pcap") { return .pcapH4WithDirection }
    if lowered.hasSuffix(".pklg") { return .packetLogger(bigEndian: true) }
    return .btsnoopH4
  }

  /// The format for a file name that must carry packets sniffed over the air too: pcap or
  /// pcapng link type 256 (LE link layer with its RF header); nil for a name of an HCI-only
  /// format (btsnoop, PacketLogger).
  package static func format(forName name: String, airPackets: Bool) -> CaptureWriteFormat? {
    let format = format(forName: name)
    guard airPackets else { return format }
    switch format {
    case .pcap: return .pcap(.bluetoothLELLWithPHDR)
    case .pcapng: return .pcapng(.bluetoothLELLWithPHDR)
    default: return nil
    }
  }

  /// The first failure to write (`keep` then writes nothing more).
  package private(set) var failure: String?

  /// Writes `record` unless an earlier write failed; tells `notice` of the first failure
  /// (the recording stops there, the decoding goes on).
  package func keep(_ record: CaptureRecord, notice: ((String) -> Void)?) {
    guard failure == nil else { return }
    if let problem = write(record) {
      failure = problem
      notice?("\(name): \(problem); no longer recording (decoding goes on)")
    }
  }

  /// Writes one record; the reason when the write failed.
  package func write(_ record: CaptureRecord, comment: String? = nil) -> String? {
    let before = writer.skipped
    writer.write(record, comment: comment)
    if writer.skipped == before { records += 1 }
    return flush()
  }

  func flush() -> String? {
    SystemWrite.all(fd, writer.takeOutput()).map(SystemWrite.reason)
  }
}
