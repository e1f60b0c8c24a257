import BLECore

/// What a reader found in the file header.
public struct CaptureFormat: Sendable, Equatable {
  /// `btsnoop`, `packetlogger`, `pcap`, `pcapng`.
  public var name: String
  /// Datalink or link type, byte order: a few words for `info` and errors.
  public var detail: String
}

/// Yields the records of one capture in order. Streams: holds at most one record at a time.
public protocol CaptureReader: AnyObject {
  var format: CaptureFormat { get }
  /// The next record, or nil at the clean end of the capture.
  /// - Throws: `CaptureError.damaged` when the rest of the file cannot be read.
  func next() throws(CaptureError) -> CaptureRecord?
  /// Reads the next record into `record`, reusing its byte buffer; false at the clean end.
  func next(into record: inout CaptureRecord) throws(CaptureError) -> Bool
}

extension CaptureReader {
  public func next(into record: inout CaptureRecord) throws(CaptureError) -> Bool {
    guard let next = try next() else { return false }
    record = next
    return true
  }
}

/// Opens captures, choosing the reader from the content, never from the file name.
public enum CaptureFile {
  /// Largest packet any reader accepts (Wireshark's limit for ordinary link types).
  public static let maximumPacketLength = 262_144

  public static func open(path: String) throws(CaptureError) -> any CaptureReader {
    try open(InputSource(path: path))
  }

  /// Opens a file named by raw bytes (a file name need not be UTF-8); `name` is for messages.
  public static func open(pathBytes: [UInt8], name: String) throws(CaptureError) -> any CaptureReader {
    try open(InputSource(pathBytes: pathBytes, name: name))
  }

  public static func open(_ input: InputSource) throws(CaptureError) -> any CaptureReader {
    let have = try input.fill(16)
    if have == 0 { throw .emptyFile }
    if have >= 8, input.peekBytes(8) == BTSnoopFormat.magic {
      return try BTSnoopReader(input)
    }
    if have >= 4 {
      let magic = input.peekUInt32BE(0)
      switch magic {
      case 0xA1B2_C3D4, 0xD4C3_B2A1, 0xA1B2_3C4D, 0x4D3C_B2A1, 0x0A0D_0D0A:
        return try PcapReader(input, isPcapNG: magic == 0x0A0D_0D0A)
      default: break
      }
    }
    if let order = try PacketLoggerReader.detect(input) {
      return PacketLoggerReader(input, bigEndian: order)
    }
    throw .notACapture(firstBytes: input.peekBytes(8))
  }
}
