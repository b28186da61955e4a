import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Imagery
import ImageryTestSupport
import ImageryVips
import Testing

@testable import ImageryServer

/// imgproxy's settings as the images show them: TIFF, pixelate, watermarks, the fallback image, file names, security options.
extension ImgproxySettingsTests {
    /// TIFF sources are read (their first page), and TIFF is an output imgproxy URLs may ask for.
    @Test func tiffInAndOut() async throws {
        try await withServer { client, origin in
            let source = "plain/" + origin.url("chelsea.tiff").absoluteString
            let (status, headers, body) = try await get(client, "/_/rs:fit:80:80/\(source)")
            // an opaque TIFF source gives JPEG by default (imgproxy's preferred formats)
            #expect(status == .ok && headers[.contentType] == "image/jpeg")
            let image = try VipsImageDecoder().decode(body, recipe: ImageRecipe())
            #expect((image.width, image.height) == (80, 53))
            let (tiffStatus, tiffHeaders, tiffBody) = try await get(client, "/_/rs:fit:80:80/\(source)@tiff")
            #expect(
                tiffStatus == .ok && tiffHeaders[.contentType] == "image/tiff"
                    && ImageFormat(sniffing: tiffBody) == .tiff)
            #expect(try VipsImageDecoder().inspect(tiffBody).width == 80)
        }
    }

    /// pixelate: blocks of one colour (from the output's top-left corner), the size kept.
    @Test func pixelateMakesBlocksOfOneColour() async throws {
        try await withServer { client, origin in
            let source = "plain/" + origin.url("chelsea.png").absoluteString
            let (status, _, body) = try await get(client, "/_/rs:fit:100:100/pix:10/\(source)@png")
            #expect(status == .ok)
            let image = try VipsImageDecoder().decode(body, recipe: ImageRecipe())
            #expect((image.width, image.height) == (100, 67))
            let bytes = [UInt8](image.pixels)
            let pixel = image.pixelFormat.bytesPerPixel
            func value(_ x: Int, _ y: Int) -> ArraySlice<UInt8> {
                bytes[(y * image.width + x) * pixel..<(y * image.width + x + 1) * pixel]
            }
            for (blockX, blockY) in [(0, 0), (3, 2), (9, 5)] {
                let corner = value(blockX * 10, blockY * 10)
                for y in blockY * 10..<min(image.height, blockY * 10 + 10) {
                    for x in blockX * 10..<blockX * 10 + 10 {
                        #expect(value(x, y) == corner, "block \(blockX),\(blockY) at \(x),\(y)")
                    }
                }
            }
            #expect(value(0, 0) != value(50, 30))  // not one colour for all
        }
    }

    /// `wm` with imgproxy's watermark image (IMGPROXY_WATERMARK_PATH): placed by gravity and offsets
    /// (× dpr), scaled to a fraction of the output, repeated with `re`, opacity times IMGPROXY_WATERMARK_OPACITY.
    @Test func watermarksAsImgproxyPlacesThem() async throws {
        try await withTemporaryDirectory { directory in
            let mark = directory.appendingPathComponent("mark.png")
            let red = GeneratedImages.image(width: 20, height: 10) { _, _ in [255, 0, 0, 255] }
            try VipsImageEncoder().encode(red, as: .png).write(to: mark)
            var configuration = ServerConfiguration()
            _ = try ImgproxyEnvironment.apply(
                ["IMGPROXY_WATERMARK_PATH": mark.path, "IMGPROXY_WATERMARK_OPACITY": "1"], to: &configuration)
            try await withServer(configure: { $0.rendering.watermarkFiles = configuration.rendering.watermarkFiles }) {
                client, origin in
                let source = "plain/" + origin.url("rocket.jpg").absoluteString  // 640x427
                func image(_ options: String) async throws -> Image {
                    let (status, _, body) = try await get(client, "/_/\(options)/\(source)@png")
                    #expect(status == .ok, "\(options): \(String(decoding: body, as: UTF8.self))")
                    return try VipsImageDecoder().decode(body, recipe: ImageRecipe())
                }
                func red(_ image: Image, _ x: Int, _ y: Int) -> Bool {
                    GeneratedImages.pixel(image, x, y) == [255, 0, 0]
                }
                // North-east, 10 px in from the right and 5 down: x 170...189, y 5...14 of a 200 px output.
                let corner = try await image("rs:fit:200:0/wm:1:noea:10:5")
                #expect(
                    red(corner, 170, 5) && red(corner, 189, 14) && !red(corner, 190, 5) && !red(corner, 169, 5)
                        && !red(corner, 170, 4))
                // dpr 2: the output 400 wide, offsets doubled, the mark its own size.
                let doubled = try await image("rs:fit:200:0/dpr:2/wm:1:noea:10:5")
                #expect(
                    doubled.width == 400 && red(doubled, 360, 10) && red(doubled, 379, 19) && !red(doubled, 380, 10))
                // Scale 0.5: the mark fits in half of each side (100x67 of 200x134: 100x50), centred.
                let scaled = try await image("rs:fit:200:0/wm:1:ce:0:0:0.5")
                #expect(red(scaled, 50, 42) && red(scaled, 149, 91) && !red(scaled, 49, 67) && !red(scaled, 150, 67))
                // Replicated: copies with 10 px between them, one centred.
                let tiled = try await image("rs:fit:200:0/wm:1:re:10:10")
                // copies at x 30k...30k+19, y 20k+2...20k+11
                #expect(red(tiled, 100, 67) && red(tiled, 5, 2) && !red(tiled, 85, 67) && !red(tiled, 100, 75))
                // Half opacity: neither red nor the photo.
                let faint = try await image("rs:fit:200:0/wm:0.5:nowe")
                #expect(!red(faint, 5, 5) && GeneratedImages.pixel(faint, 5, 5)[0] > 120)
            }
            // Without a watermark image, wm draws nothing, as imgproxy (the log says so once): the plain output.
            try await withServer { client, origin in
                let source = origin.url("rocket.jpg").absoluteString
                let (status, _, body) = try await get(client, "/_/rs:fit:100:0/wm:1/plain/\(source)@png")
                let (_, _, plain) = try await get(client, "/_/rs:fit:100:0/plain/\(source)@png")
                #expect(status == .ok && body == plain)
            }
        }
    }

    /// The fallback image answers a source that cannot be fetched or decoded, made as the request
    /// asked, with its status, a short max-age and a header; the next request tries the source again.
    @Test func theFallbackImageStandsInForAFailingSource() async throws {
        for status in [200, 0] {
            var configuration = ServerConfiguration()
            _ = try ImgproxyEnvironment.apply(
                [
                    "IMGPROXY_FALLBACK_IMAGE_PATH": Fixtures.url("chelsea.png").path,
                    "IMGPROXY_FALLBACK_IMAGE_HTTP_CODE": "\(status)",
                ], to: &configuration
            )
            try await withServer(configure: {
                ($0.fallback.image, $0.fallback.status, $0.fallback.maxAge) =
                    (
                        configuration.fallback.image, configuration.fallback.status,
                        configuration.fallback.maxAge
                    )
            }) { client, origin in
                for (name, error) in [("missing.jpg", 404), ("README.md", 422)] {  // imgproxy's statuses
                    for _ in 0..<2 {
                        let (answer, headers, body) = try await get(
                            client, "/_/rs:fill:50:40/plain/\(origin.url(name).absoluteString)@png")
                        #expect(answer.code == (status == 0 ? error : 200), "\(name)")
                        #expect(headers[.init(FallbackImage.header)!] == "1")
                        #expect(
                            headers[.cacheControl]?.contains("max-age=60") == true, "\(headers[.cacheControl] ?? "")")
                        let image = try VipsImageDecoder().decode(body, recipe: ImageRecipe())
                        #expect((image.width, image.height) == (50, 40))
                    }
                    // not remembered: each request tries the source
                    #expect(origin.requestCount(path: "/\(name)") == 2, "\(name)")
                }
                // A bad request keeps its own answer; so does a good source.
                let (bad, badHeaders, _) = try await get(
                    client, "/_/rs:squash:50:40/plain/\(origin.url("missing.jpg").absoluteString)")
                #expect(bad == .badRequest && badHeaders[.init(FallbackImage.header)!] == nil)
                let (good, goodHeaders, _) = try await get(
                    client, "/_/rs:fill:50:40/plain/\(origin.url("rocket.jpg").absoluteString)")
                #expect(good == .ok && goodHeaders[.init(FallbackImage.header)!] == nil)
            }
        }
    }

    /// `filename` and `return_attachment`: imgproxy's Content-Disposition (the output's extension), on
    /// a made response and on the same request answered from result storage; inline with the
    /// source's name when the URL asks nothing.
    /// (Straight into the router: the live test client will not send the raw `"` of the first path.)
    @Test func fileNamesAndAttachmentsAsImgproxyWritesThem() async throws {
        try await withServer(.router) { client, origin in
            let source = "plain/" + origin.url("rocket.jpg").absoluteString
            for _ in 0..<2 {
                let (status, headers, _) = try await get(client, "/_/w:50/fn:my%20\"pic\"/att:1/\(source)@webp")
                #expect(status == .ok && headers[.contentDisposition] == "attachment; filename=\"my%20%22pic%22.webp\"")
            }
            let named = try await get(client, "/_/w:50/att:0/\(source)")
            #expect(named.headers[.contentDisposition] == "inline; filename=\"rocket.jpg\"")
            // base64url of "summer 2026"
            let encoded = try await get(client, "/_/w:50/fn:c3VtbWVyIDIwMjY:1/\(source)@png")
            #expect(encoded.headers[.contentDisposition] == "inline; filename=\"summer 2026.png\"")
            // Asked for nothing, it is still there, as imgproxy sends it with every image.
            #expect(
                try await get(client, "/_/w:50/\(source)").headers[.contentDisposition]
                    == "inline; filename=\"rocket.jpg\"")
            // thumbor's URLs and native queries have none.
            #expect(
                try await get(client, "/unsafe/50x0/\(origin.url("rocket.jpg").absoluteString.dropFirst(7))").headers[
                    .contentDisposition] == nil)
            #expect(try await get(client, imageURI(origin, "rocket.jpg", "w=50")).headers[.contentDisposition] == nil)
            #expect(try await get(client, "/_/w:50/fn:bad!:1/\(source)").status == .badRequest)
        }
    }

    /// imgproxy's security options: refused unless IMGPROXY_ALLOW_SECURITY_OPTIONS; then they tighten
    /// the server's limits (422 for a source over them), never loosen them.
    @Test func securityOptionsOnlyTighten() async throws {
        try await withServer { client, origin in
            let (status, _, _) = try await get(client, "/_/msr:1/plain/\(origin.url("rocket.jpg").absoluteString)")
            #expect(status == .forbidden)
        }
        try await withServer(configure: {
            ($0.imgproxy.allowsSecurityOptions, $0.limits.maximumSourcePixels) = (true, 200_000)
        }
        ) { client, origin in
            let source = "plain/" + origin.url("rocket.jpg").absoluteString  // 640x427: 273 280 pixels
            // imgproxy's 422: over the server's own limit, which the URL does not loosen
            #expect(try await get(client, "/_/w:50/\(source)").status == .unprocessableContent)
            #expect(try await get(client, "/_/w:50/msr:100/\(source)").status == .unprocessableContent)
            let chelsea = "plain/" + origin.url("chelsea.png").absoluteString  // 451x300: 135 300 pixels
            #expect(try await get(client, "/_/w:50/msr:0.2/\(chelsea)").status == .ok)
            let (tight, _, body) = try await get(client, "/_/w:50/msr:0.1/\(chelsea)")
            #expect(
                tight == .unprocessableContent
                    && String(decoding: body, as: UTF8.self).contains("over the request's limit of 100000"))
            #expect(try await get(client, "/_/w:50/msfs:1000/\(chelsea)").status == .unprocessableContent)
            let gif = "plain/" + origin.url("no-time-for-that.gif").absoluteString  // 24 frames of 14x25
            #expect(try await get(client, "/_/w:10/maf:10/\(gif)").status == .unprocessableContent)
            #expect(try await get(client, "/_/w:10/maf:30/\(gif)").status == .ok)
            // 350 pixels a frame
            #expect(try await get(client, "/_/w:10/mafr:0.0003/\(gif)").status == .unprocessableContent)
        }
    }
}
