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
  public var characteristicName: StaticString?

  public init(operation: GATTOperation, uuid: BluetoothUUID, characteristic: BluetoothUUID? = nil, characteristicName: StaticString? = nil) {
    self.operation = operation
    self.uuid = uuid
    self.characteristic = characteristic
    self.characteristicName = characteristicName
  }
}

/// Decodes one characteristic's (or descriptor's) value into fields.
///
/// The caller opens the object `decoded.<key>` before calling and closes it after. The decoder
/// writes typed fields (`frame.fields`), a short summary for the header line
/// (`frame.summaryParts`, e.g. "72 bpm, contact detected, RR 812.5 ms"), and diagnostics for
/// values that decode but are implausible. It throws `DecodeError` (layer `.profile`) for a value
/// that does not fit the format; the caller then flags it and keeps the raw bytes.
public struct CharacteristicDecoder: Sendable {
  public typealias Decode = @Sendable (inout ByteReader, ValueContext, inout DissectedFrame) throws(DecodeError) -> Void

  public let uuid: BluetoothUUID
  /// The JSON key under `decoded` (snake_case: `heart_rate_measurement`).
  public let key: StaticString
  public let decode: Decode
  /// The summary carries every field (a heart-rate measurement, a battery level, a string):
  /// plain text then shows the header line only, and the fields with `-v`.
  public let summarySaysItAll: Bool

  public init(uuid: BluetoothUUID, key: StaticString, summarySaysItAll: Bool = false, decode: @escaping Decode) {
    self.uuid = uuid
    self.key = key
    self.summarySaysItAll = summarySaysItAll
    self.decode = decode
  }
}
