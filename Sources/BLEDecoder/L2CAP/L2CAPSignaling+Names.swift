import BLECore

/// Names of L2CAP signaling code points.
extension L2CAPSignaling {
  package static func rejectReasonName(_ reason: UInt16) -> Name? {
    switch reason {
    case 0x0000: return "Command not understood"
    case 0x0001: return "Signaling MTU exceeded"
    case 0x0002: return "Invalid CID in request"
    default: return nil
    }
  }

  /// Connection Response (and Create Channel Response) results §4.3.
  package static func connectionResultName(_ result: UInt16) -> Name? {
    switch result {
    case 0x0000: return "Connection successful"
    case 0x0001: return "Connection pending"
    case 0x0002: return "Connection refused – PSM not supported"
    case 0x0003: return "Connection refused – security block"
    case 0x0004: return "Connection refused – no resources available"
    case 0x0006: return "Connection refused – invalid Source CID"
    case 0x0007: return "Connection refused – Source CID already allocated"
    default: return nil
    }
  }

  package static func connectionStatusName(_ status: UInt16) -> Name? {
    switch status {
    case 0x0000: return "No further information available"
    case 0x0001: return "Authentication pending"
    case 0x0002: return "Authorization pending"
    default: return nil
    }
  }

  package static func configurationResultName(_ result: UInt16) -> Name? {
    switch result {
    case 0x0000: return "Success"
    case 0x0001: return "Failure – unacceptable parameters"
    case 0x0002: return "Failure – rejected"
    case 0x0003: return "Failure – unknown options"
    case 0x0004: return "Pending"
    case 0x0005: return "Failure – flow spec rejected"
    default: return nil
    }
  }

  package static func optionName(_ type: UInt8) -> Name? {
    switch type {
    case 0x01: return "MTU"
    case 0x02: return "Flush Timeout"
    case 0x03: return "Quality of Service"
    case 0x04: return "Retransmission and Flow Control"
    case 0x05: return "Frame Check Sequence"
    case 0x06: return "Extended Flow Specification"
    case 0x07: return "Extended Window Size"
    default: return nil
    }
  }

  package static func modeName(_ mode: UInt8) -> Name? {
    switch mode {
    case 0x00: return "Basic"
    case 0x01: return "Retransmission"
    case 0x02: return "Flow Control"
    case 0x03: return "Enhanced Retransmission"
    case 0x04: return "Streaming"
    default: return nil
    }
  }

  package static func serviceTypeName(_ type: UInt8) -> Name? {
    switch type {
    case 0x00: return "No traffic"
    case 0x01: return "Best effort"
    case 0x02: return "Guaranteed"
    default: return nil
    }
  }

  package static func infoTypeName(_ type: UInt16) -> Name? {
    switch type {
    case 0x0001: return "Connectionless MTU"
    case 0x0002: return "Extended features supported"
    case 0x0003: return "Fixed channels supported"
    default: return nil
    }
  }

  /// LE Credit Based Connection Response results §4.23.
  package static func leCreditResultName(_ result: UInt16) -> Name? {
    switch result {
    case 0x0000: return "Connection successful"
    case 0x0002: return "Connection refused – SPSM not supported"
    case 0x0004: return "Connection refused – no resources available"
    case 0x0005: return "Connection refused – insufficient authentication"
    case 0x0006: return "Connection refused – insufficient authorization"
    case 0x0007: return "Connection refused – encryption key size too short"
    case 0x0008: return "Connection refused – insufficient encryption"
    case 0x0009: return "Connection refused – invalid Source CID"
    case 0x000A: return "Connection refused – Source CID already allocated"
    case 0x000B: return "Connection refused – unacceptable parameters"
    default: return nil
    }
  }

  /// Credit Based (ECRED) Connection Response results §4.26.
  package static func creditBasedResultName(_ result: UInt16) -> Name? {
    switch result {
    case 0x0000: return "All connections successful"
    case 0x0002: return "All connections refused – SPSM not supported"
    case 0x0004: return "Some connections refused – insufficient resources available"
    case 0x0005: return "All connections refused – insufficient authentication"
    case 0x0006: return "All connections refused – insufficient authorization"
    case 0x0007: return "All connections refused – encryption key size too short"
    case 0x0008: return "All connections refused – insufficient encryption"
    case 0x0009: return "Some connections refused – invalid Source CID"
    case 0x000A: return "Some connections refused – Source CID already allocated"
    case 0x000B: return "All connections refused – unacceptable parameters"
    case 0x000C: return "All connections refused – invalid parameters"
    case 0x000D: return "All connections pending – no further information available"
    case 0x000E: return "All connections pending – authentication pending"
    case 0x000F: return "All connections pending – authorization pending"
    default: return nil
    }
  }

  /// Credit Based Reconfigure Response results §4.28.
  package static func reconfigureResultName(_ result: UInt16) -> Name? {
    switch result {
    case 0x0000: return "Reconfiguration successful"
    case 0x0001: return "Reconfiguration failed – reduction in size of MTU not allowed"
    case 0x0002: return "Reconfiguration failed – reduction in size of MPS not allowed for more than one channel"
    case 0x0003: return "Reconfiguration failed – one or more Destination CIDs invalid"
    case 0x0004: return "Reconfiguration failed – other unacceptable parameters"
    default: return nil
    }
  }

  /// Fixed PSM / SPSM assignments (Assigned Numbers §2.x, L2CAP PSMs).
  package static func psmName(_ psm: UInt16) -> Name? {
    switch psm {
    case 0x0001: return "SDP"
    case 0x0003: return "RFCOMM"
    case 0x0005: return "TCS-BIN"
    case 0x0007: return "TCS-BIN-CORDLESS"
    case 0x000F: return "BNEP"
    case 0x0011: return "HID Control"
    case 0x0013: return "HID Interrupt"
    case 0x0015: return "UPnP"
    case 0x0017: return "AVCTP"
    case 0x0019: return "AVDTP"
    case 0x001B: return "AVCTP Browsing"
    case 0x001D: return "UDI C-Plane"
    case 0x001F: return "ATT"
    case 0x0021: return "3DSP"
    case 0x0023: return "IPSP"
    case 0x0025: return "OTS"
    case 0x0027: return "EATT"
    default: return nil
    }
  }
}
