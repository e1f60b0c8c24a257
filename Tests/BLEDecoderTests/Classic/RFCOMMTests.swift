import Testing
import BLECore
import BLERender
@testable import BLEDecoder

/// RFCOMM (TS 07.10 as the RFCOMM specification adopts it) on a BR/EDR channel for PSM 0x0003:
/// frame types, address, length, credits, FCS, the multiplexer commands, UIH data, and the
/// services SDP advertised on the channels.
@Suite struct RFCOMMTests {
  typealias R = RFCOMMBytes
  let tx = Direction.hostToController
  let rx = Direction.controllerToHost
  static let handle: UInt16 = 0x000C

  /// A link with an RFCOMM channel (to the peer's CID 0x0051, from it to our 0x0050), and, when
  /// `sdp`, an SDP exchange first in which the peer advertises Serial Port on channel 2 and
  /// Handsfree on channel 5.
  func rfcommLink(sdp: Bool = false) -> LinkTranscript {
    var t = LinkTranscript()
    _ = t.connectClassic(handle: Self.handle, peer: "C0:28:8D:4B:0E:25")
    if sdp {
      typealias S = SDPBytes
      t.openChannel(handle: Self.handle, psm: 0x0001, local: 0x0040, remote: 0x0041, identifier: 1)
      _ = t.l2cap(handle: Self.handle, tx, cid: 0x0041, S.pdu(0x06, transaction: 1, S.sequence(S.uuid16(0x0003)) + S.be(0xFFFF, 2) + S.sequence(S.uint32(0xFFFF)) + S.continuation()))
      let handsfree = S.sequence(S.uint16(0x0001), S.sequence(S.uuid16(0x111E), S.uuid16(0x1203)), S.uint16(0x0004), S.sequence(S.sequence(S.uuid16(0x0100)), S.sequence(S.uuid16(0x0003), S.uint8(5))))
      let lists = S.sequence(S.serialPortRecord(handle: 0x0001_0001, channel: 2, name: "SPP"), handsfree)
      _ = t.l2cap(handle: Self.handle, rx, cid: 0x0040, S.pdu(0x07, transaction: 1, S.be(UInt64(lists.count), 2) + lists + S.continuation()))
    }
    t.openChannel(handle: Self.handle, psm: 0x0003, local: 0x0050, remote: 0x0051, identifier: 2)
    return t
  }

  func send(_ t: inout LinkTranscript, _ frame: [UInt8]) -> DissectedFrame { t.l2cap(handle: Self.handle, tx, cid: 0x0051, frame) }
  func receive(_ t: inout LinkTranscript, _ frame: [UInt8]) -> DissectedFrame { t.l2cap(handle: Self.handle, rx, cid: 0x0050, frame) }

  func fact(_ frame: DissectedFrame) -> RFCOMMFact? {
    if case .rfcomm(let fact) = frame.header { return fact }
    return nil
  }

  /// Frames of ue_boom_classic_nopairing.pcapng as captured: the FCS the decoder checks is
  /// the one the devices sent, and the test's own CRC gives the same.
  @Test func capturedFramesAndTheirFCS() {
    var t = rfcommLink()
    let sabm: [UInt8] = [0x03, 0x3F, 0x01, 0x1C]
    #expect(R.fcs([0x03, 0x3F, 0x01]) == 0x1C)
    #expect(RFCOMM.checksum([0x03, 0x3F, 0x01]) == 0x1C)
    let opened = send(&t, sabm)
    #expect(opened.titleText == "SABM")
    #expect(opened.summaryText == "multiplexer")
    #expect(opened.deepestLayer == .rfcomm)
    #expect(opened.malformed == nil)
    #expect(opened.fields.uint("rfcomm.dlci") == 0)
    #expect(opened.fields.uint("rfcomm.frame_type") == 0x2F)
    #expect(opened.fields.uint("rfcomm.pf") == 1)
    #expect(opened.fields.uint("rfcomm.fcs") == 0x1C)
    #expect(t.dissector.connections.entries[0].link.classic.rfcomm.initiator == tx)

    let pn: [UInt8] = [0x03, 0xEF, 0x15, 0x83, 0x11, 0x16, 0xF0, 0x07, 0x00, 0xF0, 0x03, 0x00, 0x07, 0x70]
    let negotiation = send(&t, pn)
    #expect(negotiation.malformed == nil)
    #expect(negotiation.titleText == "PN command")
    #expect(negotiation.summaryText == "channel 11, credit-based flow control asked for, priority 7, max frame 1008, 7 credits")
    #expect(negotiation.fields.uint("rfcomm.length") == 10)
    #expect(negotiation.fields.uint("rfcomm.mcc.message") == 0x20)
    #expect(negotiation.fields.name("rfcomm.mcc.message") == "DLC Parameter Negotiation (PN)")
    #expect(negotiation.fields.bool("rfcomm.mcc.command") == true)
    #expect(negotiation.fields.uint("rfcomm.mcc.dlci") == 22)
    #expect(negotiation.fields.uint("rfcomm.mcc.channel") == 11)
    #expect(negotiation.fields.uint("rfcomm.mcc.convergence_layer") == 0xF)
    #expect(negotiation.fields.uint("rfcomm.mcc.priority") == 7)
    #expect(negotiation.fields.uint("rfcomm.mcc.ack_timer") == 0)
    #expect(negotiation.fields.uint("rfcomm.mcc.max_frame_size") == 1008)
    #expect(negotiation.fields.uint("rfcomm.mcc.max_retransmissions") == 0)
    #expect(negotiation.fields.uint("rfcomm.mcc.initial_credits") == 7)
    guard case .multiplexer(let message)? = fact(negotiation)?.content else {
      Issue.record("no multiplexer message")
      return
    }
    #expect(message.detail == .parameters(dlci: 22, convergence: 0xF, priority: 7, maxFrameSize: 1008, credits: 7))
  }

  @Test func sessionWithCreditsAndText() {
    var t = rfcommLink(sdp: true)
    _ = send(&t, R.frame(dlci: 0, command: true, type: 0x2F, pollFinal: true))
    let ua = receive(&t, R.frame(dlci: 0, command: true, type: 0x63, pollFinal: true))
    #expect(ua.titleText == "UA")
    // PN for DLCI 4 (channel 2 on the peer, the responder): credit-based flow control granted.
    _ = send(&t, R.multiplexer(command: true, type: 0x20, [0x04, 0xF0, 0x00, 0x00, 0x7F, 0x00, 0x00, 0x07]))
    let granted = receive(&t, R.multiplexer(command: false, frameCommand: false, type: 0x20, [0x04, 0xE0, 0x00, 0x00, 0x7F, 0x00, 0x00, 0x03]))
    #expect(granted.titleText == "PN response")
    #expect(granted.summaryText == "channel 2, credit-based flow control granted, priority 0, max frame 127, 3 credits")
    let sabm = send(&t, R.frame(dlci: 4, command: true, type: 0x2F, pollFinal: true))
    #expect(sabm.summaryText == "channel 2 (Serial Port)")
    #expect(sabm.fields.text("rfcomm.server") == "peer")
    #expect(sabm.fields.name("rfcomm.service") == "Serial Port")
    #expect(fact(sabm)?.service == BluetoothUUID(uuid16: 0x1101))

    // UIH with P/F: a credits octet, then the data.
    let credits = send(&t, R.frame(dlci: 4, command: true, type: 0xEF, pollFinal: true, credits: 33))
    #expect(credits.summaryText == "channel 2 (Serial Port), 33 credits")
    #expect(credits.fields.uint("rfcomm.credits") == 33)
    #expect(credits.fields.value("rfcomm.credits_inferred") == nil)
    #expect(credits.malformed == nil)
    let command = receive(&t, R.frame(dlci: 4, command: false, type: 0xEF, pollFinal: true, credits: 1, Array("AT+BRSF=948\r".utf8)))
    #expect(command.summaryText == "channel 2 (Serial Port), 1 credit: \"AT+BRSF=948\\r\"")
    #expect(command.fields.text("rfcomm.text") == "AT+BRSF=948\r")
    #expect(fact(command)?.content == .text("AT+BRSF=948\r"))
    let result = send(&t, R.frame(dlci: 4, command: true, type: 0xEF, Array("\r\n+BRSF:4077\r\n\r\nOK\r\n".utf8)))
    #expect(result.summaryText == "channel 2 (Serial Port): \"\\r\\n+BRSF:4077\\r\\n\\r\\nOK\\r\\n\"")
    // Binary data, with a length of two octets (128 bytes or more).
    let block = (0..<200).map { UInt8($0) }
    let binary = send(&t, R.frame(dlci: 4, command: true, type: 0xEF, block))
    #expect(binary.malformed == nil)
    #expect(binary.fields.uint("rfcomm.length") == 200)
    #expect(binary.fields.text("rfcomm.data") == Hex.string(block))
    #expect(binary.summaryText == "channel 2 (Serial Port): 200 bytes: 00 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f …")
    // A control character other than a line end or tab: bytes, not text.
    let escape = send(&t, R.frame(dlci: 4, command: true, type: 0xEF, Array("\u{1B}[2J".utf8)))
    #expect(escape.fields.text("rfcomm.data") == "1b5b324a")
    #expect(escape.fields.value("rfcomm.text") == nil)

    // DLCI 11 is channel 5 on the initiator (us, D = 1): the peer's Handsfree is on DLCI 10.
    let own = receive(&t, R.frame(dlci: 11, command: false, type: 0x2F, pollFinal: true))
    #expect(own.fields.text("rfcomm.server") == "local")
    #expect(own.fields.value("rfcomm.service") == nil)
    let handsfree = send(&t, R.frame(dlci: 10, command: true, type: 0x2F, pollFinal: true))
    #expect(handsfree.summaryText == "channel 5 (Handsfree)")
    let disc = send(&t, R.frame(dlci: 4, command: true, type: 0x43, pollFinal: true))
    #expect(disc.titleText == "DISC")
    let dm = receive(&t, R.frame(dlci: 6, command: true, type: 0x0F, pollFinal: true))
    #expect(dm.titleText == "DM")
    #expect(dm.summaryText == "channel 3")
  }

  @Test func multiplexerCommands() {
    var t = rfcommLink()
    _ = send(&t, R.frame(dlci: 0, command: true, type: 0x2F, pollFinal: true))
    // MSC with a break octet: RTC, RTR, DV; a break of 3 × 200 ms.
    let msc = send(&t, R.multiplexer(command: true, type: 0x38, [0x4 << 2 | 0x03, 0x8D, 0x33]))
    #expect(msc.titleText == "MSC command")
    #expect(msc.summaryText == "channel 2: RTC RTR DV, break 600 ms")
    #expect(msc.fields.uint("rfcomm.mcc.dlci") == 4)
    #expect(msc.fields.uint("rfcomm.mcc.signals") == 0x8D)
    #expect(msc.fields.bool("rfcomm.mcc.fc") == false)
    #expect(msc.fields.bool("rfcomm.mcc.rtc") == true)
    #expect(msc.fields.bool("rfcomm.mcc.rtr") == true)
    #expect(msc.fields.bool("rfcomm.mcc.ic") == false)
    #expect(msc.fields.bool("rfcomm.mcc.dv") == true)
    #expect(msc.fields.bool("rfcomm.mcc.break") == true)
    #expect(msc.fields.uint("rfcomm.mcc.break_length") == 3)
    let mscResponse = receive(&t, R.multiplexer(command: false, frameCommand: false, type: 0x38, [0x4 << 2 | 0x03, 0x01]))
    #expect(mscResponse.titleText == "MSC response")
    #expect(mscResponse.summaryText == "channel 2: no signals")
    // RPN: a request (the DLCI alone), then 9600 bit/s, 8 data bits, 1 stop bit, no parity.
    let ask = send(&t, R.multiplexer(command: true, type: 0x24, [0x4 << 2 | 0x03]))
    #expect(ask.summaryText == "channel 2: request")
    let rpn = receive(&t, R.multiplexer(command: false, frameCommand: false, type: 0x24, [0x4 << 2 | 0x03, 0x03, 0x03, 0x00, 0x11, 0x13, 0xFF, 0x3F]))
    #expect(rpn.titleText == "RPN response")
    #expect(rpn.summaryText == "channel 2: 9600 bit/s")
    #expect(rpn.fields.uint("rfcomm.mcc.baud_rate") == 3)
    #expect(rpn.fields.uint("rfcomm.mcc.data_bits") == 8)
    #expect(rpn.fields.bool("rfcomm.mcc.parity") == false)
    #expect(rpn.fields.uint("rfcomm.mcc.xon") == 0x11)
    #expect(rpn.fields.uint("rfcomm.mcc.parameter_mask") == 0x3FFF)
    // RLS: an overrun error.
    let rls = send(&t, R.multiplexer(command: true, type: 0x14, [0x4 << 2 | 0x03, 0x03]))
    #expect(rls.summaryText == "channel 2: overrun error")
    #expect(rls.fields.name("rfcomm.mcc.line_status") == "overrun error")
    // Test, flow control, and a command the other side does not support.
    let test = send(&t, R.multiplexer(command: true, type: 0x08, [1, 2, 3, 4]))
    #expect(test.titleText == "Test command")
    #expect(test.summaryText == "4 bytes")
    #expect(test.fields.text("rfcomm.mcc.test_pattern") == "01020304")
    #expect(send(&t, R.multiplexer(command: true, type: 0x28, [])).titleText == "FCon command")
    #expect(send(&t, R.multiplexer(command: true, type: 0x18, [])).titleText == "FCoff command")
    let nsc = receive(&t, R.multiplexer(command: false, frameCommand: false, type: 0x04, [0x10 << 2 | 0x03]))
    #expect(nsc.titleText == "NSC response")
    #expect(nsc.summaryText == "PSC command not supported")
    #expect(nsc.fields.name("rfcomm.mcc.unsupported") == "Power Saving Control (PSC)")
    // A message followed by bytes it does not hold.
    let extra = send(&t, R.frame(dlci: 0, command: true, type: 0xEF, [0x28 << 2 | 0x03, 0x01, 0xAA]))
    #expect(extra.diagnostics.map(\.code) == ["rfcomm.trailing_bytes"])
  }

  /// Without a captured parameter negotiation, a UIH frame with P/F is read with credits, said
  /// inferred; once a DLCI's negotiation refused credit-based flow control, without.
  @Test func creditsInferredOrRefused() {
    var t = rfcommLink()
    let inferred = receive(&t, R.frame(dlci: 4, command: false, type: 0xEF, pollFinal: true, credits: 5, [0x41]))
    #expect(inferred.fields.uint("rfcomm.credits") == 5)
    #expect(inferred.fields.bool("rfcomm.credits_inferred") == true)
    #expect(inferred.fields.text("rfcomm.text") == "A")
    // The peer answered C/R 0 on a UIH (a command): the peer is the responder, we started it.
    #expect(t.dissector.connections.entries[0].link.classic.rfcomm.initiator == tx)
    _ = send(&t, R.multiplexer(command: true, type: 0x20, [0x06, 0xF0, 0x00, 0x00, 0x7F, 0x00, 0x00, 0x07]))
    let refused = receive(&t, R.multiplexer(command: false, frameCommand: false, type: 0x20, [0x06, 0x00, 0x00, 0x00, 0x7F, 0x00, 0x00, 0x00]))
    #expect(refused.summaryText == "channel 3, no credit-based flow control, priority 0, max frame 127")
    let plain = receive(&t, R.frame(dlci: 6, command: false, type: 0xEF, pollFinal: true, [0x42, 0x43]))
    #expect(plain.fields.value("rfcomm.credits") == nil)
    #expect(plain.fields.text("rfcomm.text") == "BC")
    #expect(plain.malformed == nil)
  }

  @Test func badFCSAndTruncatedFrames() {
    var t = rfcommLink()
    var frame = R.frame(dlci: 4, command: true, type: 0xEF, Array("hi".utf8))
    frame[frame.count - 1] ^= 0xFF
    let bad = send(&t, frame)
    #expect(bad.malformed?.reason == .invalidValue(field: "FCS", value: UInt64(frame[frame.count - 1])))
    #expect(bad.malformed?.layer == .rfcomm)
    #expect(bad.diagnostics.map(\.code) == ["rfcomm.fcs_bad"])
    // What the frame says is still shown.
    #expect(bad.fields.text("rfcomm.text") == "hi")
    #expect(bad.fields.uint("rfcomm.fcs_expected") == UInt64(R.fcs([0x4 << 2 | 0x03, 0xEF])))
    // The length says 10, the frame holds 3.
    let cut = send(&t, [0x13, 0xEF, 0x15, 0x41, 0x42, 0x43])
    #expect(cut.malformed?.layer == .rfcomm)
    #expect(cut.malformed?.reason == .truncated(needed: 10, available: 3))
    #expect(cut.titleText == "UIH")
    // Bytes after the FCS.
    let long = send(&t, R.frame(dlci: 4, command: true, type: 0xEF, [0x41]) + [0x00, 0x00])
    #expect(long.diagnostics.map(\.code) == ["rfcomm.trailing_bytes"])
    #expect(long.malformed == nil)
    // An empty PDU.
    #expect(send(&t, []).malformed?.layer == .rfcomm)
  }
}
