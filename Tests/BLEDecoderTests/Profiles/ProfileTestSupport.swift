import BLETestSupport
import BLECore
import Testing

@testable import BLEDecoder

/// Thrown by `decodeProfile` when the registry has no decoder for the UUID.
struct NoDecoder: Error {}

/// A value decoded as the GATT layer decodes it: its fields, header-line words and warnings.
struct DecodedProfileValue {
  var fields = FieldList()
  var summaryText = ""
  var diagnostics: [Diagnostic] = []
}

/// Runs the registry's decoder for `uuid` over `bytes` the way the GATT layer does: the typed
/// value, then its fields, header-line words and warnings. Throws the decode error when the
/// value does not fit its format.
func decodeProfile(
  _ uuid: BluetoothUUID, _ bytes: [UInt8], operation: GATTOperation = .notification,
  characteristic: BluetoothUUID? = nil, characteristicName: Name? = nil
) throws -> DecodedProfileValue {
  guard let decoder = ProfileRegistry.decoder(for: uuid) else { throw NoDecoder() }
  let context = ValueContext(operation: operation, uuid: uuid, characteristic: characteristic, characteristicName: characteristicName)
  let decoded = decoder.decode(bytes, context: context)
  var frame = DecodedProfileValue()
  if let value = decoded.value {
    var line = SummaryLine()
    value.writeFields(to: &frame.fields, context: context)
    value.summarize(into: &line, context: context)
    frame.summaryText = line.text
    value.diagnose(into: &frame.diagnostics, context: context)
  }
  if let error = decoded.error { throw error }
  return frame
}

func decodeProfile(_ uuid16: UInt16, _ bytes: [UInt8], operation: GATTOperation = .notification, characteristicName: Name? = nil) throws -> DecodedProfileValue {
  try decodeProfile(BluetoothUUID(uuid16: uuid16), bytes, operation: operation, characteristicName: characteristicName)
}

/// The typed value the registry's decoder for `uuid16` makes of `bytes`.
func typedValue(_ uuid: BluetoothUUID, _ bytes: [UInt8]) -> (any CharacteristicValue)? {
  ProfileRegistry.decoder(for: uuid)?.decode(bytes).value
}

func typedValue(_ uuid16: UInt16, _ bytes: [UInt8]) -> (any CharacteristicValue)? {
  typedValue(BluetoothUUID(uuid16: uuid16), bytes)
}

/// The error the decoder for `uuid16` throws on `bytes`, or nil when it decodes.
func profileError(_ uuid16: UInt16, _ bytes: [UInt8]) -> DecodeError? {
  guard let decoder = ProfileRegistry.decoder(for: BluetoothUUID(uuid16: uuid16)) else { return nil }
  return decoder.decode(bytes).error
}

/// Expects every strict prefix of `bytes` to throw `.truncated` at the profile layer.
func expectPrefixesTruncate(_ uuid16: UInt16, _ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
  for length in 0..<bytes.count {
    let error = profileError(uuid16, Array(bytes.prefix(length)))
    guard let error else {
      Issue.record("prefix of \(length) bytes of \(Hex.string(bytes)) decoded", sourceLocation: sourceLocation)
      continue
    }
    #expect(error.layer == .profile, sourceLocation: sourceLocation)
    guard case .truncated = error.reason else {
      Issue.record("prefix of \(length) bytes: \(error)", sourceLocation: sourceLocation)
      continue
    }
  }
}

/// Expects a byte after a complete fixed-format value to throw `.lengthMismatch`.
func expectTrailingByteRejected(_ uuid16: UInt16, _ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
  let error = profileError(uuid16, bytes + [0x00])
  #expect(error?.layer == .profile, sourceLocation: sourceLocation)
  guard case .lengthMismatch(_, let declared, let actual)? = error?.reason else {
    Issue.record("trailing byte after \(Hex.string(bytes)): \(String(describing: error))", sourceLocation: sourceLocation)
    return
  }
  #expect(declared == bytes.count && actual == bytes.count + 1, sourceLocation: sourceLocation)
}

extension FieldList {
  /// A `.staticText` or `.text` value.
  func word(_ path: String) -> String? {
    switch value(path) {
    case .staticText(let t)?: return t.description
    case .text(let t)?: return t
    default: return nil
    }
  }

  func real(_ path: String) -> Double? {
    if case .real(let v, _, _)? = value(path) { return v }
    return nil
  }

  /// The unit of a `.real` or `.measure` value.
  func unit(_ path: String) -> String? {
    switch value(path) {
    case .real(_, _, let unit)?: return unit.description
    case .measure(_, _, let unit)?: return unit.description
    default: return nil
    }
  }

  func isNull(_ path: String) -> Bool {
    if case .null? = value(path) { return true }
    return false
  }

  func isArray(_ path: String) -> Bool {
    if case .array? = value(path) { return true }
    return false
  }

  /// The elements of the array at `path` (empty when it has none).
  func elements(_ path: String) -> [FieldValue] {
    var values: [FieldValue] = []
    while let element = value(path + "." + String(values.count)) { values.append(element) }
    return values
  }

  /// The top-level keys, in order.
  var topKeys: [String] { fields.filter { $0.depth == 0 }.map { $0.key.description } }
}

extension DecodedProfileValue {
  var warnings: [String] { diagnostics.filter { $0.severity == .warning }.map(\.message) }
}
