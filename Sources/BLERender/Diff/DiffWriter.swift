import BLEAnalysis
import BLECore
import Foundation  // String(format:): the places' seconds as printf rounds them

/// `diff` as text (the differences in B's order, each with where it shows) and as one JSON
/// object (docs/json.md, "Diff objects"). `paths`: the two files as the output names them.
package enum DiffWriter {
  /// `notes`: what the comparison left alone and why (latencies timed differently), under the
  /// A:/B: lines, after the tables' origins.
  package static func text(
    _ differences: [SessionDifference], notes: [String] = [], _ paths: [String], _ sides: [DiffSide], verbose: Bool, _ out: inout OutputBuffer
  ) {
    out.append(string: "A: \(paths[0])\nB: \(paths[1])\n")
    for note in tableNotes(sides) + notes { out.append(string: "\(note)\n") }
    if differences.isEmpty {
      out.append("equivalent\n")
      return
    }
    out.append(string: "\(differences.count) difference\(differences.count == 1 ? "" : "s"), in the order they show in B (frame and seconds from the start in A, B):\n")
    for difference in differences {
      var line = "  \(difference.subject): \(difference.text)"
      let places = [difference.inA.map { "A \(placeText($0))" }, difference.inB.map { "B \(placeText($0))" }].compactMap { $0 }
      if !places.isEmpty { line += "  (\(places.joined(separator: ", ")))" }
      out.append(string: line + "\n")
      guard verbose else { continue }
      for (side, every, count) in [("A", difference.everyA, difference.placesA), ("B", difference.everyB, difference.placesB)] where every.count > 1 {
        // Eight places to a line, so that hundreds stay readable.
        for start in stride(from: 0, to: every.count, by: 8) {
          let chunk = every[start..<min(start + 8, every.count)].map(placeText).joined(separator: ", ")
          out.append(string: "      \(start == 0 ? "\(side):" : "  ") \(chunk)\n")
        }
        if let count, count > every.count { out.append(string: "         (the first \(every.count) of \(count) places)\n") }
      }
    }
  }

  static func placeText(_ place: DifferencePlace) -> String {
    "#\(place.frame) \(String(format: "%.3f", place.seconds)) s"
  }

  /// Tables a side did not learn from its own discovery (a map, the cache): what it knew of
  /// names there came from elsewhere, and the output says so.
  static func tableNotes(_ sides: [DiffSide]) -> [String] {
    var notes: [String] = []
    for (letter, side) in zip(["A", "B"], sides) {
      for (address, provenance) in side.tableSources.sorted(by: { $0.key.description < $1.key.description }) {
        let how: String
        switch provenance.source {
        case .cache: how = "from the GATT cache"
        case .imported: how = "from a --gatt map"
        case .layout: how = "matched by layout to another table"
        case .inferred: how = "inferred"
        case .capture: how = "from the capture"
        }
        notes.append("\(letter)'s GATT table of \(address): \(how) (\(provenance.origin))")
      }
    }
    return notes
  }

  package static func json(
    _ differences: [SessionDifference], notes: [String] = [], _ paths: [String], _ sides: [DiffSide], verbose: Bool, _ out: inout OutputBuffer
  ) {
    var json = JSONWriter(out: out)
    json.open()
    json.string("format", "bledissect-diff")
    json.int("version", 2)
    json.string("a", paths[0])
    json.string("b", paths[1])
    json.openArray("gatt_maps")
    for (letter, side) in zip(["a", "b"], sides) {
      for (address, provenance) in side.tableSources.sorted(by: { $0.key.description < $1.key.description }) {
        json.open()
        json.string("side", letter)
        json.string("device", "\(address)")
        json.string("source", "\(provenance.source.key)")
        json.string("origin", provenance.origin)
        json.close()
      }
    }
    json.closeArray()
    json.openArray("notes")
    for note in notes { json.stringElement(note) }
    json.closeArray()
    json.bool("equivalent", differences.isEmpty)
    json.openArray("differences")
    for difference in differences {
      json.open()
      json.string("kind", difference.kind.rawValue)
      json.string("subject", difference.subject)
      json.string("text", difference.text)
      json.number("time_s", difference.time)
      if let a = difference.a { json.string("a_value", a) }
      if let b = difference.b { json.string("b_value", b) }
      if let count = difference.countA { json.int("a_count", count) }
      if let count = difference.countB { json.int("b_count", count) }
      for (key, place) in [("a_at", difference.inA), ("b_at", difference.inB)] {
        guard let place else { continue }
        json.open(key)
        json.int("frame", place.frame)
        json.number("time_s", place.seconds)
        json.close()
      }
      if verbose {
        for (key, every) in [("a_every", difference.everyA), ("b_every", difference.everyB)] where !every.isEmpty {
          json.openArray(key)
          for place in every {
            json.open()
            json.int("frame", place.frame)
            json.number("time_s", place.seconds)
            json.close()
          }
          json.closeArray()
        }
        if let count = difference.placesA, count > difference.everyA.count { json.int("a_places", count) }
        if let count = difference.placesB, count > difference.everyB.count { json.int("b_places", count) }
      }
      json.close()
    }
    json.closeArray()
    json.close()
    out = json.out
    out.byte(0x0A)
  }
}
