import BLECore

// Alert Level 0x2A06 (Immediate Alert 0x1802 and Link Loss 0x1803 services; the GATT
// Specification Supplement's alert_level): one byte.

/// Alert Level 0x2A06: 0 No Alert, 1 Mild Alert, 2 High Alert; 3–255 reserved.
public struct AlertLevel: CharacteristicValue, Equatable {
  public var level: UInt8

  public init(level: UInt8) { self.level = level }

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    level = try reader.readUInt8()
  }

  public var name: Name? { Self.name(level) }

  public static func name(_ level: UInt8) -> Name? {
    switch level {
    case 0: return "No Alert"
    case 1: return "Mild Alert"
    case 2: return "High Alert"
    default: return nil
    }
  }

  public static let decoder = CharacteristicDecoder(uuid16: 0x2A06, key: "alert_level", AlertLevel.self, summarySaysItAll: true)

  public func writeFields(to fields: inout FieldList, context: ValueContext) {
    fields.code("level", "Alert level", level, width: 2, name: name)
  }

  public func summarize(into summary: inout SummaryLine, context: ValueContext) {
    if let name {
      summary.append(.text(name))
    } else {
      summary.append(.text("reserved alert level "))
      summary.append(.number(Int(level)))
    }
  }

  public func diagnose(into diagnostics: inout [Diagnostic], context: ValueContext) {
    if name == nil { ProfileSupport.add(.profileReservedValue, &diagnostics, "alert level \(level) is reserved") }
  }
}

extension ProfileRegistry {
  /// This file's decoders: adding one here registers it.
  static let alerts: [CharacteristicDecoder] = [AlertLevel.decoder]
}
