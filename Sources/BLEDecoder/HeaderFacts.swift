import BLECore

/// What a frame's header line tells beyond its title, for frames ATT does not describe: the
/// parameters of an HCI command or event that say what was asked or what happened, what a data
/// packet or L2CAP frame carried, a signaling or SMP command, a note's text.
///
/// Typed values only: decoders record them, BLERender words them (`FrameDescription`), and the
/// title follows from the HCI fact, the record kind or the case (`Data`, `K-frame`, `SDU`, a
/// signaling or SMP command's name). Statuses and reasons are HCI error codes.
public enum HeaderFact: Sendable, Equatable {
  case none

  // MARK: Parameters shared by commands and events

  /// "handle 64"
  case handle(UInt16)
  /// A device address alone.
  case address(BDAddr)
  /// The outcome of a command (words: the error's name; "Success" for 0).
  case status(UInt8)
  /// Enable (true) or disable a feature.
  case toggle(Bool)
  /// A device name the capture carries, shown quoted.
  case deviceName(String)
  /// A count of bytes.
  case byteCount(Int)
  /// Time in baseband slots of 0.625 ms.
  case slots(UInt16)
  /// A connection handle and a length (SCO and ISO data).
  case handleLength(handle: UInt16, length: Int)
  /// An opcode without a name or a decoder (shown with its OGF and OCF).
  case unknownCommand(opcode: UInt16)
  /// An event code without a name or a decoder.
  case unknownEvent(code: UInt8)
  /// A record type no reader knows.
  case unknownRecord(type: UInt16)

  // MARK: LE commands

  /// Disconnect: the handle and why.
  case disconnect(handle: UInt16, reason: UInt8)
  /// A filter accept list entry for anonymous advertisers (address type 0xFF).
  case anonymousAdvertisers
  /// An advertising set, with the length of the data given to it.
  case advertisingSet(UInt8, bytes: Int?)
  /// LE Set Extended Advertising Enable: enable or disable `sets` sets (0: all).
  case advertisingSetsEnable(enable: Bool, sets: Int)
  /// Scan parameters: active or passive scanning (nil: a type without a name).
  case scanType(active: Bool?)
  case scanEnable(enable: Bool, filterDuplicates: Bool)
  /// A connection attempt: to `peer`, or to any device of the filter accept list (nil).
  case connect(peer: BDAddr?)
  case advertisingType(UInt8)

  // MARK: BR/EDR commands

  case acceptConnection(BDAddr, role: UInt8)
  /// An address and an error code given as a reason (Reject Connection Request).
  case refuse(BDAddr, reason: UInt8)
  case setEncryption(handle: UInt16, enabled: Bool)
  case featuresPage(handle: UInt16?, page: UInt8)
  /// IO Capability Request Reply and Response: the capability and authentication requirements.
  case ioCapability(BDAddr, capability: UInt8, authentication: UInt8)
  /// Hold or Sniff Mode: the interval range, in slots.
  case holdOrSniff(handle: UInt16, minimum: UInt16, maximum: UInt16)
  case switchRole(BDAddr, role: UInt8)
  /// Link policy settings bits, for one connection or the default.
  case linkPolicy(handle: UInt16?, settings: UInt16)
  /// Read or Delete Stored Link Key: one device's key, or all (nil).
  case storedLinkKey(BDAddr?)
  /// Write Stored Link Key, Return Link Keys: how many keys.
  case linkKeys(count: UInt8)
  case linkSupervisionTimeout(handle: UInt16?, slots: UInt16)
  case classOfDevice(UInt32)
  /// Inquiry access codes (LAPs).
  case accessCodes([UInt32])
  /// Inquiry: the access code, the length (×1.28 s), the most responses wanted (0: no limit).
  case inquiry(lap: UInt32, length: UInt8, responses: UInt8)
  /// Set Event Filter: the filter type, and the address it names.
  case eventFilter(type: UInt8, address: BDAddr?)
  /// Write Scan Enable: which scans (inquiry, page).
  case classicScanEnable(UInt8)
  /// Write Inquiry Scan Type, Write Page Scan Type.
  case classicScanType(UInt8)
  case inquiryMode(UInt8)

  // MARK: Events

  /// An address, then an outcome (Connection Complete, Simple Pairing Complete).
  case addressOutcome(BDAddr, status: UInt8)
  case disconnectionComplete(status: UInt8, reason: UInt8)
  case encryptionChange(status: UInt8, enabled: Bool)
  /// Command Complete: the command, and its status when the return parameters have one and it
  /// is an error.
  case commandComplete(opcode: UInt16, error: UInt8?)
  case commandStatus(opcode: UInt16, status: UInt8)
  /// Number Of Completed Packets: packets in all, on how many handles.
  case completedPackets(packets: Int, handles: Int)
  case leConnectionComplete(peer: BDAddr, role: UInt8)
  /// The first report of an advertising report event (`type` nil: extended).
  case advertisingReport(BDAddr, type: UInt8?, rssi: Int8)
  /// Connection parameters in force (units 1.25 ms and 10 ms).
  case connectionParameters(ConnectionParameters)
  case dataLength(transmitOctets: UInt16, receiveOctets: UInt16)
  case phys(transmit: UInt8, receive: UInt8)
  case channelSelectionAlgorithm(UInt8)
  case connectionRequest(BDAddr, linkType: UInt8, classOfDevice: UInt32)
  case remoteName(BDAddr, status: UInt8, name: String)
  case roleChange(BDAddr, status: UInt8, role: UInt8)
  case modeChange(mode: UInt8, interval: UInt16)
  case linkKeyNotification(BDAddr, keyType: UInt8)
  case maxSlots(UInt8)
  case pageScanRepetitionMode(BDAddr, mode: UInt8)
  /// A six-digit value shown to the user (User Confirmation Request, User Passkey Notification).
  case passkey(BDAddr, UInt32)
  case keypress(BDAddr, type: UInt8)
  case inquiryResults(count: UInt8, first: BDAddr?)
  case extendedInquiryResult(BDAddr, rssi: Int8, name: String?)
  case synchronousConnectionComplete(BDAddr, linkType: UInt8, status: UInt8)

  // MARK: Data

  /// ACL data that no upper layer describes: its boundary and length, and what reassembly made
  /// of it.
  case aclData(continuation: Bool, length: Int, reassembly: ACLReassemblyFact)
  /// ACL data on handle 0x0EDC that no connection event opened: the debug records Qualcomm
  /// controllers send Android's stack (not a connection; not L2CAP), `length` bytes.
  case vendorDebugRecord(handle: UInt16, length: Int)
  /// L2CAP data on a channel nothing decodes.
  case channelData(cid: UInt16, length: Int)
  /// Basic-mode data on a channel opened for `psm`, with no decoder.
  case psmData(psm: UInt16, length: Int)
  /// A K-frame of a credit-based channel: a part of an SDU, `have` of `expected` bytes.
  case kFrame(have: Int, expected: Int)
  /// A K-frame the channel could not place.
  case unplacedKFrame
  /// A whole SDU on a credit-based channel nothing decodes: its bytes in the frame's value
  /// bytes.
  case sdu(psm: UInt16, bytes: Range<Int>)
  /// The signaling commands of a PDU, and the code of one whose data did not decode (none of
  /// either: the PDU is empty).
  case signaling([SignalingCommand], unfinished: UInt8?)
  case securityManager(SMPCommandFact)
  /// An SDP PDU (PSM 0x0001 on BR/EDR).
  indirect case sdp(SDPFact)
  /// An RFCOMM frame (PSM 0x0003 on BR/EDR).
  indirect case rfcomm(RFCOMMFact)

  // MARK: Air (the LE link layer, sniffed)

  /// An advertising channel PDU (Core Vol 6 Part B §2.3): its type, the advertiser, the other
  /// device it names (a scanner, an initiator, a target), and the name it advertises.
  case advertisingPDU(type: UInt8, advertiser: BDAddr?, other: BDAddr?, name: String?)
  /// CONNECT_IND: who connects to whom, on which access address, at what interval (1.25 ms).
  case connectIndication(initiator: BDAddr, advertiser: BDAddr, advertiserType: AddressType, accessAddress: UInt32, interval: UInt16)
  /// A data channel PDU that is no LL control PDU and no L2CAP PDU was decoded from: LLID 1
  /// (continuation, or empty) or 2 (the start of an L2CAP PDU), its payload length, whether the
  /// payload is encrypted, what reassembly made of it.
  case dataPDU(llid: UInt8, length: Int, encrypted: Bool, reassembly: ACLReassemblyFact)
  /// A packet the sniffer found with a wrong CRC (`length`: its PDU's payload octets): shown,
  /// not decoded. Its receiver dropped it too, unacknowledged, so a good copy follows
  /// (Core Vol 6 Part B §4.5.9).
  case damagedAirPacket(advertising: Bool, length: Int)
  /// An LL control PDU (Core Vol 6 Part B §2.4.2).
  case linkControl(LinkControlFact)

  // MARK: Notes

  /// A controller added to the monitor: its name and address.
  case indexAdded(name: String, address: BDAddr)
  case indexInfo(BDAddr, manufacturer: UInt16)
  /// A note's text, after the name of who wrote it (a process, an ident) when there is one.
  case note(from: String?, text: String)
}

/// What became of an ACL packet's payload that no PDU was decoded from.
public enum ACLReassemblyFact: Sendable, Equatable {
  /// Cut by the capture (Android's filtered snoop), or decoded no further.
  case none
  /// A continuation with no PDU started.
  case dropped
  /// A part of a PDU: `have` bytes so far of `expected` (nil: the length is not known yet).
  case fragment(have: Int, expected: Int?)
  /// A repeat of the last packet its side sent (air captures): not decoded again.
  case retransmission
}

/// An SMP command (Core Vol 3 Part H §3), as far as its header line tells.
public enum SMPCommandFact: Sendable, Equatable {
  /// No code: the PDU is empty.
  case empty
  /// A command whose data did not decode, or that says nothing beyond its code.
  case code(UInt8)
  case pairing(code: UInt8, ioCapability: UInt8, oobData: UInt8, authRequirements: UInt8, maximumKeySize: UInt8)
  case pairingFailed(reason: UInt8)
  case centralIdentification(ediv: UInt16)
  /// `type` 0 public, 1 random static; others are not valid.
  case identityAddress(BDAddr, type: UInt8)
  case securityRequest(authRequirements: UInt8)
  case keypressNotification(type: UInt8)

  public var code: UInt8? {
    switch self {
    case .empty: return nil
    case .code(let code), .pairing(let code, _, _, _, _): return code
    case .pairingFailed: return 0x05
    case .centralIdentification: return 0x07
    case .identityAddress: return 0x09
    case .securityRequest: return 0x0B
    case .keypressNotification: return 0x0E
    }
  }
}

/// An LL control PDU, as far as its header line tells (Core Vol 6 Part B §2.4.2). Intervals in
/// 1.25 ms units, timeouts in 10 ms units; `instant` is the connection event it takes effect at.
public enum LinkControlFact: Sendable, Equatable {
  /// An opcode whose parameters the header line does not show (or that did not decode).
  case opcode(UInt8)
  case connectionUpdate(interval: UInt16, latency: UInt16, timeout: UInt16, instant: UInt16)
  case channelMap(used: Int, instant: UInt16)
  case terminate(reason: UInt8)
  /// LL_VERSION_IND: the Link Layer version, the company, the subversion.
  case version(version: UInt8, company: UInt16, subversion: UInt16)
  /// LL_REJECT_IND (`rejected` nil) and LL_REJECT_EXT_IND: the error code.
  case reject(rejected: UInt8?, error: UInt8)
  case unknownResponse(type: UInt8)
  /// LL_CONNECTION_PARAM_REQ and _RSP: the interval range, latency and timeout asked for.
  case connectionParameters(opcode: UInt8, minimum: UInt16, maximum: UInt16, latency: UInt16, timeout: UInt16)
  /// LL_LENGTH_REQ and _RSP: the most octets each way (receive, transmit).
  case length(opcode: UInt8, maxReceiveOctets: UInt16, maxReceiveTime: UInt16, maxTransmitOctets: UInt16, maxTransmitTime: UInt16)
  /// LL_PHY_REQ and _RSP: the PHYs preferred each way (bit 0 LE 1M, 1 LE 2M, 2 LE Coded).
  case phyPreferences(opcode: UInt8, transmit: UInt8, receive: UInt8)
  /// LL_PHY_UPDATE_IND: the PHY each way from the instant (0: unchanged).
  case phyUpdate(centralToPeripheral: UInt8, peripheralToCentral: UInt8, instant: UInt16)
  /// LL_FEATURE_REQ, _RSP, LL_PERIPHERAL_FEATURE_REQ: the features bit mask.
  case features(opcode: UInt8, mask: UInt64)
  /// LL_ENC_REQ: the key's Rand and EDIV (0 for a key from LE Secure Connections or an STK),
  /// the central's half of the session key diversifier and of the IV.
  case encryptionRequest(random: UInt64, ediv: UInt16, skd: UInt64, iv: UInt32)
  /// LL_ENC_RSP: the peripheral's halves.
  case encryptionResponse(skd: UInt64, iv: UInt32)

  public var opcode: UInt8 {
    switch self {
    case .opcode(let opcode): return opcode
    case .connectionUpdate: return 0x00
    case .channelMap: return 0x01
    case .terminate: return 0x02
    case .version: return 0x0C
    case .reject(let rejected, _): return rejected == nil ? 0x0D : 0x11
    case .unknownResponse: return 0x07
    case .connectionParameters(let opcode, _, _, _, _), .length(let opcode, _, _, _, _), .phyPreferences(let opcode, _, _), .features(let opcode, _):
      return opcode
    case .phyUpdate: return 0x18
    case .encryptionRequest: return 0x03
    case .encryptionResponse: return 0x04
    }
  }
}

/// What the sniffer said of an air packet, and where it travelled.
public struct AirFact: Sendable, Equatable {
  public var header: AirPacketHeader
  public var accessAddress: UInt32
  /// Where the key that decrypted the packet came from (`LinkKeyRing.Key.source`); nil when it
  /// was not encrypted, or not decrypted here.
  public var keySource: String?
  /// Whether it repeats its side's last packet (a retransmission: shown, not decoded again).
  public var isRetransmission = false
  /// The connection event it was sent in, as counted (nil when not counted: a link first seen
  /// mid-connection whose sniffer gives no count).
  public var event: UInt16?
  /// Packets of its side the sniffer missed just before it: a packet counter's jump, or 1 when
  /// its SN shows at least one went by.
  public var missedBefore: UInt16 = 0
  /// When the sniffer heard nothing on its link for longer than the link may be silent and
  /// this packet goes on with it: that silence, in milliseconds (the sniffer lost the link's
  /// hops; the devices did not lose the link); 0 otherwise. (Kept small: a frame's facts are
  /// copied and cleared on every packet.)
  public var silenceBefore: UInt32 = 0
  /// Whether it was stored already decrypted (MIC removed) although the link was encrypted.
  public var storedDecrypted = false
  /// Where the side that sent it (the frame's direction) comes from (data packets).
  public var directionSource = DirectionSource.sniffer

  /// Where a sniffed packet's sender comes from.
  public enum DirectionSource: UInt8, Sendable, Equatable {
    /// The sniffer's header says.
    case sniffer
    /// The connection event's rhythm: the central opens each event, then the sides alternate.
    case timing
    /// The ATT PDU it carries: requests, commands and confirmations come from the client,
    /// taken as the central; responses, notifications and indications from the server.
    case att
    /// The MIC verifies only as sent by this side (the sniffer's flag said the other).
    case mic

    /// The word in JSON (`from_source`).
    public var key: Name {
      switch self {
      case .sniffer: return "sniffer"
      case .timing: return "timing"
      case .att: return "att"
      case .mic: return "mic"
      }
    }
  }
  /// Whether it went on the advertising access address.
  public var isAdvertising: Bool { accessAddress == AirFact.advertisingAccessAddress }
  /// Core Vol 6 Part B §2.1.2.
  public static let advertisingAccessAddress: UInt32 = 0x8E89_BED6

  public init(header: AirPacketHeader, accessAddress: UInt32) {
    self.header = header
    self.accessAddress = accessAddress
  }

  /// What the link's lookup says of a data packet, in one write.
  @inline(__always) mutating func note(event: UInt16?, directionSource: DirectionSource) {
    self.event = event
    self.directionSource = directionSource
  }
}
