import Foundation
import Hummingbird
import HummingbirdTesting
import Imagery
import ImageryServer
import ImageryTestSupport
import ImageryVips
import Testing

/// The page at `/`, its thumbnails (resized from the gallery directory, not over loopback
/// HTTP) and the originals at `/files/NAME`.
@Suite("Gallery page")
struct GalleryTests {
    /// The `src` and `srcset` URLs of the page's `<img>` elements, un-escaped.
    static func imageURLs(in html: String) -> [String] {
        let pattern = /(?:src|srcset)="([^"]*)"/
        return html.matches(of: pattern).map { match in
            String(match.1).replacingOccurrences(of: " 2x", with: "").replacingOccurrences(of: "&amp;", with: "&")
        }
    }

    @Test func showsEveryImageOfTheDirectoryAsWorkingThumbnails() async throws {
        try await withServer(configure: { $0.gallery.directory = Fixtures.directory }) { client, _ in
            let html = try await client.execute(uri: "/", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "text/html; charset=utf-8")
                return String(buffer: response.body)
            }
            let images = Fixtures.files(in: Fixtures.directory).map(\.lastPathComponent)
            #expect(images.count == 10)
            for name in images { #expect(html.contains("<figcaption>\(name)</figcaption>"), "\(name)") }
            #expect(!html.contains("README"))
            let urls = Self.imageURLs(in: html)
            #expect(urls.count == images.count * 2)  // src and a 2x srcset each
            let decoder = VipsImageDecoder()
            for url in urls {
                let side = url.contains("w=480") ? 480 : 240
                // A side x side cover crop, of a source not enlarged (the page's CSS covers its tile).
                let name = try #require(images.first { url.contains($0) })
                let source = try decoder.decode(Fixtures.data(name), thumbnail: nil)
                let expected = (min(side, source.width), min(side, source.height))
                try await client.execute(uri: url, method: .get) { response in
                    #expect(response.status == .ok, "\(url): \(String(buffer: response.body))")
                    let image = try decoder.decode(response.data, thumbnail: nil)
                    #expect((image.width, image.height) == expected, "\(url): \(image.width)x\(image.height)")
                }
            }
        }
    }

    @Test func filesAreServedAsTheyAreAndNothingElseIs() async throws {
        try await withServer(configure: { $0.gallery.directory = Fixtures.directory }) { client, _ in
            let etag = try await client.execute(uri: "/files/rocket.jpg", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "image/jpeg")
                #expect(response.data == (try Fixtures.data("rocket.jpg")))
                return try #require(response.headers[.eTag])
            }
            try await client.execute(uri: "/files/rocket.jpg", method: .get, headers: [.ifNoneMatch: etag]) {
                response in
                #expect(response.status == .notModified)
            }
            for path in [
                "/files/README.md", "/files/nope.jpg", "/files/..%2F..%2FPackage.swift", "/files/%2Fetc%2Fpasswd",
                "/files/.hidden.jpg",
            ] {
                try await client.execute(uri: path, method: .get) { response in
                    #expect(response.status == .notFound, "\(path)")
                }
            }
            for source in ["/files/../Package.swift", "/files/../../etc/passwd", "/files/README.md", "/files/nope.png"]
            {
                let uri =
                    "/image?w=64&url=" + (source.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
                try await client.execute(uri: uri, method: .get) { response in
                    #expect(response.status == .notFound, "\(source)")
                    #expect(response.errorBody?.error == "not_found")
                }
            }
        }
    }

    @Test func aFileOverTheSourceByteLimitIs413AndNotRead() async throws {
        try await withServer(configure: { configuration in
            configuration.gallery.directory = Fixtures.directory
            configuration.limits.maximumSourceBytes = 10_000  // rocket.jpg is 112 525 bytes
        }) { client, _ in
            try await client.execute(uri: "/files/rocket.jpg", method: .get) { response in
                #expect(response.status == .contentTooLarge)
                #expect(response.errorBody?.error == "source_too_large")
            }
            try await client.execute(uri: "/image?w=64&url=%2Ffiles%2Frocket.jpg", method: .get) {
                #expect($0.status == .contentTooLarge)
            }
        }
    }

    @Test func withoutAGalleryThePageSaysHowToConfigureOneAndFilesAreNotFound() async throws {
        try await withServer { client, _ in
            try await client.execute(uri: "/", method: .get) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body).contains("--gallery-dir"))
            }
            try await client.execute(uri: "/files/rocket.jpg", method: .get) { #expect($0.status == .notFound) }
            try await client.execute(uri: "/image?w=64&url=%2Ffiles%2Frocket.jpg", method: .get) {
                #expect($0.status == .notFound)
            }
        }
    }

    @Test func namesAreEscapedURLsAreSignedAndConfiguredURLsComeFirst() async throws {
        try await withTemporaryDirectory { directory in
            let name = #"<b>&"it's".png"#
            try Fixtures.data("chelsea.png").write(to: directory.appendingPathComponent(name))
            try await withServer(configure: { configuration in
                configuration.gallery.directory = directory
                configuration.requests.signingKey = "gallery-key"
            }) { client, _ in
                let html = try await client.execute(uri: "/", method: .get) { String(buffer: $0.body) }
                #expect(html.contains("<figcaption>&lt;b&gt;&amp;&quot;it&#39;s&quot;.png</figcaption>"))
                #expect(!html.contains(name))
                let original = try #require(html.firstMatch(of: /href="([^"]*)"/)).1
                let bytes = try Fixtures.data("chelsea.png")
                try await client.execute(uri: String(original), method: .get) { response in
                    #expect(response.status == .ok, "\(original)")
                    #expect(response.data == bytes)
                }
                for url in Self.imageURLs(in: html) {
                    #expect(url.contains("&sig="))
                    try await client.execute(uri: url, method: .get) { #expect($0.status == .ok, "\(url)") }
                    let unsigned = String(url[..<url.range(of: "&sig=")!.lowerBound])
                    try await client.execute(uri: unsigned, method: .get) { #expect($0.status == .forbidden) }
                }
            }
        }
        let origin = try await TestOrigin.serving(directory: Fixtures.directory)
        try await withServer(
            origin: origin,
            configure: { configuration in
                configuration.gallery.urls = [origin.url("chelsea.webp"), origin.url("rocket.jpg")]
                configuration.gallery.directory = Fixtures.directory
            }
        ) { client, origin in
            let html = try await client.execute(uri: "/", method: .get) { String(buffer: $0.body) }
            let urls = Self.imageURLs(in: html)
            #expect(urls.count == 24)  // 2 configured URLs and 10 fixtures, src and srcset each
            #expect(urls.first?.contains("chelsea.webp") == true && urls.first?.contains("127.0.0.1") == true)
            try await client.execute(uri: urls[0], method: .get) { #expect($0.status == .ok) }
            #expect(origin.requestCount(path: "/chelsea.webp") == 1)
        }
    }
}
