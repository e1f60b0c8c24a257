import BLECore

// Typed facts of the BR/EDR protocols on L2CAP dynamic channels (SDP on PSM 0x0001, RFCOMM on
// PSM 0x0003), for the header line (`HeaderFact.sdp`, `.rfcomm`) and analyses.

/// An SDP PDU (Core Vol 3 Part B §4), as far as its header line tells.
public struct SDPFact: Sendable, Equatable {
  public var pdu: UInt8
  public var transaction: UInt16
  public var detail: Detail = .none
  /// Whether it carries a continuation state: a request that continues a response, or a
  /// response that another PDU continues.
  public var continuation = false

  public enum Detail: Sendable, Equatable {
    /// Nothing beyond the PDU ID (it did not decode further).
    case none
    case error(code: UInt16)
    /// Service Search Request (`attributes` nil) and Service Search Attribute Request: the UUIDs
    /// searched for and the attribute IDs asked for (a single ID as a one-value range).
    case search(pattern: [BluetoothUUID], attributes: [ClosedRange<UInt16>]?)
    case attributeRequest(handle: UInt32, attributes: [ClosedRange<UInt16>])
    /// Service Search Response: the records found in all, and the handles this PDU lists.
    case handles(total: UInt16, handles: [UInt32])
    /// A part of a response split over several PDUs (`index` from 1): the attribute list
    /// bytes it adds, and those held so far (nil: not joined).
    case part(index: Int, bytes: Int, held: Int?)
    /// A whole Service Attribute or Service Search Attribute Response: its records, and, when
    /// it was joined from several PDUs, the frame of the first and how many there were.
    case records([SDPRecordFact], firstFrame: Int?, parts: Int)
  }

  public init(pdu: UInt8, transaction: UInt16) {
    self.pdu = pdu
    self.transaction = transaction
  }
}

/// What one service record says of the service, for header lines and the RFCOMM channels'
/// names: its first service class, its name, and where it is reached.
public struct SDPRecordFact: Sendable, Equatable {
  public var handle: UInt32?
  /// The first UUID of its ServiceClassIDList.
  public var serviceClass: BluetoothUUID?
  /// ServiceName in the record's first language.
  public var name: String?
  /// The RFCOMM server channel and the L2CAP PSM of its ProtocolDescriptorList.
  public var rfcommChannel: UInt8?
  public var psm: UInt16?
  /// The first profile of its BluetoothProfileDescriptorList, and that profile's version
  /// (major in the high byte, minor in the low).
  public var profile: BluetoothUUID?
  public var profileVersion: UInt16?

  public init() {}
}

/// An RFCOMM frame (ETSI TS 07.10 as the RFCOMM specification adopts it), as far as its
/// header line tells.
public struct RFCOMMFact: Sendable, Equatable {
  /// The control field without the P/F bit: 0x2F SABM, 0x63 UA, 0x0F DM, 0x43 DISC, 0xEF UIH.
  public var frameType: UInt8
  public var dlci: UInt8
  public var pollFinal: Bool
  /// Credits a UIH frame gives (credit-based flow control).
  public var credits: UInt8?
  /// The service the DLCI's server channel was advertised as (SDP, earlier in the capture).
  public var service: BluetoothUUID?
  public var content: Content = .none

  public enum Content: Sendable, Equatable {
    case none
    /// A multiplexer control message on DLCI 0.
    case multiplexer(RFCOMMMultiplexerFact)
    /// UIH data that reads as text (AT commands and results, NMEA, consoles).
    case text(String)
    /// UIH data that does not: its length and its first bytes.
    case bytes(count: Int, prefix: [UInt8])
  }

  /// The server channel (the DLCI without its direction bit).
  public var channel: UInt8 { dlci >> 1 }

  public init(frameType: UInt8, dlci: UInt8, pollFinal: Bool) {
    self.frameType = frameType
    self.dlci = dlci
    self.pollFinal = pollFinal
  }
}

/// A multiplexer control message (TS 07.10 §5.4.6.3, RFCOMM §6.5): `type` is the six type bits
/// (0x20 PN, 0x38 MSC, 0x24 RPN, 0x14 RLS, 0x08 Test, 0x28 FCon, 0x18 FCoff, 0x04 NSC);
/// `command` its C/R bit.
public struct RFCOMMMultiplexerFact: Sendable, Equatable {
  public var type: UInt8
  public var command: Bool
  public var detail: Detail = .none

  public enum Detail: Sendable, Equatable {
    case none
    /// PN: the DLCI, the convergence layer (0xF: credit-based flow control asked for; 0xE:
    /// granted; 0: not used), priority, maximum frame size, initial credits.
    case parameters(dlci: UInt8, convergence: UInt8, priority: UInt8, maxFrameSize: UInt16, credits: UInt8)
    /// MSC: the DLCI, the V.24 signals octet, and the break octet when sent.
    case modemStatus(dlci: UInt8, signals: UInt8, breakSignal: UInt8?)
    /// RPN: the DLCI and, unless it only asks, the baud rate code.
    case portNegotiation(dlci: UInt8, baudRate: UInt8?)
    /// RLS: the DLCI and the line status octet.
    case lineStatus(dlci: UInt8, status: UInt8)
    /// Test: how many bytes it echoes.
    case test(bytes: Int)
    /// NSC: the type octet of the command not supported.
    case notSupported(typeOctet: UInt8)
  }

  public init(type: UInt8, command: Bool) {
    self.type = type
    self.command = command
  }
}
