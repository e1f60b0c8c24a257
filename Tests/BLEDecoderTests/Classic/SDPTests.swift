import Testing
import BLECore
import BLERender
@testable import BLEDecoder

/// SDP (Core Vol 3 Part B §4) on a BR/EDR channel for PSM 0x0001: every PDU, the data element
/// types, attribute and UUID names, continuation joined, and hostile or broken input.
@Suite struct SDPTests {
  typealias S = SDPBytes
  let tx = Direction.hostToController
  let rx = Direction.controllerToHost
  static let handle: UInt16 = 0x000B
  static let peer = "00:1A:7D:DA:71:02"

  /// A link with an SDP channel: requests go to CID 0x0041, responses come to 0x0040.
  func sdpLink() -> LinkTranscript {
    var t = LinkTranscript()
    _ = t.connectClassic(handle: Self.handle, peer: Self.peer)
    t.openChannel(handle: Self.handle, psm: 0x0001, local: 0x0040, remote: 0x0041, identifier: 1)
    return t
  }

  func request(_ t: inout LinkTranscript, _ pdu: [UInt8]) -> DissectedFrame { t.l2cap(handle: Self.handle, tx, cid: 0x0041, pdu) }
  func response(_ t: inout LinkTranscript, _ pdu: [UInt8]) -> DissectedFrame { t.l2cap(handle: Self.handle, rx, cid: 0x0040, pdu) }

  func sdpFact(_ frame: DissectedFrame) -> SDPFact? {
    if case .sdp(let fact) = frame.header { return fact }
    return nil
  }

  @Test func serviceSearchRequestAndResponse() {
    var t = sdpLink()
    let ask = request(&t, S.pdu(0x02, transaction: 0x0001, S.sequence(S.uuid16(0x1101)) + S.be(16, 2) + S.continuation()))
    #expect(ask.titleText == "Service Search Request")
    #expect(ask.summaryText == "Serial Port")
    #expect(ask.deepestLayer == .sdp)
    #expect(ask.fields.uint("sdp.transaction") == 1)
    #expect(ask.fields.uint("sdp.parameter_length") == 8)
    #expect(ask.fields.text("sdp.service_search_pattern.0.uuid") == "1101")
    #expect(ask.fields.name("sdp.service_search_pattern.0.uuid") == "Serial Port")
    #expect(ask.fields.uint("sdp.max_record_count") == 16)
    if case .null? = ask.fields.value("sdp.continuation") {} else { Issue.record("continuation is not null") }
    #expect(sdpFact(ask)?.detail == .search(pattern: [BluetoothUUID(uuid16: 0x1101)], attributes: nil))

    let found = response(&t, S.pdu(0x03, transaction: 0x0001, S.be(2, 2) + S.be(2, 2) + S.be(0x0001_0000, 4) + S.be(0x0001_0001, 4) + S.continuation()))
    #expect(found.titleText == "Service Search Response")
    #expect(found.summaryText == "2 records: 0x00010000, 0x00010001")
    #expect(found.fields.uint("sdp.total_count") == 2)
    #expect(found.fields.uint("sdp.current_count") == 2)
    #expect(found.fields.uint("sdp.record_handles.1") == 0x0001_0001)
    #expect(found.fields.uint("sdp.request_frame") == UInt64(ask.number))
    #expect(found.diagnostics.isEmpty)

    // The handle was found by Serial Port: a Service Attribute Request for it names that
    // profile's attributes, and its response's records too.
    let attributes = request(&t, S.pdu(0x04, transaction: 0x0002, S.be(0x0001_0001, 4) + S.be(0x0200, 2) + S.sequence(S.uint32(0x0000_FFFF)) + S.continuation()))
    #expect(attributes.titleText == "Service Attribute Request")
    #expect(attributes.summaryText == "record 0x00010001; all attributes")
    #expect(attributes.fields.uint("sdp.record_handle") == 0x0001_0001)
    #expect(attributes.fields.uint("sdp.attribute_ids.0.range_start") == 0)
    #expect(attributes.fields.uint("sdp.attribute_ids.0.range_end") == 0xFFFF)
    #expect(attributes.fields.name("sdp.attribute_ids.0.range_start") == "ServiceRecordHandle")

    let record = response(&t, S.pdu(0x05, transaction: 0x0002, { let list = S.serialPortRecord(handle: 0x0001_0001, channel: 2, name: "COM1"); return S.be(UInt64(list.count), 2) + list + S.continuation() }()))
    #expect(record.titleText == "Service Attribute Response")
    #expect(record.summaryText == "Serial Port \"COM1\" on RFCOMM 2")
    #expect(record.fields.uint("sdp.attributes.0.attribute") == 0)
    #expect(record.fields.name("sdp.attributes.0.attribute") == "ServiceRecordHandle")
    #expect(record.fields.uint("sdp.attributes.0.uint32") == 0x0001_0001)
    #expect(record.fields.name("sdp.attributes.1.attribute") == "ServiceClassIDList")
    #expect(record.fields.name("sdp.attributes.1.sequence.0.uuid") == "Serial Port")
    #expect(record.fields.name("sdp.attributes.2.attribute") == "ProtocolDescriptorList")
    #expect(record.fields.name("sdp.attributes.2.sequence.0.sequence.0.uuid") == "L2CAP")
    #expect(record.fields.name("sdp.attributes.2.sequence.1.sequence.0.uuid") == "RFCOMM")
    #expect(record.fields.uint("sdp.attributes.2.sequence.1.sequence.1.uint8") == 2)
    #expect(record.fields.name("sdp.attributes.3.attribute") == "LanguageBaseAttributeIDList")
    #expect(record.fields.name("sdp.attributes.4.attribute") == "BluetoothProfileDescriptorList")
    #expect(record.fields.uint("sdp.attributes.4.sequence.0.sequence.1.uint16") == 0x0102)
    #expect(record.fields.name("sdp.attributes.5.attribute") == "ServiceName")
    #expect(record.fields.text("sdp.attributes.5.text") == "COM1")
    guard case .records(let records, nil, 1)? = sdpFact(record)?.detail, let first = records.first else {
      Issue.record("no record fact")
      return
    }
    #expect(first.handle == 0x0001_0001)
    #expect(first.serviceClass == BluetoothUUID(uuid16: 0x1101))
    #expect(first.name == "COM1")
    #expect(first.rfcommChannel == 2)
    #expect(first.profile == BluetoothUUID(uuid16: 0x1101))
    #expect(first.profileVersion == 0x0102)
    #expect(record.diagnostics.isEmpty)
  }

  @Test func errorResponse() {
    var t = sdpLink()
    _ = request(&t, S.pdu(0x02, transaction: 0x0005, [0x35, 0x00, 0x00, 0x01, 0x00]))
    let error = response(&t, S.pdu(0x01, transaction: 0x0005, [0x00, 0x03]))
    #expect(error.titleText == "Error Response")
    #expect(error.summaryText == "Invalid request syntax")
    #expect(error.fields.uint("sdp.error") == 3)
    #expect(error.fields.name("sdp.error") == "Invalid request syntax")
    #expect(sdpFact(error)?.detail == .error(code: 3))
    let reserved = response(&t, S.pdu(0x01, transaction: 0x0006, [0x00, 0x42, 0xAA]))
    #expect(reserved.summaryText == "error 0x0042")
    #expect(reserved.fields.text("sdp.error_info") == "aa")
    #expect(reserved.diagnostics.map(\.code) == ["sdp.transaction_mismatch"])
  }

  /// A Service Search Attribute Response split over three PDUs: each request after the first
  /// repeats the continuation state the last response gave; the third response, without one,
  /// completes the lists, decoded whole there.
  @Test func continuationJoinedAcrossThreePDUs() {
    var t = sdpLink()
    let lists = S.sequence(S.serialPortRecord(handle: 0x0001_0001, channel: 3, name: "Port A"), S.serialPortRecord(handle: 0x0001_0002, channel: 4, name: "Port B"))
    let parts = [Array(lists[..<30]), Array(lists[30..<70]), Array(lists[70...])]
    let pattern = S.sequence(S.uuid16(0x1101))
    let ids = S.sequence(S.uint32(0x0000_FFFF))
    var states: [[UInt8]] = [[], [0xAB, 0x01], [0xAB, 0x02]]
    var frames: [DissectedFrame] = []
    for (index, part) in parts.enumerated() {
      let ask = request(&t, S.pdu(0x06, transaction: UInt16(index), pattern + S.be(0x0030, 2) + ids + S.continuation(states[index])))
      #expect(ask.summaryText == "Serial Port; all attributes" + (index == 0 ? "" : " (continuing)"))
      let next = index + 1 < states.count ? states[index + 1] : []
      frames.append(response(&t, S.pdu(0x07, transaction: UInt16(index), S.be(UInt64(part.count), 2) + part + S.continuation(next))))
    }
    states.removeAll()
    #expect(sdpFact(frames[0])?.detail == .part(index: 1, bytes: 30, held: 30))
    #expect(sdpFact(frames[0])?.continuation == true)
    #expect(frames[0].summaryText == "part 1, 30 bytes (more follows)")
    #expect(frames[0].fields.text("sdp.part") == Hex.string(parts[0]))
    #expect(frames[0].fields.text("sdp.continuation") == "ab01")
    #expect(frames[1].summaryText == "part 2, 40 bytes, 70 so far (more follows)")
    let whole = frames[2]
    #expect(whole.summaryText == "Serial Port \"Port A\" on RFCOMM 3; Serial Port \"Port B\" on RFCOMM 4 (joined from #\(frames[0].number), 3 PDUs)")
    #expect(whole.fields.text("sdp.joined_from") == "#\(frames[0].number)–#\(whole.number) (3 PDUs)")
    #expect(whole.fields.uint("sdp.parts") == 3)
    #expect(whole.fields.uint("sdp.joined_length") == UInt64(lists.count))
    #expect(whole.fields.text("sdp.records.1.attributes.5.text") == "Port B")
    #expect(whole.fields.uint("sdp.records.0.attributes.2.sequence.1.sequence.1.uint8") == 3)
    #expect(whole.diagnostics.isEmpty)
    #expect(t.dissector.connections.entries[0].link.classic.sdp.sessions[tx].partial == nil)
    // What the peer advertised names its RFCOMM channels.
    #expect(t.dissector.connections.entries[0].link.classic.sdp.rfcommService(channel: 4, from: rx) == BluetoothUUID(uuid16: 0x1101))

    // A response continuing one whose start the capture lacks is shown, not joined.
    _ = request(&t, S.pdu(0x06, transaction: 9, pattern + S.be(0x0030, 2) + ids + S.continuation([0xCD, 0x05])))
    let orphan = response(&t, S.pdu(0x07, transaction: 9, S.be(4, 2) + [0x09, 0x00, 0x01, 0x35] + S.continuation()))
    #expect(orphan.diagnostics.map(\.code) == ["sdp.continuation_unmatched"])
    #expect(orphan.summaryText == "part, 4 bytes (not joined)")
    #expect(orphan.fields.text("sdp.part") == "09000135")
  }

  /// Every data element type (§3.2), with the size each header gives, in one attribute.
  @Test func everyDataElementType() throws {
    var t = sdpLink()
    let value = S.sequence(
      [0x00],
      [0x08, 0xFE], [0x09, 0x12, 0x34], [0x0A, 0xDE, 0xAD, 0xBE, 0xEF], [0x0B] + S.be(0x0102_0304_0506_0708, 8), [0x0C] + Array(repeating: 0x11, count: 16),
      [0x10, 0xFF], [0x11, 0x80, 0x00], [0x12, 0xFF, 0xFF, 0xFF, 0xFE], [0x13] + S.be(UInt64(bitPattern: -3), 8), [0x14] + Array(repeating: 0xFF, count: 16),
      [0x19, 0x11, 0x1E], [0x1A, 0x00, 0x00, 0x11, 0x0B], [0x1C] + S.be(0x5E89_45B0_9525_11E3, 8) + S.be(0xA5E2_0800_200C_9A66, 8),
      [0x25, 0x03, 0x68, 0xC3, 0xA9], [0x26, 0x00, 0x01, 0x41], [0x25, 0x02, 0xFF, 0xFE],
      [0x28, 0x01],
      S.alternative(S.uint8(1), S.uint16(2)),
      [0x45, 0x08] + Array("http://x".utf8),
      [0x48, 0x07])
    let list = S.sequence(S.uint16(0x0200), value)
    let frame = response(&t, S.pdu(0x05, transaction: 1, S.be(UInt64(list.count), 2) + list + S.continuation()))
    #expect(frame.malformed == nil)
    let keys = ["nil", "uint8", "uint16", "uint32", "uint64", "uint128", "int8", "int16", "int32", "int64", "int128", "uuid", "uuid", "uuid",
      "text", "text", "text_bytes", "bool", "alternative", "url", "undecoded"]
    let base = "sdp.attributes.0.sequence."
    for (index, key) in keys.enumerated() {
      #expect(frame.fields.value(base + "\(index).\(key)") != nil, "element \(index) is not \(key)")
    }
    #expect(frame.fields.uint(base + "1.uint8") == 0xFE)
    #expect(frame.fields.uint(base + "2.uint16") == 0x1234)
    #expect(frame.fields.uint(base + "3.uint32") == 0xDEAD_BEEF)
    #expect(frame.fields.uint(base + "4.uint64") == 0x0102_0304_0506_0708)
    #expect(frame.fields.text(base + "5.uint128") == String(repeating: "11", count: 16))
    #expect(frame.fields.int(base + "6.int8") == -1)
    #expect(frame.fields.int(base + "7.int16") == -32768)
    #expect(frame.fields.int(base + "8.int32") == -2)
    #expect(frame.fields.int(base + "9.int64") == -3)
    #expect(frame.fields.name(base + "11.uuid") == "Handsfree")
    #expect(frame.fields.text(base + "12.uuid") == "0000110b")
    #expect(frame.fields.name(base + "12.uuid") == "Audio Sink")
    #expect(frame.fields.text(base + "13.uuid") == "5e8945b0-9525-11e3-a5e2-0800200c9a66")
    #expect(frame.fields.text(base + "14.text") == "hé")
    #expect(frame.fields.text(base + "15.text") == "A")
    #expect(frame.fields.text(base + "16.text_bytes") == "fffe")
    #expect(frame.fields.bool(base + "17.bool") == true)
    #expect(frame.fields.uint(base + "18.alternative.1.uint16") == 2)
    #expect(frame.fields.text(base + "19.url") == "http://x")
    // Type 9 is reserved: its bytes, and the type.
    #expect(frame.fields.text(base + "20.undecoded") == "07")
    #expect(frame.fields.uint(base + "20.undecoded_type") == 9)
    // With no class known, 0x0200 has no one name (it differs by profile).
    #expect(frame.fields.name("sdp.attributes.0.attribute") == nil)
    #expect(frame.fields.uint("sdp.attributes.0.attribute") == 0x0200)
  }

  /// A sequence nested 100 000 deep is read without recursion: 16 levels decoded, the rest
  /// kept as bytes, in one step (a sequence says its length).
  @Test func hostileNestingDoesNotRecurse() throws {
    let levels = 100_000
    var bytes: [UInt8] = []
    bytes.reserveCapacity(levels * 5)
    for level in 0..<levels { bytes += [0x37] + S.be(UInt64(5 * (levels - 1 - level)), 4) }
    let list = try ByteReader.reading(bytes, layer: .sdp) { (reader: inout ByteReader) throws(DecodeError) -> SDPElements in
      let list = try SDPElements.read(&reader)
      #expect(reader.isAtEnd)
      return list
    }
    #expect(list.elements.count == SDPElements.maximumDepth)
    #expect(list.tooDeep == 1)
    #expect(list.elements.last?.depth == SDPElements.maximumDepth - 1)
    if case .undecoded(6, let rest)? = list.elements.last?.value { #expect(rest.count == 5 * (levels - SDPElements.maximumDepth)) } else { Issue.record("the deepest level is not kept as bytes") }

    // Through the dissector: a search pattern 20 000 deep (16-bit sizes) in one PDU.
    var t = sdpLink()
    var pattern: [UInt8] = []
    let depth = 20_000
    for level in 0..<depth { pattern += [0x36] + S.be(UInt64(3 * (depth - 1 - level)), 2) }
    let frame = request(&t, S.pdu(0x06, transaction: 1, pattern + S.be(0x0100, 2) + S.sequence(S.uint16(0x0001)) + S.continuation()))
    #expect(frame.malformed == nil)
    #expect(frame.diagnostics.map(\.code) == ["sdp.elements_too_deep"])
    #expect(frame.fields.uint("sdp.max_attribute_byte_count") == 0x0100)
    #expect(frame.fields.name("sdp.attribute_ids.0.attribute") == "ServiceClassIDList")
  }

  /// More elements than decoded: the rest of their sequence is skipped, what follows decodes.
  @Test func tooManyElementsAreLeftOut() {
    var t = sdpLink()
    let many = S.sequence16((0..<5000).flatMap { S.uint8(UInt8(truncatingIfNeeded: $0)) })
    let frame = request(&t, S.pdu(0x06, transaction: 1, S.sequence(S.uuid16(0x1101)) + S.be(0x40, 2) + many + S.continuation()))
    #expect(frame.malformed == nil)
    #expect(frame.diagnostics.map(\.code) == ["sdp.too_many_elements"])
    #expect(frame.fields.uint("sdp.max_attribute_byte_count") == 0x40)
    #expect(frame.fields.value("sdp.attribute_ids.\(SDPElements.maximumElements - 2).uint8") != nil)
    #expect(frame.fields.value("sdp.attribute_ids.\(SDPElements.maximumElements - 1).uint8") == nil)
  }

  @Test func truncatedAndBrokenPDUs() {
    var t = sdpLink()
    // The header cut short.
    let short = request(&t, [0x02, 0x00])
    #expect(short.malformed?.layer == .sdp)
    #expect(short.titleText == "Service Search Request")
    // The parameter length says more than the PDU holds.
    let cut = request(&t, [0x06, 0x00, 0x01, 0x00, 0xFF, 0x35, 0x03, 0x19, 0x11])
    #expect(cut.malformed?.reason == .truncated(needed: 255, available: 4))
    // An element longer than the sequence holding it.
    let overrun = request(&t, S.pdu(0x02, transaction: 2, [0x35, 0x03, 0x25, 0x0A, 0x41, 0x00, 0x10, 0x00]))
    #expect(overrun.malformed?.reason == .lengthMismatch(field: "data element size", declared: 10, actual: 1))
    // Bytes after the parameters, and after the continuation state.
    let trailing = request(&t, S.pdu(0x02, transaction: 3, S.sequence(S.uuid16(0x1101)) + S.be(1, 2) + S.continuation()) + [0xEE])
    #expect(trailing.diagnostics.map(\.code) == ["sdp.trailing_bytes"])
    #expect(trailing.fields.uint("sdp.max_record_count") == 1)
    let inside = request(&t, S.pdu(0x02, transaction: 4, S.sequence(S.uuid16(0x1101)) + S.be(1, 2) + S.continuation() + [0xEE, 0xEF]))
    #expect(inside.diagnostics.map(\.code) == ["sdp.trailing_bytes"])
    // An attribute list whose IDs are not 16-bit, or not ascending.
    let notIDs = S.sequence(S.uint8(1), S.uint8(2))
    let bad = response(&t, S.pdu(0x05, transaction: 4, S.be(UInt64(notIDs.count), 2) + notIDs + S.continuation()))
    #expect(bad.diagnostics.map(\.code) == ["sdp.attribute_list_malformed"])
    #expect(bad.fields.uint("sdp.attributes.0.uint8") == 1)
    let descending = S.sequence(S.uint16(0x0004), S.uint8(1), S.uint16(0x0001), S.uint8(2))
    let unordered = response(&t, S.pdu(0x05, transaction: 4, S.be(UInt64(descending.count), 2) + descending + S.continuation()))
    #expect(unordered.diagnostics.map(\.code) == ["sdp.attribute_list_malformed"])
    #expect(unordered.fields.name("sdp.attributes.1.attribute") == "ServiceClassIDList")
    // An unknown PDU ID: its parameters as bytes.
    let unknown = request(&t, S.pdu(0x42, transaction: 6, [0x01, 0x02]))
    #expect(unknown.titleText == "SDP PDU")
    #expect(unknown.fields.text("sdp.parameters") == "0102")
  }

  /// A response whose parts would pass 64 KiB is not joined; its later parts say so no more.
  @Test func responsesTooLongAreNotJoined() {
    var t = sdpLink()
    let pattern = S.sequence(S.uuid16(0x1101)) + S.be(0xFFFF, 2) + S.sequence(S.uint32(0x0000_FFFF))
    let part = Array(repeating: UInt8(0x08), count: 40_000)
    _ = request(&t, S.pdu(0x06, transaction: 1, pattern + S.continuation()))
    let first = response(&t, S.pdu(0x07, transaction: 1, S.be(40_000, 2) + part + S.continuation([1])))
    #expect(sdpFact(first)?.detail == .part(index: 1, bytes: 40_000, held: 40_000))
    _ = request(&t, S.pdu(0x06, transaction: 2, pattern + S.continuation([1])))
    let second = response(&t, S.pdu(0x07, transaction: 2, S.be(40_000, 2) + part + S.continuation([2])))
    #expect(second.diagnostics.map(\.code) == ["sdp.response_too_long"])
    #expect(sdpFact(second)?.detail == .part(index: 2, bytes: 40_000, held: nil))
    _ = request(&t, S.pdu(0x06, transaction: 3, pattern + S.continuation([2])))
    let third = response(&t, S.pdu(0x07, transaction: 3, S.be(10, 2) + Array(part[..<10]) + S.continuation()))
    #expect(third.diagnostics.isEmpty)
    #expect(third.summaryText == "part, 10 bytes (not joined)")
    #expect(t.dissector.connections.entries[0].link.classic.heldBytes == 0)
  }

  /// Responses being joined count against L2CAP's reassembly budget: links holding more lose
  /// theirs, and what all links hold stays within it.
  @Test func joinedResponsesAcrossLinksStayWithinTheBudget() {
    var t = LinkTranscript()
    let pattern = S.sequence(S.uuid16(0x1101)) + S.be(0xFFFF, 2) + S.sequence(S.uint32(0x0000_FFFF))
    let part = Array(repeating: UInt8(0x08), count: 60_000)
    var dropped = false
    for handle in UInt16(1)...400 {
      _ = t.connectClassic(handle: handle, peer: "00:00:00:00:01:" + Hex.string([UInt8(handle & 0xFF)]))
      t.openChannel(handle: handle, psm: 0x0001, local: 0x0040, remote: 0x0041, identifier: 1)
      _ = t.l2cap(handle: handle, tx, cid: 0x0041, S.pdu(0x06, transaction: 1, pattern + S.continuation()))
      let frame = t.l2cap(handle: handle, rx, cid: 0x0040, S.pdu(0x07, transaction: 1, S.be(60_000, 2) + part + S.continuation([1])))
      if frame.diagnostics.contains(where: { $0.kind == .l2capReassemblyMemoryDropped }) { dropped = true }
    }
    #expect(dropped)
    var held = 0
    for entry in t.dissector.connections.entries { held += entry.link.l2cap.reassemblyBytes + entry.link.classic.heldBytes }
    #expect(held <= L2CAPState.reassemblyBudget + L2CAPState.reassemblyCheckInterval)
  }

  @Test func namesComeFromTheTables() {
    #expect(SDP.uuidName(BluetoothUUID(uuid16: 0x0003))?.description == "RFCOMM")
    #expect(SDP.uuidName(BluetoothUUID(uuid16: 0x1200))?.description == "PnP Information")
    #expect(SDP.uuidName(BluetoothUUID(uuid16: 0x110E))?.description == "A/V Remote Control")
    #expect(SDP.uuidName(BluetoothUUID(uuid16: 0x1801))?.description == "Generic Attribute")
    #expect(SDP.attributeName(0x0009, classes: [])?.description == "BluetoothProfileDescriptorList")
    #expect(SDP.attributeName(0x0100, classes: [])?.description == "ServiceName")
    #expect(SDP.attributeName(0x0102, classes: [])?.description == "ProviderName")
    #expect(SDP.attributeName(0x0201, classes: [BluetoothUUID(uuid16: 0x1200)])?.description == "VendorID")
    #expect(SDP.attributeName(0x0201, classes: [BluetoothUUID(uuid16: 0x1124)])?.description == "HIDParserVersion")
    #expect(SDP.attributeName(0x0311, classes: [])?.description == "SupportedFeatures")
    #expect(SDP.attributeName(0x0200, classes: []) == nil)
  }
}
