import BLECore
import Foundation
import Testing
import BLETestSupport

/// `ByteView`s and `ByteReader`s point into bytes pinned only while a frame is decoded (or a
/// buffer lends them), so neither may outlive that: no type may keep one (a stored view or
/// reader would outlive its bytes), the pinning functions refuse to hand one back, and neither
/// reads a byte outside its bounds. The compiler cannot say the first without an experimental
/// feature, so that test reads the sources: a `var`/`let` whose type mentions `ByteView` or
/// `ByteReader` must sit in code (a function, an initializer, a closure), or be computed.
@Suite struct ByteViewLifetimeTests {
  @Test func noTypeStoresAByteViewOrAByteReader() throws {
    let sources = repositoryRoot.appendingPathComponent("Sources")
    let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)?
      .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
    #expect(files.count > 20)
    var offenders: [String] = []
    var declarations = 0
    for file in files {
      let lines = try String(contentsOf: file, encoding: .utf8).components(separatedBy: "\n")
      offenders += storedViews(in: lines).map { "\(file.lastPathComponent):\($0)" }
      declarations += lines.filter { $0.contains("ByteReader") || $0.contains("ByteView") }.count
    }
    // The check ran over code that uses both (it would pass vacuously on an empty tree).
    #expect(declarations > 100)
    #expect(offenders.isEmpty, "stored ByteView or ByteReader: \(offenders)")
  }

  @Test func theCheckFindsAStoredViewOrReader() {
    let source = """
      struct Holder {
        var kept: ByteView?
        var computed: ByteView { view }
        let reader: ByteReader
        static var shared: [ByteReader] = []
        func use() {
          let local: ByteView = view
          var cursor: ByteReader = ByteReader(local, layer: .att)
        }
      }
      """
    #expect(storedViews(in: source.components(separatedBy: "\n")) == [2, 4, 5])
  }

  /// Every read checks the reader's end first: at the end of a part split off with
  /// `readReader`, every kind of read throws, though the bytes after the part are there to read.
  @Test func aReaderReadsNothingPastItsEnd() throws {
    let bytes: [UInt8] = Array(0..<40)
    try ByteReader.reading(bytes, layer: .att) { (outer: inout ByteReader) throws in
      try outer.skip(4)
      var part = try outer.readReader(count: 3)
      #expect(part.offset == 4 && part.endOffset == 7)
      let reads: [(String, (inout ByteReader) throws -> Void)] = [
        ("readUInt8", { _ = try $0.readUInt8() }), ("readInt8", { _ = try $0.readInt8() }),
        ("readUInt16LE", { _ = try $0.readUInt16LE() }), ("readUInt16BE", { _ = try $0.readUInt16BE() }),
        ("readUInt24LE", { _ = try $0.readUInt24LE() }), ("readUInt32LE", { _ = try $0.readUInt32LE() }),
        ("readUInt32BE", { _ = try $0.readUInt32BE() }), ("readUInt64LE", { _ = try $0.readUInt64LE() }),
        ("readBDAddr", { _ = try $0.readBDAddr() }), ("readUUID16", { _ = try $0.readUUID16() }),
        ("readUUID32", { _ = try $0.readUUID32() }), ("readUUID128", { _ = try $0.readUUID128() }),
        ("readBytes", { _ = try $0.readBytes(count: 1) }), ("skip", { try $0.skip(1) }),
        ("peekUInt8", { _ = try $0.peekUInt8() }), ("readReader", { _ = try $0.readReader(count: 1) }),
      ]
      // Three bytes in: reads of more than three throw there and leave the reader where it was.
      for (name, read) in reads {
        var fresh = part
        do {
          try read(&fresh)
          #expect(fresh.offset <= part.endOffset, "\(name) read past the part")
        } catch {
          #expect(fresh.offset == part.offset, "\(name) moved on a failed read")
        }
      }
      // At the end, nothing at all can be read.
      try part.skip(3)
      #expect(part.isAtEnd && part.remaining == 0)
      for (name, read) in reads {
        var fresh = part
        #expect(throws: DecodeError.self, "\(name) read past the end") { try read(&fresh) }
        #expect(fresh.offset == 7)
      }
      #expect(part.readRemaining().isEmpty)
      // The outer reader goes on after the part.
      #expect(try outer.readUInt8() == 7)
    }
  }

  /// What a reader hands out is bounded too: a view holds exactly the bytes read, and its
  /// neighbours (pinned, readable memory) are out of its reach.
  @Test func aViewFromAReaderHoldsOnlyItsBytes() throws {
    let bytes: [UInt8] = [0xA0, 0xA1, 0xA2, 0xA3, 0xA4, 0xA5]
    try ByteReader.reading(bytes, layer: .att) { (reader: inout ByteReader) throws in
      try reader.skip(1)
      let view = try reader.readBytes(count: 3)
      #expect(Array(view) == [0xA1, 0xA2, 0xA3])
      #expect(view.startIndex == 1 && view.endIndex == 4)
      #expect(Array(view.dropFirst()) == [0xA2, 0xA3])
      var inner = ByteReader(view, layer: .att)
      #expect(try inner.readUInt16LE() == 0xA2A1)
      #expect(throws: DecodeError.self) { try inner.readUInt16LE() }
      #expect(Array(reader.readRemaining()) == [0xA4, 0xA5])
    }
  }

  /// Reading a view at an index outside it stops the program instead of reading the byte
  /// beside it (a precondition, in release builds too).
  @Test func aViewTrapsOutsideItsBounds() async {
    await #expect(processExitsWith: .failure) {
      _ = ByteReader.reading([1, 2, 3, 4], layer: .att) { (reader: inout ByteReader) -> UInt8 in
        let view = (try? reader.readBytes(count: 2)) ?? reader.readRemaining()
        return view[view.endIndex]  // the third byte: pinned, but not the view's
      }
    }
    await #expect(processExitsWith: .failure) {
      _ = ByteView.pinning([1, 2, 3, 4]) { view in Array(view[2..<5]) }
    }
  }

  /// The pinning functions refuse to hand back the reader or view they lend: it would point
  /// into bytes no longer pinned.
  @Test func pinnedBytesDoNotEscape() async {
    await #expect(processExitsWith: .failure) {
      let escaped = ByteReader.reading([1, 2, 3], layer: .att) { (reader: inout ByteReader) in reader }
      _ = escaped.remaining
    }
    await #expect(processExitsWith: .failure) {
      let escaped = ByteView.pinning([1, 2, 3]) { $0 }
      _ = escaped.count
    }
    // Handing back what was read from them, copied, is what they are for.
    let copied = ByteReader.reading([1, 2, 3], layer: .att) { (reader: inout ByteReader) in Array(reader.readRemaining()) }
    #expect(copied == [1, 2, 3])
  }

  /// Line numbers (from 1) of declarations whose type mentions `ByteView` or `ByteReader` and
  /// that are members of a type rather than locals in code. Scopes are told apart by the line
  /// that opens them.
  func storedViews(in lines: [String]) -> [Int] {
    enum Scope { case type, code }
    var scopes: [Scope] = []
    var found: [Int] = []
    let typeOpener = try! NSRegularExpression(pattern: #"^\s*(public |internal |private |fileprivate |package |final |@\w+ )*(struct|class|enum|extension|protocol|actor)\b"#)
    let declaration = try! NSRegularExpression(
      pattern: #"^\s*(public |internal |private |fileprivate |package |static |@\w+ )*(var|let)\s+\w+\s*:[^={]*\b(ByteView|ByteReader)\b"#)
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
