import BLECore

/// A declaration an ATT PDU showed: what the learning step adds to (or removes from) the
/// server's attribute table.
enum GATTDeclaration: Sendable {
  case service(start: UInt16, end: UInt16, uuid: BluetoothUUID, primary: Bool)
  case characteristic(declaration: UInt16, valueHandle: UInt16, uuid: BluetoothUUID, properties: UInt8)
  /// A handle's type (Find Information, or a Read By Type of that type).
  case type(BluetoothUUID, handle: UInt16)
  /// An included service announced without its (128-bit) UUID, read from `start` next.
  case includedServiceAwaited(start: UInt16, end: UInt16)
  /// That UUID, read.
  case includedService(start: UInt16, uuid: BluetoothUUID)
  /// A Service Changed indication: the range is no longer known.
  case serviceChanged(start: UInt16, end: UInt16)
}

/// The only step that changes a GATT database: it applies what a PDU showed, after the PDU
/// was decoded and described (so a PDU is described by the table as it was before it).
enum GATTLearning {
  static func learn(_ declarations: [GATTDeclaration], _ database: inout GATTDatabase, _ frame: inout DissectedFrame) {
    for declaration in declarations {
      switch declaration {
      case let .service(start, end, uuid, primary):
        database.addService(start: start, end: end, uuid: uuid, primary: primary, learnedIn: frame.number)
      case let .characteristic(declaration, valueHandle, uuid, properties):
        database.addCharacteristic(declaration: declaration, valueHandle: valueHandle, uuid: uuid, properties: properties, learnedIn: frame.number)
      case let .type(uuid, handle):
        database.setType(uuid, of: handle, learnedIn: frame.number)
      case let .includedServiceAwaited(start, end):
        database.awaitIncludedService(start: start, end: end)
      case let .includedService(start, uuid):
        if let end = database.includedServiceEnd(start: start) { database.addService(start: start, end: end, uuid: uuid, primary: false, learnedIn: frame.number) }
      case let .serviceChanged(start, end):
        // A table from elsewhere no longer describes a server that says its table changed.
        if database.isOnTrial, let dropped = database.dropSeededEntries() {
          frame.diagnostics.append(GATTDatabase.droppedNote(dropped, "the device indicated Service Changed"))
        }
        database.invalidate(start, end)
        frame.diagnostics.append(Diagnostic(.gattServiceChanged, "Service Changed: handles \(Hex.prefixed(UInt64(start), width: 4))–\(Hex.prefixed(UInt64(end), width: 4)) forgotten until rediscovered"))
      }
    }
  }
}
