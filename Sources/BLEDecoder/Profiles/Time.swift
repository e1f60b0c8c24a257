import BLECore

// Current Time service 0x1805 and the date/time characteristics other profiles embed:
// Current Time 0x2A2B, Date Time 0x2A08, Day of Week 0x2A09, Day Date Time 0x2A0A,
// Exact Time 256 0x2A0C.
//
// The corresponding specification is CTS 1.1 and the GATT Specification Supplement.

/// Date Time 0x2A08: `year(u16) month day hours minutes seconds`, 7 bytes; 0 = unknown for
/// year, month and day. Also the time stamp of health measurements.
public struct DateTime: FieldWritable, Equatable, CustomStringConvertible {
  public var year: UInt16
  public var month: UInt8
  public var day: UInt8
  public var hours: UInt8
  public var minutes: UInt8
  public var seconds: UInt8

  public init(year: UInt16, month: UInt8, day: UInt8, hours: UInt8, minutes: UInt8, seconds: UInt8) {
    self.year = year
    self.month = month
    self.day = day
    self.hours = hours
    self.minutes = minutes
    self.seconds = seconds
  }

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    year = try reader.readUInt16LE()
    month = try reader.readUInt8()
    day = try reader.readUInt8()
    hours = try reader.readUInt8()
    minutes = try reader.readUInt8()
    seconds = try reader.readUInt8()
  }

  /// `2024-03-01 12:34:56` (unknown parts print as zeros).
  public var description: String {
    ProfileSupport.padded(year, width: 4) + "-" + ProfileSupport.padded(month, width: 2) + "-"
      + ProfileSupport.padded(day, width: 2) + " " + ProfileSupport.padded(hours, width: 2) + ":"
      + ProfileSupport.padded(minutes, width: 2) + ":" + ProfileSupport.padded(seconds, width: 2)
  }

  /// Why the parts are out of range (empty when they are not).
  public var problems: [String] {
    var found: [String] = []
    if year != 0 && (year < 1582 || year > 9999) { found.append("year \(year) is outside 1582–9999") }
    if month > 12 { found.append("month \(month) is above 12") }
    if day > 31 { found.append("day \(day) is above 31") }
    if hours > 23 { found.append("hours \(hours) is above 23") }
    if minutes > 59 { found.append("minutes \(minutes) is above 59") }
    if seconds > 59 { found.append("seconds \(seconds) is above 59") }
    return found
  }

  public static let decoder = ProfileSupport.decoder(DateTime.self, uuid16: 0x2A08, key: "date_time")

  func write(to frame: inout DissectedFrame, context: ValueContext) {
    writeFields(&frame.fields)
    frame.summaryParts.append(.string(description))
    warnProblems(&frame)
  }

  /// `date_time` text, then the parts (JSON; text only with -v).
  func writeFields(_ fields: inout FieldList) {
    fields.add("date_time", "Date and time", .text(description))
    fields.addVerbose("year", "Year", .unsigned(UInt64(year), .decimal))
    fields.addVerbose("month", "Month", .unsigned(UInt64(month), .decimal))
    fields.addVerbose("day", "Day", .unsigned(UInt64(day), .decimal))
    fields.addVerbose("hours", "Hours", .unsigned(UInt64(hours), .decimal))
    fields.addVerbose("minutes", "Minutes", .unsigned(UInt64(minutes), .decimal))
    fields.addVerbose("seconds", "Seconds", .unsigned(UInt64(seconds), .decimal))
  }

  func warnProblems(_ frame: inout DissectedFrame) {
    for problem in problems { ProfileSupport.warn(&frame, "date and time: " + problem) }
  }
}

/// Day of Week 0x2A09: 1 Monday … 7 Sunday, 0 unknown.
public enum DayOfWeek {
  public static func name(_ day: UInt8) -> StaticString? {
    switch day {
    case 0: return "Unknown"
    case 1: return "Monday"
    case 2: return "Tuesday"
    case 3: return "Wednesday"
    case 4: return "Thursday"
    case 5: return "Friday"
    case 6: return "Saturday"
    case 7: return "Sunday"
    default: return nil
    }
  }

  static func write(_ day: UInt8, to frame: inout DissectedFrame) {
    frame.fields.code("day_of_week", "Day of week", day, width: 2, name: name(day))
    if day > 7 { ProfileSupport.warn(&frame, "day of week \(day) is reserved") }
  }

  public static let decoder = CharacteristicDecoder(uuid: BluetoothUUID(uuid16: 0x2A09), key: "day_of_week") { reader, _, frame throws(DecodeError) in
    reader.layer = .profile
    let start = reader.offset
    let day = try reader.readUInt8()
    write(day, to: &frame)
    frame.summaryParts.append(.text(name(day) ?? "reserved day"))
    try ProfileSupport.requireEnd(reader, start: start)
  }
}

/// Day Date Time 0x2A0A: Date Time + day of week, 8 bytes.
public struct DayDateTime: FieldWritable, Equatable {
  public var dateTime: DateTime
  public var dayOfWeek: UInt8

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    dateTime = try DateTime(parsing: &reader)
    dayOfWeek = try reader.readUInt8()
  }

  public static let decoder = ProfileSupport.decoder(DayDateTime.self, uuid16: 0x2A0A, key: "day_date_time")

  func write(to frame: inout DissectedFrame, context: ValueContext) {
    dateTime.writeFields(&frame.fields)
    DayOfWeek.write(dayOfWeek, to: &frame)
    frame.summaryParts.append(.string(dateTime.description))
    if let name = DayOfWeek.name(dayOfWeek), dayOfWeek != 0 {
      frame.summaryParts.append(.text(" "))
      frame.summaryParts.append(.text(name))
    }
    dateTime.warnProblems(&frame)
  }
}

/// Exact Time 256 0x2A0C: Day Date Time + fractions of a second in 1/256 s, 9 bytes.
public struct ExactTime256: FieldWritable, Equatable {
  public var dayDateTime: DayDateTime
  public var fractions256: UInt8

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    dayDateTime = try DayDateTime(parsing: &reader)
    fractions256 = try reader.readUInt8()
  }

  public static let decoder = ProfileSupport.decoder(ExactTime256.self, uuid16: 0x2A0C, key: "exact_time_256")

  func write(to frame: inout DissectedFrame, context: ValueContext) {
    dayDateTime.write(to: &frame, context: context)
    frame.fields.measure("fractions256", "Fractions", fractions256, scale: 1.0 / 256, unit: "s")
  }
}

/// Current Time 0x2A2B: Exact Time 256 + adjust reason, 10 bytes. Adjust reason bits: 0 manual
/// time update, 1 external reference time update, 2 time zone change, 3 DST change.
public struct CurrentTime: FieldWritable, Equatable {
  public var exactTime: ExactTime256
  public var adjustReason: UInt8

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    exactTime = try ExactTime256(parsing: &reader)
    adjustReason = try reader.readUInt8()
  }

  public var dateTime: DateTime { exactTime.dayDateTime.dateTime }
  public var dayOfWeek: UInt8 { exactTime.dayDateTime.dayOfWeek }
  public var fractions256: UInt8 { exactTime.fractions256 }
  public var manualTimeUpdate: Bool { adjustReason & 0x01 != 0 }
  public var externalReferenceTimeUpdate: Bool { adjustReason & 0x02 != 0 }
  public var timeZoneChange: Bool { adjustReason & 0x04 != 0 }
  public var dstChange: Bool { adjustReason & 0x08 != 0 }

  public static let decoder = ProfileSupport.decoder(CurrentTime.self, uuid16: 0x2A2B, key: "current_time")

  func write(to frame: inout DissectedFrame, context: ValueContext) {
    exactTime.write(to: &frame, context: context)
    frame.fields.beginObject("adjust_reason", "Adjust reason")
    frame.fields.addVerbose("value", "Value", .unsigned(UInt64(adjustReason), .hex(2)))
    frame.fields.flag("manual_time_update", "Manual time update", manualTimeUpdate)
    frame.fields.flag("external_reference_time_update", "External reference time update", externalReferenceTimeUpdate)
    frame.fields.flag("time_zone_change", "Change of time zone", timeZoneChange)
    frame.fields.flag("dst_change", "Change of DST", dstChange)
    frame.fields.end()
    if manualTimeUpdate { frame.summaryParts.append(.text(", manual update")) }
    if externalReferenceTimeUpdate { frame.summaryParts.append(.text(", external reference update")) }
    if timeZoneChange { frame.summaryParts.append(.text(", time zone change")) }
    if dstChange { frame.summaryParts.append(.text(", DST change")) }
    ProfileSupport.checkReserved(UInt64(adjustReason), defined: 0x0F, width: 2, what: "Current Time adjust reason", &frame)
  }
}
