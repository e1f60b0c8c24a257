import BLECore

// Polar Measurement Data (PMD), service FB005C80-02E7-F387-1CAD-8ACD2D8DF0C8: the control
// point FB005C81 (read: the features; write: the client's requests; indicate: the responses
// and commands of the device) and the data characteristic FB005C82 (PolarPMDData.swift).
//
// The corresponding specification is Polar's own, informal (shared/reference/gatt-payloads.md §8:
// Polar_Measurement_Data_Specification.pdf, online_measurement.pdf, the SDK's PMD sources).

public enum PolarPMD {
  public static let serviceUUID = BluetoothUUID(high: 0xFB00_5C80_02E7_F387, low: 0x1CAD_8ACD_2D8D_F0C8)
  public static let controlPointUUID = BluetoothUUID(high: 0xFB00_5C81_02E7_F387, low: 0x1CAD_8ACD_2D8D_F0C8)
  public static let dataUUID = BluetoothUUID(high: 0xFB00_5C82_02E7_F387, low: 0x1CAD_8ACD_2D8D_F0C8)

  /// Measurement types 0–6 (spec PDF) and 7–14 (SDK, 2024 document); 4 is reserved.
  public static func measurementTypeName(_ type: UInt8) -> Name? {
    switch type {
    case 0: return "ECG"
    case 1: return "PPG"
    case 2: return "ACC"
    case 3: return "PPI"
    case 4: return "reserved"
    case 5: return "gyroscope"
    case 6: return "magnetometer"
    case 7: return "skin temperature"
    case 9: return "SDK mode"
    case 10: return "location"
    case 11: return "pressure"
    case 12: return "temperature"
    case 13: return "offline recording"
    case 14: return "offline HR"
    default: return nil
    }
  }

  /// Control point op codes (client → device).
  public static func opcodeName(_ opcode: UInt8) -> Name? {
    switch opcode {
    case 0x01: return "get measurement settings"
    case 0x02: return "request measurement start"
    case 0x03: return "stop measurement"
    case 0x04: return "get SDK-mode measurement settings"
    case 0x05: return "get measurement status"
    case 0x06: return "get SDK-mode status"
    case 0x07: return "get offline recording trigger status"
    case 0x08: return "set offline recording trigger mode"
    case 0x09: return "set offline recording trigger settings"
    default: return nil
    }
  }

  /// The op code in header words ("start", "get settings").
  static func opcodeWords(_ opcode: UInt8) -> Name? {
    switch opcode {
    case 0x01: return "get settings"
    case 0x02: return "start"
    case 0x03: return "stop"
    case 0x04: return "get SDK-mode settings"
    case 0x05: return "get measurement status"
    case 0x06: return "get SDK-mode status"
    case 0x07: return "get offline trigger status"
    case 0x08: return "set offline trigger mode"
    case 0x09: return "set offline trigger settings"
    default: return nil
    }
  }

  /// Response status codes (14 only in the SDK).
  public static func statusName(_ status: UInt8) -> Name? {
    switch status {
    case 0: return "success"
    case 1: return "invalid op code"
    case 2: return "invalid measurement type"
    case 3: return "not supported"
    case 4: return "invalid length"
    case 5: return "invalid parameter"
    case 6: return "already in state"
    case 7: return "invalid resolution"
    case 8: return "invalid sample rate"
    case 9: return "invalid range"
    case 10: return "invalid MTU"
    case 11: return "invalid number of channels"
    case 12: return "invalid state"
    case 13: return "device in charger"
    case 14: return "disk full"
    default: return nil
    }
  }

  /// Commands the device sends on its own (an indication whose first byte is not 0xF0).
  public static func deviceCommandName(_ command: UInt8) -> Name? {
    command == 0x01 ? "online measurement stopped" : nil
  }

  /// A type byte: `(recording_type << 7) | measurement_type` (recording 0 online, 1 offline).
  static func writeType(_ byte: UInt8, to fields: inout FieldList) {
    fields.code("measurement_type", "Measurement type", byte & 0x7F, width: 2, name: measurementTypeName(byte & 0x7F))
    fields.text("recording_type", "Recording", byte & 0x80 != 0 ? "offline" : "online")
  }

  /// "ECG", "offline ACC", "type 8", "reserved type 4".
  static func summarizeType(_ byte: UInt8, into summary: inout SummaryLine) {
    if byte & 0x80 != 0 { summary.append(.text("offline ")) }
    let type = byte & 0x7F
    if let name = measurementTypeName(type), type != 4 {
      summary.append(.text(name))
    } else {
      summary.append(.text(type == 4 ? "reserved type " : "type "))
      summary.append(.number(Int(type)))
    }
  }

  /// A float32 as the shortest decimal that reads back as it (`0.1`, not `0.100000001`).
  static func real(_ value: Float) -> Double {
    guard value.isFinite else { return Double(value) }
    return Double(value.description) ?? Double(value)
  }

  /// Measurement settings (§8.3): `setting_type(1) count(1) value × count`, repeated. Responses
  /// list what a type can do, start requests what is asked (count 1).
  public struct Settings: Sendable, Equatable {
    public var sampleRates: [UInt16] = []
    public var resolutions: [UInt16] = []
    public var ranges: [UInt16] = []
    public var rangesMilli: [UInt32] = []
    public var channels: [UInt8] = []
    public var conversionFactors: [Float] = []
    /// Setting 6: the strategy byte and the key (the last setting of a start request).
    public var securityStrategy: UInt8?
    public var securityKey: [UInt8] = []
    /// A setting type the reference does not define: its size is unknown, so it and the bytes
    /// after it stay undecoded.
    public var unknownType: UInt8?
    public var undecoded: [UInt8] = []

    public init() {}

    public init(parsing reader: inout ByteReader) throws(DecodeError) {
      while !reader.isAtEnd {
        let type = try reader.peekUInt8()
        guard type <= 6 else {
          unknownType = type
          undecoded = Array(reader.readRemaining())
          return
        }
        try reader.skip(1)
        let count = Int(try reader.readUInt8())
        if type == 6 {
          // Strategy byte, then the key: the rest of the request.
          securityStrategy = try reader.readUInt8()
          securityKey = Array(reader.readRemaining())
          return
        }
        for _ in 0..<count {
          switch type {
          case 0: sampleRates.append(try reader.readUInt16LE())
          case 1: resolutions.append(try reader.readUInt16LE())
          case 2: ranges.append(try reader.readUInt16LE())
          case 3: rangesMilli.append(try reader.readUInt32LE())
          case 4: channels.append(try reader.readUInt8())
          default: conversionFactors.append(Float(bitPattern: try reader.readUInt32LE()))
          }
        }
      }
    }

    public var isEmpty: Bool { self == Settings() }

    /// The `settings` object.
    func writeFields(to fields: inout FieldList) {
      fields.beginObject("settings", "Settings")
      func list<T: BinaryInteger>(_ key: Name, _ label: Name, _ values: [T], unit: Name) {
        guard !values.isEmpty else { return }
        fields.beginArray(key, label)
        for value in values {
          if unit.isEmpty { fields.uint(key, label, value) } else { fields.measure(key, label, value, scale: 1, unit: unit) }
        }
        fields.end()
      }
      list("sample_rate_hz", "Sample rate", sampleRates, unit: "Hz")
      list("resolution_bits", "Resolution", resolutions, unit: "bit")
      list("range", "Range (±)", ranges, unit: "")
      list("range_milliunits", "Range (± milli-units)", rangesMilli, unit: "")
      list("channels", "Channels", channels, unit: "")
      if !conversionFactors.isEmpty {
        fields.beginArray("conversion_factor", "Conversion factor")
        for factor in conversionFactors { fields.real("conversion_factor", "Conversion factor", PolarPMD.real(factor), places: 6, unit: "") }
        fields.end()
      }
      if let securityStrategy {
        fields.beginObject("security", "Security")
        fields.uint("strategy", "Strategy", securityStrategy)
        fields.bytes("key", "Key", securityKey[...])
        fields.end()
      }
      if let unknownType {
        fields.uint("unknown_setting_type", "Unknown setting type", unknownType)
        fields.bytes("undecoded", "Undecoded", undecoded[...])
      }
      fields.end()
    }

    /// "130 Hz, 14 bit", "25/50/100/200 Hz, 16 bit, range ±2/4/8, 3 channels".
    func summarize(into summary: inout SummaryLine) {
      var first = true
      func list<T: BinaryInteger>(_ values: [T], prefix: Name, unit: Name, divisor: Int = 1) {
        guard !values.isEmpty else { return }
        ProfileSupport.separate(&summary, first: &first)
        summary.append(.text(prefix))
        for (index, value) in values.enumerated() {
          if index > 0 { summary.append(.text("/")) }
          if divisor == 1 {
            summary.append(.number(Int(value)))
          } else {
            summary.append(.real(Double(value) / Double(divisor), places: 3))
          }
        }
        summary.append(.text(unit))
      }
      list(sampleRates, prefix: "", unit: " Hz")
      list(resolutions, prefix: "", unit: " bit")
      list(ranges, prefix: "range ±", unit: "")
      list(rangesMilli, prefix: "range ±", unit: "", divisor: 1000)
      if channels.count == 1 && channels[0] == 1 {
        ProfileSupport.separate(&summary, first: &first)
        summary.append(.text("1 channel"))
      } else {
        list(channels, prefix: "", unit: " channels")
      }
      if !conversionFactors.isEmpty {
        ProfileSupport.separate(&summary, first: &first)
        summary.append(.text("factor "))
        for (index, factor) in conversionFactors.enumerated() {
          if index > 0 { summary.append(.text("/")) }
          summary.append(.string(factor.description))
        }
      }
      if securityStrategy != nil {
        ProfileSupport.separate(&summary, first: &first)
        summary.append(.text("security"))
      }
      if let unknownType {
        ProfileSupport.separate(&summary, first: &first)
        summary.append(.text("unknown setting "))
        summary.append(.number(Int(unknownType)))
      }
    }
  }
}

extension PolarPMD {
  /// The PMD control point FB005C81. What a value is follows from how it travelled: a read is
  /// the feature bitmap, a write a request (`opcode parameters`), an indication a response
  /// (`F0 opcode type status [more parameters]`) or a command of the device (any other first
  /// byte: 0x01 = online measurement stopped, followed by the type bytes).
  public struct ControlPoint: CharacteristicValue, Equatable {
    public enum Message: Sendable, Equatable {
      /// Read: byte 0 (not interpreted), then the supported measurement types as bits of
      /// bytes 1–2 (bit n = type n).
      case features(firstByte: UInt8, types: UInt16, rest: [UInt8])
      case request(Request)
      case response(Response)
      /// A command the device sent on its own, with its parameters (type bytes for 0x01).
      case deviceCommand(command: UInt8, parameters: [UInt8])
    }

    public struct Request: Sendable, Equatable {
      public var opcode: UInt8
      /// The type byte of ops 1–4 and 9.
      public var typeByte: UInt8?
      /// Op 2 (start) and op 9 (with a length).
      public var settings: Settings?
      /// Op 8: the trigger mode.
      public var mode: UInt8?
      /// Op 9: the trigger status, and the length of the settings when present.
      public var triggerStatus: UInt8?
      public var settingsLength: UInt8?
      /// An op code the reference does not define: the bytes after it.
      public var parameters: [UInt8] = []
    }

    public struct Response: Sendable, Equatable {
      public var opcode: UInt8
      public var typeByte: UInt8
      public var status: UInt8
      /// Only when the status is success: non-zero when more responses follow.
      public var more: UInt8?
      /// Get (SDK-mode) settings responses: what the type can do.
      public var settings: Settings?
      /// Other responses' parameters (or bytes after an error status).
      public var parameters: [UInt8] = []
    }

    public var message: Message

    public init(message: Message) { self.message = message }

    /// Without knowing how the value travelled: 0xF0 first is a response, anything else a request.
    public init(parsing reader: inout ByteReader) throws(DecodeError) {
      let first = try reader.peekUInt8()
      try self.init(parsing: &reader, context: ValueContext(operation: first == 0xF0 ? .indication : .write, uuid: PolarPMD.controlPointUUID))
    }

    public init(parsing reader: inout ByteReader, context: ValueContext) throws(DecodeError) {
      reader.layer = .profile
      switch context.operation {
      case .read:
        let first = try reader.readUInt8()
        let types = try reader.readUInt16LE()
        message = .features(firstByte: first, types: types, rest: Array(reader.readRemaining()))
      case .write, .writeWithoutResponse:
        message = .request(try Self.request(&reader))
      case .notification, .indication:
        let first = try reader.readUInt8()
        if first == 0xF0 {
          message = .response(try Self.response(&reader))
        } else {
          message = .deviceCommand(command: first, parameters: Array(reader.readRemaining()))
        }
      }
    }

    static func request(_ reader: inout ByteReader) throws(DecodeError) -> Request {
      var request = Request(opcode: try reader.readUInt8())
      switch request.opcode {
      case 0x01, 0x03, 0x04:
        request.typeByte = try reader.readUInt8()
      case 0x02:
        request.typeByte = try reader.readUInt8()
        request.settings = try Settings(parsing: &reader)
      case 0x05, 0x06, 0x07:
        break
      case 0x08:
        request.mode = try reader.readUInt8()
      case 0x09:
        request.triggerStatus = try reader.readUInt8()
        request.typeByte = try reader.readUInt8()
        if !reader.isAtEnd {
          let length = try reader.readUInt8()
          request.settingsLength = length
          var settings = try reader.readReader(count: Int(length))
          request.settings = try Settings(parsing: &settings)
        }
      default:
        request.parameters = Array(reader.readRemaining())
      }
      return request
    }

    static func response(_ reader: inout ByteReader) throws(DecodeError) -> Response {
      let opcode = try reader.readUInt8()
      let typeByte = try reader.readUInt8()
      var response = Response(opcode: opcode, typeByte: typeByte, status: try reader.readUInt8())
      if response.status == 0 {
        response.more = try reader.readUInt8()
        if opcode == 0x01 || opcode == 0x04 {
          response.settings = try Settings(parsing: &reader)
          return response
        }
      }
      response.parameters = Array(reader.readRemaining())
      return response
    }

    public static let decoder = CharacteristicDecoder(uuid: PolarPMD.controlPointUUID, key: "polar_pmd_control_point", ControlPoint.self, summarySaysItAll: true)

    /// The measurement types a features value lists (bit n of bytes 1–2 = type n).
    public var supportedTypes: [UInt8] {
      guard case .features(_, let types, _) = message else { return [] }
      return (0..<16).filter { types & (1 << $0) != 0 }.map { UInt8($0) }
    }

    public func writeFields(to fields: inout FieldList, context: ValueContext) {
      switch message {
      case let .features(first, _, rest):
        fields.text("message", "Message", "features")
        fields.addVerbose("first_byte", "Byte 0 (not interpreted)", .unsigned(UInt64(first), .decimal))
        let types = supportedTypes
        fields.beginArray("supported_types", "Supported types", verbose: true)
        for type in types { fields.uint("supported_types", "Type", type) }
        fields.end()
        fields.beginArray("supported_type_names", "Supported")
        for type in types {
          if let name = PolarPMD.measurementTypeName(type), type != 4 { fields.text("supported_type_names", "Type", name) } else { fields.add("supported_type_names", "Type", .text("type \(type)")) }
        }
        fields.end()
        if !rest.isEmpty { fields.bytes("rest", "Further bytes", rest[...]) }
      case .request(let request):
        fields.text("message", "Message", "request")
        fields.code("opcode", "Op code", request.opcode, width: 2, name: PolarPMD.opcodeName(request.opcode))
        if let status = request.triggerStatus { fields.uint("trigger_status", "Trigger status", status) }
        if let typeByte = request.typeByte { PolarPMD.writeType(typeByte, to: &fields) }
        if let mode = request.mode { fields.uint("mode", "Trigger mode", mode) }
        if let length = request.settingsLength { fields.uint("settings_length", "Settings length", length) }
        if let settings = request.settings, !settings.isEmpty { settings.writeFields(to: &fields) }
        if !request.parameters.isEmpty { fields.bytes("parameters", "Parameters", request.parameters[...]) }
      case .response(let response):
        fields.text("message", "Message", "response")
        fields.code("opcode", "Op code", response.opcode, width: 2, name: PolarPMD.opcodeName(response.opcode))
        PolarPMD.writeType(response.typeByte, to: &fields)
        fields.code("status", "Status", response.status, width: 2, name: PolarPMD.statusName(response.status))
        if let more = response.more { fields.uint("more", "More", more) }
        if let settings = response.settings, !settings.isEmpty { settings.writeFields(to: &fields) }
        if !response.parameters.isEmpty { fields.bytes("parameters", "Parameters", response.parameters[...]) }
      case let .deviceCommand(command, parameters):
        fields.text("message", "Message", "device_command")
        fields.code("command", "Command", command, width: 2, name: PolarPMD.deviceCommandName(command))
        if command == 0x01 {
          fields.beginArray("measurement_types", "Measurement types", verbose: true)
          for byte in parameters { fields.uint("measurement_types", "Type", byte & 0x7F) }
          fields.end()
          fields.beginArray("measurement_type_names", "Stopped")
          for byte in parameters {
            var words = SummaryLine()
            PolarPMD.summarizeType(byte, into: &words)
            fields.add("measurement_type_names", "Type", .text(words.text))
          }
          fields.end()
        } else if !parameters.isEmpty {
          fields.bytes("parameters", "Parameters", parameters[...])
        }
      }
    }

    public func summarize(into summary: inout SummaryLine, context: ValueContext) {
      switch message {
      case .features:
        summary.append(.text("features: "))
        for (index, type) in supportedTypes.enumerated() {
          if index > 0 { summary.append(.text(", ")) }
          PolarPMD.summarizeType(type, into: &summary)
        }
        if supportedTypes.isEmpty { summary.append(.text("none")) }
      case .request(let request):
        Self.summarizeOperation(request.opcode, typeByte: request.typeByte, into: &summary)
        if let mode = request.mode {
          summary.append(.text(" "))
          summary.append(.number(Int(mode)))
        }
        if let status = request.triggerStatus {
          summary.append(.text(" (status "))
          summary.append(.number(Int(status)))
          summary.append(.text(")"))
        }
        if let settings = request.settings, !settings.isEmpty {
          summary.append(.text(": "))
          settings.summarize(into: &summary)
        }
      case .response(let response):
        let typed = [0x01, 0x02, 0x03, 0x04, 0x09].contains(response.opcode)
        Self.summarizeOperation(response.opcode, typeByte: typed ? response.typeByte : nil, into: &summary)
        summary.append(.text(": "))
        if response.status != 0 {
          summary.append(.text("error: "))
          if let name = PolarPMD.statusName(response.status) {
            summary.append(.text(name))
          } else {
            summary.append(.text("status "))
            summary.append(.number(Int(response.status)))
          }
        } else if let settings = response.settings, !settings.isEmpty {
          settings.summarize(into: &summary)
        } else {
          summary.append(.text(response.settings != nil ? "no settings" : "ok"))
        }
        if let more = response.more, more != 0 { summary.append(.text(", more follows")) }
      case let .deviceCommand(command, parameters):
        if command == 0x01 {
          summary.append(.text("measurement stopped: "))
          for (index, byte) in parameters.enumerated() {
            if index > 0 { summary.append(.text(", ")) }
            PolarPMD.summarizeType(byte, into: &summary)
          }
          if parameters.isEmpty { summary.append(.text("no type")) }
        } else {
          summary.append(.text("device command "))
          summary.append(.hex(UInt64(command), width: 2))
          if !parameters.isEmpty {
            summary.append(.text(" "))
            summary.append(.bytes(parameters[...]))
          }
        }
      }
    }

    /// "start ECG", "get measurement status", "op code 0x0a".
    static func summarizeOperation(_ opcode: UInt8, typeByte: UInt8?, into summary: inout SummaryLine) {
      if let words = PolarPMD.opcodeWords(opcode) {
        summary.append(.text(words))
      } else {
        summary.append(.text("op code "))
        summary.append(.string(Hex.prefixed(UInt64(opcode), width: 2)))
      }
      if let typeByte {
        summary.append(.text(" "))
        PolarPMD.summarizeType(typeByte, into: &summary)
      }
    }

    public func diagnose(into diagnostics: inout [Diagnostic], context: ValueContext) {
      switch message {
      case .features(_, let types, _):
        for bit in [4, 8, 15] where types & (1 << bit) != 0 {
          ProfileSupport.add(.profileVendorCodeUnknown, &diagnostics, "PMD feature bit \(bit) names no measurement type the reference knows")
        }
      case .request(let request):
        if PolarPMD.opcodeName(request.opcode) == nil {
          ProfileSupport.add(.profileVendorCodeUnknown, &diagnostics, "PMD op code \(Hex.prefixed(UInt64(request.opcode), width: 2)) is not in the reference")
        }
        if let type = request.typeByte, PolarPMD.measurementTypeName(type & 0x7F) == nil {
          ProfileSupport.add(.profileVendorCodeUnknown, &diagnostics, "PMD measurement type \(type & 0x7F) is not in the reference")
        }
        request.settings?.diagnose(into: &diagnostics)
      case .response(let response):
        if PolarPMD.statusName(response.status) == nil {
          ProfileSupport.add(.profileVendorStatusUnknown, &diagnostics, "PMD status \(response.status) is not in the reference")
        }
        if response.status != 0 && !response.parameters.isEmpty {
          ProfileSupport.add(.profileTrailingBytes, &diagnostics, "\(response.parameters.count) bytes after an error status")
        }
        response.settings?.diagnose(into: &diagnostics)
      case .deviceCommand(let command, _):
        if PolarPMD.deviceCommandName(command) == nil {
          ProfileSupport.add(.profileVendorCodeUnknown, &diagnostics, "PMD device command \(Hex.prefixed(UInt64(command), width: 2)) is not in the reference")
        }
      }
    }
  }
}

extension PolarPMD.Settings {
  func diagnose(into diagnostics: inout [Diagnostic]) {
    if let unknownType {
      ProfileSupport.add(.profileVendorValueUndecoded, &diagnostics, "PMD setting type \(unknownType) is not in the reference: \(undecoded.count) bytes not decoded")
    }
  }
}
