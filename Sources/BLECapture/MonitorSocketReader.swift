#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import BLECore

/// Live HCI traffic from Linux's Bluetooth monitor channel (shared/reference/capture-formats.md
/// §4): a raw HCI socket bound to `HCI_CHANNEL_MONITOR`, one datagram per message (a 6-byte
/// little-endian header, opcode / controller index / length, then the payload), each stamped
/// by the kernel (`SO_TIMESTAMP`). The messages are those btsnoop datalink 2001 stores, so
/// records come out exactly as from a `btmon -w` file.
public final class MonitorSocketReader: CaptureReader {
  public let format = CaptureFormat(name: "monitor", detail: "Linux HCI monitor channel (live)")
  let descriptor: Int32
  var buffer = [UInt8](repeating: 0, count: 6 + 65_535)
  /// Room for the kernel's timestamp message, reused.
  var controlBuffer = [UInt8](repeating: 0, count: 64)
  /// Messages received, and datagrams cut short or unreadable (counted, not fatal).
  public private(set) var received = 0
  public private(set) var malformed = 0
  /// Bytes of payload received.
  public private(set) var bytes: Int64 = 0
  /// Waits before each receive, so a stop request (Ctrl-C) ends the reading; nil: just wait.
  package var control: LiveControl?
  /// Each record received is written here first (`-w`), whole.
  package var recorder: CaptureRecorder?
  /// The first failure to write the recording (it then stops).
  package var recordingFailure: String? { recorder?.failure }
  /// Told when the recording stops.
  package var notice: ((String) -> Void)?
  /// Controllers the monitor announced (NEW_INDEX, INDEX_INFO), by index; at most
  /// `maximumAdapters` (a hostile stream cannot grow it).
  public private(set) var adapters: [UInt16: MonitorAdapter] = [:]
  static let maximumAdapters = 64
  /// Told what the opening burst showed (the kernel replays every present controller when the
  /// socket is bound), then of each controller that appears or goes away.
  package var adapterEvent: ((MonitorAdapterEvent) -> Void)?
  /// Whether the opening burst has been read and reported.
  var reportedPresence = false
  /// How long the opening burst may take to arrive: the kernel queues it as the socket binds.
  static let openingBurstWait: Int32 = 250

  static let bluetoothFamily: Int32 = 31  // AF_BLUETOOTH
  static let hciProtocol: Int32 = 1  // BTPROTO_HCI
  static let monitorChannel: UInt16 = 2  // HCI_CHANNEL_MONITOR
  static let noDevice: UInt16 = 0xFFFF  // HCI_DEV_NONE

  /// Opens and binds the monitor socket; the error says what to do about it.
  public init() throws(CaptureError) {
    #if os(Linux)
    let descriptor = socket(Self.bluetoothFamily, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), Self.hciProtocol)
    guard descriptor >= 0 else { throw Self.failure("socket", errno) }
    // struct sockaddr_hci { sa_family_t family; unsigned short dev; unsigned short channel; }
    var address: (UInt16, UInt16, UInt16) = (UInt16(Self.bluetoothFamily), Self.noDevice, Self.monitorChannel)
    // Safety: the tuple is laid out as sockaddr_hci (three u16s, 6 bytes), and lent for the call.
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, 6) }
    }
    guard bound == 0 else {
      let error = errno
      close(descriptor)
      throw Self.failure("bind", error)
    }
    var on: Int32 = 1
    _ = setsockopt(descriptor, SOL_SOCKET, SO_TIMESTAMP, &on, socklen_t(MemoryLayout<Int32>.size))
    Self.enlargeReceiveBuffer(descriptor)
    self.descriptor = descriptor
    #else
    throw CaptureError.cannotOpen(
      "live capture from the Bluetooth monitor needs Linux; on macOS record with PacketLogger and pipe it: bledissect live -")
    #endif
  }

  /// The kernel drops monitor messages when the socket's queue is full (a burst while the
  /// terminal scrolls): a larger queue rides out longer bursts. Past the system's limit
  /// (net.core.rmem_max) only with CAP_NET_ADMIN (SO_RCVBUFFORCE); else as large as allowed.
  static let receiveBufferBytes: Int32 = 8 << 20

  static func enlargeReceiveBuffer(_ descriptor: Int32) {
    #if os(Linux)
    var size = receiveBufferBytes
    let length = socklen_t(MemoryLayout<Int32>.size)
    if setsockopt(descriptor, SOL_SOCKET, SO_RCVBUFFORCE, &size, length) != 0 {
      _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, length)
    }
    #endif
  }

  /// Messages the kernel dropped because the socket's queue was full, since it was opened
  /// (SO_MEMINFO's drop counter, Linux 4.12 and later); nil when the kernel does not say.
  public var kernelDrops: Int? {
    #if os(Linux)
    // struct: u32 values indexed by SK_MEMINFO_*; SK_MEMINFO_DROPS is 8.
    var values = [UInt32](repeating: 0, count: 16)
    var length = socklen_t(values.count * MemoryLayout<UInt32>.size)
    let soMeminfo: Int32 = 55
    // Safety: the kernel writes at most `length` bytes, the array's size, and says how many.
    let status = values.withUnsafeMutableBytes { getsockopt(descriptor, SOL_SOCKET, soMeminfo, $0.baseAddress, &length) }
    guard status == 0, Int(length) >= 9 * MemoryLayout<UInt32>.size else { return nil }
    return Int(values[8])
    #else
    return nil
    #endif
  }

  /// A message for each way opening the socket fails, saying what to do.
  static func failure(_ call: String, _ error: Int32) -> CaptureError {
    switch error {
    case EAFNOSUPPORT:
      return .cannotOpen("this kernel has no Bluetooth sockets (or this is a container outside the host's network namespace): live capture needs a Linux host with Bluetooth; or read a file, or Android's feed with --android")
    case EPROTONOSUPPORT:
      return .cannotOpen("the kernel's Bluetooth has no HCI sockets (BTPROTO_HCI): load the bluetooth module")
    case EPERM, EACCES:
      return .cannotOpen("no permission to open the Bluetooth monitor: it needs CAP_NET_RAW: run with sudo, or once: sudo setcap cap_net_raw+ep $(command -v bledissect)")
    case EINVAL:
      return .cannotOpen("the kernel refused the monitor channel (\(call): invalid argument): Linux 3.4 or later is needed")
    default:
      return .cannotOpen("cannot open the Bluetooth monitor (\(call): \(String(cString: strerror(error))))")
    }
  }

  /// Reads monitor messages from a socket already open (tests: one end of a socket pair).
  init(descriptor: Int32) {
    var on: Int32 = 1
    _ = setsockopt(descriptor, SOL_SOCKET, SO_TIMESTAMP, &on, socklen_t(MemoryLayout<Int32>.size))
    Self.enlargeReceiveBuffer(descriptor)
    self.descriptor = descriptor
  }

  deinit { close(descriptor) }

  public var mayWaitForInput: Bool { true }

  public func nextIsReady() -> Bool {
    var descriptorSet = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
    return poll(&descriptorSet, 1, 0) > 0
  }

  public func next() throws(CaptureError) -> CaptureRecord? {
    var record = CaptureRecord(timestamp: 0, adapter: 0, direction: nil, kind: .other(0), bytes: [])
    return try next(into: &record) ? record : nil
  }

  public func next(into record: inout CaptureRecord) throws(CaptureError) -> Bool {
    while true {
      if !reportedPresence {
        var descriptorSet = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        if poll(&descriptorSet, 1, Self.openingBurstWait) == 0 {
          reportedPresence = true
          adapterEvent?(.present(adapters.values.sorted { $0.index < $1.index }))
        }
      }
      if let control, control.waitFor(descriptor) == false { return false }
      var time = timeval()
      let length = receive(&time)
      if length < 0 {
        if errno == EINTR { continue }
        throw .readFailed("Bluetooth monitor: \(String(cString: strerror(errno)))")
      }
      if length == 0 { return false }
      let parsed = Self.parse(datagram: buffer[0..<min(length, buffer.count)], timestamp: Self.timestamp(time), into: &record)
      switch parsed {
      case .tooShort:
        malformed += 1
        continue
      case .lengthDisagrees: malformed += 1
      case .whole: break
      }
      received += 1
      bytes = bytes.saturatingAdd(Int64(length - 6))
      noteAdapter(record)
      if !reportedPresence, record.kind.isHCIPacket {
        // Traffic: the opening burst is over. Traffic from a controller never announced
        // (not the kernel's way) says nothing about presence.
        reportedPresence = true
        if !adapters.isEmpty { adapterEvent?(.present(adapters.values.sorted { $0.index < $1.index })) }
      }
      recorder?.keep(record, notice: notice)
      return true
    }
  }

  /// Keeps the adapter table: NEW_INDEX (type, bus, address, name), INDEX_INFO (address,
  /// manufacturer), DEL_INDEX. Layouts: capture-formats.md §4.2. Short payloads change nothing.
  func noteAdapter(_ record: CaptureRecord) {
    let index = record.adapter
    let payload = record.bytes
    switch record.kind {
    case .indexAdded where payload.count >= 16:
      guard adapters[index] != nil || adapters.count < Self.maximumAdapters else { return }
      var adapter = MonitorAdapter(index: index)
      adapter.type = payload[0]
      adapter.bus = payload[1]
      adapter.address = Self.address(payload[2..<8])
      let name = payload[8..<16].prefix { $0 != 0 }
      adapter.name = String(decoding: name, as: UTF8.self)
      adapters[index] = adapter
      if reportedPresence { adapterEvent?(.appeared(adapter)) }
    case .indexInfo where payload.count >= 8:
      guard var adapter = adapters[index] else { return }
      adapter.address = Self.address(payload[0..<6])
      adapter.manufacturer = UInt16(payload[6]) | UInt16(payload[7]) << 8
      adapters[index] = adapter
    case .indexRemoved:
      guard let adapter = adapters.removeValue(forKey: index) else { return }
      if reportedPresence { adapterEvent?(.removed(adapter)) }
    default:
      break
    }
  }

  /// A little-endian BD_ADDR.
  static func address(_ bytes: ArraySlice<UInt8>) -> BDAddr {
    var value: UInt64 = 0
    for byte in bytes.reversed() { value = value << 8 | UInt64(byte) }
    return BDAddr(rawValue: value)
  }

  /// What `parse` made of a datagram.
  package enum Datagram: Sendable, Equatable {
    /// A record, its header's length equal to the payload's.
    case whole
    /// A record (the datagram's payload, whatever the header's length says): counted malformed.
    case lengthDisagrees
    /// Shorter than the 6-byte header: no record.
    case tooShort
  }

  /// Makes one monitor datagram (opcode, controller index, length, little-endian; the payload)
  /// into `record`, reusing its byte buffer. Pure: the socket reader and the fuzz target share it.
  package static func parse(datagram: ArraySlice<UInt8>, timestamp: Int64, into record: inout CaptureRecord) -> Datagram {
    guard datagram.count >= 6 else { return .tooShort }
    let at = datagram.startIndex
    let opcode = UInt16(datagram[at]) | UInt16(datagram[at + 1]) << 8
    let index = UInt16(datagram[at + 2]) | UInt16(datagram[at + 3]) << 8
    let declared = Int(UInt16(datagram[at + 4]) | UInt16(datagram[at + 5]) << 8)
    let payload = datagram[(at + 6)...]
    (record.kind, record.direction) = MonitorOpcode.kind(opcode)
    record.adapter = index
    record.timestamp = timestamp
    record.bytes.removeAll(keepingCapacity: true)
    record.bytes.append(contentsOf: payload)
    record.originalLength = payload.count
    // The header's length and the datagram's agree on a sane kernel; the datagram wins.
    return declared == payload.count ? .whole : .lengthDisagrees
  }

  /// A kernel time stamp in µs since 1970, saturating.
  package static func timestamp(_ time: timeval) -> Int64 {
    Int64(time.tv_sec).saturatingMultiply(1_000_000).saturatingAdd(Int64(time.tv_usec))
  }

  /// One datagram into `buffer`; `time` from the kernel's stamp (else now).
  func receive(_ time: inout timeval) -> Int {
    // Safety: recvmsg is lent both arrays, with their sizes, and the iovec for this one call.
    let count = buffer.withUnsafeMutableBytes { bytes -> Int in
      controlBuffer.withUnsafeMutableBytes { controlBytes -> Int in
        var vector = iovec(iov_base: bytes.baseAddress, iov_len: bytes.count)
        // Safety: as above: the iovec outlives the call that reads it.
        return withUnsafeMutablePointer(to: &vector) { vectorPointer -> Int in
          var message = msghdr()
          message.msg_iov = vectorPointer
          message.msg_iovlen = 1
          message.msg_control = controlBytes.baseAddress
          message.msg_controllen = .init(controlBytes.count)
          let received = recvmsg(descriptor, &message, 0)
          guard received >= 0 else { return received }
          var stamped = false
          var header = CMSG_FIRSTHDR_portable(&message)
          while let current = header {
            if current.pointee.cmsg_level == SOL_SOCKET && current.pointee.cmsg_type == SCM_TIMESTAMP {
              // Safety: a SCM_TIMESTAMP message holds a timeval after its header, within the control buffer.
              let data = UnsafeRawPointer(current) + MemoryLayout<cmsghdr>.stride
              time = data.loadUnaligned(as: timeval.self)
              stamped = true
            }
            header = CMSG_NXTHDR_portable(&message, current)
          }
          if !stamped { gettimeofday(&time, nil) }
          return received
        }
      }
    }
    return count
  }
}

/// A controller as the monitor channel describes it.
public struct MonitorAdapter: Sendable, Equatable {
  public let index: UInt16
  /// 0 primary, 1 AMP.
  public var type: UInt8 = 0
  /// The transport: 1 USB, 3 UART, … (capture-formats.md §4.2).
  public var bus: UInt8 = 0
  public var address = BDAddr(rawValue: 0)
  /// The kernel's name, "hci0".
  public var name = ""
  /// Company identifier from INDEX_INFO, when it came.
  public var manufacturer: UInt16?

  public init(index: UInt16) { self.index = index }
}

/// What the monitor says about controllers.
package enum MonitorAdapterEvent: Sendable, Equatable {
  /// After the opening burst: the controllers present when reading began (maybe none).
  case present([MonitorAdapter])
  case appeared(MonitorAdapter)
  case removed(MonitorAdapter)
}

// The CMSG macros, which Swift does not import.
// Safety: the first header only when the control buffer holds one whole.
private func CMSG_FIRSTHDR_portable(_ message: UnsafeMutablePointer<msghdr>) -> UnsafeMutablePointer<cmsghdr>? {
  guard Int(message.pointee.msg_controllen) >= MemoryLayout<cmsghdr>.size, let control = message.pointee.msg_control else { return nil }
  return control.assumingMemoryBound(to: cmsghdr.self)
}

// Safety: the next header only when it lies whole inside the control buffer (checked below).
private func CMSG_NXTHDR_portable(_ message: UnsafeMutablePointer<msghdr>, _ header: UnsafeMutablePointer<cmsghdr>) -> UnsafeMutablePointer<cmsghdr>? {
  let align = MemoryLayout<Int>.size
  let length = (Int(header.pointee.cmsg_len) + align - 1) & ~(align - 1)
  guard length > 0, let control = message.pointee.msg_control else { return nil }
  // Safety: compared with the buffer's end before it is handed back.
  let next = UnsafeMutableRawPointer(header) + length
  let end = control + Int(message.pointee.msg_controllen)
  guard next + MemoryLayout<cmsghdr>.size <= end else { return nil }
  return next.assumingMemoryBound(to: cmsghdr.self)
}
