import Testing
import BLECore
import BLERender
@testable import BLEDecoder

// BR/EDR (Classic) commands, return parameters and events. Packets are quoted from the captures
// in shared/corpus (file, 1-based frame number as Wireshark counts it; the HCI packet without
// its H4 indicator), or built from the Core Vol 4 Part E layout where no capture has one.

private func packet(_ text: String) -> [UInt8] { hexBytes(text) }

/// `head` followed by zeros up to `count` bytes (the 248-byte names and 240-byte EIR data).
private func padded(_ head: String, to count: Int) -> [UInt8] {
  let bytes = hexBytes(head)
  return bytes + [UInt8](repeating: 0, count: count - bytes.count)
}

/// Connection Complete (BR/EDR): success, handle 11, D0:04:B0:9A:26:9E, ACL, encryption off
/// (cheoljun99/android_classic_nsec.pcap frame 11341).
private let connectionComplete = packet("030b000b009e269ab004d00100")

@Suite("BR/EDR commands")
struct ClassicCommandTests {
  @Test func createConnection() {
    // cheoljun99/android_classic_nsec.pcap frame 11281.
    let frame = dissect(.command, packet("05040d9e269ab004d018cc0100000001"))
    #expect(frame.malformed == nil)
    #expect(frame.summaryText == "D0:04:B0:9A:26:9E")
    #expect(frame.fields.text("params.address") == "D0:04:B0:9A:26:9E")
    #expect(frame.fields.uint("params.packet_type") == 0xCC18)
    #expect(frame.fields.name("params.packet_type") == "DM1, DH1, DM3, DH3, DM5, DH5")
    #expect(frame.fields.name("params.page_scan_repetition_mode") == "R1")
    #expect(frame.fields.uint("params.clock_offset") == 0)
    #expect(frame.fields.bool("params.clock_offset_valid") == false)
    #expect(frame.fields.uint("params.allow_role_switch") == 1)
    #expect(Array(frame.linkEvents) == [.connectRequested(peer: BDAddr("D0:04:B0:9A:26:9E"), peerType: .publicDevice, isLE: false)])
    // A valid clock offset: bit 15 set, the offset in bits 0-14 (Core §7.1.5 layout).
    let valid = dissect(.command, packet("05040d9e269ab004d018cc02003481") + [0x00])
    #expect(valid.fields.uint("params.clock_offset") == 0x0134)
    #expect(valid.fields.bool("params.clock_offset_valid") == true)
    #expect(valid.fields.name("params.allow_role_switch") == "stay central, refuse a role switch")
  }

  @Test func remoteNameRequestAndCancel() {
    // cheoljun99/android_classic_nsec.pcap frame 11358.
    let request = dissect(.command, packet("19040a9e269ab004d001000000"))
    #expect(request.summaryText == "D0:04:B0:9A:26:9E")
    #expect(request.fields.name("params.page_scan_repetition_mode") == "R1")
    #expect(request.fields.bool("params.clock_offset_valid") == false)
    // xyaoled_matrix/xyaoled_btsnoop_aaaa.log frames 22495 and 22507 (the second cancel fails).
    let cancel = dissect(.command, packet("1a0406202d5c81d2cc"))
    #expect(cancel.summaryText == "CC:D2:81:5C:2D:20")
    let failed = dissect(.event, packet("0e0a011a0412202d5c81d2cc"))
    #expect(failed.fields.uint("params.return.status") == 0x12)
    #expect(failed.fields.text("params.return.address") == "CC:D2:81:5C:2D:20")
  }

  @Test func linkKeyRequestReplies() {
    // cheoljun99/android_classic_nsec.pcap frames 11399 and 11400.
    let reply = dissect(.command, packet("0b04169e269ab004d0ffaf7b5d41953f3aed98084a39838a92"))
    #expect(reply.malformed == nil)
    #expect(reply.summaryText == "D0:04:B0:9A:26:9E")
    #expect(reply.fields.text("params.link_key") == "ffaf7b5d41953f3aed98084a39838a92")
    let complete = dissect(.event, packet("0e0a010b04009e269ab004d0"))
    #expect(complete.fields.text("params.return.address") == "D0:04:B0:9A:26:9E")
    #expect(complete.fields.value("params.return.raw") == nil)
    // Negative reply (Core §7.1.11): the address alone, and its return parameters.
    let negative = dissect(.command, packet("0c04069e269ab004d0"))
    #expect(negative.summaryText == "D0:04:B0:9A:26:9E")
    #expect(dissect(.event, packet("0e0a010c04009e269ab004d0")).fields.text("params.return.address") == "D0:04:B0:9A:26:9E")
  }

  @Test func pairingReplies() {
    // Core §7.1.12 PIN Code Request Reply: "1234" in a 16-byte field.
    let pin = dissect(.command, packet("0d04179e269ab004d004") + Array("1234".utf8) + [UInt8](repeating: 0, count: 12))
    #expect(pin.malformed == nil)
    #expect(pin.fields.uint("params.pin_length") == 4)
    #expect(pin.fields.text("params.pin_code") == "1234")
    // A PIN length beyond 16 is malformed, with the fields before it kept.
    let badPIN = dissect(.command, packet("0d04179e269ab004d011") + [UInt8](repeating: 0x31, count: 16))
    #expect(badPIN.malformed != nil)
    #expect(badPIN.fields.text("params.address") == "D0:04:B0:9A:26:9E")
    // §7.1.29 IO Capability Request Reply: DisplayYesNo, no OOB data, MITM with general bonding.
    let io = dissect(.command, packet("2b04099e269ab004d0010005"))
    #expect(io.fields.name("params.io_capability") == "DisplayYesNo")
    #expect(io.fields.name("params.oob_data_present") == "not present")
    #expect(io.fields.name("params.authentication_requirements") == "MITM, general bonding")
    #expect(io.summaryText == "D0:04:B0:9A:26:9E DisplayYesNo, MITM, general bonding")
    // §7.1.30 User Confirmation Request Reply and its return parameters.
    #expect(dissect(.command, packet("2c04069e269ab004d0")).summaryText == "D0:04:B0:9A:26:9E")
    #expect(dissect(.event, packet("0e0a012c04009e269ab004d0")).fields.text("params.return.address") == "D0:04:B0:9A:26:9E")
  }

  @Test func connectionRequestAnswers() {
    // miband3_blproject/le_scan_a2_scanwcap.pcapng frame 32.
    let accept = dissect(.command, packet("090407250e4b8d28c000"))
    #expect(accept.summaryText == "C0:28:8D:4B:0E:25, become central")
    #expect(accept.fields.name("params.role") == "become central")
    // §7.1.9 Reject Connection Request: reason 0x0F (Connection Rejected due to Unacceptable BD_ADDR).
    let reject = dissect(.command, packet("0a0407250e4b8d28c00f"))
    #expect(reject.fields.uint("params.reason") == 0x0F)
    #expect(reject.summaryText.hasPrefix("C0:28:8D:4B:0E:25, "))
  }

  @Test func handleCommandsLabelTheirConnection() {
    var dissector = Dissector()
    _ = dissect(.event, connectionComplete, with: &dissector, number: 1)
    // cheoljun99/android_classic_nsec.pcap frames 11349, 11402, 11439, 11360.
    let policy = dissect(.command, packet("0d08040b000500"), with: &dissector, number: 2)
    #expect(policy.connection?.peer == BDAddr("D0:04:B0:9A:26:9E"))
    #expect(policy.fields.name("params.link_policy") == "role switch, sniff mode")
    #expect(policy.summaryText == "handle 11: role switch, sniff mode")
    let encryption = dissect(.command, packet("1304030b0001"), with: &dissector, number: 3)
    #expect(encryption.summaryText == "handle 11, on")
    #expect(encryption.connection?.handle == 11)
    let subrating = dissect(.command, packet("1108080b00b00402000200"), with: &dissector, number: 4)
    #expect(subrating.fields.uint("params.max_latency") == 1200)
    #expect(subrating.fields.uint("params.min_local_timeout") == 2)
    let features = dissect(.command, packet("1c04030b0001"), with: &dissector, number: 5)
    #expect(features.summaryText == "handle 11, page 1")
    // Return parameters with a handle label the Command Complete (frames 11350 and 11406).
    let written = dissect(.event, packet("0e06010d08000b00"), with: &dissector, number: 6)
    #expect(written.connection?.peer == BDAddr("D0:04:B0:9A:26:9E"))
    let keySize = dissect(.event, packet("0e07010814000b0010"), with: &dissector, number: 7)
    #expect(keySize.fields.uint("params.return.key_size") == 16)
    #expect(keySize.connection?.handle == 11)
  }

  @Test func sniffAndRoles() {
    // ix7_scooter/ix7_scooter_nus_btsnoop_hci.log frame 2564: 250-500 ms, attempt 4, timeout 1.
    let sniff = dissect(.command, packet("03080a33002003900104000100"))
    #expect(sniff.summaryText == "handle 51, 250 ms to 500 ms")
    #expect(sniff.fields.uint("params.max_interval") == 800)
    #expect(sniff.fields.uint("params.min_interval") == 400)
    // Core §7.2.2: Sniff_Attempt and Sniff_Timeout count receive slots of 1.25 ms.
    if case .measure(4, let scale, _)? = sniff.fields.value("params.sniff_attempt") { #expect(scale == 1.25) } else { Issue.record("sniff_attempt") }
    #expect(sniff.fields.uint("params.sniff_timeout") == 1)
    // miband3_blproject/ue_boom_classic_nopairing.pcapng frame 722.
    #expect(dissect(.command, packet("0408020001")).summaryText == "handle 256")
    // cheoljun99/android_classic_nsec.pcap frame 11408.
    let role = dissect(.command, packet("0b08079e269ab004d000"))
    #expect(role.summaryText == "D0:04:B0:9A:26:9E to central")
    // §7.2.7 Role Discovery return: handle 11, peripheral.
    let discovery = dissect(.event, packet("0e0701090800") + [0x0B, 0x00, 0x01])
    #expect(discovery.fields.name("params.return.role") == "peripheral")
    #expect(discovery.connection?.handle == 11)
  }

  @Test func inquiryAndScanning() {
    // cheoljun99/android_classic_nsec.pcap frame 11253: GIAC, 10 × 1.28 s.
    let inquiry = dissect(.command, packet("010405338b9e0a00"))
    #expect(inquiry.summaryText == "GIAC, 12.80 s")
    #expect(inquiry.fields.uint("params.lap") == 0x9E8B33)
    #expect(inquiry.fields.uint("params.inquiry_length") == 10)
    #expect(dissect(.command, packet("010405008b9e0805")).summaryText == "LIAC, 10.24 s, up to 5 responses")
    // btstack/btstack_a2dp_sbc_test2.pklg frames 67 and 73.
    #expect(dissect(.command, packet("180c020060")).summaryText == "15360 ms")
    let cod = dissect(.command, packet("240c030c027a"))
    #expect(cod.summaryText == "Phone (0x7a020c)")
    #expect(cod.fields.uint("params.class_of_device") == 0x7A020C)
    #expect(cod.fields.name("params.major_service_classes") == "Networking, Capturing, Object Transfer, Audio, Telephony")
    // xyaoled_matrix/xyaoled_btsnoop_aaaa.log frame 96; Write Scan Enable (Core §7.3.18).
    #expect(dissect(.command, packet("3a0c0401338b9e")).summaryText == "GIAC")
    #expect(dissect(.command, packet("1a0c0103")).summaryText == "inquiry and page scan")
    // xyaoled_matrix/xyaoled_btsnoop_aaaa.log frame 21999; hciparse/macos_poweron_broadcom_test00.pklg frame 46.
    #expect(dissect(.command, packet("050c020100")).fields.name("params.condition_type") == "every device")
    #expect(dissect(.command, packet("160c02c05d")).summaryText == "15000 ms")
    // btstack/btstack_a2dp_sbc_test2.pklg frame 76: Write Local Name.
    #expect(dissect(.command, padded("130cf84846502041472044656d6f2030303a31413a37443a44413a37313a3031", to: 251)).summaryText == "\"HFP AG Demo 00:1A:7D:DA:71:01\"")
  }

  @Test func writeExtendedInquiryResponseDecodesItsStructures() {
    // Core §7.3.56: FEC required, then a complete name "Phone" and 16-bit UUIDs 0x110A, 0x111F.
    let frame = dissect(.command, padded("520cf101060950686f6e6505030a111f11", to: 244))
    #expect(frame.malformed == nil)
    #expect(frame.summaryText == "\"Phone\"")
    #expect(frame.fields.text("params.eir.0.name") == "Phone")
    #expect(frame.fields.text("params.eir.1.uuids.0") == "110a")
    // A structure running past the 240 bytes is malformed, layer advertising.
    let bad = dissect(.command, padded("520cf101ff09", to: 244))
    #expect(bad.malformed?.layer == .advertising)
  }

  @Test func returnParameters() {
    // hciparse/macos_poweron_broadcom_test00.pklg frames 41 and 53.
    let stored = dissect(.event, packet("0e08010d0c0007000000"))
    #expect(stored.fields.uint("params.return.max_num_keys") == 7)
    #expect(stored.fields.uint("params.return.num_keys_read") == 0)
    #expect(dissect(.event, packet("0e0701230c000c0138")).fields.name("params.return.major_device_class") == "Computer")
    // miband3_blproject/ble_mouse_connection_movement.pcapng frames 276, 294, 304, 328.
    let laps = dissect(.event, packet("0e0802390c0001338b9e"))
    #expect(laps.fields.numbers("hci.params.return.iac_laps") == [0x9E8B33])
    #expect(dissect(.event, packet("0e0501580c000c")).fields.int("params.return.tx_power") == 12)
    let activity = dissect(.event, packet("0e08021b0c0000081200"))
    #expect(activity.fields.uint("params.return.page_scan_interval") == 2048)
    #expect(activity.fields.uint("params.return.page_scan_window") == 18)
    #expect(dissect(.event, packet("0e0601120c000000")).fields.uint("params.return.num_keys_deleted") == 0)
    // Status-only writes stay quiet; a failed command answered with its status alone too.
    let written = dissect(.event, packet("0e0401240c00"))
    #expect(written.fields.value("params.return.raw") == nil)
    #expect(dissect(.event, packet("0e04010b0412")).malformed == nil)
  }
}

@Suite("BR/EDR events")
struct ClassicEventTests {
  @Test func inquiryEvents() {
    // miband3_blproject/le_scan_a2_scanwcap.pcapng frames 257 and 260.
    let eir = dissect(.event, padded("2fff01250e4b8d28c00100180424540be4091001000a00ffffffff020a040f020d110b110e110f111e11081131110a09554520424f4f4d2032", to: 257))
    #expect(eir.malformed == nil)
    #expect(eir.summaryText == "C0:28:8D:4B:0E:25, -28 dBm, \"UE BOOM 2\"")
    #expect(eir.fields.uint("params.class_of_device") == 0x240418)
    #expect(eir.fields.name("params.major_device_class") == "Audio/Video")
    #expect(eir.fields.uint("params.clock_offset") == 0x0B54)
    #expect(eir.fields.int("params.rssi") == -28)
    #expect(eir.fields.text("params.eir.3.name") == "UE BOOM 2")
    #expect(eir.fields.text("params.eir.2.uuids.0") == "110d")
    #expect(dissect(.event, packet("010100")).summaryText == "Success")
    // Core §7.7.2 Inquiry Result, two responses (page scan R1, reserved 2, class, clock offset).
    let two = dissect(.event, packet("021d02") + packet("250e4b8d28c0010000180424540b") + packet("fc0915011468020000") + packet("3c04084263"))
    #expect(two.malformed == nil)
    #expect(two.summaryText == "2 responses")
    #expect(two.fields.text("params.responses.1.address") == "68:14:01:15:09:FC")
    #expect(two.fields.name("params.responses.1.page_scan_repetition_mode") == "R2")
    #expect(two.fields.uint("params.responses.1.class_of_device") == 0x08043C)
    // §7.7.33 with RSSI: one reserved octet, RSSI last.
    let rssi = dissect(.event, packet("220f01250e4b8d28c00100180424540bc4"))
    #expect(rssi.summaryText == "C0:28:8D:4B:0E:25")
    #expect(rssi.fields.int("params.responses.0.rssi") == -60)
    // A count larger than the responses present is malformed.
    #expect(dissect(.event, packet("220f02250e4b8d28c00100180424540bc4")).malformed != nil)
  }

  @Test func connectionRequestAndNames() {
    // miband3_blproject/le_scan_a2_scanwcap.pcapng frame 30.
    let request = dissect(.event, packet("040a250e4b8d28c018042401"))
    #expect(request.summaryText == "C0:28:8D:4B:0E:25, ACL, Audio/Video")
    #expect(request.fields.name("params.major_service_classes") == "Rendering, Audio")
    // cheoljun99/android_classic_nsec.pcap frame 11372: a UTF-8 name, up to the first NUL.
    let name = dissect(.event, padded("07ff009e269ab004d0ecb2a0eca480ec9d982053323200", to: 257))
    #expect(name.malformed == nil)
    #expect(name.fields.text("params.name") == "철준의 S22")
    #expect(name.summaryText == "D0:04:B0:9A:26:9E \"철준의 S22\"")
    // xyaoled_matrix/xyaoled_btsnoop_aaaa.log frame 22477: a failed request says why.
    let failed = dissect(.event, padded("07ff04f70a7b373250", to: 257))
    #expect(failed.summaryText == "50:32:37:7B:0A:F7 Page Timeout")
    // A name cut short is malformed.
    #expect(dissect(.event, packet("0708009e269ab004d041")).malformed != nil)
  }

  @Test func rolesModesAndSlots() {
    var dissector = Dissector()
    _ = dissect(.event, connectionComplete, with: &dissector, number: 1)
    // cheoljun99/android_classic_nsec.pcap frames 11340 and 11412.
    let peripheral = dissect(.event, packet("1208009e269ab004d001"), with: &dissector, number: 2)
    #expect(peripheral.summaryText == "D0:04:B0:9A:26:9E as peripheral")
    #expect(peripheral.fields.name("params.role") == "peripheral")
    #expect(dissect(.event, packet("1208009e269ab004d000")).summaryText == "D0:04:B0:9A:26:9E as central")
    // Frames 11371, 11374, 11354, 11362, 11370 on handle 11.
    let slots = dissect(.event, packet("1b030b0005"), with: &dissector, number: 3)
    #expect(slots.summaryText == "5 slots")
    #expect(slots.connection?.peer == BDAddr("D0:04:B0:9A:26:9E"))
    let supervision = dissect(.event, packet("38040b00401f"), with: &dissector, number: 4)
    #expect(supervision.summaryText == "5000 ms")
    #expect(supervision.fields.uint("params.supervision_timeout") == 8000)
    #expect(dissect(.event, packet("1c05000b004062"), with: &dissector, number: 5).fields.uint("params.clock_offset") == 0x6240)
    let extended = dissect(.event, packet("230d000b0001020b00000000000000"), with: &dissector, number: 6)
    #expect(extended.summaryText == "page 1")
    #expect(extended.fields.uint("params.max_page") == 2)
    #expect(extended.connection?.handle == 11)
    #expect(dissect(.event, packet("1d05000b0018cc"), with: &dissector, number: 7).fields.uint("params.packet_type") == 0xCC18)
    // ix7_scooter/ix7_scooter_nus_btsnoop_hci.log frames 968 and 993 (sniff 2016 slots, then active).
    let sniff = dissect(.event, packet("140600330002e007"))
    #expect(sniff.summaryText == "sniff, 1260 ms")
    #expect(sniff.fields.name("params.mode") == "sniff")
    #expect(sniff.fields.uint("params.interval") == 2016)
    #expect(dissect(.event, packet("1406003300000000")).summaryText == "active")
    // Odd slot counts are exact: 13 slots = 8.125 ms.
    #expect(dissect(.event, packet("140600330002") + [13, 0]).summaryText == "sniff, 8.125 ms")
    // miband3_blproject/le_scan_a2_scanwcap.pcapng frame 265.
    #expect(dissect(.event, packet("2007250e4b8d28c001")).summaryText == "C0:28:8D:4B:0E:25 R1")
  }

  @Test func pairingEvents() {
    // cheoljun99/android_classic_nsec.pcap frame 11398.
    #expect(dissect(.event, packet("17069e269ab004d0")).summaryText == "D0:04:B0:9A:26:9E")
    // Core §7.7.24 Link Key Notification: authenticated P-256 key.
    let notification = dissect(.event, packet("18179e269ab004d0") + [UInt8](0..<16) + [0x08])
    #expect(notification.fields.name("params.key_type") == "Authenticated Combination Key (P-256)")
    #expect(notification.fields.text("params.link_key") == "000102030405060708090a0b0c0d0e0f")
    #expect(notification.summaryText == "D0:04:B0:9A:26:9E, Authenticated Combination Key (P-256)")
    // §7.7.22 PIN Code Request, §7.7.40 IO Capability Request, §7.7.41 IO Capability Response.
    #expect(dissect(.event, packet("16069e269ab004d0")).summaryText == "D0:04:B0:9A:26:9E")
    #expect(dissect(.event, packet("31069e269ab004d0")).summaryText == "D0:04:B0:9A:26:9E")
    let response = dissect(.event, packet("32099e269ab004d0030004"))
    #expect(response.fields.name("params.io_capability") == "NoInputNoOutput")
    #expect(response.summaryText == "D0:04:B0:9A:26:9E NoInputNoOutput, no MITM, general bonding")
    // §7.7.42 User Confirmation Request: 4660 is shown as the six digits the user compares.
    let confirmation = dissect(.event, packet("330a9e269ab004d034120000"))
    #expect(confirmation.fields.uint("params.numeric_value") == 4660)
    #expect(confirmation.summaryText == "D0:04:B0:9A:26:9E 004660")
    // §7.7.45 Simple Pairing Complete, failed with Authentication Failure (0x05).
    #expect(dissect(.event, packet("3607059e269ab004d0")).summaryText == "D0:04:B0:9A:26:9E Authentication Failure")
    // §7.7.50 Remote Host Supported Features Notification.
    #expect(dissect(.event, packet("3d0e9e269ab004d00f00000000000000")).fields.uint("params.host_features") == 0x0F)
  }

  @Test func synchronousConnectionComplete() {
    // btstack/btstack_a2dp_sbc_test2.pklg frames 454 and 462.
    let setup = dissect(.command, packet("2804114700401f0000401f00000d004300028003"))
    #expect(setup.malformed == nil)
    #expect(setup.fields.uint("params.transmit_bandwidth") == 8000)
    #expect(setup.fields.uint("params.max_latency") == 13)
    #expect(setup.fields.name("params.packet_type") == "no 3-EV3, no 2-EV5, no 3-EV5")
    let complete = dissect(.event, packet("2c110042000271da7d1a00020c043c003c0003"))
    #expect(complete.summaryText == "00:1A:7D:DA:71:02 eSCO Success")
    #expect(complete.fields.uint("params.transmission_interval") == 12)
    #expect(complete.fields.name("params.air_mode") == "transparent")
    #expect(complete.connection?.handle == 0x42)
  }

  @Test func everyStrictPrefixIsMalformedNotACrash() {
    let samples: [[UInt8]] = [
      packet("05040d9e269ab004d018cc0100000001"), packet("19040a9e269ab004d001000000"),
      packet("0b04169e269ab004d0ffaf7b5d41953f3aed98084a39838a92"), packet("010405338b9e0a00"),
      packet("03080a33002003900104000100"), packet("2804114700401f0000401f00000d004300028003"),
      packet("2b04099e269ab004d0010005"), packet("050c020100"), packet("3a0c0401338b9e"),
    ]
    for sample in samples {
      for cut in 0..<sample.count {
        #expect(dissect(.command, Array(sample[..<cut])).malformed != nil, "prefix \(cut) of command \(sample)")
      }
    }
    let events: [[UInt8]] = [
      packet("1208009e269ab004d001"), packet("140600330002e007"), packet("040a250e4b8d28c018042401"),
      packet("18179e269ab004d0") + [UInt8](0..<16) + [0x08], packet("330a9e269ab004d034120000"),
      packet("230d000b0001020b00000000000000"), packet("2c110042000271da7d1a00020c043c003c0003"),
      packet("220f01250e4b8d28c00100180424540bc4"), packet("0e0a010b04009e269ab004d0"), packet("0e07010814000b0010"),
    ]
    for sample in events {
      for cut in 0..<sample.count {
        #expect(dissect(.event, Array(sample[..<cut])).malformed != nil, "prefix \(cut) of event \(sample)")
      }
    }
  }

  @Test func parametersCutShortInsideTheirLengthAreMalformed() {
    // The declared length matches what is present, but the layout needs more: each decoder
    // reports truncation at the parameter it could not read.
    for (bytes, name) in [
      (packet("0e0701090800") + [0x0B, 0x00], "Role Discovery return"),
      (packet("1b020b00"), "Max Slots Change"),
      (packet("1404003300"), "Mode Change"),
      (packet("2f0701250e4b8d28c0"), "Extended Inquiry Result"),
    ] {
      let frame = dissect(.event, Array(bytes[0..<1]) + [UInt8(bytes.count - 2)] + Array(bytes[2...]))
      #expect(frame.malformed != nil, "\(name)")
      #expect(frame.fields.depth == 0, "\(name)")
    }
  }
}
