import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Imagery
import ImageryTestSupport
import ImageryVips
import Testing

@testable import ImageryServer

/// imgproxy URLs served end to end: the same caches, guards and headers as `/image`, their own signatures.
@Suite("Image proxy: imgproxy URLs")
struct ServerImgproxyTests {
    /// `plain/http://127.0.0.1:PORT/NAME`.
    static func plain(_ origin: TestOrigin, _ name: String) -> String { "plain/" + origin.url(name).absoluteString }

    /// The grid: each URL's output size on rocket.jpg (640x427) as imgproxy's documentation defines
    /// its options (resizing types, enlarge, extend, dpr, crop, padding, rotate).
    @Test(
        arguments: [
            ("rs:fit:200:200", 200, 133), ("rs:fill:200:200", 200, 200), ("rs:force:200:300", 200, 300),
            ("rs:fill:1000:100", 640, 100),  // not enlarged: cropped to the box where the image reaches
            ("rs:fill-down:1000:100", 640, 64),  // not enlarged: cropped to the box's 10:1
            ("rs:auto:200:100", 200, 100), ("rs:auto:100:200", 100, 67),
            ("s:200:0", 200, 133), ("s:0:100", 150, 100), ("w:200/h:100", 150, 100),
            ("rs:fit:1000:1000:1", 1000, 667), ("rs:fit:1000:1000:0:1", 1000, 1000), ("rs:fit:1000:0:0:1", 1000, 427),
            ("rs:fill:1000:100:0:1:so", 1000, 100), ("s:200:200/ex:1", 200, 200),
            ("w:100/dpr:2", 200, 133), ("w:1000/dpr:2", 640, 427),
            ("c:320:200/rs:fit:160:0", 160, 100), ("c:0.5:0.5", 320, 214), ("c:300:0", 300, 427),
            ("w:100/pd:10", 120, 87), ("w:100/pd:10:20/dpr:2", 280, 173),
            ("rot:90/w:100", 100, 150), ("rot:90/c:200:100", 200, 100),
        ] as [(String, Int, Int)])
    func outputSizesAreImgproxysDocumentedOnes(options: String, width: Int, height: Int) async throws {
        try await withServer { client, origin in
            let (status, headers, body) = try await get(
                client, "/insecure/\(options)/\(Self.plain(origin, "rocket.jpg"))")
            #expect(status == .ok, "\(options): \(String(decoding: body, as: UTF8.self))")
            #expect(headers[.contentType] == "image/jpeg", "\(options)")  // the source's format, as imgproxy
            #expect(headers[.vary] == nil)
            let image = try VipsImageDecoder().decode(body, recipe: ImageRecipe())
            #expect((image.width, image.height) == (width, height), "\(options): \(image.width)x\(image.height)")
        }
    }

    @Test func theExtensionOrFormatChoosesTheOutput() async throws {
        try await withServer { client, origin in
            let source = origin.url("rocket.jpg").absoluteString
            let base64 = Data(source.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            for (path, type) in [
                ("/_/w:100/\(Self.plain(origin, "rocket.jpg"))@webp", "image/webp"),
                ("/_/w:100/\(base64).png", "image/png"),
                ("/_/w:100/f:avif/\(base64)", "image/avif"),
                ("/_/w:100/f:png/\(base64).webp", "image/webp"),  // the extension comes last, as in imgproxy
            ] {
                let (status, headers, _) = try await get(client, path)
                #expect(
                    status == .ok && headers[.contentType] == type, "\(path): \(status) \(headers[.contentType] ?? "")")
            }
        }
    }

    /// The same output through an imgproxy URL and the native query: one variant, one download, the
    /// same bytes and ETag. A thumbor URL for it shares the download (its decode of a shrunk JPEG is
    /// Pillow's: a variant of its own).
    @Test func sharesTheCachesWithTheOtherSyntaxes() async throws {
        try await withServer { client, origin in
            let imgproxy = try await get(client, "/_/rs:fill:300:200:1/g:sm/f:png/\(Self.plain(origin, "rocket.jpg"))")
            #expect(imgproxy.status == .ok)
            let native = try await get(
                client, imageURI(origin, "rocket.jpg", "w=300&h=200&gravity=smart&enlarge=1&format=png"))
            let thumbor = try await get(
                client, "/unsafe/300x200/smart/filters:format(png)/\(ServerThumborTests.source(origin, "rocket.jpg"))")
            #expect(native.body == imgproxy.body && thumbor.status == .ok)
            #expect(native.headers[.eTag] == imgproxy.headers[.eTag])
            #expect(origin.requestCount(path: "/rocket.jpg") == 1)
            // A per-format quality resolves to the quality of the native query for that format.
            let perFormat = try await get(
                client, "/_/w:200/fq:webp:30:jpeg:90/f:webp/\(Self.plain(origin, "rocket.jpg"))")
            let quality = try await get(client, imageURI(origin, "rocket.jpg", "w=200&q=30&format=webp"))
            #expect(perFormat.status == .ok && perFormat.body == quality.body)
        }
    }

    @Test func checksSignaturesWhenKeysAreSet() async throws {
        let (key, salt) = (ImgproxyURLTests.key, ImgproxyURLTests.salt)
        try await withServer(configure: {
            $0.imgproxy.keys = ["00ff", key]
            $0.imgproxy.salts = ["00", salt]
        }) { client, origin in
            let path = "/rs:fit:120:80/\(Self.plain(origin, "rocket.jpg"))"
            let signer = try #require(ImgproxySigner(keys: [key], salts: [salt]))
            let signature = signer.signature(of: Substring(path))
            #expect(try await get(client, "/\(signature)\(path)").status == .ok)  // the second pair signs it
            let unsigned = try await get(client, "/insecure\(path)")
            #expect(unsigned.status == .forbidden)
            #expect(try JSONDecoder().decode(ErrorBody.self, from: unsigned.body).error == "bad_signature")
            #expect(
                try await get(client, "/\(signature)/rs:fit:121:80/\(Self.plain(origin, "rocket.jpg"))").status
                    == .forbidden)
        }
        try await withServer(configure: { $0.requests.signingKey = "native-key" }) { client, origin in
            let response = try await get(client, "/insecure/w:100/\(Self.plain(origin, "rocket.jpg"))")
            #expect(response.status == .forbidden)
        }
    }

    @Test func expiresAndCacheBusterBehaveAsImgproxys() async throws {
        let time = stillTime()  // the URL lives 600 s from now, however long its answer takes
        try await withServer(configure: { $0.time = time.source }) { client, origin in
            let later = Int(time.date.timeIntervalSince1970) + 600
            let fresh = try await get(client, "/_/exp:\(later)/w:100/\(Self.plain(origin, "rocket.jpg"))")
            #expect(fresh.status == .ok)
            let directives = (fresh.headers[.cacheControl] ?? "").split(separator: ",").map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            let maxAge = directives.first { $0.hasPrefix("max-age=") }.flatMap { Int($0.dropFirst(8)) } ?? .max
            let age = fresh.headers[.age].flatMap { Int($0) } ?? 0
            // As long as the URL lives.
            #expect(maxAge - age == 600, "\(fresh.headers[.cacheControl] ?? ""), age \(age)")
            let expired = try await get(client, "/_/exp:1000/w:100/\(Self.plain(origin, "rocket.jpg"))")
            #expect(expired.status == .notFound)
            // A cache buster: one download per value, not one per request.
            #expect(try await get(client, "/_/w:90/cb:1/\(Self.plain(origin, "chelsea.png"))").status == .ok)
            #expect(try await get(client, "/_/w:90/cb:1/\(Self.plain(origin, "chelsea.png"))").status == .ok)
            #expect(origin.requestCount(path: "/chelsea.png") == 1)
            #expect(try await get(client, "/_/w:90/cb:2/\(Self.plain(origin, "chelsea.png"))").status == .ok)
            #expect(origin.requestCount(path: "/chelsea.png") == 2)
        }
    }

    @Test func presetsOnlyPresetsTheSwitchAndTheSourceGuard() async throws {
        try await withServer(configure: {
            $0.imgproxy.presets = ["thumb": "rs:fill:64:64/f:png"]
            $0.requests.onlyPresets = true
        }) { client, origin in
            let (status, headers, body) = try await get(client, "/_/thumb/\(Self.plain(origin, "rocket.jpg"))")
            #expect(status == .ok && headers[.contentType] == "image/png")
            let image = try VipsImageDecoder().decode(body, recipe: ImageRecipe())
            #expect((image.width, image.height) == (64, 64))
            #expect(try await get(client, "/_/other/\(Self.plain(origin, "rocket.jpg"))").status == .badRequest)
        }
        try await withServer(configure: { $0.imgproxy.enabled = false }) { client, origin in
            let response = try await get(client, "/_/w:100/\(Self.plain(origin, "rocket.jpg"))")
            #expect(response.status == .notFound)
        }
        try await withServer(configure: { $0.origins.privateNetworkHosts = [] }) { client, origin in
            let response = try await get(client, "/_/w:100/\(Self.plain(origin, "rocket.jpg"))")
            #expect(response.status == .notFound)  // imgproxy's status for a refused source
            #expect(String(decoding: response.body, as: UTF8.self).contains("forbidden_source"))
        }
        try await withServer { client, _ in
            let bad = try await get(client, "/_/w:100/plain/file:///etc/passwd")
            #expect(bad.status == .badRequest)
            #expect(try JSONDecoder().decode(ErrorBody.self, from: bad.body).message.contains("http or https"))
        }
    }
}
