import BLECore
import BLEDecoder

/// What one GATT table says of each handle, without the frames it was learned in: what two
/// discoveries of one device are compared by, when the cache decides which table to keep.
package enum GATTHandleMeaning: Hashable {
  case service(uuid: BluetoothUUID, end: UInt16, primary: Bool)
  case declaration(uuid: BluetoothUUID, valueHandle: UInt16, properties: UInt8)
  case value(uuid: BluetoothUUID)
  /// A typed handle: a descriptor, an include, a handle no characteristic claims.
  case type(BluetoothUUID)
}

extension GATTAttributeTree {
  /// Each handle the table knows, and what it knows of it.
  package var handleMeanings: [UInt16: GATTHandleMeaning] {
    var meanings: [UInt16: GATTHandleMeaning] = [:]
    func add(_ characteristic: GATTCharacteristicEntry) {
      meanings[characteristic.declarationHandle] = .declaration(
        uuid: characteristic.uuid, valueHandle: characteristic.valueHandle, properties: characteristic.properties)
      meanings[characteristic.valueHandle] = .value(uuid: characteristic.uuid)
      for descriptor in characteristic.descriptors { meanings[descriptor.handle] = .type(descriptor.uuid) }
    }
    for service in services {
      meanings[service.start] = .service(uuid: service.uuid, end: service.end, primary: service.primary)
      for include in service.includes { meanings[include.handle] = .type(include.uuid) }
      for characteristic in service.characteristics { add(characteristic) }
    }
    for characteristic in characteristicsOutsideServices { add(characteristic) }
    for other in otherHandles { meanings[other.handle] = .type(other.uuid) }
    return meanings
  }
}

/// How a newer discovery of a device's table compares with the one kept before it.
package enum GATTTableComparison: Equatable {
  /// The same handles, known the same way.
  case same
  /// Every handle the newer one knows, the kept one knows the same way, and more besides: the
  /// newer discovery saw part of the same table.
  case keptCoversNewer
  /// Both agree wherever both know a handle, and the newer one knows handles the kept one
  /// does not.
  case agreeing(keptCount: Int, newerCount: Int)
  /// A handle both know, known differently: the table changed (or one of them is wrong).
  case contradicting(handle: UInt16)

  package init(kept: GATTAttributeTree, newer: GATTAttributeTree) {
    let old = kept.handleMeanings
    let new = newer.handleMeanings
    var newOnly = 0
    for handle in new.keys.sorted() {
      guard let known = old[handle] else {
        newOnly += 1
        continue
      }
      if known != new[handle] {
        self = .contradicting(handle: handle)
        return
      }
    }
    if newOnly > 0 {
      self = .agreeing(keptCount: old.count, newerCount: new.count)
    } else {
      self = new.count == old.count ? .same : .keptCoversNewer
    }
  }

  /// Whether the newer table should replace the kept one. The richer table is kept: a newer
  /// discovery that agrees with the kept table replaces it only when it knows at least as many
  /// handles (the same table again is the newer capture's); one that contradicts it replaces
  /// it (the device's table changed: the latest discovery is the device as it is now).
  package var newerReplacesKept: Bool {
    switch self {
    case .same: return true
    case .keptCoversNewer: return false
    case let .agreeing(kept, newer): return newer >= kept
    case .contradicting: return true
    }
  }
}
