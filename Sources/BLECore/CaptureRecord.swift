/// Which way a packet crossed the host–controller interface (btsnoop wording).
public enum Direction: Sendable, Hashable {
  case hostToController
  case controllerToHost
}

/// Where a text record came from.
public enum NoteKind: String, Sendable, Hashable {
  /// Linux monitor SYSTEM_NOTE.
  case system
  /// Linux monitor USER_LOGGING (priority, ident, message).
  case userLogging = "user_logging"
  /// PacketLogger syslog record (0xF7).
  case syslog
  /// PacketLogger kernel (0xF8), kernel debug (0xF9), error (0xFA), power (0xFB), note (0xFC),
  /// config (0xFD) and new controller (0xFE) text records.
  case kernel, kernelDebug = "kernel_debug", error, power, note, config
  case newController = "new_controller"
  /// Vendor diagnostic bytes (monitor VENDOR_DIAG, PacketLogger 0x0B).
  case vendorDiagnostic = "vendor_diagnostic"
}

/// What a record carries, normalized across formats (the Linux monitor opcodes' vocabulary).
///
/// The switches that name every kind are here (the JSON and text names, the monitor opcode):
/// a new kind is answered for in this file. Elsewhere code asks these properties, or handles
/// the kinds it knows and leaves the rest to a `default`.
public enum PacketKind: Sendable, Hashable {
  case command, event, acl, sco, iso
  case note(NoteKind)
  case indexAdded, indexRemoved, indexOpened, indexClosed, indexInfo
  /// Monitor CTRL_OPEN/CLOSE/COMMAND/EVENT (management sockets), with the monitor opcode.
  case control(UInt16)
  /// A Bluetooth LE link-layer packet sniffed over the air (pcap link types 251, 256, 272, 157,
  /// PPI 192): `AirPacketHeader` (what the sniffer knew of how it travelled), then the packet
  /// from its access address to its CRC.
  case airPacket
  /// Anything else, with the format's own code (H4 indicator, monitor opcode, PacketLogger type).
  case other(UInt16)

  /// The H4 packet indicator for HCI packets.
  public init(h4Indicator: UInt8) {
    switch h4Indicator {
    case 0x01: self = .command
    case 0x02: self = .acl
    case 0x03: self = .sco
    case 0x04: self = .event
    case 0x05: self = .iso
    default: self = .other(UInt16(h4Indicator))
    }
  }

  public var h4Indicator: UInt8? {
    switch self {
    case .command: return 0x01
    case .acl: return 0x02
    case .sco: return 0x03
    case .event: return 0x04
    case .iso: return 0x05
    default: return nil
    }
  }

  /// The value of `type` in JSON output.
  public var jsonName: Name {
    switch self {
    case .command: return "command"
    case .event: return "event"
    case .acl: return "acl"
    case .sco: return "sco"
    case .iso: return "iso"
    case .note: return "note"
    case .indexAdded: return "index_added"
    case .indexRemoved: return "index_removed"
    case .indexOpened: return "index_opened"
    case .indexClosed: return "index_closed"
    case .indexInfo: return "index_info"
    case .control: return "control"
    case .airPacket: return "air"
    case .other: return "other"
    }
  }

  /// The protocol column of text output when no layer above HCI was decoded.
  public var textLabel: Name {
    switch self {
    case .command: return "CMD"
    case .event: return "EVT"
    case .acl: return "ACL"
    case .sco: return "SCO"
    case .iso: return "ISO"
    case .note: return "NOTE"
    case .indexAdded, .indexRemoved, .indexOpened, .indexClosed, .indexInfo: return "INDEX"
    case .control: return "CTRL"
    case .airPacket: return "LL"
    case .other: return "OTHER"
    }
  }

  /// The header title of a record whose title does not come from what it decodes to ("New
  /// Index", "Syslog"); empty for HCI and air packets.
  public var recordTitle: Name {
    switch self {
    case .command, .event, .acl, .sco, .iso, .airPacket: return ""
    case .note(let note):
      switch note {
      case .system: return "System Note"
      case .userLogging: return "User Logging"
      case .syslog: return "Syslog"
      case .kernel: return "Kernel"
      case .kernelDebug: return "Kernel Debug"
      case .error: return "Error"
      case .power: return "Power"
      case .note: return "Note"
      case .config: return "Config"
      case .newController: return "New Controller"
      case .vendorDiagnostic: return "Vendor Diagnostic"
      }
    case .indexAdded: return "New Index"
    case .indexRemoved: return "Delete Index"
    case .indexOpened: return "Open Index"
    case .indexClosed: return "Close Index"
    case .indexInfo: return "Index Info"
    case .control(let opcode):
      switch opcode {
      case 14: return "Control Open"
      case 15: return "Control Close"
      case 16: return "Control Command"
      default: return "Control Event"
      }
    case .other: return "Unknown Record"
    }
  }

  public var isHCIPacket: Bool { h4Indicator != nil }
}

/// One record of any capture format, normalized.
///
/// `bytes` hold the packet without any framing: no H4 indicator, no monitor header, no
/// PacketLogger type byte. The kind says what they are.
public struct CaptureRecord: Sendable {
  /// Microseconds since the Unix epoch (formats with nanoseconds are rounded down).
  public var timestamp: Int64
  /// Controller index (hci0 = 0). 0 for formats that carry one controller;
  /// `CaptureRecord.noController` for system records.
  public var adapter: UInt16
  /// Absent when the format does not say.
  public var direction: Direction?
  public var kind: PacketKind
  public var bytes: [UInt8]
  /// Length of the packet as it was on the link; more than `bytes.count` when the writer cut it.
  public var originalLength: Int
  /// Byte offset of the record in the capture file (0 when unknown).
  public var fileOffset: Int64
  /// Whether the reader skipped damage to reach this record (its `damage.last` says where).
  public var followsDamage = false
  /// Set by the reader on the first record it had to time otherwise than recorded (the
  /// capture's record clock is broken), once: why, and how it was timed instead.
  public var clockRepair: ClockRepair? = nil

  /// Why a reader stopped trusting a capture's record times, and what it did instead.
  public struct ClockRepair: Sendable, Equatable {
    public enum Fault: UInt8, Sendable { case microsecondsPastASecond, goesBack }
    public var fault: Fault
    /// Timed by the sniffer's own clock (else only kept from going back).
    public var bySnifferClock: Bool
    public init(fault: Fault, bySnifferClock: Bool) {
      self.fault = fault
      self.bySnifferClock = bySnifferClock
    }
  }

  public static let noController: UInt16 = 0xFFFF

  public init(
    timestamp: Int64, adapter: UInt16 = 0, direction: Direction?, kind: PacketKind, bytes: [UInt8],
    originalLength: Int? = nil, fileOffset: Int64 = 0
  ) {
    self.timestamp = timestamp
    self.adapter = adapter
    self.direction = direction
    self.kind = kind
    self.bytes = bytes
    self.originalLength = originalLength ?? bytes.count
    self.fileOffset = fileOffset
  }
}

/// Linux HCI monitor channel opcodes (btsnoop datalink 2001 flags, pcap DLT 254 header).
public enum MonitorOpcode {
  /// Maps a monitor opcode to a record kind and direction.
  public static func kind(_ opcode: UInt16) -> (PacketKind, Direction?) {
    switch opcode {
    case 0: return (.indexAdded, nil)
    case 1: return (.indexRemoved, nil)
    case 2: return (.command, .hostToController)
    case 3: return (.event, .controllerToHost)
    case 4: return (.acl, .hostToController)
    case 5: return (.acl, .controllerToHost)
    case 6: return (.sco, .hostToController)
    case 7: return (.sco, .controllerToHost)
    case 8: return (.indexOpened, nil)
    case 9: return (.indexClosed, nil)
    case 10: return (.indexInfo, nil)
    case 11: return (.note(.vendorDiagnostic), nil)
    case 12: return (.note(.system), nil)
    case 13: return (.note(.userLogging), nil)
    case 14...17: return (.control(opcode), nil)
    case 18: return (.iso, .hostToController)
    case 19: return (.iso, .controllerToHost)
    default: return (.other(opcode), nil)
    }
  }

  /// The transport a NEW_INDEX message names (capture-formats.md §4.2).
  public static func busName(_ bus: UInt8) -> Name? {
    switch bus {
    case 0: return "virtual"
    case 1: return "USB"
    case 2: return "PC Card"
    case 3: return "UART"
    case 4: return "RS-232"
    case 5: return "PCI"
    case 6: return "SDIO"
    case 7: return "SPI"
    case 8: return "I2C"
    case 9: return "SMD"
    case 10: return "VIRTIO"
    case 11: return "IPC"
    default: return nil
    }
  }

  /// The monitor opcode for a kind and direction, for writers; nil when there is none.
  public static func opcode(for kind: PacketKind, direction: Direction?) -> UInt16? {
    let tx = direction != .controllerToHost
    switch kind {
    case .indexAdded: return 0
    case .indexRemoved: return 1
    case .command: return 2
    case .event: return 3
    case .acl: return tx ? 4 : 5
    case .sco: return tx ? 6 : 7
    case .indexOpened: return 8
    case .indexClosed: return 9
    case .indexInfo: return 10
    case .note(.vendorDiagnostic): return 11
    case .note(.userLogging): return 13
    case .note: return 12
    case .control(let code): return code
    case .iso: return tx ? 18 : 19
    case .airPacket: return nil
    case .other(let code): return code
    }
  }
}
