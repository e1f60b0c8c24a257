/// An interval of time in seconds, such as a dropout (notifications stopped) or a loss of sensor
/// contact. Taken as given: a consumer orders the ends and skips spans with a NaN end.
public struct TimeSpan: Sendable, Equatable {
  public var start: Double
  public var end: Double

  public init(start: Double, end: Double) {
    self.start = start
    self.end = end
  }
}
