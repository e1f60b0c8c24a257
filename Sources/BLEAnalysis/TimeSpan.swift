/// An interval of time in seconds, such as a dropout (notifications stopped) or a loss of sensor
/// contact. Taken as given: a consumer orders the ends and skips spans with a NaN end.
package struct TimeSpan: Sendable, Equatable {
  package var start: Double
  package var end: Double

  package init(start: Double, end: Double) {
    self.start = start
    self.end = end
  }
}
