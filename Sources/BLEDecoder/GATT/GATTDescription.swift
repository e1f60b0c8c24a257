import BLECore

/// What an attribute a PDU is about means: its GATT meaning (from the server's database, or a
/// handle override), and its value decoded by the registry's decoder into a typed value. Each
/// attribute becomes an `AttributeFact` on the frame, with `gatt` and `decoded` field groups.
enum GATTDescription {
  static func describe(
    _ handle: UInt16, value: ByteView?, operation: GATTOperation, endsFrame: Bool = false, _ pdu: inout ATTPDU,
    _ registry: DecoderRegistry, _ database: inout GATTDatabase, _ frame: inout DissectedFrame
  ) {
    var fact = AttributeFact(handle: handle, operation: operation)
    // A cached or layout-matched table is on trial: the first PDU it cannot explain drops it.
    if database.seededEntriesOnTrial { tryTable(handle, value: value, operation: operation, pdu, registry, &database, &frame) }
    if let uuid = registry.handleOverride(handle, peer: pdu.link.peer) {
      // An override (Decode As) wins over what discovery said.
      fact.decoderIndex = registry.index(for: uuid)
      // A user's decoder names what nothing else names.
      let name = GATTDatabase.name(uuid) ?? fact.decoderIndex.flatMap { registry.declaredFormat(decoder: $0)?.name }
      fact.meaning = ResolvedHandle(role: .characteristicValue, service: nil, characteristic: uuid, descriptor: nil, name: name, characteristicName: name)
    } else if let index = database.locate(handle, registry: registry) {
      // Read in place: the table entry is copied once, into the fact.
      fact.meaning = database.resolved[index]
      let decoder = database.decoders[index]
      fact.decoderIndex = decoder >= 0 ? Int(decoder) : nil
    } else if let value, let guessed = database.guesses.observe(handle, value: value, operation: operation, time: pdu.link.timestamp, frame: frame.number) {
      // Nothing explains the handle: its values may (never over a table).
      fact.decoderIndex = GATTDatabase.decoderIndex(for: guessed, registry: registry)
      fact.meaning = guessed
    }
    // Asked, not bound: binding copies the 125-byte meaning out of the fact it was just copied into.
    if fact.meaning != nil {
      frame.deepestLayer = .gatt
      if !endsFrame, let meaning = fact.meaning {
        writeFields(meaning, of: database, &frame.fields)
      } else if database.provenance != nil {
        // The trailing `gatt` group names the map its meaning came from (`ValueStage`).
        frame.trailingProvenance = database.provenance
      }
    }
    // The attribute that ends the frame is the value stage's (`ValueStage`, run where the
    // engine decides): its value and its groups. Values inside a PDU's list are decoded and
    // written in place.
    // A HID Report is told its Report Reference, when one was read (HID devices only).
    if !database.reportReferences.isEmpty, fact.meaning?.role == .characteristicValue, fact.meaning?.characteristic?.uuid16 == 0x2A4D {
      fact.reportReference = database.reportReferences[handle]
    }
    var valueDecoded = false
    if let value {
      fact.rawValue = frame.keepValue(value)
      if operation == .read {
        learnFromRead(value, &fact, &pdu, database)
        if fact.meaning?.role == .descriptor, fact.meaning?.descriptor?.uuid16 == 0x2908, value.count == 2 {
          database.noteReportReference(HIDReportReference(reportID: value[value.startIndex], reportType: value[value.startIndex + 1]), descriptor: handle)
        }
      }
      if let decoder = fact.decoderIndex {
        if !endsFrame {
          let context = fact.valueContext
          decodeValue(registry[decoder: decoder], registry, value, &fact, &frame.diagnostics, &frame.malformed, context: context)
          writeDecodedGroup(registry[decoder: decoder], &fact, &frame.fields, context: context)
        } else if fact.characteristic?.uuid16 == 0x2B2A {
          // A Database Hash is wanted by the dissector itself (it identifies the table).
          decodeValue(registry[decoder: decoder], registry, value, &fact, &frame.diagnostics, &frame.malformed, context: fact.valueContext)
          valueDecoded = true
        }
      }
      // Service Changed: the server's attributes in the range are no longer known.
      if operation == .indication, fact.characteristic?.uuid16 == 0x2A05, value.count == 4 {
        let start = UInt16(value[value.startIndex]) | UInt16(value[value.startIndex + 1]) << 8
        let end = UInt16(value[value.startIndex + 2]) | UInt16(value[value.startIndex + 3]) << 8
        pdu.learned.append(.serviceChanged(start: start, end: end))
      }
    }
    if endsFrame {
      frame.trailing = TrailingAttribute(index: frame.attributes.count, decoder: fact.decoderIndex, raw: fact.rawValue, valueDecoded: valueDecoded)
    }
    frame.attributes.append(consume fact)
  }

  /// Checks a table on trial against a PDU about `handle`; drops its seeded entries, with a
  /// note, when the PDU contradicts them. Out of line: most tables are never on trial.
  @inline(never)
  static func tryTable(
    _ handle: UInt16, value: ByteView?, operation: GATTOperation, _ pdu: ATTPDU, _ registry: DecoderRegistry, _ database: inout GATTDatabase,
    _ frame: inout DissectedFrame
  ) {
    guard registry.handleOverride(handle, peer: pdu.link.peer) == nil,
      let reason = database.contradiction(handle, value: value, operation: operation, registry: registry),
      let dropped = database.dropSeededEntries()
    else { return }
    frame.diagnostics.append(GATTDatabase.droppedNote(dropped, reason))
  }

  /// A value listed by a Read By Type Response of a type with a decoder: its handle is known
  /// only by that type.
  static func describeTyped(_ handle: UInt16, value: ByteView, type: BluetoothUUID, decoder: Int, _ registry: DecoderRegistry, _ frame: inout DissectedFrame) {
    var fact = AttributeFact(handle: handle, operation: .read)
    let name = GATTDatabase.name(type)
    fact.meaning = ResolvedHandle(role: .characteristicValue, service: nil, characteristic: type, descriptor: nil, name: name, characteristicName: name)
    fact.decoderIndex = decoder
    fact.rawValue = frame.keepValue(value)
    let context = fact.valueContext
    decodeValue(registry[decoder: decoder], registry, value, &fact, &frame.diagnostics, &frame.malformed, context: context)
    writeDecodedGroup(registry[decoder: decoder], &fact, &frame.fields, context: context)
    frame.attributes.append(consume fact)
  }

  /// The `gatt` group: JSON always has it; plain text shows the meaning in the header line.
  static func writeFields(_ meaning: ResolvedHandle, of database: borrowing GATTDatabase, _ fields: inout FieldList) {
    // The provenance is copied only for meanings from a map (its strings would be retained).
    if meaning.source == .capture || meaning.source == .inferred {
      writeFields(meaning, provenance: nil, &fields)
    } else {
      writeFields(meaning, provenance: database.provenance, &fields)
    }
  }

  static func writeFields(_ meaning: ResolvedHandle, provenance: GATTMapProvenance? = nil, _ fields: inout FieldList) {
    fields.beginObject("gatt", "GATT", verbose: true)
    if let service = meaning.service { fields.add("service", "Service", .uuid(service, name: GATTDatabase.name(service))) }
    if let characteristic = meaning.characteristic {
      fields.add("characteristic", "Characteristic", .uuid(characteristic, name: meaning.characteristicName))
    }
    if let descriptor = meaning.descriptor { fields.add("descriptor", "Descriptor", .uuid(descriptor, name: GATTDatabase.name(descriptor))) }
    if let name = meaning.name { fields.add("name", "Name", .staticText(name)) }
    if meaning.source != .capture {
      fields.add("source", "Source", .staticText(meaning.source.key))
      if let confidence = meaning.confidence { fields.add("confidence", "Confidence", .unsigned(UInt64(confidence), .decimal)) }
      if let provenance, provenance.source == meaning.source { writeProvenance(provenance, &fields) }
    }
    fields.end()
  }

  /// Which map a meaning came from: the file given, the cache file (and when it was learned),
  /// the table matched by layout.
  @inline(never)
  static func writeProvenance(_ provenance: GATTMapProvenance, _ fields: inout FieldList) {
    fields.add("map", "Map", .text(provenance.file ?? provenance.origin))
    if let learned = provenance.learned { fields.add("learned", "Learned", .text(learned)) }
  }

  /// Runs the decoder: the typed value goes on the fact; a value that does not fit is flagged,
  /// and its raw bytes stay in `att.value`.
  static func decodeValue(
    _ decoder: CharacteristicDecoder, _ registry: DecoderRegistry, _ value: ByteView, _ fact: inout AttributeFact,
    _ diagnostics: inout [Diagnostic], _ malformed: inout DecodeError?, context: ValueContext
  ) {
    var reader = ByteReader(value, layer: .profile)
    // Decoded into the fact and used there: copying a typed value costs more than decoding it.
    let error = decoder.decode(&reader, into: &fact, context: context, registry: registry)
    if fact.hasValue { fact.typedValue.diagnose(into: &diagnostics, context: context) }
    if let error {
      if malformed == nil { malformed = error }
      fact.isMalformed = true
    } else if !reader.isAtEnd {
      diagnostics.append(Diagnostic(.profileTrailingBytes, "\(reader.remaining) bytes after the \(fact.meaning?.name ?? "value") value"))
    }
  }

  /// The `decoded.<key>` group: the fields of the fact's typed value (empty when the value did
  /// not decode). (`inout` only so the fact is read where it lies, not copied.)
  static func writeDecodedGroup(
    _ decoder: CharacteristicDecoder, _ fact: inout AttributeFact, _ fields: inout FieldList, context: ValueContext
  ) {
    let depth = fields.depth
    fields.beginObject("decoded", "Decoded", inline: true, verbose: decoder.summarySaysItAll)
    fields.beginObject(decoder.key, fact.meaning?.name ?? "Value", inline: true)
    if fact.hasValue { fact.typedValue.writeFields(to: &fields, context: context) }
    fields.close(toDepth: depth)
  }

  /// Read Responses on declaration handles teach the database too: a characteristic
  /// declaration's properties, value handle and UUID; an included service's 128-bit UUID.
  static func learnFromRead(_ value: ByteView, _ fact: inout AttributeFact, _ pdu: inout ATTPDU, _ database: GATTDatabase) {
    if database.awaitsIncludedService(at: fact.handle), let uuid = ATTLayer.uuidValue(value) {
      pdu.learned.append(.includedService(start: fact.handle, uuid: uuid))
      fact.setValue(IncludedServiceUUID(uuid: uuid))
      return
    }
    guard fact.meaning?.role == .characteristicDeclaration, value.count == 5 || value.count == 19 else { return }
    var reader = ByteReader(value, layer: .gatt)
    guard let properties = try? reader.readUInt8(), let valueHandle = try? reader.readUInt16LE(),
      let uuid = reader.remaining == 16 ? try? reader.readUUID128() : try? reader.readUUID16()
    else { return }
    pdu.learned.append(.characteristic(declaration: fact.handle, valueHandle: valueHandle, uuid: uuid, properties: properties))
  }
}

/// The 128-bit UUID of an included service, read from its declaration handle.
public struct IncludedServiceUUID: CharacteristicValue, Equatable {
  public var uuid: BluetoothUUID

  public init(uuid: BluetoothUUID) { self.uuid = uuid }

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    uuid = try reader.readUUID128()
  }

  public func writeFields(to fields: inout FieldList, context: ValueContext) {
    fields.add("included_service", "Included service", .uuid(uuid, name: GATTDatabase.name(uuid)))
  }

  public func summarize(into summary: inout SummaryLine, context: ValueContext) {
    summary.append(.text("included service "))
    summary.append(.string(uuid.description))
  }
}

