import BLECore

/// An IEEE 11073-20601 number: `mantissa × 10^exponent`, in the 16-bit SFLOAT form
/// (4-bit signed exponent, 12-bit signed mantissa) or the 32-bit FLOAT form (8-bit signed
/// exponent, 24-bit signed mantissa), with the reserved special values of each.
///
/// Special values (exponent 0): mantissa 2^(n−1)−1 is NaN, −2^(n−1) is NRes (not at this
/// resolution), 2^(n−1)−2 is +INFINITY, −(2^(n−1)−2) is −INFINITY, −(2^(n−1)−1) is reserved.
public struct MedicalFloat: Sendable, Equatable, CustomStringConvertible {
  public enum Special: Sendable, Equatable {
    case nan, nres, positiveInfinity, negativeInfinity, reserved

    /// The JSON/text word (`nan`, `nres`, `positive_infinity`, ...).
    public var word: Name {
      switch self {
      case .nan: return "nan"
      case .nres: return "nres"
      case .positiveInfinity: return "positive_infinity"
      case .negativeInfinity: return "negative_infinity"
      case .reserved: return "reserved"
      }
    }
  }

  public let mantissa: Int32
  public let exponent: Int8
  /// Set for the special values; `mantissa` and `exponent` then hold the raw parts.
  public let special: Special?

  /// A 16-bit SFLOAT as sent (little-endian already applied).
  public init(sfloat raw: UInt16) {
    switch raw {
    case 0x07FF: special = .nan
    case 0x0800: special = .nres
    case 0x07FE: special = .positiveInfinity
    case 0x0802: special = .negativeInfinity
    case 0x0801: special = .reserved
    default: special = nil
    }
    // Sign-extend the low 12 bits and the high 4 bits.
    mantissa = Int32(Int16(bitPattern: raw << 4) >> 4)
    exponent = Int8(Int16(bitPattern: raw) >> 12)
  }

  /// A 32-bit FLOAT as sent (little-endian already applied).
  public init(float raw: UInt32) {
    switch raw {
    case 0x007F_FFFF: special = .nan
    case 0x0080_0000: special = .nres
    case 0x007F_FFFE: special = .positiveInfinity
    case 0x0080_0002: special = .negativeInfinity
    case 0x0080_0001: special = .reserved
    default: special = nil
    }
    mantissa = Int32(bitPattern: raw << 8) >> 8
    exponent = Int8(truncatingIfNeeded: Int32(bitPattern: raw) >> 24)
  }

  public var isFinite: Bool { special == nil }

  /// The number; NaN for NaN, NRes and reserved, ±infinity for the infinities.
  public var value: Double {
    switch special {
    case .nan?, .nres?, .reserved?: return .nan
    case .positiveInfinity?: return .infinity
    case .negativeInfinity?: return -.infinity
    case nil: break
    }
    var power = 1.0
    for _ in 0..<Int(exponent.magnitude) { power *= 10 }
    // Dividing by an exact power of ten keeps 36.6 as close as a Double gets.
    return exponent < 0 ? Double(mantissa) / power : Double(mantissa) * power
  }

  /// Decimals the value was sent with (`-1` exponent → 1 place), capped at 12.
  public var places: UInt8 { exponent < 0 ? UInt8(min(Int(exponent.magnitude), 12)) : 0 }

  public var description: String {
    if let special { return special.word.description }
    return SummaryPart.formatReal(value, places: places)
  }

  /// A field: `.real` with the sent precision, or the special value's word.
  func add(_ key: Name, _ label: Name, unit: Name, to fields: inout FieldList) {
    if let special {
      fields.add(key, label, .staticText(special.word))
    } else {
      fields.real(key, label, value, places: places, unit: unit)
    }
  }

  /// Summary parts: the number, or the special value's word.
  func summarize(into summary: inout SummaryLine) {
    if let special {
      summary.append(.text(special.word))
    } else {
      summary.append(.real(value, places: places))
    }
  }
}

extension ByteReader {
  /// A 16-bit IEEE 11073 SFLOAT.
  mutating func readSFloat() throws(DecodeError) -> MedicalFloat {
    MedicalFloat(sfloat: try readUInt16LE())
  }

  /// A 32-bit IEEE 11073 FLOAT.
  mutating func readMedicalFloat() throws(DecodeError) -> MedicalFloat {
    MedicalFloat(float: try readUInt32LE())
  }
}
