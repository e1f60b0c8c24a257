extension HeartRatePlot {
  /// Where things go, in pixels. Text widths are estimated (nothing is measured without a browser)
  /// from average glyph widths of DejaVu Sans, which is on the generous side of common sans fonts.
  struct Layout {
    /// A rectangle that one plot fills.
    struct Area {
      var left: Double
      var right: Double
      var top: Double
      var bottom: Double
      var width: Double { right - left }
      var height: Double { bottom - top }
    }

    static let tickFontSize = 11.0
    /// Width of a digit, in ems.
    static let digitWidth = 0.64
    static let panelTitleHeight = 28.0
    static let heartRatePlotHeight = 200.0
    static let plotGap = 14.0
    static let rrPlotHeight = 150.0
    /// Below the RR plot: tick labels and the axis title.
    static let timeAxisHeight = 42.0
    static let panelGap = 22.0
    /// Above the heart-rate plot, when a device has marks: rows of their labels.
    static let markRowHeight = 14.0
    static let markRows = 3
    static let markFontSize = 11.0

    let width: Double
    /// Room on the left for value tick labels and the rotated axis title.
    let plotLeft = 92.0
    /// Room on the right for half of the last time label.
    var plotRight: Double { width - 40 }
    var plotWidth: Double { plotRight - plotLeft }

    /// Estimated width of `text` in pixels.
    func textWidth(_ text: String, fontSize: Double, bold: Bool) -> Double {
      Double(text.count) * fontSize * (bold ? 0.68 : 0.6)
    }

    /// How many characters fit in `pixels`, for cutting long titles.
    func characters(fitting pixels: Double, fontSize: Double, bold: Bool) -> Int {
      Int(pixels / (fontSize * (bold ? 0.68 : 0.6)))
    }
  }
}
