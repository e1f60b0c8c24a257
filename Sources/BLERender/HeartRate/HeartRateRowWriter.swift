import BLEAnalysis
import BLECore
import BLEDecoder

/// `hr`'s rows as text (aligned columns), CSV or JSON Lines (docs/json.md), one per
/// `HeartRateRow`, written straight into the output buffer.
package struct HeartRateRowWriter {
  package enum Format: Sendable { case text, csv, json }

  static let frameWidth = 7
  static let deviceWidth = 17
  /// The time column's widths, as annotate's: relative seconds, UTC date and time.
  static let secondsWidth = 12
  static let dateTimeWidth = 26
  /// The CSV header row (a batch writes it once, before every file's rows).
  package static let csvHeader = "frame,time,device,bpm,contact,energy_kj,rr_ms,flags\n"
  package static let batchCSVHeader = "file," + csvHeader

  let format: Format
  let absoluteTime: Bool
  /// Whether the rows are one file's among several (CSV: the batch wrote the header row).
  let inBatch: Bool
  /// The file's name for batch rows (CSV column, JSON key), already quoted for its format.
  let fileField: String?
  /// The last address written as a device, rendered once: notifications repeat one device.
  var cachedAddress: BDAddr?
  var cachedAddressText = PackedText()

  /// `file`: the file's name in a batch, written in each CSV and JSON row.
  package init(format: Format, absoluteTime: Bool, file: String?) {
    self.format = format
    self.absoluteTime = absoluteTime
    inBatch = file != nil
    switch (file, format) {
    case (let file?, .csv):
      // Always quoted, quotes doubled (RFC 4180); controls shown as the text surfaces show them.
      fileField = "\"" + Escaping.escaped(file, .line).split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") + "\""
    case (let file?, .json):
      var buffer = OutputBuffer(fd: nil)
      buffer.jsonString(file)
      fileField = buffer.text
    default: fileField = nil
    }
  }

  package func header(to out: inout OutputBuffer) {
    switch format {
    case .json: return
    case .csv:
      // In a batch the command wrote the one header row before the files' rows.
      guard !inBatch else { return }
      out.append(string: Self.csvHeader)
    case .text:
      out.append(string: "frame".padding(toLength: Self.frameWidth, withPad: " ", startingAt: 0) + " ")
      let timeWidth = absoluteTime ? Self.dateTimeWidth : Self.secondsWidth
      out.append(string: String(repeating: " ", count: max(timeWidth - 4, 0)) + "time ")
      out.append(string: "device".padding(toLength: Self.deviceWidth, withPad: " ", startingAt: 0))
      out.append("  bpm contact      energy_kj rr_ms\n")
    }
  }

  package mutating func write(_ row: borrowing HeartRateRow, to out: inout OutputBuffer) {
    switch format {
    case .text: text(row, &out)
    case .csv: csv(row, &out)
    case .json: json(row, &out)
    }
  }

  mutating func device(_ row: borrowing HeartRateRow, _ out: inout OutputBuffer) {
    guard let address = row.address else { return out.append(string: row.device) }
    if address != cachedAddress {
      cachedAddress = address
      cachedAddressText = OutputBuffer.addressText(address)
    }
    out.append(cachedAddressText)
  }

  func time(_ row: borrowing HeartRateRow, _ out: inout OutputBuffer) {
    if absoluteTime { out.utcDateTime(row.timestamp) } else { out.seconds(row.elapsed) }
  }

  mutating func text(_ row: borrowing HeartRateRow, _ out: inout OutputBuffer) {
    let measurement = row.measurement
    var start = out.count
    out.byte(UInt8(ascii: "#"))
    out.decimal(row.frame)
    out.spaces(Self.frameWidth - (out.count - start))
    out.byte(0x20)
    start = out.count
    time(row, &out)
    out.alignRight(from: start, width: absoluteTime ? Self.dateTimeWidth : Self.secondsWidth)
    out.byte(0x20)
    start = out.count
    device(row, &out)
    out.spaces(Self.deviceWidth - (out.count - start))
    out.byte(0x20)
    start = out.count
    out.decimal(Int(measurement.bpm))
    out.alignRight(from: start, width: 4)
    out.byte(0x20)
    start = out.count
    out.append(measurement.sensorContact.word)
    out.spaces(12 - (out.count - start))
    out.byte(0x20)
    start = out.count
    if let energy = measurement.energyExpended { out.decimal(Int(energy)) } else { out.byte(UInt8(ascii: "-")) }
    out.alignRight(from: start, width: 9)
    for raw in measurement.rrIntervals {
      out.byte(0x20)
      out.real(HeartRateMeasurement.milliseconds(raw), places: 1)
    }
    if !row.flags.isEmpty {
      out.append("  ! ")
      out.append(string: row.flags.spaced)
    }
    out.byte(0x0A)
  }

  mutating func csv(_ row: borrowing HeartRateRow, _ out: inout OutputBuffer) {
    let measurement = row.measurement
    if let fileField {
      out.append(string: fileField)
      out.byte(UInt8(ascii: ","))
    }
    if absoluteTime {
      out.decimal(row.frame)
      out.byte(UInt8(ascii: ","))
      out.utcDateTime(row.timestamp)
    }
    if let address = row.address, address != cachedAddress {
      cachedAddress = address
      cachedAddressText = OutputBuffer.addressText(address)
    }
    // The rest at once: a row per measurement is most of what `hr` does.
    let room = 96 + row.device.utf8.count + measurement.rrIntervals.count * (TextFormat.maximumReal + 1)
    let (frame, elapsed, address) = (row.frame, row.elapsed, cachedAddressText)
    let device = row.address == nil ? row.device : nil
    out.compose(maximumBytes: room) { text in
      if !absoluteTime {
        text.number(frame)
        text.byte(UInt8(ascii: ","))
        text.seconds(elapsed)
      }
      text.byte(UInt8(ascii: ","))
      if let device { text.string(device) } else { address.write(to: &text) }
      text.byte(UInt8(ascii: ","))
      text.number(Int(measurement.bpm))
      text.byte(UInt8(ascii: ","))
      text.text(measurement.sensorContact.word)
      text.byte(UInt8(ascii: ","))
      if let energy = measurement.energyExpended { text.number(Int(energy)) }
      text.byte(UInt8(ascii: ","))
      var first = true
      for raw in measurement.rrIntervals {
        if !first { text.byte(UInt8(ascii: " ")) }
        first = false
        text.fixed(HeartRateMeasurement.exactMilliseconds(raw))
      }
      text.byte(UInt8(ascii: ","))
    }
    if !row.flags.isEmpty { out.append(string: row.flags.spaced) }
    out.byte(0x0A)
  }

  mutating func json(_ row: borrowing HeartRateRow, _ out: inout OutputBuffer) {
    let measurement = row.measurement
    out.byte(UInt8(ascii: "{"))
    if let fileField {
      out.append(#""file":"#)
      out.append(string: fileField)
      out.byte(UInt8(ascii: ","))
    }
    out.append(#""frame":"#)
    out.decimal(row.frame)
    out.append(#","time":"#)
    out.seconds(row.elapsed)
    out.append(#","ts":"#)
    out.unixSeconds(row.timestamp)
    out.append(#","device":""#)
    device(row, &out)
    out.append(#"","bpm":"#)
    out.decimal(Int(measurement.bpm))
    out.append(#","sensor_contact":""#)
    out.append(measurement.sensorContact.word)
    out.append(#"","energy_expended_kj":"#)
    if let energy = measurement.energyExpended { out.decimal(Int(energy)) } else { out.append("null") }
    if row.meaning != .capture {
      out.append(#","meaning":""#)
      out.append(row.meaning.key)
      out.byte(UInt8(ascii: "\""))
    }
    out.append(#","rr_intervals_ms":["#)
    for (index, raw) in measurement.rrIntervals.enumerated() {
      if index > 0 { out.byte(UInt8(ascii: ",")) }
      out.fixed(HeartRateMeasurement.exactMilliseconds(raw))
    }
    // Always present, empty when nothing is doubtful: a reader need not test for the key.
    out.append(#"],"flags":["#)
    if !row.flags.isEmpty { out.append(string: row.flags.jsonList) }
    out.append("]}\n")
  }
}
