import BLECore

/// The diagnostic catalogue as `help --diagnostics` prints it: one line per code, by layer in
/// the pipeline's order, with its severity and meaning.
package enum DiagnosticList {
  package static func text() -> String {
    let width = DiagnosticKind.all.map(\.code.count).max() ?? 0
    var text = ""
    for kind in DiagnosticKind.all {
      text += kind.code + String(repeating: " ", count: width - kind.code.count + 2)
      text += kind.severity.rawValue + String(repeating: " ", count: 9 - kind.severity.rawValue.count)
      text += kind.meaning + "\n"
    }
    return text
  }
}
