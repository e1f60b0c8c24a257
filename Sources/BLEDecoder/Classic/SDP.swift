import BLECore

/// The Service Discovery Protocol (Core Vol 3 Part B §4) on BR/EDR L2CAP channels opened for
/// PSM 0x0001. Every parameter is big-endian. Requests are remembered per client so that a
/// response split over several PDUs (each later request repeating the continuation state the
/// last response gave) is joined and its records decoded whole, on the frame that completes it.
public enum SDP {
  static let psm: UInt16 = 0x0001
  /// The most a response joined from several PDUs may hold (a phone's whole record set is a
  /// few KiB).
  static let maximumJoinedBytes = 64 << 10

  public static func name(_ pdu: UInt8) -> Name { AssignedNumbers.sdpPDUName(pdu) ?? "SDP PDU" }

  /// A UUID's name as SDP records use them: protocols and service classes, then GATT's (a
  /// record for GATT over BR/EDR names 0x1801), then vendors' 128-bit UUIDs.
  public static func uuidName(_ uuid: BluetoothUUID) -> Name? {
    if let short = uuid.uuid16 { return AssignedNumbers.sdpUUIDName(short) ?? AssignedNumbers.uuid16Name(short) }
    return uuid.width == 16 ? AssignedNumbers.uuid128Name(high: uuid.high, low: uuid.low) : nil
  }

  /// An attribute ID's name: universal, then language-based (from each language base the
  /// record declares), then the profile's of the first class that defines it.
  public static func attributeName(_ id: UInt16, classes: [BluetoothUUID], languageBases: [UInt16] = [0x0100]) -> Name? {
    if let name = AssignedNumbers.sdpUniversalAttributeName(id) { return name }
    for base in languageBases where id >= base && id - base <= 2 {
      if let name = AssignedNumbers.sdpLanguageAttributeName(offset: id - base) { return name }
    }
    guard id >= 0x0200 else { return nil }
    for serviceClass in classes {
      if let short = serviceClass.uuid16, let name = AssignedNumbers.sdpProfileAttributeName(serviceClass: short, id: id) { return name }
    }
    return AssignedNumbers.sdpProfileAttributeNameAnyClass(id)
  }

  /// One SDP PDU on a channel whose frames travel `direction`. Returns the bytes a response
  /// being joined grew by (the L2CAP layer counts them against its budget).
  static func dissect(_ payload: inout ByteReader, direction: Direction, link: inout SDPLinkState, into frame: inout DissectedFrame) throws(DecodeError) -> Int {
    frame.deepestLayer = .sdp
    payload.layer = .sdp
    let pdu = try payload.readUInt8()
    var fact = SDPFact(pdu: pdu, transaction: 0)
    frame.header = .sdp(fact)
    frame.fields.beginObject("sdp", "SDP", inline: true)
    frame.fields.addVerbose("pdu", "PDU", .code(UInt64(pdu), width: 2, name: AssignedNumbers.sdpPDUName(pdu)))
    fact.transaction = try payload.readUInt16BE()
    frame.header = .sdp(fact)
    frame.fields.add("transaction", "Transaction", .unsigned(UInt64(fact.transaction), .hex(4)))
    let length = try payload.readUInt16BE()
    frame.fields.addVerbose("parameter_length", "Parameter length", .unsigned(UInt64(length), .decimal))
    var parameters = try payload.readReader(count: Int(length), layer: .sdp)
    if !payload.isAtEnd {
      frame.diagnostics.append(Diagnostic(.sdpTrailingBytes, "\(payload.remaining) bytes after the PDU's \(length) parameter bytes"))
      _ = payload.readRemaining()
    }
    defer { frame.header = .sdp(fact) }
    var held = 0
    switch pdu {
    case 0x01: try errorResponse(&parameters, direction: direction, link: &link, fact: &fact, into: &frame)
    case 0x02, 0x06: try searchRequest(&parameters, direction: direction, link: &link, fact: &fact, into: &frame)
    case 0x04: try attributeRequest(&parameters, direction: direction, link: &link, fact: &fact, into: &frame)
    case 0x03: try searchResponse(&parameters, direction: direction, link: &link, fact: &fact, into: &frame)
    case 0x05, 0x07: held = try attributeResponse(&parameters, direction: direction, link: &link, fact: &fact, into: &frame)
    default: frame.fields.bytes("parameters", "Parameters", parameters.readRemaining())
    }
    frame.fields.end()
    return held
  }

  // MARK: - PDUs

  static func errorResponse(_ reader: inout ByteReader, direction: Direction, link: inout SDPLinkState, fact: inout SDPFact, into frame: inout DissectedFrame) throws(DecodeError) {
    let code = try reader.readUInt16BE()
    fact.detail = .error(code: code)
    frame.fields.add("error", "Error", .code(UInt64(code), width: 4, name: AssignedNumbers.sdpErrorName(code)))
    // Bluetooth 1.x defined ErrorInfo after the code; later versions none.
    if !reader.isAtEnd { frame.fields.bytes("error_info", "Error info", reader.readRemaining()) }
    _ = answer(fact.transaction, direction: direction, link: &link, into: &frame)
    link.sessions[direction.opposite].partial = nil
  }

  /// Service Search Request (0x02) and Service Search Attribute Request (0x06).
  static func searchRequest(_ reader: inout ByteReader, direction: Direction, link: inout SDPLinkState, fact: inout SDPFact, into frame: inout DissectedFrame) throws(DecodeError) {
    let patternList = try SDPElements.read(&reader)
    noteLimits(patternList, &frame)
    let pattern = uuids(patternList)
    writeList(patternList, key: "service_search_pattern", label: "Service search pattern", &frame.fields)
    var ranges: [ClosedRange<UInt16>]?
    if fact.pdu == 0x02 {
      frame.fields.uint("max_record_count", "Maximum records", try reader.readUInt16BE())
    } else {
      frame.fields.uint("max_attribute_byte_count", "Maximum attribute bytes", try reader.readUInt16BE())
      let idList = try SDPElements.read(&reader)
      noteLimits(idList, &frame)
      ranges = attributeIDs(idList, classes: pattern, &frame.fields)
    }
    let continuation = try readContinuation(&reader, &frame)
    fact.detail = .search(pattern: pattern, attributes: ranges)
    fact.continuation = !continuation.isEmpty
    link.sessions[direction].request = SDPRequest(
      pdu: fact.pdu, transaction: fact.transaction, frame: frame.number, pattern: pattern, handle: nil, continuation: continuation)
  }

  /// Service Attribute Request (0x04).
  static func attributeRequest(_ reader: inout ByteReader, direction: Direction, link: inout SDPLinkState, fact: inout SDPFact, into frame: inout DissectedFrame) throws(DecodeError) {
    let handle = try reader.readUInt32BE()
    frame.fields.add("record_handle", "Record handle", .unsigned(UInt64(handle), .hex(8)))
    frame.fields.uint("max_attribute_byte_count", "Maximum attribute bytes", try reader.readUInt16BE())
    let classes = link.sessions[direction].recordClasses[handle].map { [$0] } ?? []
    let idList = try SDPElements.read(&reader)
    noteLimits(idList, &frame)
    let ranges = attributeIDs(idList, classes: classes, &frame.fields)
    let continuation = try readContinuation(&reader, &frame)
    fact.detail = .attributeRequest(handle: handle, attributes: ranges)
    fact.continuation = !continuation.isEmpty
    link.sessions[direction].request = SDPRequest(
      pdu: fact.pdu, transaction: fact.transaction, frame: frame.number, pattern: classes, handle: handle, continuation: continuation)
  }

  /// Service Search Response (0x03): the handles of the records found.
  static func searchResponse(_ reader: inout ByteReader, direction: Direction, link: inout SDPLinkState, fact: inout SDPFact, into frame: inout DissectedFrame) throws(DecodeError) {
    let total = try reader.readUInt16BE()
    let current = try reader.readUInt16BE()
    frame.fields.uint("total_count", "Records in all", total)
    frame.fields.uint("current_count", "Records here", current)
    var handles: [UInt32] = []
    frame.fields.beginArray("record_handles", "Record handles")
    for _ in 0..<current {
      let handle = try reader.readUInt32BE()
      handles.append(handle)
      frame.fields.add("handle", "Handle", .unsigned(UInt64(handle), .hex(8)))
    }
    frame.fields.end()
    let continuation = try readContinuation(&reader, &frame)
    fact.detail = .handles(total: total, handles: handles)
    fact.continuation = !continuation.isEmpty
    let request = answer(fact.transaction, direction: direction, link: &link, into: &frame)
    if let serviceClass = request?.pattern.first {
      for handle in handles { link.sessions[direction.opposite].recordClasses[handle] = serviceClass }
    }
  }

  /// Service Attribute Response (0x05) and Service Search Attribute Response (0x07): the
  /// attribute list(s), whole or a part of them.
  static func attributeResponse(_ reader: inout ByteReader, direction: Direction, link: inout SDPLinkState, fact: inout SDPFact, into frame: inout DissectedFrame) throws(DecodeError) -> Int {
    let count = Int(try reader.readUInt16BE())
    frame.fields.addVerbose("attribute_list_byte_count", "Attribute list bytes", .unsigned(UInt64(count), .decimal))
    let part = Array(try reader.readBytes(count: count))
    let request = answer(fact.transaction, direction: direction, link: &link, into: &frame)
    let continuation = try readContinuation(&reader, &frame)
    fact.continuation = !continuation.isEmpty
    // The session is the client's: its requests travel the other way.
    let client = direction.opposite
    var whole: [UInt8]?
    var firstFrame: Int?
    var parts = 1
    var held = 0
    let continues = !(request?.continuation.isEmpty ?? true)
    if continues, let abandoned = link.sessions[client].abandoned, abandoned == request?.continuation {
      // A later part of a response too long to join.
      link.sessions[client].abandoned = continuation.isEmpty ? nil : continuation
      fact.detail = .part(index: 0, bytes: part.count, held: nil)
    } else if continues {
      if var partial = link.sessions[client].partial, partial.pdu == fact.pdu, partial.continuation == request?.continuation {
        link.sessions[client].partial = nil
        if partial.bytes.count + part.count > maximumJoinedBytes {
          frame.diagnostics.append(Diagnostic(.sdpResponseTooLong, "the response from #\(partial.firstFrame) would pass \(maximumJoinedBytes) bytes: not joined"))
          link.sessions[client].abandoned = continuation.isEmpty ? nil : continuation
          fact.detail = .part(index: partial.parts + 1, bytes: part.count, held: nil)
        } else {
          partial.bytes += part
          partial.parts += 1
          held = part.count
          if continuation.isEmpty {
            whole = partial.bytes
            firstFrame = partial.firstFrame
            parts = partial.parts
          } else {
            partial.continuation = continuation
            fact.detail = .part(index: partial.parts, bytes: part.count, held: partial.bytes.count)
            link.sessions[client].partial = partial
          }
        }
      } else {
        link.sessions[client].partial = nil
        frame.diagnostics.append(Diagnostic(.sdpContinuationUnmatched, "continues a response whose earlier parts are not in the capture: not joined"))
        fact.detail = .part(index: 0, bytes: part.count, held: nil)
      }
    } else if continuation.isEmpty {
      link.sessions[client].partial = nil
      whole = part
    } else {
      link.sessions[client].partial = SDPPartialResponse(
        pdu: fact.pdu, bytes: part, firstFrame: frame.number, parts: 1, continuation: continuation, pattern: request?.pattern ?? [],
        handle: request?.handle)
      link.sessions[client].abandoned = nil
      held = part.count
      fact.detail = .part(index: 1, bytes: part.count, held: part.count)
    }
    guard let whole else {
      frame.fields.bytes("part", "Part", part[...])
      return held
    }
    if let firstFrame {
      frame.fields.add("joined_from", "Joined from", .text("#\(firstFrame)–#\(frame.number) (\(parts) PDUs)"))
      frame.fields.addVerbose("first_frame", "First part", .unsigned(UInt64(firstFrame), .decimal))
      frame.fields.addVerbose("parts", "Parts", .unsigned(UInt64(parts), .decimal))
      frame.fields.addVerbose("joined_length", "Joined length", .unsigned(UInt64(whole.count), .decimal))
    }
    let pattern = request?.pattern ?? []
    fact.detail = .records([], firstFrame: firstFrame, parts: parts)
    let records = try ByteReader.reading(whole, layer: .sdp) { (lists: inout ByteReader) throws(DecodeError) -> [SDPRecordFact] in
      var list = try SDPElements.read(&lists)
      noteLimits(list, &frame)
      if !lists.isAtEnd {
        frame.diagnostics.append(Diagnostic(.sdpTrailingBytes, "\(lists.remaining) bytes after the attribute list"))
      }
      if fact.pdu == 0x05 {
        frame.fields.beginArray("attributes", "Attributes")
        var record = attributeList(&list, root: 0, fallback: pattern, &frame)
        frame.fields.end()
        if record.handle == nil { record.handle = request?.handle }
        return [record]
      }
      guard list.isContainer(at: 0) else {
        frame.diagnostics.append(Diagnostic(.sdpAttributeListMalformed, "the attribute lists are not a data element sequence"))
        writeList(list, key: "elements", label: "Elements", &frame.fields)
        return []
      }
      var records: [SDPRecordFact] = []
      frame.fields.beginArray("records", "Records")
      for child in list.children(of: 0) {
        frame.fields.beginObject("record", "Record")
        frame.fields.beginArray("attributes", "Attributes")
        records.append(attributeList(&list, root: child, fallback: pattern, &frame))
        frame.fields.end()
        frame.fields.end()
      }
      frame.fields.end()
      return records
    }
    fact.detail = .records(records, firstFrame: firstFrame, parts: parts)
    // The responding side's RFCOMM channels, for naming the DLCIs that reach them.
    for record in records {
      if let channel = record.rfcommChannel, let serviceClass = record.serviceClass { link.rfcommServices[direction][channel] = serviceClass }
    }
    return held
  }

  /// The request a response travelling `direction` answers (its client's last), noting it on
  /// the frame; a transaction ID that differs is said.
  static func answer(_ transaction: UInt16, direction: Direction, link: inout SDPLinkState, into frame: inout DissectedFrame) -> SDPRequest? {
    guard let request = link.sessions[direction.opposite].request else { return nil }
    frame.fields.addVerbose("request_frame", "Request", .unsigned(UInt64(request.frame), .decimal))
    if request.transaction != transaction {
      frame.diagnostics.append(Diagnostic(
        .sdpTransactionMismatch, "transaction " + Hex.prefixed(UInt64(transaction), width: 4) + " answers the request at #\(request.frame) ("
          + Hex.prefixed(UInt64(request.transaction), width: 4) + ")"))
    }
    return request
  }

  /// The continuation state (InfoLength, then up to 16 bytes): `null` when there is none.
  static func readContinuation(_ reader: inout ByteReader, _ frame: inout DissectedFrame) throws(DecodeError) -> [UInt8] {
    let count = Int(try reader.readUInt8())
    let state = Array(try reader.readBytes(count: count))
    if state.isEmpty {
      frame.fields.add("continuation", "Continuation", .null)
    } else {
      frame.fields.bytes("continuation", "Continuation", state[...])
    }
    if !reader.isAtEnd {
      frame.diagnostics.append(Diagnostic(.sdpTrailingBytes, "\(reader.remaining) bytes after the continuation state"))
      _ = reader.readRemaining()
    }
    return state
  }

  static func noteLimits(_ list: SDPElements, _ frame: inout DissectedFrame) {
    if list.tooDeep > 0 {
      frame.diagnostics.append(Diagnostic(
        .sdpElementsTooDeep, "\(list.tooDeep) sequence\(list.tooDeep == 1 ? "" : "s") nested deeper than \(SDPElements.maximumDepth) levels: shown as bytes"))
    }
    if list.leftOut {
      frame.diagnostics.append(Diagnostic(.sdpTooManyElements, "more than \(SDPElements.maximumElements) data elements: the rest are not decoded"))
    }
  }

  /// The UUIDs of a search pattern (a sequence of UUIDs, or one UUID): at most
  /// `maximumPatternUUIDs`, as many as the specification allows (Core Vol 3 Part B §4.5.1). A
  /// hostile pattern of thousands would otherwise be kept per link and looked through for every
  /// attribute named. The pattern's field lists every element.
  static func uuids(_ list: SDPElements) -> [BluetoothUUID] {
    guard !list.isEmpty else { return [] }
    if !list.isContainer(at: 0) { return list.uuid(at: 0).map { [$0] } ?? [] }
    return Array(list.children(of: 0).lazy.compactMap { list.uuid(at: $0) }.prefix(maximumPatternUUIDs))
  }

  static let maximumPatternUUIDs = 12

  /// An AttributeIDList: each element an attribute ID (uint16) or a range (uint32, first ID in
  /// the high half), named; returns them as ranges.
  static func attributeIDs(_ list: SDPElements, classes: [BluetoothUUID], _ fields: inout FieldList) -> [ClosedRange<UInt16>] {
    var ranges: [ClosedRange<UInt16>] = []
    fields.beginArray("attribute_ids", "Attribute IDs")
    let items = list.isEmpty ? [] : (list.isContainer(at: 0) ? list.children(of: 0) : [0])
    for item in items {
      switch list.elements[item].value {
      case .unsigned(let value, bytes: 2):
        let id = UInt16(value)
        ranges.append(id...id)
        fields.beginObject("id", "ID")
        fields.add("attribute", "Attribute", idValue(id, attributeName(id, classes: classes)))
        fields.end()
      case .unsigned(let value, bytes: 4):
        let first = UInt16(value >> 16), last = UInt16(value & 0xFFFF)
        if first <= last { ranges.append(first...last) }
        fields.beginObject("range", "Range")
        fields.add("range_start", "From", idValue(first, attributeName(first, classes: classes)))
        fields.add("range_end", "To", idValue(last, attributeName(last, classes: classes)))
        fields.end()
      default:
        writeElement(list, item, wrapped: true, &fields)
      }
    }
    fields.end()
    return ranges
  }

  /// An attribute ID with its name, or in hex when it has none.
  static func idValue(_ id: UInt16, _ name: Name?) -> FieldValue {
    name.map { .code(UInt64(id), width: 4, name: $0) } ?? .unsigned(UInt64(id), .hex(4))
  }

  // MARK: - Attribute lists

  /// Writes an attribute list (a sequence of attribute ID–value pairs) as `attributes[]` members,
  /// each `{attribute, <value>}`; returns what it says of the service. `fallback`: classes to
  /// name profile attributes by when the list has no ServiceClassIDList (the search pattern).
  static func attributeList(_ list: inout SDPElements, root: Int, fallback: [BluetoothUUID], _ frame: inout DissectedFrame) -> SDPRecordFact {
    var record = SDPRecordFact()
    guard list.isContainer(at: root) else {
      frame.diagnostics.append(Diagnostic(.sdpAttributeListMalformed, "an attribute list that is not a data element sequence"))
      writeElement(list, root, wrapped: true, &frame.fields)
      return record
    }
    // Pairs first: what the record says (its classes, language bases) names its attributes.
    let children = list.children(of: root)
    var pairs: [(id: UInt16, value: Int)] = []
    var index = 0
    var previous: UInt16?
    var problem: String?
    while index + 1 < children.count {
      guard case .unsigned(let value, bytes: 2) = list.elements[children[index]].value else {
        problem = "element \(index + 1) is not a 16-bit attribute ID"
        break
      }
      let id = UInt16(value)
      if let previous, id <= previous, problem == nil { problem = "attribute " + Hex.prefixed(UInt64(id), width: 4) + " follows " + Hex.prefixed(UInt64(previous), width: 4) }
      previous = id
      pairs.append((id, children[index + 1]))
      index += 2
    }
    if index < children.count && problem == nil { problem = "attribute " + Hex.prefixed(UInt64(previous ?? 0), width: 4) + " is followed by an ID without a value" }
    if let problem { frame.diagnostics.append(Diagnostic(.sdpAttributeListMalformed, problem)) }

    var classes: [BluetoothUUID] = []
    var languageBases: [UInt16] = []
    for (id, value) in pairs {
      switch id {
      case 0x0000:
        if case .unsigned(let handle, bytes: 4) = list.elements[value].value { record.handle = UInt32(handle) }
      case 0x0001:
        classes = list.isContainer(at: value) ? list.children(of: value).compactMap { list.uuid(at: $0) } : []
        record.serviceClass = classes.first
      case 0x0004:
        (record.psm, record.rfcommChannel) = labelProtocols(&list, value, lists: false)
      case 0x000D:
        _ = labelProtocols(&list, value, lists: true)
      case 0x0006:
        languageBases = labelLanguages(&list, value)
      case 0x0009:
        (record.profile, record.profileVersion) = labelProfiles(&list, value)
      default:
        break
      }
    }
    if languageBases.isEmpty { languageBases = [0x0100] }
    // ServiceName: many stacks send it NUL-terminated, which names nothing.
    if let base = languageBases.first, let name = pairs.first(where: { $0.id == base }).flatMap({ list.text(at: $0.value) }) {
      record.name = String(name.unicodeScalars.reversed().drop { $0 == "\u{0}" }.reversed().map(Character.init))
    }
    let naming = classes.isEmpty ? fallback : classes + fallback

    for (id, value) in pairs {
      frame.fields.beginObject("attribute", "Attribute")
      frame.fields.add("attribute", "Attribute", idValue(id, attributeName(id, classes: naming, languageBases: languageBases)))
      writeElement(list, value, wrapped: false, &frame.fields)
      frame.fields.end()
    }
    // What is left when the pairs stop: shown as it is.
    for child in children[(pairs.count * 2)...] { writeElement(list, child, wrapped: true, &frame.fields) }
    return record
  }

  /// ProtocolDescriptorList (or, `lists`, AdditionalProtocolDescriptorLists: a sequence of
  /// them): each descriptor a sequence of a protocol UUID and its parameters. Labels the
  /// parameters; returns the first L2CAP PSM and RFCOMM channel.
  static func labelProtocols(_ list: inout SDPElements, _ value: Int, lists: Bool) -> (psm: UInt16?, channel: UInt8?) {
    var psm: UInt16?
    var channel: UInt8?
    guard list.isContainer(at: value) else { return (nil, nil) }
    let descriptorLists = lists ? list.children(of: value).filter { list.isContainer(at: $0) } : [value]
    for descriptors in descriptorLists {
      for descriptor in list.children(of: descriptors) where list.isContainer(at: descriptor) {
        let parts = list.children(of: descriptor)
        guard let first = parts.first, let short = list.uuid(at: first)?.uuid16 else { continue }
        for (position, parameter) in parts.dropFirst().enumerated() {
          switch (short, position) {
          case (0x0100, 0):
            list.elements[parameter].label = "PSM"
            if psm == nil, let value = list.unsigned(at: parameter) { psm = UInt16(truncatingIfNeeded: value) }
          case (0x0003, 0):
            list.elements[parameter].label = "Channel"
            list.elements[parameter].decimal = true
            if channel == nil, let value = list.unsigned(at: parameter) { channel = UInt8(truncatingIfNeeded: value) }
          case (0x000F, 0), (0x0017, 0), (0x0019, 0):
            list.elements[parameter].label = "Version"
          case (0x000F, 1):
            list.elements[parameter].label = "Network packet types"
          default:
            break
          }
        }
      }
    }
    return (psm, channel)
  }

  /// LanguageBaseAttributeIDList: triples of a language (ISO 639), an encoding (IANA MIBenum)
  /// and the base of its attributes. Returns the bases.
  static func labelLanguages(_ list: inout SDPElements, _ value: Int) -> [UInt16] {
    guard list.isContainer(at: value) else { return [] }
    let items = list.children(of: value)
    var bases: [UInt16] = []
    var index = 0
    while index + 2 < items.count {
      list.elements[items[index]].label = "Language"
      list.elements[items[index + 1]].label = "Encoding"
      list.elements[items[index + 1]].decimal = true
      list.elements[items[index + 2]].label = "Base"
      if let base = list.unsigned(at: items[index + 2]), base <= 0xFFFF, bases.count < 8 { bases.append(UInt16(base)) }
      index += 3
    }
    return bases
  }

  /// BluetoothProfileDescriptorList: sequences of a profile UUID and its version. Returns the
  /// first profile and its version.
  static func labelProfiles(_ list: inout SDPElements, _ value: Int) -> (BluetoothUUID?, UInt16?) {
    guard list.isContainer(at: value) else { return (nil, nil) }
    var first: (BluetoothUUID?, UInt16?) = (nil, nil)
    for descriptor in list.children(of: value) where list.isContainer(at: descriptor) {
      let parts = list.children(of: descriptor)
      if parts.count >= 2 { list.elements[parts[1]].label = "Version" }
      if first.0 == nil, let profile = parts.first.flatMap({ list.uuid(at: $0) }) {
        first = (profile, parts.count >= 2 ? list.unsigned(at: parts[1]).map { UInt16(truncatingIfNeeded: $0) } : nil)
      }
    }
    return first
  }

  // MARK: - Data elements as fields

  /// A whole list under `key` as an array: a sequence's elements, or the one element.
  static func writeList(_ list: SDPElements, key: Name, label: Name, _ fields: inout FieldList) {
    fields.beginArray(key, label)
    if !list.isEmpty {
      if list.isContainer(at: 0) {
        for child in list.children(of: 0) { writeElement(list, child, wrapped: true, &fields) }
      } else {
        writeElement(list, 0, wrapped: true, &fields)
      }
    }
    fields.end()
  }

  /// Writes element `root` and all it holds, without recursion. Each element is one field keyed
  /// by its type (`uuid`, `uint16`, `text`, `sequence` …); inside a sequence every element is
  /// an object holding that field (`wrapped`), so JSON keeps its type and name:
  /// `"sequence":[{"uuid":"0100","uuid_name":"L2CAP"},{"uint16":25}]`.
  static func writeElement(_ list: SDPElements, _ root: Int, wrapped wrapRoot: Bool, _ fields: inout FieldList) {
    var open: [(end: Int, wrapped: Bool)] = []
    var index = root
    let end = list.elements[root].end
    while true {
      while let last = open.last, index >= last.end {
        fields.end()
        if last.wrapped { fields.end() }
        open.removeLast()
      }
      guard index < end else { break }
      let element = list.elements[index]
      let wrapped = index != root || wrapRoot
      if wrapped { fields.beginObject("element", "Element") }
      let label = element.label ?? element.typeLabel
      switch element.value {
      case .sequence, .alternative:
        fields.beginArray(element.key, label)
        open.append((element.end, wrapped))
        index += 1
        continue
      case .null: fields.add(element.key, label, .null)
      case .unsigned(let value, let bytes):
        fields.add(element.key, label, .unsigned(value, bytes == 8 ? .hex(16) : (element.decimal ? .decimal : .hex(UInt8(2 * bytes)))))
      case .signed(let value, _): fields.add(element.key, label, .signed(value))
      case .wide(_, let bytes): fields.bytes(element.key, label, bytes[...])
      case .uuid(let uuid): fields.add(element.key, label, .uuid(uuid, name: uuidName(uuid)))
      case .text(let text, let raw), .url(let text, let raw):
        if let text { fields.add(element.key, label, .text(text)) } else { fields.bytes(element.key, label, raw[...]) }
      case .bool(let flag): fields.flag(element.key, label, flag)
      case .undecoded(let type, let bytes):
        fields.bytes(element.key, label, bytes[...])
        fields.uint("undecoded_type", "Type", type)
      }
      if wrapped { fields.end() }
      index += 1
    }
  }
}
