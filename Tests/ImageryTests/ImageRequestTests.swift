import Foundation
import Testing

@testable import Imagery

@Suite("ImageRequest keys and ImageFormat")
struct ImageRequestTests {
    @Test func spellingsOfOneURLShareASourceKey() {
        let a = ImageRequest(url: URL(string: "HTTP://Example.COM:80/a.jpg#top")!)
        let b = ImageRequest(url: URL(string: "http://example.com/a.jpg")!)
        #expect(a.sourceKey == b.sourceKey)
        let c = ImageRequest(url: URL(string: "http://example.com/a.jpg?v=2")!)
        #expect(a.sourceKey != c.sourceKey)
    }

    @Test(arguments: [
        "http://example.com/a.jpg", "https://example.com/a.jpg?x=1&y=%20", "HTTP://Example.COM:80/a.jpg#top",
        "http://example.com:80/a", "https://example.com:443/a", "https://example.com:8443/a",
        "http://127.0.0.1:9200/v1/a.jpg",
        "http://example.com", "http://user:pw@example.com/a", "http://[::1]:8080/a", "http://example.com:/a",
        "http://example.com/a#b", "https://xn--bcher-kva.example/a", "http://example.com:99999999/a",
        "https://EXAMPLE.com/A.JPG",
    ])
    func theFastNormalFormCheckAgreesWithParsing(text: String) throws {
        let url = try #require(URL(string: text))
        #expect(SourceKey.normalized(url) == SourceKey.normalizedByParsing(url), "\(text)")
    }

    @Test func theImageKeyIncludesIdAndSize() {
        let load: @Sendable () async throws -> Data = { Data() }
        let small = ImageRequest(id: "photo", thumbnail: .init(width: 48, height: 48), data: load)
        let large = ImageRequest(id: "photo", thumbnail: .init(width: 512, height: 512), data: load)
        let other = ImageRequest(id: "other", thumbnail: .init(width: 48, height: 48), data: load)
        let contain = ImageRequest(id: "photo", thumbnail: .init(width: 48, height: 48, fit: .contain), data: load)
        #expect(small.sourceKey == large.sourceKey)
        #expect(Set([small.imageKey, large.imageKey, other.imageKey, contain.imageKey]).count == 4)
    }

    @Test func anIdAndAURLNeverShareAKey() {
        let byURL = ImageRequest(url: URL(string: "id:x")!)
        let byID = ImageRequest(id: "x") { Data() }
        #expect(byURL.sourceKey != byID.sourceKey)
        #expect(byURL.sourceKey.stringValue != byID.sourceKey.stringValue)
    }

    @Test(
        arguments: [
            ([0xFF, 0xD8, 0xFF, 0xE0], ImageFormat?.some(.jpeg)),
            ([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], .png),
            (Array("GIF89a".utf8), .gif),
            (Array("RIFF".utf8) + [0, 0, 0, 0] + Array("WEBP".utf8), .webp),
            ([0, 0, 0, 0x1C] + Array("ftypavif".utf8), .avif),
            (Array("<html>".utf8), nil),
            ([], nil),
        ] as [([UInt8], ImageFormat?)])
    func sniffsTheFormatFromTheBytes(bytes: [UInt8], expected: ImageFormat?) {
        #expect(ImageFormat(sniffing: Data(bytes)) == expected)
    }
}
