import BLECore
import BLEDecoder
import Foundation
import Testing

import BLEAnalysis
import BLECapture

@testable import bledissect

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The GATT cache never makes output worse, slower or different by history: a capture decoded
/// with an empty cache and after each of an unrelated table, the device's own table, a
/// poisoned table for the same address and a huge hostile table gives identical output, or a
/// changed output that says why.
@Suite struct GATTCacheTests {
  static let strap = "D0:B1:ED:00:48:52"

  /// A fresh cache folder (XDG_CACHE_HOME) for one test.
  final class Folder {
    let base = NSTemporaryDirectory() + "bledissect-cache-\(getpid())-\(UUID().uuidString)"
    var tables: String { base + "/bledissect/gatt" }
    var environment: [String: String] { ["XDG_CACHE_HOME": base] }
    deinit { try? FileManager.default.removeItem(atPath: base) }

    func write(_ name: String, _ text: String) throws {
      try FileManager.default.createDirectory(atPath: tables, withIntermediateDirectories: true)
      try Data(text.utf8).write(to: URL(fileURLWithPath: tables + "/" + name))
    }

    func run(_ arguments: [String]) -> CLIResult { runCLI(arguments, environment: environment) }
  }

  /// What each command says about a capture: annotate (-1, text, JSON), summary, gatt, hr.
  static let views: [[String]] = [["-1"], [], ["--json"], ["summary"], ["summary", "--json"], ["gatt"], ["hr"], ["hr", "--csv"]]

  static let lateCaptures = ["late_midstream.btsnoop", "late_reconnect.btsnoop", "late_concat.btsnoop"]

  /// Captures of other devices, each with its own discovery.
  static var unrelatedCaptures: [String] {
    var paths = ["vendor_services.btsnoop", "huami.btsnoop", "polar_pmd.btsnoop", "eatt.btsnoop", "long_values.btsnoop"].map(capturePath)
    if let corpusRoot {
      paths.append(corpusRoot.appendingPathComponent("sphero_mini/sphero_mini_btsnoop_hci.log").path)
      paths.append(corpusRoot.appendingPathComponent("cheoljun99/infocar_obd_ble_nsec.pcap").path)
    }
    return paths.filter { FileManager.default.fileExists(atPath: $0) }
  }

  @Test(arguments: lateCaptures)
  func unrelatedTablesChangeNothing(capture: String) throws {
    let empty = Folder()
    let before = Self.views.map { empty.run($0 + [capturePath(capture)]) }
    let folder = Folder()
    for other in Self.unrelatedCaptures { _ = folder.run(["summary", other]) }
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder.tables).count >= 5)
    for (view, expected) in zip(Self.views, before) {
      let after = folder.run(view + [capturePath(capture)])
      #expect(after.stdout == expected.stdout, "\(view) \(capture)")
      #expect(after.stderr == expected.stderr, "\(view) \(capture)")
      #expect(after.status == expected.status)
    }
  }

  @Test func theDevicesOwnTableSaysSoEverywhere() throws {
    let folder = Folder()
    _ = folder.run(["summary", capturePath("hr_strap_session.btsnoop")])
    let file = folder.tables + "/D0B1ED004852.json"
    #expect(FileManager.default.fileExists(atPath: file))
    let late = capturePath("late_reconnect.btsnoop")
    // Every value line names the cached map.
    let lines = folder.run(["-1", late]).stdout.split(separator: "\n").filter { $0.contains("Notify 0x0010") }
    #expect(lines.count == 120)
    #expect(lines.allSatisfy { $0.contains("Heart Rate Measurement (cached map)") })
    // JSON: the source, the file and when it was learned.
    let json = folder.run(["--json", late]).stdout.split(separator: "\n").compactMap { line in
      (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["gatt"] as? [String: Any]
    }
    #expect(!json.isEmpty)
    #expect(json.allSatisfy { $0["source"] as? String == "cache" && $0["map"] as? String == file && ($0["learned"] as? String)?.hasSuffix("Z") == true })
    // hr names it on stderr, summary and gatt in their output.
    let hr = folder.run(["hr", late])
    #expect(hr.stdout.split(separator: "\n").count == 121)
    #expect(hr.stderr.contains("GATT table of \(Self.strap) from the cache (learned from \(capturePath("hr_strap_session.btsnoop")) at "))
    #expect(hr.stderr.contains(file + "): the capture did not show its discovery; --no-cache decodes without it"))
    let summary = folder.run(["summary", late]).stdout
    #expect(summary.contains("  GATT table of \(Self.strap) from the cache (learned from"))
    #expect(summary.contains("Heart Rate Measurement (cached map)"))
    let summaryJSON = try #require(try JSONSerialization.jsonObject(with: Data(folder.run(["summary", "--json", late]).stdout.utf8)) as? [String: Any])
    let maps = try #require(summaryJSON["gatt_maps"] as? [[String: Any]])
    #expect(maps.count == 1 && maps[0]["source"] as? String == "cache" && maps[0]["map"] as? String == file)
    #expect(folder.run(["gatt", late]).stdout.contains("(from the cache)"))
    #expect(folder.run(["gatt", "--json", late]).stdout.contains(#""source":"cache","map":"\#(file)","learned":""#))
    // --no-cache: as with an empty cache.
    #expect(folder.run(["hr", "--no-cache", late]).stdout == Folder().run(["hr", late]).stdout)
  }

  /// A fake discovery for the strap's address (Heart Rate Measurement declared as Blood
  /// Pressure Measurement) was cached: the first heart-rate value contradicts it, the table is
  /// dropped with a note, and hr gives what it gives without a cache.
  @Test func aPoisonedTableIsDroppedAndSaysWhy() throws {
    let folder = Folder()
    let map = runCLI(["gatt", "--json", "--no-cache", capturePath("hr_strap_session.btsnoop")]).stdout
    #expect(map.contains(#""uuid":"2a37""#))
    try folder.write("D0B1ED004852.json", map.replacingOccurrences(of: #""uuid":"2a37""#, with: #""uuid":"2a35""#))
    let late = capturePath("late_reconnect.btsnoop")
    let hr = folder.run(["hr", late])
    let clean = Folder().run(["hr", late])
    #expect(hr.stdout == clean.stdout)
    #expect(hr.stdout.split(separator: "\n").count == clean.stdout.split(separator: "\n").count)
    #expect(clean.stdout.split(separator: "\n").count > 100)
    let text = folder.run([late]).stdout
    #expect(text.contains("the cache's table (learned from \(capturePath("hr_strap_session.btsnoop"))) dropped: the value of 0x0010 (0435) is not a valid Blood Pressure Measurement; values are read without it from here on"))
    #expect(!text.contains("Blood Pressure Measurement (cached map)"))
  }

  /// Tables over the bounds in the folder (written by hand or an older version) are not read:
  /// the output is the empty cache's, and stderr says why.
  @Test func hugeCacheFilesAreNotRead() throws {
    let late = capturePath("late_reconnect.btsnoop")
    let clean = Folder().run(["hr", late])
    /// The strap's address with one service of `count` characteristics (handles 2n+1, 2n+2).
    func hostileMap(_ count: Int) -> String {
      let characteristics = (0..<count).map { #"{"declaration_handle":\#(2 * $0 % 65_000 + 1),"value_handle":\#(2 * $0 % 65_000 + 2),"uuid":"2a35"}"# }
      return #"{"format":"bledissect-gatt-map","version":1,"capture":"hostile","devices":[{"server":"peer","address":"D0:B1:ED:00:48:52","services":[{"start":1,"end":65535,"uuid":"180d","characteristics":["#
        + characteristics.joined(separator: ",") + "]}]}]}"
    }
    // 100 000 characteristics: over the file size bound.
    let large = Folder()
    try large.write("D0B1ED004852.json", hostileMap(100_000))
    let first = large.run(["hr", late])
    #expect(first.stdout == clean.stdout)
    #expect(first.stderr.contains("is too large"))
    // 3 000 attributes in less than the size bound: over the attribute bound.
    let numerous = Folder()
    try numerous.write("D0B1ED004852.json", hostileMap(3000))
    let second = numerous.run(["hr", late])
    #expect(second.stdout == clean.stdout)
    #expect(second.stderr.contains("holds 3001 attributes (at most 2048): not used"))
    // A table renamed to another device's address is not that device's.
    let renamed = Folder()
    try renamed.write("D0B1ED004852.json", runCLI(["gatt", "--json", "--no-cache", capturePath("vendor_services.btsnoop")]).stdout)
    let third = renamed.run(["hr", late])
    #expect(third.stdout == clean.stdout)
    #expect(third.stderr.contains("is not a table of D0:B1:ED:00:48:52: not used"))
  }

  /// Tables over the bounds are not saved, and the folder keeps the most recently used.
  @Test func savingIsBounded() throws {
    let folder = Folder()
    let cache = GATTCache(directory: folder.tables)
    var tree = GATTAttributeTree(services: [], characteristicsOutsideServices: [], otherHandles: [])
    var characteristics: [GATTCharacteristicEntry] = []
    for index in 0..<3000 {
      let declaration = UInt16(2 * index + 2)
      characteristics.append(GATTCharacteristicEntry(
        declarationHandle: declaration, valueHandle: declaration + 1, uuid: BluetoothUUID(uuid16: 0x2A37), properties: 0x10, learnedIn: 1, descriptors: []))
    }
    tree.services.append(GATTServiceEntry(
      start: 1, end: 0xFFFF, uuid: BluetoothUUID(uuid16: 0x180D), primary: true, learnedIn: 1, includes: [], characteristics: characteristics))
    cache.keep([GATTDevice(server: .peer(BDAddr("11:22:33:44:55:66")!), tree: tree)], capture: "hostile.btsnoop")
    #expect(try cache.flush() == ["GATT table of 11:22:33:44:55:66 not cached: 3001 attributes (at most 2048)"])
    #expect(GATTCacheFolder.entries(in: folder.tables).isEmpty)
    // Five tables used at different times; at most three kept: the two used longest ago go.
    for (index, name) in ["A", "B", "C", "D", "E"].enumerated() {
      let file = "00000000000\(name).json"
      try folder.write(file, "{}")
      let seconds = 1_000_000 + [5, 1, 4, 2, 3][index]
      var times = [timeval(tv_sec: seconds, tv_usec: 0), timeval(tv_sec: seconds, tv_usec: 0)]
      #expect(utimes(folder.tables + "/" + file, &times) == 0)
    }
    GATTCacheFolder.trim(folder.tables, maximumTables: 3)
    #expect(GATTCacheFolder.entries(in: folder.tables).map(\.name) == ["00000000000A.json", "00000000000C.json", "00000000000E.json"])
    // And at most so many bytes: the oldest goes first.
    try folder.write("00000000000F.json", String(repeating: " ", count: 30))
    GATTCacheFolder.trim(folder.tables, maximumTables: 10, maximumBytes: 33)
    #expect(GATTCacheFolder.entries(in: folder.tables).map(\.name) == ["00000000000A.json", "00000000000F.json"])
  }

  /// Jobs of one run see the cache as it was when the run began: the late capture decodes the
  /// same whether or not a job before it learned the strap's table.
  @Test(arguments: ["1", "2"])
  func jobsOfOneRunSeeTheCacheAsItWasWhenTheRunBegan(jobs: String) throws {
    let folder = Folder()
    let late = capturePath("late_reconnect.btsnoop")
    let together = folder.run(["hr", "-j", jobs, capturePath("hr_strap_session.btsnoop"), late])
    let alone = Folder().run(["hr", late])
    let lateRows = together.stdout.components(separatedBy: "==> \(late) <==\n").last ?? ""
    #expect(lateRows == alone.stdout)
    #expect(!together.stderr.contains("from the cache"))
    // Saved once the run ended.
    #expect(GATTCacheFolder.entries(in: folder.tables).map(\.name) == ["D0B1ED004852.json"])
  }

  @Test func theCacheCommandListsShowsAndClears() throws {
    let folder = Folder()
    #expect(folder.run(["cache", "list"]).stdout == "no GATT tables cached in \(folder.tables)\n")
    _ = folder.run(["summary", capturePath("hr_strap_session.btsnoop"), capturePath("vendor_services.btsnoop")])
    let list = folder.run(["cache", "list"])
    #expect(list.status == 0)
    let rows = list.stdout.split(separator: "\n")
    #expect(rows.first == "2 GATT tables cached in \(folder.tables) (most recently used first)")
    #expect(rows.contains { $0.hasPrefix("D0:B1:ED:00:48:52  21 attributes, learned ") && $0.hasSuffix(" from \(capturePath("hr_strap_session.btsnoop"))") })
    #expect(rows.contains { $0.hasPrefix("D0:B1:ED:00:56:53  ") })
    let show = folder.run(["cache", "show", Self.strap])
    #expect(show.status == 0)
    #expect(show.stdout.contains("file:     \(folder.tables)/D0B1ED004852.json\n"))
    #expect(show.stdout.contains("service 0x000e–0x0015 Heart Rate (180d)"))
    #expect(show.stdout.contains("0x0010 Heart Rate Measurement (2a37): notify"))
    let missing = folder.run(["cache", "show", "11:22:33:44:55:66"])
    #expect(missing.status == 2)
    #expect(missing.stderr == "bledissect: cache: no table of 11:22:33:44:55:66 in \(folder.tables)\n")
    #expect(folder.run(["cache", "show", "nonsense"]).status == 64)
    #expect(folder.run(["cache", "frobnicate"]).status == 64)
    #expect(folder.run(["cache", "clear"]).stdout == "removed 2 tables from \(folder.tables)\n")
    #expect(GATTCacheFolder.entries(in: folder.tables).isEmpty)
  }

  /// A cache that cannot be written says why, in the system's words; the command still succeeds.
  @Test func aCacheThatCannotBeWrittenSaysWhy() throws {
    let file = temporaryFile([0x41])
    defer { unlink(file) }
    let underAFile = runCLI(["summary", capturePath("hr_strap_session.btsnoop")], environment: ["XDG_CACHE_HOME": file])
    #expect(underAFile.status == 0)
    #expect(underAFile.stderr == "bledissect: could not save GATT tables to the cache \(file)/bledissect/gatt (\(file)/bledissect: Not a directory); use --no-cache to skip it\n")
    let folder = Folder()
    try FileManager.default.createDirectory(atPath: folder.tables + "/D0B1ED004852.json", withIntermediateDirectories: true)
    let blocked = folder.run(["summary", capturePath("hr_strap_session.btsnoop")])
    #expect(blocked.status == 0)
    #expect(blocked.stderr.hasSuffix("(\(folder.tables)/D0B1ED004852.json: Is a directory); use --no-cache to skip it\n"))
  }
}

extension GATTCacheTests {
  /// `diff` with a used cache: the same differences as with none, and a line under A:/B:
  /// naming the table that came from the cache (JSON: `gatt_maps`).
  @Test func diffNamesACachedTableAndSaysTheSame() throws {
    let folder = Folder()
    let (full, late) = (capturePath("hr_strap_session.btsnoop"), capturePath("late_reconnect.btsnoop"))
    #expect(folder.run([full]).status == 0)
    let cached = folder.run(["diff", full, late])
    let none = runCLI(["diff", "--no-cache", full, late])
    #expect(cached.status == 1 && none.status == 1)
    let lines = cached.stdout.split(separator: "\n", omittingEmptySubsequences: false)
    #expect(lines[2] == "B's GATT table of \(Self.strap): from the GATT cache (learned from \(full))", "\(lines[2])")
    #expect(Array(lines.dropFirst(3)) == none.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropFirst(2).map { $0 })
    let json = try #require(try JSONSerialization.jsonObject(with: Data(folder.run(["diff", "--json", full, late]).stdout.utf8)) as? [String: Any])
    let maps = try #require(json["gatt_maps"] as? [[String: Any]])
    #expect(maps.count == 1 && maps.first?["side"] as? String == "b" && maps.first?["source"] as? String == "cache")
  }
}

extension GATTCacheTests {
  /// The cached table's line in `cache list`.
  static func listed(_ folder: Folder, _ address: String) -> String? {
    folder.run(["cache", "list"]).stdout.split(separator: "\n").first { $0.hasPrefix(address + "  ") }.map(String.init)
  }

  /// A sniff of the strap's session that lost part of the discovery (17 attributes) agrees with
  /// the 21 the HCI capture saw: whichever comes later, in one run or two, the cache keeps
  /// the richer table and where it was learned, and a late capture is decoded with it.
  @Test func aPoorerDiscoveryLeavesTheRicherTable() throws {
    let (full, poorer) = (capturePath("hr_strap_session.btsnoop"), capturePath("air/hr_strap_session_sniffed_impaired.pcap"))
    #expect(runCLI(["gatt", "--no-cache", poorer]).stdout.hasPrefix("D0:B1:ED:00:48:52 (random) \"bledissect HR\": 5 services, 9 characteristics\n"))
    for runs in [[[full], [poorer]], [[poorer], [full]], [[full, poorer]], [[poorer, full]]] {
      let folder = Folder()
      for files in runs { #expect(folder.run(["summary"] + files).status == 0) }
      let line = try #require(Self.listed(folder, Self.strap), "\(runs)")
      #expect(line.contains("  21 attributes, learned ") && line.hasSuffix(" from \(full)"), "\(runs): \(line)")
      let late = folder.run(["summary", capturePath("late_reconnect.btsnoop")]).stdout
      #expect(late.contains("  GATT table of \(Self.strap) from the cache (learned from \(full) at "), "\(runs)")
    }
  }

  /// A discovery that contradicts the cached table (another Generic Access range: the device's
  /// table changed) replaces it, however few attributes it knows.
  @Test func aContradictingDiscoveryReplacesTheTable() throws {
    let folder = Folder()
    _ = folder.run(["summary", capturePath("hr_strap_session.btsnoop")])
    _ = folder.run(["summary", capturePath("air_nordic.pcap")])
    let line = try #require(Self.listed(folder, Self.strap))
    #expect(line.contains("  2 attributes, learned ") && line.hasSuffix(" from \(capturePath("air_nordic.pcap"))"), "\(line)")
  }

  /// The comparison itself: a part of the table, the same table, more of it, a contradiction.
  @Test func tablesCompareHandleByHandle() throws {
    let maps = try GATTMapImport.parseJSON(
      Array(runCLI(["gatt", "--json", "--no-cache", capturePath("hr_strap_session.btsnoop")]).stdout.utf8), name: "strap", cached: false)
    let tree = try #require(maps.first?.tree)
    var servicesOnly = tree
    for index in servicesOnly.services.indices { servicesOnly.services[index].characteristics = [] }
    #expect(GATTTableComparison(kept: tree, newer: servicesOnly) == .keptCoversNewer)
    #expect(GATTTableComparison(kept: tree, newer: tree) == .same)
    #expect(GATTTableComparison(kept: servicesOnly, newer: tree) == .agreeing(keptCount: 5, newerCount: tree.handleMeanings.count))
    var moved = servicesOnly
    moved.services[0].end += 1
    #expect(GATTTableComparison(kept: tree, newer: moved) == .contradicting(handle: moved.services[0].start))
    #expect(!GATTCache.replaces(servicesOnly, hash: nil, kept: tree, keptHash: nil))
    #expect(GATTCache.replaces(servicesOnly, hash: [1], kept: tree, keptHash: [2]))
  }
}

/// The Mi Band 3 captures of the shared corpus: the scan-and-connect capture discovered 69
/// attributes; the one to a laptop discovered the 9 services only, which must not replace them.
@Suite(.enabled(if: corpusRoot != nil, "../shared/corpus is absent"))
struct GATTCacheCorpusTests {
  static let band = "F0:2A:9A:A0:86:F4"

  @Test func aServicesOnlyDiscoveryLeavesTheBandsFullTable() throws {
    let root = try #require(corpusRoot).appendingPathComponent("miband3_blproject")
    let (full, services) = (root.appendingPathComponent("miband3_lescan_cap.pcapng").path, root.appendingPathComponent("miband3_to_laptop.pcapng").path)
    let folder = GATTCacheTests.Folder()
    _ = folder.run(["summary", full])
    #expect(GATTCacheTests.listed(folder, Self.band)?.contains("  69 attributes, learned ") == true)
    _ = folder.run(["summary", services])
    let line = try #require(GATTCacheTests.listed(folder, Self.band))
    #expect(line.contains("  69 attributes, learned ") && line.hasSuffix(" from \(full)"), "\(line)")
    let show = folder.run(["cache", "show", Self.band]).stdout
    #expect(show.contains("0x0029 Heart Rate Measurement (2a37): notify"))
  }
}
