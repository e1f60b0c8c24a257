import Testing
import BLECore
import BLETestSupport
@testable import BLEDecoder
@testable import BLERender

// Signaling PDUs below are the L2CAP payload (after the 4-byte basic header), quoted from the
// captures in shared/corpus (file, 1-based frame number as Wireshark counts it), or built from
// the layouts of Core Vol 3 Part A §4 where no capture has the command (no capture in the corpus
// uses LE credit-based channels, ECRED or Command Reject).

private struct Decoded {
  var fields = FieldList()
  var commands: [SignalingCommand] = []
  /// Each command's name and details, as BLERender words them.
  var summary: String { HeaderWords.signalingWords(commands, unfinished: nil) }
}

private func decode(_ bytes: [UInt8], isLE: Bool) throws(DecodeError) -> Decoded {
  var result = Decoded()
  var reader = ByteReader(testBytes: bytes, layer: .hci)
  result.commands = try L2CAPSignaling.decode(&reader, isLE: isLE, into: &result.fields)
  #expect(reader.isAtEnd)
  #expect(result.fields.depth == 0)
  return result
}

/// The error thrown for `bytes`, with the partial fields (whose groups must be closed).
private func failure(_ bytes: [UInt8], isLE: Bool) -> (error: DecodeError, fields: FieldList, commands: [SignalingCommand])? {
  var fields = FieldList()
  var commands: [SignalingCommand] = []
  var unfinished: UInt8?
  var reader = ByteReader(testBytes: bytes, layer: .l2cap)
  do {
    try L2CAPSignaling.decode(&reader, isLE: isLE, into: &fields, commands: &commands, unfinished: &unfinished)
    return nil
  } catch {
    return (error, fields, commands)
  }
}

/// Every strict prefix of `bytes` throws a `DecodeError` at layer `.l2cap` and leaves the field groups closed.
private func expectPrefixesThrow(_ bytes: [UInt8], isLE: Bool, sourceLocation: SourceLocation = #_sourceLocation) {
  for count in 0..<bytes.count {
    let prefix = Array(bytes[..<count])
    guard let (error, fields, _) = failure(prefix, isLE: isLE) else {
      Issue.record("prefix of \(count) bytes decoded without error", sourceLocation: sourceLocation)
      continue
    }
    #expect(error.layer == .l2cap, sourceLocation: sourceLocation)
    #expect(fields.depth == 0, sourceLocation: sourceLocation)
  }
}

private func codeText(_ fields: FieldList, _ path: String) -> String? {
  if case let .codeText(_, _, name)? = fields.value(path) { return name }
  return nil
}

private func measure(_ fields: FieldList, _ path: String) -> (raw: Int64, scale: Double, unit: String)? {
  if case let .measure(raw, scale, unit)? = fields.value(path) { return (raw, scale, unit.description) }
  return nil
}

@Suite("L2CAP signaling")
struct L2CAPSignalingTests {
  // MARK: - LE

  @Test func connectionParameterUpdateRequest() throws {
    // pogo_plus/pogo_plus_pair_2017_12_13.log frame 146 (peripheral asks for 50 ms, timeout 5 s).
    let bytes = hexBytes("12 bf 0800 2800 2800 0000 f401")
    let result = try decode(bytes, isLE: true)
    #expect(result.fields.uint("code") == 0x12)
    #expect(result.fields.name("code") == "Connection Parameter Update Request")
    #expect(result.fields.uint("identifier") == 0xBF)
    #expect(result.fields.uint("length") == 8)
    let minimum = try #require(measure(result.fields, "conn_interval_min"))
    #expect(minimum.raw == 40 && minimum.scale == 1.25 && minimum.unit == "ms")
    #expect(result.fields.uint("conn_interval_max") == 40)
    #expect(result.fields.uint("latency") == 0)
    let timeout = try #require(measure(result.fields, "supervision_timeout"))
    #expect(timeout.raw == 500 && timeout.scale == 10)
    #expect(result.summary == "Connection Parameter Update Request: interval 50.00–50.00 ms, latency 0, timeout 5000 ms")
    // A fact of its own (the link's story and the plot mark it), not `.other`.
    #expect(result.commands == [.connectionParameterUpdateRequest(identifier: 0xBF, intervalMinimum: 40, intervalMaximum: 40, latency: 0, timeout: 500)])
    expectPrefixesThrow(bytes, isLE: true)
  }

  @Test func connectionParameterUpdateRequestFractionalInterval() throws {
    // Built from §4.20: interval 6–12 (7.5–15 ms), latency 0, timeout 200 (2 s).
    let result = try decode(hexBytes("12 01 0800 0600 0c00 0000 c800"), isLE: true)
    #expect(result.summary == "Connection Parameter Update Request: interval 7.50–15.00 ms, latency 0, timeout 2000 ms")
    // miband3_blproject/miband3_to_laptop.pcapng frame 42: 30–50 ms.
    let miband = try decode(hexBytes("12 ed 0800 1800 2800 0000 f401"), isLE: true)
    #expect(miband.summary == "Connection Parameter Update Request: interval 30.00–50.00 ms, latency 0, timeout 5000 ms")
  }

  @Test func connectionParameterUpdateResponse() throws {
    // pogo_plus/pogo_plus_pair_2017_12_13.log frame 147 (accepted, same identifier as frame 146).
    let bytes = hexBytes("13 bf 0200 0000")
    let result = try decode(bytes, isLE: true)
    #expect(result.fields.uint("result") == 0)
    #expect(result.fields.name("result") == "Accepted")
    #expect(result.summary == "Connection Parameter Update Response: accepted")
    expectPrefixesThrow(bytes, isLE: true)
    // Built: rejected.
    let rejected = try decode(hexBytes("13 02 0200 0100"), isLE: true)
    #expect(rejected.fields.name("result") == "Rejected")
    #expect(rejected.summary == "Connection Parameter Update Response: rejected")
  }

  @Test func commandReject() throws {
    // Built from §4.1: Command not understood (no reason data).
    let plain = try decode(hexBytes("01 07 0200 0000"), isLE: true)
    #expect(plain.fields.name("code") == "Command Reject")
    #expect(plain.fields.name("reason") == "Command not understood")
    #expect(plain.summary == "Command Reject: Command not understood")
    #expect(plain.commands == [.commandReject(identifier: 7, reason: 0, actualMTU: nil, localCID: nil, remoteCID: nil)])
    // Signaling MTU exceeded, actual MTU 23.
    let mtu = try decode(hexBytes("01 08 0400 0100 1700"), isLE: true)
    #expect(mtu.fields.name("reason") == "Signaling MTU exceeded")
    #expect(mtu.fields.uint("actual_mtu") == 23)
    // Invalid CID in request: local 0x0040, remote 0x0041.
    let bytes = hexBytes("01 09 0600 0200 4000 4100")
    let cid = try decode(bytes, isLE: true)
    #expect(cid.fields.name("reason") == "Invalid CID in request")
    #expect(cid.fields.uint("local_cid") == 0x40)
    #expect(cid.fields.uint("remote_cid") == 0x41)
    #expect(cid.summary == "Command Reject: Invalid CID in request (local 0x0040, remote 0x0041)")
    expectPrefixesThrow(bytes, isLE: true)
  }

  @Test func leCreditBasedConnection() throws {
    // Built from §4.22: SPSM 0x0080, source CID 0x0040, MTU 512, MPS 247, 10 credits.
    let request = hexBytes("14 03 0a00 8000 4000 0002 f700 0a00")
    let decoded = try decode(request, isLE: true)
    #expect(decoded.fields.name("code") == "LE Credit Based Connection Request")
    #expect(decoded.fields.uint("spsm") == 0x80)
    #expect(decoded.fields.uint("source_cid") == 0x40)
    #expect(decoded.fields.uint("mtu") == 512)
    #expect(decoded.fields.uint("mps") == 247)
    #expect(decoded.fields.uint("initial_credits") == 10)
    #expect(decoded.summary == "LE Credit Based Connection Request: SPSM 0x0080, source CID 0x0040, MTU 512, MPS 247, credits 10")
    #expect(decoded.commands == [.leCreditConnectionRequest(identifier: 3, psm: 0x80, sourceCID: 0x40, mtu: 512, mps: 247, credits: 10)])
    expectPrefixesThrow(request, isLE: true)

    // §4.23: destination CID 0x0041, MTU 256, MPS 100, 5 credits, success.
    let response = hexBytes("15 03 0a00 4100 0001 6400 0500 0000")
    let answer = try decode(response, isLE: true)
    #expect(answer.fields.uint("destination_cid") == 0x41)
    #expect(answer.fields.name("result") == "Connection successful")
    #expect(answer.summary == "LE Credit Based Connection Response: destination CID 0x0041, MTU 256, MPS 100, credits 5")
    #expect(answer.commands == [.leCreditConnectionResponse(identifier: 3, destinationCID: 0x41, mtu: 256, mps: 100, credits: 5, result: 0)])
    expectPrefixesThrow(response, isLE: true)

    // Refused: insufficient encryption (0x0008).
    let refused = try decode(hexBytes("15 04 0a00 0000 0000 0000 0000 0800"), isLE: true)
    #expect(refused.fields.name("result") == "Connection refused – insufficient encryption")
    #expect(refused.summary == "LE Credit Based Connection Response: Connection refused – insufficient encryption")
    #expect(refused.commands == [.leCreditConnectionResponse(identifier: 4, destinationCID: 0, mtu: 0, mps: 0, credits: 0, result: 8)])
  }

  @Test func flowControlCreditIndication() throws {
    // Built from §4.24: CID 0x0040 grants 8 credits.
    let bytes = hexBytes("16 05 0400 4000 0800")
    let result = try decode(bytes, isLE: true)
    #expect(result.fields.name("code") == "Flow Control Credit Indication")
    #expect(L2CAPSignaling.name(0x16).description == "Flow Control Credit Indication")
    #expect(result.fields.uint("cid") == 0x40)
    #expect(result.fields.uint("credits") == 8)
    #expect(result.summary == "Flow Control Credit Indication: CID 0x0040, credits 8")
    expectPrefixesThrow(bytes, isLE: true)
  }

  @Test func creditBasedConnection() throws {
    // Built from §4.25: EATT (SPSM 0x0027), MTU 64, MPS 64, 10 credits, three source CIDs.
    let request = hexBytes("17 06 0e00 2700 4000 4000 0a00 4000 4100 4200")
    let decoded = try decode(request, isLE: true)
    #expect(decoded.fields.name("code") == "Credit Based Connection Request")
    #expect(decoded.fields.uint("spsm") == 0x27)
    #expect(decoded.fields.name("spsm") == "EATT")
    #expect(decoded.fields.uint("source_cids.0") == 0x40)
    #expect(decoded.fields.uint("source_cids.2") == 0x42)
    #expect(decoded.summary == "Credit Based Connection Request: SPSM 0x0027 (EATT), MTU 64, MPS 64, credits 10, source CIDs 0x0040, 0x0041, 0x0042")
    #expect(decoded.commands == [.creditBasedConnectionRequest(identifier: 6, psm: 0x27, mtu: 64, mps: 64, credits: 10, sourceCIDs: [0x40, 0x41, 0x42])])
    expectPrefixesThrow(request, isLE: true)

    // §4.26: two of three accepted, the third refused (0x0000); result 0x0004.
    let response = hexBytes("18 06 0e00 4000 4000 0a00 0400 5000 5100 0000")
    let answer = try decode(response, isLE: true)
    #expect(answer.fields.name("result") == "Some connections refused – insufficient resources available")
    #expect(answer.fields.uint("destination_cids.1") == 0x51)
    #expect(answer.fields.uint("destination_cids.2") == 0)
    #expect(answer.commands == [.creditBasedConnectionResponse(identifier: 6, mtu: 64, mps: 64, credits: 10, result: 4, destinationCIDs: [0x50, 0x51, 0])])
    expectPrefixesThrow(response, isLE: true)
  }

  @Test func creditBasedReconfigure() throws {
    // Built from §4.27: MTU 100, MPS 80, destination CIDs 0x0050, 0x0051.
    let request = hexBytes("19 07 0800 6400 5000 5000 5100")
    let decoded = try decode(request, isLE: true)
    #expect(decoded.fields.uint("mtu") == 100)
    #expect(decoded.fields.uint("destination_cids.1") == 0x51)
    #expect(decoded.summary == "Credit Based Reconfigure Request: MTU 100, MPS 80, destination CIDs 0x0050, 0x0051")
    #expect(decoded.commands == [.creditBasedReconfigureRequest(identifier: 7, mtu: 100, mps: 80, destinationCIDs: [0x50, 0x51])])
    expectPrefixesThrow(request, isLE: true)

    // §4.28: reduction in size of MTU not allowed.
    let response = hexBytes("1a 07 0200 0100")
    let answer = try decode(response, isLE: true)
    #expect(answer.fields.name("result") == "Reconfiguration failed – reduction in size of MTU not allowed")
    #expect(answer.commands == [.creditBasedReconfigureResponse(identifier: 7, result: 1)])
    expectPrefixesThrow(response, isLE: true)
  }

  @Test func bumbleCreditBasedCaptures() throws {
    // captures/le_coc.btsnoop (Bumble peripheral, Android phone) frames 32, 34, 59, 76.
    let request = try decode(hexBytes("14 01 0a00 8000 4000 0002 4000 0800"), isLE: true)
    #expect(request.commands == [.leCreditConnectionRequest(identifier: 1, psm: 0x80, sourceCID: 0x40, mtu: 512, mps: 64, credits: 8)])
    let response = try decode(hexBytes("15 01 0a00 4000 0002 4000 0400 0000"), isLE: true)
    #expect(response.commands == [.leCreditConnectionResponse(identifier: 1, destinationCID: 0x40, mtu: 512, mps: 64, credits: 4, result: 0)])
    let credits = try decode(hexBytes("16 01 0400 4000 0200"), isLE: true)
    #expect(credits.summary == "Flow Control Credit Indication: CID 0x0040, credits 2")
    let disconnect = try decode(hexBytes("06 03 0400 4000 4000"), isLE: true)
    #expect(disconnect.commands == [.disconnectionRequest(identifier: 3, destinationCID: 0x40, sourceCID: 0x40)])

    // captures/eatt.btsnoop frames 53 and 55: two EATT bearers over ECRED.
    let ecred = try decode(hexBytes("17 01 0c00 2700 f700 f700 0a00 4000 4100"), isLE: true)
    #expect(ecred.commands == [.creditBasedConnectionRequest(identifier: 1, psm: 0x27, mtu: 247, mps: 247, credits: 10, sourceCIDs: [0x40, 0x41])])
    let accepted = try decode(hexBytes("18 01 0c00 0008 0008 0001 0000 4000 4100"), isLE: true)
    #expect(accepted.fields.name("result") == "All connections successful")
    #expect(accepted.summary == "Credit Based Connection Response: All connections successful, MTU 2048, MPS 2048, credits 256, destination CIDs 0x0040, 0x0041")
    #expect(accepted.commands == [.creditBasedConnectionResponse(identifier: 1, mtu: 2048, mps: 2048, credits: 256, result: 0, destinationCIDs: [0x40, 0x41])])
  }

  @Test func leDisconnection() throws {
    // Built from §4.6-4.7 on the LE signaling channel.
    let request = try decode(hexBytes("06 08 0400 4100 4000"), isLE: true)
    #expect(request.commands == [.disconnectionRequest(identifier: 8, destinationCID: 0x41, sourceCID: 0x40)])
    let response = try decode(hexBytes("07 08 0400 4100 4000"), isLE: true)
    #expect(response.commands == [.disconnectionResponse(identifier: 8, destinationCID: 0x41, sourceCID: 0x40)])
    #expect(response.summary == "Disconnection Response: destination CID 0x0041, source CID 0x0040")
  }

  // MARK: - Malformed

  @Test func lengthLongerThanData() {
    // pogo_plus frame 146 with its length field raised from 8 to 9.
    let failed = failure(hexBytes("12 bf 0900 2800 2800 0000 f401"), isLE: true)
    #expect(failed?.error == DecodeError(.lengthMismatch(field: "signaling length", declared: 9, actual: 8), layer: .l2cap, offset: 2))
    #expect(failed?.fields.name("code") == "Connection Parameter Update Request")
  }

  @Test func leTrailingBytes() {
    // pogo_plus frame 147 with two bytes after the command: fields kept, the command still reported.
    let failed = failure(hexBytes("13 bf 0200 0000 aabb"), isLE: true)
    #expect(failed?.error == DecodeError(.lengthMismatch(field: "signaling length", declared: 2, actual: 4), layer: .l2cap, offset: 6))
    #expect(failed?.fields.name("result") == "Accepted")
    #expect(failed?.fields.text("extra") == "aabb")
    #expect(failed?.commands == [.connectionParameterUpdateResponse(identifier: 0xBF, result: 0)])
  }

  @Test func extraBytesInsideCommand() throws {
    // Built: a Disconnection Request whose length (6) covers two bytes beyond its CIDs.
    let result = try decode(hexBytes("06 01 0600 4000 4100 0102"), isLE: true)
    #expect(result.fields.text("extra") == "0102")
    #expect(result.commands == [.disconnectionRequest(identifier: 1, destinationCID: 0x40, sourceCID: 0x41)])
  }

  @Test func unknownCode() throws {
    // Built: code 0x1B is not assigned; its data stays raw.
    let result = try decode(hexBytes("1b 01 0200 abcd"), isLE: true)
    #expect(result.fields.uint("code") == 0x1B)
    #expect(result.fields.name("code") == nil)
    #expect(result.fields.text("data") == "abcd")
    #expect(result.summary == "Signaling command 0x1b")
    #expect(L2CAPSignaling.name(0x1B).description == "Unknown Signaling Command")
    #expect(result.commands == [.other(code: 0x1B, identifier: 1)])
  }

  @Test func randomBytesNeverTrap() {
    var generator = SeededGenerator(seed: 0x51C0)
    for _ in 0..<5000 {
      let count = Int.random(in: 0...24, using: &generator)
      var bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
      if count >= 4 {
        // Mostly plausible codes and lengths, so the command decoders run.
        bytes[0] = UInt8.random(in: 0...0x1C, using: &generator)
        bytes[2] = UInt8(truncatingIfNeeded: Int.random(in: 0...(count - 2), using: &generator))
        bytes[3] = 0
      }
      for isLE in [true, false] {
        var fields = FieldList()
        var reader = ByteReader(testBytes: bytes, layer: .l2cap)
        do {
          _ = try L2CAPSignaling.decode(&reader, isLE: isLE, into: &fields)
        } catch {
          #expect(error.layer == .l2cap)
        }
        #expect(fields.depth == 0)
      }
    }
  }

  // MARK: - BR/EDR

  @Test func informationRequestAndResponse() throws {
    // btstack/btstack_a2dp_sbc_test2.pklg frame 142: Information Request, extended features.
    let request = hexBytes("0a 01 0200 0200")
    let asked = try decode(request, isLE: false)
    #expect(asked.fields.name("info_type") == "Extended features supported")
    #expect(asked.summary == "Information Request: Extended features supported")
    expectPrefixesThrow(request, isLE: false)

    // Same file frame 145: features 0x000002a8 (ERTM, FCS option, fixed channels, unicast connectionless).
    let response = hexBytes("0b 01 0800 0200 0000 a8020000")
    let answer = try decode(response, isLE: false)
    #expect(answer.fields.name("result") == "Success")
    #expect(answer.fields.uint("extended_features") == 0x2A8)
    #expect(answer.fields.bool("enhanced_retransmission_mode") == true)
    #expect(answer.fields.bool("fcs_option") == true)
    #expect(answer.fields.bool("fixed_channels_supported") == true)
    #expect(answer.fields.bool("unicast_connectionless_data") == true)
    #expect(answer.fields.bool("streaming_mode") == nil)
    #expect(answer.summary == "Information Response: Extended features supported, success")
    expectPrefixesThrow(response, isLE: false)

    // cheoljun99/android_classic_nsec.pcap frame 11381: fixed channels 0x82 (signaling, BR/EDR SM).
    let fixed = try decode(hexBytes("0b 03 0c00 0300 0000 8200000000000000"), isLE: false)
    #expect(fixed.fields.uint("fixed_channels") == 0x82)
    #expect(fixed.fields.bool("signaling_channel") == true)
    #expect(fixed.fields.bool("br_edr_security_manager") == true)
    #expect(fixed.fields.bool("connectionless") == nil)

    // Built from §4.11: connectionless MTU not supported (result 1, no data).
    let unsupported = try decode(hexBytes("0b 04 0400 0100 0100"), isLE: false)
    #expect(unsupported.fields.name("result") == "Not supported")
    #expect(unsupported.summary == "Information Response: Connectionless MTU, not supported")
  }

  @Test func connectionRequestAndResponse() throws {
    // btstack/btstack_a2dp_sbc_test2.pklg frame 147: SDP, source CID 0x0040.
    let request = hexBytes("02 02 0400 0100 4000")
    let asked = try decode(request, isLE: false)
    #expect(asked.fields.uint("psm") == 1)
    #expect(asked.fields.name("psm") == "SDP")
    #expect(asked.fields.uint("source_cid") == 0x40)
    #expect(asked.summary == "Connection Request: 0x0001 (SDP), source CID 0x0040")
    #expect(asked.commands == [.connectionRequest(identifier: 2, psm: 1, sourceCID: 0x40)])
    expectPrefixesThrow(request, isLE: false)

    // cheoljun99/android_classic_nsec.pcap frame 11385: success, DCID 0x0056 for SCID 0x0067.
    let response = hexBytes("03 04 0800 5600 6700 0000 0000")
    let answer = try decode(response, isLE: false)
    #expect(answer.fields.uint("destination_cid") == 0x56)
    #expect(answer.fields.uint("source_cid") == 0x67)
    #expect(answer.fields.name("result") == "Connection successful")
    #expect(answer.fields.name("status") == "No further information available")
    #expect(answer.commands == [.connectionResponse(identifier: 4, destinationCID: 0x56, sourceCID: 0x67, result: 0)])
    expectPrefixesThrow(response, isLE: false)

    // cheoljun99/android_classic_nsec.pcap frame 11407: a dynamic PSM (0x1001) has no name.
    let dynamic = try decode(hexBytes("02 07 0400 0110 6800"), isLE: false)
    #expect(dynamic.fields.uint("psm") == 0x1001)
    #expect(dynamic.fields.name("psm") == nil)
    #expect(dynamic.summary == "Connection Request: 0x1001, source CID 0x0068")
  }

  @Test func configurationRequest() throws {
    // btstack/btstack_a2dp_sbc_test2.pklg frame 159: Retransmission and Flow Control (basic),
    // MTU 1691, FCS none.
    let bytes = hexBytes("04 03 1600 4000 0000 04 09 00 00 00 0000 0000 0000 01 02 9b06 05 01 00")
    let result = try decode(bytes, isLE: false)
    #expect(result.fields.uint("destination_cid") == 0x40)
    #expect(result.fields.bool("continuation") == false)
    #expect(result.fields.name("options.0.option_type") == "Retransmission and Flow Control")
    #expect(result.fields.name("options.0.mode") == "Basic")
    #expect(result.fields.name("options.1.option_type") == "MTU")
    #expect(result.fields.uint("options.1.mtu") == 1691)
    #expect(result.fields.name("options.2.fcs") == "No FCS")
    #expect(result.summary == "Configuration Request: destination CID 0x0040, Basic mode, MTU 1691")
    #expect(result.commands == [.configurationRequest(identifier: 3, destinationCID: 0x40, options: [.mode(0), .mtu(1691)])])
    expectPrefixesThrow(bytes, isLE: false)

    // cheoljun99/android_classic_nsec.pcap frame 11421: MTU 8087, Enhanced Retransmission, MPS 1010.
    let ertm = try decode(hexBytes("04 08 1300 5800 0000 01 02 971f 04 09 03 0a 14 0000 0000 f203"), isLE: false)
    #expect(ertm.fields.uint("options.0.mtu") == 8087)
    #expect(ertm.fields.name("options.1.mode") == "Enhanced Retransmission")
    #expect(ertm.fields.uint("options.1.tx_window") == 10)
    #expect(ertm.fields.uint("options.1.max_transmit") == 20)
    #expect(ertm.fields.uint("options.1.mps") == 1010)
  }

  @Test func configurationResponse() throws {
    // cheoljun99/android_classic_nsec.pcap frame 11434: success, ERTM timeouts 2000/12000 ms.
    let bytes = hexBytes("05 05 1100 5800 0000 0000 04 09 03 0a 14 d007 e02e f203")
    let result = try decode(bytes, isLE: false)
    #expect(result.fields.uint("source_cid") == 0x58)
    #expect(result.fields.name("result") == "Success")
    #expect(result.fields.uint("options.0.retransmission_timeout") == 2000)
    #expect(result.fields.uint("options.0.monitor_timeout") == 12000)
    #expect(result.summary == "Configuration Response: source CID 0x0058, Success, Enhanced Retransmission mode")
    expectPrefixesThrow(bytes, isLE: false)

    // Built from §5: a hint option of unknown type 0x7E stays raw.
    let hint = try decode(hexBytes("05 06 0a00 4000 0000 0000 fe 02 abcd"), isLE: false)
    #expect(hint.fields.uint("options.0.option_type") == 0x7E)
    #expect(hint.fields.bool("options.0.hint") == true)
    #expect(hint.fields.text("options.0.data") == "abcd")
  }

  @Test func disconnectionAndEcho() throws {
    // cheoljun99/android_classic_nsec.pcap frames 11393 and 11395.
    let request = hexBytes("06 06 0400 5600 6700")
    #expect(try decode(request, isLE: false).commands == [.disconnectionRequest(identifier: 6, destinationCID: 0x56, sourceCID: 0x67)])
    expectPrefixesThrow(request, isLE: false)
    #expect(try decode(hexBytes("07 06 0400 5600 6700"), isLE: false).commands == [.disconnectionResponse(identifier: 6, destinationCID: 0x56, sourceCID: 0x67)])

    // Built from §4.8-4.9: Echo Request with 3 bytes, empty Echo Response.
    let echo = try decode(hexBytes("08 09 0300 616263"), isLE: false)
    #expect(echo.fields.text("data") == "616263")
    #expect(echo.summary == "Echo Request: 3 bytes")
    let reply = try decode(hexBytes("09 09 0000"), isLE: false)
    #expect(reply.fields.text("data") == nil)
    #expect(reply.summary == "Echo Response: 0 bytes")
  }

  @Test func severalCommandsInOnePDU() throws {
    // Built: btstack_a2dp_sbc_test2 frames 142 and 147 sent together in one BR/EDR signaling PDU.
    let bytes = hexBytes("0a 01 0200 0200" + "02 02 0400 0100 4000")
    let result = try decode(bytes, isLE: false)
    #expect(result.fields.name("commands.0.code") == "Information Request")
    #expect(result.fields.name("commands.0.info_type") == "Extended features supported")
    #expect(result.fields.name("commands.1.code") == "Connection Request")
    #expect(result.fields.uint("commands.1.identifier") == 2)
    #expect(result.fields.uint("commands.1.source_cid") == 0x40)
    #expect(result.summary == "Information Request: Extended features supported; Connection Request: 0x0001 (SDP), source CID 0x0040")
    #expect(result.commands == [.informationRequest(identifier: 1, type: 2), .connectionRequest(identifier: 2, psm: 1, sourceCID: 0x40)])

    // Every strict prefix not ending on a command boundary throws, keeping the commands before it.
    for count in 0..<bytes.count where count != 6 {
      let failed = failure(Array(bytes[..<count]), isLE: false)
      #expect(failed != nil, "prefix \(count)")
      #expect(failed?.fields.depth == 0)
      #expect(failed?.commands.count == (count > 6 ? 1 : 0))
    }

    // The same bytes on LE: one command and trailing bytes.
    let onLE = failure(bytes, isLE: true)
    #expect(onLE?.error == DecodeError(.lengthMismatch(field: "signaling length", declared: 2, actual: 10), layer: .l2cap, offset: 6))
  }
}
