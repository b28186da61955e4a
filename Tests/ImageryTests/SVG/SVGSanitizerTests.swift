import Foundation
import Testing

@testable import Imagery

/// The SVG sanitiser on documents from anyone: what draws is kept, written back the same way every
/// time; whatever runs or reaches outside the document is dropped; what cannot be read safely is refused.
@Suite("SVGSanitizer")
struct SVGSanitizerTests {
    static let open = #"<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">"#

    /// `body` inside an `svg` root, sanitised, without the XML declaration written first and the root.
    static func sanitized(_ body: String) throws -> String {
        let text = String(decoding: try SVGSanitizer.sanitized(Data((open + body + "</svg>").utf8)), as: UTF8.self)
        let declaration = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        #expect(text.hasPrefix(declaration))
        let inner = text.dropFirst(declaration.count)
        let root = #"<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">"#
        #expect(inner.hasPrefix(root) && inner.hasSuffix("</svg>"), "\(text)")
        return String(inner.dropFirst(root.count).dropLast("</svg>".count))
    }

    @Test func drawingIsKeptWithItsAttributesInNameOrder() throws {
        let body =
            ##"<g id="a" transform="translate(1 2)"><rect y="2" x="1" width="3" height="4" fill="#ff0000"/>"##
            + #"<path d="M0 0L10 10Z" stroke-width="2"/><circle r="5" cy="1" cx="1"/></g>"#
        #expect(
            try Self.sanitized(body)
                == ##"<g id="a" transform="translate(1 2)">"##
                + ##"<rect fill="#ff0000" height="4" width="3" x="1" y="2"></rect>"##
                + #"<path d="M0 0L10 10Z" stroke-width="2"></path><circle cx="1" cy="1" r="5"></circle></g>"#)
    }

    @Test func textIsEscapedSoThatItReadsBackAsItWas() throws {
        #expect(
            try Self.sanitized(#"<text>a &amp; b &lt; c &gt; d "e" 'f' &#x263A; &#65;</text>"#)
                == #"<text>a &amp; b &lt; c &gt; d &quot;e&quot; 'f' ☺ A</text>"#)
        #expect(try Self.sanitized("<text><![CDATA[x < y && z]]></text>") == "<text>x &lt; y &amp;&amp; z</text>")
        #expect(
            try Self.sanitized(#"<text title="a&#10;b&#9;c&#13;d">x&#13;y</text>"#)
                == #"<text title="a&#10;b&#9;c&#13;d">x&#13;y</text>"#)
        // Line ends and whitespace in attribute values are normalised as an XML parser reads them.
        #expect(
            try Self.sanitized("<text title=\"a\nb\tc\r\nd\">x\r\ny\rz</text>")
                == "<text title=\"a b c d\">x\ny\nz</text>")
    }

    @Test func sanitisingIsDeterministicAndStable() throws {
        let document = Data(
            (Self.open + #"<rect width="1" height="1" onclick="x()"/><script>y()</script><text>&lt;&amp;</text></svg>"#)
                .utf8)
        let once = try SVGSanitizer.sanitized(document)
        #expect(try SVGSanitizer.sanitized(document) == once)
        #expect(try SVGSanitizer.sanitized(once) == once)
    }

    @Test(arguments: [
        "script", "foreignObject", "iframe", "object", "embed", "form", "audio", "video", "handler", "listener",
        "frame", "frameset", "SCRIPT", "svg:script",
    ])
    func elementsThatRunOrEmbedAreDroppedWithAllTheyHold(name: String) throws {
        let body = "<\(name) a=\"1\"><rect/><g><text>inside</text></g></\(name)><rect id=\"after\"/>"
        #expect(try Self.sanitized(body) == #"<rect id="after"></rect>"#)
    }

    @Test(arguments: ["onload", "onclick", "ONCLICK", "onMouseOver", "on", "xlink:onfocus", "onbegin"])
    func eventHandlersAreDropped(attribute: String) throws {
        #expect(try Self.sanitized(#"<rect \#(attribute)="alert(1)" width="1"/>"#) == #"<rect width="1"></rect>"#)
    }

    @Test(arguments: [
        "javascript:alert(1)", "JavaScript:alert(1)", " javascript:x", "java\tscript:x", "java&#10;script:x",
        "java&#x0D;script:x", "jav&#x09;ascript:x",
    ])
    func javascriptIsDroppedHoweverItIsSpelled(value: String) throws {
        #expect(try Self.sanitized(#"<a href="\#(value)" title="\#(value)"><rect/></a>"#) == "<a><rect></rect></a>")
    }

    /// References stay only when they point inside the document, or (in an image) hold a raster image.
    @Test(
        arguments: [
            ("use", "href", "#shape", true),
            ("use", "xlink:href", "#shape", true),
            ("use", "XLINK:HREF", "#shape", true),
            ("use", "href", "", true),
            ("use", "href", "https://example.com/sprite.svg#x", false),
            ("use", "href", "sprite.svg#x", false),
            ("use", "href", "//example.com/x", false),
            ("use", "href", "file:///etc/passwd", false),
            ("use", "href", "data:image/png;base64,AAAA", false),  // raster data only in an image
            ("a", "href", "https://example.com", false),
            ("image", "href", "data:image/png;base64,AAAA", true),
            ("image", "xlink:href", "data:image/jpeg;base64,AAAA", true),
            ("image", "href", "data:image/jpg,AAAA", true),
            ("image", "href", "DATA:IMAGE/GIF;base64,AAAA", true),
            ("image", "href", "data:image/webp;base64,AAAA", true),
            ("feImage", "href", "data:image/png;base64,AAAA", true),
            ("image", "href", "data:image/svg+xml;base64,AAAA", false),
            ("image", "href", "data:image/pngx;base64,AAAA", false),
            ("image", "href", "data:text/html,<b>", false),
            ("image", "href", "http://example.com/pixel.png", false),
            ("image", "href", "pixel.png", false),
        ] as [(String, String, String, Bool)])
    func referencesStayOnlyInsideTheDocument(element: String, attribute: String, value: String, kept: Bool) throws {
        let escaped = SVGSanitizer.escaped(value, attribute: true)
        let clean = try Self.sanitized(#"<\#(element) \#(attribute)="\#(escaped)"/>"#)
        #expect(clean.contains(attribute) == kept, "\(element) \(attribute)=\(value): \(clean)")
    }

    /// CSS in a `style` attribute, any attribute (presentation attributes are CSS) and `<style>`: only
    /// references to the document itself, nothing imported, no escapes that could spell either.
    @Test(
        arguments: [
            ("fill: red; stroke: url(#g)", true),
            ("fill: url('#g') ; stroke: url(\"#h\")", true),
            ("fill: URL( #g )", true),
            ("opacity: 0.5", true),
            ("fill: url(https://example.com/f)", false),
            ("fill: url('//example.com/f')", false),
            ("fill: url(#g) url(x.svg#h)", false),
            ("fill: url(data:image/png;base64,AAAA)", false),
            ("@import 'https://example.com/a.css'", false),
            ("@IMPORT url(#x)", false),
            ("width: expression(alert(1))", false),
            ("background: javascript:x", false),
            ("fill: \\75 rl(https://example.com/f)", false),  // u escaped: url(
            ("@\\69mport 'https://example.com/a.css'", false),  // i escaped: @import
            ("mask-image: image-set('https://example.com/m.png' 1x)", false),
            ("mask-image: -webkit-image-set('https://example.com/m.png' 1x)", false),
            ("mask-image: image('https://example.com/m.png')", false),
            ("mask-image: src('https://example.com/m.png')", false),
        ] as [(String, Bool)])
    func cssStaysOnlyWhenItReferencesNothingOutside(css: String, safe: Bool) throws {
        #expect(SVGSanitizer.isSafeStyle(css) == safe, "\(css)")
        let escaped = SVGSanitizer.escaped(css, attribute: true)
        #expect(
            try Self.sanitized(#"<rect style="\#(escaped)"/>"#)
                == (safe ? #"<rect style="\#(escaped)"></rect>"# : "<rect></rect>"), "\(css)")
        #expect(
            try Self.sanitized(#"<rect mask="\#(escaped)"/>"#)
                == (safe ? #"<rect mask="\#(escaped)"></rect>"# : "<rect></rect>"), "\(css)")
        let text = SVGSanitizer.escaped(css)
        #expect(
            try Self.sanitized("<style>\(text)</style>") == (safe ? "<style>\(text)</style>" : "<style></style>"),
            "\(css)")
    }

    @Test func elementsInsideAStyleAreDropped() throws {
        #expect(
            try Self.sanitized("<style>rect { fill: red }<g><text>x</text></g></style><rect/>")
                == "<style>rect { fill: red }</style><rect></rect>")
    }

    /// Animations that set a link, or hold `javascript:`, are dropped; others are drawing.
    @Test(
        arguments: [
            (#"<set attributeName="href" to="javascript:alert(1)"/>"#, ""),
            (#"<set attributeName="xlink:href" to="https://example.com"/>"#, ""),
            (##"<animate attributeName="HREF" values="#a;#b"/>"##, ""),
            (#"<animate attributeName="x" values="javascript:alert(1)"/>"#, ""),
            (
                #"<animateTransform attributeName="transform" type="rotate" from="0" to="90"/>"#,
                #"<animateTransform attributeName="transform" from="0" to="90" type="rotate"></animateTransform>"#
            ),
            (
                #"<animate attributeName="opacity" from="0" to="1" dur="1s"/>"#,
                #"<animate attributeName="opacity" dur="1s" from="0" to="1"></animate>"#
            ),
        ] as [(String, String)])
    func animationsThatSetALinkAreDropped(animation: String, clean: String) throws {
        #expect(try Self.sanitized("<rect>\(animation)</rect>") == "<rect>\(clean)</rect>")
    }

    @Test func commentsInstructionsAndTheDoctypeAreLeftOut() throws {
        let document =
            #"<?xml version="1.0" encoding="utf-8"?><!-- a -->"#
            + #"<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">"#
            + #"<svg xmlns="http://www.w3.org/2000/svg"><?pi data?><!-- b --><rect/></svg><!-- c -->"#
        let clean = String(decoding: try SVGSanitizer.sanitized(Data(document.utf8)), as: UTF8.self)
        #expect(
            clean == "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                + #"<svg xmlns="http://www.w3.org/2000/svg"><rect></rect></svg>"#)
    }

    @Test(arguments: [
        "<svg/>", "<svg:svg xmlns:svg=\"http://www.w3.org/2000/svg\"/>", "\u{FEFF}<svg/>", "  \n<svg/>\n  ",
        #"<?xml version="1.0" encoding="UTF-8"?><svg/>"#, #"<?xml version='1.0' encoding = 'utf8' ?><svg/>"#,
        #"<?xml version="1.0"?><svg/>"#,
    ])
    func documentsThatAreSVGAreRead(document: String) throws {
        #expect(throws: Never.self) { try SVGSanitizer.sanitized(Data(document.utf8)) }
    }

    @Test(
        arguments: [
            (#"<!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/passwd">]><svg>&x;</svg>"#, "entities"),
            (#"<svg><!ENTITY x "y"></svg>"#, "an entity declaration anywhere"),
            (#"<!DOCTYPE svg [ ]><svg/>"#, "an internal subset"),
            (#"<?xml version="1.0" encoding="ISO-8859-1"?><svg/>"#, "another encoding"),
            (#"<?xml version="1.0" encoding="UTF-16"?><svg/>"#, "UTF-16"),
            (#"<html><svg/></html>"#, "another root"),
            (#"<svgx/>"#, "a root named almost svg"),
            ("", "nothing"),
            ("   ", "only space"),
            ("<!-- only a comment -->", "no element"),
            ("<svg>", "unclosed"),
            ("<svg><g></svg>", "mismatched"),
            ("<svg></g>", "a stray end"),
            ("<svg/><svg/>", "two roots"),
            ("text<svg/>", "text before the root"),
            ("<svg/>text", "text after the root"),
            ("<svg><![CDATA[x</svg>", "an unclosed CDATA section"),
            ("<![CDATA[x]]><svg/>", "CDATA outside the root"),
            ("<svg><!-- x </svg>", "an unclosed comment"),
            ("<svg><? x </svg>", "an unclosed instruction"),
            ("<svg/><!DOCTYPE svg>", "a DOCTYPE after the root"),
            ("<!DOCTYPE svg", "an unclosed DOCTYPE"),
            ("<svg><!ELEMENT x ANY></svg>", "a markup declaration"),
            ("<svg a=1/>", "an unquoted value"),
            ("<svg a=\"1\"b=\"2\"/>", "attributes not separated"),
            ("<svg a=\"1\" a=\"2\"/>", "an attribute twice"),
            ("<svg a=\"<\"/>", "< in a value"),
            ("<svg a=\"1/>", "an unclosed value"),
            ("<svg a/>", "an attribute without a value"),
            ("<svg><1a/></svg>", "a name starting with a digit"),
            ("<svg><-a/></svg>", "a name starting with a hyphen"),
            ("<svg>&nbsp;</svg>", "an entity XML does not define"),
            ("<svg>&amp</svg>", "an unterminated reference"),
            ("<svg>& </svg>", "a bare ampersand"),
            ("<svg>&#0;</svg>", "NUL by reference"),
            ("<svg>&#x1;</svg>", "a control character by reference"),
            ("<svg>&#xD800;</svg>", "a surrogate by reference"),
            ("<svg>&#xFFFE;</svg>", "a non-character by reference"),
            ("<svg>&#x110000;</svg>", "past Unicode by reference"),
            ("<svg>&#xZZ;</svg>", "not hex"),
            ("<svg>\u{1}</svg>", "a control character"),
            ("<svg", "the end inside a tag"),
            ("<", "a lone <"),
            ("</svg>", "an end with no start"),
        ] as [(String, String)])
    func documentsThatCannotBeReadSafelyAreRefused(document: String, why: String) {
        #expect(throws: ImageDecodingError.self, "\(why)") { try SVGSanitizer.sanitized(Data(document.utf8)) }
    }

    @Test func bytesThatAreNotUTF8AreRefused() {
        #expect(throws: ImageDecodingError.corrupt(format: .svg, reason: "an SVG must be UTF-8 or UTF-16 text")) {
            try SVGSanitizer.sanitized(Data([0x3C, 0x73, 0x76, 0x67, 0xFF, 0x2F, 0x3E]))
        }
    }

    @Test func nestingIsBoundedAtItsLimitAndRefusedPastIt() throws {
        func nested(_ depth: Int) -> Data {
            Data(
                ("<svg>" + String(repeating: "<g>", count: depth - 1) + String(repeating: "</g>", count: depth - 1)
                    + "</svg>").utf8)
        }
        #expect(throws: Never.self) { try SVGSanitizer.sanitized(nested(XMLReader.maximumDepth)) }
        #expect(throws: ImageDecodingError.self) { try SVGSanitizer.sanitized(nested(XMLReader.maximumDepth + 1)) }
        #expect(throws: ImageDecodingError.self) { try SVGSanitizer.sanitized(nested(100_000)) }
    }

    @Test(
        arguments: [
            ("a&b", false, "a&amp;b"), ("<x>", false, "&lt;x&gt;"), ("\"q\"", false, "&quot;q&quot;"),
            ("\r", false, "&#13;"),
            ("a\nb\tc", false, "a\nb\tc"), ("a\nb\tc", true, "a&#10;b&#9;c"),
            ("é☺", true, "é☺"), ("'", true, "'"),
        ] as [(String, Bool, String)])
    func escapingForContentAndAttributes(text: String, attribute: Bool, escaped: String) {
        #expect(SVGSanitizer.escaped(text, attribute: attribute) == escaped)
    }

    @Test func declaredEncodingsAreReadFromTheDeclarationAlone() {
        #expect(SVGSanitizer.declaredEncoding("<svg/>") == "")
        #expect(
            SVGSanitizer.declaredEncoding(#"<?xml version="1.0"?><svg encoding="latin1"/>"#) == "",
            "an attribute of the root is no declaration")
        #expect(SVGSanitizer.declaredEncoding(#" <?xml version="1.0" ENCODING="UTF-8"?>"#) == "utf-8")
        #expect(SVGSanitizer.declaredEncoding(#"<?xml version="1.0" encoding="windows-1252"?>"#) == "windows-1252")
        #expect(SVGSanitizer.text(of: Data(#"<?xml version="1.0" encoding="windows-1252"?><svg/>"#.utf8)) == nil)
    }

    /// imgproxy reads UTF-16 SVGs (the W3C suite has some); so does this, and writes them as UTF-8.
    @Test(arguments: [String.Encoding.utf16BigEndian, .utf16LittleEndian])
    func aUTF16DocumentWithItsByteOrderMarkIsReadAndWrittenAsUTF8(encoding: String.Encoding) throws {
        let document =
            ##"<?xml version="1.0" encoding="UTF-16"?><svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><rect width="4" height="4" fill="#f00"/><script>alert(1)</script></svg>"##
        let bom: [UInt8] = encoding == .utf16BigEndian ? [0xFE, 0xFF] : [0xFF, 0xFE]
        let data = Data(bom) + document.data(using: encoding)!
        #expect(ImageFormat(sniffing: data) == .svg)
        let clean = String(decoding: try SVGSanitizer.sanitized(data), as: UTF8.self)
        #expect(clean.contains("<rect"))
        #expect(!clean.contains("script"))
        #expect(clean.hasPrefix(#"<?xml version="1.0" encoding="UTF-8"?>"#))
    }

    @Test func aUTF16DocumentThatDeclaresEntitiesIsRefusedToo() {
        let document = #"<!DOCTYPE svg [<!ENTITY a "b">]><svg xmlns="http://www.w3.org/2000/svg">&a;</svg>"#
        let data = Data([0xFF, 0xFE]) + document.data(using: .utf16LittleEndian)!
        #expect(throws: ImageDecodingError.self) { try SVGSanitizer.sanitized(data) }
    }

    /// An `@import` costs the stylesheet its import only (imgproxy keeps the drawing's styles too).
    @Test func anImportIsDroppedAndTheRestOfTheStylesheetKept() throws {
        let document =
            #"<svg xmlns="http://www.w3.org/2000/svg"><style>@import url("https://example.com/a;b.css"); @IMPORT 'x.css';rect { fill: red }</style><rect width="1" height="1"/></svg>"#
        let clean = String(decoding: try SVGSanitizer.sanitized(Data(document.utf8)), as: UTF8.self)
        #expect(clean.contains("rect { fill: red }"))
        #expect(!clean.lowercased().contains("import"))
        #expect(!clean.contains("example.com"))
        #expect(SVGSanitizer.withoutImports("@import 'a.css'") == "")
        #expect(SVGSanitizer.withoutImports("a{} @import \"x;y\" screen; b{}") == "a{}  b{}")
    }
}
