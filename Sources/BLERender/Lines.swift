/// Lines of text with aligned tables.
package struct Lines {
  package var text = ""

  package init() {}

  package mutating func line(_ line: String) { text += line + "\n" }
  package mutating func blank() { text += "\n" }

  /// Columns padded to their widest cell (in characters); the last column is not padded.
  package mutating func table(_ table: Table, rightAligned: Set<Int> = []) {
    var widths = table.minimumWidths
    for row in table.rows {
      for (column, cell) in row.enumerated() {
        if column >= widths.count { widths.append(0) }
        widths[column] = max(widths[column], cell.count)
      }
    }
    for row in table.rows {
      var line = ""
      for (column, cell) in row.enumerated() {
        let pad = String(repeating: " ", count: widths[column] - cell.count)
        let last = column == row.count - 1
        if column > 0 { line += "  " }
        if rightAligned.contains(column) { line += pad + cell } else { line += last ? cell : cell + pad }
      }
      while line.hasSuffix(" ") { line.removeLast() }
      text += line + "\n"
    }
  }
}

package struct Table {
  package var rows: [[String]] = []
  /// Columns at least this wide: key–value sections of a block line up with each other.
  package var minimumWidths: [Int] = []

  package init(rows: [[String]] = [], minimumWidths: [Int] = []) {
    self.rows = rows
    self.minimumWidths = minimumWidths
  }
  package mutating func add(_ row: [String]) { rows.append(row) }
}
