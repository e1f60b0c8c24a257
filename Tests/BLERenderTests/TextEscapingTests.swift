import BLECore
import BLERender
import Testing

/// Text fields are written on one line: control characters (a UART line's newline, a device
/// name with a tab) show escaped; other text, UTF-8 included, as it is.
@Suite struct TextEscapingTests {
  func written(_ value: FieldValue) -> String {
    var out = OutputBuffer(fd: nil)
    TextRenderer.writeValue(value, &out)
    return out.text
  }

  @Test func controlCharactersAreEscaped() {
    #expect(written(.text("battery=87%\n")) == "battery=87%\\n")
    #expect(written(.text("a\tb\r\u{1B}[0m\u{7F}")) == "a\\tb\\r\\x1B[0m\\x7F")
    #expect(written(.text("température \\ \"x\"")) == "température \\ \"x\"")
    #expect(TextRenderer.escapingControlCharacters("\u{0}") == "\\x00")
    // C1 controls (U+009B is CSI to some terminals) too.
    #expect(written(.text("a\u{9B}2J")) == "a\\u009B2J")
  }
}
