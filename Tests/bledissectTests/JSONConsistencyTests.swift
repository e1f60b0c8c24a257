import Foundation
import Testing

import BLETestSupport
@testable import bledissect

/// One key, one type, in every frame of every sample capture (jq filters and typed readers rely
/// on it), and no number a JSON reader would round: 64-bit fields are "0x…" strings. A key is
/// its path (`signaling.code`, `diagnostics[].code`): that is what a jq filter or a typed
/// reader's struct names, and one member name may mean different things in different objects
/// (an L2CAP signaling code is a number, a diagnostic's code a string).
@Suite struct JSONConsistencyTests {
  static func typeName(_ value: Any) -> String {
    switch value {
    case is NSNull: return "null"
    // JSONSerialization gives booleans as NSNumbers of Objective-C type "c".
    case let number as NSNumber: return String(cString: number.objCType) == "c" ? "bool" : "number"
    case is String: return "string"
    case is [Any]: return "array"
    case is [String: Any]: return "object"
    default: return "other"
    }
  }

  @Test func everyKeyHasOneTypeAndNumbersStayExact() throws {
    let captures = try FileManager.default.contentsOfDirectory(atPath: repositoryRoot.appendingPathComponent("captures").path)
      .filter { $0.hasSuffix(".btsnoop") }.sorted()
    #expect(captures.count >= 10)
    try Self.checkKeyTypes(captures.map { (capturePath($0), $0) })
  }

  /// The same over the sample captures and the real captures of ../shared/corpus together (BR/EDR
  /// traffic, vendor events, other controllers' quirks), when present.
  @Test(.enabled(if: corpusRoot != nil, "../shared/corpus is absent"))
  func everyKeyHasOneTypeInTheCorpus() throws {
    let entries = CorpusTests.entries.filter { !$0.isLinkLayer }
    #expect(!entries.isEmpty)
    let captures = try FileManager.default.contentsOfDirectory(atPath: repositoryRoot.appendingPathComponent("captures").path)
      .filter { $0.hasSuffix(".btsnoop") }.sorted()
    try Self.checkKeyTypes(captures.map { (capturePath($0), $0) } + entries.map { (corpusRoot!.appendingPathComponent($0.path).path, $0.path) })
  }

  static func checkKeyTypes(_ files: [(path: String, name: String)]) throws {
    var types: [String: Set<String>] = [:]
    var firstSeen: [String: String] = [:]
    func walk(_ value: Any, key: String, file: String) {
      if key != "" {
        let name = Self.typeName(value)
        if name != "null" {
          types[key, default: []].insert(name)
          if firstSeen[key + "/" + name] == nil { firstSeen[key + "/" + name] = file }
        }
        if let number = value as? NSNumber, name == "number" {
          #expect(number.doubleValue.magnitude <= 9_007_199_254_740_992, "\(file): \(key) = \(number)")
        }
      }
      if let object = value as? [String: Any] {
        for (member, inner) in object { walk(inner, key: key == "" ? member : key + "." + member, file: file) }
      } else if let array = value as? [Any] {
        for element in array { walk(element, key: key + "[]", file: file) }
      }
    }
    for (path, name) in files {
      let result = runCLI(["--json", "--no-cache", path])
      for line in result.stdout.split(separator: "\n") {
        walk(try JSONSerialization.jsonObject(with: Data(line.utf8)), key: "", file: name)
      }
    }
    for (key, seen) in types.sorted(by: { $0.key < $1.key }) where seen.count > 1 {
      Issue.record("\(key) has types \(seen.sorted()): \(seen.map { "\($0) in \(firstSeen[key + "/" + $0] ?? "?")" }.sorted())")
    }
  }
}
