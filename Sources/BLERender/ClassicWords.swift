import BLECore
import BLEDecoder

/// Header words of the BR/EDR protocols on L2CAP channels: SDP and RFCOMM.
extension HeaderWords {
  // MARK: - SDP

  /// "Headset; all attributes", "2 records: 0x00010002, 0x00010003", "Headset on RFCOMM 11;
  /// Handsfree on RFCOMM 12", "part 2, 71 bytes, 142 so far".
  static func sdpWords(_ fact: SDPFact) -> String {
    var text: String
    switch fact.detail {
    case .none: return ""
    case .error(let code):
      return AssignedNumbers.sdpErrorName(code)?.description ?? "error " + hex(code, 4)
    case let .search(pattern, attributes):
      text = pattern.isEmpty ? "no UUID" : pattern.map(uuidText).joined(separator: ", ")
      if let attributes { text += "; " + attributesText(attributes, classes: pattern) }
    case let .attributeRequest(handle, attributes):
      text = "record " + hex(handle, 8) + "; " + attributesText(attributes, classes: [])
    case let .handles(total, handles):
      let count = handles.count == Int(total) ? "\(total)" : "\(handles.count) of \(total)"
      text = count + (total == 1 ? " record" : " records")
      if !handles.isEmpty { text += ": " + handles.prefix(8).map { hex($0, 8) }.joined(separator: ", ") + (handles.count > 8 ? ", …" : "") }
    case let .part(index, bytes, held):
      if index == 0 || held == nil {
        text = "part, \(bytes) bytes (not joined)"
      } else if index == 1 {
        text = "part 1, \(bytes) bytes"
      } else {
        text = "part \(index), \(bytes) bytes, \(held!) so far"
      }
    case let .records(records, firstFrame, parts):
      text = records.isEmpty ? "no records" : records.map(recordText).joined(separator: "; ")
      if let firstFrame, parts > 1 { text += " (joined from #\(firstFrame), \(parts) PDUs)" }
      return text
    }
    if fact.continuation { text += fact.pdu & 1 == 0 ? " (continuing)" : " (more follows)" }
    return text
  }

  /// A UUID by its name, else in hex.
  static func uuidText(_ uuid: BluetoothUUID) -> String {
    SDP.uuidName(uuid)?.description ?? uuid.description
  }

  /// "all attributes", "BluetoothProfileDescriptorList, SupportedFeatures", "0x0100–0x01ff".
  static func attributesText(_ ranges: [ClosedRange<UInt16>], classes: [BluetoothUUID]) -> String {
    if ranges.isEmpty { return "no attributes" }
    if ranges.count == 1, ranges[0] == 0x0000...0xFFFF { return "all attributes" }
    return ranges.map { range in
      if range.count == 1 { return SDP.attributeName(range.lowerBound, classes: classes)?.description ?? hex(range.lowerBound, 4) }
      return hex(range.lowerBound, 4) + "–" + hex(range.upperBound, 4)
    }.joined(separator: ", ")
  }

  /// `Handsfree "Hands-Free unit" on RFCOMM 3`, `Audio Sink on PSM 0x0019`, `record 0x00010001`;
  /// a record without its classes by its profile (`Advanced Audio Distribution 1.3`).
  static func recordText(_ record: SDPRecordFact) -> String {
    var text: String
    if let serviceClass = record.serviceClass {
      text = uuidText(serviceClass)
    } else if let profile = record.profile {
      text = uuidText(profile) + (record.profileVersion.map { " \($0 >> 8).\($0 & 0xFF)" } ?? "")
    } else {
      text = record.handle.map { "record " + hex($0, 8) } ?? "record"
    }
    if let name = record.name, name != text { text += " " + TextPayload.quoted(name, limit: 40) }
    if let channel = record.rfcommChannel {
      text += " on RFCOMM \(channel)"
    } else if let psm = record.psm {
      text += " on PSM " + hex(psm, 4)
    }
    return text
  }

  // MARK: - RFCOMM

  /// The frame type ("SABM", "UIH"), or for a multiplexer message its short name and kind
  /// ("PN command", "MSC response").
  static func rfcommTitle(_ fact: RFCOMMFact) -> Name {
    guard case .multiplexer(let message) = fact.content else {
      return RFCOMM.frameTypeName(fact.frameType) ?? "RFCOMM frame"
    }
    switch (message.type, message.command) {
    case (0x20, true): return "PN command"
    case (0x20, false): return "PN response"
    case (0x38, true): return "MSC command"
    case (0x38, false): return "MSC response"
    case (0x24, true): return "RPN command"
    case (0x24, false): return "RPN response"
    case (0x14, true): return "RLS command"
    case (0x14, false): return "RLS response"
    case (0x08, true): return "Test command"
    case (0x08, false): return "Test response"
    case (0x28, true): return "FCon command"
    case (0x28, false): return "FCon response"
    case (0x18, true): return "FCoff command"
    case (0x18, false): return "FCoff response"
    case (0x04, _): return "NSC response"
    case (0x10, true): return "PSC command"
    case (0x10, false): return "PSC response"
    case (0x30, true): return "CLD command"
    case (0x30, false): return "CLD response"
    case (0x34, true): return "SNC command"
    case (0x34, false): return "SNC response"
    default: return message.command ? "Multiplexer command" : "Multiplexer response"
    }
  }

  /// "channel 11 (Headset), 33 credits: \"AT+VGS=13\\r\"", "multiplexer",
  /// "channel 11, credit-based flow control asked for, max frame 1008, 7 credits".
  static func rfcommWords(_ fact: RFCOMMFact) -> String {
    if case .multiplexer(let message) = fact.content { return multiplexerWords(message) }
    var text = fact.dlci == 0 ? "multiplexer" : "channel \(fact.channel)"
    if let service = fact.service { text += " (" + uuidText(service) + ")" }
    if let credits = fact.credits { text += ", " + Words.count(Int(credits), "credit") }
    switch fact.content {
    case .text(let data): text += ": " + TextPayload.quoted(data)
    case let .bytes(count, prefix):
      text += ": \(Words.count(count, "byte")): " + prefix.map { Hex.string([$0]) }.joined(separator: " ") + (count > prefix.count ? " …" : "")
    case .none, .multiplexer: break
    }
    return text
  }

  static func multiplexerWords(_ message: RFCOMMMultiplexerFact) -> String {
    switch message.detail {
    case .none: return ""
    case let .parameters(dlci, convergence, priority, maxFrameSize, credits):
      var text = "channel \(dlci >> 1)"
      if let name = RFCOMM.convergenceName(convergence) { text += ", " + name.description }
      text += ", priority \(priority), max frame \(maxFrameSize)"
      if convergence == 0x0F || convergence == 0x0E { text += ", " + Words.count(Int(credits), "credit") }
      return text
    case let .modemStatus(dlci, signals, breakSignal):
      let names: [(UInt8, String)] = [(0x02, "FC"), (0x04, "RTC"), (0x08, "RTR"), (0x40, "IC"), (0x80, "DV")]
      let set = names.filter { signals & $0.0 != 0 }.map(\.1)
      var text = "channel \(dlci >> 1): " + (set.isEmpty ? "no signals" : set.joined(separator: " "))
      if let breakSignal, breakSignal & 0x02 != 0 { text += ", break \(Int(breakSignal >> 4) * 200) ms" }
      return text
    case let .portNegotiation(dlci, baudRate):
      guard let baudRate else { return "channel \(dlci >> 1): request" }
      return "channel \(dlci >> 1): " + (RFCOMM.baudRate(baudRate).map { "\($0) bit/s" } ?? "baud rate " + hex(baudRate, 2))
    case let .lineStatus(dlci, status):
      return "channel \(dlci >> 1): " + (RFCOMM.lineStatusName(status)?.description ?? "status " + hex(status, 2))
    case .test(let bytes): return Words.count(bytes, "byte")
    case .notSupported(let octet):
      return (RFCOMM.messageShortName(octet >> 2)?.description ?? "type " + hex(octet >> 2, 2)) + (octet & 0x02 != 0 ? " command" : " response")
        + " not supported"
    }
  }
}
