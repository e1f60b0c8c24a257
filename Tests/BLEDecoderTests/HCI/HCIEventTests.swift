import Testing
import BLECore
import BLERender
@testable import BLEDecoder

@Suite struct HCIEventTests {
  // LE Connection Complete from captures/hr_strap_session.btsnoop frame 39 (bumble 0.0.236):
  // handle 1, central, random peer D0:B1:ED:00:48:52, interval 24 (30 ms), latency 0, timeout 42 (420 ms).
  static let connectionComplete: [UInt8] = [
    0x3E, 0x13, 0x01, 0x00, 0x01, 0x00, 0x00, 0x01, 0x52, 0x48, 0x00, 0xED, 0xB1, 0xD0, 0x18, 0x00, 0x00, 0x00, 0x2A, 0x00, 0x00,
  ]

  @Test func leConnectionCompleteOpensAConnection() {
    var dissector = Dissector()
    let frame = dissect(.event, Self.connectionComplete, with: &dissector)
    #expect(frame.malformed == nil)
    #expect(frame.titleText == "LE Connection Complete")
    #expect(frame.fields.uint("params.status") == 0)
    #expect(frame.fields.uint("params.handle") == 1)
    #expect(frame.fields.name("params.role") == "central")
    #expect(frame.fields.text("params.peer_address") == "D0:B1:ED:00:48:52")
    #expect(frame.fields.uint("params.interval") == 24)
    #expect(frame.fields.uint("params.supervision_timeout") == 42)
    #expect(frame.connection?.peer?.description == "D0:B1:ED:00:48:52")
    let connection = dissector.connections.connection(adapter: 0, handle: 1)
    #expect(connection?.role == .central)
    #expect(connection?.peerType == .randomDevice)
    #expect(connection?.interval == 24)
    #expect(connection?.generation == 1)
  }

  @Test func enhancedConnectionCompleteV2() {
    // Core Vol 4 Part E §7.7.65.10 (v2, subevent 0x29): handle 0x0040 as peripheral, public peer
    // 11:22:33:44:55:66, zero RPAs, interval 6, latency 4, timeout 100, accuracy 1, adv handle 2, sync 0x0FFF.
    let bytes: [UInt8] = [0x3E, 0x22, 0x29, 0x00, 0x40, 0x00, 0x01, 0x00, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11]
      + [UInt8](repeating: 0, count: 12) + [0x06, 0x00, 0x04, 0x00, 0x64, 0x00, 0x01, 0x02, 0xFF, 0x0F]
    var dissector = Dissector()
    let frame = dissect(.event, bytes, with: &dissector)
    #expect(frame.malformed == nil)
    #expect(frame.fields.name("params.role") == "peripheral")
    #expect(frame.fields.uint("params.advertising_handle") == 2)
    #expect(frame.fields.uint("params.sync_handle") == 0x0FFF)
    #expect(dissector.connections.connection(adapter: 0, handle: 0x40)?.peer == BDAddr("11:22:33:44:55:66"))
  }

  @Test func disconnectionClosesAndHandleReuseCountsGenerations() {
    var dissector = Dissector()
    _ = dissect(.event, Self.connectionComplete, with: &dissector, number: 1)
    // Disconnection Complete: status 0, handle 1, reason 0x13 (Remote User Terminated Connection).
    let closed = dissect(.event, [0x05, 0x04, 0x00, 0x01, 0x00, 0x13], with: &dissector, number: 2)
    #expect(closed.fields.name("params.reason") == "Remote User Terminated Connection")
    #expect(closed.summaryText == "Remote User Terminated Connection")
    #expect(closed.connection?.peer?.description == "D0:B1:ED:00:48:52")
    #expect(dissector.connections.connection(adapter: 0, handle: 1) == nil)
    let again = dissect(.event, Self.connectionComplete, with: &dissector, number: 3)
    #expect(again.connection?.generation == 2)
  }

  @Test func aclOnAnUnknownHandleCreatesAnImplicitConnection() {
    var dissector = Dissector()
    // ATT notification on handle 0x0040 with no connect event before it.
    let frame = dissect(.acl, [0x40, 0x20, 0x07, 0x00, 0x03, 0x00, 0x04, 0x00, 0x1B, 0x10, 0x00], direction: .controllerToHost, with: &dissector)
    #expect(frame.connection?.handle == 0x40)
    #expect(frame.connection?.peer == nil)
    #expect(frame.diagnostics.count == 1)
    #expect(dissector.connections.connection(adapter: 0, handle: 0x40) != nil)
    // The second frame on it is quiet.
    let next = dissect(.acl, [0x40, 0x20, 0x01, 0x00, 0x00], direction: .controllerToHost, with: &dissector, number: 2)
    #expect(next.diagnostics.isEmpty)
  }

  @Test func sameHandleOnTwoControllersAreTwoConnections() {
    var dissector = Dissector()
    _ = dissect(.event, Self.connectionComplete, with: &dissector)
    var frame = DissectedFrame()
    dissector.dissect(CaptureRecord(timestamp: 0, adapter: 1, direction: .hostToController, kind: .acl, bytes: [0x01, 0x00, 0x00, 0x00]), number: 2, into: &frame)
    #expect(frame.connection?.adapter == 1)
    #expect(frame.connection?.peer == nil)
    #expect(dissector.connections.connection(adapter: 0, handle: 1)?.peer != nil)
  }

  @Test func connectionUpdateCompleteUpdatesTheTable() {
    var dissector = Dissector()
    _ = dissect(.event, Self.connectionComplete, with: &dissector)
    // LE Connection Update Complete: handle 1, interval 0x0028 (50 ms), latency 2, timeout 0x0190 (4 s).
    let frame = dissect(.event, [0x3E, 0x0A, 0x03, 0x00, 0x01, 0x00, 0x28, 0x00, 0x02, 0x00, 0x90, 0x01], with: &dissector, number: 2)
    #expect(frame.summaryText == "interval 50.00 ms, latency 2, timeout 4000.00 ms")
    let connection = dissector.connections.connection(adapter: 0, handle: 1)
    #expect(connection?.interval == 0x28)
    #expect(connection?.latency == 2)
    #expect(connection?.supervisionTimeout == 0x190)
  }

  @Test func commandCompleteNamesTheCommandAndStatus() {
    // Command Complete for LE Set Scan Enable (0x200C) with status 0x0C (Command Disallowed).
    let frame = dissect(.event, [0x0E, 0x04, 0x01, 0x0C, 0x20, 0x0C])
    #expect(frame.fields.name("params.command") == "LE Set Scan Enable")
    #expect(frame.fields.name("params.return.status") == "Command Disallowed")
    #expect(frame.summaryText == "LE Set Scan Enable: Command Disallowed")
  }

  @Test func commandStatus() {
    // Command Status: success, 1 packet, LE Create Connection (0x200D).
    let frame = dissect(.event, [0x0F, 0x04, 0x00, 0x01, 0x0D, 0x20])
    #expect(frame.titleText == "Command Status")
    #expect(frame.summaryText == "LE Create Connection: pending")
  }

  @Test func numberOfCompletedPackets() {
    // Two handles: 0x0040 → 3 packets, 0x0041 → 1.
    let frame = dissect(.event, [0x13, 0x09, 0x02, 0x40, 0x00, 0x03, 0x00, 0x41, 0x00, 0x01, 0x00])
    #expect(frame.fields.uint("params.handles.0.handle") == 0x40)
    #expect(frame.fields.uint("params.handles.0.count") == 3)
    #expect(frame.fields.uint("params.handles.1.handle") == 0x41)
    #expect(frame.summaryText == "4 packets on 2 handles")
    // A count of handles larger than the parameters is malformed, not a crash.
    let bad = dissect(.event, [0x13, 0x05, 0x09, 0x40, 0x00, 0x03, 0x00])
    #expect(bad.malformed != nil)
  }

  @Test func encryptionChangeAndHardwareError() {
    let change = dissect(.event, [0x08, 0x04, 0x00, 0x40, 0x00, 0x01])
    #expect(change.summaryText == "encryption on")
    #expect(change.connection?.handle == 0x40)
    let hardware = dissect(.event, [0x10, 0x01, 0x2A])
    #expect(hardware.titleText == "Hardware Error")
    #expect(hardware.fields.uint("params.hardware_code") == 0x2A)
  }

  @Test func advertisingReportWithADStructures() {
    // LE Advertising Report, one ADV_IND from random C0:11:22:33:44:55, RSSI -60, data:
    // flags 0x06, complete name "HR", 16-bit UUIDs 0x180D, appearance 0x0341, manufacturer 0x006B + 01 02.
    let ad: [UInt8] = [0x02, 0x01, 0x06, 0x03, 0x09, 0x48, 0x52, 0x03, 0x03, 0x0D, 0x18, 0x03, 0x19, 0x41, 0x03, 0x05, 0xFF, 0x6B, 0x00, 0x01, 0x02]
    let bytes: [UInt8] = [0x3E, UInt8(12 + ad.count), 0x02, 0x01, 0x00, 0x01, 0x55, 0x44, 0x33, 0x22, 0x11, 0xC0, UInt8(ad.count)] + ad + [0xC4]
    let frame = dissect(.event, bytes)
    #expect(frame.malformed == nil)
    #expect(frame.titleText == "LE Advertising Report")
    #expect(frame.fields.name("params.reports.0.event_type") == "ADV_IND")
    #expect(frame.fields.text("params.reports.0.address") == "C0:11:22:33:44:55")
    #expect(frame.fields.int("params.reports.0.rssi") == -60)
    #expect(frame.fields.uint("params.reports.0.ad.0.flags") == 6)
    #expect(frame.fields.bool("params.reports.0.ad.0.le_general_discoverable") == true)
    #expect(frame.fields.text("params.reports.0.ad.1.name") == "HR")
    #expect(frame.fields.name("params.reports.0.ad.2.uuids.0") == "Heart Rate")
    #expect(frame.fields.name("params.reports.0.ad.3.appearance") == "Heart Rate Sensor: Heart Rate Belt")
    #expect(frame.fields.name("params.reports.0.ad.4.company") == "Polar Electro OY")
    #expect(frame.fields.text("params.reports.0.ad.4.data") == "0102")
  }

  @Test func adStructureLongerThanItsDataIsMalformed() {
    // One AD structure claiming 9 bytes with 2 present.
    let ad: [UInt8] = [0x09, 0x09, 0x48]
    let bytes: [UInt8] = [0x3E, UInt8(12 + ad.count), 0x02, 0x01, 0x00, 0x01, 0x55, 0x44, 0x33, 0x22, 0x11, 0xC0, UInt8(ad.count)] + ad + [0xC4]
    let frame = dissect(.event, bytes)
    #expect(frame.malformed?.layer == .advertising)
  }

  @Test func everyStrictPrefixOfAnEventIsMalformedNotACrash() {
    let samples: [[UInt8]] = [
      Self.connectionComplete,
      [0x05, 0x04, 0x00, 0x01, 0x00, 0x13],
      [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00],
      [0x13, 0x05, 0x01, 0x40, 0x00, 0x03, 0x00],
    ]
    for sample in samples {
      for cut in 0..<sample.count {
        let frame = dissect(.event, Array(sample[..<cut]))
        #expect(frame.malformed != nil, "prefix \(cut) of \(sample)")
      }
    }
  }

  @Test func truncatedACLPayloadIsNotedWhenTheWriterCutIt() {
    var frame = DissectedFrame()
    var dissector = Dissector()
    // Android filtered snoop: an ACL header declaring 27 bytes, 4 captured, original length 31.
    let record = CaptureRecord(timestamp: 0, direction: .controllerToHost, kind: .acl, bytes: [0x40, 0x20, 0x1B, 0x00, 0x17, 0x00, 0x04, 0x00], originalLength: 31)
    dissector.dissect(record, number: 1, into: &frame)
    #expect(frame.malformed == nil)
    #expect(frame.diagnostics.first?.message.contains("truncated") == true)
    // The same bytes with no sign of a cut are malformed.
    let cut = CaptureRecord(timestamp: 0, direction: .controllerToHost, kind: .acl, bytes: [0x40, 0x20, 0x1B, 0x00, 0x17, 0x00, 0x04, 0x00])
    dissector.dissect(cut, number: 2, into: &frame)
    #expect(frame.malformed != nil)
  }

  @Test func monitorNotes() {
    let note = dissect(.note(.system), Array("Linux version 6.1.0 (x86_64)\0".utf8))
    #expect(note.titleText == "System Note")
    #expect(note.summaryText == "Linux version 6.1.0 (x86_64)")
    // NEW_INDEX: primary, USB, 00:1A:7D:DA:71:13, "hci0".
    let index = dissect(.indexAdded, [0x00, 0x01, 0x13, 0x71, 0xDA, 0x7D, 0x1A, 0x00] + Array("hci0\0\0\0\0".utf8))
    #expect(index.fields.name("bus") == "USB")
    #expect(index.fields.text("name") == "hci0")
    #expect(index.fields.text("address") == "00:1A:7D:DA:71:13")
    // USER_LOGGING: priority 6, ident "bluetoothd", message.
    let log = dissect(.note(.userLogging), [0x06, 0x0B] + Array("bluetoothd\0".utf8) + Array("Starting\0".utf8))
    #expect(log.summaryText == "bluetoothd: Starting")
  }

  @Test func unknownCommandsAndEventsSayTheirCodes() {
    // Broadcom vendor command 0xFC18 (seen in corpus hciparse/macos_poweron_broadcom_test00.pklg) with one byte.
    let command = dissect(.command, [0x18, 0xFC, 0x01, 0x00])
    #expect(command.titleText == "Vendor Command")
    #expect(command.summaryText == "opcode 0xfc18 (OGF 0x3f, OCF 0x0018)")
    #expect(command.fields.text("params.raw") == "00")
    // Event code 0xFF (vendor) has a name; an unassigned one (0x7A) says its code.
    let event = dissect(.event, [0x7A, 0x01, 0x05])
    #expect(event.summaryText == "event code 0x7a")
    #expect(event.fields.text("params.raw") == "05")
  }
}
