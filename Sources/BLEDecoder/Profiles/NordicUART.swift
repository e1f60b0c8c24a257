import BLECore

// Nordic UART Service (NUS) 6E400001-B5A3-F393-E0A9-E50E24DCCA9E: the central writes to RX
// 6E400002, the peripheral notifies TX 6E400003 (shared/reference/gatt-payloads.md §7). The
// payload is an application byte stream with no framing: shown as text when it reads as text,
// as hex otherwise.

public enum NordicUART {
  public static let rxUUID = BluetoothUUID(high: 0x6E40_0002_B5A3_F393, low: 0xE0A9_E50E_24DC_CA9E)
  public static let txUUID = BluetoothUUID(high: 0x6E40_0003_B5A3_F393, low: 0xE0A9_E50E_24DC_CA9E)

  /// One write to RX or one notification of TX.
  public struct Payload: CharacteristicValue, Equatable {
    public var bytes: [UInt8]
    /// The bytes as text, when they are UTF-8 and mostly printable (control characters other
    /// than tab, CR and LF at most a quarter of the characters, no NUL); nil for binary data.
    public var text: String?

    public init(bytes: [UInt8]) {
      self.bytes = bytes
      text = Self.text(bytes)
    }

    public init(parsing reader: inout ByteReader) throws(DecodeError) {
      reader.layer = .profile
      self.init(bytes: Array(reader.readRemaining()))
    }

    /// Tabs and line ends count as text (`HELLO\r\n`); see `TextPayload.lenientText`.
    static func text(_ bytes: [UInt8]) -> String? { TextPayload.lenientText(bytes) }

    /// The text with control characters, quotes and backslashes escaped (`\n`, `\x1B`): the
    /// one escaper's quoted style.
    public static func escaped(_ text: String, limit: Int = .max) -> String { Escaping.escaped(text, .quoted, limit: limit) }

    public static let rxDecoder = CharacteristicDecoder(uuid: NordicUART.rxUUID, key: "nordic_uart_rx", Payload.self, summarySaysItAll: true)
    public static let txDecoder = CharacteristicDecoder(uuid: NordicUART.txUUID, key: "nordic_uart_tx", Payload.self, summarySaysItAll: true)

    /// `text` (the exact text; text output escapes its control characters) or `data` (hex).
    public func writeFields(to fields: inout FieldList, context: ValueContext) {
      if let text {
        fields.add("text", "Text", .text(text))
      } else {
        fields.bytes("data", "Data", bytes[...])
      }
      fields.uint("length", "Length", bytes.count)
    }

    /// `"hello\n"` (at most 80 characters), or the bytes in hex and their count.
    public func summarize(into summary: inout SummaryLine, context: ValueContext) {
      if bytes.isEmpty {
        summary.append(.text("empty"))
      } else if let text {
        summary.append(.string(TextPayload.quoted(text)))
      } else {
        summary.append(.bytes(bytes[...]))
        summary.append(.text(" ("))
        summary.append(.number(bytes.count))
        summary.append(.text(" bytes)"))
      }
    }
  }
}

extension ProfileRegistry {
  /// This file's decoders: adding one here registers it.
  static let nordicUART: [CharacteristicDecoder] = [
    NordicUART.Payload.rxDecoder,
    NordicUART.Payload.txDecoder,
  ]
}
