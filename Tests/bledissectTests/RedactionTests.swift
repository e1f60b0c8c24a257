import BLECapture
import BLECore
import BLEDecoder
import BLEEngine
import BLETestSupport
import Foundation
import Testing

@testable import BLEAnalysis

/// `convert --redact`: what the decoder finds in the input (addresses, names, keys) is nowhere
/// in the output's bytes, in either byte order, and the output decodes to the same frames.
@Suite struct RedactionTests {
  /// What the decoder says of a capture, frame by frame, and the originals it found.
  final class Decoded: FrameConsumer {
    var fieldDetail: FieldDetail { .all }
    /// Per frame: its kind, HCI fact, deepest layer, ATT opcode and handles, malformed or not.
    var frames: [String] = []
    var attSequence: [String] = []
    var addresses: Set<BDAddr> = []
    var names: Set<[UInt8]> = []
    var keys: Set<[UInt8]> = []
    var heartRates: [UInt8] = []

    static let keyFields: Set<String> = ["ltk", "irk", "csrk", "confirm", "random", "public_key_x", "public_key_y", "dhkey_check", "link_key", "key", "dhkey"]
    /// GAP Device Name, Device Information strings.
    static let nameCharacteristics: Set<UInt16> = [0x2A00, 0x2A24, 0x2A25, 0x2A26, 0x2A27, 0x2A28, 0x2A29]

    func consume(_ frame: inout DissectedFrame) -> Bool {
      let handles = frame.attributes.map { String($0.handle) }.joined(separator: ",")
      if let opcode = frame.attOpcode { attSequence.append("\(opcode):\(handles)") }
      frames.append("\(frame.record.kind) \(frame.hci) \(frame.deepestLayer) \(frame.attOpcode.map(String.init) ?? "-") \(handles) \(frame.malformed == nil)")
      for index in 0..<frame.fields.count {
        let field = frame.fields[index]
        switch field.value {
        case .address(let address, _): addresses.insert(address)
        case .bytes(let bytes) where Self.keyFields.contains(field.key.description) && bytes.contains(where: { $0 != 0 }): keys.insert(Array(bytes))
        case .unsigned(let value, .hex(16)) where field.key.description == "random_number" && value != 0:
          keys.insert((0..<8).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) })
        default: break
        }
      }
      for event in frame.linkEvents {
        switch event {
        case .advertisement(let fact):
          addresses.insert(fact.address)
          if let name = fact.name { names.insert(Array(name.utf8)) }
        case .connected(_, _, let peer?, _, _, _), .connectRequested(let peer?, _, _): addresses.insert(peer)
        case .identityAddress(let address, _): addresses.insert(address)
        default: break
        }
      }
      if let peer = frame.connection?.peer { addresses.insert(peer) }
      for index in frame.attributes.indices {
        let fact = frame.attributes[index]
        guard let raw = fact.rawValue, let uuid = fact.characteristic?.uuid16 else { continue }
        if Self.nameCharacteristics.contains(uuid) { names.insert(Array(frame.valueBytes(raw))) }
        if uuid == 0x2A37, let value = fact.value(as: HeartRateMeasurement.self) { heartRates.append(UInt8(clamping: value.bpm)) }
      }
      return true
    }

    static func of(_ path: String) throws -> Decoded {
      let decoded = Decoded()
      FrameStream(source: try CaptureFile.open(path: path)).run(into: decoded)
      return decoded
    }
  }

  static func output(_ name: String) -> String { NSTemporaryDirectory() + "bledissect-redact-\(UUID().uuidString)-\(name)" }

  static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
    guard !needle.isEmpty, haystack.count >= needle.count else { return false }
    for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
      if haystack[start..<(start + needle.count)].elementsEqual(needle) { return true }
    }
    return false
  }

  @Test(arguments: ["hr_strap_session.btsnoop", "encrypted_hr_session.btsnoop"], ["pcapng", "btsnoop", "pklg"])
  func nothingOriginalIsLeftAndTheFramesAreTheSame(capture: String, format: String) throws {
    let input = capturePath(capture)
    let output = Self.output("\(capture).\(format)")
    defer { unlink(output) }
    let result = runCLI(["convert", "--to", format, "--redact", input, output])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stderr.contains("redacted: "))
    #expect(!result.stderr.contains("still hold"), "the safety net found an original: \(result.stderr)")
    let original = try Decoded.of(input)
    let redacted = try Decoded.of(output)
    let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: output)))

    // The originals the decoder found in the input: there are some of each kind.
    #expect(original.addresses.count >= 3)
    if capture.hasPrefix("hr_strap") { #expect(original.names.count >= 5) }
    if capture.hasPrefix("encrypted") { #expect(original.keys.count >= 6) }
    for address in original.addresses where address.rawValue != 0 {
      let little = (0..<6).map { UInt8(truncatingIfNeeded: address.rawValue >> (8 * UInt64($0))) }
      #expect(!Self.contains(bytes, little), "address \(address) left (little-endian)")
      #expect(!Self.contains(bytes, little.reversed()), "address \(address) left (big-endian)")
    }
    for name in original.names {
      #expect(!Self.contains(bytes, name), "name \(String(decoding: name, as: UTF8.self)) left")
    }
    for key in original.keys {
      #expect(!Self.contains(bytes, key), "key \(key.map { String($0, radix: 16) }.joined()) left")
    }
    // The redacted capture's addresses are all new, of the same count (each device one pseudonym).
    #expect(redacted.addresses.isDisjoint(with: original.addresses.subtracting([BDAddr(rawValue: 0)])))
    #expect(redacted.addresses.count == original.addresses.count)
    // The same frames: kinds, HCI packets, layers, ATT opcodes and handles.
    #expect(redacted.frames == original.frames)
    #expect(redacted.attSequence == original.attSequence)
    #expect(!original.attSequence.isEmpty)
    #expect(redacted.heartRates == original.heartRates)
  }

  @Test func addressesKeepTheirType() throws {
    let output = Self.output("types.btsnoop")
    defer { unlink(output) }
    #expect(runCLI(["convert", "--to", "btsnoop", "--redact=addresses", capturePath("encrypted_hr_session.btsnoop"), output]).status == 0)
    let decoded = try Decoded.of(output)
    // The strap's random static address (top bits 11) stays random static; the public
    // identity addresses become public ones under the documentation OUI.
    let strap = decoded.addresses.filter { $0.rawValue >> 46 == 0b11 }
    #expect(!strap.isEmpty)
    let publicOnes = decoded.addresses.filter { $0.rawValue >> 24 == 0x00005E }
    #expect(publicOnes.count >= 2)
    // Only addresses were asked for: the keys are the captured ones.
    #expect(try Decoded.of(capturePath("encrypted_hr_session.btsnoop")).keys == decoded.keys)
  }

  @Test func valuesAreReplacedOnlyWhenAskedFor() throws {
    let output = Self.output("values.btsnoop")
    defer { unlink(output) }
    let result = runCLI(["convert", "--to", "btsnoop", "--redact=values", capturePath("hr_strap_session.btsnoop"), output])
    #expect(result.status == 0)
    #expect(result.stderr.contains("health values"))
    let original = try Decoded.of(capturePath("hr_strap_session.btsnoop"))
    let redacted = try Decoded.of(output)
    #expect(redacted.heartRates.count == original.heartRates.count)
    #expect(Set(redacted.heartRates) == [60])
    #expect(redacted.addresses == original.addresses)
    #expect(redacted.names == original.names)
  }

  @Test func theSameInputRedactsToTheSameBytes() throws {
    let (first, second) = (Self.output("a.pcapng"), Self.output("b.pcapng"))
    defer { unlink(first); unlink(second) }
    #expect(runCLI(["convert", "--to", "pcapng", "--redact=all", capturePath("encrypted_hr_session.btsnoop"), first]).status == 0)
    #expect(runCLI(["convert", "--to", "pcapng", "--redact=all", capturePath("encrypted_hr_session.btsnoop"), second]).status == 0)
    #expect(try Data(contentsOf: URL(fileURLWithPath: first)) == Data(contentsOf: URL(fileURLWithPath: second)))
  }

  @Test(.enabled(if: which("capinfos") != nil, "capinfos is not installed"))
  func pcapngSaysTheFileIsRedacted() throws {
    let output = Self.output("said.pcapng")
    defer { unlink(output) }
    #expect(runCLI(["convert", "--to", "pcapng", "--redact", capturePath("hr_strap_session.btsnoop"), output]).status == 0)
    let (status, info) = try runTool(which("capinfos")!, ["-k", output])
    #expect(status == 0)
    #expect(String(decoding: info, as: UTF8.self).contains("Capture comment:     Redacted by bledissect convert --redact=addresses,names,keys"))
  }

  // MARK: Air captures

  static let airCaptures = ["bsniffhub_connection_update_dlt256.pcap", "bsniffhub_sc_justworks_fragments_dlt256.pcap", "diy_sensor_adv_dlt272.pcapng"]

  /// The stored CRC of each air packet, and whether it is right: advertising packets by
  /// 0x555555, a link's by the CRCInit of the CONNECT_IND that opened it.
  static func crcChecks(_ path: String) throws -> [Bool?] {
    let reader = try CaptureFile.open(path: path)
    var crcInit: [UInt32: UInt32] = [:]
    var checks: [Bool?] = []
    while let record = try reader.next() {
      let bytes = record.bytes
      guard record.kind == .airPacket, bytes.count >= 6 + 4 + 2 + 3 else {
        checks.append(nil)
        continue
      }
      let header = ByteReader.reading(bytes, layer: .linkLayer) { reader in try? AirPacketHeader(parsing: &reader) }
      let start = 6 + 4 + (header?.phy == .leCoded ? 1 : 0)
      let accessAddress = UInt32(bytes[6]) | UInt32(bytes[7]) << 8 | UInt32(bytes[8]) << 16 | UInt32(bytes[9]) << 24
      let end = start + 2 + Int(bytes[start + 1])
      guard end + 3 <= bytes.count else {
        checks.append(nil)
        continue
      }
      let pdu = bytes[start..<end]
      let stored = UInt32(bytes[end]) | UInt32(bytes[end + 1]) << 8 | UInt32(bytes[end + 2]) << 16
      if accessAddress == 0x8E89_BED6, bytes[start] & 0x0F == 5, pdu.count >= 2 + 12 + 7 {
        let llData = start + 2 + 12
        let link = UInt32(bytes[llData]) | UInt32(bytes[llData + 1]) << 8 | UInt32(bytes[llData + 2]) << 16 | UInt32(bytes[llData + 3]) << 24
        crcInit[link] = UInt32(bytes[llData + 4]) | UInt32(bytes[llData + 5]) << 8 | UInt32(bytes[llData + 6]) << 16
      }
      let initial = accessAddress == 0x8E89_BED6 ? 0x55_5555 : crcInit[accessAddress]
      checks.append(initial.map { LinkLayerCRC.crc(crcInit: $0, pdu) == stored })
    }
    return checks
  }

  @Test(.enabled(if: corpusRoot != nil, "../shared/corpus is absent"), arguments: airCaptures)
  func airCapturesDecodeTheSameWithTheirCRCsRight(capture: String) throws {
    let input = try #require(corpusRoot).appendingPathComponent("ll_sniffer/\(capture)").path
    let (plain, output) = (Self.output("\(capture).plain.pcap"), Self.output("\(capture).pcap"))
    defer { unlink(plain); unlink(output) }
    // The same format both ways (a Nordic capture's header is not link type 256's).
    #expect(runCLI(["convert", "--to", "pcap-ll-phdr", input, plain]).status == 0)
    let result = runCLI(["convert", "--to", "pcap-ll-phdr", "--redact", input, output])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(!result.stderr.contains("left out"))
    let original = try Decoded.of(plain)
    let redacted = try Decoded.of(output)
    #expect(redacted.frames == original.frames)
    #expect(redacted.attSequence == original.attSequence)
    #expect(original.addresses.count >= 2)
    #expect(redacted.addresses.isDisjoint(with: original.addresses))
    // Every CRC that was right is right, and the packets were changed.
    let before = try Self.crcChecks(plain)
    let after = try Self.crcChecks(output)
    #expect(after == before)
    #expect(before.contains(true))
    #expect(!before.contains(false))
    let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: output)))
    for name in original.names { #expect(!Self.contains(bytes, name)) }
  }

  @Test(.enabled(if: corpusRoot != nil && which("tshark") != nil, "../shared/corpus or tshark is absent"))
  func wiresharkFindsTheRedactedCRCsRight() throws {
    let input = try #require(corpusRoot).appendingPathComponent("ll_sniffer/bsniffhub_sc_justworks_fragments_dlt256.pcap").path
    let output = Self.output("wireshark.pcap")
    defer { unlink(output) }
    #expect(runCLI(["convert", "--to", "pcap-ll", "--redact", input, output]).status == 0)
    let (status, data) = try runTool(which("tshark")!, ["-r", output, "-T", "fields", "-e", "btle.crc", "-e", "btle.crc.incorrect"])
    #expect(status == 0)
    let lines = String(decoding: data, as: UTF8.self).split(separator: "\n")
    #expect(lines.count == 374)
    // Every packet's CRC was checked (tshark knows the links' CRCInit), none is wrong.
    #expect(lines.allSatisfy { !$0.hasPrefix("\t") && !$0.contains("\t1") })
  }

  // MARK: Units

  @Test func theLinkLayerCRCIsLinear() {
    var random = SeededGenerator(seed: 29)
    for _ in 0..<50 {
      let old = (0..<Int.random(in: 2...40, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
      var new = old
      for _ in 0..<3 { new[Int.random(in: 0..<new.count, using: &random)] = UInt8.random(in: 0...255, using: &random) }
      let crcInit = UInt32.random(in: 0...0xFF_FFFF, using: &random)
      #expect(LinkLayerCRC.updated(LinkLayerCRC.crc(crcInit: crcInit, old), old: old[...], new: new[...]) == LinkLayerCRC.crc(crcInit: crcInit, new))
    }
    // An ADV_IND of the corpus (bsniffhub_connection_update): its stored CRC.
    let pdu = hexBytes("0016388b4a03ee040c0950616972696e6754657374020106")
    #expect(LinkLayerCRC.crc(crcInit: 0x55_5555, pdu) == 0x46_2735)
  }

  @Test func pseudonymsAreConsistentAndKeepTheSubType() {
    var pseudonyms = Pseudonyms()
    let staticAddress: UInt64 = 0xD0B1_ED00_4852
    let resolvable: UInt64 = 0x4A11_2233_4455
    let nonResolvable: UInt64 = 0x1A11_2233_4455
    let first = pseudonyms.pseudonym(for: staticAddress, kind: .random)
    #expect(pseudonyms.pseudonym(for: staticAddress, kind: .random) == first)
    #expect(first != staticAddress && first >> 46 == 0b11)
    #expect(pseudonyms.pseudonym(for: resolvable, kind: .random) >> 46 == 0b01)
    #expect(pseudonyms.pseudonym(for: nonResolvable, kind: .random) >> 46 == 0b00)
    #expect(pseudonyms.pseudonym(for: 0x0011_2233_4455, kind: .publicAddress) == 0x0000_5E00_5300)
    #expect(pseudonyms.pseudonym(for: 0x0011_2233_4456, kind: .publicAddress) == 0x0000_5E00_5301)
    // Names: as long as the original, the same for the same, a shortened name a prefix.
    let long = pseudonyms.placeholder(for: Array("Polar H10 12345678".utf8), label: NameLabel.device)
    #expect(long.count == 18 && String(decoding: long, as: UTF8.self) == "Device1xxxxxxxxxxx")
    #expect(pseudonyms.placeholder(for: Array("Polar H10 12345678".utf8), label: NameLabel.device) == long)
    #expect(pseudonyms.placeholder(for: Array("Polar H10".utf8), label: NameLabel.device) == Array(long.prefix(9)))
    #expect(String(decoding: pseudonyms.placeholder(for: Array("Other".utf8), label: NameLabel.device), as: UTF8.self) == "Devic")
    // Keys: another value of the same length, the same each time; zeros stay zeros (not a key).
    let key = Array(repeating: UInt8(0x42), count: 16)
    let replaced = pseudonyms.replacement(for: key)
    #expect(replaced.count == 16 && replaced != key && pseudonyms.replacement(for: key) == replaced)
    let passkey = pseudonyms.passkey(for: [0x40, 0xE2, 0x01, 0x00])
    #expect(passkey != [0x40, 0xE2, 0x01, 0x00])
    let digits: UInt32 = UInt32(passkey[0]) | UInt32(passkey[1]) << 8 | UInt32(passkey[2]) << 16 | UInt32(passkey[3]) << 24
    #expect(digits < 1_000_000)
  }

  /// Hand-made HCI packets: each place an address, a name or a key goes is replaced; a packet
  /// cut short is redacted as far as it goes; what is no secret stays.
  @Test func hciParametersAreFoundByOpcode() {
    var scope = RedactionScope(kinds: .all)
    // LE Create Connection to D0:B1:ED:00:48:52 (random).
    let create = hexBytes("0d2019 6000 3000 00 01 524800edb1d0 00 1800 2800 0000 2a00 0000 0000")
    var edits = scope.walk(create, limit: create.count, .command)
    #expect(edits.map(\.offset) == [9])
    #expect(edits[0].bytes.count == 6 && edits[0].bytes[5] >> 6 == 0b11)
    // The same address in an LE Connection Complete gets the same pseudonym.
    let complete = hexBytes("3e13 01 00 0100 00 01 524800edb1d0 2800 0000 f401 00")
    let again = scope.walk(complete, limit: complete.count, .event)
    #expect(again.map(\.offset) == [8] && again[0].bytes == edits[0].bytes)
    // LE Long Term Key Request Reply: the LTK; cut after 10 of its 16 bytes: those 10 replaced.
    let reply = hexBytes("1a2012 0100 00112233445566778899aabbccddeeff")
    edits = scope.walk(reply + [UInt8](repeating: 0, count: 0), limit: 15, .command)
    #expect(edits.map(\.offset) == [5] && edits[0].bytes.count == 10)
    // Write Local Name: up to the NUL, the padding stays.
    let name = hexBytes("130cf8") + Array("Kitchen".utf8) + [UInt8](repeating: 0, count: 241)
    edits = scope.walk(name, limit: name.count, .command)
    #expect(edits.count == 1 && edits[0].offset == 3 && edits[0].bytes.count == 7)
    // Reset has nothing to hide.
    #expect(scope.walk(hexBytes("030c00"), limit: 3, .command).isEmpty)
    #expect(scope.tally.addresses == 2 && scope.tally.distinctAddresses == 1 && scope.tally.keys == 1 && scope.tally.names == 1)
  }

  // MARK: Comments and convert's messages

  /// `-1 --check`'s lines, less the frame number and time.
  static func headerLines(_ path: String) -> [String] {
    runCLI(["-1", "--check", "--empty", path]).stdout.split(separator: "\n").map { line in
      var words = line.drop { $0 != " " }.drop { $0 == " " }
      words = words.drop { $0 != " " }.dropFirst()
      return String(words)
    }
  }

  static func tsharkComments(_ path: String) throws -> [String] {
    let (status, data) = try runTool(which("tshark")!, ["-r", path, "-T", "fields", "-e", "frame.comment"])
    #expect(status == 0)
    return String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
  }

  @Test(.enabled(if: which("tshark") != nil, "tshark is not installed"), arguments: ["hr_strap_session.btsnoop", "check/att_01.btsnoop"])
  func wiresharkShowsEachFramesHeaderLine(capture: String) throws {
    let output = Self.output("comments.pcapng")
    defer { unlink(output) }
    let result = runCLI(["convert", "--to", "pcapng", "--comments", capturePath(capture), output])
    #expect(result.status == 0 && result.stderr.isEmpty)
    let comments = try Self.tsharkComments(output)
    let lines = Self.headerLines(capturePath(capture))
    #expect(comments.count == lines.count && !lines.isEmpty)
    var findings = 0
    for (comment, line) in zip(comments, lines) {
      // tshark writes a comment's line breaks as \n.
      let parts = comment.components(separatedBy: "\\n")
      #expect(parts[0] == line)
      #expect(!comment.contains("\u{1B}"))
      for finding in parts.dropFirst() {
        #expect(finding.hasPrefix("check: ") && line.contains("[! " + finding.dropFirst(7).prefix { $0 != " " } + "]"))
        findings += 1
      }
    }
    #expect(capture.hasPrefix("check/") ? findings > 0 : findings == 0)
  }

  @Test(.enabled(if: which("tshark") != nil, "tshark is not installed"))
  func redactedCommentsTellWhatTheFileHolds() throws {
    let output = Self.output("both.pcapng")
    defer { unlink(output) }
    #expect(runCLI(["convert", "--to", "pcapng", "--comments", "--redact", capturePath("hr_strap_session.btsnoop"), output]).status == 0)
    let comments = try Self.tsharkComments(output)
    #expect(comments == Self.headerLines(output))
    let text = comments.joined(separator: "\n")
    #expect(!text.contains("D0:B1:ED:00:48:52") && !text.contains("bledissect HR") && !text.contains("0001-2025"))
    #expect(text.contains(": Device1xxxxxx — Device Name"))  // -1 words: the value (a same-length placeholder), then the name
  }

  @Test func convertSaysWhatItCannotDo() throws {
    let output = Self.output("refused.btsnoop")
    defer { unlink(output) }
    let listed = runCLI(["convert", "--to", "foo", "a", "b"])
    #expect(listed.status == 64)
    #expect(listed.stderr.contains("unknown format 'foo'; the formats: btsnoop, btsnoop-h1,") && listed.stderr.contains("pcapng-ppi"))
    #expect(runCLI(["convert", "--to", "pcap", "--comments", "a", "b"]).stderr.contains("--comments needs a pcapng format"))
    #expect(runCLI(["convert", "--to", "pcap", "--redact=keys,bogus", "a", "b"]).stderr.contains("not 'bogus'"))
    // `--redact` alone does not take the next word as its value.
    let alone = runCLI(["convert", "--redact", "--to", "btsnoop", capturePath("hr_strap_session.btsnoop"), output])
    #expect(alone.status == 0 && alone.stderr.contains("redacted: 6 addresses"))
    if let corpusRoot {
      // Air packets into an HCI format: nothing written, status 1, a format that carries them.
      unlink(output)
      let air = corpusRoot.appendingPathComponent("ll_sniffer/diy_sensor_adv_dlt272.pcapng").path
      let result = runCLI(["convert", "--to", "btsnoop", air, output])
      #expect(result.status == 1)
      #expect(result.stderr == "bledissect: none of the 13 records can be carried by btsnoop: nothing written; --to pcapng-ll-phdr (or another of the -ll, -nordic, -user10, -ppi formats) carries them\n")
      #expect(!FileManager.default.fileExists(atPath: output))
    }
    // HCI records into an air format: the same, the other way.
    let hci = runCLI(["convert", "--to", "pcap-ll", capturePath("hr_strap_session.btsnoop"), output])
    #expect(hci.status == 1 && hci.stderr.contains("--to pcapng (or btsnoop-monitor, pklg) carries them"))
  }

  // MARK: Hostile input

  /// Seeded damage inside the records of real captures (HCI and air): the redactor never
  /// traps, every record comes out once unless counted as left out, with its kind, time and
  /// length, and what it holds back is let go at the end.
  @Test(arguments: ["encrypted_hr_session.btsnoop", "long_values_peripheral.btsnoop", "eatt.btsnoop", "le_coc.btsnoop", "air_ll_phdr.pcapng", "air_nordic.pcap"])
  func damagedRecordsRedactWithoutTrapping(name: String) throws {
    let records = try ScenarioTests.readRecords(capturePath(name))
    var generator = SeededGenerator(seed: 0x2029 &+ UInt64(name.utf8.count))
    for round in 0..<25 {
      var dissector = Dissector()
      var frame = DissectedFrame()
      var redactor = CaptureRedactor(kinds: .all)
      var out: [CaptureRecord] = []
      var input: [CaptureRecord] = []
      for (index, original) in records.enumerated() {
        var record = original
        if !record.bytes.isEmpty, Int.random(in: 0..<3, using: &generator) == 0 {
          for _ in 0..<Int.random(in: 1...4, using: &generator) {
            record.bytes[Int.random(in: 0..<record.bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
          }
          if Int.random(in: 0..<6, using: &generator) == 0 {
            record.bytes = Array(record.bytes.prefix(Int.random(in: 0..<record.bytes.count, using: &generator)))
          }
        }
        input.append(record)
        dissector.dissect(record, number: index + 1, into: &frame)
        redactor.redact(&frame)
        out += redactor.takeReady()
      }
      redactor.finish()
      out += redactor.takeReady()
      #expect(out.count + redactor.tally.dropped == input.count, "round \(round) of \(name)")
      var next = 0
      for record in input where next < out.count {
        if out[next].kind == record.kind && out[next].timestamp == record.timestamp && out[next].bytes.count == record.bytes.count { next += 1 }
      }
      #expect(next == out.count, "round \(round) of \(name): a record changed kind, time or length")
      #expect(redactor.queue.isEmpty && redactor.assemblies.isEmpty)
    }
  }

  /// Every sample capture: redacted, it decodes to the same frames (kinds, HCI packets, layers,
  /// ATT opcodes and handles, malformed or not), unless records were left out (said on stderr).
  @Test func everySampleCaptureDecodesTheSame() throws {
    let folder = repositoryRoot.appendingPathComponent("captures")
    let names = try FileManager.default.subpathsOfDirectory(atPath: folder.path).filter {
      [".btsnoop", ".pcap", ".pcapng", ".pklg", ".gz"].contains(where: $0.hasSuffix)
    }.sorted()
    #expect(names.count > 30)
    var compared = 0
    for name in names {
      let input = folder.appendingPathComponent(name).path
      let (plain, output) = (Self.output("plain.pcapng"), Self.output("every.pcapng"))
      defer { unlink(plain); unlink(output) }
      // HCI records to pcapng, air packets to link type 256: the same format both ways.
      var format = "pcapng"
      var converted = runCLI(["convert", "--to", format, input, plain])
      if converted.status == 1 && converted.stderr.contains("none of the") {
        format = "pcapng-ll-phdr"
        converted = runCLI(["convert", "--to", format, input, plain])
      }
      guard converted.status == 0 else { continue }  // a damaged sample
      var result = runCLI(["convert", "--to", format, "--redact=all", input, output])
      #expect(result.status == 0, "\(name)")
      if result.stderr.contains("link-layer payload") {
        // Links the decoder opened with the pairing it sniffed stay closed once addresses and
        // keys are replaced: names and values alone keep them open.
        result = runCLI(["convert", "--to", format, "--redact=names,values", input, output])
        #expect(result.stderr.contains("not redacted") == result.stderr.contains("opened here"), "\(name)")
      }
      if result.stderr.contains("left out") { continue }
      #expect(try Decoded.of(output).frames == Decoded.of(plain).frames, "\(name): \(result.stderr)")
      compared += 1
    }
    #expect(compared > 30)
  }
}

