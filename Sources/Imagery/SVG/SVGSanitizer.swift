import Foundation

/// SVG made safe to pass on or to rasterise: nothing that runs, nothing fetched from elsewhere.
///
/// An SVG from anyone is a document: it can hold scripts, event handlers, HTML (`foreignObject`),
/// links to other documents, images, fonts and styles elsewhere, and a DTD whose entities read files
/// or expand without bound. What is kept is drawing only:
/// - elements that run or embed (`script`, `foreignObject`, `iframe`, `object`, `embed`, `form`,
///   `audio`, `video`, `handler`, `listener`) are dropped with everything inside them, and so are
///   animations that set a link (`<set attributeName="href" to="javascript:…">`);
/// - attributes that run (`on…`) or hold `javascript:` are dropped;
/// - a reference (`href`, `xlink:href`, CSS `url(…)`) stays only when it points inside the document
///   (`#id`) or, in an `<image>`, holds a raster image itself (`data:image/png`, `jpeg`, `gif`, `webp`);
///   a `<style>`'s `@import` rules are dropped; CSS (the rest of a `<style>`, or any attribute:
///   presentation attributes are CSS) that imports, points elsewhere, names a URL in a string
///   (`image-set("…")`) or holds an escape (`\75 rl(`) is dropped;
/// - comments, processing instructions and the DOCTYPE are dropped; a document that declares
///   entities is refused (their expansion is how files are read and memory exhausted), and so is one
///   that is not well-formed XML or whose root is not `svg`.
///
/// Stricter than imgproxy's sanitiser, which keeps `http(s)` references. The output is re-serialised
/// (attributes in name order), so one input always gives the same bytes.
public enum SVGSanitizer {
    /// `data` (UTF-8, or UTF-16 with a byte order mark) sanitised, as UTF-8 XML.
    /// - Throws: ``ImageDecodingError/corrupt(format:reason:)`` for a document that is refused.
    public static func sanitized(_ data: Data) throws -> Data {
        // UTF-8, or UTF-16 with its byte order mark, and said to be (the `svg` fuzz target found that one
        // byte that is not UTF-8 in a name made Foundation's XMLParser trap, before this reader replaced it).
        guard let text = Self.text(of: data) else {
            throw ImageDecodingError.corrupt(format: .svg, reason: "an SVG must be UTF-8 or UTF-16 text")
        }
        if text.contains("<!ENTITY") {
            throw ImageDecodingError.corrupt(format: .svg, reason: "an SVG that declares entities is refused")
        }
        let writer = Writer()
        var reader = XMLReader(text)
        do {
            try reader.read { writer.handle($0) }
        } catch {
            throw ImageDecodingError.corrupt(format: .svg, reason: "it is not well-formed XML: \(error.reason)")
        }
        if let failure = writer.failure { throw ImageDecodingError.corrupt(format: .svg, reason: failure) }
        return Data(writer.output.utf8)
    }

    /// The document's text: UTF-16 when it starts with UTF-16's byte order mark (either order), else
    /// UTF-8; `nil` when its bytes are not that, or when its XML declaration names another encoding
    /// (a UTF-16 file may say `UTF-16` or nothing; a UTF-8 file `UTF-8` or nothing).
    static func text(of data: Data) -> String? {
        let encoding: String.Encoding =
            data.starts(with: [0xFE, 0xFF])
            ? .utf16BigEndian : data.starts(with: [0xFF, 0xFE]) ? .utf16LittleEndian : .utf8
        let body = encoding == .utf8 ? data : data.dropFirst(2)
        guard body.count % (encoding == .utf8 ? 1 : 2) == 0, let text = String(data: body, encoding: encoding),
            let declared = declaredEncoding(text)
        else { return nil }
        let names = encoding == .utf8 ? ["", "utf-8", "utf8"] : ["", "utf-16", "utf16", "utf-16le", "utf-16be"]
        return names.contains(declared) ? text : nil
    }

    /// The encoding the XML declaration names, lower-cased; `""` when it names none or there is none;
    /// `nil` when its value cannot be read.
    static func declaredEncoding(_ text: String) -> String? {
        guard text.drop(while: { $0 == "\u{FEFF}" || $0.isWhitespace }).hasPrefix("<?xml") else { return "" }
        let declaration = text.prefix { $0 != ">" }.lowercased()
        guard let range = declaration.range(of: "encoding") else { return "" }
        let value = declaration[range.upperBound...].drop { $0 == " " || $0 == "=" || $0 == "\"" || $0 == "'" }
        let name = value.prefix { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }
        return name.isEmpty ? nil : String(name)
    }

    /// CSS without its `@import` rules (each to its `;`, quotes read, or to the end): a stylesheet that
    /// imports loses the import, not its other rules. Whatever is left is judged by ``isSafeStyle(_:)``.
    static func withoutImports(_ css: String) -> String {
        var result = ""
        var rest = css[...]
        while let start = rest.range(of: "@import", options: .caseInsensitive) {
            result += rest[..<start.lowerBound]
            var quote: Character?
            var index = start.upperBound
            while index < rest.endIndex {
                let character = rest[index]
                index = rest.index(after: index)
                if let open = quote {
                    if character == open { quote = nil }
                } else if character == "\"" || character == "'" {
                    quote = character
                } else if character == ";" {
                    break
                }
            }
            rest = rest[index...]
        }
        return result + rest
    }

    /// Elements dropped with all they hold.
    static let droppedElements: Set<String> = [
        "script", "foreignobject", "iframe", "object", "embed", "form", "audio", "video", "handler", "listener",
        "frame", "frameset",
    ]
    /// Animations, dropped when they set a reference.
    static let animations: Set<String> = ["set", "animate", "animatemotion", "animatetransform", "animatecolor"]
    /// Raster images an `<image>` may hold inline.
    static let inlineImages = [
        "data:image/png", "data:image/jpeg", "data:image/jpg", "data:image/gif", "data:image/webp",
    ]

    /// The local name of a qualified one (`xlink:href`: `href`), lower-cased.
    static func localName(_ name: String) -> String {
        (name.split(separator: ":").last.map(String.init) ?? name).lowercased()
    }

    /// `value` without whitespace or control characters, lower-cased (as browsers read a URL's scheme).
    static func squeezed(_ value: String) -> String {
        String(value.unicodeScalars.filter { $0.value > 0x20 && $0.value != 0x7F }.map(Character.init)).lowercased()
    }

    /// Whether a reference from `element` may stay.
    static func isSafeReference(_ value: String, in element: String) -> Bool {
        let target = squeezed(value)
        if target.isEmpty || target.hasPrefix("#") { return true }
        return (element == "image" || element == "feimage")
            && inlineImages.contains { target.hasPrefix($0 + ";") || target.hasPrefix($0 + ",") }
    }

    /// Functions that take a URL as a quoted string, not as `url(…)`: `image-set("…" 1x)` (and its
    /// `-webkit-` form), `image("…")`, `src("…")`.
    static let stringURLFunctions = ["image-set(", "image(", "src("]

    /// Whether CSS text references only the document itself (every `url(…)` a fragment) and imports nothing.
    /// CSS with an escape (`\`) is refused: an escape can spell `url(` or `@import` (`\75 rl(`, `@\69mport`)
    /// where no search for the words finds them.
    static func isSafeStyle(_ css: String) -> Bool {
        let text = squeezed(css)
        let refused = ["@import", "javascript:", "expression(", "\\"] + stringURLFunctions
        if refused.contains(where: { text.contains($0) }) { return false }
        var rest = text[...]
        while let open = rest.range(of: "url(") {
            let argument = rest[open.upperBound...].drop { $0 == "\"" || $0 == "'" }
            guard argument.hasPrefix("#") else { return false }
            rest = argument
        }
        return true
    }

    /// Text escaped for XML content or (`attribute`) a double-quoted attribute, so that a parser reads it
    /// back as it is: a carriage return (which a parser turns into a line feed) and, in an attribute, a
    /// line feed or tab (which a parser turns into a space) as character references.
    static func escaped(_ text: String, attribute: Bool = false) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "\r": result += "&#13;"
            case "\n" where attribute: result += "&#10;"
            case "\t" where attribute: result += "&#9;"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// Re-serialises what the reader reports, leaving out what is not safe.
    final class Writer {
        var output = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        var failure: String?
        private var sawRoot = false
        /// Depth inside a dropped element (0: not inside one).
        private var dropped = 0
        /// Open kept elements (local names), innermost last.
        private var open: [String] = []
        /// Text of the `<style>` element being read (written once its end shows whether it is safe).
        private var style: String?

        func handle(_ event: XMLReader.Event) {
            guard failure == nil else { return }
            switch event {
            case .start(let name, let attributes, _): start(name, attributes)
            case .end(let name): end(name)
            case .text(let text): characters(text)
            }
        }

        private func start(_ name: String, _ attributes: [(name: String, value: String)]) {
            let local = SVGSanitizer.localName(name)
            if !sawRoot {
                sawRoot = true
                guard local == "svg" else {
                    failure = "its root element is \(name), not svg"
                    return
                }
            }
            if dropped > 0 || SVGSanitizer.droppedElements.contains(local) || style != nil {
                dropped += 1
                return
            }
            if SVGSanitizer.animations.contains(local) {
                let target = SVGSanitizer.localName(
                    attributes.first { SVGSanitizer.localName($0.name) == "attributename" }?.value ?? "")
                if target == "href"
                    || attributes.contains(where: { SVGSanitizer.squeezed($0.value).contains("javascript:") })
                {
                    dropped += 1
                    return
                }
            }
            output += "<" + name
            for (key, value) in attributes.sorted(by: { $0.name < $1.name }) {
                let attribute = SVGSanitizer.localName(key)
                if attribute.hasPrefix("on") || SVGSanitizer.squeezed(value).contains("javascript:") { continue }
                if attribute == "href", !SVGSanitizer.isSafeReference(value, in: local) { continue }
                // Any attribute may be read as CSS (presentation attributes such as `fill` and `mask` are).
                if !SVGSanitizer.isSafeStyle(value) { continue }
                output += " \(key)=\"\(SVGSanitizer.escaped(value, attribute: true))\""
            }
            output += ">"
            open.append(local)
            if local == "style" { style = "" }
        }

        private func end(_ name: String) {
            if dropped > 0 {
                dropped -= 1
                return
            }
            if let css = (open.last == "style" ? style : nil).map(SVGSanitizer.withoutImports) {
                if SVGSanitizer.isSafeStyle(css) { output += SVGSanitizer.escaped(css) }
                style = nil
            }
            open.removeLast()
            output += "</\(name)>"
        }

        private func characters(_ string: String) {
            guard dropped == 0, !open.isEmpty else { return }
            if style != nil { style! += string } else { output += SVGSanitizer.escaped(string) }
        }
    }
}
