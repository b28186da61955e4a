import Foundation
import Imagery
import Testing

@testable import ImageryServer

/// One vocabulary of formats, gravities and resize modes (``Vocabulary``): each dialect's reader
/// takes its own spellings of a term to the same value, and lists them from the table when refusing.
@Suite("Dialects: one vocabulary")
struct VocabularyTests {
    @Test(arguments: [("webp", ImageFormat.webp), ("png", .png), ("avif", .avif), ("gif", .gif), ("jpg", .jpeg)])
    func everyDialectReadsAFormatTheSame(name: String, format: ImageFormat) throws {
        let native = try ImageParameters(query: ["url": "https://example.com/a.jpg", "format": name], maximumSide: 100)
        #expect(native.format == format)
        let imgproxy = try ImgproxyOptions([ImgproxyURL.Option(name: "f", arguments: [Substring(name)])])
        #expect(imgproxy.format == format)
        let thumbor = try ThumborURL(path: Substring("/unsafe/filters:format(\(name))/example.com/a.jpg"))
            .parameters(maximumSide: 100, refusesUnknownFilters: false, negotiates: false)
        #expect(thumbor.format == format)
    }

    @Test func aDialectsWordsAreItsOwn() {
        #expect(Vocabulary.gravities.value("ce", in: .imgproxy) == .center)
        #expect(Vocabulary.gravities.value("center", in: .native) == .center)
        #expect(Vocabulary.gravities.value("ce", in: .native) == nil)
        #expect(Vocabulary.formats.value("svg", in: .native) == nil)
        #expect(Vocabulary.formats.value("jxl", in: .thumbor) == nil)
        #expect(Vocabulary.formats.names(in: .thumbor) == ["jpeg", "png", "webp", "avif", "gif"])
        #expect(Vocabulary.sizingModes.value("fill-down", in: .imgproxy) == .fillDown)
    }

    /// A refusal lists the dialect's words from the table, in the dialect's frame.
    @Test func refusalsListTheTablesWords() throws {
        #expect {
            try ImageParameters(query: ["url": "https://example.com/a.jpg", "gravity": "up"], maximumSide: 100)
        } throws: { error in
            (error as? ServerError)?.message.contains("gravity must be center, north, south") == true
        }
        #expect {
            try ImgproxyOptions([ImgproxyURL.Option(name: "g", arguments: ["up"])])
        } throws: { error in
            (error as? ServerError)?.message
                == "imgproxy g: up is not a gravity (ce, no, so, ea, we, noea, nowe, soea, sowe, sm, fp:X:Y)"
        }
        #expect(ArgumentReader.phrase(0...Int(Int32.max)) == "a whole number, 0 or more")
        #expect(throws: ArgumentReader.Expected(phrase: "a whole number from 1 to 100")) {
            try ArgumentReader.integer("101", in: 1...100)
        }
    }
}
