import BLECore
import BLETestSupport
import Foundation
import Testing

@testable import BLEDecoder
@testable import BLERender

/// A vendor value decoded the way the GATT layer does it, as the JSON and text a user sees.
struct DecodedVendorValue {
  /// `decoded.<key>`'s members, as JSON.
  var json: [String: Any]
  /// The header words.
  var summary: String
  var warnings: [String]
  var notes: [String]
  var error: DecodeError?
  var value: (any CharacteristicValue)?

  subscript(path: String) -> Any? {
    var current: Any? = json
    for part in path.split(separator: ".") {
      if let index = Int(part) { current = (current as? [Any]).flatMap { index < $0.count ? $0[index] : nil } } else { current = (current as? [String: Any])?[String(part)] }
    }
    return current
  }

  func int(_ path: String) -> Int? { (self[path] as? NSNumber)?.intValue }
  func string(_ path: String) -> String? { self[path] as? String }
  func bool(_ path: String) -> Bool? { self[path] as? Bool }
  func ints(_ path: String) -> [Int]? { (self[path] as? [Any])?.compactMap { ($0 as? NSNumber)?.intValue } }
  func doubles(_ path: String) -> [Double]? { (self[path] as? [Any])?.compactMap { ($0 as? NSNumber)?.doubleValue } }
  func strings(_ path: String) -> [String]? { self[path] as? [String] }
  /// An array of arrays of integers (samples of several channels).
  func rows(_ path: String) -> [[Int]]? { (self[path] as? [Any])?.map { ($0 as? [Any] ?? []).compactMap { ($0 as? NSNumber)?.intValue } } }
}

/// Decodes `bytes` with the registry's decoder for `uuid`, as carried by `operation`.
func decodeVendor(_ uuid: BluetoothUUID, _ bytes: [UInt8], _ operation: GATTOperation, sourceLocation: SourceLocation = #_sourceLocation) -> DecodedVendorValue {
  guard let decoder = ProfileRegistry.decoder(for: uuid) else {
    Issue.record("no decoder for \(uuid)", sourceLocation: sourceLocation)
    return DecodedVendorValue(json: [:], summary: "", warnings: [], notes: [], error: nil, value: nil)
  }
  let context = ValueContext(operation: operation, uuid: uuid)
  let decoded = decoder.decode(bytes, context: context)
  var fields = FieldList()
  var line = SummaryLine()
  var diagnostics: [Diagnostic] = []
  if let value = decoded.value {
    value.writeFields(to: &fields, context: context)
    value.summarize(into: &line, context: context)
    value.diagnose(into: &diagnostics, context: context)
  }
  var out = OutputBuffer(fd: nil)
  out.byte(UInt8(ascii: "{"))
  JSONLinesRenderer.writeFields(fields, &out)
  out.byte(UInt8(ascii: "}"))
  let json = (try? JSONSerialization.jsonObject(with: Data(out.text.utf8))) as? [String: Any]
  if json == nil { Issue.record("invalid JSON: \(out.text)", sourceLocation: sourceLocation) }
  return DecodedVendorValue(
    json: json ?? [:], summary: line.text, warnings: diagnostics.filter { $0.severity == .warning }.map(\.message),
    notes: diagnostics.filter { $0.severity == .note }.map(\.message), error: decoded.error, value: decoded.value)
}

/// Expects every strict prefix of `bytes` to fail to decode at the profile layer (truncated),
/// never to crash.
func expectVendorPrefixesTruncate(_ uuid: BluetoothUUID, _ bytes: [UInt8], _ operation: GATTOperation, from minimum: Int = 0, sourceLocation: SourceLocation = #_sourceLocation) {
  for length in minimum..<bytes.count {
    let error = decodeVendor(uuid, Array(bytes.prefix(length)), operation, sourceLocation: sourceLocation).error
    guard case .truncated? = error?.reason, error?.layer == .profile else {
      Issue.record("prefix of \(length) bytes of \(Hex.string(bytes)): \(String(describing: error))", sourceLocation: sourceLocation)
      continue
    }
  }
}

/// Bytes of a little-endian integer.
func le<T: FixedWidthInteger>(_ value: T) -> [UInt8] { (0..<(T.bitWidth / 8)).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
func le24(_ value: Int32) -> [UInt8] { Array(le(value).prefix(3)) }
func le(_ value: Float) -> [UInt8] { le(value.bitPattern) }
