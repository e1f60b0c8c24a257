import BLECore

/// What a reader found in the file header.
public struct CaptureFormat: Sendable, Equatable {
  /// `btsnoop`, `packetlogger`, `pcap`, `pcapng`.
  public var name: String
  /// Datalink or link type, byte order: a few words for `info` and errors.
  public var detail: String
  /// A line worth telling the user when the capture is opened (a choice made for them: which
  /// of several snoop logs in a bugreport zip was read); nil for most.
  public var notice: String?

  public init(name: String, detail: String, notice: String? = nil) {
    self.name = name
    self.detail = detail
    self.notice = notice
  }
}

/// Yields the records of one capture in order. Streams: holds at most one record at a time.
/// A frame stream reads it as a `RecordSource` (CaptureReader+RecordSource.swift); readers
/// skip damage under `DamagePolicy.resynchronize`, and `nextIsReady` reads what a pipe holds.
public protocol CaptureReader: RecordSource {
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

  /// Opens `path` (`-` for standard input). `damage` says what the btsnoop and PacketLogger
  /// readers do at a record that cannot be right; pcap and pcapng (libpcap) always stop.
  public static func open(path: String, damage: DamagePolicy = .stop) throws(CaptureError) -> any CaptureReader {
    try open(InputSource(path: path), damage: damage)
  }

  /// Opens a file named by raw bytes (a file name need not be UTF-8); `name` is for messages.
  public static func open(pathBytes: [UInt8], name: String, damage: DamagePolicy = .stop) throws(CaptureError) -> any CaptureReader {
    try open(InputSource(pathBytes: pathBytes, name: name), damage: damage)
  }

  public static func open(_ input: InputSource, damage: DamagePolicy = .stop) throws(CaptureError) -> any CaptureReader {
    try open(input, damage: damage, container: nil)
  }

  /// `container`: what `input` was found in (a gzip file, a zip archive), for messages; gzip
  /// inside gzip is read, one level only.
  static func open(_ input: InputSource, damage: DamagePolicy, container: String?) throws(CaptureError) -> any CaptureReader {
    let have = try input.fill(16)
    if have == 0 { throw container == nil ? .emptyFile : .corrupt("the \(container!) holds no bytes: not a capture") }
    let opening = Opening(available: have, damage: damage, container: container)
    for format in formats {
      if let reader = try format.open(input, opening) { return reader }
    }
    throw .notACapture(firstBytes: input.peekBytes(8))
  }

  /// The formats `open` recognizes, asked in this order: magic numbers first, then the
  /// formats told apart by looking further (PacketLogger's first records, text). Each entry is
  /// defined beside its reader.
  static let formats: [CaptureFormatEntry] = [.gzip, .zip, .btsnoop, .pcap, .packetLogger, .bugreportText]

  /// What an entry of `formats` is told besides the input.
  struct Opening {
    /// Bytes buffered from the start (16 unless the input is shorter): what magic numbers are
    /// checked against. An entry may fill more.
    let available: Int
    let damage: DamagePolicy
    /// What the input was found in, for messages; nil for a file opened as it is.
    let container: String?
  }
}

/// A capture format `CaptureFile.open` recognizes: its first bytes told apart from the other
/// formats', and its reader opened. Added by defining one beside the reader and listing it in
/// `CaptureFile.formats` (docs/architecture.md).
struct CaptureFormatEntry: Sendable {
  /// For tests and messages about the list; what the user sees is the reader's `CaptureFormat`.
  let name: String
  /// The reader for `input` when it starts as this format does, else nil (the next entry is
  /// asked). Throws when the format is this one but cannot be read.
  let open: @Sendable (_ input: InputSource, _ opening: CaptureFile.Opening) throws(CaptureError) -> (any CaptureReader)?
}

extension CaptureFormatEntry {
  /// gzip around any other format, inflated as it is read (not inside another container).
  static let gzip = CaptureFormatEntry(name: "gzip") { input, opening throws(CaptureError) in
    guard opening.container == nil, opening.available >= 2, input.peek(0) == 0x1F, input.peek(1) == 0x8B else { return nil }
    try input.startInflating(.gzip, subject: "gzip data", advice: "to read it all, decompress it first (gzip -dc)")
    let reader = try CaptureFile.open(input, damage: opening.damage, container: "gzip file")
    let format = CaptureFormat(name: reader.format.name, detail: reader.format.detail + ", gzip-compressed", notice: reader.format.notice)
    return ContainedReader(reader, format: format)
  }
}

/// A reader found inside a container (gzip, a bugreport), named as what it was found in.
final class ContainedReader: CaptureReader {
  let reader: any CaptureReader
  let format: CaptureFormat

  init(_ reader: any CaptureReader, format: CaptureFormat) {
    self.reader = reader
    self.format = format
  }

  func next() throws(CaptureError) -> CaptureRecord? { try reader.next() }
  func next(into record: inout CaptureRecord) throws(CaptureError) -> Bool { try reader.next(into: &record) }
  var damagePlaces: Int { reader.damagePlaces }
  var damage: DamageTally { reader.damage }
  var mayWaitForInput: Bool { reader.mayWaitForInput }
  func nextIsReady() -> Bool { reader.nextIsReady() }
}
