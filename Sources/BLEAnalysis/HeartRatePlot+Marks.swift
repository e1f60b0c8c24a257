extension HeartRatePlot {
  /// A label of marks that fall within a few pixels of each other, in one of the rows above the
  /// heart-rate plot: its parts (each kind's words) in time order.
  struct MarkLabel {
    var x: Double
    /// Written leftwards from `x` (no room on the right).
    var anchorEnd: Bool
    var row: Int
    /// Each part's kind and words.
    var parts: [(kind: LinkMarkKind, text: String)]
  }

  /// Marks closer than this (pixels) share a label.
  static let markClusterWidth = 4.0

  /// Groups the marks into labels and places each in the first row where it fits, starting at
  /// its mark (or ending there, near the right edge); a label that fits nowhere is split into
  /// its kinds' words, and those that fit nowhere either are left out, their events counted. The rows used (0 without marks) and the events not labelled.
  static func placeMarkLabels(_ marks: [LinkMark], timeAxis: AxisScale, layout: Layout)
    -> (labels: [MarkLabel], rows: Int, unlabelled: Int)
  {
    struct Part {
      var kind: LinkMarkKind
      var count: Int
      var detail: LinkMark.Detail
    }
    struct Cluster {
      var x: Double
      var parts: [Part]
      var total: Int
    }
    var clusters: [Cluster] = []
    for mark in marks.sorted(by: { ($0.start, $0.kind) < ($1.start, $1.kind) }) {
      let x = Swift.min(Swift.max(timeAxis.position(of: mark.start), layout.plotLeft), layout.plotRight)
      if let last = clusters.last, x - last.x <= markClusterWidth {
        let index = clusters.count - 1
        clusters[index].total = clusters[index].total.saturatingAdd(mark.count)
        if let part = clusters[index].parts.firstIndex(where: { $0.kind == mark.kind }) {
          clusters[index].parts[part].count = clusters[index].parts[part].count.saturatingAdd(mark.count)
          if clusters[index].parts[part].detail != mark.detail { clusters[index].parts[part].detail = .mixed }
        } else {
          clusters[index].parts.append(Part(kind: mark.kind, count: mark.count, detail: mark.detail))
        }
      } else {
        clusters.append(Cluster(x: x, parts: [Part(kind: mark.kind, count: mark.count, detail: mark.detail)], total: mark.count))
      }
    }
    func width(_ parts: [(kind: LinkMarkKind, text: String)]) -> Double {
      let characters = parts.reduce(0) { $0 + $1.text.count } + 3 * Swift.max(parts.count - 1, 0)
      return Double(characters) * Layout.markFontSize * 0.6
    }
    var rowEnds = [Double](repeating: -.infinity, count: Layout.markRows)
    var labels: [MarkLabel] = []
    var rows = 0
    /// Places `parts` at `x` in the first row with room; false when none has.
    func place(_ parts: [(kind: LinkMarkKind, text: String)], at x: Double) -> Bool {
      let labelWidth = width(parts)
      for row in 0..<Layout.markRows {
        let free = rowEnds[row] + 8
        if x + 3 >= free, x + 3 + labelWidth <= layout.plotRight {
          labels.append(MarkLabel(x: x + 3, anchorEnd: false, row: row, parts: parts))
          rowEnds[row] = x + 3 + labelWidth
        } else if x - 3 - labelWidth >= Swift.max(free, 4) {
          labels.append(MarkLabel(x: x - 3, anchorEnd: true, row: row, parts: parts))
          rowEnds[row] = x - 3
        } else {
          continue
        }
        rows = Swift.max(rows, row + 1)
        return true
      }
      return false
    }
    var unlabelled = 0
    for cluster in clusters {
      let parts: [(kind: LinkMarkKind, text: String)] = cluster.parts.map {
        ($0.kind, LinkMark.words(kind: $0.kind, detail: $0.detail, count: $0.count))
      }
      if place(parts, at: cluster.x) { continue }
      // No row has room for the whole label: each kind's words where they fit.
      for (index, part) in parts.enumerated() where parts.count == 1 || !place([part], at: cluster.x) {
        unlabelled = unlabelled.saturatingAdd(cluster.parts[index].count)
      }
    }
    // The lines need a row to start from even when no label fits.
    if rows == 0, !marks.isEmpty { rows = 1 }
    return (labels, rows, unlabelled)
  }

  /// Each kind's marks as vertical lines from the label rows to the bottom of the RR plot, marks
  /// that touch on screen as one line; where they span 2 pixels or more (events merged, a storm
  /// of reconnects), as a band in the label rows only, so a whole session of them does not hide
  /// the data. Then the labels, with a white halo so the lines they cross do not hide them.
  func drawMarks(
    into body: inout String, marks: [LinkMark], labels: [MarkLabel], timeAxis: AxisScale, stripTop: Double,
    stripBottom: Double, bottom: Double, layout: Layout
  ) {
    guard !marks.isEmpty else { return }
    // Connections and disconnections last, on top: events of one instant share a pixel column,
    // and these are the ones a dashed line must not hide.
    for kind in [LinkMarkKind.parametersRequested, .parametersUpdated, .mtuExchanged, .unsubscribed, .subscribed, .connected, .disconnected] {
      var runs: [(left: Double, right: Double)] = []
      for mark in marks where mark.kind == kind {
        let left = Swift.min(Swift.max(timeAxis.position(of: mark.start), layout.plotLeft), layout.plotRight)
        let right = Swift.min(Swift.max(timeAxis.position(of: mark.end), left), layout.plotRight)
        if let last = runs.last, left <= last.right + 1 {
          runs[runs.count - 1].right = Swift.max(last.right, right)
        } else {
          runs.append((left, right))
        }
      }
      var lines = ""
      for run in runs {
        if run.right - run.left >= 2 {
          let area = Layout.Area(left: run.left, right: run.right, top: stripTop, bottom: stripBottom)
          body += rectangle(
            area, attributes: #"class="\#(Style.markClass(kind))-band" fill="\#(Style.markColour(kind))" fill-opacity="0.15""#)
        } else {
          let x = SVGText.coordinate(run.left / 2 + run.right / 2)
          lines += "M\(x) \(SVGText.coordinate(stripTop))V\(SVGText.coordinate(bottom))"
        }
      }
      body += path(lines, attributes: #"class="\#(Style.markClass(kind))" \#(Style.markStroke(kind))"#)
    }
    guard !labels.isEmpty else { return }
    body += #"<g class="mark-labels" font-size="\#(Int(Layout.markFontSize))" fill="\#(Style.text)" "#
    body += #"stroke="white" stroke-width="3" stroke-linejoin="round" paint-order="stroke">"# + "\n"
    for label in labels {
      let y = stripTop + 11 + Double(label.row) * Layout.markRowHeight
      body += #"<text x="\#(SVGText.coordinate(label.x))" y="\#(SVGText.coordinate(y))""#
      body += label.anchorEnd ? #" text-anchor="end">"# : ">"
      for (index, part) in label.parts.enumerated() {
        if index > 0 { body += " · " }
        let colour = Style.markColour(part.kind)
        body += #"<tspan class="\#(Style.markClass(part.kind))" fill="\#(colour)">"#
        body += SVGText.escaped(part.text) + "</tspan>"
      }
      body += "</text>\n"
    }
    body += "</g>\n"
  }

  /// Flagged values as their flag's markers, one per pixel column and extreme; values beyond the
  /// axis sit at the plot's edge, and the first such of a spot is written beside it (`places`
  /// decimals), so a spike off the axis still shows what it was.
  func drawFlagged(
    into body: inout String, flagged: [FlaggedValues], area: Layout.Area, timeAxis: AxisScale, valueAxis: AxisScale,
    places: UInt8
  ) {
    var labels = ""
    var labelEnds = (above: -Double.infinity, below: -Double.infinity)
    var labelCount = 0
    for values in flagged.sorted(by: { $0.flag.rawValue < $1.flag.rawValue }) {
      guard let marker = Style.flagMarker(values.flag) else { continue }
      let columns = Self.stretches(of: values.values.buckets, brokenBy: [], timeAxis: timeAxis).joined()
      var data = ""
      for bucket in columns {
        let x = timeAxis.position(of: bucket.midpointTime)
        for value in bucket.minimum == bucket.maximum ? [bucket.minimum] : [bucket.minimum, bucket.maximum] {
          let placement: Style.Placement =
            value > valueAxis.upper ? .above : (value < valueAxis.lower ? .below : .inside)
          let y: Double
          switch placement {
          case .above: y = area.top + 7
          case .below: y = area.bottom - 7
          case .inside: y = Swift.min(Swift.max(valueAxis.position(of: value), area.top + 6), area.bottom - 6)
          }
          data += marker.shape(x, y, placement)
          // The value of a clipped marker beside it, where it does not run into the last one.
          guard placement != .inside, labelCount < 64 else { continue }
          let words = SVGText.decimal(value, places: places)
          let width = Double(words.count) * 10 * 0.6
          var left = x + 7
          var anchor = ""
          if left + width > area.right {
            left = x - 7 - width
            anchor = #" text-anchor="end""#
          }
          let lastEnd = placement == .above ? labelEnds.above : labelEnds.below
          guard left >= lastEnd + 4, left >= area.left else { continue }
          if placement == .above { labelEnds.above = left + width } else { labelEnds.below = left + width }
          labelCount += 1
          let textX = anchor.isEmpty ? left : left + width
          labels += text(words, x: textX, y: y + 4, attributes: #"fill="\#(marker.colour)"\#(anchor)"#)
        }
      }
      body += path(data, attributes: marker.attributes)
    }
    if !labels.isEmpty {
      body += #"<g class="clipped-values" font-size="10" font-weight="bold">"# + "\n" + labels + "</g>\n"
    }
  }
}
