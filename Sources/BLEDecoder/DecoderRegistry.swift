import BLECore

/// Decodes a payload the standard decoders leave as bytes (vendor HCI commands and events,
/// manufacturer data in advertising, the SDUs of an L2CAP channel by PSM): its fields go into
/// a group named `key`.
public struct PayloadDecoder: Sendable {
  public typealias Decode = @Sendable (inout ByteReader, inout FieldList) throws(DecodeError) -> Void
  /// The JSON key of the group the fields go in (snake_case), and its text label.
  public let key: Name
  public let label: Name
  let decode: Decode

  public init(key: Name, label: Name, decode: @escaping Decode) {
    self.key = key
    self.label = label
    self.decode = decode
  }

  /// Runs the decoder inside its group; returns the error when the payload does not fit. A
  /// decoder that reads nothing (the payload is not its kind) leaves no group behind.
  func run(_ reader: inout ByteReader, into fields: inout FieldList) -> DecodeError? {
    let depth = fields.depth
    let start = fields.count
    let offset = reader.offset
    fields.beginObject(key, label)
    defer {
      fields.close(toDepth: depth)
      if reader.offset == offset { fields.truncate(to: start) }
    }
    do {
      try decode(&reader, &fields)
      return nil
    } catch {
      return error
    }
  }
}

/// A handle decoded as a given characteristic whatever discovery said (Wireshark's
/// "Decode As"), on every peer or on one.
package struct HandleOverride: Sendable, Equatable {
  package var handle: UInt16
  package var uuid: BluetoothUUID
  package var peer: BDAddr?

  package init(handle: UInt16, uuid: BluetoothUUID, peer: BDAddr? = nil) {
    self.handle = handle
    self.uuid = uuid
    self.peer = peer
  }
}

/// Everything the dissector decodes by lookup, as one value: characteristic and descriptor
/// decoders by UUID, handle overrides, and the payload hooks (manufacturer data by company,
/// vendor HCI commands by OCF, vendor events, L2CAP channels by PSM).
///
/// `standard` holds the built-in decoders; a copy extended with `register` (vendor files, user
/// decoders, `--decode-as`) is handed to the `Dissector`. Lookups by UUID happen once per
/// handle per database (the database keeps the answer), so a dictionary is fast enough.
public struct DecoderRegistry: Sendable {
  /// The tables, as one value in a shared box: a registry is copied into every ATT PDU's
  /// decoding, and a box costs one retain where six tables would cost six. The box is never
  /// changed (`change` makes a new one), so reading it needs no exclusivity checks.
  struct Tables: Sendable {
    var decoders: [CharacteristicDecoder] = []
    /// By the 128-bit value: a SIG UUID sent in 16, 32 or 128 bits finds the same decoder.
    var byUUID: [UUIDValue: Int] = [:]
    var handleOverrides: [HandleOverride] = []
    var companies: [UInt16: PayloadDecoder] = [:]
    var vendorCommands: [UInt16: PayloadDecoder] = [:]
    var vendorEvent: PayloadDecoder?
    var psms: [UInt16: PayloadDecoder] = [:]
    var serviceData: [UInt16: PayloadDecoder] = [:]
    /// The formats users declared (`--decoders`): a decoder names its format by place here.
    var declaredFormats: [DeclaredFormat] = []
  }
  final class Box: Sendable {
    let tables: Tables
    init(_ tables: Tables) { self.tables = tables }
  }
  var box: Box

  /// A UUID's value without the width it was sent with.
  struct UUIDValue: Hashable, Sendable {
    var high: UInt64
    var low: UInt64
    init(_ uuid: BluetoothUUID) { (high, low) = (uuid.high, uuid.low) }
  }

  var tables: Tables { box.tables }

  mutating func change(_ body: (inout Tables) -> Void) {
    var tables = box.tables
    body(&tables)
    box = Box(tables)
  }

  /// Every characteristic decoder; indices are stable (`AttributeFact.decoderIndex`).
  public var decoders: [CharacteristicDecoder] { tables.decoders }
  package var handleOverrides: [HandleOverride] { tables.handleOverrides }
  /// The formats users declared, in the order registered (`CharacteristicDecoder.declaredFormat`).
  package var declaredFormats: [DeclaredFormat] { box.tables.declaredFormats }

  /// The same registry in a box of its own: a thread that reads it while another copies its
  /// own registry (a retain per PDU) then shares no reference count, and no cache line, with it.
  package func separateCopy() -> DecoderRegistry {
    var copy = self
    copy.box = Box(box.tables)
    return copy
  }

  /// No decoders at all (tests, or a registry built from scratch).
  public init() { box = Box(Tables()) }

  /// The built-in decoders.
  public static let standard: DecoderRegistry = {
    var registry = DecoderRegistry()
    for decoder in ProfileRegistry.all { registry.register(decoder) }
    registry.register(company: 0x004C, Beacons.iBeacon)
    registry.register(serviceData: 0xFEAA, Beacons.eddystone)
    return registry
  }()

  /// Adds a characteristic decoder; one already registered for its UUID is replaced. A user's
  /// format that replaces a built-in decoder keeps its value type, still decoded for the
  /// analyses (`CharacteristicDecoder.builtInType`).
  public mutating func register(_ decoder: CharacteristicDecoder) {
    change { tables in
      if let index = tables.byUUID[UUIDValue(decoder.uuid)] {
        var replacing = decoder
        let replaced = tables.decoders[index]
        if replacing.declaredFormat != nil && replacing.builtInType == nil {
          replacing.builtInType = replaced.declaredFormat == nil ? replaced.valueType : replaced.builtInType
        }
        tables.decoders[index] = replacing
      } else {
        tables.byUUID[UUIDValue(decoder.uuid)] = tables.decoders.count
        tables.decoders.append(decoder)
      }
    }
  }

  /// Decodes `handle` (on `peer`, or on every peer) as `uuid`.
  package mutating func override(_ override: HandleOverride) {
    change { tables in
      tables.handleOverrides.removeAll { $0.handle == override.handle && $0.peer == override.peer }
      tables.handleOverrides.append(override)
    }
  }

  public mutating func register(company: UInt16, _ decoder: PayloadDecoder) { change { $0.companies[company] = decoder } }
  /// Advertised service data (AD 0x16) of a 16-bit service UUID.
  public mutating func register(serviceData uuid: UInt16, _ decoder: PayloadDecoder) { change { $0.serviceData[uuid] = decoder } }
  /// A vendor command (OGF 0x3F) by its OCF.
  public mutating func register(vendorCommand ocf: UInt16, _ decoder: PayloadDecoder) { change { $0.vendorCommands[ocf & 0x03FF] = decoder } }
  /// The parameters of Vendor Specific events (0xFF), whose layout depends on the controller.
  public mutating func register(vendorEvent decoder: PayloadDecoder) { change { $0.vendorEvent = decoder } }
  /// The SDUs of dynamic L2CAP channels opened on `psm`.
  public mutating func register(psm: UInt16, _ decoder: PayloadDecoder) { change { $0.psms[psm] = decoder } }

  /// The decoder at `index` in `decoders`, read in place.
  public subscript(decoder index: Int) -> CharacteristicDecoder { box.tables.decoders[index] }

  /// Where the decoder for `uuid` is in `decoders`.
  public func index(for uuid: BluetoothUUID) -> Int? { tables.byUUID[UUIDValue(uuid)] }

  public func decoder(for uuid: BluetoothUUID) -> CharacteristicDecoder? { index(for: uuid).map { tables.decoders[$0] } }

  /// The format a user declared for the decoder at `index`, if it is a user's decoder.
  package func declaredFormat(decoder index: Int) -> DeclaredFormat? {
    box.tables.decoders[index].declaredFormat.map { box.tables.declaredFormats[$0] }
  }

  /// Decodes `bytes` with the decoder at `index`, a user's declared format included (tests,
  /// tools).
  public func decode(_ bytes: [UInt8], decoder index: Int, context: ValueContext? = nil) -> DecodedValue {
    self[decoder: index].decode(bytes, format: declaredFormat(decoder: index), context: context)
  }

  /// Adds a format a user declared (once: the same format again keeps its place); returns its
  /// place in `declaredFormats`.
  mutating func declare(_ format: DeclaredFormat) -> Int {
    if let place = tables.declaredFormats.firstIndex(where: { $0 === format }) { return place }
    change { $0.declaredFormats.append(format) }
    return tables.declaredFormats.count - 1
  }

  /// The UUID `handle` is decoded as on `peer`, when overridden (a peer's own override first).
  func handleOverride(_ handle: UInt16, peer: BDAddr?) -> BluetoothUUID? {
    let overrides = tables.handleOverrides
    guard !overrides.isEmpty else { return nil }
    if let peer, let own = overrides.first(where: { $0.handle == handle && $0.peer == peer }) { return own.uuid }
    return overrides.first { $0.handle == handle && $0.peer == nil }?.uuid
  }

  func company(_ id: UInt16) -> PayloadDecoder? { tables.companies.isEmpty ? nil : tables.companies[id] }
  func serviceData(_ uuid: UInt16) -> PayloadDecoder? { tables.serviceData.isEmpty ? nil : tables.serviceData[uuid] }
  func vendorCommand(_ ocf: UInt16) -> PayloadDecoder? { tables.vendorCommands.isEmpty ? nil : tables.vendorCommands[ocf] }
  var vendorEvent: PayloadDecoder? { tables.vendorEvent }
  func psm(_ psm: UInt16) -> PayloadDecoder? { tables.psms.isEmpty ? nil : tables.psms[psm] }
}
