import BLECore
import BLERender
import Foundation
import Testing
import BLETestSupport
@testable import bledissect

/// What is made from the binary's help (the man page, the shell completions, the help quoted in
/// docs/cli.md) is what the binary prints now, and the README says what the docs and the code
/// say: the JSON schema version, the performance figures, the command list, one meaning per
/// short option.
@Suite struct ManualAndDocsTests {
  static func read(_ path: String) throws -> String {
    try String(contentsOf: repositoryRoot.appendingPathComponent(path), encoding: .utf8)
  }

  static let completionFiles = [
    ("bash", "Scripts/completions/bledissect.bash"), ("zsh", "Scripts/completions/_bledissect"), ("fish", "Scripts/completions/bledissect.fish"),
  ]

  // MARK: - Generated files

  /// docs/bledissect.1 is `bledissect help --man`, byte for byte (Scripts/update-cli-docs).
  @Test func committedManPageIsTheBinarys() throws {
    let generated = runCLI(["help", "--man"])
    #expect(generated.status == 0 && generated.stderr.isEmpty)
    #expect(try Self.read("docs/bledissect.1") == generated.stdout, "docs/bledissect.1 is out of date: run Scripts/update-cli-docs")
  }

  /// docs/diagnostics.md lists the binary's catalogue (Scripts/update-cli-docs), every code once.
  @Test func committedDiagnosticListIsTheBinarys() throws {
    let listed = runCLI(["help", "--diagnostics"])
    #expect(listed.status == 0)
    #expect(try Self.read("docs/diagnostics.md").contains("```\n" + listed.stdout + "```\n"), "docs/diagnostics.md is out of date: run Scripts/update-cli-docs")
    let codes = DiagnosticKind.all.map(\.code)
    #expect(Set(codes).count == codes.count)
    for code in codes {
      #expect(code.wholeMatch(of: /[a-z0-9]+\.[a-z0-9_]+/) != nil, "\(code)")
      #expect(listed.stdout.contains(code + " "))
    }
    // A code's layer is its prefix.
    for kind in DiagnosticKind.all { #expect(kind.code.hasPrefix(kind.layer.rawValue + ".")) }
  }

  @Test func committedCompletionsAreTheBinarys() throws {
    for (shell, path) in Self.completionFiles {
      let generated = runCLI(["help", "--completions", shell])
      #expect(generated.status == 0, "\(shell)")
      #expect(try Self.read(path) == generated.stdout, "\(path) is out of date: run Scripts/update-cli-docs")
    }
    let unknown = runCLI(["help", "--completions", "tcsh"])
    #expect(unknown.status == 64 && unknown.stderr.hasPrefix("bledissect: help --completions needs one shell: bash, zsh, fish\n"))
  }

  /// The man page holds every command and every option of every command, and no text line
  /// that roff would take for a request.
  @Test func manPageCoversEveryCommandAndOption() {
    let page = runCLI(["help", "--man"]).stdout
    let lines = page.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    #expect(lines.first { $0.hasPrefix(".TH ") } == ".TH BLEDISSECT 1 \"\" \"bledissect \(BLEDissectCLI.version)\" \"User Commands\"")
    for section in ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "COMMANDS", "EXIT STATUS", "ENVIRONMENT", "SEE ALSO"] {
      #expect(lines.contains(".SH \(section)"), "\(section)")
    }
    for command in BLEDissectCLI.commands {
      let configuration = command.configuration
      #expect(lines.contains(".SS \(configuration.name)"), "\(configuration.name)")
      // Its options, in its section (between its .SS and the next).
      let start = lines.firstIndex(of: ".SS \(configuration.name)")!
      let end = lines[(start + 1)...].firstIndex { $0.hasPrefix(".SS ") || $0.hasPrefix(".SH ") } ?? lines.count
      let section = lines[start..<end].joined(separator: "\n")
      for option in configuration.options {
        var tag = option.short.map { "\\fB\\-\($0)\\fR, " } ?? ""
        tag += "\\fB\\-\\-\(option.name.replacingOccurrences(of: "-", with: "\\-"))\\fR"
        #expect(section.contains(".TP\n" + tag), "\(configuration.name) --\(option.name)")
      }
    }
    // diff's own statuses are under diff.
    #expect(page.contains(".TP\n.B 1\nthey differ\n"))
    let requests: Set<String> = [".TH", ".SH", ".SS", ".PP", ".TP", ".B", ".BR", ".nf", ".fi", ".nh", ".ad", ".RS", ".RE", ".\\\""]
    // EXAMPLES: each command line and what it does.
    #expect(page.contains(".SH EXAMPLES\n.PP\nEvery frame of a capture") && page.contains("bledissect \\-\\-uuid 2a37 \\-w hr.pcapng capture.btsnoop\n"))
    for line in lines where line.hasPrefix(".") || line.hasPrefix("'") {
      #expect(requests.contains(String(line.prefix { $0 != " " })), "a text line roff reads as a request: \(line)")
    }
    #expect(!page.unicodeScalars.contains { $0.value > 0x7E }, "characters beyond ASCII are named (\\[uXXXX])")
  }

  /// `man -l` renders the committed page without a warning (where man is installed).
  @Test(.enabled(if: which("man") != nil, "man is not installed"))
  func manPageRenders() throws {
    let man = try #require(which("man"))
    let process = Process()
    var environment = hermeticEnvironment
    environment["MANWIDTH"] = "80"
    environment["MANPAGER"] = "cat"
    environment["PAGER"] = "cat"
    environment["MAN_KEEP_FORMATTING"] = nil
    process.environment = environment
    process.executableURL = URL(fileURLWithPath: man)
    process.arguments = ["--warnings", "-l", repositoryRoot.appendingPathComponent("docs/bledissect.1").path]
    let output = Pipe()
    let errors = Pipe()
    process.standardOutput = output
    process.standardError = errors
    try process.run()
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    let warnings = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    #expect(process.terminationStatus == 0)
    #expect(warnings.isEmpty, "\(warnings)")
    #expect(text.contains("BLEDISSECT(1)"))
    #expect(text.contains("-t, --time <rel|abs|delta>"))
    #expect(text.contains("2      trouble: a capture is unreadable"))
  }

  /// The committed bash completion, sourced by bash and asked as bash asks it.
  @Test func bashCompletionCompletes() throws {
    guard let bash = which("bash") else {
      Issue.record("bash not found")
      return
    }
    let script = repositoryRoot.appendingPathComponent("Scripts/completions/bledissect.bash").path
    func complete(_ words: [String]) throws -> [String] {
      let process = Process()
      process.executableURL = URL(fileURLWithPath: bash)
      process.currentDirectoryURL = repositoryRoot.appendingPathComponent("captures")
      process.arguments = [
        "--norc", "--noprofile", "-c",
        #"source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _bledissect; printf '%s\n' "${COMPREPLY[@]}""#, "bash", script,
      ] + words
      let output = Pipe()
      process.standardOutput = output
      process.standardError = FileHandle.nullDevice
      try process.run()
      let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
      process.waitUntilExit()
      return text.split(separator: "\n").map(String.init).sorted()
    }
    #expect(try complete(["bledissect", "su"]) == ["summary"])
    #expect(try complete(["bledissect", "summary", "--j"]) == ["--jobs", "--json"])
    #expect(try complete(["bledissect", "--ti"]) == ["--time"])
    #expect(try complete(["bledissect", "annotate", "--time", ""]) == ["abs", "delta", "rel"])
    #expect(try complete(["bledissect", "-t", "d"]) == ["delta"])
    #expect(try complete(["bledissect", "annotate", "--time", "=", "a"]) == ["abs"])
    #expect(
      try complete(["bledissect", "convert", "--to", "pcap"]) == [
        "pcap", "pcap-h4", "pcap-ll", "pcap-ll-phdr", "pcap-monitor", "pcap-nordic", "pcap-ppi", "pcap-user10",
        "pcapng", "pcapng-ll", "pcapng-ll-phdr", "pcapng-nordic", "pcapng-ppi", "pcapng-user10",
      ])
    #expect(try complete(["bledissect", "diff", "--ignore", "ti"]) == ["timing"])
    #expect(try complete(["bledissect", "help", "d"]) == ["diff"])
    #expect(try complete(["bledissect", "hr", "--peer", ""]) == [])
    #expect(try complete(["bledissect", "live", "--follow", "hr_strap_session.b"]) == ["hr_strap_session.btsnoop"])
    #expect(try complete(["bledissect", "two_"]) == ["two_straps.btsnoop"])
    #expect(try complete(["bledissect", "gatt", "-j", "2", "eat"]) == ["eatt.btsnoop"])
    // The cache command's words, not files.
    #expect(try complete(["bledissect", "cache", ""]) == ["clear", "list", "show"])
    #expect(try complete(["bledissect", "cache", "s"]) == ["show"])
    // Every command's options: the same list as its table.
    for command in BLEDissectCLI.commands {
      let configuration = command.configuration
      let expected = (configuration.options + [ArgumentParser.helpOption]).flatMap { option in
        (option.short.map { ["-\($0)"] } ?? []) + ["--\(option.name)"]
      }
      #expect(try complete(["bledissect", configuration.name, "-"]) == expected.sorted(), "\(configuration.name)")
    }
  }

  /// zsh reads its file (where installed).
  @Test(.enabled(if: which("zsh") != nil, "zsh is not installed"))
  func zshCompletionParses() throws {
    let zsh = try #require(which("zsh"))
    let (status, _) = try runProgram(zsh, ["-n", repositoryRoot.appendingPathComponent("Scripts/completions/_bledissect").path])
    #expect(status == 0)
  }

  /// fish reads its file and completes from it (where installed).
  @Test(.enabled(if: which("fish") != nil, "fish is not installed"))
  func fishCompletionParsesAndCompletes() throws {
    let fish = try #require(which("fish"))
    let script = repositoryRoot.appendingPathComponent("Scripts/completions/bledissect.fish").path
    let (status, _) = try runProgram(fish, ["-n", script])
    #expect(status == 0)
    func complete(_ line: String) throws -> [String] {
      let (_, data) = try runProgram(fish, ["--no-config", "-c", "source '\(script)'; complete -C '\(line)'"])
      return String(decoding: data, as: UTF8.self).split(separator: "\n").map { String($0.prefix { $0 != "\t" }) }.sorted()
    }
    #expect(try complete("bledissect su") == ["summary"])
    #expect(try complete("bledissect summary --j") == ["--jobs", "--json"])
    #expect(try complete("bledissect annotate --time ") == ["abs", "delta", "rel"])
    #expect(try complete("bledissect diff --ignore ti") == ["timing"])
    #expect(try complete("bledissect cache ") == ["clear", "list", "show"])
  }

  // MARK: - Docs and README

  /// docs/cli.md quotes the help of every command, and its list of commands names them all.
  @Test func cliDocsQuoteEveryCommandsHelpAndListThem() throws {
    let docs = try Self.read("docs/cli.md")
    let names = BLEDissectCLI.commands.map { $0.configuration.name }
    for arguments in [["--help"]] + names.map { ["help", $0] } {
      #expect(docs.contains("```\n" + runCLI(arguments).stdout + "```"), "docs/cli.md is out of date for \(arguments)")
    }
    let sentence = try #require(docs.split(separator: "\n").first { $0.hasPrefix("The first word picks the command (") })
    let listed = sentence.drop { $0 != "(" }.prefix { $0 != ")" }
    for name in names + ["help"] {
      #expect(listed.contains("`\(name)`"), "docs/cli.md's command list lacks \(name)")
    }
  }

  /// The README's JSON schema version is docs/json.md's and the renderer's.
  @Test func readmeStatesTheSchemaVersionOfTheCode() throws {
    let readme = try Self.read("README.md")
    let json = try Self.read("docs/json.md")
    let version = JSONLinesRenderer.schemaVersion
    #expect(json.hasPrefix("# JSON Lines output (schema version \(version))\n"))
    #expect(json.contains("`\"v\": \(version)`"))
    let stated = readme.firstMatch(of: /JSON Lines schema \((?:schema )?version (\d+)\)/).map { Int($0.1) }
    #expect(stated == version, "README states schema version \(String(describing: stated)), the code writes \(version)")
  }

  /// Every performance figure the README quotes is in docs/performance.md, in the section it names.
  @Test func readmePerformanceFiguresComeFromPerformanceDocs() throws {
    let readme = try Self.read("README.md")
    let performance = try Self.read("docs/performance.md")
    let line = try #require(readme.split(separator: "\n").first { $0.hasPrefix("- [docs/performance.md]") }).replacingOccurrences(of: "**", with: "")
    let figures = line.matches(of: /\d+(?:\.\d+)?(?:–\d+(?:\.\d+)?)?(?:×| M frames\/s| MiB)/).map { String($0.output) }
    #expect(figures.count >= 6, "\(figures)")
    let plain = performance.replacingOccurrences(of: "**", with: "")
    for figure in figures {
      #expect(plain.contains(figure), "README quotes \(figure), which docs/performance.md does not give")
    }
    if let section = line.firstMatch(of: /"([^"]+)"/)?.1 {
      #expect(performance.contains("\n## \(section)"), "README names a section docs/performance.md lacks: \(section)")
    }
  }

  // MARK: - Short options

  /// A short option means one long option in every command (`-j` is `--jobs`; `--json` has no
  /// short form), and `-j` where there are no jobs says what it is.
  @Test func eachShortOptionMeansOneThingInEveryCommand() {
    var meaning: [Character: String] = [:]
    for command in BLEDissectCLI.commands {
      for option in command.configuration.options + [ArgumentParser.helpOption] {
        guard let short = option.short else { continue }
        #expect(meaning[short, default: option.name] == option.name, "-\(short) is --\(meaning[short]!) and --\(option.name)")
        meaning[short] = option.name
      }
      #expect(command.configuration.options.first { $0.name == "json" }.map { $0.short == nil } ?? true, "\(command.configuration.name): --json has a short form")
    }
    #expect(meaning["j"] == "jobs")
    let annotate = runCLI(["-j", capturePath("hr_strap_session.btsnoop")])
    #expect(annotate.status == 64)
    #expect(annotate.stderr == "bledissect: unknown option '-j' (-j is --jobs, for summary, gatt and hr; JSON output is --json)\nsee 'bledissect help annotate'\n")
    #expect(runCLI(["live", "-1j", "-"]).stderr.hasPrefix("bledissect: unknown option '-j' in '-1j' (-j is --jobs"))
    #expect(runCLI(["--json", "-c", "1", capturePath("hr_strap_session.btsnoop")]).stdout.hasPrefix("{\"v\":\(JSONLinesRenderer.schemaVersion),"))
    let jobs = runCLI(["summary", "-j", "2", "--json", capturePath("hr_strap_session.btsnoop"), capturePath("eatt.btsnoop")])
    #expect(jobs.status == 0 && jobs.stdout.split(separator: "\n").count == 2)
    #expect(!runCLI(["help", "annotate"]).stdout.contains("-j, --json"))
  }
}
