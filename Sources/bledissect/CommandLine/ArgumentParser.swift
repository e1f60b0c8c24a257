/// A command-line option: data in a table, parsed by one loop (swift-argument-parser's shape,
/// hand-written because no package can be fetched).
struct OptionSpec: Sendable {
  enum Kind: Sendable {
    case flag
    /// Takes a value; `valueName` is shown in help (`--time <mode>`).
    case value(valueName: String)
  }
  var name: String
  var short: Character?
  var kind: Kind
  var help: String
  /// The values the option takes when they are a fixed list that `valueName` does not spell
  /// out (`--to`'s formats); for shell completion.
  var choices: [String]? = nil
  /// The value may be left out (`--redact`, `--redact=names`): given, it is joined by `=`.
  var valueIsOptional = false

  /// What a shell completes the option's value with.
  enum Completion: Equatable, Sendable {
    /// A flag, or a value of the user's own (a number, an address).
    case none
    case files
    case words([String])
  }

  var completion: Completion {
    guard case .value(let valueName) = kind, !valueIsOptional else { return .none }
    if let choices { return .words(choices) }
    if valueName.contains("|") { return .words(valueName.split(separator: "|").map(String.init)) }
    return valueName == "file" ? .files : .none
  }
}

/// What a command is called, what it does and which options it takes.
struct CommandConfiguration: Sendable {
  var name: String
  var abstract: String
  /// Usage line after `bledissect`, e.g. `annotate [options] <file>`.
  var usage: String
  var discussion: String = ""
  var options: [OptionSpec]
  /// The command's own EXIT STATUS section (its first line included) when it differs from
  /// the one every reading command shares (`BLEDissectCLI.exitStatusHelp`).
  var exitStatus: String?
  var minimumPositionals = 0
  var maximumPositionals = 0
  /// Words the first positional takes (a subcommand: `cache list`), for completions; empty
  /// when positionals are captures.
  var positionalWords: [String] = []
}

/// A usage error: one line on stderr, then where to find help; exit status 64.
struct UsageError: Error, Sendable, Equatable {
  var message: String
}

/// One word of the command line as the system passed it. File names are bytes, not
/// necessarily UTF-8, so a word keeps its bytes for opening files; options are read as text.
struct Argument: Sendable, Equatable, ExpressibleByStringLiteral {
  var bytes: [UInt8]

  init(bytes: [UInt8]) { self.bytes = bytes }
  init(_ text: String) { bytes = Array(text.utf8) }
  init(stringLiteral text: String) { self.init(text) }

  /// The word as text; bytes that are not UTF-8 become U+FFFD (only ever compared with
  /// option names and values, which are ASCII).
  var text: String { String(decoding: bytes, as: UTF8.self) }

  /// The word for messages: bytes that are not UTF-8, and control characters, as `\xNN`, so
  /// a message stays one readable line.
  var display: String {
    var result = ""
    var index = 0
    while index < bytes.count {
      let length = Self.utf8SequenceLength(bytes, at: index)
      // A control character (C0, DEL, C1 as C2 80–C2 9F) is shown byte by byte too.
      if length > 0, !(length == 1 && (bytes[index] < 0x20 || bytes[index] == 0x7F)),
        !(length == 2 && bytes[index] == 0xC2 && bytes[index + 1] <= 0x9F)
      {
        result += String(decoding: bytes[index..<index + length], as: UTF8.self)
        index += length
      } else {
        result += "\\x" + String(bytes[index], radix: 16, uppercase: true).leftPadded(to: 2)
        index += 1
      }
    }
    return result
  }

  /// The length of the well-formed UTF-8 sequence starting at `index`, or 0 (RFC 3629: no
  /// overlong forms, no surrogates, nothing above U+10FFFF).
  static func utf8SequenceLength(_ bytes: [UInt8], at index: Int) -> Int {
    let lead = bytes[index]
    let length: Int
    var low: UInt8 = 0x80
    var high: UInt8 = 0xBF
    switch lead {
    case 0x00...0x7F: return 1
    case 0xC2...0xDF: length = 2
    case 0xE0: length = 3; low = 0xA0
    case 0xE1...0xEC, 0xEE...0xEF: length = 3
    case 0xED: length = 3; high = 0x9F
    case 0xF0: length = 4; low = 0x90
    case 0xF1...0xF3: length = 4
    case 0xF4: length = 4; high = 0x8F
    default: return 0
    }
    guard bytes.count - index >= length else { return 0 }
    for offset in 1..<length {
      let byte = bytes[index + offset]
      let (lower, upper) = offset == 1 ? (low, high) : (0x80, 0xBF)
      if byte < lower || byte > upper { return 0 }
    }
    return length
  }
}

extension String {
  func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(width - count, 0)) + self }
}

/// The parsed command line of one command.
struct ParsedArguments: Sendable, Equatable {
  var flags: Set<String> = []
  /// Every value given to each option, in order.
  var values: [String: [String]] = [:]
  var positionals: [Argument] = []

  func has(_ name: String) -> Bool { flags.contains(name) }
  /// The option's value; given more than once, the last one counts.
  func value(_ name: String) -> String? { values[name]?.last }
  /// Every value of an option given more than once (filters: any of them).
  func allValues(_ name: String) -> [String] { values[name] ?? [] }
}

enum ArgumentParser {
  static let helpOption = OptionSpec(name: "help", short: "h", kind: .flag, help: "Show help for this command.")

  /// What a short option that this command lacks means where it exists: one letter, one
  /// meaning in every command (`-j` is `--jobs`; `--json` has no short form).
  static let shortHints: [Character: String] = [
    "j": " (-j is --jobs, for summary, gatt and hr; JSON output is --json)"
  ]

  /// Parses `arguments` against `configuration`. Handles `--name value`, `--name=value`,
  /// `-n value`, `-nvalue`, bundled flags (`-1v`, ending in at most one option with a value:
  /// `-1c5`), `-` (standard input) as a positional, and `--` ending the options.
  static func parse(_ arguments: [Argument], for configuration: CommandConfiguration) throws(UsageError) -> ParsedArguments {
    let options = configuration.options + [helpOption]
    var parsed = ParsedArguments()
    var index = 0
    var optionsEnded = false
    /// Takes the value of `spec`: the inline one, else the next word.
    func takeValue(_ spec: OptionSpec, _ valueName: String, inline: String?, written: String) throws(UsageError) {
      if let inline = inline ?? (spec.valueIsOptional ? "" : nil) {
        parsed.values[spec.name, default: []].append(inline)
        return
      }
      guard index < arguments.count else { throw UsageError(message: "option '\(written)' needs a value <\(valueName)>") }
      parsed.values[spec.name, default: []].append(arguments[index].text)
      index += 1
    }
    while index < arguments.count {
      let word = arguments[index]
      index += 1
      let argument = word.text
      if optionsEnded || argument == "-" || !argument.hasPrefix("-") {
        parsed.positionals.append(word)
        continue
      }
      if argument == "--" {
        optionsEnded = true
        continue
      }
      if argument.hasPrefix("--") {
        var name = String(argument.dropFirst(2))
        var inlineValue: String?
        if let equals = name.firstIndex(of: "=") {
          inlineValue = String(name[name.index(after: equals)...])
          name = String(name[..<equals])
        }
        guard let spec = options.first(where: { $0.name == name }) else {
          throw UsageError(message: "unknown option '--\(name)'" + suggestion(name, among: options.map(\.name), prefix: "--"))
        }
        switch spec.kind {
        case .flag:
          if inlineValue != nil { throw UsageError(message: "option '--\(spec.name)' takes no value") }
          parsed.flags.insert(spec.name)
        case .value(let valueName):
          try takeValue(spec, valueName, inline: inlineValue, written: "--\(name)")
        }
        continue
      }
      // Short options: flags may be bundled (`-1v`); an option taking a value takes the rest
      // of the word (`-c5`, `-tabs`) or, when nothing is left, the next word.
      var letters = Substring(argument.dropFirst())
      while let letter = letters.first {
        letters = letters.dropFirst()
        guard let spec = options.first(where: { $0.short == letter }) else {
          let inBundle = argument.count > 2 ? " in '\(argument)'" : ""
          throw UsageError(message: "unknown option '-\(letter)'\(inBundle)" + (shortHints[letter] ?? ""))
        }
        if case .value(let valueName) = spec.kind {
          try takeValue(spec, valueName, inline: letters.isEmpty ? nil : String(letters), written: "-\(letter)")
          break
        }
        parsed.flags.insert(spec.name)
      }
    }
    if parsed.has("help") { return parsed }
    if parsed.positionals.count < configuration.minimumPositionals {
      throw UsageError(message: "missing argument (usage: bledissect \(configuration.usage))")
    }
    if parsed.positionals.count > configuration.maximumPositionals {
      let extra = parsed.positionals[configuration.maximumPositionals]
      throw UsageError(message: "unexpected argument '\(extra.display)'")
    }
    return parsed
  }

  /// " (did you mean 'x'?)" when one of `names` is close to `word` (a typo or a prefix).
  static func suggestion(_ word: String, among names: [String], prefix: String = "") -> String {
    let lowered = word.lowercased()
    let scored = names.map { name -> (String, Int) in
      (name, name.hasPrefix(lowered) && lowered.count >= 2 ? 0 : editDistance(lowered, name))
    }
    guard let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= max(1, min(2, word.count / 3)) else { return "" }
    return " (did you mean '\(prefix)\(best.0)'?)"
  }

  /// Levenshtein distance (short words only: command and option names).
  static func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a), b = Array(b)
    if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
    var previous = Array(0...b.count)
    for i in 1...a.count {
      var current = [i] + Array(repeating: 0, count: b.count)
      for j in 1...b.count {
        current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
      }
      previous = current
    }
    return previous[b.count]
  }

  /// Help text generated from the same table the parser reads.
  static func help(for configuration: CommandConfiguration) -> String {
    var text = "OVERVIEW: \(configuration.abstract)\n\nUSAGE: bledissect \(configuration.usage)\n"
    if !configuration.discussion.isEmpty { text += "\n\(configuration.discussion)\n" }
    text += "\nOPTIONS:\n"
    let rows = (configuration.options + [helpOption]).map { spec -> (String, String) in
      var left = spec.short.map { "-\($0), " } ?? "    "
      left += "--\(spec.name)"
      if case .value(let valueName) = spec.kind { left += spec.valueIsOptional ? "[=<\(valueName)>]" : " <\(valueName)>" }
      return (left, spec.help)
    }
    let width = (rows.map(\.0.count).max() ?? 0) + 2
    for (left, right) in rows {
      text += "  " + left + String(repeating: " ", count: width - left.count) + right + "\n"
    }
    return text
  }
}
