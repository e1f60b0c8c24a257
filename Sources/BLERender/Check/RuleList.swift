import BLEAnalysis

/// The rules `check` knows, as `help --rules` prints them (docs/check.md quotes it): id,
/// severity and requirement, then the clause and the gate.
package enum RuleList {
  package static func text() -> String {
    var text = ""
    for rule in ConformanceRule.all {
      text += rule.id + String(repeating: " ", count: max(9 - rule.id.count, 1))
      text += rule.severity.rawValue + String(repeating: " ", count: 9 - rule.severity.rawValue.count)
      text += rule.requirement + "\n"
      text += String(repeating: " ", count: 18) + rule.clause + "\n"
      text += String(repeating: " ", count: 18) + "gate: " + rule.gate + "\n"
    }
    return text
  }
}
