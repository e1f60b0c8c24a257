import BLECore

/// Constants of the btsnoop format (shared/reference/capture-formats.md §1).
public enum BTSnoopFormat {
  public static let magic: [UInt8] = Array("btsnoop".utf8) + [0]
  public static let headerSize = 16
  public static let recordHeaderSize = 24
  /// btsnoop timestamps count microseconds from 0000-01-01; this is 1970-01-01 on that scale.
  public static let unixEpochOffset: Int64 = 0x00DC_DDB3_0F2F_8000

  public enum Datalink: UInt32, Sendable {
    case h1 = 1001, h4 = 1002, bcsp = 1003, h5 = 1004, linuxMonitor = 2001, simulator = 2002
  }
}

/// Reads btsnoop version 1 with datalinks 1001 (H1), 1002 (H4) and 2001 (Linux monitor).
public final class BTSnoopReader: CaptureReader {
  let input: InputSource
  public let datalink: BTSnoopFormat.Datalink
  public let format: CaptureFormat
  var frames = 0

  init(_ input: InputSource) throws(CaptureError) {
    self.input = input
    guard try input.fill(BTSnoopFormat.headerSize) >= BTSnoopFormat.headerSize else {
      throw .damaged(frame: 0, offset: 0, reason: "btsnoop header is \(input.available) bytes, needs 16")
    }
    let version = input.peekUInt32BE(8)
    let code = input.peekUInt32BE(12)
    guard version == 1 else { throw .unsupportedVersion(format: "btsnoop", version: version) }
    switch BTSnoopFormat.Datalink(rawValue: code) {
    case .h1?: datalink = .h1
    case .h4?: datalink = .h4
    case .linuxMonitor?: datalink = .linuxMonitor
    case .bcsp?: throw .unsupportedLinkType(format: "btsnoop", linkType: code, name: "BCSP")
    case .h5?: throw .unsupportedLinkType(format: "btsnoop", linkType: code, name: "H5 three-wire UART")
    case .simulator?: throw .unsupportedLinkType(format: "btsnoop", linkType: code, name: "BlueZ simulator PHY")
    case nil: throw .unsupportedLinkType(format: "btsnoop", linkType: code, name: "unknown datalink")
    }
    let detail: String
    switch datalink {
    case .h1: detail = "datalink 1001 (H1)"
    case .h4: detail = "datalink 1002 (H4)"
    default: detail = "datalink 2001 (Linux monitor)"
    }
    format = CaptureFormat(name: "btsnoop", detail: detail)
    input.consume(BTSnoopFormat.headerSize)
  }

  public func next() throws(CaptureError) -> CaptureRecord? {
    var record = CaptureRecord(timestamp: 0, direction: nil, kind: .other(0), bytes: [])
    return try next(into: &record) ? record : nil
  }

  public func next(into record: inout CaptureRecord) throws(CaptureError) -> Bool {
    let recordOffset = input.position
    let have = try input.fill(BTSnoopFormat.recordHeaderSize)
    if have == 0 { return false }
    let frame = frames + 1
    guard have >= BTSnoopFormat.recordHeaderSize else {
      throw .damaged(frame: frame, offset: recordOffset, reason: "truncated record header (\(have) of 24 bytes)")
    }
    let originalLength = input.peekUInt32BE(0)
    let includedLength = input.peekUInt32BE(4)
    let flags = input.peekUInt32BE(8)
    let rawTime = Int64(bitPattern: input.peekUInt64BE(16))
    guard includedLength <= CaptureFile.maximumPacketLength else {
      throw .damaged(frame: frame, offset: recordOffset, reason: "impossible included length \(includedLength) (at most \(CaptureFile.maximumPacketLength))")
    }
    let length = Int(includedLength)
    let total = BTSnoopFormat.recordHeaderSize + length
    let got = try input.fill(total)
    guard got >= total else {
      throw .damaged(frame: frame, offset: recordOffset, reason: "truncated record: needs \(length) bytes of packet data, only \(got - BTSnoopFormat.recordHeaderSize) remain")
    }
    frames = frame
    record.timestamp = rawTime &- BTSnoopFormat.unixEpochOffset
    record.fileOffset = recordOffset
    record.adapter = 0
    switch datalink {
    case .h4:
      record.direction = flags & 1 == 0 ? .hostToController : .controllerToHost
      if length == 0 {
        record.kind = .other(0xFFFF)
        record.bytes.removeAll(keepingCapacity: true)
      } else {
        let kind = PacketKind(h4Indicator: input.peek(BTSnoopFormat.recordHeaderSize))
        // H4 packets of a known kind drop their indicator; unknown ones keep every byte.
        let skip = kind.isHCIPacket ? 1 : 0
        record.kind = kind
        input.copy(from: BTSnoopFormat.recordHeaderSize + skip, count: length - skip, into: &record.bytes)
      }
      record.originalLength = max(Int(originalLength) - 1, 0)
    case .h1:
      switch flags & 3 {
      case 2: (record.kind, record.direction) = (.command, .hostToController)
      case 3: (record.kind, record.direction) = (.event, .controllerToHost)
      case 0: (record.kind, record.direction) = (.acl, .hostToController)
      default: (record.kind, record.direction) = (.acl, .controllerToHost)
      }
      input.copy(from: BTSnoopFormat.recordHeaderSize, count: length, into: &record.bytes)
      record.originalLength = Int(originalLength)
    default:
      (record.kind, record.direction) = MonitorOpcode.kind(UInt16(truncatingIfNeeded: flags))
      record.adapter = UInt16(truncatingIfNeeded: flags >> 16)
      input.copy(from: BTSnoopFormat.recordHeaderSize, count: length, into: &record.bytes)
      record.originalLength = Int(originalLength)
    }
    input.consume(total)
    return true
  }
}
