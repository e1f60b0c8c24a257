import BLECore

/// Finds the value decoder of a characteristic or descriptor UUID.
///
/// A `switch` on the 16-bit alias for SIG UUIDs, and on the (high, low) halves for vendor
/// 128-bit UUIDs: no hashing, no allocation (each decoder is a `static let`, built once).
public enum ProfileRegistry {
  public static func decoder(for uuid: BluetoothUUID) -> CharacteristicDecoder? {
    if let short = uuid.uuid16 { return decoder16(short) }
    return decoder128(high: uuid.high, low: uuid.low)
  }

  static func decoder16(_ uuid: UInt16) -> CharacteristicDecoder? {
    switch uuid {
    // Heart Rate
    case 0x2A37: return HeartRateMeasurement.decoder
    case 0x2A38: return BodySensorLocation.decoder
    case 0x2A39: return HeartRateControlPoint.decoder
    // Battery
    case 0x2A19: return BatteryLevel.decoder
    case 0x2BED: return BatteryLevelStatus.decoder
    // Device Information
    case 0x2A23: return SystemID.decoder
    case 0x2A24: return ModelNumberString.decoder
    case 0x2A25: return SerialNumberString.decoder
    case 0x2A26: return FirmwareRevisionString.decoder
    case 0x2A27: return HardwareRevisionString.decoder
    case 0x2A28: return SoftwareRevisionString.decoder
    case 0x2A29: return ManufacturerNameString.decoder
    case 0x2A2A: return RegulatoryCertificationDataList.decoder
    case 0x2A50: return PnPID.decoder
    // GAP / GATT
    case 0x2A00: return DeviceName.decoder
    case 0x2A01: return Appearance.decoder
    case 0x2A04: return PeripheralPreferredConnectionParameters.decoder
    case 0x2A05: return ServiceChanged.decoder
    case 0x2AA6: return CentralAddressResolution.decoder
    case 0x2AC9: return ResolvablePrivateAddressOnly.decoder
    case 0x2B29: return ClientSupportedFeatures.decoder
    case 0x2B2A: return DatabaseHash.decoder
    case 0x2B3A: return ServerSupportedFeatures.decoder
    // Descriptors
    case 0x2900: return CharacteristicExtendedProperties.decoder
    case 0x2901: return CharacteristicUserDescription.decoder
    case 0x2902: return ClientCharacteristicConfiguration.decoder
    case 0x2903: return ServerCharacteristicConfiguration.decoder
    case 0x2904: return CharacteristicPresentationFormat.decoder
    // Fitness
    case 0x2A5B: return CSCMeasurement.decoder
    case 0x2A5C: return CSCFeature.decoder
    case 0x2A53: return RSCMeasurement.decoder
    case 0x2A54: return RSCFeature.decoder
    case 0x2A63: return CyclingPowerMeasurement.decoder
    case 0x2A5D: return SensorLocation.decoder
    // Time
    case 0x2A08: return DateTime.decoder
    case 0x2A09: return DayOfWeek.decoder
    case 0x2A0A: return DayDateTime.decoder
    case 0x2A0C: return ExactTime256.decoder
    case 0x2A2B: return CurrentTime.decoder
    // Health
    case 0x2A1C: return TemperatureMeasurement.decoder
    case 0x2A1D: return TemperatureType.decoder
    case 0x2A1E: return TemperatureMeasurement.intermediateDecoder
    case 0x2A35: return BloodPressureMeasurement.decoder
    case 0x2A36: return BloodPressureMeasurement.intermediateCuffPressureDecoder
    // Environmental sensing
    case 0x2A6E: return Temperature.decoder
    case 0x2A6F: return Humidity.decoder
    default: return nil
    }
  }

  static func decoder128(high: UInt64, low: UInt64) -> CharacteristicDecoder? {
    if let short = Huami.shortID(high: high, low: low) {
      switch short {
      case 0x0006: return Huami.BatteryInfo.decoder
      case 0x0007: return Huami.RealtimeSteps.decoder
      default: return nil
      }
    }
    return nil
  }

  /// Where the decoder for `uuid` is in `all`: frames and databases keep this plain index
  /// instead of the decoder (a closure, reference-counted on every copy).
  public static func index(for uuid: BluetoothUUID) -> Int? {
    guard let decoder = decoder(for: uuid) else { return nil }
    let key = decoder.key.description
    return all.firstIndex { $0.key.description == key }
  }

  /// Every registered decoder (tests, documentation); keys are unique.
  public static let all: [CharacteristicDecoder] = [
    HeartRateMeasurement.decoder, BodySensorLocation.decoder, HeartRateControlPoint.decoder,
    BatteryLevel.decoder, BatteryLevelStatus.decoder,
    SystemID.decoder, ModelNumberString.decoder, SerialNumberString.decoder,
    FirmwareRevisionString.decoder, HardwareRevisionString.decoder,
    SoftwareRevisionString.decoder, ManufacturerNameString.decoder,
    RegulatoryCertificationDataList.decoder, PnPID.decoder,
    DeviceName.decoder, Appearance.decoder, PeripheralPreferredConnectionParameters.decoder, ServiceChanged.decoder,
    CentralAddressResolution.decoder, ResolvablePrivateAddressOnly.decoder, ClientSupportedFeatures.decoder,
    DatabaseHash.decoder, ServerSupportedFeatures.decoder,
    CharacteristicExtendedProperties.decoder, CharacteristicUserDescription.decoder,
    ClientCharacteristicConfiguration.decoder, ServerCharacteristicConfiguration.decoder,
    CharacteristicPresentationFormat.decoder,
    CSCMeasurement.decoder, CSCFeature.decoder, RSCMeasurement.decoder, RSCFeature.decoder,
    CyclingPowerMeasurement.decoder, SensorLocation.decoder,
    DateTime.decoder, DayOfWeek.decoder, DayDateTime.decoder, ExactTime256.decoder, CurrentTime.decoder,
    TemperatureMeasurement.decoder, TemperatureType.decoder, TemperatureMeasurement.intermediateDecoder,
    BloodPressureMeasurement.decoder, BloodPressureMeasurement.intermediateCuffPressureDecoder,
    Temperature.decoder, Humidity.decoder,
    Huami.BatteryInfo.decoder, Huami.RealtimeSteps.decoder,
  ]
}
