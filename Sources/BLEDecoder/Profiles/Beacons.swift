import BLECore

/// Beacons in advertising data (facts: shared/reference/gatt-payloads.md §6): Apple's iBeacon,
/// in manufacturer data of company 0x004C, and Google's Eddystone, in service data of 0xFEAA.
/// Multi-byte values of both are big-endian, unlike the rest of Bluetooth.
enum Beacons {
  /// `02 15 <proximity UUID 16> <major 2> <minor 2> <measured power s8>`; other Apple payloads
  /// (they share the company) are left as bytes.
  static let iBeacon = PayloadDecoder(key: "ibeacon", label: "iBeacon") { (reader: inout ByteReader, fields: inout FieldList) throws(DecodeError) in
    guard reader.remaining == 23, try reader.peekUInt8() == 0x02 else { return }
    var probe = reader
    _ = try probe.readUInt8()
    guard try probe.readUInt8() == 0x15 else { return }
    fields.add("proximity_uuid", "Proximity UUID", .uuid(try readUUIDBigEndian(&probe), name: nil))
    fields.uint("major", "Major", try probe.readUInt16BE())
    fields.uint("minor", "Minor", try probe.readUInt16BE())
    fields.measure("measured_power", "Measured power at 1 m", try probe.readInt8(), scale: 1, unit: "dBm")
    reader = probe
  }

  static func readUUIDBigEndian(_ reader: inout ByteReader) throws(DecodeError) -> BluetoothUUID {
    var high: UInt64 = 0
    var low: UInt64 = 0
    for _ in 0..<8 { high = high << 8 | UInt64(try reader.readUInt8()) }
    for _ in 0..<8 { low = low << 8 | UInt64(try reader.readUInt8()) }
    return BluetoothUUID(high: high, low: low)
  }

  /// Eddystone frames: UID (0x00), URL (0x10), unencrypted TLM (0x20, version 0); others keep
  /// their bytes after the frame type.
  static let eddystone = PayloadDecoder(key: "eddystone", label: "Eddystone") { (reader: inout ByteReader, fields: inout FieldList) throws(DecodeError) in
    let frame = try reader.readUInt8()
    fields.code("frame_type", "Frame type", frame, width: 2, name: frameName(frame))
    switch frame {
    case 0x00:
      fields.measure("tx_power", "TX power at 0 m", try reader.readInt8(), scale: 1, unit: "dBm")
      fields.bytes("namespace", "Namespace", try reader.readBytes(count: 10))
      fields.bytes("instance", "Instance", try reader.readBytes(count: 6))
      // Two reserved bytes, often left out.
      if reader.remaining == 2 { fields.verboseBytes("reserved", "Reserved", try reader.readBytes(count: 2)) }
    case 0x10:
      fields.measure("tx_power", "TX power at 0 m", try reader.readInt8(), scale: 1, unit: "dBm")
      let scheme = try reader.readUInt8()
      guard let prefix = schemePrefix(scheme) else {
        throw DecodeError(.invalidValue(field: "Eddystone URL scheme", value: UInt64(scheme)), layer: .advertising, offset: reader.offset - 1)
      }
      var url = prefix
      for byte in reader.readRemaining() {
        if let expansion = expansion(byte) { url += expansion } else if byte > 0x20 && byte < 0x7F { url.unicodeScalars.append(Unicode.Scalar(byte)) } else {
          url += String(format: byte)
        }
      }
      fields.add("url", "URL", .text(url))
    case 0x20:
      let version = try reader.readUInt8()
      fields.uint("version", "TLM version", version)
      guard version == 0 else { return }
      let battery = try reader.readUInt16BE()
      if battery == 0 { fields.add("battery_mv", "Battery", .null) } else { fields.real("battery_mv", "Battery", Double(battery), places: 0, unit: "mV") }
      let temperature = try reader.readUInt16BE()
      if temperature == 0x8000 {
        fields.add("temperature_c", "Temperature", .null)
      } else {
        fields.real("temperature_c", "Temperature", Double(Int16(bitPattern: temperature)) / 256, places: 2, unit: "°C")
      }
      fields.uint("advertising_pdus", "Advertising PDUs since boot", try reader.readUInt32BE())
      fields.real("uptime_s", "Time since boot", Double(try reader.readUInt32BE()) / 10, places: 1, unit: "s")
    default:
      break
    }
  }

  static func frameName(_ frame: UInt8) -> Name? {
    switch frame {
    case 0x00: return "UID"
    case 0x10: return "URL"
    case 0x20: return "TLM"
    case 0x30: return "EID"
    default: return nil
    }
  }

  static func schemePrefix(_ scheme: UInt8) -> String? {
    switch scheme {
    case 0x00: return "http://www."
    case 0x01: return "https://www."
    case 0x02: return "http://"
    case 0x03: return "https://"
    default: return nil
    }
  }

  static func expansion(_ byte: UInt8) -> String? {
    let expansions = [".com/", ".org/", ".edu/", ".net/", ".info/", ".biz/", ".gov/", ".com", ".org", ".edu", ".net", ".info", ".biz", ".gov"]
    return byte < 14 ? expansions[Int(byte)] : nil
  }
}

extension String {
  /// A byte that is neither printable nor an expansion, as `\xNN` (so the URL stays one line).
  fileprivate init(format byte: UInt8) {
    self = "\\x" + Hex.string([byte])
  }
}
