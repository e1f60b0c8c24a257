import BLECore

extension Huami {
  /// Auth 0x0009 (service 0xFEE1; shared/reference/gatt-payloads.md §9.3). The phone writes
  /// `command auth_flags parameters`, the band notifies `10 command status [random]`.
  ///
  /// | Command | Write | Notification |
  /// |---|---|---|
  /// | 0x01 | send key: 16-byte key | status |
  /// | 0x02 | request random | status, 16 random bytes |
  /// | 0x03 | send the random encrypted (AES-128-ECB with the key): 16 bytes | status |
  /// | 0x82 | request random, Mi Band 4/5 (crypt flag 0x80): `82 00 02 01 00` | status, 16 random bytes |
  /// | 0x83 | send the encrypted random, Mi Band 4/5 | status |
  ///
  /// Status 0x01 success, 0x04 failure. Zepp OS devices authenticate through the chunked
  /// transfer characteristic instead (not decoded).
  public struct Auth: CharacteristicValue, Equatable {
    public enum Message: Sendable, Equatable {
      /// Written by the phone. `payload`: the key or the encrypted random (commands 1, 3,
      /// 0x83), else the parameters.
      case request(command: UInt8, flags: UInt8, payload: [UInt8])
      /// Notified by the band.
      case response(command: UInt8, status: UInt8, random: [UInt8])
      /// A notification that does not start with 0x10.
      case other([UInt8])
    }

    public var message: Message

    public init(message: Message) { self.message = message }

    /// Without knowing how the value travelled: 0x10 first is a response, anything else a request.
    public init(parsing reader: inout ByteReader) throws(DecodeError) {
      let first = try reader.peekUInt8()
      try self.init(parsing: &reader, context: ValueContext(operation: first == 0x10 ? .notification : .write, uuid: Huami.uuid(0x0009)))
    }

    public init(parsing reader: inout ByteReader, context: ValueContext) throws(DecodeError) {
      reader.layer = .profile
      switch context.operation {
      case .write, .writeWithoutResponse:
        let command = try reader.readUInt8()
        let flags = try reader.readUInt8()
        if Self.carriesBlock(command) {
          message = .request(command: command, flags: flags, payload: Array(try reader.readBytes(count: 16)))
        } else {
          message = .request(command: command, flags: flags, payload: Array(reader.readRemaining()))
        }
      case .notification, .indication, .read:
        let first = try reader.readUInt8()
        guard first == 0x10 else {
          message = .other([first] + Array(reader.readRemaining()))
          return
        }
        let command = try reader.readUInt8()
        let status = try reader.readUInt8()
        // A successful random request carries the random number.
        let random = Self.returnsRandom(command) && status == 0x01 ? Array(try reader.readBytes(count: 16)) : []
        message = .response(command: command, status: status, random: random)
      }
    }

    /// Commands whose write carries a 16-byte block (a key or the encrypted random).
    static func carriesBlock(_ command: UInt8) -> Bool { command == 0x01 || command == 0x03 || command == 0x83 }
    static func returnsRandom(_ command: UInt8) -> Bool { command & 0x7F == 0x02 }

    public static func commandName(_ command: UInt8) -> Name? {
      switch command {
      case 0x01: return "send key"
      case 0x02: return "request random"
      case 0x03: return "send encrypted random"
      case 0x82: return "request random (Mi Band 4/5)"
      case 0x83: return "send encrypted random (Mi Band 4/5)"
      default: return nil
      }
    }

    public static func statusName(_ status: UInt8) -> Name? {
      switch status {
      case 0x01: return "success"
      case 0x04: return "failure"
      default: return nil
      }
    }

    public static let decoder = CharacteristicDecoder(uuid: Huami.uuid(0x0009), key: "huami_auth", Auth.self, summarySaysItAll: true)

    public func writeFields(to fields: inout FieldList, context: ValueContext) {
      switch message {
      case let .request(command, flags, payload):
        fields.text("message", "Message", "request")
        fields.code("command", "Command", command, width: 2, name: Self.commandName(command))
        fields.flag("crypt_flag", "Crypt flag (0x80)", command & 0x80 != 0)
        fields.hex("auth_flags", "Auth flags", flags, width: 2)
        switch command {
        case 0x01: fields.bytes("key", "Key", payload[...])
        case 0x03, 0x83: fields.bytes("encrypted_random", "Encrypted random", payload[...])
        default: if !payload.isEmpty { fields.bytes("parameters", "Parameters", payload[...]) }
        }
      case let .response(command, status, random):
        fields.text("message", "Message", "response")
        fields.code("response_to", "Response to", command, width: 2, name: Self.commandName(command))
        fields.code("status", "Status", status, width: 2, name: Self.statusName(status))
        if !random.isEmpty { fields.bytes("random", "Random", random[...]) }
      case .other(let bytes):
        fields.text("message", "Message", "other")
        fields.bytes("data", "Data", bytes[...])
      }
    }

    /// "send key 30 31 …", "request random: success, random 00 01 …", "send key: failure".
    public func summarize(into summary: inout SummaryLine, context: ValueContext) {
      switch message {
      case let .request(command, _, payload):
        Self.summarizeCommand(command, into: &summary)
        if !payload.isEmpty {
          summary.append(.text(" "))
          summary.append(.bytes(payload[...]))
        }
      case let .response(command, status, random):
        Self.summarizeCommand(command, into: &summary)
        summary.append(.text(": "))
        if let name = Self.statusName(status) {
          summary.append(.text(name))
        } else {
          summary.append(.text("status "))
          summary.append(.hex(UInt64(status), width: 2))
        }
        if !random.isEmpty {
          summary.append(.text(", random "))
          summary.append(.bytes(random[...]))
        }
      case .other(let bytes):
        summary.append(.bytes(bytes[...]))
      }
    }

    static func summarizeCommand(_ command: UInt8, into summary: inout SummaryLine) {
      if let name = commandName(command) {
        summary.append(.text(name))
      } else {
        summary.append(.text("command "))
        summary.append(.string(Hex.prefixed(UInt64(command), width: 2)))
      }
    }

    public func diagnose(into diagnostics: inout [Diagnostic], context: ValueContext) {
      switch message {
      case .request(let command, _, _), .response(let command, _, _):
        if Self.commandName(command) == nil {
          ProfileSupport.add(.profileVendorCodeUnknown, &diagnostics, "Huami auth command \(Hex.prefixed(UInt64(command), width: 2)) is not in the reference")
        }
        if case .response(_, let status, _) = message, Self.statusName(status) == nil {
          ProfileSupport.add(.profileVendorCodeUnknown, &diagnostics, "Huami auth status \(Hex.prefixed(UInt64(status), width: 2)) is not in the reference")
        }
      case .other:
        ProfileSupport.add(.profileVendorValueUnexpected, &diagnostics, "Huami auth notification does not start with 0x10")
      }
    }
  }
}
