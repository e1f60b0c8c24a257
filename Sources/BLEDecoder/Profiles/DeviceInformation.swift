import BLECore

// Device Information service 0x180A: System ID 0x2A23, the strings 0x2A24–0x2A29, the
// IEEE 11073-20601 Regulatory Certification Data List 0x2A2A and PnP ID 0x2A50.
//
// The corresponding specification is the Device Information Service 1.1 and the GATT
// Specification Supplement.

// The Device Information strings (UTF-8, no terminator): field `value`, summary the text.

/// Model Number String 0x2A24.
public struct ModelNumberString: TextCharacteristic, Equatable {
  public static let label: Name = "Model number"
  public var string: UTF8Text
  public init(string: UTF8Text) { self.string = string }
  public static let decoder = CharacteristicDecoder(uuid16: 0x2A24, key: "model_number_string", ModelNumberString.self, summarySaysItAll: true)
}

/// Serial Number String 0x2A25.
public struct SerialNumberString: TextCharacteristic, Equatable {
  public static let label: Name = "Serial number"
  public var string: UTF8Text
  public init(string: UTF8Text) { self.string = string }
  public static let decoder = CharacteristicDecoder(uuid16: 0x2A25, key: "serial_number_string", SerialNumberString.self, summarySaysItAll: true)
}

/// Firmware Revision String 0x2A26.
public struct FirmwareRevisionString: TextCharacteristic, Equatable {
  public static let label: Name = "Firmware revision"
  public var string: UTF8Text
  public init(string: UTF8Text) { self.string = string }
  public static let decoder = CharacteristicDecoder(
    uuid16: 0x2A26, key: "firmware_revision_string", FirmwareRevisionString.self, summarySaysItAll: true)
}

/// Hardware Revision String 0x2A27.
public struct HardwareRevisionString: TextCharacteristic, Equatable {
  public static let label: Name = "Hardware revision"
  public var string: UTF8Text
  public init(string: UTF8Text) { self.string = string }
  public static let decoder = CharacteristicDecoder(
    uuid16: 0x2A27, key: "hardware_revision_string", HardwareRevisionString.self, summarySaysItAll: true)
}

/// Software Revision String 0x2A28.
public struct SoftwareRevisionString: TextCharacteristic, Equatable {
  public static let label: Name = "Software revision"
  public var string: UTF8Text
  public init(string: UTF8Text) { self.string = string }
  public static let decoder = CharacteristicDecoder(
    uuid16: 0x2A28, key: "software_revision_string", SoftwareRevisionString.self, summarySaysItAll: true)
}

/// Manufacturer Name String 0x2A29.
public struct ManufacturerNameString: TextCharacteristic, Equatable {
  public static let label: Name = "Manufacturer name"
  public var string: UTF8Text
  public init(string: UTF8Text) { self.string = string }
  public static let decoder = CharacteristicDecoder(
    uuid16: 0x2A29, key: "manufacturer_name_string", ManufacturerNameString.self, summarySaysItAll: true)
}

/// System ID 0x2A23: a u64, the manufacturer-defined identifier in the low 40 bits and the
/// organizationally unique identifier (OUI) in the high 24 bits.
public struct SystemID: CharacteristicValue, Equatable {
  public var rawValue: UInt64

  public init(rawValue: UInt64) { self.rawValue = rawValue }

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    rawValue = try reader.readUInt64LE()
  }

  public var manufacturerIdentifier: UInt64 { rawValue & 0xFF_FFFF_FFFF }
  public var organizationallyUniqueIdentifier: UInt32 { UInt32(rawValue >> 40) }

  public static let decoder = CharacteristicDecoder(uuid16: 0x2A23, key: "system_id", SystemID.self)

  public func writeFields(to fields: inout FieldList, context: ValueContext) {
    fields.hex("manufacturer_identifier", "Manufacturer identifier", manufacturerIdentifier, width: 10)
    fields.hex("oui", "Organizationally unique identifier", organizationallyUniqueIdentifier, width: 6)
  }

  public func summarize(into summary: inout SummaryLine, context: ValueContext) {
    summary.append(.text("OUI "))
    summary.append(.hex(UInt64(organizationallyUniqueIdentifier), width: 6))
    summary.append(.text(", identifier "))
    summary.append(.hex(manufacturerIdentifier, width: 10))
  }
}

/// IEEE 11073-20601 Regulatory Certification Data List 0x2A2A: an opaque structure (hex),
/// the whole value.
public struct RegulatoryCertificationDataList: CharacteristicValue, Equatable {
  public var data: [UInt8]

  public init(data: [UInt8]) { self.data = data }

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    data = Array(reader.readRemaining())
  }

  public static let decoder = CharacteristicDecoder(
    uuid16: 0x2A2A, key: "ieee_11073_20601_regulatory_certification_data_list", RegulatoryCertificationDataList.self)

  public func writeFields(to fields: inout FieldList, context: ValueContext) {
    fields.bytes("data", "Data", data[...])
  }

  public func summarize(into summary: inout SummaryLine, context: ValueContext) {
    summary.append(.number(data.count))
    summary.append(.text(data.count == 1 ? " byte" : " bytes"))
  }
}

/// PnP ID 0x2A50: `vendor_id_source(1) vendor_id(2) product_id(2) product_version(2)`.
public struct PnPID: CharacteristicValue, Equatable {
  /// 1 = Bluetooth SIG company identifier, 2 = USB Implementer's Forum vendor id.
  public var vendorIDSource: UInt8
  public var vendorID: UInt16
  public var productID: UInt16
  public var productVersion: UInt16

  public init(vendorIDSource: UInt8, vendorID: UInt16, productID: UInt16, productVersion: UInt16) {
    self.vendorIDSource = vendorIDSource
    self.vendorID = vendorID
    self.productID = productID
    self.productVersion = productVersion
  }

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    vendorIDSource = try reader.readUInt8()
    vendorID = try reader.readUInt16LE()
    productID = try reader.readUInt16LE()
    productVersion = try reader.readUInt16LE()
  }

  public static func sourceName(_ source: UInt8) -> Name? {
    switch source {
    case 1: return "Bluetooth SIG"
    case 2: return "USB Implementer's Forum"
    default: return nil
    }
  }

  /// The company name when the vendor id is a Bluetooth SIG company identifier.
  public var vendorName: Name? { vendorIDSource == 1 ? AssignedNumbers.companyName(vendorID) : nil }

  public static let decoder = CharacteristicDecoder(uuid16: 0x2A50, key: "pnp_id", PnPID.self)

  public func writeFields(to fields: inout FieldList, context: ValueContext) {
    fields.code("vendor_id_source", "Vendor ID source", vendorIDSource, width: 2, name: Self.sourceName(vendorIDSource))
    fields.code("vendor_id", "Vendor ID", vendorID, width: 4, name: vendorName)
    fields.hex("product_id", "Product ID", productID, width: 4)
    fields.hex("product_version", "Product version", productVersion, width: 4)
  }

  public func summarize(into summary: inout SummaryLine, context: ValueContext) {
    if let vendorName {
      summary.append(.text(vendorName))
    } else {
      summary.append(.text(vendorIDSource == 2 ? "USB vendor " : "vendor "))
      summary.append(.hex(UInt64(vendorID), width: 4))
    }
    summary.append(.text(", product "))
    summary.append(.hex(UInt64(productID), width: 4))
    summary.append(.text(", version "))
    summary.append(.hex(UInt64(productVersion), width: 4))
  }

  public func diagnose(into diagnostics: inout [Diagnostic], context: ValueContext) {
    if Self.sourceName(vendorIDSource) == nil {
      ProfileSupport.add(.profileReservedValue, &diagnostics, "PnP ID vendor ID source \(vendorIDSource) is reserved")
    }
  }
}

extension ProfileRegistry {
  /// This file's decoders: adding one here registers it.
  static let deviceInformation: [CharacteristicDecoder] = [
    SystemID.decoder,
    ModelNumberString.decoder,
    SerialNumberString.decoder,
    FirmwareRevisionString.decoder,
    HardwareRevisionString.decoder,
    SoftwareRevisionString.decoder,
    ManufacturerNameString.decoder,
    RegulatoryCertificationDataList.decoder,
    PnPID.decoder,
  ]
}
