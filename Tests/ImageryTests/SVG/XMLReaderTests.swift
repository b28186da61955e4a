import Foundation
import Testing

@testable import Imagery

/// The sanitiser's own XML reader: the events it reports, in order, and its refusals.
@Suite("XMLReader")
struct XMLReaderTests {
    /// Each event as a line: `<name a=1>` (`/>` when empty), `</name>`, `"text"`.
    static func events(_ text: String) throws -> [String] {
        var reader = XMLReader(text)
        var events: [String] = []
        try reader.read { event in
            switch event {
            case .start(let name, let attributes, let empty):
                events.append(
                    "<" + ([name] + attributes.map { "\($0.name)=\($0.value)" }).joined(separator: " ")
                        + (empty ? "/>" : ">"))
            case .end(let name): events.append("</\(name)>")
            case .text(let text): events.append("\"\(text)\"")
            }
        }
        return events
    }

    @Test func reportsElementsAttributesAndTextInOrder() throws {
        let events = try Self.events(#"<svg w="1" h='2'><g>a<rect x="0"/>b</g><text>&lt;&#x41;&#66;</text></svg>"#)
        #expect(
            events == [
                "<svg w=1 h=2>", "<g>", "\"a\"", "<rect x=0/>", "</rect>", "\"b\"", "</g>", "<text>", "\"<AB\"",
                "</text>", "</svg>",
            ])
    }

    @Test func attributesKeepTheirOrderAndQuotesOfTheOtherKind() throws {
        #expect(
            try Self.events(#"<svg b="it's" a='say "hi"' c = "x"/>"#) == [#"<svg b=it's a=say "hi" c=x/>"#, "</svg>"])
    }

    @Test func cdataIsTextAsWritten() throws {
        #expect(
            try Self.events("<svg><![CDATA[<not> &amp; a tag]]></svg>") == ["<svg>", "\"<not> &amp; a tag\"", "</svg>"])
        #expect(try Self.events("<svg><![CDATA[a\r\nb\rc]]></svg>") == ["<svg>", "\"a\nb\nc\"", "</svg>"])
        #expect(try Self.events("<svg><![CDATA[]]></svg>") == ["<svg>", "\"\"", "</svg>"])
    }

    @Test func whitespaceAroundTheRootIsNotReportedAndTextInsideIs() throws {
        #expect(try Self.events(" \n<svg> </svg>\r\n") == ["<svg>", "\" \"", "</svg>"])
    }

    @Test func namesAreTakenAsTheyAreWithPrefixesAndUnicode() throws {
        #expect(
            try Self.events(##"<svg:svg xlink:href="#a"><é_1.x/></svg:svg>"##)
                == [#"<svg:svg xlink:href=#a>"#, "<é_1.x/>", "</é_1.x>", "</svg:svg>"])
        #expect(try Self.events("<_a></_a >") == ["<_a>", "</_a>"])
    }

    @Test func characterReferencesReachAllOfUnicode() throws {
        #expect(try Self.events("<a>&#x1F600;&#9;&#xA;&#x0D;</a>") == ["<a>", "\"😀\t\n\r\"", "</a>"])
        #expect(try Self.events("<a t='&apos;&quot;&amp;'/>") == ["<a t='\"&/>", "</a>"])
    }

    @Test func aLeadingByteOrderMarkIsSkipped() throws {
        var reader = XMLReader("\u{FEFF}<a/>")
        var count = 0
        try reader.read { _ in count += 1 }
        #expect(count == 2)
    }

    @Test(arguments: [
        "<a><b></a></b>", "<a>", "</a>", "<a></a><b></b>", "x", "<a b='1' b='2'/>", "<a b=\"\u{3C}\"/>",
        "<a>&unknown;</a>",
        "<a>&#xFFFF;</a>", "<a>\u{0}</a>", "<a><![CDATA[x]]</a>", "<!DOCTYPE a [<!ELEMENT a ANY>]><a/>",
        "<a/><!DOCTYPE a>",
    ])
    func malformedDocumentsAreRefusedWithAReason(text: String) {
        var reader = XMLReader(text)
        do {
            try reader.read { _ in }
            Issue.record("read: \(text.debugDescription)")
        } catch {
            #expect(!error.reason.isEmpty)
        }
    }

    /// Seeded random documents of markup fragments: each is read or refused, never a crash or a hang.
    @Test func randomFragmentsAreReadOrRefused() {
        let pieces = [
            "<svg>", "</svg>", "<g>", "</g>", "<a b=\"c\">", "<a b='c'/>", "</a>", "text", "&amp;", "&#x41;", "&#", "&",
            "<", ">", "\"", "'",
            "<![CDATA[", "]]>", "<!--", "-->", "<?", "?>", "<!DOCTYPE svg>", "[", "]", " ", "\n", "\r", "=", "/", "é",
            "\u{0}", "<!ENTITY",
        ]
        var random = SeededGenerator(seed: 99)
        var (read, refused) = (0, 0)
        for _ in 0..<3_000 {
            let text = (0..<Int.random(in: 1...24, using: &random)).map { _ in pieces.randomElement(using: &random)! }
                .joined()
            var reader = XMLReader(text)
            do {
                try reader.read { _ in }
                read += 1
            } catch {
                refused += 1
            }
            _ = try? SVGSanitizer.sanitized(Data(text.utf8))
        }
        #expect(read + refused == 3_000 && refused > 0)
    }
}
