import BLECore

/// How a characteristic or descriptor value reached the frame.
public enum GATTOperation: Sendable, Equatable {
  case read, write, writeWithoutResponse, notification, indication
}

/// What a value decoder may know besides the bytes.
public struct ValueContext: Sendable {
  public var operation: GATTOperation
  /// The UUID of the attribute whose value this is (characteristic or descriptor).
  public var uuid: BluetoothUUID
  /// For a descriptor: the characteristic it belongs to, when the GATT database knows it.
  public var characteristic: BluetoothUUID?
  public var characteristicName: Name?
  /// For a HID Report (0x2A4D): its Report Reference descriptor's value, when the capture
  /// showed the descriptor read.
  public var reportReference: HIDReportReference?

  public init(
    operation: GATTOperation, uuid: BluetoothUUID, characteristic: BluetoothUUID? = nil, characteristicName: Name? = nil,
    reportReference: HIDReportReference? = nil
  ) {
    self.operation = operation
    self.uuid = uuid
    self.characteristic = characteristic
    self.characteristicName = characteristicName
    self.reportReference = reportReference
  }
}

/// A characteristic or descriptor value, typed.
///
/// Decoding makes it (`init(parsing:)`) and keeps it on the frame, where analyses read it
/// (`frame.attributes[i].value(as: HeartRateMeasurement.self)`). Everything shown is derived from it:
/// the fields (`decoded.<key>` in JSON, detail lines in text), the words of the header line
/// (only when a renderer asks), and warnings about values that decode but are implausible.
///
/// `init(parsing:)` reads exactly the value's format and leaves any bytes after it; the
/// decoder rejects leftovers unless `allowsTrailingBytes`. A value whose format depends on how
/// it travelled (a control point: the request a client writes and the response a server
/// indicates) also implements `init(parsing:context:)`, which the decoder calls.
public protocol CharacteristicValue: Sendable {
  init(parsing reader: inout ByteReader) throws(DecodeError)
  /// Parses knowing the operation and the attribute (`context.operation`: a write, a
  /// notification…); by default `init(parsing:)`.
  init(parsing reader: inout ByteReader, context: ValueContext) throws(DecodeError)
  /// Writes the decoded fields (inside `decoded.<key>`, which the caller opens).
  func writeFields(to fields: inout FieldList, context: ValueContext)
  /// Writes the words of the header line ("72 bpm, contact detected, RR 812.5 ms").
  func summarize(into summary: inout SummaryLine, context: ValueContext)
  /// Appends warnings for values that decode but are implausible or use reserved bits.
  func diagnose(into diagnostics: inout [Diagnostic], context: ValueContext)
  /// Whether bytes may follow the format (false: a byte left over makes the value malformed).
  static var allowsTrailingBytes: Bool { get }
}

extension CharacteristicValue {
  public init(parsing reader: inout ByteReader, context: ValueContext) throws(DecodeError) {
    try self.init(parsing: &reader)
  }
  public func diagnose(into diagnostics: inout [Diagnostic], context: ValueContext) {}
  public static var allowsTrailingBytes: Bool { false }

  /// Parses a complete value: throws `.truncated` when bytes are missing and
  /// `.lengthMismatch` when bytes are left over.
  public init(bytes: [UInt8]) throws(DecodeError) {
    self = try ByteReader.reading(bytes, layer: .profile) { (reader: inout ByteReader) throws(DecodeError) -> Self in
      let value = try Self(parsing: &reader)
      try ProfileSupport.requireEnd(reader, start: 0)
      return value
    }
  }

  /// The same, knowing how the value travelled.
  public init(bytes: [UInt8], context: ValueContext) throws(DecodeError) {
    self = try ByteReader.reading(bytes, layer: .profile) { (reader: inout ByteReader) throws(DecodeError) -> Self in
      let value = try Self(parsing: &reader, context: context)
      try ProfileSupport.requireEnd(reader, start: 0)
      return value
    }
  }
}

/// The outcome of decoding one value: the typed value, or why it did not fit its format.
public struct DecodedValue: Sendable {
  public var value: (any CharacteristicValue)?
  public var error: DecodeError?
}

/// A registry entry: the format of one characteristic or descriptor UUID.
///
/// Each decoder names its UUID once, here; `DecoderRegistry` finds it by that UUID.
public struct CharacteristicDecoder: Sendable {
  public let uuid: BluetoothUUID
  /// The JSON key under `decoded` (snake_case: `heart_rate_measurement`).
  public let key: Name
  /// The header line carries every field (a heart-rate measurement, a battery level, a string):
  /// plain text then shows the header line only, and the fields with `-v`.
  public let summarySaysItAll: Bool
  /// The value's type: parsing goes through it (a metatype, not a closure, so copying a
  /// decoder costs no reference counting on the per-value path).
  public let valueType: any CharacteristicValue.Type
  /// A format a user declared (`--decoders`), as its place in the registry's
  /// `declaredFormats`: values are read through it, not the type. The registry holds the
  /// format; the decoder holds a number, so it stays plain data, copied per value at no cost
  /// (no reference to count).
  public let declaredFormat: Int?
  /// For a user's format that replaced a built-in decoder: the built-in value type, still
  /// decoded for the analyses (`DeclaredValue.builtInValue`).
  public internal(set) var builtInType: (any CharacteristicValue.Type)?

  public init<Value: CharacteristicValue>(uuid: BluetoothUUID, key: Name, _ type: Value.Type, summarySaysItAll: Bool = false) {
    self.uuid = uuid
    self.key = key
    self.summarySaysItAll = summarySaysItAll
    self.valueType = type
    self.declaredFormat = nil
  }

  /// A user's decoder, for the format at `place` in the registry's `declaredFormats`
  /// (`DecoderRegistry.register(_: UserDecoder)`): its header words say it all (its fields
  /// show with `-v`).
  init(uuid: BluetoothUUID, key: Name, declaredFormat place: Int) {
    self.uuid = uuid
    self.key = key
    self.summarySaysItAll = true
    self.valueType = DeclaredValue.self
    self.declaredFormat = place
  }

  public init<Value: CharacteristicValue>(uuid16: UInt16, key: Name, _ type: Value.Type, summarySaysItAll: Bool = false) {
    self.init(uuid: BluetoothUUID(uuid16: uuid16), key: key, type, summarySaysItAll: summarySaysItAll)
  }

  /// Decodes the whole of `reader` (as it travelled: `context`, when known). A value followed
  /// by bytes its format has no room for is kept (its fields still show) beside the error. A
  /// user's declared format is read through the registry that holds it
  /// (`DecoderRegistry.decode(_:decoder:context:)`).
  public func decode(_ reader: inout ByteReader, context: ValueContext? = nil) -> DecodedValue {
    decode(&reader, format: nil, context: context)
  }

  /// The same, reading a declared decoder's values through `format`.
  func decode(_ reader: inout ByteReader, format: DeclaredFormat?, context: ValueContext?) -> DecodedValue {
    reader.layer = .profile
    let start = reader.offset
    do throws(DecodeError) {
      let value: any CharacteristicValue
      if let format {
        let builtIn = builtInValue(reader, context: context)
        do throws(DecodeError) {
          var declared = try format.parse(&reader)
          declared.builtInValue = builtIn
          value = declared
        } catch {
          guard let builtIn else { throw error }
          return DecodedValue(value: DeclaredValue(format: format, items: [], builtInValue: builtIn), error: error)
        }
      } else if let context {
        value = try valueType.init(parsing: &reader, context: context)
      } else {
        value = try valueType.init(parsing: &reader)
      }
      if !valueType.allowsTrailingBytes && !reader.isAtEnd {
        let error = DecodeError(
          .lengthMismatch(field: "the value format", declared: reader.offset - start, actual: reader.endOffset - start),
          layer: .profile, offset: reader.offset)
        return DecodedValue(value: value, error: error)
      }
      return DecodedValue(value: value, error: nil)
    } catch {
      return DecodedValue(value: nil, error: error)
    }
  }

  /// Decodes the whole of `reader` into the fact's value (in place: a typed value is not
  /// copied); returns why the bytes do not fit the format, if they do not. A value followed by
  /// bytes its format has no room for is kept beside the error. `registry` holds the decoder
  /// (and its declared format, if any).
  func decode(_ reader: inout ByteReader, into fact: inout AttributeFact, context: ValueContext, registry: DecoderRegistry) -> DecodeError? {
    reader.layer = .profile
    let start = reader.offset
    do throws(DecodeError) {
      if let declaredFormat {
        let format = registry.declaredFormats[declaredFormat]
        let builtIn = builtInValue(reader, context: context)
        do throws(DecodeError) {
          var declared = try format.parse(&reader)
          declared.builtInValue = builtIn
          fact.typedValue = declared
        } catch {
          // The user's format does not fit: malformed as it says, the built-in value kept.
          guard let builtIn else { throw error }
          fact.setValue(DeclaredValue(format: format, items: [], builtInValue: builtIn))
          return error
        }
      } else {
        fact.typedValue = try valueType.init(parsing: &reader, context: context)
      }
      fact.hasValue = true
    } catch {
      return error
    }
    guard valueType.allowsTrailingBytes || reader.isAtEnd else {
      return DecodeError(
        .lengthMismatch(field: "the value format", declared: reader.offset - start, actual: reader.endOffset - start),
        layer: .profile, offset: reader.offset)
    }
    return nil
  }

  /// The built-in decoder's value of the bytes `reader` holds (nil: no built-in decoder was
  /// replaced, or it does not read them); bytes after its format are allowed, as a built-in
  /// value is kept beside that error. `reader` is a copy: the user's format reads the same bytes.
  func builtInValue(_ reader: ByteReader, context: ValueContext?) -> (any CharacteristicValue)? {
    guard let builtInType else { return nil }
    var reader = reader
    if let context { return try? builtInType.init(parsing: &reader, context: context) }
    return try? builtInType.init(parsing: &reader)
  }

  /// Decodes `bytes` (tests, tools).
  public func decode(_ bytes: [UInt8], context: ValueContext? = nil) -> DecodedValue {
    decode(bytes, format: nil, context: context)
  }

  func decode(_ bytes: [UInt8], format: DeclaredFormat?, context: ValueContext?) -> DecodedValue {
    ByteView.pinning(bytes) { view in
      var reader = ByteReader(view, layer: .profile)
      return decode(&reader, format: format, context: context)
    }
  }
}
