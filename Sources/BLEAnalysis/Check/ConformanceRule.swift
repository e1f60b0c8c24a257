import BLECore

/// One rule of the specifications that `check` can prove broken from a capture: its id (the
/// catalogue's, ../shared/reference/conformance.md), what it says, the clause, how sure a
/// finding of it is, and the gate that keeps it quiet where the capture cannot tell.
/// docs/check.md lists the same rules (a test keeps the two equal).
package struct ConformanceRule: Sendable, Hashable, CustomStringConvertible {
  /// Upper case, `AREA-NN`: stable (an id is never reused).
  package let id: String
  /// What the rule requires, in one sentence.
  package let requirement: String
  /// Where the specification says so.
  package let clause: String
  /// error: a "shall" the frames prove broken; warning: a "should", or a proof that rests on
  /// an assumption the message names.
  package let severity: ConformanceFinding.Severity
  /// When the rule keeps quiet (what the capture must show before it may speak).
  package let gate: String

  init(_ id: String, _ severity: ConformanceFinding.Severity, _ requirement: String, _ clause: String, gate: String) {
    self.id = id
    self.severity = severity
    self.requirement = requirement
    self.clause = clause
    self.gate = gate
  }

  package var description: String { id }
  package static func == (a: ConformanceRule, b: ConformanceRule) -> Bool { a.id == b.id }
  package func hash(into hasher: inout Hasher) { hasher.combine(id) }

  /// The diagnostic a frame carries when `annotate --check` marks it with this rule.
  package var diagnosticKind: DiagnosticKind {
    switch id.prefix(while: { $0 != "-" }) {
    case "ADV": return .advertisingRuleBroken
    case "L2C", "SMP": return .l2capRuleBroken
    case "LL": return .linkLayerRuleBroken
    case "HCI": return .hciRuleBroken
    case "ATT": return .attRuleBroken
    case "GATT", "GAP": return .gattRuleBroken
    default: return .profileRuleBroken
    }
  }

  /// The rule with this id (any case), if `check` knows it.
  package static func named(_ id: String) -> ConformanceRule? {
    let wanted = id.uppercased()
    return all.first { $0.id == wanted }
  }
}

extension ConformanceRule {
  // Gates, worded once.
  static let lateStartGate = "off on a connection whose start the capture lacks, until the state it needs is seen"
  static let lossGate = "a warning, not an error, on a sniffed link where the sniffer missed packets or could not decrypt"
  static let tableGate = "only with the characteristic's declaration discovered in this capture (not a map or the cache)"

  static let att01 = ConformanceRule(
    "ATT-01", .error, "A client sends no other request on a bearer until the response to its previous one.",
    "Core v5.4 Vol 3 Part F §3.3.2", gate: lossGate)
  static let att02 = ConformanceRule(
    "ATT-02", .error, "A request or indication is answered within 30 s (a transaction not completed by then has timed out).",
    "Core v5.4 Vol 3 Part F §3.3.3",
    gate: "only when the link is heard more than 30 s after the request; quiet when the link ends or the capture stops sooner")
  static let att03 = ConformanceRule(
    "ATT-03", .error, "A response answers the request outstanding on its bearer (its opcode, or an Error Response naming that request); commands get no response.",
    "Core v5.4 Vol 3 Part F §3.3.2, §3.4.1.1, §3.4.5.3", gate: lateStartGate + "; " + lossGate)
  static let att04 = ConformanceRule(
    "ATT-04", .error, "A Handle Value Confirmation answers an outstanding indication.",
    "Core v5.4 Vol 3 Part F §3.3.2, §3.4.7.3", gate: lateStartGate + "; " + lossGate)
  static let att05 = ConformanceRule(
    "ATT-05", .error, "A server sends no further indication on a bearer until the previous one is confirmed.",
    "Core v5.4 Vol 3 Part F §3.3.2, §3.4.7.2", gate: lossGate)
  static let att06 = ConformanceRule(
    "ATT-06", .error, "No ATT PDU is longer than the bearer's ATT_MTU.",
    "Core v5.4 Vol 3 Part F §3.2.8, §3.4.2",
    gate: "only when the ATT_MTU in force is known: the connection seen from its start, or its MTU exchange seen")
  static let att07 = ConformanceRule(
    "ATT-07", .error, "A client sends Exchange MTU Request once per connection.",
    "Core v5.4 Vol 3 Part F §3.4.2.1", gate: "none")
  static let att08 = ConformanceRule(
    "ATT-08", .error, "Client Rx MTU and Server Rx MTU are at least 23 (the LE default ATT_MTU).",
    "Core v5.4 Vol 3 Part F §3.4.2.1, §3.4.2.2", gate: "none")
  static let att09 = ConformanceRule(
    "ATT-09", .error, "A device's Exchange MTU Request carries the same MTU as its own Exchange MTU Response.",
    "Core v5.4 Vol 3 Part F §3.4.2.2", gate: "none")
  static let att13 = ConformanceRule(
    "ATT-13", .error, "An Error Response is 5 octets with a defined error code (0x00 is never one; 0x14–0x7F and 0xA0–0xDF are reserved).",
    "Core v5.4 Vol 3 Part F §3.4.1.1 (Table 3.4)", gate: "reserved codes are warnings (a later version may define them)")
  static let att16 = ConformanceRule(
    "ATT-16", .error, "An ATT PDU has the length and parameters its opcode's format gives.",
    "Core v5.4 Vol 3 Part F §3.4.2–§3.4.7", gate: "off for records the capture cut short and on lossy sniffed links")
  static let att17 = ConformanceRule(
    "ATT-17", .error, "A Find Information Response lists whole handle–UUID pairs, ascending, inside the requested range.",
    "Core v5.4 Vol 3 Part F §3.4.3.2", gate: "only when the request is in the capture")
  static let att18 = ConformanceRule(
    "ATT-18", .error, "Read By Type, Read By Group Type and Find By Type Value responses list whole entries, ascending, inside the requested range.",
    "Core v5.4 Vol 3 Part F §3.4.3.4, §3.4.4.2, §3.4.4.10", gate: "only when the request is in the capture")
  static let att19 = ConformanceRule(
    "ATT-19", .error, "A Prepare Write Response echoes the handle, offset and value of its request.",
    "Core v5.4 Vol 3 Part F §3.4.6.2", gate: lossGate)
  static let att20 = ConformanceRule(
    "ATT-20", .error, "An attribute value is at most 512 octets.",
    "Core v5.4 Vol 3 Part F §3.2.9", gate: "none")
  static let gatt06 = ConformanceRule(
    "GATT-06", .error, "A Client Characteristic Configuration value is two octets, its bits 2–15 reserved.",
    "Core v5.4 Vol 3 Part G §3.3.3.3", gate: "reserved bits set are a warning")
  static let gatt07 = ConformanceRule(
    "GATT-07", .error, "A client enables notifications or indications only on a characteristic whose properties allow them.",
    "Core v5.4 Vol 3 Part G §3.3.3.3 (Table 3.11)", gate: tableGate)
  static let gatt08 = ConformanceRule(
    "GATT-08", .error, "A server sends no notification or indication its client turned off in this connection.",
    "Core v5.4 Vol 3 Part G §3.3.3.3, §4.10, §4.11",
    gate: "only after the server acknowledged the client's write that turned it off (Write Response), in the same connection")
  static let gatt09 = ConformanceRule(
    "GATT-09", .warning, "A client writes a characteristic only with a procedure its properties allow (Write Request: Write; Write Command: Write Without Response).",
    "Core v5.4 Vol 3 Part G §3.3.1.1", gate: tableGate)
  static let l2c02 = ConformanceRule(
    "L2C-02", .error, "Only the peripheral sends an L2CAP Connection Parameter Update Request.",
    "Core v5.4 Vol 3 Part A §4.20", gate: "only when the capture shows the roles")
  static let l2c03 = ConformanceRule(
    "L2C-03", .error, "A Connection Parameter Update Request asks for parameters in range: interval 6–3200 with minimum ≤ maximum, latency ≤ 499, timeout 10–3200 and longer than (1 + latency) × maximum interval × 2.",
    "Core v5.4 Vol 3 Part A §4.20; Vol 6 Part B §4.5.2", gate: "none")
  static let smp02 = ConformanceRule(
    "SMP-02", .error, "Pairing Request and Pairing Response ask for a maximum encryption key size of 7 to 16 octets.",
    "Core v5.4 Vol 3 Part H §3.5.1, §3.5.2", gate: "none")
  static let smp03 = ConformanceRule(
    "SMP-03", .error, "A Pairing Response sets no key-distribution bit that the Pairing Request left 0.",
    "Core v5.4 Vol 3 Part H §3.6.1", gate: "only with the Pairing Request of the same link in the capture")
  static let smp05 = ConformanceRule(
    "SMP-05", .error, "Keys are distributed only over a link encrypted with the new key.",
    "Core v5.4 Vol 3 Part H §3.6.1", gate: "off on a connection whose start the capture lacks")
  static let hrs01 = ConformanceRule(
    "HRS-01", .error, "A Heart Rate Measurement holds exactly the fields its flags announce: 1 or 2 octets of heart rate, 2 of Energy Expended when flagged, then whole 2-octet RR-Intervals.",
    "HRS v1.0 §3.1.1", gate: "only where the handle is known to be the Heart Rate Measurement")
  static let hrs04 = ConformanceRule(
    "HRS-04", .error, "The Sensor Contact Supported bit of Heart Rate Measurement stays the same within a connection.",
    "HRS v1.0 §3.1.1.1", gate: "none")
  static let hrs06 = ConformanceRule(
    "HRS-06", .warning, "A Heart Rate service that sends Energy Expended has a Heart Rate Control Point.",
    "HRS v1.0 §3.1, Table 3.1 (C.1)", gate: "a warning: it assumes the capture's characteristic discovery listed the whole service")
  static let hrs07 = ConformanceRule(
    "HRS-07", .error, "A Heart Rate Control Point write of a value other than 0x01 is answered with Error Response 0x80 (Control Point Not Supported).",
    "HRS v1.0 §3.3.1, §1.6", gate: "only where the handle is known to be the Heart Rate Control Point")
  static let hrs09 = ConformanceRule(
    "HRS-09", .warning, "Body Sensor Location is one octet, 0–6 (7–255 reserved), and stays the same within a connection.",
    "HRS v1.0 §3.2", gate: "a changed value within a connection is an error")
  static let ll01 = ConformanceRule(
    "LL-01", .error, "An LL_CONNECTION_UPDATE_IND, LL_CHANNEL_MAP_IND or LL_PHY_UPDATE_IND names an instant still ahead of the connection event that carries it.",
    "Core v5.4 Vol 6 Part B §5.5, §5.1.1, §5.1.2",
    gate: "air captures whose connection events are counted, on a link where the sniffer lost nothing; retransmissions are not judged")
  static let ll03 = ConformanceRule(
    "LL-03", .error, "Only the central sends LL_CONNECTION_UPDATE_IND and LL_CHANNEL_MAP_IND.",
    "Core v5.4 Vol 6 Part B §5.1.1, §5.1.2", gate: "only where the sniffer says who sent the packet, and no ATT exchange contradicts it")
  static let ll04 = ConformanceRule(
    "LL-04", .error, "Connection parameters in LL_CONNECTION_UPDATE_IND and LL_CONNECTION_PARAM_REQ/RSP are in range (interval 6–3200, latency ≤ 499, timeout 10–3200 and longer than (1 + latency) × interval × 2); a channel map uses at least 2 channels.",
    "Core v5.4 Vol 6 Part B §2.4.2, §4.5.2, §5.1.1, §5.1.2, §5.1.7", gate: "none")
  static let hci04 = ConformanceRule(
    "HCI-04", .warning, "The controller reports no protocol failure by the peer (Instant Passed 0x28, LL Response Timeout 0x22, Invalid LL Parameters 0x1E, MIC Failure 0x3D, collisions 0x23 and 0x2A, Unacceptable Connection Parameters 0x3B).",
    "Core v5.4 Vol 1 Part F; Vol 6 Part B §5.2, §5.5",
    gate: "a warning: it rests on the controller's word (a local controller may be at fault)")
  static let adv03 = ConformanceRule(
    "ADV-03", .error, "Each advertising data structure fits the data and holds whole values of its type (UUID lists a multiple of 2, 4 or 16 octets, and so on).",
    "Core v5.4 Vol 3 Part C §11; Core Specification Supplement Part A §1",
    gate: "off for records the capture cut short; a warning in an HCI report (it assumes the controller passed the data on as sent)")
  static let gap01 = ConformanceRule(
    "GAP-01", .error, "GAP characteristics have their sizes: Appearance 2 octets, Peripheral Preferred Connection Parameters 8, Device Name at most 248.",
    "Core v5.4 Vol 3 Part C §12.1, §12.2, §12.3", gate: "only where the handle is known to be the characteristic")
  static let dis01 = ConformanceRule(
    "DIS-01", .error, "Device Information's System ID is 8 octets; PnP ID is 7 octets with Vendor ID Source 1 (Bluetooth SIG) or 2 (USB-IF).",
    "DIS v1.1 §3.9, §3.10", gate: "only where the handle is known to be the characteristic")
  static let bas01 = ConformanceRule(
    "BAS-01", .error, "Battery Level is one octet, a percentage 0–100 (101–255 reserved).",
    "BAS v1.0 §3.1; GATT Specification Supplement (Battery Level)", gate: "none")

  /// Every rule, in the catalogue's order.
  package static let all: [ConformanceRule] = [
    att01, att02, att03, att04, att05, att06, att07, att08, att09, att13, att16, att17, att18, att19, att20,
    gatt06, gatt07, gatt08, gatt09, l2c02, l2c03, smp02, smp03, smp05, ll01, ll03, ll04, hci04, adv03, gap01, hrs01, hrs04, hrs06, hrs07, hrs09, bas01, dis01,
  ]
}
