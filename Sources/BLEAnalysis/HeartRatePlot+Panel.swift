extension HeartRatePlot {
  /// One device's panel: its label, the labels of its marks, heart rate above RR intervals, time
  /// labels below; returns its bottom.
  func drawPanel(into body: inout String, device: Device, timeAxis: AxisScale, layout: Layout, top: Double)
    -> Double
  {
    let placement = Self.placeMarkLabels(device.marks, timeAxis: timeAxis, layout: layout)
    var detail = device.detail
    if placement.unlabelled > 0 {
      let count = placement.unlabelled
      detail += (detail.isEmpty ? "" : " · ") + "\(count) event\(count == 1 ? "" : "s") not labelled (too close together)"
    }
    drawPanelTitle(into: &body, label: device.label, detail: detail, layout: layout, top: top)
    let stripTop = top + Layout.panelTitleHeight
    let stripHeight = placement.rows > 0 ? Double(placement.rows) * Layout.markRowHeight + 4 : 0
    let heartRateTop = stripTop + stripHeight
    let heartRateArea = Layout.Area(
      left: layout.plotLeft, right: layout.plotRight, top: heartRateTop,
      bottom: heartRateTop + Layout.heartRatePlotHeight)
    let rrTop = heartRateArea.bottom + Layout.plotGap
    let rrArea = Layout.Area(
      left: layout.plotLeft, right: layout.plotRight, top: rrTop, bottom: rrTop + Layout.rrPlotHeight)
    let dropouts = Self.ordered(device.dropouts)
    let contactLosses = Self.ordered(device.contactLosses)

    body += #"<g class="panel">"# + "\n"
    let heartRateBuckets = device.heartRate.buckets
    let heartRateAxis = Self.valueAxis(
      for: heartRateBuckets, flagged: device.flaggedHeartRate, plausible: HeartRatePlausibility.plausibleBPM, area: heartRateArea)
    let rrBuckets = device.rrIntervals.buckets
    let rrAxis = Self.valueAxis(
      for: rrBuckets, flagged: device.flaggedRRIntervals, plausible: HeartRatePlausibility.plausibleRRMilliseconds, area: rrArea)
    // Backgrounds and shading first, then the marks' lines across both plots, then the data on top.
    for (area, axis) in [(heartRateArea, heartRateAxis), (rrArea, rrAxis)] {
      drawBackground(into: &body, area: area, timeAxis: timeAxis, valueAxis: axis)
      drawSpans(into: &body, dropouts: dropouts, contactLosses: contactLosses, area: area, timeAxis: timeAxis)
    }
    drawMarks(
      into: &body, marks: device.marks, labels: placement.labels, timeAxis: timeAxis, stripTop: stripTop,
      stripBottom: heartRateTop, bottom: rrArea.bottom, layout: layout)
    if let heartRateAxis {
      let stretches = Self.stretches(of: heartRateBuckets, brokenBy: dropouts, timeAxis: timeAxis)
      drawHeartRate(into: &body, stretches: stretches, timeAxis: timeAxis, valueAxis: heartRateAxis)
      drawFlagged(
        into: &body, flagged: device.flaggedHeartRate, area: heartRateArea, timeAxis: timeAxis, valueAxis: heartRateAxis,
        places: 0)
    }
    drawFrame(
      into: &body, area: heartRateArea, valueAxis: heartRateAxis, title: "heart rate (bpm)",
      emptyNote: "no heart rate values")

    if let rrAxis {
      let columns = Self.stretches(of: rrBuckets, brokenBy: [], timeAxis: timeAxis).joined()
      drawRRIntervals(into: &body, buckets: Array(columns), timeAxis: timeAxis, valueAxis: rrAxis)
      drawFlagged(
        into: &body, flagged: device.flaggedRRIntervals, area: rrArea, timeAxis: timeAxis, valueAxis: rrAxis, places: 1)
    }
    drawFrame(into: &body, area: rrArea, valueAxis: rrAxis, title: "RR interval (ms)", emptyNote: "no RR intervals")
    drawTimeLabels(into: &body, area: rrArea, timeAxis: timeAxis, layout: layout)
    body += "</g>\n"
    return rrArea.bottom + Layout.timeAxisHeight + Layout.panelGap
  }

  /// The buckets cut into stretches where a dropout lies between two of them (a line must not
  /// bridge a gap), and merged where they fall into the same pixel column, so the drawing has at
  /// most one vertex per column of each stretch; a stretch under 6 pixels wide becomes one bucket.
  /// `dropouts` are ordered (`ordered(_:)`).
  static func stretches(
    of buckets: [DownsampledSeries.Bucket], brokenBy dropouts: [TimeSpan], timeAxis: AxisScale
  ) -> [[DownsampledSeries.Bucket]] {
    var stretches: [[DownsampledSeries.Bucket]] = []
    var current: [DownsampledSeries.Bucket] = []
    var currentColumn = 0
    // Gaps come in time order, so dropouts that end before one cannot reach the next.
    var dropoutIndex = 0
    for bucket in buckets {
      if let previous = current.last {
        while dropoutIndex < dropouts.count, dropouts[dropoutIndex].end <= previous.latestTime {
          dropoutIndex += 1
        }
        if dropoutIndex < dropouts.count, dropouts[dropoutIndex].start < bucket.earliestTime {
          stretches.append(current)
          current = []
        }
      }
      let column = Int(Swift.min(Swift.max(timeAxis.position(of: bucket.midpointTime), -1e9), 1e9).rounded(.down))
      if !current.isEmpty, column == currentColumn {
        current[current.count - 1].merge(bucket)
      } else {
        current.append(bucket)
        currentColumn = column
      }
    }
    if !current.isEmpty { stretches.append(current) }
    // A stretch a few pixels wide would be a stub of line: drawn as one bucket, a dot and a bar.
    return stretches.map { stretch in
      guard stretch.count > 1, let first = stretch.first, let last = stretch.last,
        timeAxis.position(of: last.midpointTime) - timeAxis.position(of: first.midpointTime) < 6
      else { return stretch }
      return [stretch.dropFirst().reduce(into: first) { $0.merge($1) }]
    }
  }

  /// A value axis over the buckets' range and the flagged values that are plausible (inside
  /// `plausible`), bottom to top of `area`: implausible values do not stretch it, and are drawn
  /// at its edge. Over all flagged values when nothing else is there; nil without any value.
  static func valueAxis(
    for buckets: [DownsampledSeries.Bucket], flagged: [FlaggedValues], plausible: ClosedRange<Double>, area: Layout.Area
  ) -> AxisScale? {
    var lowest = Double.infinity
    var highest = -Double.infinity
    for bucket in buckets {
      lowest = Swift.min(lowest, bucket.minimum)
      highest = Swift.max(highest, bucket.maximum)
    }
    let flaggedBuckets = flagged.flatMap(\.values.buckets)
    for bucket in flaggedBuckets {
      for value in [bucket.minimum, bucket.maximum] where plausible.contains(value) {
        lowest = Swift.min(lowest, value)
        highest = Swift.max(highest, value)
      }
    }
    if lowest > highest {
      for bucket in flaggedBuckets {
        lowest = Swift.min(lowest, bucket.minimum)
        highest = Swift.max(highest, bucket.maximum)
      }
    }
    guard lowest <= highest else { return nil }
    return AxisScale.values(minimum: lowest, maximum: highest, pixelStart: area.bottom, pixelEnd: area.top)
  }

  /// The plot's background and grid lines at the ticks.
  private func drawBackground(into body: inout String, area: Layout.Area, timeAxis: AxisScale, valueAxis: AxisScale?) {
    body += rectangle(area, attributes: #"class="plot-background" fill="\#(Style.plotBackground)""#)
    var grid = ""
    for tick in timeAxis.ticks {
      let x = timeAxis.position(of: tick)
      guard x >= area.left, x <= area.right else { continue }
      grid += "M\(SVGText.coordinate(x)) \(SVGText.coordinate(area.top))V\(SVGText.coordinate(area.bottom))"
    }
    if let valueAxis {
      for tick in valueAxis.ticks {
        let y = SVGText.coordinate(valueAxis.position(of: tick))
        grid += "M\(SVGText.coordinate(area.left)) \(y)H\(SVGText.coordinate(area.right))"
      }
    }
    body += path(grid, attributes: #"class="grid" stroke="\#(Style.grid)" stroke-width="1" fill="none""#)
  }

  /// Dropouts and losses of contact as rectangles over the plot's height; spans that touch once on
  /// screen become one, and a span narrower than 2 pixels is widened to 2 so it stays visible.
  private func drawSpans(
    into body: inout String, dropouts: [TimeSpan], contactLosses: [TimeSpan], area: Layout.Area, timeAxis: AxisScale
  ) {
    for (spans, attributes, labelled) in [
      (contactLosses, #"class="contact-loss" \#(Style.contactLossFill)"#, false),
      (dropouts, #"class="dropout" \#(Style.dropoutFill)"#, true),
    ] {
      var rectangles: [Layout.Area] = []
      // Merged bands keep the seconds they cover (a dropout's band is labelled with them).
      var seconds: [Double] = []
      for span in spans where span.end >= timeAxis.lower && span.start <= timeAxis.upper {
        var left = Swift.max(timeAxis.position(of: span.start), area.left)
        var right = Swift.min(timeAxis.position(of: span.end), area.right)
        if right - left < 2 {
          let middle = (left + right) / 2
          left = Swift.max(middle - 1, area.left)
          right = Swift.min(middle + 1, area.right)
        }
        if let last = rectangles.last, left <= last.right {
          rectangles[rectangles.count - 1].right = Swift.max(last.right, right)
          seconds[seconds.count - 1] += span.end - span.start
        } else {
          rectangles.append(Layout.Area(left: left, right: right, top: area.top, bottom: area.bottom))
          seconds.append(span.end - span.start)
        }
      }
      for (rectangle, duration) in zip(rectangles, seconds) {
        body += self.rectangle(rectangle, attributes: attributes)
        // A dropout says how long it lasted, where its band is wide enough for the words.
        let words = SVGText.decimal(duration, places: duration < 10 ? 1 : 0) + " s"
        if labelled, duration.isFinite, rectangle.right - rectangle.left >= Layout.digitWidth * 11 * Double(words.count) + 4 {
          body += text(words, x: (rectangle.left + rectangle.right) / 2, y: area.top + 12,
            attributes: #"class="dropout-duration" font-size="11" text-anchor="middle" fill="\#(Style.mutedText)""#)
        }
      }
    }
  }

  /// Stretches of two or more buckets: a band from minimum to maximum and a line through the
  /// means, with a dot at each mean where they are sparse (8 pixels apart or more). A bucket
  /// standing alone: a dot at its mean and a bar over its range.
  private func drawHeartRate(
    into body: inout String, stretches: [[DownsampledSeries.Bucket]], timeAxis: AxisScale, valueAxis: AxisScale
  ) {
    func point(_ time: Double, _ value: Double) -> String {
      SVGText.coordinate(timeAxis.position(of: time)) + " " + SVGText.coordinate(valueAxis.position(of: value))
    }
    var band = ""
    var line = ""
    var isolatedRanges = ""
    var dots = ""
    for stretch in stretches {
      guard let first = stretch.first, let last = stretch.last else { continue }
      if stretch.count == 1 {
        if first.maximum > first.minimum {
          isolatedRanges += "M" + point(first.midpointTime, first.maximum)
          isolatedRanges += "V" + SVGText.coordinate(valueAxis.position(of: first.minimum))
        }
        dots += "M" + point(first.midpointTime, Self.plottedMean(first)) + "h0"
        continue
      }
      band += "M" + stretch.map { point($0.midpointTime, $0.maximum) }.joined(separator: " ")
      band += "L" + stretch.reversed().map { point($0.midpointTime, $0.minimum) }.joined(separator: " ") + "Z"
      let means = stretch.map { point($0.midpointTime, Self.plottedMean($0)) }
      line += "M" + means[0] + "L" + means.dropFirst().joined(separator: " ")
      let width = timeAxis.position(of: last.midpointTime) - timeAxis.position(of: first.midpointTime)
      if width / Double(stretch.count - 1) >= 8 {
        dots += means.map { "M" + $0 + "h0" }.joined()
      }
    }
    body += path(band, attributes: #"class="heart-rate-range" \#(Style.heartRateBandFill) stroke="none""#)
    body += path(
      line,
      attributes: #"class="heart-rate" fill="none" stroke="\#(Style.heartRateLine)" stroke-width="1.6" "#
        + #"stroke-linejoin="round""#)
    body += path(
      isolatedRanges,
      attributes: #"class="heart-rate-range" stroke="\#(Style.heartRateIsolatedRange)" stroke-width="4""#)
    body += path(
      dots,
      attributes: #"class="heart-rate" stroke="\#(Style.heartRateLine)" stroke-width="5" stroke-linecap="round""#)
  }

  /// A dot at each bucket's mean, and a thin bar over its range where it has one.
  private func drawRRIntervals(
    into body: inout String, buckets: [DownsampledSeries.Bucket], timeAxis: AxisScale, valueAxis: AxisScale
  ) {
    var ranges = ""
    var dots = ""
    for bucket in buckets {
      let x = SVGText.coordinate(timeAxis.position(of: bucket.midpointTime))
      if bucket.maximum > bucket.minimum {
        ranges += "M\(x) \(SVGText.coordinate(valueAxis.position(of: bucket.maximum)))"
        ranges += "V\(SVGText.coordinate(valueAxis.position(of: bucket.minimum)))"
      }
      dots += "M\(x) \(SVGText.coordinate(valueAxis.position(of: Self.plottedMean(bucket))))h0"
    }
    body += path(ranges, attributes: #"class="rr-range" stroke="\#(Style.rrRange)" stroke-width="1.5""#)
    body += path(dots, attributes: #"class="rr" \#(Style.rrDotStroke)"#)
  }

  /// The border, value tick labels and the rotated axis title; a note in the middle when empty.
  private func drawFrame(
    into body: inout String, area: Layout.Area, valueAxis: AxisScale?, title: String, emptyNote: String
  ) {
    body += rectangle(area, attributes: #"class="frame" fill="none" stroke="\#(Style.frame)""#)
    let middle = (area.top + area.bottom) / 2
    guard let valueAxis else {
      body += text(
        emptyNote, x: area.left + area.width / 2, y: middle + 5,
        attributes: #"font-size="13" text-anchor="middle" fill="\#(Style.mutedText)""#)
      return
    }
    var marks = ""
    body += #"<g class="value-labels" font-size="\#(Int(Layout.tickFontSize))" text-anchor="end" "#
    body += #"fill="\#(Style.text)">"# + "\n"
    for tick in valueAxis.ticks {
      let y = valueAxis.position(of: tick)
      marks += "M\(SVGText.coordinate(area.left)) \(SVGText.coordinate(y))h-4"
      body += text(valueAxis.label(of: tick), x: area.left - 7, y: y + 4)
    }
    body += "</g>\n"
    body += path(marks, attributes: #"class="tick-marks" stroke="\#(Style.frame)""#)
    body += #"<text class="axis-title" transform="translate(20 \#(SVGText.coordinate(middle))) rotate(-90)" "#
    body += #"font-size="12" text-anchor="middle" fill="\#(Style.text)">\#(SVGText.escaped(title))</text>"# + "\n"
  }

  /// Tick labels under `area` (kept inside the document at its edges) and the axis title.
  private func drawTimeLabels(into body: inout String, area: Layout.Area, timeAxis: AxisScale, layout: Layout) {
    var marks = ""
    body += #"<g class="time-labels" font-size="\#(Int(Layout.tickFontSize))" text-anchor="middle" "#
    body += #"fill="\#(Style.text)">"# + "\n"
    for tick in timeAxis.ticks {
      let x = timeAxis.position(of: tick)
      guard x >= area.left - 0.5, x <= area.right + 0.5 else { continue }
      marks += "M\(SVGText.coordinate(x)) \(SVGText.coordinate(area.bottom))v4"
      let label = timeAxis.label(of: tick)
      let halfWidth = Double(label.count) * Layout.digitWidth * Layout.tickFontSize / 2
      body += text(label, x: Swift.min(Swift.max(x, halfWidth + 2), layout.width - halfWidth - 2), y: area.bottom + 16)
    }
    body += "</g>\n"
    body += path(marks, attributes: #"class="tick-marks" stroke="\#(Style.frame)""#)
    body += text(
      "time (s)", x: area.left + area.width / 2, y: area.bottom + 36,
      attributes: #"class="axis-title" font-size="12" text-anchor="middle" fill="\#(Style.text)""#)
  }

  /// The bucket's mean, kept within its range: an overflowed sum gives an infinite or NaN mean.
  static func plottedMean(_ bucket: DownsampledSeries.Bucket) -> Double {
    let mean = bucket.mean
    guard !mean.isNaN else { return bucket.minimum / 2 + bucket.maximum / 2 }
    return Swift.min(Swift.max(mean, bucket.minimum), bucket.maximum)
  }
}
