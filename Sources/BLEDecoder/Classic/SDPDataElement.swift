import BLECore

/// One SDP data element (Core Vol 3 Part B §3): a header byte (type in the high five bits, size
/// index in the low three), a length for the variable-size types, then the value. A sequence or
/// alternative holds elements; a list of them is kept flat, in the order sent, each container
/// saying where its elements end.
struct SDPElement: Sendable {
  enum Value: Sendable {
    case null
    /// 1, 2, 4 or 8 bytes.
    case unsigned(UInt64, bytes: Int)
    case signed(Int64, bytes: Int)
    /// A 16-byte integer, as sent (most significant byte first).
    case wide(signed: Bool, [UInt8])
    case uuid(BluetoothUUID)
    /// Text and URLs: the bytes as UTF-8 when they are, else nil (`raw` keeps them).
    case text(String?, raw: [UInt8])
    case url(String?, raw: [UInt8])
    case bool(Bool)
    /// Its elements follow it, up to `end` (an index into the list).
    case sequence
    case alternative
    /// A container nested deeper than decoded (`SDPElements.maximumDepth`), or a type the
    /// specification reserves: its value's bytes, not decoded.
    case undecoded(type: UInt8, [UInt8])
  }

  var value: Value
  /// Nesting level: 0 for the list's outermost element.
  var depth: Int
  /// The index after this element and everything it holds.
  var end: Int
  /// How text shows it, where its place says what it is (a PSM in a protocol descriptor, a
  /// profile's version): nil for the type's own label.
  var label: Name?
  /// Shown in decimal rather than hex (a channel, a PSM's peers: counts and numbers).
  var decimal = false
}

/// A list of data elements, decoded without recursion: a hostile list nested 100 000 deep costs
/// a loop, not the stack. Nesting past `maximumDepth` and elements past `maximumElements` are
/// kept as bytes and said so.
struct SDPElements: Sendable {
  static let maximumDepth = 16
  static let maximumElements = 4096

  var elements: [SDPElement] = []
  /// Containers left undecoded for their depth; elements left out for their number.
  var tooDeep = 0
  var leftOut = false

  var isEmpty: Bool { elements.isEmpty }

  // Read with a switch on the stored value, not through a property of a copied element: the
  // Swift 6.3 optimizer (CopyPropagation) crashes on the latter inside closures.
  func uuid(at index: Int) -> BluetoothUUID? {
    switch elements[index].value {
    case .uuid(let uuid): return uuid
    default: return nil
    }
  }

  func unsigned(at index: Int) -> UInt64? {
    switch elements[index].value {
    case .unsigned(let value, _): return value
    default: return nil
    }
  }

  func isContainer(at index: Int) -> Bool {
    switch elements[index].value {
    case .sequence, .alternative: return true
    default: return false
    }
  }

  func text(at index: Int) -> String? {
    switch elements[index].value {
    case .text(let text, _): return text
    default: return nil
    }
  }

  /// The indices of the elements `container` holds, in order.
  func children(of container: Int) -> [Int] {
    var result: [Int] = []
    var index = container + 1
    while index < elements[container].end {
      result.append(index)
      index = elements[index].end
    }
    return result
  }

  /// Reads one data element (with all it holds) from `reader`. A length that overruns the
  /// element holding it, or the bytes, throws.
  static func read(_ reader: inout ByteReader) throws(DecodeError) -> SDPElements {
    var list = SDPElements()
    // Open containers: their index and the reader offset where their value ends.
    var open: [(index: Int, end: Int)] = []
    repeat {
      // Containers whose bytes are all read are complete.
      while let last = open.last, reader.offset >= last.end {
        list.elements[last.index].end = list.elements.count
        open.removeLast()
      }
      if !open.isEmpty || list.elements.isEmpty {
        let limit = open.last?.end ?? Int.max
        if list.elements.count >= maximumElements {
          // Enough: what the open containers still hold is skipped, not decoded.
          list.leftOut = true
          try reader.skip(min(limit, reader.offset + reader.remaining) - reader.offset)
          continue
        }
        try readOne(&reader, depth: open.count, limit: limit, into: &list, open: &open)
      }
    } while !open.isEmpty
    return list
  }

  /// One element's header and value; a container is opened, its elements read next.
  static func readOne(_ reader: inout ByteReader, depth: Int, limit: Int, into list: inout SDPElements, open: inout [(index: Int, end: Int)]) throws(DecodeError) {
    let start = reader.offset
    let header = try reader.readUInt8()
    let type = header >> 3
    let sizeIndex = header & 0x07
    let length: Int
    switch sizeIndex {
    case 0...4:
      // Nil has no value (its size index must be 0); the other fixed sizes are 1, 2, 4, 8, 16.
      length = type == 0 ? 0 : 1 << Int(sizeIndex)
    case 5: length = Int(try reader.readUInt8())
    case 6: length = Int(try reader.readUInt16BE())
    default: length = Int(try reader.readUInt32BE())
    }
    let valueStart = reader.offset
    if length > reader.remaining || valueStart + length > limit {
      // The element claims more than the bytes, or than the element holding it.
      let available = min(reader.remaining, max(0, limit - valueStart))
      throw DecodeError(.lengthMismatch(field: "data element size", declared: length, actual: available), layer: .sdp, offset: start)
    }
    let index = list.elements.count
    func add(_ value: SDPElement.Value) { list.elements.append(SDPElement(value: value, depth: depth, end: index + 1)) }
    switch (type, sizeIndex) {
    case (0, 0):
      add(.null)
    case (1, 0...3), (2, 0...3):
      var value: UInt64 = 0
      for _ in 0..<length { value = value << 8 | UInt64(try reader.readUInt8()) }
      if type == 1 {
        add(.unsigned(value, bytes: length))
      } else {
        // Sign-extend from the element's width.
        let shift = UInt64(64 - 8 * length)
        add(.signed(Int64(bitPattern: value << shift) >> Int64(shift), bytes: length))
      }
    case (1, 4), (2, 4):
      add(.wide(signed: type == 2, Array(try reader.readBytes(count: 16))))
    case (3, 1):
      add(.uuid(BluetoothUUID(uuid16: try reader.readUInt16BE())))
    case (3, 2):
      add(.uuid(BluetoothUUID(uuid32: try reader.readUInt32BE())))
    case (3, 4):
      let high = UInt64(try reader.readUInt32BE()) << 32 | UInt64(try reader.readUInt32BE())
      let low = UInt64(try reader.readUInt32BE()) << 32 | UInt64(try reader.readUInt32BE())
      add(.uuid(BluetoothUUID(high: high, low: low)))
    case (4, 5...7), (8, 5...7):
      let raw = Array(try reader.readBytes(count: length))
      let decoded = String(decoding: raw, as: UTF8.self)
      let text = decoded.utf8.elementsEqual(raw) ? decoded : nil
      add(type == 4 ? .text(text, raw: raw) : .url(text, raw: raw))
    case (5, 0):
      add(.bool(try reader.readUInt8() != 0))
    case (6, 5...7), (7, 5...7):
      if depth + 1 >= maximumDepth && length > 0 {
        // Deeper than decoded: its bytes, skipped as one (a sequence says its length).
        list.tooDeep += 1
        add(.undecoded(type: type, Array(try reader.readBytes(count: length))))
      } else {
        add(type == 6 ? .sequence : .alternative)
        open.append((index, valueStart + length))
      }
    default:
      // A reserved type, or a size index the type does not allow: its bytes.
      add(.undecoded(type: type, Array(try reader.readBytes(count: length))))
    }
  }
}

/// What a data element's type is called, as JSON keys and text labels.
extension SDPElement {
  var key: Name {
    switch value {
    case .null: return "nil"
    case .unsigned(_, let bytes):
      switch bytes {
      case 1: return "uint8"
      case 2: return "uint16"
      case 4: return "uint32"
      default: return "uint64"
      }
    case .signed(_, let bytes):
      switch bytes {
      case 1: return "int8"
      case 2: return "int16"
      case 4: return "int32"
      default: return "int64"
      }
    case .wide(let signed, _): return signed ? "int128" : "uint128"
    case .uuid: return "uuid"
    case .text(let text, _): return text == nil ? "text_bytes" : "text"
    case .url(let text, _): return text == nil ? "url_bytes" : "url"
    case .bool: return "bool"
    case .sequence: return "sequence"
    case .alternative: return "alternative"
    case .undecoded: return "undecoded"
    }
  }

  var typeLabel: Name {
    switch value {
    case .null: return "Nil"
    case .unsigned(_, let bytes):
      switch bytes {
      case 1: return "Uint8"
      case 2: return "Uint16"
      case 4: return "Uint32"
      default: return "Uint64"
      }
    case .signed(_, let bytes):
      switch bytes {
      case 1: return "Int8"
      case 2: return "Int16"
      case 4: return "Int32"
      default: return "Int64"
      }
    case .wide(let signed, _): return signed ? "Int128" : "Uint128"
    case .uuid: return "UUID"
    case .text: return "Text"
    case .url: return "URL"
    case .bool: return "Boolean"
    case .sequence: return "Sequence"
    case .alternative: return "Alternative"
    case .undecoded: return "Undecoded"
    }
  }
}
