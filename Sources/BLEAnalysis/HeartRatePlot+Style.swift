extension HeartRatePlot {
  /// Colours and the one pattern, in one place so the legend and the plots agree.
  enum Style {
    static let text = "#222222"
    static let mutedText = "#777777"
    static let frame = "#8c8c8c"
    static let grid = "#e6e6e6"
    static let plotBackground = "#fcfcfc"
    static let heartRateLine = "#1f5fa8"
    static let heartRateBandFill = ##"fill="#8fb8e6" fill-opacity="0.55""##
    static let heartRateIsolatedRange = "#8fb8e6"
    static let rrDotStroke = ##"stroke="#2e7d32" stroke-width="3.5" stroke-linecap="round""##
    static let rrRange = "#b5d9b7"
    static let dropoutFill = ##"fill="#e53935" fill-opacity="0.2""##
    static let contactLossFill = #"fill="url(#contact-loss-hatch)""#
    /// Diagonal amber stripes on pale yellow, told apart from the dropouts' flat red without colour.
    static let definitions = #"<defs><pattern id="contact-loss-hatch" width="8" height="8" "#
      + #"patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="8" height="8" "#
      + ##"fill="#fff3c4"/><path d="M0 0V8" stroke="#e8b020" stroke-width="3"/></pattern></defs>"## + "\n"
  }
}
