import BLECore
import Foundation
import BLETestSupport
import Testing

@testable import BLEDecoder

/// Decoders written by users (`--decoders FILE`, docs/decoders.md): the built-in Heart Rate
/// Measurement and Battery Level expressed in the format decode exactly as the built-in ones;
/// every type reads what it says; bad files are refused with file, line and field.
@Suite struct UserDecoderTests {
  static let examplePath = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("docs/examples/heart-rate.decoders.json").path

  static func example() throws -> [UserDecoder] {
    try DecoderFile.parse(try String(contentsOfFile: examplePath, encoding: .utf8), file: "heart-rate.decoders.json")
  }

  static func declared(_ format: DeclaredFormat, _ bytes: [UInt8]) throws(DecodeError) -> DeclaredValue {
    try ByteReader.reading(bytes, layer: .profile) { (reader: inout ByteReader) throws(DecodeError) -> DeclaredValue in
      let value = try format.parse(&reader)
      try ProfileSupport.requireEnd(reader, start: 0)
      return value
    }
  }

  static func contactWord(_ contact: HeartRateMeasurement.SensorContact) -> String {
    switch contact {
    case .unsupported: return "unsupported"
    case .notDetected: return "not_detected"
    case .detected: return "detected"
    }
  }

  @Test func heartRateMeasurementDeclaredMatchesTheBuiltInForEveryFlagCombination() throws {
    let format = try #require(try Self.example().first { $0.target == .uuid(BluetoothUUID(uuid16: 0x2A37)) }?.format)
    var random = SeededGenerator(seed: 0x2A37)
    var compared = 0
    for flags in 0...0x1F {
      for round in 0..<20 {
        var bytes: [UInt8] = [UInt8(flags)]
        bytes += flags & 1 == 0 ? [UInt8(truncatingIfNeeded: random.next())] : [UInt8(truncatingIfNeeded: random.next()), UInt8(truncatingIfNeeded: random.next())]
        if flags & 0x08 != 0 { bytes += [UInt8(truncatingIfNeeded: random.next()), UInt8(truncatingIfNeeded: random.next())] }
        if flags & 0x10 != 0 {
          for _ in 0..<(round % 5) { bytes += [UInt8(truncatingIfNeeded: random.next()), UInt8(truncatingIfNeeded: random.next())] }
        }
        // Sometimes one byte short, or one too many: both must refuse it alike.
        if round == 18 { bytes.removeLast() }
        if round == 19 && flags & 0x10 == 0 { bytes.append(0xAB) }
        let builtIn = try? HeartRateMeasurement(bytes: bytes)
        let mine = try? Self.declared(format, bytes)
        #expect((builtIn == nil) == (mine == nil), "\(Hex.string(bytes))")
        guard let builtIn, let mine else { continue }
        #expect(mine.numbers("bpm") == [Double(builtIn.bpm)], "\(Hex.string(bytes))")
        #expect(mine.word("sensor_contact") == Self.contactWord(builtIn.sensorContact), "\(Hex.string(bytes))")
        #expect(mine.numbers("energy_expended") == (builtIn.energyExpended.map { [Double($0)] } ?? []), "\(Hex.string(bytes))")
        #expect(mine.numbers("rr_intervals") == builtIn.rrIntervals.map(HeartRateMeasurement.milliseconds), "\(Hex.string(bytes))")
        compared += 1
      }
    }
    // 32 flag bytes × 20 values, less those both refused (short, long, a flag promising RR without one).
    #expect(compared >= 500)
  }

  @Test func batteryLevelDeclaredMatchesTheBuiltIn() throws {
    let format = try #require(try Self.example().first { $0.target == .uuid(BluetoothUUID(uuid16: 0x2A19)) }?.format)
    for byte in 0...255 {
      let builtIn = try BatteryLevel(bytes: [UInt8(byte)])
      let mine = try Self.declared(format, [UInt8(byte)])
      #expect(mine.numbers("percent") == [Double(builtIn.percent)])
    }
    #expect((try? Self.declared(format, [])) == nil)
    #expect((try? Self.declared(format, [1, 2])) == nil)
  }

  static func single(_ fields: String) throws -> DeclaredFormat {
    let text = #"{"format":"bledissect-decoders","version":1,"decoders":[{"uuid":"1234","name":"Test","fields":["# + fields + "]}]}"
    return try #require(try DecoderFile.parse(text, file: "t.json").first?.format)
  }

  @Test func everyTypeReadsWhatItSays() throws {
    let integers = try Self.single(#"""
      {"name":"a","type":"u24"},{"name":"b","type":"s16"},{"name":"c","type":"u32be"},{"name":"d","type":"s8"},
      {"name":"e","type":"u64"},{"name":"f","type":"s24be"}
      """#)
    let value = try Self.declared(integers, [0x01, 0x02, 0x03, 0xFE, 0xFF, 0x12, 0x34, 0x56, 0x78, 0x80, 1, 0, 0, 0, 0, 0, 0, 0x80, 0xFF, 0xFF, 0xFE])
    #expect(value.numbers("a") == [0x030201])
    #expect(value.numbers("b") == [-2])
    #expect(value.numbers("c") == [0x1234_5678])
    #expect(value.numbers("d") == [-128])
    #expect(value.numbers("e") == [Double(UInt64(0x8000_0000_0000_0001))])
    #expect(value.numbers("f") == [-2])
    // IEEE-11073 SFLOAT 36.6 (mantissa 366, exponent -1) and FLOAT 98.6; IEEE 754 float 1.5.
    let reals = try Self.single(#"{"name":"t","type":"sfloat"},{"name":"u","type":"float"},{"name":"v","type":"f32"},{"name":"w","type":"f64"}"#)
    let sfloat: [UInt8] = [0x6E, 0xF1]
    let float: [UInt8] = [0xDA, 0x03, 0x00, 0xFF]
    let f32 = withUnsafeBytes(of: Float(1.5).bitPattern.littleEndian, Array.init)
    let f64 = withUnsafeBytes(of: Double(-2.25).bitPattern.littleEndian, Array.init)
    let parsed = try Self.declared(reals, sfloat + float + f32 + f64)
    #expect(parsed.numbers("t") == [36.6] && parsed.numbers("u") == [98.6] && parsed.numbers("v") == [1.5] && parsed.numbers("w") == [-2.25])
    // Text of a fixed length, then the rest as bytes; scale and offset; names.
    let mixed = try Self.single(#"""
      {"name":"id","type":"utf8","length":3},{"name":"kind","type":"u8","enum":{"1":"one","0x02":"two"}},
      {"name":"celsius","type":"s16","scale":0.01,"offset":-1},{"name":"rest","type":"bytes"}
      """#)
    let decoded = try Self.declared(mixed, Array("ABC".utf8) + [2, 0x10, 0x27, 9, 8])
    #expect(decoded.word("id") == "ABC" && decoded.word("kind") == "two" && decoded.numbers("celsius") == [99])
    #expect(decoded.items.last?.value == .bytes([9, 8]))
  }

  static func refusal(_ text: String) -> String {
    do {
      _ = try DecoderFile.parse(text, file: "mine.json")
      return "accepted"
    } catch {
      return error.message
    }
  }

  @Test func badFilesAreRefusedWithFileLineAndField() {
    #expect(Self.refusal("{\n  \"format\": \"bledissect-decoders\",\n  \"version\": 1,\n  \"decoders\": [\n    {\"uuid\": \"2a37\" \"name\": \"x\"}\n  ]\n}")
      == "mine.json:5:21: expected ',' or '}'")
    let unknownType = """
      {"format": "bledissect-decoders", "version": 1, "decoders": [
        {"uuid": "2a37", "fields": [
          {"name": "flags", "type": "u8"},
          {"name": "bpm", "type": "u17"}
        ]}
      ]}
      """
    #expect(Self.refusal(unknownType).hasPrefix("mine.json:4: decoders[0].fields[1].type: unknown type 'u17'"))
    let laterField = """
      {"format": "bledissect-decoders", "version": 1, "decoders": [
        {"uuid": "2a37", "fields": [
          {"name": "bpm", "type": "u8", "if": {"field": "flags", "mask": 1}},
          {"name": "flags", "type": "u8"}
        ]}
      ]}
      """
    #expect(Self.refusal(laterField).hasPrefix("mine.json:3: decoders[0].fields[0].if.field:"))
    #expect(Self.refusal(#"{"format": "bledissect-decoders", "version": 1, "decoders": [{"handle": 70000, "fields": [{"name": "a", "type": "u8"}]}]}"#)
      == "mine.json:1: decoders[0].handle: needs a handle, 1–65535")
    #expect(Self.refusal(#"{"format": "something", "version": 1, "decoders": []}"#) == #"mine.json:1: format: needs to be "bledissect-decoders""#)
    #expect(Self.refusal(#"{"format": "bledissect-decoders", "version": 1, "decoders": [{"uuid": "2a37", "fields": [{"name": "Bad Name", "type": "u8"}]}]}"#)
      .contains("decoders[0].fields[0].name: 'Bad Name' is not a JSON key"))
    #expect(Self.refusal(#"{"format": "bledissect-decoders", "version": 1, "decoders": [{"uuid": "2a37", "fields": [{"name": "a", "type": "u8", "colour": 1}]}]}"#)
      .contains("decoders[0].fields[0].colour: unknown key"))
    #expect(Self.refusal(#"{"format": "bledissect-decoders", "version": 1, "decoders": [{"uuid": "2a37", "fields": []}]}"#)
      .contains("decoders[0].fields: needs a list of at least one field"))
  }

  @Test func internedNamesRoundTrip() throws {
    let text = try #require(NameTable.intern("température_°C"))
    #expect(text.description == "température_°C" && text.staticString == nil && text.utf8CodeUnitCount == 16)
    #expect(text.withUTF8 { Array($0) } == Array("température_°C".utf8))
    let ascii = try #require(NameTable.intern("bpm"))
    #expect(ascii.description == "bpm" && ascii.utf8CodeUnitCount == 3 && !ascii.isEmpty)
    // The same text, interned or literal, is the same name.
    #expect(ascii == "bpm" && ascii != text && Name("bpm") == ascii)
    #expect(NameTable.intern("") == nil)
  }

  @Test func aHandleDecoderWorksLikeDecodeAs() throws {
    let text = #"{"format":"bledissect-decoders","version":1,"decoders":[{"handle":16,"name":"Strap Rate","key":"strap","fields":[{"name":"flags","type":"u8","hidden":true},{"name":"bpm","type":"u8"}]}]}"#
    var registry = DecoderRegistry.standard
    for decoder in try DecoderFile.parse(text, file: "t.json") { registry.register(decoder) }
    let override = try #require(registry.handleOverride(16, peer: nil))
    let index = try #require(registry.index(for: override))
    #expect(registry.declaredFormat(decoder: index)?.name.description == "Strap Rate")
    // Read through the registry, which holds the format; the decoder alone has only its place.
    #expect(registry[decoder: index].declaredFormat == registry.declaredFormats.count - 1)
    let decoded = registry.decode([0x00, 72], decoder: index)
    #expect((decoded.value as? DeclaredValue)?.numbers("bpm") == [72] && decoded.error == nil)
    #expect(registry[decoder: index].decode([0x00, 72]).value == nil)
  }

  /// A declared Heart Rate Measurement replaces the built-in decoder for what is shown; the
  /// built-in value is still read beside it, and a fact asked for a `HeartRateMeasurement`
  /// (what summary and hr ask) gets it. A handle decoder (a UUID of its own) replaces nothing.
  @Test func aDeclaredStandardCharacteristicKeepsTheBuiltInValue() throws {
    var registry = DecoderRegistry.standard
    for decoder in try Self.example() { registry.register(decoder) }
    let index = try #require(registry.index(for: BluetoothUUID(uuid16: 0x2A37)))
    #expect(registry[decoder: index].builtInType == HeartRateMeasurement.self)
    let bytes: [UInt8] = [0x16, 74, 0x3E, 0x03]
    let decoded = registry.decode(bytes, decoder: index)
    let declared = try #require(decoded.value as? DeclaredValue)
    #expect(declared.numbers("bpm") == [74] && decoded.error == nil)
    #expect(declared.builtInValue(as: HeartRateMeasurement.self) == (try HeartRateMeasurement(bytes: bytes)))
    var fact = AttributeFact(handle: 0x10, operation: .notification)
    fact.setValue(declared)
    #expect(fact.value(as: HeartRateMeasurement.self)?.bpm == 74)
    #expect(fact.value(as: DeclaredValue.self)?.numbers("bpm") == [74])
    #expect(fact.value(as: BatteryLevel.self) == nil)
    // The same format registered twice still knows the built-in type.
    for decoder in try Self.example() { registry.register(decoder) }
    #expect(registry[decoder: index].builtInType == HeartRateMeasurement.self)
    // A value the declared format refuses (a flag promising energy the bytes lack) is
    // malformed; one the built-in decoder refuses too has no built-in value.
    let short = registry.decode([0x08, 74], decoder: index)
    #expect(short.error != nil && short.value == nil)
  }
}
