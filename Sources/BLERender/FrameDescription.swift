import BLECore
import BLEDecoder

/// The header line's words, derived from a frame's facts: its title, the protocol it belongs
/// to, and the summary after the title. Decoding never builds them; renderers ask.
package enum FrameDescription {
  /// The protocol item's name ("Handle Value Notification", "LE Set Scan Enable").
  package static func title(_ frame: borrowing DissectedFrame) -> Name {
    title(frame, attOpcode: frame.attOpcode)
  }

  /// The title, given the frame's ATT opcode (read once by a renderer: each read of
  /// `frame.att` copies the whole fact).
  package static func title(_ frame: borrowing DissectedFrame, attOpcode: UInt8?) -> Name {
    if let attOpcode { return AssignedNumbers.attOpcodeName(attOpcode) ?? "Unknown PDU" }
    return HeaderWords.title(frame)
  }

  /// The title, for renderers, which hold frames `inout`: handed on from there to a borrowing
  /// parameter, the whole frame (600 bytes) is copied for the call.
  static func title(_ frame: inout DissectedFrame, attOpcode: UInt8?) -> Name {
    if let attOpcode { return AssignedNumbers.attOpcodeName(attOpcode) ?? "Unknown PDU" }
    return HeaderWords.title(frame)
  }

  /// The layer above HCI the title belongs to ("ATT", "SMP", "L2CAP"), or empty.
  package static func layerLabel(_ frame: borrowing DissectedFrame) -> Name {
    layerLabel(frame, attOpcode: frame.attOpcode)
  }

  package static func layerLabel(_ frame: borrowing DissectedFrame, attOpcode: UInt8?) -> Name {
    attOpcode != nil ? "ATT" : HeaderWords.layerLabel(frame)
  }

  /// The layer label, for renderers, which hold frames `inout` (as `title`: handed on to a
  /// borrowing parameter, the whole frame would be copied for the call).
  static func layerLabel(_ frame: inout DissectedFrame, attOpcode: UInt8?) -> Name {
    attOpcode != nil ? "ATT" : HeaderWords.layerLabel(frame)
  }

  /// Writes the summary into `line` (emptied first); returns what joins it to the title: " "
  /// when it continues the title ("Read Request 0x0010 …"), else ": ".
  /// (Renderers hold frames `inout`: the attribute facts are then read where they lie.)
  package static func summary(_ frame: inout DissectedFrame, into line: inout SummaryLine) -> Name {
    line.removeAll(keepingCapacity: true)
    guard let opcode = frame.attOpcode, let operation = frame.att?.operation else {
      HeaderWords.write(frame, into: &line)
      return ": "
    }
    return attSummary(opcode, operation, &frame, into: &line)
  }

  /// The summary as text (tests, tools).
  package static func summaryText(_ frame: borrowing DissectedFrame) -> String {
    var line = SummaryLine()
    var copy = copy frame
    _ = summary(&copy, into: &line)
    return line.text
  }

  static func attSummary(_ opcode: UInt8, _ operation: ATTOperationFact, _ frame: inout DissectedFrame, into line: inout SummaryLine) -> Name {
    switch operation {
    case .plain:
      attributes(&frame, into: &line)
    case let .error(request, handle, code):
      line.append(.text(AssignedNumbers.attOpcodeName(request) ?? "Unknown PDU"))
      line.append(.text(" "))
      line.append(.hex(UInt64(handle), width: 4))
      line.append(.text(": "))
      line.append(.text(frame.att?.errorName ?? AssignedNumbers.attErrorName(code) ?? "error"))
      // A long read that an error ended: the value read.
      if !frame.attributes.isEmpty {
        line.append(.text(": "))
        attributes(&frame, into: &line)
      }
    case .exchangeMTU(let client):
      line.append(.text("client MTU "))
      line.append(.number(Int(client)))
    case let .exchangeMTUResponse(server, mtu):
      line.append(.text("server MTU "))
      line.append(.number(Int(server)))
      line.append(.text(", ATT_MTU "))
      line.append(.number(mtu))
    case let .range(start, end, type, value):
      line.append(.hex(UInt64(start), width: 4))
      line.append(.text("–"))
      line.append(.hex(UInt64(end), width: 4))
      if opcode == 0x06 {
        if let value {
          line.append(.text(", "))
          line.append(.text(GATTDatabase.name(value) ?? "service"))
        }
      } else if let type {
        line.append(.text(" "))
        line.append(.text(GATTDatabase.name(type) ?? "type"))
      }
    case let .found(count, noun):
      line.append(.number(count))
      switch noun {
      case .attributes: line.append(.text(count == 1 ? " attribute" : " attributes"))
      case .services: line.append(.text(count == 1 ? " service" : " services"))
      case .characteristics: line.append(.text(count == 1 ? " characteristic" : " characteristics"))
      }
    case .handles(let count):
      line.append(.number(count))
      line.append(.text(" handles"))
    case let .longReadPart(total, first):
      attributes(&frame, into: &line)
      line.append(.text(first ? ": first " : ": "))
      line.append(.number(total))
      line.append(.text(first ? " bytes of a long value" : " bytes so far"))
    case .readBlobRequest(let offset):
      attributes(&frame, into: &line)
      line.append(.text(" at offset "))
      line.append(.number(Int(offset)))
    case let .prepareWrite(offset, length):
      attributes(&frame, into: &line)
      line.append(.text(", "))
      line.append(.number(length))
      line.append(.text(" bytes at offset "))
      line.append(.number(Int(offset)))
    case .executeWrite(let cancelled):
      if let cancelled {
        line.append(.text("cancel "))
        line.append(.number(cancelled))
        line.append(.text(cancelled == 1 ? " prepared write" : " prepared writes"))
      } else if frame.attributes.isEmpty {
        line.append(.text("nothing prepared"))
      } else {
        attributes(&frame, into: &line)
      }
    case .unattributedValue(let range):
      line.append(.bytes(frame.valueBytes(range)))
    }
    // Words that begin with a handle continue the title.
    if line.startsWithHex { return " " }
    return ": "
  }

  /// Where a meaning the capture did not show came from: " (map)", " (inferred, 97 %)".
  static func provenance(_ source: GATTSource, confidence: UInt8?, into line: inout SummaryLine) {
    switch source {
    case .capture: return
    case .imported: line.append(.text(" (map)"))
    case .cache: line.append(.text(" (cached map)"))
    case .layout: line.append(.text(" (map by layout)"))
    case .inferred:
      line.append(.text(" (inferred"))
      if let confidence {
        line.append(.text(", "))
        line.append(.number(Int(confidence)))
        line.append(.text(" %"))
      }
      line.append(.text(")"))
    }
  }

  /// Each attribute: its handle, its name, and its value's words (or bytes), joined by "; ".
  /// Compact (`-1`): the handle, the value, then the name after a dash, so the value is what a
  /// narrow terminal keeps.
  static func attributes(_ frame: inout DissectedFrame, into line: inout SummaryLine) {
    for index in frame.attributes.indices {
      if index > 0 { line.append(.text("; ")) }
      // The fact is read where it lies (a copy would retain its typed value); raw bytes it
      // asks for are the frame's, appended once the fact is handed back.
      let (bytes, malformed, nameAfter) = frame.withAttribute(index) { fact in
        let words = attribute(fact, into: &line)
        return (words.raw, fact.isMalformed, words.nameAfter)
      }
      if let bytes {
        if malformed {
          line.append(.bytes(frame.valueBytes(bytes)))
        } else {
          rawValue(frame.valueBytes(bytes), into: &line)
        }
      }
      if nameAfter {
        line.append(.text(" — "))
        frame.withAttribute(index) { fact in name(fact, into: &line) }
      }
    }
  }

  /// A raw value with no decoder: quoted text when it reads as a line of text (a UART's or an
  /// AT command's, `"AT+BOND\r\n"`, escaped by the one escaper), else its bytes in hex.
  static func rawValue(_ bytes: ArraySlice<UInt8>, into line: inout SummaryLine) {
    if let text = TextPayload.quotedIfText(bytes) {
      line.append(.string(text))
    } else {
      line.append(.bytes(bytes))
    }
  }

  /// Whether an attribute's words include a value (or its bytes).
  static func hasValueWords(_ fact: borrowing AttributeFact) -> Bool {
    if fact.hasValue { return true }
    guard let raw = fact.rawValue else { return false }
    return !raw.isEmpty
  }

  /// The attribute's name (or UUID), "probably" when inferred, and where a meaning not from
  /// the capture came from.
  static func name(_ fact: borrowing AttributeFact, into line: inout SummaryLine) {
    let meaning = fact.meaning
    if let name = meaning?.name {
      if meaning?.source == .inferred { line.append(.text("probably ")) }
      line.append(.text(name))
    } else if let uuid = meaning?.characteristic ?? meaning?.descriptor ?? meaning?.service {
      line.append(.string(uuid.description))
    }
    if let source = meaning?.source, source != .capture { provenance(source, confidence: meaning?.confidence, into: &line) }
  }

  /// Writes an attribute's words; returns the raw value's place when its bytes are to follow,
  /// and whether its name is to follow the value (`-1`, `attributes` writes it).
  static func attribute(_ fact: borrowing AttributeFact, into line: inout SummaryLine) -> (raw: Range<Int>?, nameAfter: Bool) {
    line.append(.hex(UInt64(fact.handle), width: 4))
    let meaning = fact.meaning
    let named = meaning?.name != nil || meaning?.characteristic != nil
    var nameAfter = false
    if line.compact, named { nameAfter = hasValueWords(fact) }
    if !nameAfter {
      if named || meaning?.descriptor != nil || meaning?.service != nil { line.append(.text(" ")) }
      name(fact, into: &line)
    }
    return (words(fact, into: &line), nameAfter)
  }

  /// The value's words after the name: ": " and its summary, or the place of its raw bytes.
  static func words(_ fact: borrowing AttributeFact, into line: inout SummaryLine) -> Range<Int>? {
    let raw = fact.rawValue
    if fact.isMalformed, let raw {
      line.append(.text(": malformed value "))
      return raw
    } else if fact.hasValue {
      line.append(.text(": "))
      fact.summarizeValue(into: &line)
    } else if let raw, !raw.isEmpty {
      line.append(.text(": "))
      return raw
    }
    return nil
  }
}

extension DissectedFrame {
  /// The header line's summary as text (tests, tools); renderers write the parts.
  package var summaryText: String { FrameDescription.summaryText(self) }
  /// The header line's title as text (tests, tools).
  package var titleText: String { FrameDescription.title(self).description }
}
