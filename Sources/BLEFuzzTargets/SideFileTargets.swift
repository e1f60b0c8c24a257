import BLECore
import BLEDecoder

/// The side-file targets: what `--gatt` and `--decoders` read, parsed from the input, then put
/// to work in the dissector (a hostile map or decoder must not make decoding trap either).
extension FuzzTarget {
  /// The name the side files are given: messages start with it.
  static let mapName = "fuzz.json"
  static let blueZAddress = "D0:B1:ED:00:48:52"
  static let decoderName = "fuzz.decoders.json"

  /// The `gattmap` input: a map document (the JSON `gatt --json` writes). A map that parses is
  /// given to the dissector (`Dissector(maps:)`) and a conversation that touches its handles is
  /// decoded and rendered (`mapConversation`). Inputs of odd length are read as cached maps.
  package static func gattMap(_ bytes: [UInt8], keepingJSON: Bool = false) -> Outcome {
    let maps: [GATTMap]
    do {
      maps = try GATTMapFile.parseJSON(bytes: Array(bytes), name: mapName, cached: bytes.count % 2 == 1)
    } catch {
      return refused(error.message, name: mapName)
    }
    return decodeWithMaps(maps, keepingJSON: keepingJSON)
  }

  /// The `bluez` input: a BlueZ GATT cache file, named by the address `blueZAddress`; then as
  /// `gattmap`.
  package static func blueZ(_ bytes: [UInt8], keepingJSON: Bool = false) -> Outcome {
    let maps: [GATTMap]
    let name = "cache/" + blueZAddress
    do {
      maps = try GATTMapFile.parseBlueZ(bytes: Array(bytes), name: name, fileName: blueZAddress)
    } catch {
      return refused(error.message, name: name)
    }
    precondition(maps.count == 1 && maps[0].address == BDAddr(blueZAddress), "a BlueZ cache file is one map of the device it is named by")
    return decodeWithMaps(maps, keepingJSON: keepingJSON)
  }

  /// A refusal is one line naming the file (and, but for its size, the line).
  static func refused(_ message: String, name: String) -> Outcome {
    precondition(message.hasPrefix(name + ":") || message.hasPrefix(name + " "), "a side file's error names the file: \(message)")
    precondition(!message.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "a side file's error is one line without control characters: \(message)")
    precondition(message.utf8.count < 1024, "a side file's error is one short line")
    var outcome = Outcome()
    outcome.refusal = message
    return outcome
  }

  /// Values the map conversations carry: a heart-rate measurement with RR intervals (first, so
  /// that a table matched by layout decodes something before other values contradict it and
  /// it is dropped), empty, one byte, 20 and 100 bytes.
  static let mapValues: [[UInt8]] = [
    [0x16, 0x48, 0x00, 0x03, 0x10, 0x02], [], [0x5A],
    (0..<20).map { UInt8($0) }, (0..<100).map { UInt8(truncatingIfNeeded: $0 &* 37) },
  ]

  static func decodeWithMaps(_ maps: [GATTMap], keepingJSON: Bool) -> Outcome {
    var set = GATTMapSet()
    var handles: [UInt16] = [0x0003, 0x0010]
    for map in maps {
      guard set.add(map, source: .imported) else { break }
      for service in map.tree.services {
        handles.append(service.start)
        for characteristic in service.characteristics {
          handles.append(characteristic.valueHandle)
          handles += characteristic.descriptors.map(\.handle)
        }
      }
      for characteristic in map.tree.characteristicsOutsideServices { handles.append(characteristic.valueHandle) }
      handles += map.tree.otherHandles.map(\.handle)
      if handles.count > 64 { break }
    }
    let peer = maps.lazy.compactMap(\.address).first ?? BDAddr(blueZAddress)!
    var outcome = Outcome()
    outcome.parsed = maps.count
    var session = Session(keepingJSON: keepingJSON, dissector: Dissector(maps: set))
    // The map's device by address, then a connection whose peer the capture does not show (a
    // map's layout may apply).
    let records = conversation(peers: [peer, nil], handles: Array(handles.prefix(64)), values: mapValues, limit: 1000)
    for record in records {
      outcome.records += 1
      session.show(record, number: outcome.records)
    }
    session.finish(into: &outcome)
    return outcome
  }

  /// The `decoders` input: a decoder file, then (optionally) a NUL byte and values, each a
  /// length byte and that many bytes (the last takes what remains); without values, a few
  /// fixed ones. A file that parses gives its decoders to the dissector: each of the first 16
  /// decodes every value, as a notification and as a read response, on a handle of its own
  /// (a UUID's decoder through `--decode-as`, a handle's at its handle).
  ///
  /// Decoders' names are interned (`NameTable`) for the life of the process: the libFuzzer
  /// entry point calls `releaseDecoderText()` after each input.
  package static func decoders(_ bytes: [UInt8], keepingJSON: Bool = false) -> Outcome {
    let split = bytes.firstIndex(of: 0) ?? bytes.count
    let text = String(decoding: bytes[..<split], as: UTF8.self)
    var values: [[UInt8]] = []
    var at = split + 1
    while at < bytes.count, values.count < 32 {
      let length = min(Int(bytes[at]), bytes.count - at - 1)
      values.append(Array(bytes[(at + 1)..<(at + 1 + length)]))
      at += 1 + length
    }
    if split == bytes.count { values = decoderValues }
    let decoders: [UserDecoder]
    do {
      decoders = try DecoderFile.parse(text, file: decoderName)
    } catch {
      return refused(error.message, name: decoderName)
    }
    // An empty list is a file with nothing in it yet: no decoders, still a conversation.
    precondition(decoders.count <= DecoderFile.maximumDecoders, "\(decoders.count) decoders from one file")
    var registry = DecoderRegistry.standard
    var handles: [UInt16] = []
    for (index, decoder) in decoders.enumerated() {
      registry.register(decoder)
      guard index < 16 else { continue }
      switch decoder.target {
      case .uuid(let uuid):
        let handle = UInt16(0x0100 + index)
        registry.override(HandleOverride(handle: handle, uuid: uuid))
        handles.append(handle)
      case .handle(let handle, _):
        handles.append(handle)
      }
    }
    var outcome = Outcome()
    outcome.parsed = decoders.count
    var session = Session(keepingJSON: keepingJSON, dissector: Dissector(registry: registry))
    let records = conversation(peers: [BDAddr(blueZAddress)!], handles: handles, values: values, limit: 1200)
    for record in records {
      outcome.records += 1
      session.show(record, number: outcome.records)
    }
    session.finish(into: &outcome)
    return outcome
  }

  /// Values for decoder files given without any: nothing, one byte, every flag of a first
  /// byte with what follows, 4 and 8 bytes, a long run.
  static let decoderValues: [[UInt8]] = [
    [], [0x01], [0xFF], [0x1F, 0x48, 0x00, 0x10, 0x27, 0x00, 0x04, 0x00, 0x04],
    [0x00, 0x80, 0xFF, 0x7F], [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08],
    Array(repeating: 0xFF, count: 64), (0..<300).map { UInt8(truncatingIfNeeded: $0) },
  ]

  /// Drops the interned names of every decoder parsed so far (the libFuzzer entry point of
  /// `decoders` calls it after each input; those decoders' names read as "?" afterwards).
  /// Without it, the name budget (`NameTable.maximumBytes`) fills after some thousands of
  /// inputs and every later file is refused.
  package static func releaseDecoderText() {
    NameTable.releaseAll()
  }

  /// An LE connection to each peer in turn (handle 0x0040, 0x0041, …; nil: a connection the
  /// capture joins late, no connect event naming the peer) with an MTU exchange (517), then
  /// for each handle (once) and value a notification and a read (request and response), and a
  /// disconnection; at most `limit` records.
  static func conversation(peers: [BDAddr?], handles: [UInt16], values: [[UInt8]], limit: Int) -> [CaptureRecord] {
    var seen = Set<UInt16>()
    let handles = handles.filter { seen.insert($0).inserted }
    var records: [CaptureRecord] = []
    var time: Int64 = 1_700_000_000_000_000
    func add(_ kind: PacketKind, _ direction: Direction, _ bytes: [UInt8]) {
      guard records.count < limit else { return }
      time += 1000
      records.append(CaptureRecord(timestamp: time, direction: direction, kind: kind, bytes: bytes))
    }
    for (index, peer) in peers.enumerated() {
      let connection = UInt16(0x0040 + index)
      let (low, high) = (UInt8(connection & 0xFF), UInt8(connection >> 8))
      func att(_ direction: Direction, _ pdu: [UInt8]) {
        let length = pdu.count + 4
        add(.acl, direction, [low, high | (direction == .hostToController ? 0x00 : 0x20), UInt8(length & 0xFF), UInt8(length >> 8),
          UInt8(pdu.count & 0xFF), UInt8(pdu.count >> 8), 0x04, 0x00] + pdu)
      }
      if let peer {
        let address = (0..<6).map { UInt8(truncatingIfNeeded: peer.rawValue >> (8 * UInt64($0))) }
        add(.event, .controllerToHost, [0x3E, 0x13, 0x01, 0x00, low, high, 0x00, 0x01] + address + [0x18, 0x00, 0x00, 0x00, 0x48, 0x00, 0x00])
      }
      att(.hostToController, [0x02, 0x05, 0x02])
      att(.controllerToHost, [0x03, 0x05, 0x02])
      for handle in handles {
        let (h0, h1) = (UInt8(handle & 0xFF), UInt8(handle >> 8))
        for value in values {
          att(.controllerToHost, [0x1B, h0, h1] + value.prefix(512))
          att(.hostToController, [0x0A, h0, h1])
          att(.controllerToHost, [0x0B] + value.prefix(512))
        }
      }
      add(.event, .controllerToHost, [0x05, 0x04, 0x00, low, high, 0x13])
    }
    return records
  }
}

extension FuzzTarget {
  static let keysName = "fuzz.keys"

  /// The `keys` input: a keys file (`--keys`), then optionally a NUL byte and HCI packets for
  /// `--keys-from` (each a kind byte — 1 command, 4 event — a length byte and that many bytes,
  /// the last taking what remains), read by `HCIKeyHarvest`. A keys file that parses gives its
  /// keys, and the harvest's, to the dissector over a sniffed link whose encryption starts: the
  /// first key seals its packets, so the key search, the packet counters and the decrypted
  /// payloads are worked through; the other keys are tried first where they rank higher.
  package static func keys(_ bytes: [UInt8], keepingJSON: Bool = false) -> Outcome {
    let split = bytes.firstIndex(of: 0) ?? bytes.count
    let text = String(decoding: bytes[..<split], as: UTF8.self)
    var ring = LinkKeyRing()
    switch LinkKeyRing.parseFile(text, name: keysName) {
    case .failure(let failure): return refused(failure.message, name: keysName)
    case .success(let keys):
      precondition(keys.count <= LinkKeyRing.maximumKeys, "\(keys.count) keys from one file")
      for key in keys {
        precondition(key.key.count == 16 && key.source.hasPrefix(keysName + " line "), "a key is 16 octets named by its line")
        ring.add(key)
      }
    }
    var harvest = HCIKeyHarvest()
    var at = split + 1
    var number = 0
    while at + 1 < bytes.count, number < 256 {
      let kind: PacketKind = bytes[at] == 1 ? .command : .event
      let length = min(Int(bytes[at + 1]), bytes.count - at - 2)
      number += 1
      harvest.take(CaptureRecord(timestamp: 0, direction: nil, kind: kind, bytes: Array(bytes[(at + 2)..<(at + 2 + length)])), number: number, capture: "fuzz.btsnoop")
      at += 2 + length
    }
    for key in harvest.ring.keys { ring.add(key) }
    var outcome = Outcome()
    outcome.parsed = ring.keys.count
    var session = Session(keepingJSON: keepingJSON, dissector: Dissector(keys: ring))
    for record in encryptedAirConversation(sealedWith: ring.keys.first?.key) {
      outcome.records += 1
      session.show(record, number: outcome.records)
    }
    session.finish(into: &outcome)
    return outcome
  }

  /// A sniffed connection (sniffer header 256-like: the direction said) whose encryption starts
  /// (LL_ENC_REQ / RSP, LL_START_ENC_REQ), then encrypted LL_START_ENC_RSPs and ATT
  /// notifications sealed with `key` (most significant octet first), or with a key of zeros.
  static func encryptedAirConversation(sealedWith key: [UInt8]?) -> [CaptureRecord] {
    let accessAddress: UInt32 = 0x5065_7A3C
    let (skdC, ivC, skdP, ivP): (UInt64, UInt32, UInt64, UInt32) = (0x1122_3344_5566_7788, 0x0A0B_0C0D, 0x99AA_BBCC_DDEE_FF00, 0x0102_0304)
    let cipher = LinkCipher(
      longTermKey: AES128.block(key ?? [UInt8](repeating: 0, count: 16)) ?? AES128.Block(), skdCentral: skdC, skdPeripheral: skdP,
      ivCentral: ivC, ivPeripheral: ivP)
    var records: [CaptureRecord] = []
    var time: Int64 = 1_000_000
    func record(_ fromCentral: Bool?, _ address: UInt32, _ pdu: [UInt8]) {
      var bytes: [UInt8] = []
      AirPacketHeader(channel: fromCentral == nil ? 37 : 5, signal: -50, phy: .le1M, crc: .valid, fromCentral: fromCentral).append(to: &bytes)
      for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: address >> UInt32(shift))) }
      bytes += pdu + [0, 0, 0]
      records.append(CaptureRecord(timestamp: time, direction: nil, kind: .airPacket, bytes: bytes))
      time += 7_500
    }
    func le(_ value: UInt64, _ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: value >> UInt64(8 * $0)) } }
    // CONNECT_IND: initiator C0:…, advertiser D0:B1:ED:00:48:52, interval 6, timeout 100.
    let connectData = le(UInt64(accessAddress), 4) + [0x9A, 0x1B, 0x2C, 2] + le(0, 2) + le(6, 2) + le(0, 2) + le(100, 2) + [0xFF, 0xFF, 0xFF, 0xFF, 0x1F, 0xA7]
    record(nil, AirFact.advertisingAccessAddress, [0xC5, 34] + le(0xC0B1_ED00_5048, 6) + le(0xD0B1_ED00_4852, 6) + connectData)
    var sn = DirectionalPair<UInt8>(0)
    func data(_ fromCentral: Bool, llid: UInt8, _ payload: [UInt8], counter: UInt64?) {
      let direction: Direction = fromCentral ? .hostToController : .controllerToHost
      let header = llid | sn[direction] << 3 | (1 - sn[direction == .hostToController ? .controllerToHost : .hostToController]) << 2
      sn[direction] ^= 1
      let body = counter.map { cipher.seal(header: header, plain: payload, counter: $0, fromCentral: fromCentral) } ?? payload
      record(fromCentral, accessAddress, [header, UInt8(truncatingIfNeeded: body.count)] + body)
    }
    data(true, llid: 3, [0x03] + le(0, 8) + le(0, 2) + le(skdC, 8) + le(UInt64(ivC), 4), counter: nil)
    data(false, llid: 3, [0x04] + le(skdP, 8) + le(UInt64(ivP), 4), counter: nil)
    data(true, llid: 1, [], counter: nil)
    data(false, llid: 3, [0x05], counter: nil)
    data(true, llid: 3, [0x06], counter: 0)
    data(false, llid: 3, [0x06], counter: 0)
    // Notifications of 4 and 30 bytes (the second in two pieces), and one after a missed packet.
    data(false, llid: 2, [0x07, 0x00, 0x04, 0x00, 0x1B, 0x10, 0x00, 0x06, 0x48], counter: 1)
    let long: [UInt8] = [0x22, 0x00, 0x04, 0x00, 0x1B, 0x12, 0x00] + (0..<27).map { UInt8($0) }
    data(false, llid: 2, Array(long.prefix(27)), counter: 2)
    data(false, llid: 1, Array(long.dropFirst(27)), counter: 3)
    data(false, llid: 2, [0x05, 0x00, 0x04, 0x00, 0x1B, 0x10, 0x00, 0x06, 0x49], counter: 6)
    data(true, llid: 3, [0x02, 0x13], counter: 1)
    return records
  }
}
