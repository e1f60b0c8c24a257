import BLEAnalysis
import BLECore
import BLEDecoder

/// The text tree.
package enum GATTTreeWriter {
  package static func write(_ devices: [GATTDevice], to out: inout OutputBuffer) {
    if devices.isEmpty {
      out.append("no GATT discovery in this capture\n")
      return
    }
    for (index, device) in devices.enumerated() {
      if index > 0 { out.byte(0x0A) }
      var lines: [(text: String, frame: Int)] = []
      for service in device.tree.services {
        let kind = service.primary ? "service" : "secondary service"
        lines.append(("  \(kind) \(hex(service.start))–\(hex(service.end)) \(named(service.uuid, service.name))", service.learnedIn))
        for include in service.includes {
          lines.append(("    include \(hex(include.handle))", include.learnedIn))
        }
        for characteristic in service.characteristics { add(characteristic, indent: "    ", to: &lines) }
      }
      if !device.tree.characteristicsOutsideServices.isEmpty {
        lines.append(("  (no service known)", 0))
        for characteristic in device.tree.characteristicsOutsideServices { add(characteristic, indent: "    ", to: &lines) }
      }
      if !device.tree.otherHandles.isEmpty {
        lines.append(("  (other handles)", 0))
        for handle in device.tree.otherHandles {
          lines.append(("    \(hex(handle.handle)) \(named(handle.uuid, handle.name))", handle.learnedIn))
        }
      }
      out.append(string: heading(device))
      out.byte(0x0A)
      // Frames in one column, so the tree reads down the left and the frames down the right.
      let column = min((lines.map { $0.text.count }.max() ?? 0) + 2, 72)
      for line in lines {
        out.append(string: line.text)
        if line.frame > 0 {
          out.spaces(max(column - line.text.count, 1))
          out.byte(UInt8(ascii: "#"))
          out.decimal(line.frame)
        }
        out.byte(0x0A)
      }
    }
  }

  static func add(_ characteristic: GATTCharacteristicEntry, indent: String, to lines: inout [(text: String, frame: Int)]) {
    let properties = characteristic.propertyNames.map { $0.description.replacingOccurrences(of: "_", with: " ") }
    var text = "\(indent)\(hex(characteristic.valueHandle)) \(named(characteristic.uuid, characteristic.name))"
    text += properties.isEmpty ? "" : ": " + properties.joined(separator: ", ")
    lines.append((text, characteristic.learnedIn))
    for descriptor in characteristic.descriptors {
      lines.append(("\(indent)  \(hex(descriptor.handle)) \(named(descriptor.uuid, descriptor.name))", descriptor.learnedIn))
    }
  }

  static func heading(_ device: GATTDevice) -> String {
    var text: String
    switch device.server {
    case .peer(let address): text = address.description + (device.addressType.map { " (\($0.name))" } ?? "")
    case .local(let adapter): text = "local device (hci\(adapter))"
    case let .connection(adapter, handle, generation): text = "hci\(adapter) connection handle \(handle) (connection \(generation), address unknown)"
    }
    if let name = device.name { text += " \"\(printable(name))\"" }
    let services = device.tree.services.count
    let characteristics = device.tree.services.reduce(device.tree.characteristicsOutsideServices.count) { $0 + $1.characteristics.count }
    text += ": \(services) service\(services == 1 ? "" : "s"), \(characteristics) characteristic\(characteristics == 1 ? "" : "s")"
    if let hash = device.databaseHash { text += ", database hash \(Hex.string(hash))" }
    switch device.source {
    case .capture: break
    case .imported: text += " (from a map given with --gatt)"
    case .cache: text += " (from the cache)"
    case .layout: text += " (by layout: the peer is not in the capture)"
    case .inferred: text += " (inferred)"
    }
    return text
  }

  static func hex(_ handle: UInt16) -> String { Hex.prefixed(UInt64(handle), width: 4) }

  static func named(_ uuid: BluetoothUUID, _ name: Name?) -> String {
    name.map { "\($0) (\(uuid))" } ?? uuid.description
  }

  /// A name from the wire, kept on its line (`Escaping`).
  static func printable(_ text: String) -> String { Escaping.escaped(text, .line) }
}

