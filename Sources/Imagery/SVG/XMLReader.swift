import Foundation

/// A strict, small XML reader for what ``SVGSanitizer`` takes from anyone: elements, attributes, text
/// and CDATA, in order; comments, processing instructions and a DOCTYPE without an internal subset
/// skipped; everything else refused with a reason. Imagery's own because Foundation's `XMLParser`
/// (libxml2 underneath) traps on some malformed input on Linux: the `svg` fuzz target found two such
/// documents, each of which would end the server's process.
///
/// Only XML's own entities (`&lt;` `&gt;` `&amp;` `&quot;` `&apos;`) and character references are
/// read: a document naming any other entity is refused (nothing is ever expanded or fetched). Line
/// ends and attribute whitespace are normalised as XML specifies, so what is written back reads the same.
struct XMLReader {
    enum Event {
        case start(name: String, attributes: [(name: String, value: String)], empty: Bool)
        case end(name: String)
        case text(String)
    }

    struct Failure: Error {
        let reason: String
    }

    /// The most elements open at once (deeper documents are refused, not walked).
    static let maximumDepth = 256

    private let bytes: [UInt8]
    private var index = 0

    init(_ text: String) {
        bytes = Array(text.utf8)
    }

    /// Reads the whole document, calling `handle` for each event.
    /// - Throws: ``Failure`` for what is not well-formed or not read here.
    mutating func read(_ handle: (Event) -> Void) throws(Failure) {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
        // XML's characters: no control character but tab, line feed and carriage return.
        if bytes.contains(where: { $0 < 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }) {
            throw Failure(reason: "a control character, which XML does not allow")
        }
        var open: [String] = []
        var sawRoot = false
        while index < bytes.count {
            if bytes[index] != UInt8(ascii: "<") {
                let text = try readText()
                if open.isEmpty {
                    guard text.allSatisfy({ $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }) else {
                        throw Failure(reason: "text outside the root element")
                    }
                } else {
                    handle(.text(text))
                }
                continue
            }
            if starts("<?") {
                try skip(past: "?>", what: "processing instruction")
            } else if starts("<!--") {
                try skip(past: "-->", what: "comment")
            } else if starts("<![CDATA[") {
                guard !open.isEmpty else { throw Failure(reason: "CDATA outside the root element") }
                index += 9
                let start = index
                try skip(past: "]]>", what: "CDATA section")
                handle(.text(Self.normalisedLineEnds(String(decoding: bytes[start..<index - 3], as: UTF8.self))))
            } else if starts("<!DOCTYPE") {
                guard !sawRoot else { throw Failure(reason: "a DOCTYPE after the root element") }
                try skipDoctype()
            } else if starts("<!") {
                throw Failure(reason: "markup declarations are not read")
            } else if starts("</") {
                index += 2
                let name = try readName()
                skipSpace()
                try expect(">")
                guard open.last == name else {
                    throw Failure(reason: "</\(name)> does not close <\(open.last ?? "nothing")>")
                }
                open.removeLast()
                handle(.end(name: name))
            } else {
                guard open.isEmpty ? !sawRoot : true else { throw Failure(reason: "a second root element") }
                index += 1
                let name = try readName()
                var attributes: [(name: String, value: String)] = []
                while true {
                    let spaced = skipSpace()
                    guard index < bytes.count else { throw Failure(reason: "the document ends inside <\(name)>") }
                    if bytes[index] == UInt8(ascii: ">") || starts("/>") { break }
                    guard spaced else { throw Failure(reason: "attributes of <\(name)> must be separated by space") }
                    let attribute = try readName()
                    skipSpace()
                    try expect("=")
                    skipSpace()
                    let value = try readAttributeValue()
                    guard !attributes.contains(where: { $0.name == attribute }) else {
                        throw Failure(reason: "\(attribute) twice on <\(name)>")
                    }
                    attributes.append((attribute, value))
                }
                let empty = starts("/>")
                index += empty ? 2 : 1
                sawRoot = true
                handle(.start(name: name, attributes: attributes, empty: empty))
                if empty {
                    handle(.end(name: name))
                } else {
                    open.append(name)
                    guard open.count <= Self.maximumDepth else {
                        throw Failure(reason: "elements nested deeper than \(Self.maximumDepth)")
                    }
                }
            }
        }
        guard sawRoot else { throw Failure(reason: "there is no element") }
        guard open.isEmpty else { throw Failure(reason: "the document ends before </\(open.last!)>") }
    }

    private func starts(_ text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        return text.withUTF8Buffer { prefix in (0..<count).allSatisfy { bytes[index + $0] == prefix[$0] } }
    }

    private mutating func expect(_ character: Character) throws(Failure) {
        guard index < bytes.count, bytes[index] == character.asciiValue! else {
            throw Failure(reason: "expected \(character)")
        }
        index += 1
    }

    @discardableResult
    private mutating func skipSpace() -> Bool {
        let start = index
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        return index > start
    }

    private mutating func skip(past end: StaticString, what: String) throws(Failure) {
        let count = end.utf8CodeUnitCount
        while index < bytes.count {
            if starts(end) {
                index += count
                return
            }
            index += 1
        }
        throw Failure(reason: "the document ends inside a \(what)")
    }

    /// A DOCTYPE without an internal subset (`[`…`]`: entity declarations live there, and are refused).
    private mutating func skipDoctype() throws(Failure) {
        var quote: UInt8?
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if let open = quote {
                if byte == open { quote = nil }
            } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                quote = byte
            } else if byte == UInt8(ascii: "[") {
                throw Failure(reason: "a DOCTYPE with declarations (entities) is refused")
            } else if byte == UInt8(ascii: ">") {
                return
            }
        }
        throw Failure(reason: "the document ends inside its DOCTYPE")
    }

    /// A name: anything up to space, `/`, `>`, `=`, `<`, a quote (XML's name characters, and more, are
    /// taken as they are: the sanitiser compares names, it does not trust them).
    private mutating func readName() throws(Failure) -> String {
        let start = index
        while index < bytes.count,
            ![0x20, 0x09, 0x0A, 0x0D, 0x2F, 0x3E, 0x3D, 0x3C, 0x22, 0x27, 0x26].contains(bytes[index])
        { index += 1 }
        guard index > start else { throw Failure(reason: "expected a name") }
        let first = bytes[start]
        guard
            first >= 0x80 || first == UInt8(ascii: "_") || first == UInt8(ascii: ":")
                || (first | 0x20 >= 0x61 && first | 0x20 <= 0x7A)
        else {
            throw Failure(reason: "a name cannot start with \(Character(Unicode.Scalar(first)))")
        }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    private mutating func readAttributeValue() throws(Failure) -> String {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'") else {
            throw Failure(reason: "an attribute's value must be quoted")
        }
        let quote = bytes[index]
        index += 1
        var value: [UInt8] = []
        while index < bytes.count, bytes[index] != quote {
            switch bytes[index] {
            case UInt8(ascii: "<"): throw Failure(reason: "< in an attribute's value")
            case UInt8(ascii: "&"): value += try readReference()
            case 0x09, 0x0A, 0x0D:  // attribute-value normalisation: each is a space
                value.append(0x20)
                if bytes[index] == 0x0D, index + 1 < bytes.count, bytes[index + 1] == 0x0A { index += 1 }
                index += 1
            default:
                value.append(bytes[index])
                index += 1
            }
        }
        guard index < bytes.count else { throw Failure(reason: "the document ends inside an attribute's value") }
        index += 1
        return String(decoding: value, as: UTF8.self)
    }

    /// Text up to the next `<`: line ends normalised as written (`\r\n` and `\r` are `\n`; a character
    /// reference `&#13;` stays a carriage return), references decoded.
    private mutating func readText() throws(Failure) -> String {
        var text: [UInt8] = []
        while index < bytes.count, bytes[index] != UInt8(ascii: "<") {
            switch bytes[index] {
            case UInt8(ascii: "&"):
                text += try readReference()
            case 0x0D:
                text.append(0x0A)
                index += 1
                if index < bytes.count, bytes[index] == 0x0A { index += 1 }
            default:
                text.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// `&…;` at `index`: XML's five entities and character references, as UTF-8; others refused.
    private mutating func readReference() throws(Failure) -> [UInt8] {
        let start = index + 1
        var end = start
        while end < bytes.count, end - start < 12, bytes[end] != UInt8(ascii: ";") { end += 1 }
        guard end < bytes.count, bytes[end] == UInt8(ascii: ";") else {
            throw Failure(reason: "an & that starts no reference")
        }
        let name = String(decoding: bytes[start..<end], as: UTF8.self)
        index = end + 1
        switch name {
        case "lt": return [UInt8(ascii: "<")]
        case "gt": return [UInt8(ascii: ">")]
        case "amp": return [UInt8(ascii: "&")]
        case "quot": return [UInt8(ascii: "\"")]
        case "apos": return [UInt8(ascii: "'")]
        default:
            let number: UInt32? =
                name.hasPrefix("#x")
                ? UInt32(name.dropFirst(2), radix: 16) : name.hasPrefix("#") ? UInt32(name.dropFirst(), radix: 10) : nil
            guard let number else { throw Failure(reason: "the entity &\(name); is not XML's own") }
            guard number >= 0x20 || number == 0x09 || number == 0x0A || number == 0x0D, number != 0xFFFE,
                number != 0xFFFF,
                let scalar = Unicode.Scalar(number)
            else { throw Failure(reason: "&\(name); is no XML character") }
            return Array(String(Character(scalar)).utf8)
        }
    }

    /// `\r\n` and a lone `\r` as `\n`, as an XML parser reads line ends.
    static func normalisedLineEnds(_ text: String) -> String {
        guard text.utf8.contains(0x0D) else { return text }
        return text.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\r", with: "\n")
    }
}
