import BLECore
import BLEDecoder

/// A JSON object written straight into an output buffer, commas placed as values come.
package struct JSONWriter {
  package var out: OutputBuffer
  /// Whether the innermost open object or array already holds a value.
  var filled: [Bool] = []

  package init(out: OutputBuffer) { self.out = out }

  package mutating func separator() {
    if let last = filled.last, last { out.byte(UInt8(ascii: ",")) }
    if !filled.isEmpty { filled[filled.count - 1] = true }
  }

  package mutating func key(_ key: String) {
    separator()
    out.jsonString(key)
    out.byte(UInt8(ascii: ":"))
  }

  package mutating func open(_ key: String? = nil) {
    if let key { self.key(key) } else { separator() }
    out.byte(UInt8(ascii: "{"))
    filled.append(false)
  }

  package mutating func close() {
    out.byte(UInt8(ascii: "}"))
    filled.removeLast()
  }

  package mutating func openArray(_ key: String) {
    self.key(key)
    out.byte(UInt8(ascii: "["))
    filled.append(false)
  }

  package mutating func closeArray() {
    out.byte(UInt8(ascii: "]"))
    filled.removeLast()
  }

  package mutating func element(_ value: Int) {
    separator()
    out.decimal(value)
  }

  package mutating func stringElement(_ value: String) {
    separator()
    out.jsonString(value)
  }

  package mutating func int(_ key: String, _ value: Int) {
    self.key(key)
    out.decimal(value)
  }

  package mutating func bool(_ key: String, _ value: Bool) {
    self.key(key)
    out.append(value ? "true" : "false")
  }

  package mutating func string(_ key: String, _ value: String) {
    self.key(key)
    out.jsonString(value)
  }

  /// A real number (`null` when not finite).
  package mutating func number(_ key: String, _ value: Double) {
    self.key(key)
    out.double(value)
  }

  /// Microseconds as seconds with six decimals.
  package mutating func micros(_ key: String, _ value: Int64) {
    self.key(key)
    out.seconds(value)
  }

  /// A capture timestamp as Unix seconds with six decimals, as frames' `ts` is written.
  package mutating func timestamp(_ key: String, _ value: Int64) {
    self.key(key)
    out.unixSeconds(value)
  }

  /// A UUID as lowercase text, and its name under `<key>_name` when known.
  package mutating func uuid(_ key: String, _ uuid: BluetoothUUID) {
    self.key(key)
    out.byte(UInt8(ascii: "\""))
    out.uuid(uuid)
    out.byte(UInt8(ascii: "\""))
    if let name = GATTDatabase.name(uuid) { string(key + "_name", "\(name)") }
  }

  /// An HCI status or reason and its name under `<key>_name`.
  package mutating func hciStatus(_ key: String, _ code: UInt8) {
    int(key, Int(code))
    if let name = AssignedNumbers.hciErrorName(code) { string(key + "_name", "\(name)") }
  }
}
