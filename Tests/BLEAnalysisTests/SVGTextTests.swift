import Testing

@testable import BLEAnalysis

@Suite struct SVGTextTests {
  @Test func escapesXMLSpecials() {
    #expect(SVGText.escaped(#"a & b < c > d "e" 'f'"#) == "a &amp; b &lt; c &gt; d &quot;e&quot; &apos;f&apos;")
    #expect(SVGText.escaped("Polar H10 — 5A2B") == "Polar H10 — 5A2B")
  }

  @Test func replacesCharactersXMLForbids() {
    // Controls shown as the text surfaces show them; the two non-characters replaced.
    #expect(SVGText.escaped("a\u{0}b\u{1B}c\u{FFFE}d\u{FFFF}") == #"a\x00b\x1Bc"# + "\u{FFFD}d\u{FFFD}")
    #expect(SVGText.escaped("tab\tline\nreturn\r\u{9B}") == #"tab\tline\nreturn\r\u009B"#)
  }

  @Test func decimalsWithoutTrailingZeros() {
    #expect(SVGText.decimal(0.05, places: 2) == "0.05")
    #expect(SVGText.decimal(12.50, places: 1) == "12.5")
    #expect(SVGText.decimal(70, places: 1) == "70")
    #expect(SVGText.decimal(-0.04, places: 1) == "0")
    #expect(SVGText.decimal(-3.25, places: 1) == "-3.3" || SVGText.decimal(-3.25, places: 1) == "-3.2")
    #expect(SVGText.decimal(1e20, places: 0) == "1e+20")
  }

  @Test func coordinatesAreAlwaysNumbers() {
    #expect(SVGText.coordinate(.nan) == "0")
    #expect(SVGText.coordinate(.infinity) == "1000000")
    #expect(SVGText.coordinate(-1e300) == "-1000000")
    #expect(SVGText.coordinate(12.345) == "12.3")
  }

  @Test func truncationEndsWithAnEllipsis() {
    #expect(SVGText.truncated("abcdef", to: 4) == "abc…")
    #expect(SVGText.truncated("abcd", to: 4) == "abcd")
  }
}
