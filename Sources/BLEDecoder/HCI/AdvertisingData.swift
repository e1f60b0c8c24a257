import BLECore

/// Advertising / EIR data: a sequence of `length(1) type(1) data(length-1)` structures.
///
/// The corresponding specification is Core Specification Supplement, Part A.
public enum AdvertisingData {
  /// What analyses name a device by, from its advertising data.
  public struct Advertised: Sendable {
    public var name: String?
    public var appearance: UInt16?
    public var company: UInt16?

    func fact(address: BDAddr, type: AddressType, rssi: Int8) -> AdvertisementFact {
      // 127: the controller did not measure the RSSI.
      AdvertisementFact(address: address, addressType: type, rssi: rssi == 127 ? nil : rssi, name: name, appearance: appearance, company: company)
    }
  }

  /// Decodes every AD structure in `reader` as an array under `key`.
  /// A zero length ends the data (the rest is padding); a structure longer than what remains
  /// is reported as malformed after the ones before it.
  @discardableResult
  public static func decode(
    _ reader: inout ByteReader, into fields: inout FieldList, key: Name = "ad", label: Name = "Advertising data",
    registry: DecoderRegistry? = nil
  ) throws(DecodeError) -> Advertised {
    fields.beginArray(key, label)
    defer { fields.end() }
    var advertised = Advertised()
    while !reader.isAtEnd {
      let length = Int(try reader.readUInt8())
      if length == 0 { break }
      var item = try reader.readReader(count: length, layer: .advertising)
      let type = try item.readUInt8()
      note(type: type, item, in: &advertised)
      fields.beginObject("", "AD", inline: true)
      fields.addVerbose("ad_type", "Type", .code(UInt64(type), width: 2, name: AssignedNumbers.adTypeName(type)))
      try decodeStructure(type: type, &item, into: &fields, registry: registry)
      fields.end()
    }
    reader.layer = .hci
    return advertised
  }

  /// Keeps the name (a complete one over a shortened one), the appearance and the first
  /// manufacturer's company.
  static func note(type: UInt8, _ item: ByteReader, in advertised: inout Advertised) {
    var item = item
    switch type {
    case 0x08 where advertised.name == nil, 0x09:
      advertised.name = String(decoding: item.readRemaining(), as: UTF8.self)
    case 0x19:
      advertised.appearance = try? item.readUInt16LE()
    case 0xFF where advertised.company == nil:
      advertised.company = try? item.readUInt16LE()
    default:
      break
    }
  }

  static func decodeStructure(type: UInt8, _ item: inout ByteReader, into fields: inout FieldList, registry: DecoderRegistry? = nil) throws(DecodeError) {
    switch type {
    case 0x01:
      let flags = try item.readUInt8()
      fields.hex("flags", "Flags", flags, width: 2)
      if flags & 0x01 != 0 { fields.flag("le_limited_discoverable", "LE Limited Discoverable Mode", true) }
      if flags & 0x02 != 0 { fields.flag("le_general_discoverable", "LE General Discoverable Mode", true) }
      if flags & 0x04 != 0 { fields.flag("br_edr_not_supported", "BR/EDR Not Supported", true) }
      if flags & 0x08 != 0 { fields.flag("simultaneous_le_br_edr", "Simultaneous LE and BR/EDR (Controller)", true) }
    case 0x02, 0x03, 0x14:
      fields.beginArray("uuids", "UUIDs")
      while !item.isAtEnd {
        let uuid = try item.readUUID16()
        fields.add("", "UUID", .uuid(uuid, name: AssignedNumbers.uuid16Name(uuid.uuid16 ?? 0)))
      }
      fields.end()
    case 0x04, 0x05, 0x1F:
      fields.beginArray("uuids", "UUIDs")
      while !item.isAtEnd {
        let uuid = try item.readUUID32()
        fields.add("", "UUID", .uuid(uuid, name: uuid.uuid16.flatMap(AssignedNumbers.uuid16Name)))
      }
      fields.end()
    case 0x06, 0x07, 0x15:
      fields.beginArray("uuids", "UUIDs")
      while !item.isAtEnd {
        let uuid = try item.readUUID128()
        fields.add("", "UUID", .uuid(uuid, name: uuidName(uuid)))
      }
      fields.end()
    case 0x08, 0x09:
      fields.add("name", "Name", .text(String(decoding: item.readRemaining(), as: UTF8.self)))
    case 0x0A:
      fields.measure("tx_power", "TX power", try item.readInt8(), scale: 1, unit: "dBm")
    case 0x12:
      fields.measure("interval_min", "Minimum connection interval", try item.readUInt16LE(), scale: 1.25, unit: "ms")
      fields.measure("interval_max", "Maximum connection interval", try item.readUInt16LE(), scale: 1.25, unit: "ms")
    case 0x16, 0x20, 0x21:
      let uuid = type == 0x16 ? try item.readUUID16() : (type == 0x20 ? try item.readUUID32() : try item.readUUID128())
      fields.add("uuid", "UUID", .uuid(uuid, name: uuidName(uuid)))
      if type == 0x16, let short = uuid.uuid16, let decoder = registry?.serviceData(short) {
        // The service's layout; what it does not read stays as bytes.
        var data = item
        if let error = decoder.run(&data, into: &fields) { throw error }
        item = data
      }
      if !item.isAtEnd { fields.bytes("data", "Data", item.readRemaining()) }
    case 0x19:
      let appearance = try item.readUInt16LE()
      fields.code("appearance", "Appearance", appearance, width: 4, name: AssignedNumbers.appearanceName(appearance))
    case 0x1A:
      fields.measure("interval", "Advertising interval", try item.readUInt16LE(), scale: 0.625, unit: "ms")
    case 0x1B:
      fields.add("address", "Address", .address(try item.readBDAddr(), AddressType(rawValue: try item.readUInt8() & 1)))
    case 0xFF:
      let company = try item.readUInt16LE()
      fields.code("company", "Company", company, width: 4, name: AssignedNumbers.companyName(company))
      if let decoder = registry?.company(company) {
        // The company's layout; what it does not read stays as bytes.
        var data = item
        if let error = decoder.run(&data, into: &fields) { throw error }
        item = data
      }
      if !item.isAtEnd { fields.bytes("data", "Data", item.readRemaining()) }
    default:
      fields.bytes("data", "Data", item.readRemaining())
    }
    if !item.isAtEnd { fields.bytes("extra", "Unexpected bytes", item.readRemaining()) }
  }

  /// The SIG name of a UUID of any width, or a vendor 128-bit name.
  public static func uuidName(_ uuid: BluetoothUUID) -> Name? {
    if let short = uuid.uuid16 { return AssignedNumbers.uuid16Name(short) }
    return AssignedNumbers.uuid128Name(high: uuid.high, low: uuid.low)
  }
}
