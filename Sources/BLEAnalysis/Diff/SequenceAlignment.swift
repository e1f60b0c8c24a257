/// A global alignment of two sequences (Needleman–Wunsch): each pair is an element of A, of
/// B, or of both. Steps that are the same step score highest, the same step with another
/// outcome less; different steps are never paired (each becomes a gap), so an inserted,
/// missing or failed step shows where B departs from A.
public enum SequenceAlignment {
  public struct Pair: Sendable, Equatable {
    public var a: Int?
    public var b: Int?
    public init(a: Int?, b: Int?) {
      self.a = a
      self.b = b
    }
  }

  /// Elements aligned at most (the table is `count(A) × count(B)`): longer sequences are
  /// aligned by their first `maximumLength` elements and the rest paired in order.
  public static let maximumLength = 2048

  /// `similar(a, b)`: nil when the elements are not the same step, else whether they match
  /// entirely.
  public static func align<T>(_ a: [T], _ b: [T], similar: (T, T) -> Bool?) -> [Pair] {
    let n = min(a.count, maximumLength)
    let m = min(b.count, maximumLength)
    let gap = -1
    let changed = 1
    let same = 3
    // Scores row by row; directions kept for the trace back (0 diagonal, 1 up = A only, 2 left = B only).
    var previous = [Int](repeating: 0, count: m + 1)
    for j in 0...m { previous[j] = j * gap }
    var directions = [UInt8](repeating: 0, count: (n + 1) * (m + 1))
    for j in 1..<(m + 1) { directions[j] = 2 }
    for i in 1..<(n + 1) {
      var current = [Int](repeating: 0, count: m + 1)
      current[0] = i * gap
      directions[i * (m + 1)] = 1
      for j in 1..<(m + 1) {
        var best = previous[j] + gap
        var direction: UInt8 = 1
        if current[j - 1] + gap > best {
          best = current[j - 1] + gap
          direction = 2
        }
        if let match = similar(a[i - 1], b[j - 1]) {
          let diagonal = previous[j - 1] + (match ? same : changed)
          if diagonal >= best {
            best = diagonal
            direction = 0
          }
        }
        current[j] = best
        directions[i * (m + 1) + j] = direction
      }
      previous = current
    }
    var pairs: [Pair] = []
    var i = n
    var j = m
    while i > 0 || j > 0 {
      switch directions[i * (m + 1) + j] {
      case 0:
        pairs.append(Pair(a: i - 1, b: j - 1))
        i -= 1
        j -= 1
      case 1:
        pairs.append(Pair(a: i - 1, b: nil))
        i -= 1
      default:
        pairs.append(Pair(a: nil, b: j - 1))
        j -= 1
      }
    }
    pairs.reverse()
    // Past the aligned part: in order.
    var restA = n
    var restB = m
    while restA < a.count || restB < b.count {
      pairs.append(Pair(a: restA < a.count ? restA : nil, b: restB < b.count ? restB : nil))
      restA += 1
      restB += 1
    }
    return pairs
  }
}
