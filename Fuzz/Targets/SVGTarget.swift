import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Imagery

/// The SVG sanitiser (``SVGSanitizer``): any bytes. What it keeps is well-formed XML with an `svg` root,
/// holds nothing that runs or points out of the document, and is kept as it is when sanitised again.
enum SVGTarget {
    static func run(_ bytes: [UInt8]) throws(FuzzFailure) {
        let clean: Data
        do {
            clean = try SVGSanitizer.sanitized(Data(bytes))
        } catch {
            try require(error is ImageDecodingError, "the sanitiser threw \(type(of: error)), not ImageDecodingError")
            return
        }
        let text = String(decoding: clean, as: UTF8.self).lowercased()
        try require(!text.contains("<script") && !text.contains("<foreignobject") && !text.contains("<!entity"), "something that runs survived: \(text)")
        try require(!text.replacingOccurrences(of: " ", with: "").contains("javascript:"), "javascript: survived: \(text)")
        let checker = Checker()
        let parser = XMLParser(data: clean)
        parser.delegate = checker
        try require(parser.parse(), "the sanitised SVG is not well-formed: \(text)")
        if let problem = checker.problem { throw FuzzFailure("\(problem) in \(text)") }
        let again: Data
        do {
            again = try SVGSanitizer.sanitized(clean)
        } catch {
            throw FuzzFailure("the sanitised SVG was refused when sanitised again: \(error)")
        }
        try require(again == clean, "sanitising twice changed the document")
    }

    /// Looks at every element of a sanitised document for what must not be there.
    final class Checker: NSObject, XMLParserDelegate {
        var problem: String?

        func parser(
            _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]
        ) {
            for (key, value) in attributes {
                let local = (key.split(separator: ":").last.map(String.init) ?? key).lowercased()
                if local.hasPrefix("on") { problem = problem ?? "an event handler \(key) on \(name)" }
                let target = value.unicodeScalars.filter { $0.value > 0x20 }.map(String.init).joined().lowercased()
                if local == "href", !(target.isEmpty || target.hasPrefix("#") || target.hasPrefix("data:image/")) {
                    problem = problem ?? "a reference out of the document: \(key)=\(value) on \(name)"
                }
            }
        }
    }
}
