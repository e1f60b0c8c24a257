import BLECore

/// The built-in characteristic and descriptor decoders, gathered from the list at the end of
/// each profile file (a decoder names its own UUID; adding one to a profile touches that file
/// only). `DecoderRegistry.standard` registers them; lookups go through a registry.
public enum ProfileRegistry {
  /// Every built-in decoder, in registration order; UUIDs and keys are unique (a test checks).
  public static let all: [CharacteristicDecoder] = heartRate + battery + deviceInformation + gapAndGATT + descriptors + fitness + time + health + environmentalSensing + alerts + huami + polarPMD + nordicUART + humanInterfaceDevice

  /// The name of an ATT application error (0x80–0x9F) that the characteristic's profile
  /// defines, for an Error Response about that characteristic's value.
  public static func applicationErrorName(_ code: UInt8, characteristic: BluetoothUUID) -> Name? {
    switch (characteristic.uuid16, code) {
    // Heart Rate service: a Heart Rate Control Point value it does not support.
    case (0x2A39, 0x80): return "Control Point Not Supported"
    default: return nil
    }
  }

  /// The built-in decoder of `uuid` (tests, tools).
  public static func decoder(for uuid: BluetoothUUID) -> CharacteristicDecoder? {
    DecoderRegistry.standard.decoder(for: uuid)
  }
}
