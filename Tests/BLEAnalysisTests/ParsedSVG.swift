import Foundation

#if canImport(FoundationXML)
  import FoundationXML  // XMLParser on Linux
#endif

/// An SVG document read back with Foundation's XML parser: nil when it is not well-formed XML.
struct ParsedSVG {
  struct Element {
    var name: String
    var attributes: [String: String]
    /// Character data directly inside the element, entities resolved.
    var text: String
    /// Names of the enclosing elements, outermost first.
    var ancestors: [String]
    /// `class` attributes of the enclosing elements.
    var ancestorClasses: [String]

    func number(_ attribute: String) -> Double? { attributes[attribute].flatMap(Double.init) }
  }

  var elements: [Element]

  init?(_ svg: String) {
    let collector = Collector()
    let parser = XMLParser(data: Data(svg.utf8))
    parser.delegate = collector
    guard parser.parse() else { return nil }
    elements = collector.elements
  }

  func all(_ name: String, class className: String? = nil) -> [Element] {
    elements.filter { $0.name == name && (className == nil || $0.attributes["class"] == className) }
  }

  /// Text of the `<text>` elements inside a `<g>` of class `group`.
  func texts(inGroup group: String) -> [String] {
    all("text").filter { $0.ancestorClasses.contains(group) }.map(\.text)
  }

  private final class Collector: NSObject, XMLParserDelegate {
    var elements: [Element] = []
    var open: [Int] = []

    func parser(
      _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
      attributes: [String: String]
    ) {
      let ancestors = open.map { elements[$0] }
      elements.append(
        Element(
          name: name, attributes: attributes, text: "", ancestors: ancestors.map(\.name),
          ancestorClasses: ancestors.compactMap { $0.attributes["class"] }))
      open.append(elements.count - 1)
    }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
      open.removeLast()
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
      if let current = open.last { elements[current].text += string }
    }
  }
}
