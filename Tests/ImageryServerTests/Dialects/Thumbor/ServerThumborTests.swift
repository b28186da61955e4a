import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Imagery
import ImageryTestSupport
import ImageryVips
import Testing

@testable import ImageryServer

/// thumbor URLs served end to end: the same caches, guards and headers as `/image`, their own signatures.
@Suite("Image proxy: thumbor URLs")
struct ServerThumborTests {
    /// `127.0.0.1:PORT/NAME`, as thumbor URLs name an HTTP image.
    static func source(_ origin: TestOrigin, _ name: String) -> String {
        origin.url(name).absoluteString.replacingOccurrences(of: "http://", with: "")
    }

    @Test(
        arguments: [
            // options, width, height, content type (thumbor keeps the source's format)
            ("100x100", 100, 100, "image/jpeg"),
            ("200x0", 200, 133, "image/jpeg"),
            ("fit-in/200x200", 200, 133, "image/jpeg"),
            ("fit-in/1000x1000", 640, 427, "image/jpeg"),
            ("fit-in/1000x1000/filters:upscale()", 1000, 667, "image/jpeg"),
            ("full-fit-in/200x200", 300, 200, "image/jpeg"),
            ("adaptive-fit-in/100x200", 150, 100, "image/jpeg"),
            ("fit-in/200x200/filters:fill(white):format(png)", 200, 200, "image/png"),
            ("1000x100", 1000, 100, "image/jpeg"),
            ("10x10:110x60/-50x0/filters:quality(50)", 50, 25, "image/jpeg"),
            ("150x100/filters:rotate(90):format(webp)", 100, 150, "image/webp"),
        ] as [(String, Int, Int, String)])
    func servesThumborURLs(options: String, width: Int, height: Int, type: String) async throws {
        try await withServer { client, origin in
            let (status, headers, body) = try await get(
                client, "/unsafe/\(options)/\(Self.source(origin, "rocket.jpg"))")
            #expect(status == .ok, "\(options): \(String(decoding: body, as: UTF8.self))")
            #expect(headers[.contentType] == type, "\(options)")
            #expect(headers[.vary] == nil)
            let image = try VipsImageDecoder().decode(body, recipe: ImageRecipe())
            #expect((image.width, image.height) == (width, height), "\(options): \(image.width)x\(image.height)")
        }
    }

    /// The same source through a thumbor URL and the native query: one fetch. The same output: one
    /// variant, answered from result storage the second time. A JPEG thumbor shrinks is decoded as
    /// Pillow's draft decodes it (its partial last blocks kept), so a resized one is a variant of its own.
    @Test func sharesTheCachesWithTheNativeQuery() async throws {
        try await withServer { client, origin in
            let resized = try await get(
                client, "/unsafe/300x200/smart/filters:format(png)/\(Self.source(origin, "rocket.jpg"))")
            #expect(resized.status == .ok)
            let thumbor = try await get(client, "/unsafe/filters:format(png)/\(Self.source(origin, "rocket.jpg"))")
            #expect(thumbor.status == .ok)
            let native = try await get(client, imageURI(origin, "rocket.jpg", "format=png"))
            #expect(native.status == .ok)
            #expect(native.body == thumbor.body)
            #expect(native.headers[.eTag] == thumbor.headers[.eTag])
            #expect(origin.requestCount(path: "/rocket.jpg") == 1)
            let counts = try await metrics(client)
            #expect(lookups(counts, "response", "hit") == 1, "\(counts.filter { $0.key.contains("lookups") })")
        }
    }

    /// watermark() with a configured watermark: where the native query's watermark goes (the photo
    /// under it decoded as Pillow's draft decodes it, so not the same bytes).
    @Test func watermarksAConfiguredImage() async throws {
        try await withTemporaryDirectory { directory in
            let mark = directory.appendingPathComponent("logo.png")
            let red = GeneratedImages.image(width: 40, height: 20) { _, _ in [255, 0, 0, 255] }
            try VipsImageEncoder().encode(red, as: .png).write(to: mark)
            try await withServer(configure: { $0.rendering.watermarkFiles = ["logo": mark] }) { client, origin in
                let thumbor = try await get(
                    client,
                    "/unsafe/200x0/filters:watermark(logo.png,-10,10,0):format(png)/\(Self.source(origin, "rocket.jpg"))"
                )
                #expect(thumbor.status == .ok, "\(String(decoding: thumbor.body, as: UTF8.self))")
                let image = try VipsImageDecoder().decode(thumbor.body, recipe: ImageRecipe())
                #expect(GeneratedImages.pixel(image, 170, 15) == [255, 0, 0])  // 10 from the right, 10 from the top
                #expect(GeneratedImages.pixel(image, 20, 100) != [255, 0, 0])
                let native = try await get(
                    client,
                    imageURI(
                        origin, "rocket.jpg",
                        "w=200&format=png&watermark=logo&watermark_gravity=northeast&watermark_offset=10,10"))
                let nativeImage = try VipsImageDecoder().decode(native.body, recipe: ImageRecipe())
                #expect((nativeImage.width, nativeImage.height) == (image.width, image.height))
                for y in [0, 10, 15, 29, 30] {  // the mark's rows and the ones around it, at its left and right edges
                    for x in [149, 150, 151, 170, 189, 190, 191] {
                        #expect(
                            (GeneratedImages.pixel(nativeImage, x, y) == [255, 0, 0])
                                == (GeneratedImages.pixel(image, x, y) == [255, 0, 0]), "\(x),\(y)")
                    }
                }
            }
        }
    }

    /// fill(blur) and fill(auto): the bars of fit-in are the image blurred, or its median colour; fill(black) is black.
    @Test func fillsBarsFromTheImage() async throws {
        try await withServer { client, origin in
            func bars(_ fill: String) async throws -> (top: [UInt8], bottom: [UInt8], middle: [UInt8]) {
                let response = try await get(
                    client,
                    "/unsafe/fit-in/200x200/filters:fill(\(fill)):format(png)/\(Self.source(origin, "rocket.jpg"))")
                #expect(response.status == .ok, "\(fill): \(String(decoding: response.body, as: UTF8.self))")
                let image = try VipsImageDecoder().decode(response.body, recipe: ImageRecipe())
                // 200x133 in the middle, bars of 33 and 34
                #expect((image.width, image.height) == (200, 200), "\(fill)")
                return (
                    GeneratedImages.pixel(image, 100, 5), GeneratedImages.pixel(image, 100, 195),
                    GeneratedImages.pixel(image, 100, 100)
                )
            }
            let black = try await bars("black")
            #expect(black.top == [0, 0, 0] && black.bottom == [0, 0, 0])
            let median = try await bars("auto")
            #expect(median.top == median.bottom && median.top != [0, 0, 0], "\(median)")
            let blurred = try await bars("blur")
            #expect(blurred.top != [0, 0, 0] && blurred.top != median.top, "\(blurred)")
            // The image itself is the same (composited over the blurred copy: within rounding).
            #expect(median.middle == black.middle)
            #expect(
                zip(blurred.middle, black.middle).allSatisfy { abs(Int($0) - Int($1)) <= 2 },
                "\(blurred.middle) \(black.middle)")
        }
    }

    @Test func checksThumborSignaturesWhenAKeyIsSet() async throws {
        try await withServer(configure: { $0.thumbor.securityKey = "my-security-key" }) { client, origin in
            let path = "120x80/\(Self.source(origin, "rocket.jpg"))"
            let signature = ThumborSigner(key: "my-security-key").signature(of: Substring(path))
            #expect(try await get(client, "/\(signature)/\(path)").status == .ok)
            let unsafe = try await get(client, "/unsafe/\(path)")
            #expect(unsafe.status == .forbidden)
            #expect(try JSONDecoder().decode(ErrorBody.self, from: unsafe.body).error == "bad_signature")
            #expect(
                try await get(client, "/\(signature)/121x80/\(Self.source(origin, "rocket.jpg"))").status == .forbidden)
            let other = ThumborSigner(key: "another-key").signature(of: Substring(path))
            #expect(try await get(client, "/\(other)/\(path)").status == .forbidden)
        }
    }

    @Test func refusesUnsafeURLsWhenNativeURLsAreSigned() async throws {
        try await withServer(configure: { $0.requests.signingKey = "native-key" }) { client, origin in
            let unsafe = try await get(client, "/unsafe/120x80/\(Self.source(origin, "rocket.jpg"))")
            #expect(unsafe.status == .forbidden)
        }
    }

    @Test func canBeTurnedOffAndLeavesOtherPathsNotFound() async throws {
        try await withServer(configure: { $0.thumbor.enabled = false }) { client, origin in
            let off = try await get(client, "/unsafe/120x80/\(Self.source(origin, "rocket.jpg"))")
            #expect(off.status == .notFound)
        }
        try await withServer { client, _ in
            let missing = try await get(client, "/favicon.ico")
            #expect(missing.status == .notFound)
            #expect(try JSONDecoder().decode(ErrorBody.self, from: missing.body).error == "not_found")
        }
    }

    @Test func followsTheSourceGuardAndOnlyPresets() async throws {
        try await withServer(configure: { $0.origins.privateNetworkHosts = [] }) { client, origin in
            let refused = try await get(client, "/unsafe/120x80/\(Self.source(origin, "rocket.jpg"))")
            #expect(refused.status == .forbidden)
        }
        try await withServer(configure: {
            $0.requests.presets = ["small": "w=100"]
            $0.requests.onlyPresets = true
        }) { client, origin in
            let refused = try await get(client, "/unsafe/120x80/\(Self.source(origin, "rocket.jpg"))")
            #expect(refused.status == .badRequest)
        }
    }
}
