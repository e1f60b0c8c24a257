import BLECore

// Current Time service 0x1805 and the date/time characteristics other profiles embed:
// Current Time 0x2A2B, Date Time 0x2A08, Day of Week 0x2A09, Day Date Time 0x2A0A,
// Exact Time 256 0x2A0C.
//
// The corresponding specification is CTS 1.1 and the GATT Specification Supplement.

/// Date Time 0x2A08: `year(u16) month day hours minutes seconds`, 7 bytes; 0 = unknown for
/// year, month and day. Also the time stamp of health measurements.
public struct DateTime: CharacteristicValue, Equatable, CustomStringConvertible {
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

  public static let decoder = CharacteristicDecoder(uuid16: 0x2A08, key: "date_time", DateTime.self)

  /// `date_time` text, then the parts (JSON; text only with -v).
  public func writeFields(to fields: inout FieldList, context: ValueContext) {
    fields.add("date_time", "Date and time", .text(description))
    fields.addVerbose("year", "Year", .unsigned(UInt64(year), .decimal))
    fields.addVerbose("month", "Month", .unsigned(UInt64(month), .decimal))
    fields.addVerbose("day", "Day", .unsigned(UInt64(day), .decimal))
    fields.addVerbose("hours", "Hours", .unsigned(UInt64(hours), .decimal))
    fields.addVerbose("minutes", "Minutes", .unsigned(UInt64(minutes), .decimal))
    fields.addVerbose("seconds", "Seconds", .unsigned(UInt64(seconds), .decimal))
  }

  public func summarize(into summary: inout SummaryLine, context: ValueContext) {
    summary.append(.string(description))
  }

  /// Also the warnings of a time stamp inside another value (health measurements).
  public func diagnose(into diagnostics: inout [Diagnostic], context: ValueContext) {
    for problem in problems { ProfileSupport.add(.profileInvalidValue, &diagnostics, "date and time: " + problem) }
  }
}

/// Day of Week 0x2A09: 1 Monday … 7 Sunday, 0 unknown.
public struct DayOfWeek: CharacteristicValue, Equatable {
  public var rawValue: UInt8

  public init(rawValue: UInt8) { self.rawValue = rawValue }

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    rawValue = try reader.readUInt8()
  }

  /// The day's name ("Unknown" for 0), nil when reserved (8–255).
  public var name: Name? { Self.name(rawValue) }

  public static func name(_ day: UInt8) -> Name? {
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

  public static let decoder = CharacteristicDecoder(uuid16: 0x2A09, key: "day_of_week", DayOfWeek.self)

  public func writeFields(to fields: inout FieldList, context: ValueContext) {
    fields.code("day_of_week", "Day of week", rawValue, width: 2, name: name)
  }

  public func summarize(into summary: inout SummaryLine, context: ValueContext) {
    summary.append(.text(name ?? "reserved day"))
  }

  public func diagnose(into diagnostics: inout [Diagnostic], context: ValueContext) {
    if name == nil { ProfileSupport.add(.profileReservedValue, &diagnostics, "day of week \(rawValue) is reserved") }
  }
}

/// Day Date Time 0x2A0A: Date Time + day of week, 8 bytes.
public struct DayDateTime: CharacteristicValue, Equatable {
  public var dateTime: DateTime
  /// 1 Monday … 7 Sunday, 0 unknown (see `DayOfWeek`).
  public var dayOfWeek: UInt8

  public init(dateTime: DateTime, dayOfWeek: UInt8) {
    self.dateTime = dateTime
    self.dayOfWeek = dayOfWeek
  }

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    dateTime = try DateTime(parsing: &reader)
    dayOfWeek = try reader.readUInt8()
  }

  var day: DayOfWeek { DayOfWeek(rawValue: dayOfWeek) }

  public static let decoder = CharacteristicDecoder(uuid16: 0x2A0A, key: "day_date_time", DayDateTime.self)

  public func writeFields(to fields: inout FieldList, context: ValueContext) {
    dateTime.writeFields(to: &fields, context: context)
    day.writeFields(to: &fields, context: context)
  }

  /// The date, then the day's name when known ("2024-03-01 12:34:56 Friday").
  public func summarize(into summary: inout SummaryLine, context: ValueContext) {
    summary.append(.string(dateTime.description))
    if let name = day.name, dayOfWeek != 0 {
      summary.append(.text(" "))
      summary.append(.text(name))
    }
  }

  public func diagnose(into diagnostics: inout [Diagnostic], context: ValueContext) {
    day.diagnose(into: &diagnostics, context: context)
    dateTime.diagnose(into: &diagnostics, context: context)
  }
}

/// Exact Time 256 0x2A0C: Day Date Time + fractions of a second in 1/256 s, 9 bytes.
public struct ExactTime256: CharacteristicValue, Equatable {
  public var dayDateTime: DayDateTime
  public var fractions256: UInt8

  public init(dayDateTime: DayDateTime, fractions256: UInt8) {
    self.dayDateTime = dayDateTime
    self.fractions256 = fractions256
  }

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    dayDateTime = try DayDateTime(parsing: &reader)
    fractions256 = try reader.readUInt8()
  }

  public static let decoder = CharacteristicDecoder(uuid16: 0x2A0C, key: "exact_time_256", ExactTime256.self)

  public func writeFields(to fields: inout FieldList, context: ValueContext) {
    dayDateTime.writeFields(to: &fields, context: context)
    fields.measure("fractions256", "Fractions", fractions256, scale: 1.0 / 256, unit: "s")
  }

  public func summarize(into summary: inout SummaryLine, context: ValueContext) {
    dayDateTime.summarize(into: &summary, context: context)
  }

  public func diagnose(into diagnostics: inout [Diagnostic], context: ValueContext) {
    dayDateTime.diagnose(into: &diagnostics, context: context)
  }
}

/// Current Time 0x2A2B: Exact Time 256 + adjust reason, 10 bytes. Adjust reason bits: 0 manual
/// time update, 1 external reference time update, 2 time zone change, 3 DST change.
public struct CurrentTime: CharacteristicValue, Equatable {
  public var exactTime: ExactTime256
  public var adjustReason: UInt8

  public init(exactTime: ExactTime256, adjustReason: UInt8) {
    self.exactTime = exactTime
    self.adjustReason = adjustReason
  }

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

  public static let decoder = CharacteristicDecoder(uuid16: 0x2A2B, key: "current_time", CurrentTime.self)

  public func writeFields(to fields: inout FieldList, context: ValueContext) {
    exactTime.writeFields(to: &fields, context: context)
    fields.beginObject("adjust_reason", "Adjust reason")
    fields.addVerbose("bits", "Value", .unsigned(UInt64(adjustReason), .hex(2)))
    fields.flag("manual_time_update", "Manual time update", manualTimeUpdate)
    fields.flag("external_reference_time_update", "External reference time update", externalReferenceTimeUpdate)
    fields.flag("time_zone_change", "Change of time zone", timeZoneChange)
    fields.flag("dst_change", "Change of DST", dstChange)
    fields.end()
  }

  public func summarize(into summary: inout SummaryLine, context: ValueContext) {
    exactTime.summarize(into: &summary, context: context)
    if manualTimeUpdate { summary.append(.text(", manual update")) }
    if externalReferenceTimeUpdate { summary.append(.text(", external reference update")) }
    if timeZoneChange { summary.append(.text(", time zone change")) }
    if dstChange { summary.append(.text(", DST change")) }
  }

  public func diagnose(into diagnostics: inout [Diagnostic], context: ValueContext) {
    exactTime.diagnose(into: &diagnostics, context: context)
    ProfileSupport.checkReserved(UInt64(adjustReason), defined: 0x0F, width: 2, what: "Current Time adjust reason", &diagnostics)
  }
}

extension ProfileRegistry {
  /// This file's decoders: adding one here registers it.
  static let time: [CharacteristicDecoder] = [
    DateTime.decoder,
    DayOfWeek.decoder,
    DayDateTime.decoder,
    ExactTime256.decoder,
    CurrentTime.decoder,
  ]
}
