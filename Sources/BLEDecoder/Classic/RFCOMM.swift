import BLECore

/// RFCOMM (the RFCOMM specification, adopting ETSI TS 07.10) on BR/EDR L2CAP channels opened for
/// PSM 0x0003: one frame per L2CAP PDU. Address (EA, C/R, DLCI: a server channel and the
/// direction bit), control (frame type, P/F), a length of one or two octets, on UIH frames
/// with P/F set under credit-based flow control a credits octet, the information, and the FCS
/// (TS 07.10 §5.2.1.6: over address and control for UIH, also the length for the others).
/// DLCI 0 carries the multiplexer's control messages (§5.4.6.3; RFCOMM §6.5).
public enum RFCOMM {
  static let psm: UInt16 = 0x0003

  /// TS 07.10 §5.2.1.3 frame types (the control octet without P/F).
  public static func frameTypeName(_ type: UInt8) -> Name? {
    switch type {
    case 0x2F: return "SABM"
    case 0x63: return "UA"
    case 0x0F: return "DM"
    case 0x43: return "DISC"
    case 0xEF: return "UIH"
    case 0x03: return "UI"
    default: return nil
    }
  }

  /// The frame types' long names (the code's `_name`).
  public static func frameTypeLongName(_ type: UInt8) -> Name? {
    switch type {
    case 0x2F: return "Set Asynchronous Balanced Mode (SABM)"
    case 0x63: return "Unnumbered Acknowledgement (UA)"
    case 0x0F: return "Disconnected Mode (DM)"
    case 0x43: return "Disconnect (DISC)"
    case 0xEF: return "Unnumbered Information with Header check (UIH)"
    case 0x03: return "Unnumbered Information (UI)"
    default: return nil
    }
  }

  /// Multiplexer control message types (the type octet's six high bits).
  public static func messageShortName(_ type: UInt8) -> Name? {
    switch type {
    case 0x20: return "PN"
    case 0x10: return "PSC"
    case 0x30: return "CLD"
    case 0x08: return "Test"
    case 0x28: return "FCon"
    case 0x18: return "FCoff"
    case 0x38: return "MSC"
    case 0x04: return "NSC"
    case 0x24: return "RPN"
    case 0x14: return "RLS"
    case 0x34: return "SNC"
    default: return nil
    }
  }

  public static func messageName(_ type: UInt8) -> Name? {
    switch type {
    case 0x20: return "DLC Parameter Negotiation (PN)"
    case 0x10: return "Power Saving Control (PSC)"
    case 0x30: return "Multiplexer Close Down (CLD)"
    case 0x08: return "Test"
    case 0x28: return "Flow Control On (FCon)"
    case 0x18: return "Flow Control Off (FCoff)"
    case 0x38: return "Modem Status (MSC)"
    case 0x04: return "Non Supported Command (NSC)"
    case 0x24: return "Remote Port Negotiation (RPN)"
    case 0x14: return "Remote Line Status (RLS)"
    case 0x34: return "Service Negotiation (SNC)"
    default: return nil
    }
  }

  /// RPN baud rate codes (TS 07.10 §5.4.6.3.9), in bit/s.
  public static func baudRate(_ code: UInt8) -> Int? {
    let rates = [2400, 4800, 7200, 9600, 19200, 38400, 57600, 115_200, 230_400]
    return Int(code) < rates.count ? rates[Int(code)] : nil
  }

  /// The FCS (TS 07.10 §5.2.1.6, Annex B): CRC-8 with polynomial x⁸ + x² + x + 1, bits taken
  /// least significant first, preset to ones, sent as the ones' complement.
  public static func checksum(_ bytes: [UInt8]) -> UInt8 {
    var crc: UInt8 = 0xFF
    for byte in bytes {
      crc ^= byte
      for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xE0 : crc >> 1 }
    }
    return 0xFF &- crc
  }

  /// One frame on a channel whose frames travel `direction`.
  static func dissect(
    _ payload: inout ByteReader, direction: Direction, link: inout ClassicLinkState, into frame: inout DissectedFrame
  ) throws(DecodeError) {
    frame.deepestLayer = .rfcomm
    payload.layer = .rfcomm
    let start = payload.offset
    let address = try payload.readUInt8()
    let control = try payload.readUInt8()
    let dlci = address >> 2
    let commandBit = address & 0x02 != 0
    let type = control & 0xEF
    let pollFinal = control & 0x10 != 0
    var fact = RFCOMMFact(frameType: type, dlci: dlci, pollFinal: pollFinal)
    frame.header = .rfcomm(fact)
    defer { frame.header = .rfcomm(fact) }

    // Who started the multiplexer: its SABM on DLCI 0 says; else the C/R bit does (TS 07.10
    // §5.2.1.2: commands from the initiator and responses from the responder set it; SABM,
    // DISC and UIH are commands, UA and DM responses).
    if type == 0x2F && dlci == 0 {
      link.rfcomm = RFCOMMLinkState()
      link.rfcomm.initiator = direction
    } else if link.rfcomm.initiator == nil, type != 0x03, frameTypeName(type) != nil {
      let isCommand = type == 0x2F || type == 0x43 || type == 0xEF
      link.rfcomm.initiator = isCommand == commandBit ? direction : direction.opposite
    }

    frame.fields.beginObject("rfcomm", "RFCOMM", inline: true)
    frame.fields.addVerbose("address", "Address", .unsigned(UInt64(address), .hex(2)))
    frame.fields.add("dlci", "DLCI", .unsigned(UInt64(dlci), .decimal))
    frame.fields.add("channel", "Server channel", .unsigned(UInt64(dlci >> 1), .decimal))
    frame.fields.addVerbose("direction_bit", "Direction bit", .unsigned(UInt64(dlci & 1), .decimal))
    frame.fields.addVerbose("cr", "C/R", .unsigned(commandBit ? 1 : 0, .decimal))
    if address & 0x01 == 0 { frame.fields.addVerbose("ea", "EA", .unsigned(0, .decimal)) }
    if dlci != 0, let initiator = link.rfcomm.initiator {
      // The direction bit says whose server channel it is: 0 the responder's, 1 the initiator's
      // (RFCOMM §5.4).
      let server = dlci & 1 == 0 ? initiator.opposite : initiator
      frame.fields.add("server", "Server", .staticText(server == .controllerToHost ? "peer" : "local"))
      if let service = link.sdp.rfcommService(channel: dlci >> 1, from: server) {
        fact.service = service
        frame.fields.add("service", "Service", .uuid(service, name: SDP.uuidName(service)))
      }
    }
    frame.fields.add("frame_type", "Frame type", .code(UInt64(type), width: 2, name: frameTypeLongName(type)))
    frame.fields.add("pf", "P/F", .unsigned(pollFinal ? 1 : 0, .decimal))

    let lengthOctet = try payload.readUInt8()
    var length = Int(lengthOctet >> 1)
    var header = [address, control, lengthOctet]
    if lengthOctet & 0x01 == 0 {
      let second = try payload.readUInt8()
      length |= Int(second) << 7
      header.append(second)
    }
    frame.fields.add("length", "Length", .unsigned(UInt64(length), .decimal))
    if type == 0xEF && pollFinal && dlci != 0 {
      let (credits, inferred) = link.rfcomm.carriesCredits(dlci: dlci)
      if credits {
        let value = try payload.readUInt8()
        fact.credits = value
        frame.fields.add("credits", "Credits", .unsigned(UInt64(value), .decimal))
        if inferred { frame.fields.addVerbose("credits_inferred", "Credits inferred (no parameter negotiation seen)", .bool(true)) }
      }
    }
    var information = try payload.readReader(count: length, layer: .rfcomm)
    let fcsOffset = payload.offset
    let fcs = try payload.readUInt8()
    if type == 0xEF {
      if dlci == 0 {
        if !information.isAtEnd { fact.content = .multiplexer(try multiplexer(&information, link: &link.rfcomm, into: &frame)) }
      } else if !information.isAtEnd {
        let data = information.readRemaining()
        if let text = printableText(data) {
          fact.content = .text(text)
          frame.fields.add("text", "Text", .text(text))
        } else {
          fact.content = .bytes(count: data.count, prefix: Array(data.prefix(SummaryPart.maximumBytes)))
          frame.fields.bytes("data", "Data", data)
        }
      }
    } else if !information.isAtEnd {
      frame.fields.bytes("information", "Information", information.readRemaining())
    }
    // UIH: address and control only; the other frames also the length.
    let expected = checksum(type == 0xEF ? Array(header.prefix(2)) : header)
    frame.fields.addVerbose("fcs", "FCS", .unsigned(UInt64(fcs), .hex(2)))
    if !payload.isAtEnd {
      frame.diagnostics.append(Diagnostic(.rfcommTrailingBytes, "\(payload.remaining) bytes after the FCS"))
      _ = payload.readRemaining()
    }
    if fcs != expected {
      frame.fields.add("fcs_expected", "FCS expected", .unsigned(UInt64(expected), .hex(2)))
      frame.diagnostics.append(Diagnostic(
        .rfcommFCSBad, "FCS " + Hex.prefixed(UInt64(fcs), width: 2) + " does not match the header's " + Hex.prefixed(UInt64(expected), width: 2)))
      if frame.malformed == nil {
        frame.malformed = DecodeError(.invalidValue(field: "FCS", value: UInt64(fcs)), layer: .rfcomm, offset: fcsOffset - start)
      }
    }
    frame.fields.end()
  }

  /// A multiplexer control message (TS 07.10 §5.4.6.1): a type octet (EA, C/R, six type bits),
  /// a length of EA-chained octets, the value.
  static func multiplexer(_ reader: inout ByteReader, link: inout RFCOMMLinkState, into frame: inout DissectedFrame) throws(DecodeError) -> RFCOMMMultiplexerFact {
    let typeOctet = try reader.readUInt8()
    let type = typeOctet >> 2
    var message = RFCOMMMultiplexerFact(type: type, command: typeOctet & 0x02 != 0)
    frame.fields.beginObject("mcc", "Multiplexer control")
    frame.fields.add("message", "Message", .code(UInt64(type), width: 2, name: messageName(type)))
    frame.fields.add("command", "Command", .bool(message.command))
    var length = 0
    for octet in 0..<4 {
      let byte = try reader.readUInt8()
      length |= Int(byte >> 1) << (7 * octet)
      if byte & 0x01 != 0 { break }
    }
    frame.fields.addVerbose("length", "Length", .unsigned(UInt64(length), .decimal))
    var value = try reader.readReader(count: length, layer: .rfcomm)
    switch type {
    case 0x20 where length >= 8:
      // PN (TS 07.10 §5.4.6.3.1; RFCOMM §5.5.3): DLCI, frame type and convergence layer,
      // priority, T1, N1 (little-endian), N2, and K (RFCOMM's initial credits).
      let dlci = try value.readUInt8() & 0x3F
      let layers = try value.readUInt8()
      let priority = try value.readUInt8() & 0x3F
      let timer = try value.readUInt8()
      let maxFrameSize = try value.readUInt16LE()
      let retransmissions = try value.readUInt8()
      let credits = try value.readUInt8() & 0x07
      let convergence = layers >> 4
      dlciFields(dlci, &frame.fields)
      frame.fields.add("frame_type", "Frame type", .code(UInt64(layers & 0x0F), width: 1, name: layers & 0x0F == 0 ? "UIH" : nil))
      frame.fields.add("convergence_layer", "Convergence layer", .code(UInt64(convergence), width: 1, name: convergenceName(convergence)))
      frame.fields.uint("priority", "Priority", priority)
      frame.fields.addVerbose("ack_timer", "Acknowledgement timer (T1)", .unsigned(UInt64(timer), .decimal))
      frame.fields.uint("max_frame_size", "Maximum frame size", maxFrameSize)
      frame.fields.addVerbose("max_retransmissions", "Maximum retransmissions (N2)", .unsigned(UInt64(retransmissions), .decimal))
      frame.fields.uint("initial_credits", "Initial credits", credits)
      message.detail = .parameters(dlci: dlci, convergence: convergence, priority: priority, maxFrameSize: maxFrameSize, credits: credits)
      // Credit-based flow control: asked for with 0xF, granted with 0xE (RFCOMM §6.5).
      let bit: UInt64 = 1 << UInt64(dlci)
      if !message.command {
        if convergence == 0x0E {
          link.creditFlow |= bit
          link.noCreditFlow &= ~bit
        } else {
          link.noCreditFlow |= bit
          link.creditFlow &= ~bit
        }
      }
    case 0x38 where length >= 2:
      // MSC (§5.4.6.3.7): DLCI, V.24 signals, and optionally a break octet.
      let dlci = try value.readUInt8() >> 2
      let signals = try value.readUInt8()
      dlciFields(dlci, &frame.fields)
      frame.fields.add("signals", "V.24 signals", .unsigned(UInt64(signals), .hex(2)))
      frame.fields.flag("fc", "Flow control (FC)", signals & 0x02 != 0)
      frame.fields.flag("rtc", "Ready to communicate (RTC)", signals & 0x04 != 0)
      frame.fields.flag("rtr", "Ready to receive (RTR)", signals & 0x08 != 0)
      frame.fields.flag("ic", "Incoming call (IC)", signals & 0x40 != 0)
      frame.fields.flag("dv", "Data valid (DV)", signals & 0x80 != 0)
      var breakOctet: UInt8?
      if !value.isAtEnd {
        let octet = try value.readUInt8()
        breakOctet = octet
        frame.fields.flag("break", "Break", octet & 0x02 != 0)
        frame.fields.measure("break_length", "Break length", octet >> 4, scale: 200, unit: "ms")
      }
      message.detail = .modemStatus(dlci: dlci, signals: signals, breakSignal: breakOctet)
    case 0x24 where length >= 1:
      // RPN (§5.4.6.3.9): DLCI; alone, a request for the port's settings.
      let dlci = try value.readUInt8() >> 2
      dlciFields(dlci, &frame.fields)
      var rate: UInt8?
      if value.remaining >= 7 {
        let baud = try value.readUInt8()
        let format = try value.readUInt8()
        let flow = try value.readUInt8()
        let xon = try value.readUInt8()
        let xoff = try value.readUInt8()
        let mask = try value.readUInt16LE()
        rate = baud
        frame.fields.add("baud_rate", "Baud rate", baudRate(baud).map { .codeText(UInt64(baud), width: 2, name: "\($0) bit/s") } ?? .code(UInt64(baud), width: 2, name: nil))
        frame.fields.uint("data_bits", "Data bits", 5 + (format & 0x03))
        frame.fields.add("stop_bits", "Stop bits", .staticText(format & 0x04 == 0 ? "1" : "1.5"))
        frame.fields.flag("parity", "Parity", format & 0x08 != 0)
        frame.fields.add("parity_type", "Parity type", .code(UInt64(format >> 4 & 0x03), width: 1, name: parityName(format >> 4 & 0x03)))
        frame.fields.add("flow_control", "Flow control", .unsigned(UInt64(flow & 0x3F), .hex(2)))
        frame.fields.add("xon", "XON", .unsigned(UInt64(xon), .hex(2)))
        frame.fields.add("xoff", "XOFF", .unsigned(UInt64(xoff), .hex(2)))
        frame.fields.add("parameter_mask", "Parameter mask", .unsigned(UInt64(mask), .hex(4)))
      }
      message.detail = .portNegotiation(dlci: dlci, baudRate: rate)
    case 0x14 where length >= 2:
      // RLS (§5.4.6.3.10): DLCI, line status (bit 0: an error; bits 1–3 which).
      let dlci = try value.readUInt8() >> 2
      let status = try value.readUInt8()
      dlciFields(dlci, &frame.fields)
      frame.fields.add("line_status", "Line status", .code(UInt64(status & 0x0F), width: 2, name: lineStatusName(status)))
      message.detail = .lineStatus(dlci: dlci, status: status)
    case 0x08:
      frame.fields.bytes("test_pattern", "Test pattern", value.readRemaining())
      message.detail = .test(bytes: length)
    case 0x04 where length >= 1:
      let octet = try value.readUInt8()
      frame.fields.add("unsupported", "Command not supported", .code(UInt64(octet >> 2), width: 2, name: messageName(octet >> 2)))
      frame.fields.add("unsupported_command", "Not supported as command", .bool(octet & 0x02 != 0))
      message.detail = .notSupported(typeOctet: octet)
    default:
      break
    }
    if !value.isAtEnd { frame.fields.bytes("value", "Value", value.readRemaining()) }
    if !reader.isAtEnd {
      frame.diagnostics.append(Diagnostic(.rfcommTrailingBytes, "\(reader.remaining) bytes after the multiplexer message"))
      frame.fields.bytes("trailing", "Trailing bytes", reader.readRemaining())
    }
    frame.fields.end()
    return message
  }

  static func dlciFields(_ dlci: UInt8, _ fields: inout FieldList) {
    fields.add("dlci", "DLCI", .unsigned(UInt64(dlci), .decimal))
    fields.add("channel", "Server channel", .unsigned(UInt64(dlci >> 1), .decimal))
  }

  public static func convergenceName(_ value: UInt8) -> Name? {
    switch value {
    case 0x0: return "no credit-based flow control"
    case 0xF: return "credit-based flow control asked for"
    case 0xE: return "credit-based flow control granted"
    default: return nil
    }
  }

  static func parityName(_ value: UInt8) -> Name? {
    switch value {
    case 0: return "odd"
    case 1: return "even"
    case 2: return "mark"
    default: return "space"
    }
  }

  public static func lineStatusName(_ status: UInt8) -> Name? {
    guard status & 0x01 != 0 else { return "no error" }
    switch status & 0x0E {
    case 0x02: return "overrun error"
    case 0x04: return "parity error"
    case 0x08: return "framing error"
    default: return nil
    }
  }

  /// UIH data as text when it is UTF-8 of printable characters, tabs and line ends (AT
  /// commands and results: `AT+BRSF=…\r`, `\r\nOK\r\n`), else nil.
  static func printableText(_ data: ByteView) -> String? {
    let text = String(decoding: data, as: UTF8.self)
    guard text.utf8.elementsEqual(data) else { return nil }
    for scalar in text.unicodeScalars where TextPayload.countsAsControl(scalar.value) { return nil }
    return text
  }
}
