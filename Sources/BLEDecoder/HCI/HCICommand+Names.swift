import BLECore

// MARK: - Names
extension HCICommand {
  /// Names of the set bits of `value`, comma-separated; unnamed bits as "reserved 0x..".
  package static func bitText(_ value: UInt64, _ names: [(bit: UInt64, name: Name)]) -> String {
    var text = ""
    var known: UInt64 = 0
    for entry in names {
      known |= entry.bit
      if value & entry.bit != 0 {
        if !text.isEmpty { text += ", " }
        text += entry.name.description
      }
    }
    let unknown = value & ~known
    if unknown != 0 {
      if !text.isEmpty { text += ", " }
      text += "reserved " + Hex.prefixed(unknown, width: unknown > 0xFF ? 4 : 2)
    }
    return text.isEmpty ? "none" : text
  }

  static let phyBits: [(bit: UInt64, name: Name)] = [(1, "LE 1M"), (2, "LE 2M"), (4, "LE Coded")]
  static let allPhysBits: [(bit: UInt64, name: Name)] = [(1, "No TX preference"), (2, "No RX preference")]
  static let channelBits: [(bit: UInt64, name: Name)] = [(1, "37"), (2, "38"), (4, "39")]
  static let eventPropertyBits: [(bit: UInt64, name: Name)] = [
    (0x01, "Connectable"), (0x02, "Scannable"), (0x04, "Directed"), (0x08, "High duty cycle"),
    (0x10, "Legacy PDUs"), (0x20, "Anonymous"), (0x40, "Include TX power"),
  ]

  /// Core versions as used by HCI_Version and LMP_Version (Assigned Numbers §2.1).
  package static func coreVersionName(_ version: UInt8) -> Name? {
    switch version {
    case 0x00: return "1.0b"
    case 0x01: return "1.1"
    case 0x02: return "1.2"
    case 0x03: return "2.0+EDR"
    case 0x04: return "2.1+EDR"
    case 0x05: return "3.0+HS"
    case 0x06: return "4.0"
    case 0x07: return "4.1"
    case 0x08: return "4.2"
    case 0x09: return "5.0"
    case 0x0A: return "5.1"
    case 0x0B: return "5.2"
    case 0x0C: return "5.3"
    case 0x0D: return "5.4"
    case 0x0E: return "6.0"
    case 0x0F: return "6.1"
    default: return nil
    }
  }

  package static func enableName(_ value: UInt8) -> Name? {
    switch value {
    case 0: return "Disabled"
    case 1: return "Enabled"
    default: return nil
    }
  }

  package static func filterDuplicatesName(_ value: UInt8) -> Name? {
    switch value {
    case 0: return "Disabled"
    case 1: return "Enabled"
    case 2: return "Enabled, reset each scan period"
    default: return nil
    }
  }

  package static func scanTypeName(_ value: UInt8) -> Name? {
    switch value {
    case 0: return "Passive"
    case 1: return "Active"
    default: return nil
    }
  }

  package static func ownAddressTypeName(_ value: UInt8) -> Name? {
    switch value {
    case 0: return "Public"
    case 1: return "Random"
    case 2: return "Resolvable private, else public"
    case 3: return "Resolvable private, else random"
    default: return nil
    }
  }

  package static func scanningFilterPolicyName(_ value: UInt8) -> Name? {
    switch value {
    case 0: return "Basic unfiltered"
    case 1: return "Basic filtered (accept list)"
    case 2: return "Extended unfiltered"
    case 3: return "Extended filtered (accept list)"
    default: return nil
    }
  }

  package static func initiatorFilterPolicyName(_ value: UInt8) -> Name? {
    switch value {
    case 0: return "Peer address"
    case 1: return "Filter accept list"
    default: return nil
    }
  }

  package static func advertisingFilterPolicyName(_ value: UInt8) -> Name? {
    switch value {
    case 0: return "Scan and connect from any"
    case 1: return "Scan from accept list, connect from any"
    case 2: return "Scan from any, connect from accept list"
    case 3: return "Scan and connect from accept list"
    default: return nil
    }
  }

  package static func advertisingTypeName(_ value: UInt8) -> Name? {
    switch value {
    case 0: return "ADV_IND"
    case 1: return "ADV_DIRECT_IND (high duty cycle)"
    case 2: return "ADV_SCAN_IND"
    case 3: return "ADV_NONCONN_IND"
    case 4: return "ADV_DIRECT_IND (low duty cycle)"
    default: return nil
    }
  }

  package static func phyName(_ value: UInt8) -> Name? {
    switch value {
    case 1: return "LE 1M"
    case 2: return "LE 2M"
    case 3: return "LE Coded"
    default: return nil
    }
  }

  /// The label of the parameter set for PHY bit `bit` (bit 0 LE 1M, 1 LE 2M, 2 LE Coded).
  static func phyLabel(_ bit: UInt8) -> Name {
    switch bit {
    case 0: return "LE 1M"
    case 1: return "LE 2M"
    case 2: return "LE Coded"
    default: return "Reserved PHY"
    }
  }

  package static func phyOptionsName(_ value: UInt16) -> Name? {
    switch value {
    case 0: return "No preferred coding"
    case 1: return "Prefer S=2"
    case 2: return "Prefer S=8"
    default: return nil
    }
  }

  package static func advertisingPHYOptionsName(_ value: UInt8) -> Name? {
    switch value {
    case 0: return "No preference"
    case 1: return "Prefer S=2"
    case 2: return "Prefer S=8"
    case 3: return "Require S=2"
    case 4: return "Require S=8"
    default: return nil
    }
  }

  package static func dataOperationName(_ value: UInt8) -> Name? {
    switch value {
    case 0: return "Intermediate fragment"
    case 1: return "First fragment"
    case 2: return "Last fragment"
    case 3: return "Complete data"
    case 4: return "Unchanged data"
    default: return nil
    }
  }

  package static func fragmentPreferenceName(_ value: UInt8) -> Name? {
    switch value {
    case 0: return "Controller may fragment"
    case 1: return "Controller should not fragment"
    default: return nil
    }
  }

  package static func privacyModeName(_ value: UInt8) -> Name? {
    switch value {
    case 0: return "Network privacy"
    case 1: return "Device privacy"
    default: return nil
    }
  }

  package static func transmitPowerLevelTypeName(_ value: UInt8) -> Name? {
    switch value {
    case 0: return "Current"
    case 1: return "Maximum"
    default: return nil
    }
  }

  package static func flowControlName(_ value: UInt8) -> Name? {
    switch value {
    case 0: return "Off"
    case 1: return "ACL on, SCO off"
    case 2: return "ACL off, SCO on"
    case 3: return "ACL and SCO on"
    default: return nil
    }
  }
}
