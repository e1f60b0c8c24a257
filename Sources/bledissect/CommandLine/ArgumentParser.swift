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
}

/// What a command is called, what it does and which options it takes.
struct CommandConfiguration: Sendable {
  var name: String
  var abstract: String
  /// Usage line after `bledissect`, e.g. `annotate [options] <file>`.
  var usage: String
  var discussion: String = ""
  var options: [OptionSpec]
  var minimumPositionals = 0
  var maximumPositionals = 0
}

/// A usage error: printed with the usage, exit status 64.
struct UsageError: Error, Sendable, Equatable {
  var message: String
}

/// The parsed command line of one command.
struct ParsedArguments: Sendable, Equatable {
  var flags: Set<String> = []
  var values: [String: String] = [:]
  var positionals: [String] = []

  func has(_ name: String) -> Bool { flags.contains(name) }
  func value(_ name: String) -> String? { values[name] }
}

enum ArgumentParser {
  static let helpOption = OptionSpec(name: "help", short: "h", kind: .flag, help: "Show help for this command.")

  /// Parses `arguments` against `configuration`. Handles `--name value`, `--name=value`,
  /// `-n value`, `-` (standard input) as a positional, and `--` ending the options.
  static func parse(_ arguments: [String], for configuration: CommandConfiguration) throws(UsageError) -> ParsedArguments {
    let options = configuration.options + [helpOption]
    var parsed = ParsedArguments()
    var index = 0
    var optionsEnded = false
    while index < arguments.count {
      let argument = arguments[index]
      index += 1
      if optionsEnded || argument == "-" || !argument.hasPrefix("-") {
        parsed.positionals.append(argument)
        continue
      }
      if argument == "--" {
        optionsEnded = true
        continue
      }
      var inlineValue: String?
      let spec: OptionSpec?
      if argument.hasPrefix("--") {
        var name = String(argument.dropFirst(2))
        if let equals = name.firstIndex(of: "=") {
          inlineValue = String(name[name.index(after: equals)...])
          name = String(name[..<equals])
        }
        spec = options.first { $0.name == name }
      } else {
        guard argument.count == 2 else { throw UsageError(message: "unknown option '\(argument)'") }
        spec = options.first { $0.short == argument.last }
      }
      guard let spec else { throw UsageError(message: "unknown option '\(argument)'") }
      switch spec.kind {
      case .flag:
        if inlineValue != nil { throw UsageError(message: "option '--\(spec.name)' takes no value") }
        parsed.flags.insert(spec.name)
      case .value(let valueName):
        if let inlineValue {
          parsed.values[spec.name] = inlineValue
        } else {
          guard index < arguments.count else {
            throw UsageError(message: "option '\(argument)' needs a value <\(valueName)>")
          }
          parsed.values[spec.name] = arguments[index]
          index += 1
        }
      }
    }
    if parsed.has("help") { return parsed }
    if parsed.positionals.count < configuration.minimumPositionals {
      throw UsageError(message: "missing argument: \(configuration.usage)")
    }
    if parsed.positionals.count > configuration.maximumPositionals {
      let extra = parsed.positionals[configuration.maximumPositionals]
      throw UsageError(message: "unexpected argument '\(extra)'")
    }
    return parsed
  }

  /// Help text generated from the same table the parser reads.
  static func help(for configuration: CommandConfiguration) -> String {
    var text = "OVERVIEW: \(configuration.abstract)\n\nUSAGE: bledissect \(configuration.usage)\n"
    if !configuration.discussion.isEmpty { text += "\n\(configuration.discussion)\n" }
    text += "\nOPTIONS:\n"
    let rows = (configuration.options + [helpOption]).map { spec -> (String, String) in
      var left = spec.short.map { "-\($0), " } ?? "    "
      left += "--\(spec.name)"
      if case .value(let valueName) = spec.kind { left += " <\(valueName)>" }
      return (left, spec.help)
    }
    let width = (rows.map(\.0.count).max() ?? 0) + 2
    for (left, right) in rows {
      text += "  " + left + String(repeating: " ", count: width - left.count) + right + "\n"
    }
    return text
  }
}
