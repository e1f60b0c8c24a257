import BLECore
import BLEDecoder

/// One step of a GATT client's procedure, normalized so that two captures of the same session
/// give the same steps: what was done, to which characteristic (by UUID, not handle), and how
/// it ended. Notifications are values, not steps (the diff compares them as values).
package struct ProcedureStep: Sendable {
  package enum Kind: String, Sendable {
    case exchangeMTU = "exchange_mtu"
    case discoverServices = "discover_services"
    case discoverCharacteristics = "discover_characteristics"
    case discoverDescriptors = "discover_descriptors"
    case read
    case write
    case writeCommand = "write_command"
    case subscribe
  }

  package enum Outcome: Sendable, Hashable {
    case ok
    case error(UInt8)
    /// A request the capture shows no answer to.
    case noAnswer
    /// Prepared writes the client cancelled (Execute Write with flags 0).
    case cancelled
  }

  package var kind: Kind
  /// The characteristic (a descriptor's characteristic for subscriptions), or the service for
  /// characteristic discovery; nil when the capture never named it.
  package var uuid: BluetoothUUID?
  /// For subscriptions: "notify", "indicate", "both" or "off".
  package var detail: Name?
  package var outcome: Outcome
  /// The frame of the request, and its time.
  package var frame: Int
  package var time: Int64
  /// The handle the request named (discovery: the range's start), to name the service or
  /// characteristic once the capture's tables are known.
  var handle: UInt16?

  /// Equal as steps of a procedure: same kind, same thing, same detail (the outcome and where
  /// it happened aside).
  package func isSameStep(as other: ProcedureStep) -> Bool {
    kind == other.kind && uuid == other.uuid && detail?.description == other.detail?.description
  }
}

/// Collects each connection's procedure steps from frames, in order, and what its reads and
/// writes carried (`ExchangeLedger`), one log per client: on a link where both ends query each
/// other's tables (a band discovering the phone's server while the phone uses the band's),
/// each end's requests are a log of their own. Bounded: past `maximumSteps` a log's further
/// steps are counted, not kept (its ledger still counts every exchange).
package struct OperationLog: Sendable {
  package static let maximumSteps = 4096
  package static let maximumConnections = 256
  static let maximumOpen = 4096

  struct Key: Hashable, Sendable {
    var adapter: UInt16
    var handle: UInt16
    var generation: Int
    var localIsClient: Bool
  }

  package struct Connection: Sendable {
    package var label: ConnectionLabel
    package var steps: [ProcedureStep] = []
    package var exchanges = ExchangeLedger()
    /// Whether the capturing host was the client (sent these requests) or the server (a
    /// peripheral's capture answers the phone's requests itself). A capture that does not say
    /// which way frames went counts as the client's.
    package var localIsClient: Bool
    /// The capturing host's role on the link, when its connection event was captured.
    package var localRole: LinkRole?
    /// Whether these are the central's requests (the usual case: a phone using a strap's
    /// table); a link without a known role counts the capturing host as the central.
    package var centralIsClient: Bool { localIsClient == (localRole != .peripheral) }
    /// A read whose value may go on in Read Blob responses: accounted when the next step starts.
    var openRead: (key: ExchangeLedger.Key, value: ExchangedValue, place: Occurrence)?
    /// The ledger's key of the last step (an Execute Write names no handle).
    var lastKey: ExchangeLedger.Key?
  }

  /// A request waiting for its answer.
  struct OpenExchange: Sendable {
    var connection: Int
    var step: Int?
    var key: ExchangeLedger.Key?
    /// A write's payload (its outcome comes with the answer).
    var written: ExchangedValue?
    var place: Occurrence
  }

  /// Steps by connection, in the order connections were first seen.
  package private(set) var connections: [Connection] = []
  /// Every answer's latency, by procedure, by the end that asked and by how the capture timed it.
  package internal(set) var latencies = LatencyTimings()
  package private(set) var stepsNotKept = 0
  var index: [Key: Int] = [:]
  /// Open requests by request frame.
  var pending: [Int: OpenExchange] = [:]
  var occurrenceBudget = ExchangeLedger.occurrenceBudget
  var valueBudget = ExchangeLedger.valueBudget
  /// The local role of each open link (by controller and handle).
  var roles: [UInt32: LinkRole] = [:]

  package init() {}

  package mutating func add(_ frame: inout DissectedFrame) {
    for event in frame.linkEvents {
      if case .connected(0, let handle, _, _, let role?, _) = event, roles.count < Self.maximumOpen {
        roles[UInt32(frame.record.adapter) << 16 | UInt32(handle)] = role
      }
    }
    guard let label = frame.connection, let att = frame.att else { return }
    if let latency = att.latency, let request = att.requestOpcode { timeAnswer(request, latency, label, &frame) }
    let place = Occurrence(frame: frame.number, time: frame.record.timestamp)
    if let request = att.requestFrame, let open = pending.removeValue(forKey: request) {
      answer(open, att, frame: &frame, place: place)
    }
    guard att.kind == .request || att.kind == .command, let kind = Self.kind(att.opcode, att.operation) else { return }
    let localIsClient = att.serverIsLocal(frame.direction).map { !$0 } ?? true
    let connectionKey = Key(adapter: label.adapter, handle: label.handle, generation: label.generation, localIsClient: localIsClient)
    let connection: Int
    if let known = index[connectionKey] {
      connection = known
    } else {
      guard connections.count < Self.maximumConnections else { return }
      connections.append(Connection(label: label, localIsClient: localIsClient, localRole: roles[UInt32(label.adapter) << 16 | UInt32(label.handle)]))
      connection = connections.count - 1
      index[connectionKey] = connection
    }
    let attribute = frame.attributes.first
    var step = ProcedureStep(
      kind: kind, uuid: attribute?.meaning?.characteristic ?? attribute?.meaning?.descriptor, detail: nil,
      outcome: att.kind == .command ? .ok : .noAnswer, frame: frame.number, time: frame.record.timestamp, handle: attribute?.handle)
    switch att.operation {
    case let .range(start, _, type, value):
      step.handle = start
      if kind == .read { step.uuid = type }
      // Find By Type Value searches for one service; Read By Group Type for them all.
      if kind == .discoverServices { step.uuid = value }
    default: break
    }
    if kind == .write, attribute?.meaning?.descriptor?.uuid16 == 0x2902 {
      step.kind = .subscribe
      step.uuid = attribute?.meaning?.characteristic
      if let configuration = attribute?.value(as: ClientCharacteristicConfiguration.self) {
        switch configuration.rawValue & 3 {
        case 0: step.detail = "off"
        case 1: step.detail = "notify"
        case 2: step.detail = "indicate"
        default: step.detail = "both"
        }
      }
    }
    // A long read's blobs, or a discovery's next request, continue the step before.
    if let last = connections[connection].steps.last, Self.continues(last, with: step, opcode: att.opcode) {
      if att.kind == .request, pending.count < Self.maximumOpen {
        pending[frame.number] = OpenExchange(
          connection: connection, step: connections[connection].steps.count - 1,
          key: exchangeKey(step, attribute) ?? connections[connection].lastKey, written: written(att, &frame),
          place: place)
      }
      return
    }
    flushRead(connection)
    var stepIndex: Int?
    if connections[connection].steps.count < Self.maximumSteps {
      connections[connection].steps.append(step)
      stepIndex = connections[connection].steps.count - 1
    } else {
      stepsNotKept = stepsNotKept.saturatingAdd(1)
    }
    var key = exchangeKey(step, attribute)
    if att.opcode == 0x0E || att.opcode == 0x20, frame.attributes.count > 1 {
      // Read Multiple: the set read together is the thing compared (a response without
      // lengths cannot be split into its values).
      key = ExchangeLedger.Key(kind: .read, group: frame.attributes.map { Self.key(.read, $0) })
    }
    connections[connection].lastKey = key
    if att.kind == .command {
      if let key, let value = written(att, &frame) { account(connection, key, value, place) }
    } else if pending.count < Self.maximumOpen {
      pending[frame.number] = OpenExchange(connection: connection, step: stepIndex, key: key, written: written(att, &frame), place: place)
    }
  }

  /// Counts the latency of an answer (a response, an indication's confirmation) under the end
  /// that asked and how it was timed: on the air by a sniffer, else at the capturing host,
  /// which asked (the answer came in) or answered (it went out). A frame that says neither
  /// which end sent it nor which way it went counts as the central's answer to the capturing
  /// host, the central, as steps do.
  mutating func timeAnswer(_ request: UInt8, _ latency: Int64, _ label: ConnectionLabel, _ frame: inout DissectedFrame) {
    let clock: LatencyClock
    let centralAsked: Bool
    if let air = frame.air {
      clock = .air
      // The answer's sender did not ask.
      centralAsked = !(air.header.fromCentral ?? frame.direction.map { $0 == .hostToController } ?? false)
    } else {
      let localAsked = frame.direction != .hostToController
      clock = localAsked ? .askingHost : .answeringHost
      centralAsked = localAsked == (roles[UInt32(label.adapter) << 16 | UInt32(label.handle)] != .peripheral)
    }
    latencies.add(LatencyTimings.Key(opcode: request, centralAsked: centralAsked, clock: clock), microseconds: latency)
  }

  /// The ledger's key for a read or write step (discovery and subscriptions are compared as
  /// steps, not values).
  func exchangeKey(_ step: ProcedureStep, _ attribute: AttributeFact?) -> ExchangeLedger.Key? {
    switch step.kind {
    case .read, .write, .writeCommand: break
    default: return nil
    }
    // Read By Type by a characteristic's UUID names its type, not a handle.
    if step.kind == .read, attribute == nil {
      return step.uuid.map { ExchangeLedger.Key(kind: .read, characteristic: $0) }
    }
    guard let attribute else { return nil }
    return Self.key(step.kind, attribute)
  }

  static func key(_ kind: ProcedureStep.Kind, _ attribute: AttributeFact) -> ExchangeLedger.Key {
    let meaning = attribute.meaning
    let named = meaning?.characteristic != nil || meaning?.descriptor != nil
    return ExchangeLedger.Key(
      kind: kind, service: meaning?.service, characteristic: meaning?.characteristic, descriptor: attribute.descriptor,
      handle: named ? nil : attribute.handle)
  }

  /// A write's payload as sent, with the decoder's words for it.
  func written(_ att: ATTFact, _ frame: inout DissectedFrame) -> ExchangedValue? {
    if case .executeWrite(_?) = att.operation { return ExchangedValue(outcome: .cancelled) }
    guard att.opcode == 0x12 || att.opcode == 0x52 || att.opcode == 0xD2 || att.opcode == 0x18,
      let attribute = frame.attributes.first, let range = attribute.rawValue
    else { return nil }
    return ExchangedValue(bytes: frame.valueBytes(range), outcome: .ok, words: Self.words(attribute))
  }

  static func words(_ attribute: AttributeFact) -> String? {
    guard let value = attribute.value else { return nil }
    var line = SummaryLine()
    value.summarize(into: &line, context: attribute.valueContext)
    return line.isEmpty ? nil : line.text
  }

  mutating func account(_ connection: Int, _ key: ExchangeLedger.Key, _ value: ExchangedValue, _ place: Occurrence) {
    connections[connection].exchanges.add(key, value, at: place, budget: &occurrenceBudget, valueBudget: &valueBudget)
  }

  /// A read's value is final once the next step starts (a long value's Read Blobs continue it).
  mutating func flushRead(_ connection: Int) {
    guard let open = connections[connection].openRead else { return }
    connections[connection].openRead = nil
    account(connection, open.key, open.value, open.place)
  }

  mutating func answer(_ open: OpenExchange, _ att: ATTFact, frame: inout DissectedFrame, place: Occurrence) {
    if let step = open.step { settle(open.connection, step, att) }
    let connection = open.connection
    if let code = att.errorCode {
      guard let key = open.key else { return }
      // Attribute Not Found answering a Read By Type: nothing of that type, not a failure.
      if code == 0x0A, key.kind == .read, key.handle == nil, key.service == nil, open.written == nil, att.requestOpcode == 0x08 {
        account(connection, key, ExchangedValue(outcome: .ok), place)
        return
      }
      flushRead(connection)
      account(connection, key, ExchangedValue(outcome: .error(code)), place)
      return
    }
    guard let key = open.key else { return }
    switch key.kind {
    case .write:
      // Prepare Write Responses only echo a part: the write ends with its Execute Write.
      if att.opcode == 0x13 || att.opcode == 0x19 {
        account(connection, key, open.written ?? ExchangedValue(outcome: .ok), open.place)
      }
    case .read:
      if key.group != nil {
        // The whole response, whether or not its values could be told apart.
        let bytes: ArraySlice<UInt8>
        var words: String?
        if case .unattributedValue(let range) = att.operation {
          bytes = frame.valueBytes(range)
        } else {
          bytes = frame.attributes.compactMap(\.rawValue).reduce(into: ArraySlice<UInt8>()) { $0 += frame.valueBytes($1) }
          let each = frame.attributes.compactMap(Self.words)
          if each.count == frame.attributes.count { words = each.joined(separator: ", ") }
        }
        account(connection, key, ExchangedValue(bytes: bytes, outcome: .ok, words: words), place)
        return
      }
      for attribute in frame.attributes where attribute.rawValue != nil {
        let value = ExchangedValue(bytes: frame.valueBytes(attribute.rawValue!), outcome: .ok, words: Self.words(attribute))
        let attributeKey = attribute.meaning == nil && key.handle == nil ? key : Self.key(.read, attribute)
        if case .longReadPart = att.operation {
          connections[connection].openRead = (attributeKey, value, place)
        } else {
          account(connection, attributeKey, value, place)
        }
      }
    default:
      break
    }
  }

  /// Requests the capture never shows answered, and the last read, once the capture has ended.
  package mutating func finishExchanges() {
    for open in pending.values.sorted(by: { $0.place.frame < $1.place.frame }) {
      guard let key = open.key else { continue }
      var value = open.written ?? ExchangedValue(outcome: .noAnswer)
      value.outcome = .noAnswer
      account(open.connection, key, value, open.place)
    }
    pending.removeAll()
    for connection in connections.indices { flushRead(connection) }
  }

  /// A step's outcome from its answer.
  mutating func settle(_ connection: Int, _ step: Int, _ att: ATTFact) {
    var outcome = ProcedureStep.Outcome.ok
    if let code = att.errorCode {
      let kind = connections[connection].steps[step].kind
      let discovery = kind == .discoverServices || kind == .discoverCharacteristics || kind == .discoverDescriptors
      // Attribute Not Found ends a discovery, and a read by type of an absent type: no error.
      if !(code == 0x0A && (discovery || kind == .read)) { outcome = .error(code) }
    }
    if outcome != .ok || connections[connection].steps[step].outcome == .noAnswer {
      connections[connection].steps[step].outcome = outcome
    }
  }

  static func kind(_ opcode: UInt8, _ operation: ATTOperationFact) -> ProcedureStep.Kind? {
    switch opcode {
    case 0x02: return .exchangeMTU
    case 0x04: return .discoverDescriptors
    case 0x06, 0x10: return .discoverServices
    case 0x08:
      if case .range(_, _, let type?, _) = operation, type.uuid16 == 0x2803 { return .discoverCharacteristics }
      if case .range(_, _, let type?, _) = operation, type.uuid16 == 0x2802 { return .discoverCharacteristics }
      return .read
    case 0x0A, 0x0C, 0x0E, 0x20: return .read
    case 0x12, 0x16, 0x18: return .write
    case 0x52, 0xD2: return .writeCommand
    default: return nil
    }
  }

  /// Whether `step` only continues `last` (and is not a step of its own).
  static func continues(_ last: ProcedureStep, with step: ProcedureStep, opcode: UInt8) -> Bool {
    switch opcode {
    case 0x0C: return last.kind == .read && last.handle == step.handle  // Read Blob
    case 0x18: return last.kind == .write  // Execute Write ends the prepared writes
    case 0x16: return last.kind == .write && last.handle == step.handle
    case 0x06, 0x10: return last.kind == .discoverServices && last.uuid == step.uuid
    default: return false
    }
  }

  /// Names discovery steps once the capture's tables are known (the service a characteristic
  /// discovery searched, the characteristic a descriptor discovery searched), then merges the
  /// requests of one discovery into one step.
  /// `table`: the attribute table a connection's requests were about (the peer's, or the
  /// local device's when the capturing host was the server).
  package mutating func finish(table: (Connection) -> GATTAttributeTree?) {
    finishExchanges()
    for connection in connections.indices {
      guard let tree = table(connections[connection]) else { continue }
      var merged: [ProcedureStep] = []
      for var step in connections[connection].steps {
        if let handle = step.handle {
          switch step.kind {
          case .discoverCharacteristics:
            step.uuid = tree.services.first { $0.start <= handle && handle <= $0.end }?.uuid
          case .discoverDescriptors:
            step.uuid = Self.characteristic(before: handle, in: tree)?.uuid
          default: break
          }
        }
        if let last = merged.last, last.kind == step.kind, (step.kind == .discoverCharacteristics || step.kind == .discoverDescriptors),
          last.isSameStep(as: step)
        {
          continue
        }
        merged.append(step)
      }
      connections[connection].steps = merged
    }
  }

  static func characteristic(before handle: UInt16, in tree: GATTAttributeTree) -> GATTCharacteristicEntry? {
    var found: GATTCharacteristicEntry?
    for service in tree.services {
      for characteristic in service.characteristics where characteristic.valueHandle < handle { found = characteristic }
    }
    return found
  }
}
