/// Heart rate and RR intervals over time as a self-contained SVG document (no scripts, no fonts
/// to fetch): one panel per device, stacked, each with heart rate above RR intervals on a time
/// axis shared by all panels, dropouts and losses of sensor contact shaded behind the data,
/// flagged values as markers (clipped to the plot's edge when off its axis), and the links'
/// events (connection, disconnection, subscription, MTU, parameters) as labelled vertical marks.
///
/// The value axes cover plausible values only (`HeartRatePlausibility`): one 300 bpm spike does
/// not squash a session into the bottom of its plot.
///
/// The document grows with the number of buckets in the series (at most one vertex per pixel
/// column of each unbroken stretch of data), never with the number of points they summarize, and
/// with the number of devices. Shaded spans and marks that touch on screen are drawn as one.
package struct HeartRatePlot: Sendable {
  /// Values of one flag, kept as a series so that a million of them cost at most its buckets.
  package struct FlaggedValues: Sendable {
    package var flag: HeartRateFlags
    package var values: DownsampledSeries

    /// Flags drawn at the heart rate (the others at RR intervals, or shaded: no contact).
    package static let heartRateFlags: [HeartRateFlags] = [.bpmOutOfRange, .rrInconsistent, .energyBackwards]

    package init(flag: HeartRateFlags, values: DownsampledSeries = DownsampledSeries(capacity: 512, initialWidth: 1e-6)) {
      self.flag = flag
      self.values = values
    }
  }

  /// What is plotted for one device.
  package struct Device: Sendable {
    /// The panel's title, e.g. "bledissect HR (D0:B1:ED:00:48:52)".
    package var label: String
    /// Words after the title, in a lighter colour ("21 measurements").
    package var detail = ""
    /// Heart rate in beats per minute (plausible values: the axis is made from these).
    package var heartRate: DownsampledSeries
    /// RR intervals in milliseconds (plausible values).
    package var rrIntervals: DownsampledSeries
    /// Flagged heart rates and RR intervals, drawn as markers.
    package var flaggedHeartRate: [FlaggedValues] = []
    package var flaggedRRIntervals: [FlaggedValues] = []
    /// Where notifications stopped. The heart-rate line is broken across each.
    package var dropouts: [TimeSpan]
    /// Where the sensor reported no skin contact.
    package var contactLosses: [TimeSpan]
    /// Events of the device's links, in time order (`LinkTimeline`), bounded there.
    package var marks: [LinkMark] = []

    package init(
      label: String, heartRate: DownsampledSeries, rrIntervals: DownsampledSeries, dropouts: [TimeSpan] = [],
      contactLosses: [TimeSpan] = []
    ) {
      self.label = label
      self.heartRate = heartRate
      self.rrIntervals = rrIntervals
      self.dropouts = dropouts
      self.contactLosses = contactLosses
    }

    var hasMeasurements: Bool {
      !heartRate.isEmpty || !rrIntervals.isEmpty || (flaggedHeartRate + flaggedRRIntervals).contains { !$0.values.isEmpty }
    }

    /// Flags with at least one value.
    var presentFlags: HeartRateFlags {
      (flaggedHeartRate + flaggedRRIntervals).reduce(into: HeartRateFlags()) { if !$1.values.isEmpty { $0.insert($1.flag) } }
    }
  }

  package var title: String
  package var devices: [Device]
  /// Width of the document in pixels (at least 640).
  package var width: Int

  package init(title: String, devices: [Device], width: Int = 1200) {
    self.title = title
    self.devices = devices
    self.width = width
  }

  /// The SVG document.
  package func svg() -> String {
    let layout = Layout(width: Double(Swift.max(width, 640)))
    var body = ""
    let fittedTitle = SVGText.truncated(
      title, to: layout.characters(fitting: layout.width - 32, fontSize: 18, bold: true))
    body += text(fittedTitle, x: 16, y: 28, attributes: #"font-size="18" font-weight="bold""#)
    var top = drawLegend(into: &body, layout: layout, top: 44) + 8
    let timeAxis = sharedTimeAxis(layout: layout)
    if devices.isEmpty {
      top = drawEmptyPanel(into: &body, label: "", detail: "", layout: layout, top: top)
    }
    for device in devices {
      if let timeAxis, device.hasMeasurements {
        top = drawPanel(into: &body, device: device, timeAxis: timeAxis, layout: layout, top: top)
      } else {
        top = drawEmptyPanel(into: &body, label: device.label, detail: device.detail, layout: layout, top: top)
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
      let flagged = (device.flaggedHeartRate + device.flaggedRRIntervals).map(\.values)
      for series in [device.heartRate, device.rrIntervals] + flagged {
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
      // The links' events too: a connection or subscription before the first value is shown.
      for mark in device.marks where mark.start.isFinite && mark.end.isFinite {
        earliest = Swift.min(earliest, mark.start)
        latest = Swift.max(latest, mark.end)
      }
    }
    guard earliest <= latest else { return nil }
    // Times count from the capture's first frame: an axis that starts near it starts at it, so
    // 0 is a tick and the plot reads from the start of the capture.
    if earliest >= 0, earliest <= (latest - earliest) / 10 { earliest = 0 }
    // A few pixels inside the plot's frame at both ends: a mark at the first or last instant
    // (the connection, the disconnection) would otherwise lie under it. Pixels, not seconds:
    // the axis never reaches before the capture's first frame.
    let inset = devices.contains(where: { $0.hasMeasurements && !$0.marks.isEmpty }) ? 6.0 : 0
    return AxisScale.time(
      minimum: earliest, maximum: latest, pixelStart: layout.plotLeft + inset, pixelEnd: layout.plotRight - inset,
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
  /// Flags and link events have an entry only when some device has them.
  private func drawLegend(into body: inout String, layout: Layout, top: Double) -> Double {
    typealias Swatch = (_ x: Double, _ top: Double) -> String
    // Each swatch is drawn 22 × 12 pixels from its top-left corner.
    func c(_ value: Double) -> String { SVGText.coordinate(value) }
    var items: [(label: String, swatch: Swatch)] = [
      ("heart rate, mean", { x, top in
        #"<path d="M\#(c(x)) \#(c(top + 6))h22" stroke="\#(Style.heartRateLine)" stroke-width="2"/>"#
      }),
      ("heart rate, min–max", { x, top in
        #"<rect x="\#(c(x))" y="\#(c(top))" width="22" height="12" \#(Style.heartRateBandFill)/>"#
      }),
    ]
    // What no device shows has no entry.
    if devices.contains(where: { !$0.rrIntervals.buckets.isEmpty }) {
      items.append(("RR interval", { x, top in
        #"<path d="M\#(c(x)) \#(c(top + 6))m5 0h0m6 0h0m6 0h0" \#(Style.rrDotStroke)/>"#
      }))
    }
    if devices.contains(where: { !$0.dropouts.isEmpty }) {
      items.append(("dropout (no notifications)", { x, top in
        #"<rect x="\#(c(x))" y="\#(c(top))" width="22" height="12" \#(Style.dropoutFill)/>"#
      }))
    }
    if devices.contains(where: { !$0.contactLosses.isEmpty }) {
      items.append(("sensor contact lost", { x, top in
        #"<rect x="\#(c(x))" y="\#(c(top))" width="22" height="12" \#(Style.contactLossFill)/>"#
      }))
    }
    let flags = devices.reduce(into: HeartRateFlags()) { $0.formUnion($1.presentFlags) }
    for (flag, _) in HeartRateFlags.all where flags.contains(flag) {
      guard let marker = Style.flagMarker(flag) else { continue }
      items.append((marker.legend, { x, top in
        #"<path d="\#(marker.shape(x + 11, top + 6, .inside))" \#(marker.paint)/>"#
      }))
    }
    let kinds = Set(devices.flatMap { $0.marks.map(\.kind) })
    for entry in Style.markLegend where !kinds.isDisjoint(with: entry.kinds) {
      let stroke = Style.markStroke(entry.kinds[0])
      items.append((entry.label, { x, top in
        #"<path d="M\#(c(x + 11)) \#(c(top - 1))v14" \#(stroke)/>"#
      }))
    }
    var x = layout.plotLeft
    var rowTop = top
    body += #"<g class="legend" font-size="12" fill="\#(Style.text)">"# + "\n"
    for item in items {
      let itemWidth = 22 + 6 + layout.textWidth(item.label, fontSize: 12, bold: false) + 22
      if x + itemWidth > layout.width - 8, x > layout.plotLeft {
        x = layout.plotLeft
        rowTop += 20
      }
      body += item.swatch(x, rowTop + 2)
      body += text(item.label, x: x + 28, y: rowTop + 12)
      x += itemWidth
    }
    body += "</g>\n"
    return rowTop + 16
  }

  /// A panel saying there is nothing to plot; returns its bottom.
  private func drawEmptyPanel(into body: inout String, label: String, detail: String, layout: Layout, top: Double) -> Double {
    drawPanelTitle(into: &body, label: label, detail: detail, layout: layout, top: top)
    let box = Layout.Area(
      left: layout.plotLeft, right: layout.plotRight, top: top + Layout.panelTitleHeight,
      bottom: top + Layout.panelTitleHeight + 60)
    body += rectangle(box, attributes: #"class="empty" fill="\#(Style.plotBackground)" stroke="\#(Style.frame)""#)
    body += text(
      "no measurements", x: box.left + box.width / 2, y: box.top + 35,
      attributes: #"font-size="14" text-anchor="middle" fill="\#(Style.mutedText)""#)
    return box.bottom + Layout.panelGap
  }

  /// The device's name in bold, then `detail` in a lighter colour, both cut to the plot's width.
  func drawPanelTitle(into body: inout String, label: String, detail: String, layout: Layout, top: Double) {
    let fitted = SVGText.truncated(label, to: layout.characters(fitting: layout.plotWidth, fontSize: 14, bold: true))
    body += text(
      fitted, x: layout.plotLeft, y: top + 18,
      attributes: #"class="device-label" font-size="14" font-weight="bold" fill="\#(Style.text)""#)
    let detailLeft = layout.plotLeft + layout.textWidth(fitted, fontSize: 14, bold: true) + 10
    let room = layout.characters(fitting: layout.plotRight - detailLeft, fontSize: 12, bold: false)
    guard !detail.isEmpty, room >= 4 else { return }
    body += text(
      SVGText.truncated(detail, to: room), x: detailLeft, y: top + 18,
      attributes: #"class="device-detail" font-size="12" fill="\#(Style.mutedText)""#)
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
