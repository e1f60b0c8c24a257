/// Heart rate and RR intervals over time as a self-contained SVG document (no scripts, no fonts
/// to fetch): one panel per device, stacked, each with heart rate above RR intervals on a time
/// axis shared by all panels, dropouts and losses of sensor contact shaded behind the data.
///
/// The document grows with the number of buckets in the series (at most one vertex per pixel
/// column of each unbroken stretch of data), never with the number of points they summarize, and
/// with the number of devices. Shaded spans that touch on screen are drawn as one rectangle.
public struct HeartRatePlot: Sendable {
  /// What is plotted for one device.
  public struct Device: Sendable {
    /// The panel's title, e.g. "D0:B1:ED:00:48:52 bledissect HR".
    public var label: String
    /// Heart rate in beats per minute.
    public var heartRate: DownsampledSeries
    /// RR intervals in milliseconds.
    public var rrIntervals: DownsampledSeries
    /// Where notifications stopped. The heart-rate line is broken across each.
    public var dropouts: [TimeSpan]
    /// Where the sensor reported no skin contact.
    public var contactLosses: [TimeSpan]

    public init(
      label: String, heartRate: DownsampledSeries, rrIntervals: DownsampledSeries, dropouts: [TimeSpan] = [],
      contactLosses: [TimeSpan] = []
    ) {
      self.label = label
      self.heartRate = heartRate
      self.rrIntervals = rrIntervals
      self.dropouts = dropouts
      self.contactLosses = contactLosses
    }

    var hasMeasurements: Bool { !heartRate.isEmpty || !rrIntervals.isEmpty }
  }

  public var title: String
  public var devices: [Device]
  /// Width of the document in pixels (at least 640).
  public var width: Int

  public init(title: String, devices: [Device], width: Int = 1200) {
    self.title = title
    self.devices = devices
    self.width = width
  }

  /// The SVG document.
  public func svg() -> String {
    let layout = Layout(width: Double(Swift.max(width, 640)))
    var body = ""
    let fittedTitle = SVGText.truncated(
      title, to: layout.characters(fitting: layout.width - 32, fontSize: 18, bold: true))
    body += text(fittedTitle, x: 16, y: 28, attributes: #"font-size="18" font-weight="bold""#)
    var top = drawLegend(into: &body, layout: layout, top: 44) + 8
    let timeAxis = sharedTimeAxis(layout: layout)
    if devices.isEmpty {
      top = drawEmptyPanel(into: &body, label: "", layout: layout, top: top)
    }
    for device in devices {
      if let timeAxis, device.hasMeasurements {
        top = drawPanel(into: &body, device: device, timeAxis: timeAxis, layout: layout, top: top)
      } else {
        top = drawEmptyPanel(into: &body, label: device.label, layout: layout, top: top)
      }
    }
    let width = SVGText.coordinate(layout.width)
    let height = SVGText.coordinate(top)
    var document = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
    document += #"<svg xmlns="http://www.w3.org/2000/svg" width="\#(width)" height="\#(height)" "#
    document += #"viewBox="0 0 \#(width) \#(height)" font-family="DejaVu Sans, Helvetica, Arial, sans-serif">"#
    document += "\n<title>" + SVGText.escaped(title) + "</title>\n"
    document += Style.definitions
    document += #"<rect width="100%" height="100%" fill="white"/>"# + "\n"
    document += body
    document += "</svg>\n"
    return document
  }

  /// The time axis of every panel: from the earliest to the latest point or span of any device
  /// that has measurements; nil when none has.
  private func sharedTimeAxis(layout: Layout) -> AxisScale? {
    var earliest = Double.infinity
    var latest = -Double.infinity
    for device in devices where device.hasMeasurements {
      for series in [device.heartRate, device.rrIntervals] {
        let buckets = series.buckets
        if let first = buckets.first, let last = buckets.last {
          earliest = Swift.min(earliest, first.earliestTime)
          latest = Swift.max(latest, last.latestTime)
        }
      }
      for span in Self.ordered(device.dropouts + device.contactLosses) {
        earliest = Swift.min(earliest, span.start)
        latest = Swift.max(latest, span.end)
      }
    }
    guard earliest <= latest else { return nil }
    return AxisScale.time(
      minimum: earliest, maximum: latest, pixelStart: layout.plotLeft, pixelEnd: layout.plotRight,
      characterWidth: Layout.digitWidth * Layout.tickFontSize)
  }

  /// `spans` with their ends in order, without those that have a NaN end, sorted by start.
  static func ordered(_ spans: [TimeSpan]) -> [TimeSpan] {
    spans.compactMap { span in
      guard !span.start.isNaN, !span.end.isNaN else { return nil }
      return TimeSpan(start: Swift.min(span.start, span.end), end: Swift.max(span.start, span.end))
    }.sorted { $0.start < $1.start }
  }

  /// The legend, wrapped onto as many rows as the width needs; returns the bottom of the last row.
  private func drawLegend(into body: inout String, layout: Layout, top: Double) -> Double {
    // Each swatch is drawn 22 × 12 pixels from its top-left corner.
    let items: [(label: String, swatch: (_ x: String, _ top: String, _ middle: String) -> String)] = [
      ("heart rate, mean", { x, _, middle in
        #"<path d="M\#(x) \#(middle)h22" stroke="\#(Style.heartRateLine)" stroke-width="2"/>"#
      }),
      ("heart rate, min–max", { x, top, _ in
        #"<rect x="\#(x)" y="\#(top)" width="22" height="12" \#(Style.heartRateBandFill)/>"#
      }),
      ("RR interval", { x, _, middle in
        #"<path d="M\#(x) \#(middle)m5 0h0m6 0h0m6 0h0" \#(Style.rrDotStroke)/>"#
      }),
      ("dropout (no notifications)", { x, top, _ in
        #"<rect x="\#(x)" y="\#(top)" width="22" height="12" \#(Style.dropoutFill)/>"#
      }),
      ("sensor contact lost", { x, top, _ in
        #"<rect x="\#(x)" y="\#(top)" width="22" height="12" \#(Style.contactLossFill)/>"#
      }),
    ]
    var x = layout.plotLeft
    var rowTop = top
    body += #"<g class="legend" font-size="12" fill="\#(Style.text)">"# + "\n"
    for item in items {
      let itemWidth = 22 + 6 + layout.textWidth(item.label, fontSize: 12, bold: false) + 22
      if x + itemWidth > layout.width - 8, x > layout.plotLeft {
        x = layout.plotLeft
        rowTop += 20
      }
      body += item.swatch(SVGText.coordinate(x), SVGText.coordinate(rowTop + 2), SVGText.coordinate(rowTop + 8))
      body += text(item.label, x: x + 28, y: rowTop + 12)
      x += itemWidth
    }
    body += "</g>\n"
    return rowTop + 16
  }

  /// A panel saying there is nothing to plot; returns its bottom.
  private func drawEmptyPanel(into body: inout String, label: String, layout: Layout, top: Double) -> Double {
    drawPanelTitle(into: &body, label: label, layout: layout, top: top)
    let box = Layout.Area(
      left: layout.plotLeft, right: layout.plotRight, top: top + Layout.panelTitleHeight,
      bottom: top + Layout.panelTitleHeight + 60)
    body += rectangle(box, attributes: #"class="empty" fill="\#(Style.plotBackground)" stroke="\#(Style.frame)""#)
    body += text(
      "no measurements", x: box.left + box.width / 2, y: box.top + 35,
      attributes: #"font-size="14" text-anchor="middle" fill="\#(Style.mutedText)""#)
    return box.bottom + Layout.panelGap
  }

  func drawPanelTitle(into body: inout String, label: String, layout: Layout, top: Double) {
    let fitted = SVGText.truncated(label, to: layout.characters(fitting: layout.plotWidth, fontSize: 14, bold: true))
    body += text(
      fitted, x: layout.plotLeft, y: top + 18,
      attributes: #"class="device-label" font-size="14" font-weight="bold" fill="\#(Style.text)""#)
  }

  /// A `<text>` element on a line of its own; `content` is escaped here, `attributes` are written as given.
  func text(_ content: String, x: Double, y: Double, attributes: String = "") -> String {
    let position = #"x="\#(SVGText.coordinate(x))" y="\#(SVGText.coordinate(y))""#
    return "<text \(position)\(attributes.isEmpty ? "" : " ")\(attributes)>\(SVGText.escaped(content))</text>\n"
  }

  /// A `<rect>` over `area` on a line of its own, with `attributes` as given.
  func rectangle(_ area: Layout.Area, attributes: String) -> String {
    let x = SVGText.coordinate(area.left)
    let y = SVGText.coordinate(area.top)
    let width = SVGText.coordinate(area.width)
    let height = SVGText.coordinate(area.height)
    return #"<rect x="\#(x)" y="\#(y)" width="\#(width)" height="\#(height)" \#(attributes)/>"# + "\n"
  }

  /// A `<path>` on a line of its own, or nothing when `data` is empty.
  func path(_ data: String, attributes: String) -> String {
    data.isEmpty ? "" : #"<path d="\#(data)" \#(attributes)/>"# + "\n"
  }
}
