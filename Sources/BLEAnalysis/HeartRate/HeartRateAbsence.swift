import BLECore
import BLEDecoder
import BLEEngine

/// Why `hr` found no measurement in a capture, gathered while it had written no row (after
/// the first row it costs nothing): what the capture showed of Heart Rate Measurement
/// (0x2A37), its subscription and its values, said in one line on standard error.
package struct HeartRateAbsence {
  static let measurement = BluetoothUUID(uuid16: 0x2A37)
  static let configuration = BluetoothUUID(uuid16: 0x2902)

  /// The first write enabling notifications or indications of Heart Rate Measurement.
  package var subscribedIn: Int?
  /// Values of Heart Rate Measurement seen, and how many of them did not decode.
  package var values = 0
  package var malformed = 0
  /// Measurements left out by --peer.
  package var otherDevices = 0

  package init() {}

  /// Takes in a frame's attributes (only while no row was written).
  package mutating func observe(_ frame: borrowing DissectedFrame) {
    for fact in frame.attributes where fact.meaning?.characteristic == Self.measurement {
      switch fact.operation {
      case .write, .writeWithoutResponse:
        // A Client Characteristic Configuration value with notify or indicate set.
        guard subscribedIn == nil, fact.meaning?.descriptor == Self.configuration, let raw = fact.rawValue,
          let first = frame.valueBytes(raw).first, first & 0x03 != 0
        else { continue }
        subscribedIn = frame.number
      case .notification, .indication, .read:
        guard fact.meaning?.role == .characteristicValue else { continue }
        values = values.saturatingAdd(1)
        if fact.isMalformed { malformed = malformed.saturatingAdd(1) }
      }
    }
  }

  /// The reason, for a capture with no row; `peers` are the devices --peer asked for.
  package func reason(_ end: FrameStream.End, peers: [BDAddr]) -> String {
    if otherDevices > 0 {
      let asked = peers.map(\.description).joined(separator: " or ")
      return "no heart-rate measurement from \(asked): \(otherDevices) from other devices (--peer)"
    }
    if values > 0 {
      return "\(values) Heart Rate Measurement value\(values == 1 ? "" : "s") arrived, \(malformed) malformed: none decoded (annotate shows why)"
    }
    if let subscribedIn {
      return "no heart-rate measurement: notifications of Heart Rate Measurement were enabled in frame \(subscribedIn), but none arrived"
    }
    if let (server, characteristic) = Self.knownMeasurement(end) {
      var where_ = "handle \(Hex.prefixed(UInt64(characteristic.valueHandle), width: 4))"
      if let cccd = characteristic.descriptors.first(where: { $0.uuid == Self.configuration }) {
        where_ += "; its Client Characteristic Configuration is \(Hex.prefixed(UInt64(cccd.handle), width: 4))"
      }
      return "no heart-rate measurement: \(server)'s Heart Rate Measurement (\(where_)) was never subscribed to in the capture"
    }
    return "no heart-rate measurement: the capture shows no Heart Rate Measurement (no discovery of it, no table from --gatt or the cache, no notifications that look like heart rates)"
  }

  /// A Heart Rate Measurement characteristic in any table the run knew, peers first.
  package static func knownMeasurement(_ end: FrameStream.End) -> (GATTServerIdentity, GATTCharacteristicEntry)? {
    let servers = end.dissector.databases.sorted { GATTConsumer.sortKey($0.key).lexicographicallyPrecedes(GATTConsumer.sortKey($1.key)) }
    for (server, database) in servers {
      let tree = database.attributeTree
      for characteristic in tree.services.flatMap(\.characteristics) + tree.characteristicsOutsideServices where characteristic.uuid == measurement {
        return (server, characteristic)
      }
    }
    return nil
  }
}
