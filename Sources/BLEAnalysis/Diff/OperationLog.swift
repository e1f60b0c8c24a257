import BLECore
import BLEDecoder

/// One step of a GATT client's procedure, normalized so that two captures of the same session
/// give the same steps: what was done, to which characteristic (by UUID, not handle), and how
/// it ended. Notifications are values, not steps (the diff compares them as values).
public struct ProcedureStep: Sendable {
  public enum Kind: String, Sendable {
    case exchangeMTU = "exchange_mtu"
    case discoverServices = "discover_services"
    case discoverCharacteristics = "discover_characteristics"
    case discoverDescriptors = "discover_descriptors"
    case read
    case write
    case writeCommand = "write_command"
    case subscribe
  }

  public enum Outcome: Sendable, Equatable {
    case ok
    case error(UInt8)
    /// A request the capture shows no answer to.
    case noAnswer
  }

  public var kind: Kind
  /// The characteristic (a descriptor's characteristic for subscriptions), or the service for
  /// characteristic discovery; nil when the capture never named it.
  public var uuid: BluetoothUUID?
  /// For subscriptions: "notify", "indicate", "both" or "off".
  public var detail: StaticString?
  public var outcome: Outcome
  /// The frame of the request, and its time.
  public var frame: Int
  public var time: Int64
  /// The handle the request named (discovery: the range's start), to name the service or
  /// characteristic once the capture's tables are known.
  var handle: UInt16?

  /// Equal as steps of a procedure: same kind, same thing, same detail (the outcome and where
  /// it happened aside).
  public func isSameStep(as other: ProcedureStep) -> Bool {
    kind == other.kind && uuid.map(\.high) == other.uuid.map(\.high) && uuid.map(\.low) == other.uuid.map(\.low)
      && detail?.description == other.detail?.description
  }
}

/// Collects each connection's procedure steps from frames, in order. Bounded: past
/// `maximumSteps` a connection's further steps are counted, not kept.
public struct OperationLog: Sendable {
  public static let maximumSteps = 4096
  public static let maximumConnections = 256

  struct Key: Hashable, Sendable {
    var adapter: UInt16
    var handle: UInt16
    var generation: Int
  }

  /// Steps by connection, in the order connections were first seen.
  public private(set) var connections: [(label: ConnectionLabel, steps: [ProcedureStep])] = []
  public private(set) var stepsNotKept = 0
  var index: [Key: Int] = [:]
  /// Open requests: request frame → (connection, step).
  var pending: [Int: (connection: Int, step: Int)] = [:]

  public init() {}

  public mutating func add(_ frame: inout DissectedFrame) {
    guard let label = frame.connection, let att = frame.att else { return }
    let key = Key(adapter: label.adapter, handle: label.handle, generation: label.generation)
    let connection: Int
    if let known = index[key] {
      connection = known
    } else {
      guard connections.count < Self.maximumConnections else { return }
      connections.append((label, []))
      connection = connections.count - 1
      index[key] = connection
    }
    if let request = att.requestFrame, let open = pending.removeValue(forKey: request) {
      answer(open, att)
    }
    guard att.kind == .request || att.kind == .command, let kind = Self.kind(att.opcode, att.operation) else { return }
    let attribute = frame.attributes.first
    var step = ProcedureStep(
      kind: kind, uuid: attribute?.meaning?.characteristic ?? attribute?.meaning?.descriptor, detail: nil,
      outcome: att.kind == .command ? .ok : .noAnswer, frame: frame.number, time: frame.record.timestamp, handle: attribute?.handle)
    switch att.operation {
    case let .range(start, _, type, _):
      step.handle = start
      if kind == .read { step.uuid = type }
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
      if att.kind == .request { pending[frame.number] = (connection, connections[connection].steps.count - 1) }
      return
    }
    guard connections[connection].steps.count < Self.maximumSteps else {
      stepsNotKept = stepsNotKept.saturatingAdd(1)
      return
    }
    connections[connection].steps.append(step)
    if att.kind == .request && pending.count < 4096 { pending[frame.number] = (connection, connections[connection].steps.count - 1) }
  }

  mutating func answer(_ open: (connection: Int, step: Int), _ att: ATTFact) {
    var outcome = ProcedureStep.Outcome.ok
    if let code = att.errorCode {
      let kind = connections[open.connection].steps[open.step].kind
      let discovery = kind == .discoverServices || kind == .discoverCharacteristics || kind == .discoverDescriptors
      // Attribute Not Found ends a discovery, and a read by type of an absent type: no error.
      if !(code == 0x0A && (discovery || kind == .read)) { outcome = .error(code) }
    }
    if outcome != .ok || connections[open.connection].steps[open.step].outcome == .noAnswer {
      connections[open.connection].steps[open.step].outcome = outcome
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
    case 0x06, 0x10: return last.kind == .discoverServices
    default: return false
    }
  }

  /// Names discovery steps once the capture's tables are known (the service a characteristic
  /// discovery searched, the characteristic a descriptor discovery searched), then merges the
  /// requests of one discovery into one step.
  public mutating func finish(tables: [BDAddr: GATTAttributeTree]) {
    for connection in connections.indices {
      guard let peer = connections[connection].label.peer, let tree = tables[peer] else { continue }
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
