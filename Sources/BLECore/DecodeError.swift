/// The protocol layer a piece of bytes belongs to; tags errors and diagnostics.
public enum ProtocolLayer: String, Sendable, Hashable {
  case capture, hci, advertising, l2cap, att, gatt, profile, note
  /// BR/EDR protocols on L2CAP dynamic channels: the Service Discovery Protocol (PSM 0x0001) and
  /// RFCOMM (PSM 0x0003).
  case sdp, rfcomm
  /// The LE link layer of a packet sniffed over the air.
  case linkLayer = "ll"
}

/// Why bytes could not be decoded, with where it happened.
///
/// Thrown inside one layer's decoder and caught by the dissector, which records it as a
/// `malformed` annotation on the frame and keeps going with the next frame.
public struct DecodeError: Error, Sendable, Equatable, CustomStringConvertible {
  public enum Reason: Sendable, Equatable {
    /// The bytes ended before a field: `needed` bytes were asked for, `available` remained.
    case truncated(needed: Int, available: Int)
    /// A length field disagrees with the bytes that carry it.
    case lengthMismatch(field: StaticString, declared: Int, actual: Int)
    /// A field holds a value the specification does not allow here.
    case invalidValue(field: StaticString, value: UInt64)

    public static func == (a: Reason, b: Reason) -> Bool {
      switch (a, b) {
      case let (.truncated(n1, a1), .truncated(n2, a2)): return n1 == n2 && a1 == a2
      case let (.lengthMismatch(f1, d1, x1), .lengthMismatch(f2, d2, x2)):
        return f1.description == f2.description && d1 == d2 && x1 == x2
      case let (.invalidValue(f1, v1), .invalidValue(f2, v2)):
        return f1.description == f2.description && v1 == v2
      default: return false
      }
    }
  }

  public var reason: Reason
  public var layer: ProtocolLayer
  /// Offset in the record's bytes where decoding stopped.
  public var offset: Int

  public init(_ reason: Reason, layer: ProtocolLayer, offset: Int) {
    self.reason = reason
    self.layer = layer
    self.offset = offset
  }

  public var description: String {
    switch reason {
    case let .truncated(needed, available):
      return "\(layer.rawValue): truncated at byte \(offset): needs \(needed) more byte\(needed == 1 ? "" : "s"), \(available) left"
    case let .lengthMismatch(field, declared, actual):
      return "\(layer.rawValue): \(field) says \(declared) bytes but \(actual) are present (byte \(offset))"
    case let .invalidValue(field, value):
      return "\(layer.rawValue): invalid \(field) \(value) at byte \(offset)"
    }
  }
}

/// Something that decodes but is wrong or surprising ("continuation without a start"): a kind
/// from the catalogue (`DiagnosticKind`: code, severity, layer) and the words for this case.
public struct Diagnostic: Sendable, Equatable {
  public enum Severity: String, Sendable { case warning, note }
  public var kind: DiagnosticKind
  public var message: String
  public var code: String { kind.code }
  public var severity: Severity { kind.severity }
  public var layer: ProtocolLayer { kind.layer }
  public init(_ kind: DiagnosticKind, _ message: String) {
    self.kind = kind
    self.message = message
  }
}
