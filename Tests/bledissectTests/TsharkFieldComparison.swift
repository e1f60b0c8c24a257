import Foundation
import Testing
import BLECapture
import BLECore
import BLEDecoder
import BLETestSupport

/// Frame-by-frame comparison of one protocol's fields with tshark's (`-T fields`, every
/// occurrence): for each frame tshark shows the protocol in, each pair's values (as multisets)
/// must be equal. Used by the SDP and RFCOMM cross-checks.
struct TsharkFieldComparison {
  enum Kind {
    case number, text, hex
    /// Text as tshark spells a string field (`\r`, `\n`, `\x1b`, `\033`), compared as the hex
    /// of its bytes.
    case escapedText
  }

  /// tshark fields whose values, together, must equal ours under `ours`.
  struct Pair {
    var tshark: [String]
    var ours: String
    /// How each tshark field's values read (one kind for all, or one per field).
    var kinds: [Kind]
    init(_ tshark: [String], _ ours: String, _ kind: Kind = .number) {
      self.init(tshark, ours, kinds: Array(repeating: kind, count: tshark.count))
    }
    init(_ tshark: [String], _ ours: String, kinds: [Kind]) {
      self.tshark = tshark
      self.ours = ours
      self.kinds = kinds
    }
  }

  struct Report {
    var frames = 0
    var compared: [String: Int] = [:]
    var agreed: [String: Int] = [:]
    var disagreements: [String] = []
    /// Differences the test shows tshark wrong about (or silent on), by reason.
    var explained: [String: Int] = [:]
    var total: Int { compared.values.reduce(0, +) }
    var totalAgreed: Int { agreed.values.reduce(0, +) }
  }

  var filter: String
  var pairs: [Pair]

  static func normalize(_ text: String, _ kind: Kind) -> String {
    switch kind {
    case .number:
      if text.hasPrefix("0x"), let value = UInt64(text.dropFirst(2), radix: 16) { return String(value) }
      if text == "True" { return "1" }
      if text == "False" { return "0" }
      return Int64(text).map(String.init) ?? text
    case .hex:
      let digits = text.hasPrefix("0x") ? String(text.dropFirst(2)) : text
      return digits.replacingOccurrences(of: ":", with: "").replacingOccurrences(of: "-", with: "").lowercased()
    case .text: return text
    case .escapedText: return Hex.string(unescape(text))
    }
  }

  /// tshark's escapes undone: `\r`, `\n`, `\t`, `\\`, `\"`, `\xHH`, `\ooo`.
  static func unescape(_ text: String) -> [UInt8] {
    let bytes = Array(text.utf8)
    var result: [UInt8] = []
    var index = 0
    func hexValue(_ byte: UInt8) -> UInt8? { UInt8(String(UnicodeScalar(byte)), radix: 16) }
    while index < bytes.count {
      let byte = bytes[index]
      index += 1
      guard byte == UInt8(ascii: "\\"), index < bytes.count else {
        result.append(byte)
        continue
      }
      let escape = bytes[index]
      index += 1
      switch escape {
      case UInt8(ascii: "r"): result.append(0x0D)
      case UInt8(ascii: "n"): result.append(0x0A)
      case UInt8(ascii: "t"): result.append(0x09)
      case UInt8(ascii: "x"):
        var value: UInt8 = 0
        while index < bytes.count, let digit = hexValue(bytes[index]) {
          value = value &* 16 &+ digit
          index += 1
        }
        result.append(value)
      case UInt8(ascii: "0")...UInt8(ascii: "7"):
        var value = escape - UInt8(ascii: "0")
        var digits = 1
        while digits < 3, index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "7")).contains(bytes[index]) {
          value = value &* 8 &+ (bytes[index] - UInt8(ascii: "0"))
          index += 1
          digits += 1
        }
        result.append(value)
      default: result.append(escape)
      }
    }
    return result
  }

  /// Our value of a field as the pairs compare it.
  static func ourText(_ value: FieldValue) -> String? {
    switch value {
    case .unsigned(let number, _), .code(let number, _, _), .codeText(let number, _, _): return String(number)
    case .signed(let number): return String(number)
    case .measure(let raw, _, _): return String(raw)
    case .bool(let flag): return flag ? "1" : "0"
    case .uuid(let uuid, _): return normalize(uuid.description, .hex)
    case .bytes(let bytes): return Hex.string(bytes)
    case .text(let text): return text
    default: return nil
    }
  }

  /// Frame number → pair index → tshark's values, for every frame `filter` matches.
  func tsharkValues(_ path: String) throws -> [Int: [Int: [String]]] {
    var arguments = ["-n", "-r", path, "-Y", filter, "-T", "fields", "-E", "separator=\u{1E}", "-E", "aggregator=\u{1F}", "-E", "occurrence=a", "-e", "frame.number"]
    let fields = pairs.flatMap(\.tshark)
    for field in fields { arguments += ["-e", field] }
    let (status, data) = try runProgram(which("tshark")!, arguments)
    #expect(status == 0, "tshark failed on \(path)")
    var result: [Int: [Int: [String]]] = [:]
    for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
      let cells = line.split(separator: "\u{1E}", omittingEmptySubsequences: false).map(String.init)
      guard cells.count == fields.count + 1, let frame = Int(cells[0]) else { continue }
      var column = 1
      var values: [Int: [String]] = [:]
      for (index, pair) in pairs.enumerated() {
        for kind in pair.kinds {
          let cell = cells[column]
          column += 1
          if cell.isEmpty { continue }
          values[index, default: []] += cell.split(separator: "\u{1F}", omittingEmptySubsequences: false).map { Self.normalize(String($0), kind) }
        }
      }
      result[frame] = values
    }
    return result
  }

  /// Dissects the capture, and for each frame tshark shows (and each frame `ours` finds the
  /// protocol in) compares every pair. `ours` gives a frame's values by our name, or nil when
  /// the frame does not carry the protocol. `explain` may account for a difference (returning
  /// the reason), which is then counted, not reported.
  func compare(
    _ path: String, ours: (DissectedFrame) -> [String: [String]]?,
    explain: (_ frame: DissectedFrame, _ pair: Pair, _ ours: [String], _ theirs: [String]) -> String? = { _, _, _, _ in nil }
  ) throws -> Report {
    let theirs = try tsharkValues(path)
    let reader = try CaptureFile.open(path: path)
    var dissector = Dissector()
    var frame = DissectedFrame()
    var number = 0
    var report = Report()
    while let record = try reader.next() {
      number += 1
      dissector.dissect(record, number: number, into: &frame)
      let mine = ours(frame)
      guard let tshark = theirs[number] else {
        if mine != nil { report.disagreements.append("#\(number) \(frame.titleText): ours decodes it, tshark does not") }
        continue
      }
      guard let mine else {
        report.disagreements.append("#\(number): tshark decodes it, we do not (\(frame.titleText))")
        continue
      }
      report.frames += 1
      for (index, pair) in pairs.enumerated() {
        let values = tshark[index] ?? []
        let ourValues = mine[pair.ours] ?? []
        if values.isEmpty && ourValues.isEmpty { continue }
        report.compared[pair.ours, default: 0] += values.count
        if values.sorted() == ourValues.sorted() {
          report.agreed[pair.ours, default: 0] += values.count
        } else if let reason = explain(frame, pair, ourValues, values) {
          report.explained[reason, default: 0] += 1
        } else {
          report.disagreements.append("#\(number) \(frame.titleText): \(pair.ours) ours \(ourValues.prefix(12)) tshark \(values.prefix(12))")
        }
      }
    }
    return report
  }

  /// Walks the fields of the top-level group `key` (values and groups alike), each with the
  /// keys of the objects and arrays that hold it; returns whether the frame has the group.
  static func walk(_ fields: FieldList, group key: String, _ body: (_ path: [String], _ field: Field) -> Void) -> Bool {
    var inside = false
    var found = false
    var path: [String] = []
    for field in fields.fields {
      if field.depth == 0 {
        inside = field.key.description == key
        found = found || inside
        path = []
        continue
      }
      guard inside else { continue }
      path = Array(path.prefix(field.depth - 1))
      body(path, field)
      switch field.value {
      case .object, .array: path.append(field.key.description)
      default: break
      }
    }
    return found
  }
}
