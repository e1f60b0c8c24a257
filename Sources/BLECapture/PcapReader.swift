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
/// Link types: 187 (H4), 201 (H4 with a 4-byte direction header), 254 (Linux monitor).
public final class PcapReader: CaptureReader {
  let input: InputSource
  let handle: OpaquePointer
  let file: UnsafeMutablePointer<FILE>
  let linkType: Int32
  let isPcapNG: Bool
  public let format: CaptureFormat
  var frames = 0
  /// Offset of the next record for classic pcap (24-byte header, 16-byte record headers).
  var nextOffset: Int64 = 24

  public static let h4: Int32 = 187
  public static let h4WithDirection: Int32 = 201
  public static let linuxMonitor: Int32 = 254

  init(_ input: InputSource, isPcapNG: Bool) throws(CaptureError) {
    self.input = input
    self.isPcapNG = isPcapNG
    guard let file = Self.makeFile(input) else { throw .readFailed("cannot create a stream for libpcap") }
    var errorBuffer = [CChar](repeating: 0, count: Int(PCAP_ERRBUF_SIZE) + 1)
    guard
      let handle = pcap_fopen_offline_with_tstamp_precision(file, UInt32(PCAP_TSTAMP_PRECISION_MICRO), &errorBuffer)
    else {
      fclose(file)
      let text = errorBuffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
      throw .damaged(frame: 0, offset: 0, reason: "\(isPcapNG ? "pcapng" : "pcap") header: \(text)")
    }
    self.file = file
    self.handle = handle
    linkType = pcap_datalink(handle)
    let name = isPcapNG ? "pcapng" : "pcap"
    switch linkType {
    case Self.h4: format = CaptureFormat(name: name, detail: "link type 187 (H4)")
    case Self.h4WithDirection: format = CaptureFormat(name: name, detail: "link type 201 (H4 with direction)")
    case Self.linuxMonitor: format = CaptureFormat(name: name, detail: "link type 254 (Linux monitor)")
    default:
      pcap_close(handle)  // closes `file` too
      throw .unsupportedLinkType(format: name, linkType: UInt32(bitPattern: linkType), name: Self.linkTypeName(linkType))
    }
  }

  deinit { pcap_close(handle) }

  public var mayWaitForInput: Bool { !input.isRegularFile }

  /// libpcap's stdio buffer is out of sight: this answers whether bytes are at hand at all.
  /// Wrong either way only briefly: a record stdio already holds is then shown a little early,
  /// one whose first bytes arrived waits for its last.
  public func nextIsReady() -> Bool { input.canFillWithoutWaiting(1) }

  static func linkTypeName(_ type: Int32) -> String {
    switch type {
    case 192: return "PPI, an air sniffer capture; bledissect reads HCI captures"
    case 251: return "BLUETOOTH_LE_LL, a link-layer sniffer capture"
    case 255: return "BLUETOOTH_BREDR_BB, a baseband sniffer capture"
    case 256: return "BLUETOOTH_LE_LL_WITH_PHDR, a link-layer sniffer capture"
    case 272: return "NORDIC_BLE, an nRF Sniffer link-layer capture"
    case 1: return "Ethernet"
    default:
      if let name = pcap_datalink_val_to_name(type) { return String(cString: name) }
      return "unknown"
    }
  }

  public func next() throws(CaptureError) -> CaptureRecord? {
    while true {
      var headerPointer: UnsafeMutablePointer<pcap_pkthdr>?
      var dataPointer: UnsafePointer<UInt8>?
      let recordOffset = isPcapNG ? currentFileOffset() : nextOffset
      let status = pcap_next_ex(handle, &headerPointer, &dataPointer)
      let frame = frames + 1
      if status == PCAP_ERROR_BREAK || status == -2 { return nil }
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
      // pcapng carries 64-bit timestamps in any unit: seconds far out of range must clamp, not trap.
      let timestamp = Timestamp.microseconds(seconds: Int64(header.ts.tv_sec), micros: Int64(header.ts.tv_usec))
      let bytes = UnsafeBufferPointer(start: data, count: captured)
      return record(bytes, timestamp: timestamp, originalLength: Int(header.len), offset: recordOffset)
    }
  }

  func record(_ bytes: UnsafeBufferPointer<UInt8>, timestamp: Int64, originalLength: Int, offset: Int64) -> CaptureRecord {
    switch linkType {
    case Self.h4WithDirection, Self.h4:
      var direction: Direction? = nil
      var at = 0
      if linkType == Self.h4WithDirection {
        guard bytes.count >= 4 else {
          return CaptureRecord(timestamp: timestamp, direction: nil, kind: .other(0xFFFF), bytes: Array(bytes), fileOffset: offset)
        }
        let value = UInt32(bytes[0]) << 24 | UInt32(bytes[1]) << 16 | UInt32(bytes[2]) << 8 | UInt32(bytes[3])
        direction = value == 0 ? .hostToController : .controllerToHost
        at = 4
      }
      guard bytes.count > at else {
        return CaptureRecord(timestamp: timestamp, direction: direction, kind: .other(0xFFFF), bytes: [], fileOffset: offset)
      }
      let kind = PacketKind(h4Indicator: bytes[at])
      if direction == nil {
        // DLT 187 carries no direction, but commands and events only go one way.
        if kind == .command { direction = .hostToController } else if kind == .event { direction = .controllerToHost }
      }
      let skip = kind.isHCIPacket ? at + 1 : at
      return CaptureRecord(
        timestamp: timestamp, direction: direction, kind: kind, bytes: Array(bytes[skip...]),
        originalLength: max(originalLength - skip, 0), fileOffset: offset)
    default:
      guard bytes.count >= 4 else {
        return CaptureRecord(timestamp: timestamp, direction: nil, kind: .other(0xFFFF), bytes: Array(bytes), fileOffset: offset)
      }
      let adapter = UInt16(bytes[0]) << 8 | UInt16(bytes[1])
      let opcode = UInt16(bytes[2]) << 8 | UInt16(bytes[3])
      let (kind, direction) = MonitorOpcode.kind(opcode)
      return CaptureRecord(
        timestamp: timestamp, adapter: adapter, direction: direction, kind: kind, bytes: Array(bytes[4...]),
        originalLength: max(originalLength - 4, 0), fileOffset: offset)
    }
  }

  /// The logical position of libpcap's stream: what it consumed minus what stdio still buffers.
  func currentFileOffset() -> Int64 {
    let position = ftello(file)
    return position >= 0 ? Int64(position) : input.position
  }

  static func makeFile(_ input: InputSource) -> UnsafeMutablePointer<FILE>? {
    let cookie = Unmanaged.passRetained(input).toOpaque()
    #if canImport(Glibc) || canImport(Musl)
    var functions = bledissect_cookie_functions()
    functions.read = { cookie, buffer, size in
      let source = Unmanaged<InputSource>.fromOpaque(cookie!).takeUnretainedValue()
      return source.readThrough(into: UnsafeMutableRawPointer(buffer!), max: size)
    }
    functions.seek = { cookie, offset, whence in
      // Only "where am I" is supported, so ftell works; libpcap never seeks otherwise.
      guard let offset, offset.pointee == 0, whence == SEEK_CUR else { return -1 }
      let source = Unmanaged<InputSource>.fromOpaque(cookie!).takeUnretainedValue()
      offset.pointee = source.position
      return 0
    }
    functions.close = { cookie in
      Unmanaged<InputSource>.fromOpaque(cookie!).release()
      return 0
    }
    return bledissect_fopencookie(cookie, "r", functions)
    #else
    return funopen(
      cookie,
      { cookie, buffer, size in
        let source = Unmanaged<InputSource>.fromOpaque(cookie!).takeUnretainedValue()
        return Int32(source.readThrough(into: UnsafeMutableRawPointer(buffer!), max: Int(size)))
      },
      nil,
      { cookie, offset, whence in
        guard offset == 0, whence == SEEK_CUR else { return -1 }
        return fpos_t(Unmanaged<InputSource>.fromOpaque(cookie!).takeUnretainedValue().position)
      },
      { cookie in
        Unmanaged<InputSource>.fromOpaque(cookie!).release()
        return 0
      })
    #endif
  }
}
