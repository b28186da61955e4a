import Foundation
import Imagery

/// The SVG sanitiser (``SVGSanitizer``, with its own XML reader): any bytes. What it keeps holds
/// nothing that runs or points out of the document, and is kept as it is when sanitised again (so it
/// is also well-formed: it is read back).
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
        try require(
            !text.contains("<script") && !text.contains("<foreignobject") && !text.contains("<!entity"),
            "something that runs survived: \(text)")
        // Every attribute written is ` name="value"`: no handler, no javascript:, references only within the
        // document (text may say anything: it is no link).
        var rest = text[...]
        while let equals = rest.range(of: "=\"") {
            let name =
                rest[..<equals.lowerBound].split(whereSeparator: { $0 == " " || $0 == "<" }).last.map(String.init) ?? ""
            // The value as a browser reads a URL: character references of whitespace and all whitespace and controls gone.
            let written = rest[equals.upperBound...].prefix { $0 != "\"" }
            let value = written.replacingOccurrences(of: "&#9;", with: "").replacingOccurrences(of: "&#10;", with: "")
                .replacingOccurrences(of: "&#13;", with: "").unicodeScalars.filter {
                    $0.value > 0x20 && $0.value != 0x7F
                }.map(String.init).joined()
            let local = name.split(separator: ":").last.map(String.init) ?? name
            try require(!local.hasPrefix("on"), "an event handler \(name) survived: \(text)")
            try require(!value.contains("javascript:"), "javascript: survived in \(name): \(text)")
            if local == "href" {
                try require(
                    value.isEmpty || value.hasPrefix("#") || value.hasPrefix("data:image/"),
                    "a reference out of the document: \(value)")
            }
            rest = rest[equals.upperBound...].drop { $0 != "\"" }.dropFirst()
        }
        let again: Data
        do {
            again = try SVGSanitizer.sanitized(clean)
        } catch {
            throw FuzzFailure("the sanitised SVG was refused when read again: \(error)")
        }
        try require(again == clean, "sanitising twice changed the document: \(text)")
    }
}
