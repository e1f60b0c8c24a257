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
  public static func gattMap(_ bytes: UnsafeBufferPointer<UInt8>, keepingJSON: Bool = false) -> Outcome {
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
  public static func blueZ(_ bytes: UnsafeBufferPointer<UInt8>, keepingJSON: Bool = false) -> Outcome {
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
  public static func decoders(_ bytes: UnsafeBufferPointer<UInt8>, keepingJSON: Bool = false) -> Outcome {
    let split = bytes.firstIndex(of: 0) ?? bytes.count
    let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[..<split]), as: UTF8.self)
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
  public static func releaseDecoderText() {
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
