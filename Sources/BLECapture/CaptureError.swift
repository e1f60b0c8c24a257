import BLECore

/// Why a capture cannot be read, or stopped being readable. These reach the user as one line.
public enum CaptureError: Error, Sendable, Equatable {
  /// The file could not be opened or read (errno text).
  case cannotOpen(String)
  case emptyFile
  /// Not a format we read; carries the first bytes for the message.
  case notACapture(firstBytes: [UInt8])
  case unsupportedVersion(format: String, version: UInt32)
  case unsupportedLinkType(format: String, linkType: UInt32, name: String)
  /// The header or a record is damaged; frames before it were read.
  case damaged(frame: Int, offset: Int64, reason: String)
  case readFailed(String)
  /// A container (gzip, bugreport text, zip) that holds no readable capture, or is corrupt
  /// before any frame.
  case corrupt(String)
  /// Compressed content inflates past its cap (`InflationLimits`): a likely decompression
  /// bomb. The frames before the cap were read; the message names what was inflated and the cap.
  case inflationCapped(String)

  /// The exit status this error means: 1 for damage after a readable start (and for a capped
  /// inflation, whose frames before the cap were read), 2 for unreadable.
  public var exitStatus: Int32 {
    switch self {
    case .damaged, .inflationCapped: return 1
    default: return 2
    }
  }

  public var message: String {
    switch self {
    case .cannotOpen(let why): return why
    case .emptyFile: return "empty file (0 bytes): not a capture"
    case .notACapture(let bytes):
      let shown = bytes.prefix(4).map { Hex.string([$0]) }.joined(separator: " ")
      return "not a capture file bledissect understands (starts with \(shown)\(bytes.count > 4 ? " …" : "")); it reads btsnoop, PacketLogger, pcap, pcapng, those gzip-compressed, and Android bugreports (.txt with a BTSNOOP_LOG_SUMMARY, .zip)"
    case let .unsupportedVersion(format, version):
      return "unsupported \(format) version \(version)"
    case let .unsupportedLinkType(format, linkType, name):
      return "unsupported \(format) link type \(linkType) (\(name)); bledissect reads HCI and LE air-sniffer captures: btsnoop 1001/1002/2001, pcap link types \(PcapLinkType.readableList)"
    case let .damaged(frame, offset, reason):
      return "damaged capture at frame \(frame) (byte offset \(offset)): \(reason)"
    case .readFailed(let why): return "read error: \(why)"
    case .corrupt(let why): return why
    case .inflationCapped(let why): return why
    }
  }
}
