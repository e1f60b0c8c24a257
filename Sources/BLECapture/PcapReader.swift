#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import BLECore
import CPcap

/// Reads pcap and pcapng through libpcap, from files and pipes alike.
///
/// libpcap reads from a `FILE*`; ours replays the bytes already buffered for format detection and
/// then reads the descriptor, so standard input works although it cannot seek.
/// Link types: those of `PcapLinkType.readable` (HCI: 187 H4, 201 H4 with direction, 254 Linux
/// monitor; LE air sniffers: 251, 256, 272, 157 and 192, as records of kind `.airPacket`).
public final class PcapReader: CaptureReader {
  let input: InputSource
  let handle: OpaquePointer
  // Safety: the stream libpcap reads; `pcap_close` in `deinit` closes it, and nothing else does after `init`.
  let file: UnsafeMutablePointer<FILE>
  /// The link type of the capture's packets (its writer writes the same packets back).
  public let linkType: PcapLinkType
  let isPcapNG: Bool
  public let format: CaptureFormat
  var frames = 0
  /// Offset of the next record for classic pcap (24-byte header, 16-byte record headers).
  var nextOffset: Int64 = 24
  /// Record times, checked (some sniffers' writers break them), for captures sniffed over the
  /// air, whose link timing rests on them; HCI captures' times are shown as recorded.
  var clock = RecordClock()
  let checksClock: Bool

  init(_ input: InputSource, isPcapNG: Bool, nanoseconds: Bool = false) throws(CaptureError) {
    self.input = input
    self.isPcapNG = isPcapNG
    guard let file = Self.makeFile(input) else { throw .readFailed("cannot create a stream for libpcap") }
    var errorBuffer = [CChar](repeating: 0, count: Int(PCAP_ERRBUF_SIZE) + 1)
    guard
      let handle = pcap_fopen_offline_with_tstamp_precision(file, UInt32(PCAP_TSTAMP_PRECISION_MICRO), &errorBuffer)
    else {
      fclose(file)
      // Safety: libpcap writes a NUL-terminated message within PCAP_ERRBUF_SIZE; the array has one byte more, zeroed.
      let text = errorBuffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
      throw .damaged(frame: 0, offset: 0, reason: "\(isPcapNG ? "pcapng" : "pcap") header: \(text)")
    }
    self.file = file
    self.handle = handle
    let value = pcap_datalink(handle)
    let name = isPcapNG ? "pcapng" : "pcap"
    guard let linkType = PcapLinkType.readable.first(where: { $0.value == value }) else {
      pcap_close(handle)  // closes `file` too
      throw .unsupportedLinkType(format: name, linkType: UInt32(bitPattern: value), name: PcapLinkType.name(of: value))
    }
    self.linkType = linkType
    checksClock = PcapLinkType.air.contains(linkType)
    // Times are read to the microsecond: said, since the file holds more.
    let resolution = nanoseconds ? ", nanosecond timestamps (read to the microsecond)" : ""
    format = CaptureFormat(name: name, detail: "link type \(value) (\(linkType.name))" + resolution)
  }

  /// Whether the file's times are in nanoseconds: pcap's nanosecond magic, or a pcapng whose
  /// first interface's `if_tsresol` (option 9) is 10^-9. `head`: the file's first bytes.
  static func hasNanosecondTimes(_ head: [UInt8]) -> Bool {
    (try? ByteReader.reading(head, layer: .capture) { reader throws(DecodeError) -> Bool in
      let magic = try reader.readUInt32BE()
      if magic == 0xA1B2_3C4D || magic == 0x4D3C_B2A1 { return true }
      guard magic == 0x0A0D_0D0A else { return false }
      let sectionLength = try reader.readUInt32LE()
      let littleEndian = try reader.readUInt32LE() == 0x1A2B_3C4D
      func word(_ reader: inout ByteReader) throws(DecodeError) -> UInt32 { littleEndian ? try reader.readUInt32LE() : try reader.readUInt32BE() }
      func half(_ reader: inout ByteReader) throws(DecodeError) -> UInt16 { littleEndian ? try reader.readUInt16LE() : try reader.readUInt16BE() }
      let headerLength = littleEndian ? sectionLength : sectionLength.byteSwapped
      guard headerLength >= 28, headerLength % 4 == 0 else { return false }
      try reader.skip(Int(headerLength) - 12)
      guard try word(&reader) == 1 else { return false }  // the Interface Description Block
      let blockLength = Int(try word(&reader))
      guard blockLength >= 20 else { return false }
      try reader.skip(8)  // link type, reserved, snap length
      var options = try reader.readReader(count: blockLength - 20)
      while options.offset < options.endOffset {
        let code = try half(&options)
        let length = Int(try half(&options))
        if code == 0 { break }
        if code == 9, length == 1 { return try options.readUInt8() == 9 }
        try options.skip((length + 3) & ~3)
      }
      return false
    }) ?? false
  }

  deinit { pcap_close(handle) }

  public var mayWaitForInput: Bool { !input.isRegularFile }

  /// libpcap's stdio buffer is out of sight: this answers whether bytes are at hand at all.
  /// Wrong either way only briefly: a record stdio already holds is then shown a little early,
  /// one whose first bytes arrived waits for its last.
  public func nextIsReady() -> Bool { input.canFillWithoutWaiting(1) }

  public func next() throws(CaptureError) -> CaptureRecord? {
    var record = CaptureRecord(timestamp: 0, direction: nil, kind: .other(0xFFFF), bytes: [])
    return try next(into: &record) ? record : nil
  }

  /// Reads the next packet into `record`, reusing its byte buffer.
  public func next(into record: inout CaptureRecord) throws(CaptureError) -> Bool {
    while true {
      // Safety: libpcap's header and data stay valid until the next pcap_next_ex; both are read before it.
      var headerPointer: UnsafeMutablePointer<pcap_pkthdr>?
      var dataPointer: UnsafePointer<UInt8>?
      let recordOffset = isPcapNG ? currentFileOffset() : nextOffset
      let status = pcap_next_ex(handle, &headerPointer, &dataPointer)
      let frame = frames + 1
      if status == PCAP_ERROR_BREAK || status == -2 { return false }
      guard status == 1, let header = headerPointer?.pointee, let data = dataPointer else {
        // A failure below libpcap (corrupt gzip) says more than libpcap's "Input/output error".
        if case .readFailed(let why)? = input.readThroughFailure { throw .damaged(frame: frame, offset: recordOffset, reason: why) }
        if let failure = input.readThroughFailure, case .inflationCapped = failure { throw failure }
        let text = String(cString: pcap_geterr(handle))
        throw .damaged(frame: frame, offset: recordOffset, reason: text)
      }
      frames = frame
      let captured = Int(header.caplen)
      nextOffset = nextOffset.saturatingAdd(16 + Int64(captured))
      // Safety: libpcap's `caplen` bytes at `data`, valid until the next pcap_next_ex; the view is gone before it.
      let snifferClock = linkType.read(ByteView.pinned(UnsafeBufferPointer(start: data, count: captured), count: captured), Int(header.len), into: &record)
      // pcapng carries 64-bit timestamps in any unit: seconds far out of range must clamp, not trap.
      if checksClock {
        record.timestamp = clock.time(
          seconds: Int64(header.ts.tv_sec), micros: Int64(header.ts.tv_usec), clock: snifferClock, repair: &record.clockRepair)
      } else {
        record.timestamp = Timestamp.microseconds(seconds: Int64(header.ts.tv_sec), micros: Int64(header.ts.tv_usec))
      }
      record.fileOffset = recordOffset
      return true
    }
  }

  /// The logical position of libpcap's stream: what it consumed minus what stdio still buffers.
  func currentFileOffset() -> Int64 {
    let position = ftello(file)
    return position >= 0 ? Int64(position) : input.position
  }

  // Safety: the stream's cookie holds one retain of `input`, released by its close function.
  static func makeFile(_ input: InputSource) -> UnsafeMutablePointer<FILE>? {
    let cookie = Unmanaged.passRetained(input).toOpaque()
    #if canImport(Glibc) || canImport(Musl)
    var functions = bledissect_cookie_functions()
    functions.read = { cookie, buffer, size in
      // Safety: the cookie is alive (retained until close); stdio lends `size` bytes at `buffer`.
      let source = Unmanaged<InputSource>.fromOpaque(cookie!).takeUnretainedValue()
      return source.readThrough(into: UnsafeMutableRawPointer(buffer!), max: size)
    }
    functions.seek = { cookie, offset, whence in
      // Only "where am I" is supported, so ftell works; libpcap never seeks otherwise.
      guard let offset, offset.pointee == 0, whence == SEEK_CUR else { return -1 }
      // Safety: the cookie is alive (retained until close).
      let source = Unmanaged<InputSource>.fromOpaque(cookie!).takeUnretainedValue()
      offset.pointee = source.position
      return 0
    }
    functions.close = { cookie in
      // Safety: the one release of the retain taken above; stdio calls close once.
      Unmanaged<InputSource>.fromOpaque(cookie!).release()
      return 0
    }
    let file = bledissect_fopencookie(cookie, "r", functions)
    // Only the reading thread uses the stream: two freads a packet need not lock it.
    if let file { _ = __fsetlocking(file, Int32(FSETLOCKING_BYCALLER)) }
    return file
    #else
    return funopen(
      cookie,
      { cookie, buffer, size in
        // Safety: the cookie is alive (retained until close); stdio lends `size` bytes at `buffer`.
        let source = Unmanaged<InputSource>.fromOpaque(cookie!).takeUnretainedValue()
        return Int32(source.readThrough(into: UnsafeMutableRawPointer(buffer!), max: Int(size)))
      },
      nil,
      { cookie, offset, whence in
        guard offset == 0, whence == SEEK_CUR else { return -1 }
        // Safety: the cookie is alive (retained until close).
        return fpos_t(Unmanaged<InputSource>.fromOpaque(cookie!).takeUnretainedValue().position)
      },
      { cookie in
        // Safety: the one release of the retain taken above; stdio calls close once.
        Unmanaged<InputSource>.fromOpaque(cookie!).release()
        return 0
      })
    #endif
  }
}

extension CaptureFormatEntry {
  /// pcap (either byte order, µs or ns) and pcapng, read through libpcap.
  static let pcap = CaptureFormatEntry(name: "pcap") { input, opening throws(CaptureError) in
    guard opening.available >= 4 else { return nil }
    let magic = input.peekUInt32BE(0)
    switch magic {
    case 0xA1B2_C3D4, 0xD4C3_B2A1, 0xA1B2_3C4D, 0x4D3C_B2A1, 0x0A0D_0D0A:
      return try PcapReader(input, isPcapNG: magic == 0x0A0D_0D0A, nanoseconds: PcapReader.hasNanosecondTimes(input.peekBytes(4096)))
    default:
      return nil
    }
  }
}
