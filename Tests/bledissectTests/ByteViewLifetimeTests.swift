import Foundation
import Testing
import BLETestSupport

/// `ByteView`s point into bytes pinned only while a frame is decoded, so no type may keep one:
/// a stored `ByteView` would outlive its bytes. The compiler cannot say so without an
/// experimental feature, so this test reads the sources: a `var`/`let` whose type mentions
/// `ByteView` must sit in code (a function, an initializer, a closure), or be computed.
@Suite struct ByteViewLifetimeTests {
  @Test func noTypeStoresAByteView() throws {
    let sources = repositoryRoot.appendingPathComponent("Sources")
    let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)?
      .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
    #expect(files.count > 20)
    var offenders: [String] = []
    for file in files {
      let lines = try String(contentsOf: file, encoding: .utf8).components(separatedBy: "\n")
      offenders += storedByteViews(in: lines).map { "\(file.lastPathComponent):\($0)" }
    }
    #expect(offenders.isEmpty, "stored ByteView: \(offenders)")
  }

  @Test func theCheckFindsAStoredView() {
    let source = """
      struct Holder {
        var kept: ByteView?
        var computed: ByteView { view }
        func use() {
          let local: ByteView = view
        }
      }
      """
    #expect(storedByteViews(in: source.components(separatedBy: "\n")) == [2])
  }

  /// Line numbers (from 1) of declarations whose type mentions `ByteView` and that are members
  /// of a type rather than locals in code. Scopes are told apart by the line that opens them.
  func storedByteViews(in lines: [String]) -> [Int] {
    enum Scope { case type, code }
    var scopes: [Scope] = []
    var found: [Int] = []
    let typeOpener = try! NSRegularExpression(pattern: #"^\s*(public |internal |private |fileprivate |final |@\w+ )*(struct|class|enum|extension|protocol|actor)\b"#)
    let declaration = try! NSRegularExpression(pattern: #"^\s*(public |internal |private |fileprivate |static |@\w+ )*(var|let)\s+\w+\s*:[^={]*\bByteView\b"#)
    for (index, line) in lines.enumerated() {
      let range = NSRange(line.startIndex..., in: line)
      let code = line.components(separatedBy: "//").first ?? line
      if declaration.firstMatch(in: code, range: NSRange(code.startIndex..., in: code)) != nil,
        scopes.last == .type, !code.contains("{")
      {
        found.append(index + 1)
      }
      let opens = code.filter { $0 == "{" }.count
      let closes = code.filter { $0 == "}" }.count
      let kind: Scope = typeOpener.firstMatch(in: line, range: range) != nil ? .type : .code
      // Balanced braces on one line open and close their scopes at once.
      for _ in 0..<max(opens - closes, 0) { scopes.append(kind) }
      for _ in 0..<max(closes - opens, 0) where !scopes.isEmpty { scopes.removeLast() }
    }
    return found
  }
}
