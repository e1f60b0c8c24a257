import Testing
import BLECore
import BLERender
@testable import BLEDecoder

@Suite struct L2CAPTests {
  let tx = Direction.hostToController
  let rx = Direction.controllerToHost

  /// A 20-byte heart-rate notification as a basic frame (24 bytes), the NIO drip-feed idea:
  /// every split must decode exactly like the whole PDU.
  static let notification = LinkTranscript.basicFrame(cid: 4, [0x1B, 0x10, 0x00, 0x10, 0x48] + (0..<8).flatMap { [UInt8(0x40 + $0), 0x03] })

  func decodedWhole(_ direction: Direction) -> DissectedFrame {
    var t = LinkTranscript()
    _ = t.connect(handle: 0x40, peer: "D0:B1:ED:00:48:52")
    t.discoverStrap()
    return t.acl(handle: 0x40, direction, pb: 2, Self.notification)
  }

  @Test(arguments: [Direction.hostToController, .controllerToHost])
  func splitAtEveryByteBoundary(direction: Direction) {
    let whole = decodedWhole(direction)
    // Sent by us, the notification comes from the local server, whose handles nobody discovered.
    #expect(whole.fields.uint("decoded.heart_rate_measurement.bpm") == (direction == .controllerToHost ? 72 : nil))
    #expect(whole.fields.uint("att.handle") == 0x10)
    let pdu = Self.notification
    for cut in 1..<pdu.count {
      var t = LinkTranscript()
      _ = t.connect(handle: 0x40, peer: "D0:B1:ED:00:48:52")
      t.discoverStrap()
      let first = t.acl(handle: 0x40, direction, pb: 2, Array(pdu[..<cut]))
      #expect(first.fields.bool("l2cap.fragment") == true, "cut \(cut)")
      let second = t.acl(handle: 0x40, direction, pb: 1, Array(pdu[cut...]))
      #expect(second.summaryText == whole.summaryText, "cut \(cut)")
      #expect(second.fields.text("att.value") == whole.fields.text("att.value"), "cut \(cut)")
      #expect(second.fields.uint("l2cap.first_frame") == UInt64(first.number), "cut \(cut)")
      #expect(second.fields.uint("l2cap.fragments") == 2)
      #expect(second.diagnostics.isEmpty, "cut \(cut): \(second.diagnostics)")
    }
  }

  @Test func oneByteFragmentsAndTwoInterleavedConnections() {
    var t = LinkTranscript()
    _ = t.connect(handle: 0x40, peer: "D0:B1:ED:00:48:52")
    _ = t.connect(handle: 0x41, peer: "D0:B1:ED:00:48:53")
    t.discoverStrap(handle: 0x40)
    t.discoverStrap(handle: 0x41)
    let pduA = Self.notification
    var pduB = Self.notification
    pduB[8] = 0x99  // 153 bpm on the second strap
    var last: [UInt16: DissectedFrame] = [:]
    for index in 0..<pduA.count {
      for (handle, pdu) in [(UInt16(0x40), pduA), (0x41, pduB)] {
        // Both directions too: a tx fragment of another PDU in between must not disturb rx.
        last[handle] = t.acl(handle: handle, rx, pb: index == 0 ? 2 : 1, [pdu[index]])
        if index == 3 { _ = t.att(handle: handle, tx, [0x0A, 0x18, 0x00]) }
      }
    }
    #expect(last[0x40]?.fields.uint("decoded.heart_rate_measurement.bpm") == 72)
    #expect(last[0x41]?.fields.uint("decoded.heart_rate_measurement.bpm") == 153)
    #expect(last[0x40]?.fields.uint("l2cap.fragments") == UInt64(pduA.count))
  }

  @Test func brokenFragmentsAreDiagnosedAndDoNotCostTheNextPDU() {
    var t = LinkTranscript()
    _ = t.connect(handle: 0x40, peer: "D0:B1:ED:00:48:52")
    t.discoverStrap()
    let pdu = Self.notification
    // A continuation with no start.
    let orphan = t.acl(handle: 0x40, rx, pb: 1, Array(pdu[4...]))
    #expect(orphan.diagnostics.contains { $0.kind == .l2capContinuationWithoutStart })
    // A new start while a PDU is incomplete: the old one is dropped, the new one decodes.
    _ = t.acl(handle: 0x40, rx, pb: 2, Array(pdu[..<6]))
    let restart = t.acl(handle: 0x40, rx, pb: 2, pdu)
    #expect(restart.diagnostics.contains { $0.kind == .l2capPDUInterrupted })
    #expect(restart.fields.uint("decoded.heart_rate_measurement.bpm") == 72)
    // More bytes than the L2CAP length.
    _ = t.acl(handle: 0x40, rx, pb: 2, Array(pdu[..<10]))
    let overflow = t.acl(handle: 0x40, rx, pb: 1, Array(pdu[10...]) + [0xEE, 0xEE])
    #expect(overflow.diagnostics.contains { $0.kind == .l2capPDUTrailingBytes })
    #expect(overflow.fields.uint("decoded.heart_rate_measurement.bpm") == 72)
    // A disconnect in the middle of a PDU.
    _ = t.acl(handle: 0x40, rx, pb: 2, Array(pdu[..<10]))
    let gone = t.disconnect(handle: 0x40)
    #expect(gone.diagnostics.contains { $0.kind == .l2capPDUDropped })
    // And the next connection starts clean.
    _ = t.connect(handle: 0x40, peer: "D0:B1:ED:00:48:52")
    let fresh = t.acl(handle: 0x40, rx, pb: 2, pdu)
    #expect(fresh.diagnostics.isEmpty)
    #expect(fresh.fields.uint("decoded.heart_rate_measurement.bpm") == 72)
  }

  @Test func leCreditBasedChannelSDUs() {
    var t = LinkTranscript()
    _ = t.connect(handle: 0x40, peer: "D0:B1:ED:00:48:52")
    // LE Credit Based Connection Request: SPSM 0x0080, source CID 0x0040, MTU 512, MPS 64, 8 credits.
    let request = t.l2cap(handle: 0x40, tx, cid: 5, [0x14, 0x01, 0x0A, 0x00, 0x80, 0x00, 0x40, 0x00, 0x00, 0x02, 0x40, 0x00, 0x08, 0x00])
    #expect(request.titleText == "LE Credit Based Connection Request")
    // Response: destination CID 0x0041, MTU 512, MPS 64, 4 credits, success.
    _ = t.l2cap(handle: 0x40, rx, cid: 5, [0x15, 0x01, 0x0A, 0x00, 0x41, 0x00, 0x00, 0x02, 0x40, 0x00, 0x04, 0x00, 0x00, 0x00])
    // A 100-byte SDU from us to the peer's CID 0x0041: 62 + 38 bytes in two K-frames.
    let sdu = (0..<100).map { UInt8($0) }
    let first = t.l2cap(handle: 0x40, tx, cid: 0x41, [100, 0] + sdu[..<62])
    #expect(first.summaryText == "SDU part: 62 of 100 bytes")
    #expect(first.fields.uint("l2cap.psm") == 0x80)
    let second = t.l2cap(handle: 0x40, tx, cid: 0x41, Array(sdu[62...]))
    #expect(second.fields.text("l2cap.sdu") == Hex.string(sdu))
    #expect(second.fields.uint("l2cap.sdu_frames") == 2)
    // The other direction goes to our CID 0x0040: one K-frame holds a whole 3-byte SDU.
    let back = t.l2cap(handle: 0x40, rx, cid: 0x40, [3, 0, 0xAA, 0xBB, 0xCC])
    #expect(back.fields.text("l2cap.sdu") == "aabbcc")
    // After the disconnection, the CIDs mean nothing again.
    _ = t.l2cap(handle: 0x40, tx, cid: 5, [0x06, 0x02, 0x04, 0x00, 0x41, 0x00, 0x40, 0x00])
    _ = t.l2cap(handle: 0x40, rx, cid: 5, [0x07, 0x02, 0x04, 0x00, 0x41, 0x00, 0x40, 0x00])
    let unknown = t.l2cap(handle: 0x40, tx, cid: 0x41, [1, 0, 0x01])
    #expect(unknown.fields.value("l2cap.sdu") == nil)
    #expect(unknown.titleText == "Data")
  }

  /// Signaling and SMP header lines come from the commands' facts, as far as they decoded.
  /// A malformed PDU once kept the command's name twice ("Signing Information: Signing
  /// Information", 11 frames of the DS-D6 capture): the decoder's summary was trimmed only when
  /// decoding ended well.
  @Test func signalingAndSMPHeadersFromFacts() {
    var t = LinkTranscript()
    _ = t.connect(handle: 0x40, peer: "D0:B1:ED:00:48:52")
    // Information Request (extended features), then a Connection Request whose length runs
    // past the PDU: the second command is named, not described, and the frame is malformed.
    let two = t.l2cap(handle: 0x40, tx, cid: 1, [0x0A, 0x01, 0x02, 0x00, 0x02, 0x00, 0x02, 0x02, 0x04, 0x00, 0x01, 0x00])
    #expect(two.titleText == "Information Request")
    #expect(two.summaryText == "Extended features supported; Connection Request")
    #expect(FrameDescription.layerLabel(two).description == "L2CAP")
    #expect(two.malformed != nil)
    guard case .signaling(let commands, let unfinished) = two.header else {
      Issue.record("\(two.header)")
      return
    }
    #expect(commands == [.informationRequest(identifier: 1, type: 2)] && unfinished == 0x02)
    // SMP: a truncated Pairing Failed says its name only; an unknown code says its number; an
    // empty PDU is ACL data on the SMP channel.
    let failed = t.l2cap(handle: 0x40, rx, cid: 6, [0x05])
    #expect(failed.titleText == "Pairing Failed" && failed.summaryText.isEmpty)
    let unknown = t.l2cap(handle: 0x40, rx, cid: 6, [0x20, 0x01])
    #expect(unknown.titleText == "Unknown SMP Command" && unknown.summaryText == "SMP command 0x20")
    let empty = t.l2cap(handle: 0x40, rx, cid: 6, [])
    #expect(empty.titleText == "ACL Data" && FrameDescription.layerLabel(empty).description == "SMP")
  }

  @Test func eattChannelsAreATTBearers() {
    var t = LinkTranscript()
    _ = t.connect(handle: 0x40, peer: "D0:B1:ED:00:48:52")
    t.discoverStrap()
    // Credit Based Connection Request (ECRED) on PSM 0x0027: MTU 247, MPS 247, 10 credits, CIDs 0x0040, 0x0041.
    _ = t.l2cap(handle: 0x40, tx, cid: 5, [0x17, 0x03, 0x0C, 0x00, 0x27, 0x00, 0xF7, 0x00, 0xF7, 0x00, 0x0A, 0x00, 0x40, 0x00, 0x41, 0x00])
    // Response: MTU 2048, MPS 2048, 256 credits, success, CIDs 0x0050, 0x0051.
    _ = t.l2cap(handle: 0x40, rx, cid: 5, [0x18, 0x03, 0x0C, 0x00, 0x00, 0x08, 0x00, 0x08, 0x00, 0x01, 0x00, 0x00, 0x50, 0x00, 0x51, 0x00])
    // On the second bearer: Read Request 0x0018 to the peer's CID 0x0051, the response to ours, 0x0041.
    let read = t.l2cap(handle: 0x40, tx, cid: 0x51, [3, 0, 0x0A, 0x18, 0x00])
    #expect(read.att?.opcode == 0x0A)
    let value = t.l2cap(handle: 0x40, rx, cid: 0x41, [2, 0, 0x0B, 0x50])
    #expect(value.fields.uint("att.request_frame") == UInt64(read.number))
    #expect(value.fields.uint("decoded.battery_level.percent") == 80)
    // A request pending on one bearer does not pair with a response on another.
    _ = t.l2cap(handle: 0x40, tx, cid: 0x50, [3, 0, 0x0A, 0x18, 0x00])
    let unrelated = t.att(rx, [0x0B, 0x50])
    #expect(unrelated.diagnostics.contains { $0.kind == .attResponseWithoutRequest })
  }
}
