/// RMSSD of a stream of RR intervals (ms): the root mean square of the differences between
/// successive values, in constant memory.
///
/// A stream can be cut into runs: `reset()` marks a break (a dropout, a new connection), after which
/// the next value starts a new run, so no difference spans two beats that were not successive. The
/// differences of all runs are pooled into one RMSSD.
package struct SuccessiveDifferences: Sendable, Equatable {
  /// Differences taken so far, over all runs.
  package private(set) var differenceCount = 0
  /// Non-finite values passed to `add`, each of which also broke the run.
  package private(set) var ignoredCount = 0
  /// The last value of the current run; nil at the start of a run.
  private var previous: Double?
  private var sumOfSquaredDifferences = 0.0

  package init() {}

  /// Appends `x` to the current run. A NaN or infinite value is not counted and breaks the run as
  /// `reset()` does: it stands for a beat that was not measured, so its neighbours are not successive.
  package mutating func add(_ x: Double) {
    guard x.isFinite else {
      ignoredCount += 1
      reset()
      return
    }
    if let previous {
      let difference = x - previous
      sumOfSquaredDifferences += difference * difference
      differenceCount += 1
    }
    previous = x
  }

  /// Ends the current run: the next value starts a new one. Differences already taken are kept.
  package mutating func reset() {
    previous = nil
  }

  /// Root mean square of the successive differences; nil until some run has 2 values. Infinite
  /// when the differences are too large to square (beyond about 1e154), never a trap.
  package var rmssd: Double? {
    guard differenceCount > 0 else { return nil }
    return (sumOfSquaredDifferences / Double(differenceCount)).squareRoot()
  }
}
