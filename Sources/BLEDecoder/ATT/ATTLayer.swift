import BLECore

/// Facts about the link an ATT PDU travelled on.
struct ATTLinkContext: Sendable {
  var frameNumber: Int
  var timestamp: Int64
  var direction: Direction
  /// The L2CAP channel of the bearer (4: the fixed channel).
  var channel: UInt16
  /// The bearer's key, the same in both directions (4: the fixed channel; a dynamic channel's
  /// two CIDs share one).
  var bearer: UInt32
  /// The device on the other end, when the capture showed its address.
  var peer: BDAddr?
}

/// The one attribute a PDU is about, described after the `att` group: its handle, the value
/// the PDU carried (nil: none, or a long value in `ATTPDU.longValue`), and how it was reached.
typealias AttributeAbout = (handle: UInt16, value: ByteView?, operation: GATTOperation)

/// One ATT PDU being decoded: what its steps share. (The registry is passed beside it, not
/// kept in it: keeping it would retain and release it for every PDU.)
struct ATTPDU {
  let opcode: UInt8
  let link: ATTLinkContext
  /// The request (or indication) this PDU answers (or confirms), found by pairing.
  var answered: PendingRequest?
  /// The request this PDU opens, kept on the bearer once decoded.
  var opened: PendingRequest
  /// Declarations this PDU showed, for the learning step. Optional: most PDUs show none, and
  /// an empty array still costs a release per PDU.
  var declarations: [GATTDeclaration]?
  var learned: [GATTDeclaration] {
    get { declarations ?? [] }
    set { declarations = newValue }
  }
  /// A long value this PDU completed (a read's parts, joined).
  var longValue: [UInt8]?

  var kind: ATTMethodKind { ATTMethodKind(opcode: opcode) }
}

/// ATT PDUs: fields, request/response pairing, MTU, long values, and the GATT meaning of
/// every handle (learned from discovery into the server's `GATTDatabase`).
///
/// Each PDU goes through four steps: pairing with the pending request (`ATTPairing`), the
/// opcode's own step (`ATTDiscoveryPDUs`, `ATTValuePDUs`: fields and facts), the description of
/// the attributes it is about (`GATTDescription`: GATT meaning, typed value), and learning what
/// it showed of the server's table (`GATTLearning`).
///
/// The corresponding specification is Core Vol 3, Part F (ATT) and Part G (GATT).
enum ATTLayer {
  static func opName(_ opcode: UInt8) -> Name {
    AssignedNumbers.attOpcodeName(opcode) ?? "Unknown PDU"
  }

  /// Whether the GATT server of a PDU is the capturing host: servers receive client PDUs
  /// (requests, commands, confirmations) and send the others.
  static func serverIsLocal(opcode: UInt8, direction: Direction) -> Bool {
    (direction == .hostToController) != ATTMethodKind(opcode: opcode).isClientToServer
  }

  static func decode(
    _ r: inout ByteReader, bearer: inout ATTBearer, database: inout GATTDatabase,
    link: ATTLinkContext, registry: DecoderRegistry, frame: inout DissectedFrame
  ) throws(DecodeError) {
    r.layer = .att
    let size = r.remaining
    let opcode = try r.readUInt8()
    frame.deepestLayer = .att
    frame.att = ATTFact(opcode: opcode, channel: link.channel, bearer: link.bearer)
    frame.attOpcode = opcode

    frame.fields.beginObject("att", "ATT", inline: true)
    let attDepth = frame.fields.depth
    frame.fields.addVerbose("opcode", "Opcode", .unsigned(UInt64(opcode), .hex(2)))
    frame.fields.addVerbose("op", "PDU", .staticText(opName(opcode)))
    if size > bearer.mtu {
      frame.diagnostics.append(Diagnostic(.attPDUExceedsMTU, "PDU of \(size) bytes exceeds ATT_MTU \(bearer.mtu)"))
    }

    var pdu = ATTPDU(
      opcode: opcode, link: link, answered: nil,
      opened: PendingRequest(opcode: opcode, frame: link.frameNumber, timestamp: link.timestamp))
    ATTPairing.pair(&pdu, &bearer, &frame)
    let about = try step(&r, &pdu, registry, &bearer, &database, &frame)
    ATTPairing.open(pdu, &bearer)
    frame.fields.close(toDepth: attDepth - 1)

    if let about {
      // Its `gatt` and `decoded` groups are the last fields of the frame: `ValueStage` writes them.
      if let longValue = pdu.longValue {
        ByteView.pinning(longValue) { value in
          GATTDescription.describe(about.handle, value: value, operation: about.operation, endsFrame: true, &pdu, registry, &database, &frame)
        }
      } else {
        GATTDescription.describe(about.handle, value: about.value, operation: about.operation, endsFrame: true, &pdu, registry, &database, &frame)
      }
    }
    if let declarations = pdu.declarations { GATTLearning.learn(declarations, &database, &frame) }
  }

  /// The opcode's own step: its fields and facts; returns the attribute the PDU is about.
  static func step(
    _ r: inout ByteReader, _ pdu: inout ATTPDU, _ registry: DecoderRegistry, _ bearer: inout ATTBearer,
    _ database: inout GATTDatabase, _ frame: inout DissectedFrame
  ) throws(DecodeError) -> AttributeAbout? {
    switch pdu.opcode {
    case 0x01: return try ATTValuePDUs.errorResponse(&r, &pdu, registry, &bearer, &database, &frame)
    case 0x02, 0x03: try exchangeMTU(&r, &pdu, &bearer, &frame)
    case 0x04: try ATTDiscoveryPDUs.rangeRequest(&r, &pdu, &frame)
    case 0x05: try ATTDiscoveryPDUs.findInformationResponse(&r, &pdu, &frame)
    case 0x06: try ATTDiscoveryPDUs.findByTypeValueRequest(&r, &pdu, &frame)
    case 0x07: try ATTDiscoveryPDUs.findByTypeValueResponse(&r, &pdu, &frame)
    case 0x08, 0x10: try ATTDiscoveryPDUs.readByTypeRequest(&r, &pdu, &frame)
    case 0x09: try ATTDiscoveryPDUs.readByTypeResponse(&r, &pdu, registry, &frame)
    case 0x11: try ATTDiscoveryPDUs.readByGroupTypeResponse(&r, &pdu, &frame)
    case 0x0A, 0x0C: return try ATTValuePDUs.readRequest(&r, &pdu, &database, &frame)
    case 0x0B: return ATTValuePDUs.readResponse(&r, &pdu, &bearer, &database, &frame)
    case 0x0D: return ATTValuePDUs.readBlobResponse(&r, &pdu, &bearer, &database, &frame)
    case 0x0E, 0x20: try ATTValuePDUs.readMultipleRequest(&r, &pdu, &frame)
    case 0x0F: ATTValuePDUs.readMultipleResponse(&r, &pdu, registry, &database, &frame)
    case 0x21: try ATTValuePDUs.readMultipleVariableResponse(&r, &pdu, registry, &database, &frame)
    case 0x12, 0x52, 0xD2: return try ATTValuePDUs.write(&r, &pdu, &frame)
    case 0x13: return ATTValuePDUs.writeResponse(pdu, &frame)
    case 0x16, 0x17: return try ATTValuePDUs.prepareWrite(&r, &pdu, &bearer, &frame)
    case 0x18: try ATTValuePDUs.executeWrite(&r, &pdu, registry, &bearer, &database, &frame)
    case 0x19: break  // Execute Write Response
    case 0x1B, 0x1D: return try ATTValuePDUs.handleValue(&r, &pdu, &bearer, &frame)
    case 0x1E: return pdu.answered?.handle.map { (handle: $0, value: nil, operation: .indication) }
    case 0x23: try ATTValuePDUs.multipleHandleValueNotification(&r, &pdu, registry, &database, &frame)
    default: frame.fields.bytes("data", "Data", r.readRemaining())
    }
    return nil
  }

  /// Exchange MTU Request and Response: the client's and the server's receive MTUs; the
  /// smaller (at least 23) is ATT_MTU from the response on.
  static func exchangeMTU(_ r: inout ByteReader, _ pdu: inout ATTPDU, _ bearer: inout ATTBearer, _ frame: inout DissectedFrame) throws(DecodeError) {
    let mtu = try r.readUInt16LE()
    if pdu.opcode == 0x02 {
      frame.fields.uint("client_mtu", "Client RX MTU", mtu)
      bearer.clientMTU = mtu
      frame.att?.operation = .exchangeMTU(client: mtu)
    } else {
      frame.fields.uint("server_mtu", "Server RX MTU", mtu)
      let client = bearer.clientMTU ?? 23
      bearer.mtu = Int(max(23, min(client, mtu)))
      frame.fields.uint("mtu", "ATT_MTU", bearer.mtu)
      frame.att?.operation = .exchangeMTUResponse(server: mtu, mtu: bearer.mtu)
    }
  }

  /// A UUID spelled as an attribute value (2 or 16 bytes, little-endian).
  static func uuidValue(_ bytes: ByteView) -> BluetoothUUID? {
    var reader = ByteReader(bytes, layer: .att)
    switch bytes.count {
    case 2: return try? reader.readUUID16()
    case 16: return try? reader.readUUID128()
    default: return nil
    }
  }

  static func propertiesText(_ properties: UInt8) -> String {
    let names = ["broadcast", "read", "write without response", "write", "notify", "indicate", "signed write", "extended properties"]
    return (0..<8).filter { properties & (1 << $0) != 0 }.map { names[$0] }.joined(separator: ", ")
  }
}
