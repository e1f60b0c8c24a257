import BLECore

// Device Information service 0x180A: System ID 0x2A23, the strings 0x2A24–0x2A29, the
// IEEE 11073-20601 Regulatory Certification Data List 0x2A2A and PnP ID 0x2A50.
//
// The corresponding specification is the Device Information Service 1.1 and the GATT
// Specification Supplement.

/// The Device Information strings (UTF-8, no terminator): field `value`, summary the text.
public enum DeviceInformationStrings {
  public static let modelNumber = ProfileSupport.stringDecoder(uuid16: 0x2A24, key: "model_number_string", label: "Model number")
  public static let serialNumber = ProfileSupport.stringDecoder(uuid16: 0x2A25, key: "serial_number_string", label: "Serial number")
  public static let firmwareRevision = ProfileSupport.stringDecoder(uuid16: 0x2A26, key: "firmware_revision_string", label: "Firmware revision")
  public static let hardwareRevision = ProfileSupport.stringDecoder(uuid16: 0x2A27, key: "hardware_revision_string", label: "Hardware revision")
  public static let softwareRevision = ProfileSupport.stringDecoder(uuid16: 0x2A28, key: "software_revision_string", label: "Software revision")
  public static let manufacturerName = ProfileSupport.stringDecoder(uuid16: 0x2A29, key: "manufacturer_name_string", label: "Manufacturer name")
}

/// System ID 0x2A23: a u64, the manufacturer-defined identifier in the low 40 bits and the
/// organizationally unique identifier (OUI) in the high 24 bits.
public struct SystemID: FieldWritable, Equatable {
  public var rawValue: UInt64

  public init(rawValue: UInt64) { self.rawValue = rawValue }

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    rawValue = try reader.readUInt64LE()
  }

  public var manufacturerIdentifier: UInt64 { rawValue & 0xFF_FFFF_FFFF }
  public var organizationallyUniqueIdentifier: UInt32 { UInt32(rawValue >> 40) }

  public static let decoder = ProfileSupport.decoder(SystemID.self, uuid16: 0x2A23, key: "system_id")

  func write(to frame: inout DissectedFrame, context: ValueContext) {
    frame.fields.hex("manufacturer_identifier", "Manufacturer identifier", manufacturerIdentifier, width: 10)
    frame.fields.hex("oui", "Organizationally unique identifier", organizationallyUniqueIdentifier, width: 6)
    frame.summaryParts.append(.text("OUI "))
    frame.summaryParts.append(.hex(UInt64(organizationallyUniqueIdentifier), width: 6))
    frame.summaryParts.append(.text(", identifier "))
    frame.summaryParts.append(.hex(manufacturerIdentifier, width: 10))
  }
}

/// IEEE 11073-20601 Regulatory Certification Data List 0x2A2A: an opaque structure (hex).
public enum RegulatoryCertificationDataList {
  public static let decoder = CharacteristicDecoder(
    uuid: BluetoothUUID(uuid16: 0x2A2A), key: "ieee_11073_20601_regulatory_certification_data_list"
  ) { reader, _, frame throws(DecodeError) in
    reader.layer = .profile
    let data = reader.readRemaining()
    frame.fields.bytes("data", "Data", data)
    frame.summaryParts.append(.number(data.count))
    frame.summaryParts.append(.text(data.count == 1 ? " byte" : " bytes"))
  }
}

/// PnP ID 0x2A50: `vendor_id_source(1) vendor_id(2) product_id(2) product_version(2)`.
public struct PnPID: FieldWritable, Equatable {
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

  public static func sourceName(_ source: UInt8) -> StaticString? {
    switch source {
    case 1: return "Bluetooth SIG"
    case 2: return "USB Implementer's Forum"
    default: return nil
    }
  }

  /// The company name when the vendor id is a Bluetooth SIG company identifier.
  public var vendorName: StaticString? { vendorIDSource == 1 ? AssignedNumbers.companyName(vendorID) : nil }

  public static let decoder = ProfileSupport.decoder(PnPID.self, uuid16: 0x2A50, key: "pnp_id")

  func write(to frame: inout DissectedFrame, context: ValueContext) {
    frame.fields.code("vendor_id_source", "Vendor ID source", vendorIDSource, width: 2, name: Self.sourceName(vendorIDSource))
    frame.fields.code("vendor_id", "Vendor ID", vendorID, width: 4, name: vendorName)
    frame.fields.hex("product_id", "Product ID", productID, width: 4)
    frame.fields.hex("product_version", "Product version", productVersion, width: 4)
    if let vendorName {
      frame.summaryParts.append(.text(vendorName))
    } else {
      frame.summaryParts.append(.text(vendorIDSource == 2 ? "USB vendor " : "vendor "))
      frame.summaryParts.append(.hex(UInt64(vendorID), width: 4))
    }
    frame.summaryParts.append(.text(", product "))
    frame.summaryParts.append(.hex(UInt64(productID), width: 4))
    frame.summaryParts.append(.text(", version "))
    frame.summaryParts.append(.hex(UInt64(productVersion), width: 4))
    if Self.sourceName(vendorIDSource) == nil {
      ProfileSupport.warn(&frame, "PnP ID vendor ID source \(vendorIDSource) is reserved")
    }
  }
}
