import BLETestSupport
import Foundation
import Testing

/// The library products' public API is the committed list docs/public-api.txt, which
/// Scripts/public-api writes: a declaration made public (or no longer public) fails here until
/// the list, and so the review of the change, says so. The targets that are no product have no
/// public declarations: only the package sees them, so they say `package`.
@Suite struct PublicAPITests {
  /// The targets of the library products in Package.swift (the list Scripts/public-api walks).
  static let productTargets = ["BLECore", "BLECapture", "BLEDecoder", "BLEEngine"]

  /// A declaration line: its attributes, then `public` as its first modifier.
  nonisolated(unsafe) static let declaration = /^\s*(?:@[A-Za-z]+(?:\([^)]*\))?\s+)*public\s/

  /// The public declarations of one target as Scripts/public-api lists them: "path: line", the
  /// line trimmed, without a body opened on it (" {...") or a trailing "// comment".
  static func publicDeclarations(in target: String) throws -> [String] {
    let folder = repositoryRoot.appendingPathComponent("Sources/\(target)")
    let files = try FileManager.default.subpathsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".swift") }
    var lines: [String] = []
    for file in files {
      let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
      for line in text.split(separator: "\n", omittingEmptySubsequences: false) where line.firstMatch(of: declaration) != nil {
        var shown = Substring(line.drop { $0 == " " || $0 == "\t" })
        if let body = shown.range(of: " {") { shown = shown[..<body.lowerBound] }
        if let comment = shown.range(of: " //") { shown = shown[..<comment.lowerBound] }
        while let last = shown.last, last == " " || last == "\t" { shown = shown.dropLast() }
        lines.append("Sources/\(target)/\(file): \(shown)")
      }
    }
    return lines
  }

  @Test func committedListIsTheSourcesPublicAPI() throws {
    var lines: [String] = []
    for target in Self.productTargets { lines += try Self.publicDeclarations(in: target) }
    // Bytewise, as `LC_ALL=C sort` orders them.
    lines.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    let committed = try String(contentsOf: repositoryRoot.appendingPathComponent("docs/public-api.txt"), encoding: .utf8)
    let listed = committed.split(separator: "\n").map(String.init)
    let added = Set(lines).subtracting(listed).sorted(), removed = Set(listed).subtracting(lines).sorted()
    #expect(committed == lines.map { $0 + "\n" }.joined(), "docs/public-api.txt is out of date: run Scripts/public-api (public now: \(added.prefix(5)); public no longer: \(removed.prefix(5)))")
    #expect(lines.count > 100, "the list found the declarations")
  }

  /// The products the list covers are the library products Package.swift declares.
  @Test func listCoversTheLibraryProducts() throws {
    let manifest = try String(contentsOf: repositoryRoot.appendingPathComponent("Package.swift"), encoding: .utf8)
    let libraries = manifest.matches(of: /\.library\(name: "([A-Za-z]+)", targets: \["([A-Za-z]+)"\]\)/).map { String($0.output.2) }
    #expect(libraries.sorted() == Self.productTargets.sorted())
    let script = try String(contentsOf: repositoryRoot.appendingPathComponent("Scripts/public-api"), encoding: .utf8)
    #expect(script.contains("targets=(\(Self.productTargets.joined(separator: " ")))"))
  }

  /// `public` in a target that is no product means nothing outside the package: those say `package`.
  @Test func otherTargetsHaveNoPublicDeclarations() throws {
    for target in ["BLEAnalysis", "BLERender", "BLEFuzzTargets", "BLETestSupport", "bledissect"] {
      #expect(try Self.publicDeclarations(in: target) == [], "\(target)")
    }
  }
}
