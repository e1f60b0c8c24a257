import BLECore

/// What `convert --redact` replaces: device addresses, names and other user strings, keys and
/// pairing values, and (asked for by name only) health values.
package struct RedactionKinds: OptionSet, Sendable, Hashable {
  package let rawValue: UInt8
  package init(rawValue: UInt8) { self.rawValue = rawValue }

  /// Device addresses, replaced by pseudonyms of the same type, the same one wherever an address occurs.
  package static let addresses = RedactionKinds(rawValue: 1)
  /// Advertised and GAP device names, Device Information strings, BR/EDR local and remote names.
  package static let names = RedactionKinds(rawValue: 2)
  /// Long-term, identity and signing keys, EDIV/Rand, link keys, pairing values, passkeys.
  package static let keys = RedactionKinds(rawValue: 4)
  /// Health values: heart rate, RR intervals, energy expended.
  package static let values = RedactionKinds(rawValue: 8)

  /// What `--redact` alone replaces.
  package static let standard: RedactionKinds = [.addresses, .names, .keys]
  package static let all: RedactionKinds = [.addresses, .names, .keys, .values]

  /// Each kind's word, in order.
  package static let words: [(String, RedactionKinds)] = [("addresses", .addresses), ("names", .names), ("keys", .keys), ("values", .values)]

  /// A comma-separated list of kinds (`addresses,names`); empty: the standard set. "all" names
  /// every kind. Throws the first word that is no kind.
  package init(list: String) throws(UnknownWord) {
    let parts = list.split(separator: ",", omittingEmptySubsequences: true).map { $0.trimmingCharacters(in: " ") }
    if parts.isEmpty {
      self = .standard
      return
    }
    var kinds: RedactionKinds = []
    for part in parts {
      if part == "all" {
        kinds.formUnion(.all)
      } else if let kind = Self.words.first(where: { $0.0 == part })?.1 {
        kinds.formUnion(kind)
      } else {
        throw UnknownWord(word: part)
      }
    }
    self = kinds
  }

  package struct UnknownWord: Error, Sendable {
    package var word: String
  }

  /// The kinds as a list (`addresses,names,keys`).
  package var list: String { Self.words.filter { contains($0.1) }.map(\.0).joined(separator: ",") }
}

extension Substring {
  fileprivate func trimmingCharacters(in set: Character) -> String {
    var text = self
    while text.first == set { text = text.dropFirst() }
    while text.last == set { text = text.dropLast() }
    return String(text)
  }
}

/// What a redaction replaced and what it could not redact, for the note on standard error.
package struct RedactionTally: Sendable, Equatable {
  /// Places an address was replaced.
  package var addresses = 0
  /// Distinct addresses replaced (devices, roughly).
  package var distinctAddresses = 0
  package var names = 0
  package var keys = 0
  package var values = 0
  /// Records left out because they could not be parsed (a continuation without its start) and
  /// might hold what is replaced.
  package var dropped = 0
  /// Encrypted link-layer payloads written as they are (neither decrypted nor encrypted again).
  package var encryptedLeft = 0
  /// Those of them the decoder opened (with a key given or worked out from the pairing).
  package var encryptedOpened = 0
  /// The kinds asked for (the warnings depend on them).
  package var kinds: RedactionKinds = []
  /// Records still holding an original the redaction replaced elsewhere (the safety net).
  package var leftoverRecords = 0
  /// The first of those, by frame number.
  package var leftoverFrames: [Int] = []
  /// What was found there: "address", "name", "key".
  package var leftoverKinds: Set<String> = []

  package init() {}

  /// One line for standard error: what was replaced, per kind asked for.
  package func summary(kinds: RedactionKinds) -> String {
    var parts: [String] = []
    if kinds.contains(.addresses) {
      parts.append("\(addresses) address\(addresses == 1 ? "" : "es") (\(distinctAddresses) distinct)")
    }
    if kinds.contains(.names) { parts.append("\(names) name\(names == 1 ? "" : "s")") }
    if kinds.contains(.keys) { parts.append("\(keys) key\(keys == 1 ? "" : "s") or pairing value\(keys == 1 ? "" : "s")") }
    if kinds.contains(.values) { parts.append("\(values) health value\(values == 1 ? "" : "s")") }
    return "redacted: " + parts.joined(separator: ", ")
  }

  /// Lines for what was not redacted (empty when everything was).
  package var warnings: [String] {
    var lines: [String] = []
    if dropped > 0 {
      lines.append(
        "\(dropped) record\(dropped == 1 ? "" : "s") left out: a piece of a PDU whose start is not in the capture (or in a damaged packet) cannot be parsed, and might hold what --redact replaces")
    }
    if encryptedLeft > 0 {
      lines.append("\(encryptedLeft) encrypted link-layer payload\(encryptedLeft == 1 ? "" : "s") written as captured (not decrypted and encrypted again)")
    }
    if encryptedOpened > 0 && !kinds.isSuperset(of: [.addresses, .keys]) {
      lines.append(
        "\(encryptedOpened) of them opened here with the capture's own pairing or a key given: the output can be decrypted too, and what they hold is not redacted (--redact with addresses and keys, the default, closes them)")
    }
    if leftoverRecords > 0 {
      let frames = leftoverFrames.map { "#\($0)" }.joined(separator: ", ")
      let what = leftoverKinds.sorted().joined(separator: ", ")
      lines.append(
        "\(leftoverRecords) record\(leftoverRecords == 1 ? "" : "s") still hold\(leftoverRecords == 1 ? "s" : "") the bytes of an original \(what) in a place the redaction does not parse (\(frames)\(leftoverRecords > leftoverFrames.count ? ", …" : "")): check before sharing")
    }
    return lines
  }
}
