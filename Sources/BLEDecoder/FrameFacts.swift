import BLECore

// Typed facts of one frame, beside its field list. Decoders record them; renderers derive the
// header line from them and analyses (summary, heart-rate series, diff) read them, so every
// consumer sees the same facts whatever it shows.

/// What an HCI packet is.
public enum HCIFact: Sendable, Equatable {
  /// Not an HCI packet (a monitor note, an index record), or nothing decoded yet.
  case none
  case command(opcode: UInt16)
  /// `subevent` for LE Meta events (0x3E).
  case event(code: UInt8, subevent: UInt8?)
  case acl(handle: UInt16)
  case sco(handle: UInt16)
  case iso(handle: UInt16)
}

/// Connection parameters as the controller reports them (raw units).
public struct ConnectionParameters: Sendable, Equatable {
  /// Connection interval in units of 1.25 ms.
  public var interval: UInt16
  public var latency: UInt16
  /// Supervision timeout in units of 10 ms.
  public var supervisionTimeout: UInt16

  public init(interval: UInt16, latency: UInt16, supervisionTimeout: UInt16) {
    self.interval = interval
    self.latency = latency
    self.supervisionTimeout = supervisionTimeout
  }

  public var intervalMilliseconds: Double { Double(interval) * 1.25 }
  public var supervisionTimeoutMilliseconds: Double { Double(supervisionTimeout) * 10 }
}

/// One advertising report: who advertised, and what the analyses name devices by.
public struct AdvertisementFact: Sendable, Equatable {
  public var address: BDAddr
  public var addressType: AddressType?
  /// dBm; nil when the controller did not measure it (127).
  public var rssi: Int8?
  /// The Complete or Shortened Local Name.
  public var name: String?
  public var appearance: UInt16?
  /// The company of the first Manufacturer Specific Data structure.
  public var company: UInt16?

  public init(address: BDAddr, addressType: AddressType?, rssi: Int8? = nil, name: String? = nil, appearance: UInt16? = nil, company: UInt16? = nil) {
    self.address = address
    self.addressType = addressType
    self.rssi = rssi
    self.name = name
    self.appearance = appearance
    self.company = company
  }
}

/// Something that happened to a link (or to a link being made): the story a connection
/// summary tells. Statuses and reasons are HCI error codes.
public enum LinkEvent: Sendable, Equatable {
  /// The host asked to connect (LE Create Connection, LE Extended Create Connection, Create
  /// Connection); `peer` is nil when the filter accept list is used.
  case connectRequested(peer: BDAddr?, peerType: AddressType?, isLE: Bool)
  /// The controller refused the connection request at once (Command Status with an error).
  case connectRejected(status: UInt8)
  /// The host cancelled a connection attempt.
  case connectCancelRequested
  case connected(status: UInt8, handle: UInt16, peer: BDAddr?, peerType: AddressType?, role: LinkRole?, parameters: ConnectionParameters?)
  case parametersUpdated(status: UInt8, handle: UInt16, parameters: ConnectionParameters)
  /// The peripheral asked over L2CAP for other parameters (an interval range, latency, timeout).
  case parametersRequested(handle: UInt16, intervalMinimum: UInt16, intervalMaximum: UInt16, latency: UInt16, supervisionTimeout: UInt16)
  /// The host asked to disconnect (HCI Disconnect).
  case disconnectRequested(handle: UInt16, reason: UInt8)
  case disconnected(status: UInt8, handle: UInt16, reason: UInt8)
  /// A device of the sniffed link `handle` is heard on the advertising channels (advertising to
  /// be connected, or in a CONNECT_IND) while the link has been quiet for six intervals or
  /// more, within its supervision timeout: the link may have ended unseen (an encrypted
  /// LL_TERMINATE_IND, say). Once a quiet spell.
  case heardElsewhere(handle: UInt16, device: BDAddr)
  case encryptionChanged(status: UInt8, handle: UInt16, enabled: Bool)
  case phyUpdated(status: UInt8, handle: UInt16, transmit: UInt8, receive: UInt8)
  case dataLengthChanged(handle: UInt16, maxTransmitOctets: UInt16, maxTransmitTime: UInt16, maxReceiveOctets: UInt16, maxReceiveTime: UInt16)
  case remoteVersion(status: UInt8, handle: UInt16, version: UInt8, manufacturer: UInt16, subversion: UInt16)
  case advertisement(AdvertisementFact)
  /// An SMP command on the link: its code, and the reason of Pairing Failed.
  case securityManager(code: UInt8, reason: UInt8?)
  /// SMP Pairing Request (code 1) or Pairing Response (2): what its sender can do, from which
  /// the pairing method follows (Core Vol 3 Part H §2.3.5.1). `authRequirements` is AuthReq
  /// (bit 2 MITM, bit 3 Secure Connections).
  /// `maximumKeySize` in octets; `initiatorKeys`/`responderKeys` the Key Distribution bits
  /// (0 when the command was too short to hold them).
  case pairingFeatures(code: UInt8, ioCapability: UInt8, oobData: UInt8, authRequirements: UInt8, maximumKeySize: UInt8, initiatorKeys: UInt8, responderKeys: UInt8)
  /// SMP Identity Address Information: the identity address its sender distributed (type 0
  /// public, 1 random static).
  case identityAddress(address: BDAddr, type: AddressType)
}

/// What an ATT PDU did, beyond its opcode.
public enum ATTOperationFact: Sendable, Equatable {
  /// Nothing beyond the attributes the PDU names.
  case plain
  case error(request: UInt8, handle: UInt16, code: UInt8)
  case exchangeMTU(client: UInt16)
  /// Server MTU and the ATT_MTU now in force.
  case exchangeMTUResponse(server: UInt16, mtu: Int)
  /// A request over a handle range (Find Information, Find By Type Value, Read By (Group) Type),
  /// with its attribute type and, for Find By Type Value, the UUID searched for.
  case range(start: UInt16, end: UInt16, type: BluetoothUUID?, value: BluetoothUUID?)
  /// A discovery response: how many entries of what.
  case found(count: Int, noun: DiscoveryNoun)
  /// Read Multiple (Variable) Request.
  case handles(count: Int)
  /// A part of a long value read so far (`first`: the Read Response that starts it).
  case longReadPart(total: Int, first: Bool)
  case readBlobRequest(offset: UInt16)
  case prepareWrite(offset: UInt16, length: Int)
  /// Execute Write Request: `cancelled` queued parts were dropped (flags 0), or the queue was written.
  case executeWrite(cancelled: Int?)
  /// A value whose attribute is not known (a response without its request, Read Multiple
  /// values that cannot be split), in the frame's `valueBytes`.
  case unattributedValue(Range<Int>)
}

/// What a discovery response lists.
public enum DiscoveryNoun: Sendable, Equatable {
  case attributes, services, characteristics
}

/// The ATT side of a frame.
public struct ATTFact: Sendable, Equatable {
  public var opcode: UInt8
  /// The L2CAP channel (4 for the fixed channel; an EATT or BR/EDR channel otherwise).
  public var channel: UInt16
  /// The ATT bearer, the same in both directions (a dynamic channel's two CIDs differ): 4 for
  /// the fixed channel.
  public var bearer: UInt32
  public var operation: ATTOperationFact = .plain
  /// The request or indication this PDU answers or confirms, and its opcode.
  public var requestFrame: Int?
  public var requestOpcode: UInt8?
  /// Time from that request, in microseconds (nil when the clock ran backwards).
  public var latency: Int64?

  public init(opcode: UInt8, channel: UInt16, bearer: UInt32 = 4) {
    self.opcode = opcode
    self.channel = channel
    self.bearer = bearer
  }

  public var kind: ATTMethodKind { ATTMethodKind(opcode: opcode) }
  /// For an Error Response with an application error (0x80–0x9F) about a characteristic
  /// whose profile names it: that characteristic.
  public var errorCharacteristic: BluetoothUUID?

  /// Whether the attribute table this PDU is about is the local device's (the capturing host
  /// is the GATT server): a request received, or a response or notification sent. Nil when the
  /// capture does not say which way the frame went.
  public func serverIsLocal(_ direction: Direction?) -> Bool? {
    direction.map { ATTLayer.serverIsLocal(opcode: opcode, direction: $0) }
  }

  /// The ATT error code of an Error Response.
  public var errorCode: UInt8? {
    if case .error(_, _, let code) = operation { return code }
    return nil
  }

  /// The name of an Error Response's error: the profile's for an application error about a
  /// characteristic that defines it (0x80 on the Heart Rate Control Point: "Control Point Not
  /// Supported"), else the ATT name.
  public var errorName: Name? {
    guard let code = errorCode else { return nil }
    if let errorCharacteristic, let name = ProfileRegistry.applicationErrorName(code, characteristic: errorCharacteristic) { return name }
    return AssignedNumbers.attErrorName(code)
  }
}

/// One attribute a frame is about: its handle, what GATT says it is, and its value.
public struct AttributeFact: Sendable {
  public var handle: UInt16
  public var operation: GATTOperation
  /// What the handle is, when a GATT database knows it.
  public var meaning: ResolvedHandle?
  /// What the value's decoder is told: the attribute's UUID and, for a descriptor, its
  /// characteristic. Worked out when asked (where a value is decoded or its words written),
  /// which is often on the consumer's thread rather than the dissecting one.
  public var valueContext: ValueContext {
    var context = Self.context(for: meaning, operation: operation)
    context.reportReference = reportReference
    return context
  }
  /// For a HID Report: its Report Reference, when the capture showed the descriptor read.
  public internal(set) var reportReference: HIDReportReference?
  /// The typed value, when a decoder read it.
  public var value: (any CharacteristicValue)? { hasValue ? typedValue : nil }
  /// The typed value as stored: not optional, so it is opened where it lies (an optional
  /// existential reached through an optional chain is copied first, value and all) and
  /// written in place by decoding. `NoValue` until a decoder sets it.
  public internal(set) var typedValue: any CharacteristicValue = NoValue()
  /// Whether there is a typed value (asked without touching the value itself).
  public internal(set) var hasValue = false

  /// The typed value if it is a `Value` (analyses: `fact.value(as: HeartRateMeasurement.self)`).
  /// The value is opened and its type compared: cheaper than a dynamic cast (`as?`), which
  /// would search conformances on every frame. A user's format that replaced a built-in
  /// decoder (`DeclaredValue`) still answers for the built-in type: analyses read the same
  /// facts whatever decoders the user gave.
  @inlinable public func value<Value: CharacteristicValue>(as type: Value.Type) -> Value? {
    guard hasValue else { return nil }
    func same<Stored: CharacteristicValue>(_ value: Stored) -> Value? {
      // Returned as `sameType` gives it: unwrapping and wrapping again would copy the value twice.
      if Stored.self == Value.self { return sameType(value, as: Value.self) }
      if Stored.self == DeclaredValue.self { return sameType(value, as: DeclaredValue.self)?.builtInValue(as: type) }
      return nil
    }
    return same(typedValue)
  }

  /// The typed value's header words (renderers).
  public func summarizeValue(into line: inout SummaryLine) {
    typedValue.summarize(into: &line, context: valueContext)
  }

  mutating func setValue(_ value: some CharacteristicValue) {
    typedValue = value
    hasValue = true
  }
  /// The value's registry entry (its JSON key, whether its words say it all).
  public var decoderIndex: Int?
  /// The raw value's bytes in the frame's `valueBytes`, when the PDU carried a value.
  public var rawValue: Range<Int>?
  /// The value did not fit its format.
  public var isMalformed = false

  public init(handle: UInt16, operation: GATTOperation) {
    self.handle = handle
    self.operation = operation
  }

  static func context(for meaning: ResolvedHandle?, operation: GATTOperation) -> ValueContext {
    let unknown = BluetoothUUID(uuid16: 0)
    guard let meaning else { return ValueContext(operation: operation, uuid: unknown) }
    if meaning.role == .descriptor {
      return ValueContext(
        operation: operation, uuid: meaning.descriptor ?? unknown, characteristic: meaning.characteristic,
        characteristicName: meaning.characteristicName)
    }
    return ValueContext(operation: operation, uuid: meaning.characteristic ?? meaning.descriptor ?? unknown)
  }

  public var service: BluetoothUUID? { meaning?.service }
  public var characteristic: BluetoothUUID? { meaning?.characteristic }
  /// The descriptor's own type when the handle is a descriptor (or a declaration).
  public var descriptor: BluetoothUUID? { meaning?.role == .characteristicValue ? nil : meaning?.descriptor }
}

/// The typed value of a fact that has none (kept instead of an optional; see `typedValue`).
public struct NoValue: CharacteristicValue {
  public init() {}
  public init(parsing reader: inout ByteReader) throws(DecodeError) {}
  public func writeFields(to fields: inout FieldList, context: ValueContext) {}
  public func summarize(into summary: inout SummaryLine, context: ValueContext) {}
}

extension DissectedFrame {
  /// Calls `body` with attribute `index` where it lies. An array element read through the
  /// array's getter is copied whole (its typed value, meaning and strings retained and released
  /// again); one reached for modification is not, so the fact is reached that way, and lent.
  @inlinable public mutating func withAttribute<R>(_ index: Int, _ body: (borrowing AttributeFact) -> R) -> R {
    Self.lend(&storedAttributes[index], body)
  }

  @inlinable static func lend<T, R>(_ value: inout T, _ body: (borrowing T) -> R) -> R { body(value) }

  /// Calls `body` with each attribute's typed value of type `Value` and the operation that
  /// carried it. The facts are read where they lie (`withAttribute`): iterating `attributes`
  /// copies every fact, typed value and all, before looking at it.
  @inlinable public mutating func forEachValue<Value: CharacteristicValue>(as type: Value.Type, _ body: (GATTOperation, Value) -> Void) {
    for index in attributes.indices {
      withAttribute(index) { fact in
        if let value = fact.value(as: type) { body(fact.operation, value) }
      }
    }
  }
}
