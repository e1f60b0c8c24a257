extension HeartRatePlot {
  /// Colours, patterns and marker shapes, in one place so the legend and the plots agree.
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

    // MARK: Flagged values

    /// Where a marker sits: at its value, or at the plot's edge for a value beyond the axis.
    enum Placement { case inside, above, below }

    /// A flag's marker: a shape of its own and a colour of its own, so that it reads without colour too.
    struct FlagMarker {
      /// The class of the plots' marker paths (the legend's swatch has none: tests count markers by it).
      var className: String
      /// Fill and stroke.
      var paint: String
      /// The plots' marker paths' attributes.
      var attributes: String { #"class="\#(className)" \#(paint)"# }
      /// Path data of one marker centred at (x, y).
      var shape: (_ x: Double, _ y: Double, _ placement: Placement) -> String
      var colour: String
      /// The legend's words.
      var legend: String
    }

    static func flagMarker(_ flag: HeartRateFlags) -> FlagMarker? {
      func c(_ value: Double) -> String { SVGText.coordinate(value) }
      switch flag {
      case .bpmOutOfRange:
        // A triangle pointing the way the value lies (down for one below the axis).
        return FlagMarker(
          className: "flag-bpm-out-of-range", paint: ##"fill="#e65100" stroke="#7a2b00" stroke-width="0.8""##,
          shape: { x, y, placement in
            placement == .below
              ? "M\(c(x)) \(c(y + 5))l5 -9h-10z" : "M\(c(x)) \(c(y - 5))l5 9h-10z"
          }, colour: "#e65100", legend: "bpm out of range (30–220)")
      case .rrOutOfRange:
        return FlagMarker(
          className: "flag-rr-out-of-range", paint: ##"fill="#ffb300" stroke="#6d4c00" stroke-width="0.8""##,
          shape: { x, y, _ in "M\(c(x)) \(c(y - 5.5))l5 5.5 -5 5.5 -5 -5.5z" }, colour: "#b07800", legend: "RR out of range (250–2000 ms)")
      case .rrInconsistent:
        return FlagMarker(
          className: "flag-rr-inconsistent", paint: ##"fill="none" stroke="#d81b60" stroke-width="2.2""##,
          shape: { x, y, _ in "M\(c(x - 4)) \(c(y - 4))l8 8m0 -8l-8 8" }, colour: "#d81b60", legend: "RR inconsistent with bpm")
      case .energyBackwards:
        return FlagMarker(
          className: "flag-energy-backwards", paint: ##"fill="none" stroke="#212121" stroke-width="1.6""##,
          shape: { x, y, _ in "M\(c(x - 4)) \(c(y - 4))h8v8h-8z" }, colour: "#212121", legend: "energy expended went back")
      default:
        // No contact is shaded (contact-loss spans), not marked.
        return nil
      }
    }

    // MARK: Link events

    static func markColour(_ kind: LinkMarkKind) -> String {
      switch kind {
      case .connected: return "#00897b"
      case .disconnected: return "#b71c1c"
      case .subscribed, .unsubscribed: return "#6a1b9a"
      case .mtuExchanged: return "#455a64"
      case .parametersRequested, .parametersUpdated: return "#8d6e63"
      }
    }

    /// The line of a mark: its colour, and a dash of its own so kinds differ without colour too.
    static func markStroke(_ kind: LinkMarkKind) -> String {
      let dash: String
      switch kind {
      case .connected, .disconnected: dash = ""
      case .subscribed: dash = #" stroke-dasharray="5 2""#
      case .unsubscribed: dash = #" stroke-dasharray="1.5 2""#
      case .mtuExchanged: dash = #" stroke-dasharray="2 2""#
      case .parametersRequested: dash = #" stroke-dasharray="1.5 3""#
      case .parametersUpdated: dash = #" stroke-dasharray="7 3""#
      }
      // Crisp: a vertical line blurred over two pixel columns reads as a fainter colour.
      return #"stroke="\#(markColour(kind))" stroke-width="1.5"\#(dash) fill="none" shape-rendering="crispEdges""#
    }

    /// The legend's entries for link events: kinds that read as one.
    static let markLegend: [(label: String, kinds: [LinkMarkKind])] = [
      ("connected", [.connected]), ("disconnected", [.disconnected]), ("subscribed / unsubscribed", [.subscribed, .unsubscribed]),
      ("MTU exchange", [.mtuExchanged]), ("connection parameters", [.parametersUpdated, .parametersRequested]),
    ]

    /// A kind's name in class attributes ("mark-connected").
    static func markClass(_ kind: LinkMarkKind) -> String {
      switch kind {
      case .connected: return "mark-connected"
      case .disconnected: return "mark-disconnected"
      case .subscribed: return "mark-subscribed"
      case .unsubscribed: return "mark-unsubscribed"
      case .mtuExchanged: return "mark-mtu"
      case .parametersRequested: return "mark-parameters-requested"
      case .parametersUpdated: return "mark-parameters"
      }
    }
  }
}
