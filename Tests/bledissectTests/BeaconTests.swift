import Foundation
import Testing

@testable import bledissect

/// iBeacon and Eddystone advertisements (captures/beacons.btsnoop, made by
/// Scripts/captures/make_vendor_scenarios.py), decoded field by field against what the script
/// advertised (captures/beacons.truth.json).
@Suite struct BeaconTests {
  @Test func everyBeaconDecodesAsAdvertised() throws {
    let truth = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: capturePath("beacons.truth.json")))) as? [[String: Any]])
    let result = runCLI(["--json", "--no-cache", capturePath("beacons.btsnoop")])
    #expect(result.status == 0)
    var reports: [[String: Any]] = []
    for line in result.stdout.split(separator: "\n") {
      let frame = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
      guard let params = (frame["hci"] as? [String: Any])?["params"] as? [String: Any], let list = params["reports"] as? [[String: Any]] else { continue }
      reports += list
    }
    #expect(reports.count == truth.count)
    for (report, sent) in zip(reports, truth) {
      let fields = try #require(sent["fields"] as? [String: Any])
      #expect(report["address"] as? String == fields["address"] as? String)
      #expect(report["rssi"] as? Int == fields["rssi"] as? Int)
      let structures = try #require(report["ad"] as? [[String: Any]])
      switch sent["message"] as? String {
      case "ibeacon"?:
        let beacon = try #require(structures.compactMap { $0["ibeacon"] as? [String: Any] }.first)
        #expect((beacon["proximity_uuid"] as? String)?.uppercased() == fields["proximity_uuid"] as? String)
        #expect(beacon["major"] as? Int == fields["major"] as? Int)
        #expect(beacon["minor"] as? Int == fields["minor"] as? Int)
        #expect(beacon["measured_power"] as? Int == fields["measured_power_dbm"] as? Int)
      case let message?:
        let frame = try #require(structures.compactMap { $0["eddystone"] as? [String: Any] }.first)
        #expect(frame["frame_type"] as? Int == fields["frame_type"] as? Int)
        switch message {
        case "eddystone_uid":
          #expect(frame["tx_power"] as? Int == fields["tx_power_dbm"] as? Int)
          #expect(frame["namespace"] as? String == fields["namespace_hex"] as? String)
          #expect(frame["instance"] as? String == fields["instance_hex"] as? String)
          #expect((frame["reserved"] != nil) == (fields["rfu_present"] as? Bool == true))
        case "eddystone_url":
          #expect(frame["tx_power"] as? Int == fields["tx_power_dbm"] as? Int)
          #expect(frame["url"] as? String == fields["url"] as? String)
        case "eddystone_tlm":
          let battery = fields["battery_mv"] as? Int ?? 0
          #expect((frame["battery_mv"] as? Double).map { Int($0) } == (battery == 0 ? nil : battery))
          #expect(frame["temperature_c"] as? Double == fields["temperature_c"] as? Double)
          #expect(frame["advertising_pdus"] as? Int == fields["adv_pdu_count"] as? Int)
          #expect(frame["uptime_s"] as? Double == (fields["time_since_boot_ds"] as? Double).map { $0 / 10 })
        default:
          Issue.record("unexpected message \(message)")
        }
      case nil:
        Issue.record("truth entry without a message")
      }
    }
  }
}
