import BLECore
import Foundation
import Testing

@testable import bledissect

/// Captures that start after discovery (made by Scripts/captures/make_late_start.py, which
/// records every value the strap sent in `<name>.truth.json`), decoded with a map from an
/// earlier capture, a `gatt --json` map, `--decode-as`, a BlueZ cache file, the cache, by
/// layout, and by inference alone; every decoded value is compared with what was sent.
@Suite struct GATTMapTests {
  struct TruthValue {
    var handle: Int
    var hex: String
    var decoded: [String: Any]
  }

  static func truth(_ name: String) throws -> [TruthValue] {
    let data = try Data(contentsOf: URL(fileURLWithPath: capturePath(name + ".truth.json")))
    let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    let values = try #require(object["values"] as? [[String: Any]])
    return values.map { TruthValue(handle: $0["handle"] as! Int, hex: $0["hex"] as! String, decoded: $0["decoded"] as! [String: Any]) }
  }

  /// The ATT values in the output (notifications, indications, read responses), in order,
  /// each with its `gatt` and `decoded` objects.
  struct Decoded {
    var handle: Int
    var hex: String
    var gatt: [String: Any]?
    var decoded: [String: Any]?
  }

  static func decodedValues(_ arguments: [String], environment: [String: String] = [:]) throws -> [Decoded] {
    let result = runCLI(["--json"] + arguments, environment: environment)
    #expect(result.status == 0, "\(result.stderr)")
    var values: [Decoded] = []
    for line in result.stdout.split(separator: "\n") {
      let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
      guard let att = object["att"] as? [String: Any], let opcode = att["opcode"] as? Int, [0x0B, 0x1B, 0x1D].contains(opcode),
        let handle = att["handle"] as? Int ?? (opcode == 0x0B ? -1 : nil), let hex = att["value"] as? String
      else { continue }
      values.append(Decoded(handle: handle, hex: hex, gatt: object["gatt"] as? [String: Any], decoded: object["decoded"] as? [String: Any]))
    }
    return values
  }

  /// Compares what was decoded with what was sent, value by value; returns how many values
  /// were decoded (and matched).
  @discardableResult
  static func compare(_ decoded: [Decoded], _ truth: [TruthValue], source expected: String?) -> Int {
    #expect(decoded.count == truth.count)
    var matched = 0
    for (got, sent) in zip(decoded, truth) {
      #expect(got.hex == sent.hex)
      guard let value = got.decoded else { continue }
      if let bpm = sent.decoded["bpm"] as? Int {
        let measurement = value["heart_rate_measurement"] as? [String: Any]
        #expect(measurement?["bpm"] as? Int == bpm, "\(sent.hex)")
        #expect(measurement?["sensor_contact"] as? String == sent.decoded["contact"] as? String, "\(sent.hex)")
        #expect(measurement?["energy_expended_kj"] as? Int == sent.decoded["energy_kj"] as? Int, "\(sent.hex)")
        #expect(measurement?["rr_intervals_ms"] as? [Double] == sent.decoded["rr_ms"] as? [Double], "\(sent.hex)")
      } else if let percent = sent.decoded["battery_percent"] as? Int {
        #expect((value["battery_level"] as? [String: Any])?["percent"] as? Int == percent)
      } else if let location = sent.decoded["body_sensor_location"] as? Int {
        #expect((value["body_sensor_location"] as? [String: Any])?["location"] as? Int == location)
      }
      if let expected { #expect(got.gatt?["source"] as? String == expected) }
      matched += 1
    }
    return matched
  }

  @Test func mapFromAnEarlierCaptureDecodesEveryValue() throws {
    let decoded = try Self.decodedValues(["--no-cache", "--gatt", capturePath("hr_strap_session.btsnoop"), capturePath("late_reconnect.btsnoop")])
    let truth = try Self.truth("late_reconnect")
    #expect(Self.compare(decoded, truth, source: "import") == truth.count)
  }

  @Test func gattJSONMapDecodesEveryValue() throws {
    let map = runCLI(["gatt", "--json", "--no-cache", capturePath("hr_strap_session.btsnoop")])
    let path = temporaryFile(Array(map.stdout.utf8))
    defer { unlink(path) }
    let decoded = try Self.decodedValues(["--no-cache", "--gatt", path, capturePath("late_reconnect.btsnoop")])
    let truth = try Self.truth("late_reconnect")
    #expect(Self.compare(decoded, truth, source: "import") == truth.count)
  }

  @Test func decodeAsDecodesEveryValue() throws {
    let decoded = try Self.decodedValues([
      "--no-cache", "--decode-as", "0x0010=2a37", "--decode-as", "24=2a19", "--decode-as", "0x13=2a38@D0:B1:ED:00:48:52",
      capturePath("late_reconnect.btsnoop"),
    ])
    let truth = try Self.truth("late_reconnect")
    #expect(Self.compare(decoded, truth, source: nil) == truth.count)
    // Per device: another address leaves the handle alone.
    let other = try Self.decodedValues(["--no-cache", "--decode-as", "0x13=2a38@11:22:33:44:55:66", capturePath("late_reconnect.btsnoop")])
    #expect(other.filter { $0.handle == 0x13 }.allSatisfy { $0.decoded == nil })
  }

  @Test func blueZCacheFileDecodesEveryValue() throws {
    // BlueZ's [Attributes] for the strap: handles as make_late_start.py's strap has them.
    let base = "-0000-1000-8000-00805f9b34fb"
    let text = """
      [General]
      Name=bledissect HR

      [Attributes]
      0001=2800:0005:00001800\(base)
      0002=2803:0003:02:00002a00\(base)
      0004=2803:0005:02:00002a01\(base)
      0006=2800:000d:00001801\(base)
      0007=2803:0008:20:00002a05\(base)
      0009=00002902\(base)
      000e=2800:0015:0000180d\(base)
      000f=2803:0010:10:00002a37\(base)
      0011=00002902\(base)
      0012=2803:0013:02:00002a38\(base)
      0014=2803:0015:08:00002a39\(base)
      0016=2800:0019:0000180f\(base)
      0017=2803:0018:12:00002a19\(base)
      0019=00002902\(base)

      """
    let directory = NSTemporaryDirectory() + "bluez-cache-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let path = directory + "/D0:B1:ED:00:48:52"
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    let decoded = try Self.decodedValues(["--no-cache", "--gatt", path, capturePath("late_reconnect.btsnoop")])
    let truth = try Self.truth("late_reconnect")
    #expect(Self.compare(decoded, truth, source: "import") == truth.count)
    // Named by something else than an address: one clear line.
    let renamed = directory + "/strap-cache"
    try text.write(toFile: renamed, atomically: true, encoding: .utf8)
    let refused = runCLI(["--gatt", renamed, capturePath("late_reconnect.btsnoop")])
    #expect(refused.status == 64 && refused.stderr.contains("named by the device's address"))
  }

  @Test func cacheFromAnEarlierRunDecodesEveryValue() throws {
    let cache = NSTemporaryDirectory() + "bledissect-cache-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    defer { try? FileManager.default.removeItem(atPath: cache) }
    let environment = ["XDG_CACHE_HOME": cache]
    // Nothing cached yet: only inference.
    let before = try Self.decodedValues([capturePath("late_reconnect.btsnoop")], environment: environment)
    #expect(before.contains { $0.gatt?["source"] as? String == "inferred" })
    // A capture with discovery fills the cache; the late capture then uses it.
    #expect(runCLI(["summary", capturePath("hr_strap_session.btsnoop")], environment: environment).status == 0)
    #expect(FileManager.default.fileExists(atPath: cache + "/bledissect/gatt/D0B1ED004852.json"))
    let after = try Self.decodedValues([capturePath("late_reconnect.btsnoop")], environment: environment)
    let truth = try Self.truth("late_reconnect")
    #expect(Self.compare(after, truth, source: "cache") == truth.count)
    // --no-cache: neither used nor written.
    let off = try Self.decodedValues(["--no-cache", capturePath("late_reconnect.btsnoop")], environment: environment)
    #expect(!off.contains { $0.gatt?["source"] as? String == "cache" })
    // An import wins over the cache.
    let imported = try Self.decodedValues(
      ["--gatt", capturePath("hr_strap_session.btsnoop"), capturePath("late_reconnect.btsnoop")], environment: environment)
    #expect(Self.compare(imported, truth, source: "import") == truth.count)
  }

  /// Jobs of one run save the same device's table at once (they shared a temporary file name,
  /// and the later rename failed with "could not save GATT tables").
  @Test func parallelJobsSaveTheSameDeviceCleanly() throws {
    let cache = NSTemporaryDirectory() + "bledissect-cache-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    defer { try? FileManager.default.removeItem(atPath: cache) }
    let capture = capturePath("hr_strap_session.btsnoop")
    for _ in 0..<5 {
      let result = runCLI(["summary", "-j", "4", capture, capture, capture, capture], environment: ["XDG_CACHE_HOME": cache])
      #expect(result.status == 0)
      #expect(result.stderr.isEmpty, "\(result.stderr)")
    }
    let files = try FileManager.default.contentsOfDirectory(atPath: cache + "/bledissect/gatt")
    #expect(files == ["D0B1ED004852.json"])
  }

  @Test func inferenceAloneDecodesEveryHeartRateAndBatteryValue() throws {
    for name in ["late_midstream", "late_reconnect"] {
      let decoded = try Self.decodedValues(["--no-cache", capturePath(name + ".btsnoop")])
      let truth = try Self.truth(name)
      #expect(decoded.count == truth.count)
      let heartRates = zip(decoded, truth).filter { $0.1.decoded["bpm"] != nil }
      let inferred = heartRates.filter { $0.0.decoded != nil }
      // Each decoded one is right, and marked as a guess.
      Self.compare(inferred.map(\.0), inferred.map(\.1), source: "inferred")
      // Every one: the values of the run that made the guess are labelled in hindsight.
      #expect(inferred.count == heartRates.count, "\(name): \(inferred.count) of \(heartRates.count)")
      // Battery levels: guessed at the second value, the first labelled in hindsight.
      let batteries = zip(decoded, truth).filter { $0.1.decoded["battery_percent"] != nil }
      #expect(batteries.count >= 2)
      Self.compare(batteries.map(\.0), batteries.map(\.1), source: "inferred")
      #expect(batteries.allSatisfy { $0.0.decoded != nil })
    }
  }

  @Test func concatenatedCaptureMapsTheLaterConnectionByLayout() throws {
    let result = runCLI(["--no-cache", capturePath("late_concat.btsnoop")])
    #expect(result.stdout.contains("handles mapped with D0:B1:ED:00:48:52's table"))
    let decoded = try Self.decodedValues(["--no-cache", capturePath("late_concat.btsnoop")])
    let truth = try Self.truth("late_concat")
    #expect(Self.compare(decoded, truth, source: nil) == truth.count)
    // The second part's values: by layout.
    #expect(decoded.suffix(40).allSatisfy { $0.gatt?["source"] as? String == "layout" })
  }

  @Test func mapFileErrorsAreOneLine() throws {
    let notAMap = temporaryFile(Array(#"{"format":"something-else"}"#.utf8))
    defer { unlink(notAMap) }
    let wrong = runCLI(["--gatt", notAMap, capturePath("late_reconnect.btsnoop")])
    #expect(wrong.status == 64 && wrong.stderr.contains("not a GATT map"))
    let badHandle = temporaryFile(Array(#"{"format":"bledissect-gatt-map","version":1,"devices":[{"address":"D0:B1:ED:00:48:52","services":[{"start":70000,"end":2,"uuid":"1800"}]}]}"#.utf8))
    defer { unlink(badHandle) }
    let bad = runCLI(["--gatt", badHandle, capturePath("late_reconnect.btsnoop")])
    #expect(bad.status == 64 && bad.stderr.contains("devices[0].services[0].start: needs a handle"))
    // Errors name the line where the bad value is.
    let badUUID = temporaryFile(Array("""
      {"format": "bledissect-gatt-map", "version": 1,
       "devices": [{"address": "D0:B1:ED:00:48:52",
         "services": [{"start": 1, "end": 5,
                       "uuid": "not-a-uuid"}]}]}
      """.utf8))
    defer { unlink(badUUID) }
    let uuidError = runCLI(["--gatt", badUUID, capturePath("late_reconnect.btsnoop")])
    #expect(uuidError.status == 64 && uuidError.stderr.contains(":4: devices[0].services[0].uuid: needs a UUID, not \"not-a-uuid\""), "\(uuidError.stderr)")
    let syntax = temporaryFile(Array("{\"format\": \"bledissect-gatt-map\",\n \"version\": 1,,\n}".utf8))
    defer { unlink(syntax) }
    let syntaxError = runCLI(["--gatt", syntax, capturePath("late_reconnect.btsnoop")])
    #expect(syntaxError.status == 64 && syntaxError.stderr.contains(":2:15: not a GATT map (not JSON: expected a quoted key)"), "\(syntaxError.stderr)")
    let missing = runCLI(["--gatt", "/nonexistent/map.json", capturePath("late_reconnect.btsnoop")])
    #expect(missing.status == 64 && missing.stderr.contains("cannot open the GATT map"))
    let decodeAs = runCLI(["--decode-as", "0x10", capturePath("late_reconnect.btsnoop")])
    #expect(decodeAs.status == 64 && decodeAs.stderr.contains("--decode-as needs handle=uuid"))
  }
}
