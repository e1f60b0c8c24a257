import BLECore

/// Report Map 0x2A4B: the HID report descriptor (HID 1.11 §6.2.2), a sequence of items.
///
/// A short item is a prefix byte (bits 0–1 size: 0, 1, 2 or 4 data bytes; bits 2–3 type:
/// Main, Global, Local, reserved; bits 4–7 tag) and its data, little-endian (§5.8, §6.2.2.2);
/// a long item is 0xFE, a data size, a tag and its data (§6.2.2.3). Main items shape the
/// reports: Input, Output, Feature, Collection, End Collection; Global items set the state
/// they use (Usage Page, Logical/Physical Minimum/Maximum, Unit, Report Size/ID/Count, Push,
/// Pop); Local items name the next Main item's controls (Usage, Usage Minimum/Maximum…).
///
/// Parsing never fails: the value is read to its end. An item the value's end cuts (a map
/// read only in part, a server that stops short) is kept with the bytes it has and marked
/// `cut`; collections left open or closed twice are noted. Nesting is counted, not recursed
/// into, so a map of thousands of nested collections costs no stack; at most `maximumItems`
/// items are kept (all are counted).
public struct HIDReportMap: CharacteristicValue, Equatable {
  public enum ItemType: UInt8, Sendable {
    case main = 0, global = 1, local = 2, reserved = 3
  }

  public struct Item: Sendable, Equatable {
    /// Where the item starts in the value.
    public var offset: Int
    /// The prefix byte (0xFE for a long item).
    public var prefix: UInt8
    /// Data bytes the item declares (0, 1, 2 or 4; a long item's bDataSize).
    public var size: UInt8
    /// The data, little-endian, zero-extended (the bytes present, for a cut item; 0 for a
    /// long item).
    public var data: UInt32
    /// Collections open around the item (an End Collection: around its collection).
    public var depth: Int
    /// The Usage Page in force (names a Usage of one or two bytes).
    public var usagePage: UInt16
    /// The value ended inside the item: fewer data bytes than it declares.
    public var cut: Bool
    /// A long item's tag.
    public var longTag: UInt8?

    public var isLong: Bool { longTag != nil }
    public var type: ItemType {
      switch prefix >> 2 & 3 {
      case 0: return .main
      case 1: return .global
      case 2: return .local
      default: return .reserved
      }
    }
    public var tag: UInt8 { prefix >> 4 }

    /// The data as a signed number (two's complement in its size: Logical and Physical
    /// Minimum and Maximum).
    public var signedData: Int32 {
      switch size {
      case 1: return Int32(Int8(truncatingIfNeeded: data))
      case 2: return Int32(Int16(truncatingIfNeeded: data))
      default: return Int32(bitPattern: data)
      }
    }

    /// The item's name as the HID specification spells it ("Usage Page", "Input").
    public var name: Name {
      if isLong { return "Long Item" }
      switch (type, tag) {
      case (.main, 0x8): return "Input"
      case (.main, 0x9): return "Output"
      case (.main, 0xB): return "Feature"
      case (.main, 0xA): return "Collection"
      case (.main, 0xC): return "End Collection"
      case (.global, 0x0): return "Usage Page"
      case (.global, 0x1): return "Logical Minimum"
      case (.global, 0x2): return "Logical Maximum"
      case (.global, 0x3): return "Physical Minimum"
      case (.global, 0x4): return "Physical Maximum"
      case (.global, 0x5): return "Unit Exponent"
      case (.global, 0x6): return "Unit"
      case (.global, 0x7): return "Report Size"
      case (.global, 0x8): return "Report ID"
      case (.global, 0x9): return "Report Count"
      case (.global, 0xA): return "Push"
      case (.global, 0xB): return "Pop"
      case (.local, 0x0): return "Usage"
      case (.local, 0x1): return "Usage Minimum"
      case (.local, 0x2): return "Usage Maximum"
      case (.local, 0x3): return "Designator Index"
      case (.local, 0x4): return "Designator Minimum"
      case (.local, 0x5): return "Designator Maximum"
      case (.local, 0x7): return "String Index"
      case (.local, 0x8): return "String Minimum"
      case (.local, 0x9): return "String Maximum"
      case (.local, 0xA): return "Delimiter"
      default: return "Reserved Item"
      }
    }

    /// The item's JSON key (`usage_page`, `input`).
    var key: Name {
      if isLong { return "long_item" }
      switch (type, tag) {
      case (.main, 0x8): return "input"
      case (.main, 0x9): return "output"
      case (.main, 0xB): return "feature"
      case (.main, 0xA): return "collection"
      case (.main, 0xC): return "end_collection"
      case (.global, 0x0): return "usage_page"
      case (.global, 0x1): return "logical_minimum"
      case (.global, 0x2): return "logical_maximum"
      case (.global, 0x3): return "physical_minimum"
      case (.global, 0x4): return "physical_maximum"
      case (.global, 0x5): return "unit_exponent"
      case (.global, 0x6): return "unit"
      case (.global, 0x7): return "report_size"
      case (.global, 0x8): return "report_id"
      case (.global, 0x9): return "report_count"
      case (.global, 0xA): return "push"
      case (.global, 0xB): return "pop"
      case (.local, 0x0): return "usage"
      case (.local, 0x1): return "usage_minimum"
      case (.local, 0x2): return "usage_maximum"
      case (.local, 0x3): return "designator_index"
      case (.local, 0x4): return "designator_minimum"
      case (.local, 0x5): return "designator_maximum"
      case (.local, 0x7): return "string_index"
      case (.local, 0x8): return "string_minimum"
      case (.local, 0x9): return "string_maximum"
      case (.local, 0xA): return "delimiter"
      default: return "reserved_item"
      }
    }

    var isCollection: Bool { !isLong && type == .main && tag == 0xA }
    var isEndCollection: Bool { !isLong && type == .main && tag == 0xC }
  }

  /// The items kept, in order (at most `maximumItems`).
  public var items: [Item]
  /// Every item the value holds, kept or not.
  public var itemCount: Int
  /// The value's length in bytes.
  public var length: Int
  /// Collections still open at the value's end.
  public var unclosedCollections: Int
  /// Where End Collection items closed no collection (the first 64).
  public var unmatchedEnds: [Int]
  /// How many End Collection items closed no collection, listed or not.
  public var unmatchedEndCount = 0
  /// The value's last item, kept or not (the only one the value's end can cut).
  public var lastItem: Item?
  /// Push items past the global stack's depth (the state they saved is not kept).
  public var pushOverflow: Int

  public static let maximumItems = 4096
  /// Push levels kept (the global state stack, for the Usage Page that names usages).
  static let maximumPushDepth = 32
  /// Collections shown nested in the fields; deeper ones continue at this level.
  static let maximumShownNesting = 8

  public init(parsing reader: inout ByteReader) throws(DecodeError) {
    reader.layer = .profile
    let start = reader.offset
    items = []
    itemCount = 0
    unclosedCollections = 0
    unmatchedEnds = []
    pushOverflow = 0
    var depth = 0
    var usagePage: UInt16 = 0
    var pushed: [UInt16] = []
    // Pushes past the stack still open: their Pops restore nothing (what they saved is not
    // kept), so the Pops after them still match the Pushes kept.
    var overflowOpen = 0
    while !reader.isAtEnd {
      let offset = reader.offset - start
      let prefix = try reader.readUInt8()
      var item = Item(offset: offset, prefix: prefix, size: 0, data: 0, depth: depth, usagePage: usagePage, cut: false, longTag: nil)
      if prefix == 0xFE {
        // Long item: bDataSize, bLongItemTag, then the data (skipped: no tag is defined).
        let size = reader.isAtEnd ? nil : try reader.readUInt8()
        let tag = reader.isAtEnd ? nil : try reader.readUInt8()
        item.size = size ?? 0
        item.longTag = tag ?? 0
        let wanted = Int(size ?? 0)
        let present = min(wanted, reader.remaining)
        try reader.skip(present)
        item.cut = size == nil || tag == nil || present < wanted
      } else {
        let size = prefix & 3 == 3 ? 4 : Int(prefix & 3)  // 0, 1, 2 or 4 bytes
        item.size = UInt8(size)
        let present = min(size, reader.remaining)
        var data: UInt32 = 0
        for index in 0..<present { data |= UInt32(try reader.readUInt8()) << (8 * UInt32(index)) }
        item.data = data
        item.cut = present < size
        switch (item.type, item.tag) {
        case (.main, 0xA):
          depth += 1
        case (.main, 0xC):
          if depth > 0 {
            depth -= 1
            item.depth = depth
          } else {
            unmatchedEndCount += 1
            if unmatchedEnds.count < 64 { unmatchedEnds.append(offset) }
          }
        case (.global, 0x0):
          usagePage = UInt16(truncatingIfNeeded: data)
        case (.global, 0xA):
          if pushed.count < Self.maximumPushDepth {
            pushed.append(usagePage)
          } else {
            pushOverflow += 1
            overflowOpen += 1
          }
        case (.global, 0xB):
          if overflowOpen > 0 {
            overflowOpen -= 1
          } else if let saved = pushed.popLast() {
            usagePage = saved
          }
        default:
          break
        }
      }
      itemCount += 1
      lastItem = item
      if items.count < Self.maximumItems { items.append(item) }
    }
    length = reader.offset - start
    unclosedCollections = depth
  }

  public static let decoder = CharacteristicDecoder(uuid16: 0x2A4B, key: "report_map", HIDReportMap.self)

  /// Whether an item was cut by the value's end.
  public var isCut: Bool { lastItem?.cut ?? false }

  /// The report IDs the map declares, in order, each once.
  public var reportIDs: [UInt8] {
    var seen: [UInt8] = []
    for item in items where !item.isLong && item.type == .global && item.tag == 0x8 {
      let id = UInt8(truncatingIfNeeded: item.data)
      if !seen.contains(id) { seen.append(id) }
    }
    return seen
  }

  /// The usages of the top-level Application collections ("Mouse", "Consumer Control").
  public var applications: [String] {
    var names: [String] = []
    var lastUsage: (page: UInt16, id: UInt16)?
    for item in items {
      if !item.isLong && item.type == .local && item.tag == 0x0 {
        lastUsage = item.size == 4 ? (UInt16(item.data >> 16), UInt16(truncatingIfNeeded: item.data)) : (item.usagePage, UInt16(truncatingIfNeeded: item.data))
      } else if item.isCollection && item.depth == 0 && item.data == 1 {
        if let usage = lastUsage {
          names.append(HID.usageName(page: usage.page, id: usage.id) ?? "usage \(Hex.prefixed(UInt64(usage.id), width: 2))")
        } else {
          names.append("no usage")
        }
      }
      if item.type == .main { lastUsage = nil }
    }
    return names
  }

  // MARK: fields

  public func writeFields(to fields: inout FieldList, context: ValueContext) {
    fields.uint("length", "Length", length)
    fields.uint("item_count", "Items", itemCount)
    guard fields.keepsGroup(verbose: false) else { return }
    let base = fields.depth
    fields.beginArray("items", "Items")
    // Open groups: each shown collection adds an element object and its `items` array.
    var shownNesting = 0
    for item in items {
      if item.isEndCollection {
        if shownNesting > 0 && item.depth < Self.maximumShownNesting {
          fields.end()  // the collection's items
          fields.end()  // the collection's element
          shownNesting -= 1
        }
        continue
      }
      fields.beginObject("", "Item")
      writeItem(item, to: &fields)
      if item.isCollection && shownNesting < Self.maximumShownNesting && !item.cut {
        fields.beginArray("items", "Items")
        shownNesting += 1
        continue
      }
      fields.end()
    }
    fields.close(toDepth: base)
    if itemCount > items.count { fields.uint("items_not_shown", "Items not shown", itemCount - items.count) }
  }

  /// One item's element: its value under its own key (`usage_page: 1` and its name), where
  /// it starts, and whether the value's end cut it.
  func writeItem(_ item: Item, to fields: inout FieldList) {
    let key = item.key
    let label = item.name
    let width: UInt8 = item.size >= 4 ? 8 : (item.size == 2 ? 4 : 2)
    if item.isLong {
      fields.uint(key, label, item.size)
      if let tag = item.longTag { fields.hex("long_item_tag", "Long item tag", tag, width: 2) }
    } else {
      switch (item.type, item.tag) {
      case (.main, 0x8), (.main, 0x9), (.main, 0xB):
        fields.add(key, label, .codeText(UInt64(item.data), width: width, name: Self.propertiesText(item)))
      case (.main, 0xA):
        fields.code(key, label, item.data, width: 2, name: Self.collectionTypeName(item.data))
      case (.global, 0x0):
        fields.code(key, label, item.data, width: width, name: HID.usagePageName(UInt16(truncatingIfNeeded: item.data)))
      case (.global, 0x1), (.global, 0x2), (.global, 0x3), (.global, 0x4):
        fields.int(key, label, item.signedData)
      case (.global, 0x5):
        // A 4-bit signed exponent (HID 1.11 §6.2.2.7): 0x0–0x7 are 0–7, 0x8–0xF are -8…-1.
        let nibble = Int(item.data & 0xF)
        fields.int(key, label, item.data > 0xF ? Int(item.signedData) : (nibble >= 8 ? nibble - 16 : nibble))
      case (.global, 0x6):
        fields.hex(key, label, item.data, width: width)
      case (.global, 0x8):
        fields.hex(key, label, item.data, width: 2)
      case (.local, 0x0), (.local, 0x1), (.local, 0x2):
        // A four-byte usage is extended: its page in the high half (§6.2.2.8).
        let page = item.size == 4 ? UInt16(item.data >> 16) : item.usagePage
        HID.usageField(key, label, page: page, id: UInt16(truncatingIfNeeded: item.data), value: UInt64(item.data), width: width, to: &fields)
      case (.main, _), (.reserved, _):
        fields.hex(key, label, item.data, width: width)
      default:
        fields.uint(key, label, item.data)
      }
    }
    fields.addVerbose("offset", "Offset", .unsigned(UInt64(item.offset), .decimal))
    if item.cut { fields.flag("cut", "Cut by the value's end", true) }
  }

  /// An Input, Output or Feature item's properties (HID 1.11 §6.2.2.5): the first three always
  /// ("Data, Variable, Relative"), the others when set.
  static func propertiesText(_ item: Item) -> String {
    let bits = item.data
    var words = [bits & 0x01 != 0 ? "Constant" : "Data", bits & 0x02 != 0 ? "Variable" : "Array", bits & 0x04 != 0 ? "Relative" : "Absolute"]
    if bits & 0x08 != 0 { words.append("Wrap") }
    if bits & 0x10 != 0 { words.append("Nonlinear") }
    if bits & 0x20 != 0 { words.append("No Preferred State") }
    if bits & 0x40 != 0 { words.append("Null State") }
    // Bit 7 is Volatile for Output and Feature, reserved for Input.
    if bits & 0x80 != 0 { words.append(item.tag == 0x8 ? "Reserved Bit 7" : "Volatile") }
    if bits & 0x100 != 0 { words.append("Buffered Bytes") }
    return words.joined(separator: ", ")
  }

  /// Collection types (HID 1.11 §6.2.2.6, HUT 1.5 §3.4).
  public static func collectionTypeName(_ type: UInt32) -> Name? {
    switch type {
    case 0x00: return "Physical"
    case 0x01: return "Application"
    case 0x02: return "Logical"
    case 0x03: return "Report"
    case 0x04: return "Named Array"
    case 0x05: return "Usage Switch"
    case 0x06: return "Usage Modifier"
    case 0x80...0xFF: return "Vendor-defined"
    default: return nil
    }
  }

  /// "220 bytes, 112 items: Mouse, Consumer Control; report IDs 0x1a, 0x22".
  public func summarize(into summary: inout SummaryLine, context: ValueContext) {
    summary.append(.number(length))
    summary.append(.text(" bytes, "))
    summary.append(.number(itemCount))
    summary.append(.text(itemCount == 1 ? " item" : " items"))
    let applications = applications
    if !applications.isEmpty {
      summary.append(.text(": "))
      summary.append(.string(applications.prefix(4).joined(separator: ", ") + (applications.count > 4 ? ", …" : "")))
    }
    let ids = reportIDs
    if !ids.isEmpty {
      summary.append(.text(ids.count == 1 ? "; report ID " : "; report IDs "))
      for (index, id) in ids.prefix(8).enumerated() {
        if index > 0 { summary.append(.text(", ")) }
        summary.append(.hex(UInt64(id), width: 2))
      }
      if ids.count > 8 { summary.append(.text(", …")) }
    }
    if isCut { summary.append(.text("; last item cut")) }
  }

  public func diagnose(into diagnostics: inout [Diagnostic], context: ValueContext) {
    if let last = lastItem, last.cut {
      ProfileSupport.add(.profileReportMapDamaged, &diagnostics,
        "Report Map ends inside the \(last.name) item at offset \(last.offset) (it declares \(last.size) data bytes)")
    }
    if unclosedCollections > 0 {
      ProfileSupport.add(.profileReportMapDamaged, &diagnostics,
        "\(unclosedCollections) collection\(unclosedCollections == 1 ? "" : "s") not closed at the Report Map's end")
    }
    if let first = unmatchedEnds.first {
      ProfileSupport.add(.profileReportMapDamaged, &diagnostics,
        "End Collection at offset \(first) closes no collection\(unmatchedEndCount > 1 ? " (and \(unmatchedEndCount - 1) more)" : "")")
    }
  }
}
