import BLEAnalysis
import BLECore
import BLEDecoder

/// The GATT map: one JSON object per capture (docs/json.md, "GATT maps").
package enum GATTMapWriter {
  package static let version = 1

  /// `learned`: when the tables were saved (the cache's files say it).
  package static func write(_ devices: [GATTDevice], capture: String, learned: String? = nil, to out: inout OutputBuffer) {
    out.append(#"{"format":"bledissect-gatt-map","version":"#)
    out.decimal(version)
    out.append(#","capture":"#)
    out.jsonString(capture)
    if let learned {
      out.append(#","learned":"#)
      out.jsonString(learned)
    }
    out.append(#","devices":["#)
    for (index, device) in devices.enumerated() {
      if index > 0 { out.byte(UInt8(ascii: ",")) }
      writeDevice(device, to: &out)
    }
    out.append("]}\n")
  }

  static func writeDevice(_ device: GATTDevice, to out: inout OutputBuffer) {
    switch device.server {
    case .peer(let address):
      out.append(#"{"server":"peer","address":""#)
      out.address(address)
      out.byte(UInt8(ascii: "\""))
      if let type = device.addressType {
        out.append(#","address_type":"#)
        out.jsonString(type.name)
      }
    case .local(let adapter):
      out.append(#"{"server":"local","index":"#)
      out.decimal(Int(adapter))
    case let .connection(adapter, handle, generation):
      out.append(#"{"server":"connection","index":"#)
      out.decimal(Int(adapter))
      out.append(#","conn":"#)
      out.decimal(Int(handle))
      out.append(#","conn_generation":"#)
      out.decimal(generation)
    }
    if let name = device.name {
      out.append(#","name":"#)
      out.jsonString(name)
    }
    if let hash = device.databaseHash {
      out.append(#","database_hash":""#)
      out.hexBytes(hash[...])
      out.byte(UInt8(ascii: "\""))
    }
    if device.source != .capture {
      out.append(#","source":""#)
      out.append(device.source.key)
      out.byte(UInt8(ascii: "\""))
      if let provenance = device.provenance {
        out.append(#","map":"#)
        out.jsonString(provenance.file ?? provenance.origin)
        if let learned = provenance.learned {
          out.append(#","learned":"#)
          out.jsonString(learned)
        }
      }
    }
    out.append(#","services":["#)
    for (index, service) in device.tree.services.enumerated() {
      if index > 0 { out.byte(UInt8(ascii: ",")) }
      out.append(#"{"start":"#)
      out.decimal(Int(service.start))
      out.append(#","end":"#)
      out.decimal(Int(service.end))
      writeUUID(service.uuid, service.name, to: &out)
      out.append(service.primary ? #","primary":true"# : #","primary":false"#)
      writeFrame(service.learnedIn, to: &out)
      if !service.includes.isEmpty {
        out.append(#","includes":"#)
        writeHandles(service.includes, to: &out)
      }
      out.append(#","characteristics":"#)
      writeCharacteristics(service.characteristics, to: &out)
      out.byte(UInt8(ascii: "}"))
    }
    out.byte(UInt8(ascii: "]"))
    if !device.tree.characteristicsOutsideServices.isEmpty {
      out.append(#","characteristics_outside_services":"#)
      writeCharacteristics(device.tree.characteristicsOutsideServices, to: &out)
    }
    if !device.tree.otherHandles.isEmpty {
      out.append(#","other_handles":"#)
      writeHandles(device.tree.otherHandles, to: &out)
    }
    out.byte(UInt8(ascii: "}"))
  }

  static func writeCharacteristics(_ characteristics: [GATTCharacteristicEntry], to out: inout OutputBuffer) {
    out.byte(UInt8(ascii: "["))
    for (index, characteristic) in characteristics.enumerated() {
      if index > 0 { out.byte(UInt8(ascii: ",")) }
      out.append(#"{"declaration_handle":"#)
      out.decimal(Int(characteristic.declarationHandle))
      out.append(#","value_handle":"#)
      out.decimal(Int(characteristic.valueHandle))
      writeUUID(characteristic.uuid, characteristic.name, to: &out)
      out.append(#","properties":"#)
      out.decimal(Int(characteristic.properties))
      out.append(#","property_names":["#)
      for (nameIndex, name) in characteristic.propertyNames.enumerated() {
        if nameIndex > 0 { out.byte(UInt8(ascii: ",")) }
        out.jsonString(name)
      }
      out.byte(UInt8(ascii: "]"))
      writeFrame(characteristic.learnedIn, to: &out)
      out.append(#","descriptors":"#)
      writeHandles(characteristic.descriptors, to: &out)
      out.byte(UInt8(ascii: "}"))
    }
    out.byte(UInt8(ascii: "]"))
  }

  static func writeHandles(_ handles: [GATTDescriptorEntry], to out: inout OutputBuffer) {
    out.byte(UInt8(ascii: "["))
    for (index, entry) in handles.enumerated() {
      if index > 0 { out.byte(UInt8(ascii: ",")) }
      out.append(#"{"handle":"#)
      out.decimal(Int(entry.handle))
      writeUUID(entry.uuid, entry.name, to: &out)
      writeFrame(entry.learnedIn, to: &out)
      out.byte(UInt8(ascii: "}"))
    }
    out.byte(UInt8(ascii: "]"))
  }

  static func writeUUID(_ uuid: BluetoothUUID, _ name: Name?, to out: inout OutputBuffer) {
    out.append(#","uuid":""#)
    out.uuid(uuid)
    out.byte(UInt8(ascii: "\""))
    if let name {
      out.append(#","name":"#)
      out.jsonString(name)
    }
  }

  static func writeFrame(_ frame: Int, to out: inout OutputBuffer) {
    guard frame > 0 else { return }
    out.append(#","learned_in_frame":"#)
    out.decimal(frame)
  }
}
