import BLECore

/// The built-in characteristic and descriptor decoders, gathered from the list at the end of
/// each profile file (a decoder names its own UUID; adding one to a profile touches that file
/// only). `DecoderRegistry.standard` registers them; lookups go through a registry.
public enum ProfileRegistry {
  /// Every built-in decoder, in registration order; UUIDs and keys are unique (a test checks).
  public static let all: [CharacteristicDecoder] = heartRate + battery + deviceInformation + gapAndGATT + descriptors + fitness + time + health + environmentalSensing + huami

  /// The built-in decoder of `uuid` (tests, tools).
  public static func decoder(for uuid: BluetoothUUID) -> CharacteristicDecoder? {
    DecoderRegistry.standard.decoder(for: uuid)
  }
}
