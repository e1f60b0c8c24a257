import BLECore

// Heart Rate service 0x180D: Heart Rate Measurement 0x2A37, Body Sensor Location 0x2A38,
// Heart Rate Control Point 0x2A39.
//
// The corresponding specification is the Heart Rate Service 1.0 and the GATT Specification
// Supplement (heart_rate_measurement, body_sensor_location, heart_rate_control_point).

/// Heart Rate Measurement 0x2A37: `flags(1) bpm(1|2) [energy(2)] [rr(2) × n]`.
///
/// Flags: bit 0 bpm is 16-bit, bits 2:1 sensor contact (0b0x not supported, 0b10 supported and
/// not detected, 0b11 detected), bit 3 energy expended (kJ) present, bit 4 RR intervals
/// (1/1024 s, oldest first) fill the rest of the value; bits 5–7 reserved.
public struct HeartRateMeasurement: CharacteristicValue, Equatable {
  public enum SensorContact: Sendable, Equatable {
    case unsupported, notDetected, detected

    init(flags: UInt8) {
      switch flags & 0x06 {
      case 0x06: self = .detected
      case 0x04: self = .notDetected
      default: self = .unsupported
      }
    }

    /// The JSON word: `unsupported`, `not_detected`, `detected`.
    public var word: Name {
      switch self {
      case .unsupported: return "unsupported"
      case .notDetected: return "not_detected"
      case .detected: return "detected"
      }
    }
  }

  public var flags: UInt8
  // Laid out to fit the three words a typed value holds without a box of its own: a heart-rate
  // strap sends one per beat, and a measurement with up to three RR intervals then costs no
  // allocation at all.
  var hasEnergy: Bool
  public var bpm: UInt16
  var energy: UInt16
  /// RR intervals in 1/1024 s, oldest first.
  public var rrIntervals: RRIntervals

  /// Cumulative energy in kilojoules since the last reset, when sent.
  public var energyExpended: UInt16? {
    get { hasEnergy ? energy : nil }
    set { (hasEnergy, energy) = (newValue != nil, newValue ?? 0) }
  }

  public var sensorContact: SensorContact { SensorContact(flags: flags) }
  public var isSixteenBit: Bool { flags & HeartRateMeasurement.sixteenBit != 0 }
  /// RR intervals in milliseconds (`raw × 1000 / 1024`: 832 → 812.5).
  public var rrIntervalsMilliseconds: [Double] { rrIntervals.map(HeartRateMeasurement.milliseconds) }

  static let sixteenBit: UInt8 = 0x01
  static let energyPresent: UInt8 = 0x08
  static let rrPresent: UInt8 = 0x10
  static let reservedFlags: UInt8 = 0xE0

  @inline(__always) public static func milliseconds(_ raw: UInt16) -> Double { Double(raw) * 1000 / 1024 }

  /// `milliseconds(raw)` exactly, as a decimal with at least one digit after the point (as a
  /// Double prints: 625.0, 625.9765625). raw × 1000 / 1024 is raw × 125 / 128: its fraction is
  /// some 128ths, which take at most seven decimals (1/128 = 0.0078125).
  public static func exactMilliseconds(_ raw: UInt16) -> FixedDecimal {
    // raw × 1000 / 1024 ms is raw × 9 765 625 units of 10⁻⁷ ms, exactly.
    var exact = FixedDecimal(units: UInt64(raw) &* 9_765_625, places: 7)
    if exact.digits == 0 { exact.digits = 1 }  // 625.0
    return exact
  }

  /// `milliseconds(raw)` rounded to 0.1 ms (half away from zero), in integers: raw × 1000 / 1024
  /// ms is raw × 625 / 64 tenths, so the rounding is exact and needs no floating point.
  @inline(__always) static func millisecondsToTenth(_ raw: UInt16) -> FixedDecimal {
    FixedDecimal(units: (UInt64(raw) &* 625 &+ 32) / 64, places: 1)
  }

  public init(flags: UInt8, bpm: UInt16, energyExpended: UInt16?, rrIntervals: [UInt16]) {
    self.flags = flags
    self.bpm = bpm
    self.hasEnergy = energyExpended != nil
    self.energy = energyExpended ?? 0
    self.rrIntervals = RRIntervals(rrIntervals)
  }

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    flags = try reader.readUInt8()
    bpm = flags & Self.sixteenBit != 0 ? try reader.readUInt16LE() : UInt16(try reader.readUInt8())
    hasEnergy = flags & Self.energyPresent != 0
    energy = hasEnergy ? try reader.readUInt16LE() : 0
    if flags & Self.rrPresent != 0 {
      // The flag promises at least one interval; an odd byte left over is truncated.
      rrIntervals = try RRIntervals(readingAll: &reader)
    } else {
      rrIntervals = RRIntervals()
    }
  }

  public static let decoder = CharacteristicDecoder(uuid16: 0x2A37, key: "heart_rate_measurement", HeartRateMeasurement.self, summarySaysItAll: true)
  /// The flags' bits, for `-v` (HRS 1.0 §3.1.1.1: bit 1 is the contact status, meaningful
  /// when bit 2 says contact detection is supported).
  public static let flagLayout: Name =
    "01:Heart rate value format=UINT8|UINT16;02:Sensor contact status=not detected|detected;04:Sensor contact=not supported|supported;08:Energy expended=absent|present;10:RR intervals=absent|present;E0:Reserved"

  public func writeFields(to fields: inout FieldList, context: ValueContext) {
    // The flags byte: JSON's number; text shows it, bit by bit, with -v.
    fields.addVerbose("flags", "Flags", .unsigned(UInt64(flags), .bits(2, layout: Self.flagLayout)))
    fields.measure("bpm", "Heart rate", bpm, scale: 1, unit: "bpm")
    fields.text("sensor_contact", "Sensor contact", sensorContact.word)
    if let energyExpended {
      fields.measure("energy_expended_kj", "Energy expended", energyExpended, scale: 1, unit: "kJ")
    } else {
      fields.add("energy_expended_kj", "Energy expended", .null)
    }
    // The raw array (JSON; text only with -v), then the same values in ms.
    fields.beginArray("rr_intervals", "RR intervals (1/1024 s)", verbose: true)
    for raw in rrIntervals { fields.uint("", "RR interval", raw) }
    fields.end()
    fields.beginArray("rr_intervals_ms", "RR intervals")
    for raw in rrIntervals { fields.real("", "RR interval", Self.milliseconds(raw), places: 1, unit: "ms") }
    fields.end()
  }

  public func summarize(into summary: inout SummaryLine, context: ValueContext) {
    // One reservation for the whole line: the header of nearly every frame of a session.
    let room = 64 + rrIntervals.count * (TextFormat.maximumReal + 4)
    // One line a notification (`-1`): fewer words, and a long RR list as its first interval
    // and how many more, so the common notification fits 80 columns.
    let compact = summary.compact
    let shown = compact && rrIntervals.count > 2 ? 1 : rrIntervals.count
    summary.compose(maximumBytes: room) { line in
      line.number(Int(bpm))
      line.text(" bpm")
      switch sensorContact {
      case .detected: line.text(compact ? ", contact" : ", contact detected")
      case .notDetected: line.text(", no contact")
      case .unsupported: break
      }
      if let energyExpended {
        line.text(", ")
        line.number(Int(energyExpended))
        line.text(" kJ")
      }
      if !rrIntervals.isEmpty {
        line.text(", RR")
        for index in 0..<shown {
          line.text(" ")
          line.fixed(Self.millisecondsToTenth(rrIntervals[index]))
          line.text(" ms")
        }
        if shown < rrIntervals.count {
          line.text(" +")
          line.number(rrIntervals.count - shown)
        }
      }
    }
  }

  public func diagnose(into diagnostics: inout [Diagnostic], context: ValueContext) {
    if bpm < 30 || bpm > 220 {
      diagnostics.append(Diagnostic(.profileOutOfRange, "heart rate \(bpm) bpm is outside 30–220 bpm"))
    }
    ProfileSupport.checkReserved(UInt64(flags), defined: 0x1F, width: 2, what: "Heart Rate Measurement flags", &diagnostics)
    // 250 ms = 256/1024 s, 2000 ms = 2048/1024 s.
    for raw in rrIntervals where raw < 256 || raw > 2048 {
      diagnostics.append(Diagnostic(.profileOutOfRange,
        "RR interval \(SummaryPart.formatReal(Self.milliseconds(raw), places: 1)) ms is outside 250–2000 ms"))
    }
  }
}

/// RR intervals in 1/1024 s, oldest first: up to three kept inline, more in an array.
public struct RRIntervals: RandomAccessCollection, Equatable, Sendable, ExpressibleByArrayLiteral {
  // Read through inlinable accessors: analyses and `hr` in other modules walk every interval.
  @usableFromInline var inlineCount: UInt8 = 0
  @usableFromInline var first = (UInt16(0), UInt16(0), UInt16(0))
  /// All of them, once there are more than three.
  @usableFromInline var spilled: [UInt16]?

  public init() {}

  public init(_ values: some Sequence<UInt16>) {
    for value in values { append(value) }
  }

  public init(arrayLiteral values: UInt16...) { self.init(values) }

  /// Reads intervals to the end of `reader`: at least one; an odd byte left is truncated.
  init(readingAll reader: inout ByteReader) throws(DecodeError) {
    let count = Swift.max(reader.remaining / 2, 1)
    if count <= 3 {
      first.0 = try reader.readUInt16LE()
      if count > 1 { first.1 = try reader.readUInt16LE() }
      if count > 2 { first.2 = try reader.readUInt16LE() }
      inlineCount = UInt8(count)
    } else {
      var values: [UInt16] = []
      values.reserveCapacity(count)
      for _ in 0..<count { values.append(try reader.readUInt16LE()) }
      spilled = values
    }
    // The byte after the last whole interval: reading it says the value is truncated.
    if !reader.isAtEnd { _ = try reader.readUInt16LE() }
  }

  @inlinable public var startIndex: Int { 0 }
  @inlinable public var endIndex: Int { spilled?.count ?? Int(inlineCount) }

  @inlinable public subscript(position: Int) -> UInt16 {
    if let spilled { return spilled[position] }
    precondition(position >= 0 && position < Int(inlineCount), "RR interval index out of range")
    switch position {
    case 0: return first.0
    case 1: return first.1
    default: return first.2
    }
  }

  mutating func append(_ value: UInt16) {
    if spilled != nil {
      spilled!.append(value)
      return
    }
    switch inlineCount {
    case 0: first.0 = value
    case 1: first.1 = value
    case 2: first.2 = value
    default:
      spilled = [first.0, first.1, first.2, value]
      return
    }
    inlineCount += 1
  }

  public static func == (a: RRIntervals, b: RRIntervals) -> Bool { a.elementsEqual(b) }
}

/// Body Sensor Location 0x2A38: one byte.
public struct BodySensorLocation: CharacteristicValue, Equatable {
  public var location: UInt8

  public init(location: UInt8) { self.location = location }

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    location = try reader.readUInt8()
  }

  public var name: Name? { Self.name(location) }

  public static func name(_ location: UInt8) -> Name? {
    switch location {
    case 0: return "Other"
    case 1: return "Chest"
    case 2: return "Wrist"
    case 3: return "Finger"
    case 4: return "Hand"
    case 5: return "Ear Lobe"
    case 6: return "Foot"
    default: return nil
    }
  }

  public static let decoder = CharacteristicDecoder(uuid16: 0x2A38, key: "body_sensor_location", BodySensorLocation.self)

  public func writeFields(to fields: inout FieldList, context: ValueContext) {
    ProfileSupport.writeLocation(location, name: name, to: &fields)
  }

  public func summarize(into summary: inout SummaryLine, context: ValueContext) {
    ProfileSupport.summarizeLocation(location, name: name, into: &summary)
  }

  public func diagnose(into diagnostics: inout [Diagnostic], context: ValueContext) {
    if name == nil { ProfileSupport.add(.profileReservedValue, &diagnostics, "body sensor location \(location) is reserved") }
  }
}

/// Heart Rate Control Point 0x2A39: an op code. The SIG defines only 0x01 (Reset Energy
/// Expended). Huami / Mi Band firmware reuses the characteristic for vendor commands
/// (0x14 interval, 0x15 measurement control, 0x16 keep-alive; public reverse engineering).
///
/// Each known op code has a fixed length (bytes after it make the value malformed); a reserved
/// op code keeps whatever follows it as opaque parameters.
public struct HeartRateControlPoint: CharacteristicValue, Equatable {
  public enum Command: Sendable, Equatable {
    /// 0x01.
    case resetEnergyExpended
    /// 0x14 (Huami): the automatic measurement interval in minutes.
    case huamiSetMeasurementInterval(minutes: UInt8)
    /// 0x15 (Huami): start or stop a measurement mode (0 sleep, 1 continuous, 2 manual).
    case huamiMeasurementControl(mode: UInt8, enable: Bool)
    /// 0x16 (Huami).
    case huamiKeepAlive
    /// Any other op code, with the bytes after it.
    case reserved(opcode: UInt8, parameters: [UInt8])
  }

  public static let resetEnergyExpended: UInt8 = 0x01

  public var command: Command

  public init(command: Command) { self.command = command }

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    let opcode = try reader.readUInt8()
    switch opcode {
    case 0x01: command = .resetEnergyExpended
    case 0x14: command = .huamiSetMeasurementInterval(minutes: try reader.readUInt8())
    case 0x15:
      let mode = try reader.readUInt8()
      command = .huamiMeasurementControl(mode: mode, enable: try reader.readUInt8() != 0)
    case 0x16: command = .huamiKeepAlive
    default: command = .reserved(opcode: opcode, parameters: Array(reader.readRemaining()))
    }
  }

  public var opcode: UInt8 {
    switch command {
    case .resetEnergyExpended: return 0x01
    case .huamiSetMeasurementInterval: return 0x14
    case .huamiMeasurementControl: return 0x15
    case .huamiKeepAlive: return 0x16
    case .reserved(let opcode, _): return opcode
    }
  }

  public var opcodeName: Name? { Self.opcodeName(opcode) }

  public static func opcodeName(_ opcode: UInt8) -> Name? {
    switch opcode {
    case 0x01: return "Reset Energy Expended"
    case 0x14: return "Huami: Set Measurement Interval"
    case 0x15: return "Huami: Measurement Control"
    case 0x16: return "Huami: Keep Alive"
    default: return nil
    }
  }

  /// The name of a Huami measurement mode (`sleep`, `continuous`, `manual`).
  public static func modeName(_ mode: UInt8) -> Name? {
    switch mode {
    case 0: return "sleep"
    case 1: return "continuous"
    case 2: return "manual"
    default: return nil
    }
  }

  public static let decoder = CharacteristicDecoder(uuid16: 0x2A39, key: "heart_rate_control_point", HeartRateControlPoint.self)

  public func writeFields(to fields: inout FieldList, context: ValueContext) {
    fields.code("opcode", "Op code", opcode, width: 2, name: opcodeName)
    switch command {
    case .huamiSetMeasurementInterval(let minutes):
      fields.measure("interval_minutes", "Interval", minutes, scale: 1, unit: "min")
    case let .huamiMeasurementControl(mode, enable):
      fields.code("mode", "Mode", mode, width: 2, name: Self.modeName(mode))
      fields.flag("enabled", "Enable", enable)
    case .reserved(_, let parameters):
      if !parameters.isEmpty { fields.bytes("parameters", "Parameters", parameters[...]) }
    case .resetEnergyExpended, .huamiKeepAlive:
      break
    }
  }

  public func summarize(into summary: inout SummaryLine, context: ValueContext) {
    if let opcodeName { summary.append(.text(opcodeName)) }
    switch command {
    case .huamiSetMeasurementInterval(let minutes):
      summary.append(.text(" "))
      summary.append(.number(Int(minutes)))
      summary.append(.text(" min"))
    case let .huamiMeasurementControl(mode, enable):
      if let modeName = Self.modeName(mode) {
        summary.append(.text(enable ? " start " : " stop "))
        summary.append(.text(modeName))
      }
    case .reserved(let opcode, _):
      summary.append(.text("reserved op code "))
      summary.append(.hex(UInt64(opcode), width: 2))
    case .resetEnergyExpended, .huamiKeepAlive:
      break
    }
  }

  public func diagnose(into diagnostics: inout [Diagnostic], context: ValueContext) {
    if case .reserved(let opcode, _) = command {
      ProfileSupport.add(.profileReservedValue, &diagnostics, "Heart Rate Control Point op code \(Hex.prefixed(UInt64(opcode), width: 2)) is reserved")
    }
  }
}

extension ProfileRegistry {
  /// This file's decoders: adding one here registers it.
  static let heartRate: [CharacteristicDecoder] = [
    HeartRateMeasurement.decoder,
    BodySensorLocation.decoder,
    HeartRateControlPoint.decoder,
  ]
}
