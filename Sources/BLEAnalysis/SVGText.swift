import BLECore

/// Text and numbers as they are written into SVG: XML-escaped, coordinates with one decimal.
enum SVGText {
  /// `text` safe inside an element or a quoted attribute (`Escaping`, XML style: the five
  /// specials as entities; control characters, which a device name may hold and XML 1.0
  /// forbids, shown as `\x1B`).
  static func escaped(_ text: String) -> String { Escaping.escaped(text, .xml) }

  /// `text` cut to at most `limit` characters, the last of them an ellipsis when it was cut.
  static func truncated(_ text: String, to limit: Int) -> String {
    guard text.count > limit else { return text }
    return String(text.prefix(Swift.max(limit - 1, 0))) + "…"
  }

  /// `value` with at most `places` decimals (trailing zeros dropped), or Swift's shortest form when
  /// that does not fit a fixed decimal (beyond about 9e18, or not finite).
  static func decimal(_ value: Double, places: UInt8) -> String {
    guard let fixed = FixedDecimal(value, places: places) else { return value.description }
    var text = fixed.negative ? "-" : ""
    text += String(fixed.whole)
    if fixed.digits > 0 {
      let fraction = String(fixed.fraction)
      text += "." + String(repeating: "0", count: fixed.digits - fraction.count) + fraction
    }
    return text
  }

  /// A pixel coordinate: one decimal is finer than any screen needs. Clamped far outside any
  /// drawing (NaN to 0), so a runaway value still yields a number.
  static func coordinate(_ value: Double) -> String {
    guard !value.isNaN else { return "0" }
    return decimal(Swift.min(Swift.max(value, -1e6), 1e6), places: 1)
  }
}
