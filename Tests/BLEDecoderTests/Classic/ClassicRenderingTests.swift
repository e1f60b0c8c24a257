import Testing
import BLECore
import BLERender
@testable import BLEDecoder

/// What SDP and RFCOMM frames carry from the other device (service names, UIH data) reaches a
/// terminal only through the one escaper: no control byte is written, in text, one-line or
/// verbose output, and JSON escapes it as JSON does.
@Suite struct ClassicRenderingTests {
  let tx = Direction.hostToController
  let rx = Direction.controllerToHost

  func frames() -> [DissectedFrame] {
    typealias S = SDPBytes
    typealias R = RFCOMMBytes
    var t = LinkTranscript()
    var frames: [DissectedFrame] = []
    _ = t.connectClassic(handle: 1, peer: "C0:28:8D:4B:0E:25")
    t.openChannel(handle: 1, psm: 0x0001, local: 0x0040, remote: 0x0041, identifier: 1)
    frames.append(t.l2cap(handle: 1, tx, cid: 0x0041, S.pdu(0x06, transaction: 1, S.sequence(S.uuid16(0x1101)) + S.be(0xFFFF, 2) + S.sequence(S.uint32(0xFFFF)) + S.continuation())))
    let lists = S.sequence(S.serialPortRecord(handle: 0x0001_0001, channel: 2, name: "evil\u{1B}]0;pwned\u{07}\r\nname\u{9B}2J"))
    frames.append(t.l2cap(handle: 1, rx, cid: 0x0040, S.pdu(0x07, transaction: 1, S.be(UInt64(lists.count), 2) + lists + S.continuation())))
    t.openChannel(handle: 1, psm: 0x0003, local: 0x0050, remote: 0x0051, identifier: 2)
    frames.append(t.l2cap(handle: 1, tx, cid: 0x0051, R.frame(dlci: 0, command: true, type: 0x2F, pollFinal: true)))
    frames.append(t.l2cap(handle: 1, rx, cid: 0x0050, R.frame(dlci: 4, command: false, type: 0xEF, Array("AT+CKPD=200\r\n\t".utf8))))
    frames.append(t.l2cap(handle: 1, rx, cid: 0x0050, R.frame(dlci: 4, command: false, type: 0xEF, Array("\u{1B}[2J\u{07}".utf8))))
    return frames
  }

  @Test func nothingFromTheAirReachesATerminalRaw() {
    for (details, verbose) in [(true, false), (true, true), (false, false)] {
      var renderer = TextRenderer(details: details, verbose: verbose)
      var out = OutputBuffer(fd: nil)
      for var frame in frames() { renderer.render(&frame, to: &out) }
      let text = out.text
      let controls = text.unicodeScalars.filter { $0 != "\n" && Escaping.isControl($0.value) }
      #expect(controls.isEmpty, "raw control characters \(controls.map(\.value)) with details \(details), verbose \(verbose)")
      #expect(text.contains("Serial Port \"evil\\x1B]0;pwned\\x07\\r\\nname\\u009B2J\" on RFCOMM 2"))
      #expect(text.contains("UIH: channel 2 (Serial Port): \"AT+CKPD=200\\r\\n\\t\""))
      if details { #expect(text.contains("Text: evil\\x1B]0;pwned\\x07\\r\\nname\\u009B2J")) }
      // Not text: a control character other than a line end or tab.
      #expect(text.contains("UIH: channel 2 (Serial Port): 5 bytes: 1b 5b 32 4a 07"))
    }
    var json = JSONLinesRenderer()
    var out = OutputBuffer(fd: nil)
    for var frame in frames() { json.render(&frame, to: &out) }
    #expect(out.text.contains(#""text":"evil\u001b]0;pwned\u0007\r\nname\u009b2J""#))
    #expect(out.text.contains(#""text":"AT+CKPD=200\r\n\t""#))
    #expect(!out.text.unicodeScalars.contains { $0 != "\n" && Escaping.isControl($0.value) })
  }
}
