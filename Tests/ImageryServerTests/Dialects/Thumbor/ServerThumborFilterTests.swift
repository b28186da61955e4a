import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Imagery
import ImageryTestSupport
import ImageryVips
import Testing

@testable import ImageryServer

/// thumbor's filters end to end: watermarks and frames from URLs loaded as sources are (guard,
/// caches, one fetch), the response headers filters set, filtered pixels.
@Suite("Image proxy: thumbor filters")
struct ServerThumborFilterTests {
    /// An origin serving a photo, a red 40×20 watermark, a nine-patch frame and a text file.
    static func withOrigin(_ body: @escaping @Sendable (TestOrigin) async throws -> Void) async throws {
        try await withTemporaryDirectory { directory in
            try Fixtures.data("rocket.jpg").write(to: directory.appendingPathComponent("rocket.jpg"))
            try Fixtures.data("rocket-portrait.jpg").write(to: directory.appendingPathComponent("portrait.jpg"))
            let red = GeneratedImages.image(width: 40, height: 20) { _, _ in [255, 0, 0, 255] }
            try VipsImageEncoder().encode(red, as: .png).write(to: directory.appendingPathComponent("logo.png"))
            // 12 × 12: a 1-pixel border of marks around a 10 × 10 blue ring two pixels wide; stretchy in
            // the middle four columns and rows; content padding 2 on each side.
            let frame = GeneratedImages.image(width: 12, height: 12) { x, y in
                let black: [UInt8] = [0, 0, 0, 255]
                if y == 0 { return (4..<8).contains(x) ? black : [0, 0, 0, 0] }
                if x == 0 { return (4..<8).contains(y) ? black : [0, 0, 0, 0] }
                if y == 11 { return (3..<9).contains(x) ? black : [0, 0, 0, 0] }
                if x == 11 { return (3..<9).contains(y) ? black : [0, 0, 0, 0] }
                return [1, 2, 9, 10].contains(x) || [1, 2, 9, 10].contains(y) ? [0, 0, 255, 255] : [0, 0, 0, 0]
            }
            try VipsImageEncoder().encode(frame, as: .png).write(to: directory.appendingPathComponent("frame.png"))
            try Data("not an image".utf8).write(to: directory.appendingPathComponent("notes.png"))
            let origin = try await TestOrigin.serving(directory: directory)
            try await body(origin)
        }
    }

    static func source(_ origin: TestOrigin, _ name: String) -> String {
        origin.url(name).absoluteString.replacingOccurrences(of: "http://", with: "")
    }

    static func decoded(_ body: Data) throws -> Image {
        try VipsImageDecoder().decode(body, recipe: ImageRecipe())
    }

    /// One fetch of the watermark for every image and size that uses it; placed as thumbor places it.
    @Test func watermarksFromAURLLoadedOnceThroughTheCaches() async throws {
        try await Self.withOrigin { origin in
            try await withServer(origin: origin) { client, origin in
                let logo = Self.source(origin, "logo.png")
                for (options, name) in [("200x0", "rocket.jpg"), ("150x0", "rocket.jpg"), ("200x0", "portrait.jpg")] {
                    let path =
                        "/unsafe/\(options)/filters:watermark(\(logo),-10,10,0):format(png)/\(Self.source(origin, name))"
                    let (status, _, body) = try await get(client, path)
                    #expect(status == .ok, "\(String(decoding: body, as: UTF8.self))")
                    let image = try Self.decoded(body)
                    // 10 pixels from the right edge, 10 from the top.
                    #expect(GeneratedImages.pixel(image, image.width - 11, 15) == [255, 0, 0], "\(options) \(name)")
                    #expect(GeneratedImages.pixel(image, image.width - 9, 15) != [255, 0, 0], "\(options) \(name)")
                }
                #expect(origin.requestCount(path: "/logo.png") == 1)
                // A percentage, centred, at half transparency, sized to 50% of the width.
                let path =
                    "/unsafe/200x0/filters:watermark(\(logo),center,-0,50,50,none):format(png)/\(Self.source(origin, "rocket.jpg"))"
                let (status, _, body) = try await get(client, path)
                #expect(status == .ok)
                let image = try Self.decoded(body)
                let pixel = GeneratedImages.pixel(image, 100, image.height - 5)  // 100x50, flush with the bottom
                #expect(pixel[0] > 150 && pixel[1] < 150, "\(pixel)")
                #expect(origin.requestCount(path: "/logo.png") == 1)
            }
        }
    }

    /// A watermark URL is a source like any other: the guard refuses private addresses, a missing or
    /// broken one is a 400 (thumbor's status) naming it, never a half-made image.
    @Test func aWatermarkThatCannotBeLoadedIsAnErrorNamingIt() async throws {
        try await Self.withOrigin { origin in
            try await withServer(origin: origin) { client, origin in
                let image = Self.source(origin, "rocket.jpg")
                let cases: [(String, HTTPResponse.Status, String)] = [
                    ("10.0.0.1/logo.png", .forbidden, "10.0.0.1"),
                    ("\(Self.source(origin, "missing.png"))", .badRequest, "missing.png"),
                    ("\(Self.source(origin, "notes.png"))", .unprocessableContent, "notes.png"),
                ]
                for (mark, expected, named) in cases {
                    let (status, _, body) = try await get(
                        client, "/unsafe/200x0/filters:watermark(\(mark),0,0,0)/\(image)")
                    let message = String(decoding: body, as: UTF8.self)
                    #expect(status == expected, "\(mark): \(message)")
                    #expect(message.contains("watermark or frame image") && message.contains(named), "\(message)")
                }
                // The image itself is still served.
                #expect(try await get(client, "/unsafe/200x0/\(image)").status == .ok)
            }
        }
    }

    /// frame(): the nine-patch's padding grows the image; its ring is stretched around it.
    @Test func framesWithANinePatchFromAURL() async throws {
        try await Self.withOrigin { origin in
            try await withServer(origin: origin) { client, origin in
                let path =
                    "/unsafe/200x100/filters:frame(\(Self.source(origin, "frame.png"))):format(png)/\(Self.source(origin, "rocket.jpg"))"
                let (status, _, body) = try await get(client, path)
                #expect(status == .ok, "\(String(decoding: body, as: UTF8.self))")
                let image = try Self.decoded(body)
                #expect((image.width, image.height) == (204, 104))
                #expect(Array(GeneratedImages.pixel(image, 0, 0).prefix(3)) == [0, 0, 255])
                #expect(Array(GeneratedImages.pixel(image, 100, 1).prefix(3)) == [0, 0, 255])  // the stretched top edge
                #expect(Array(GeneratedImages.pixel(image, 203, 103).prefix(3)) == [0, 0, 255])
                #expect(Array(GeneratedImages.pixel(image, 100, 50).prefix(3)) != [0, 0, 255])  // the photo inside
            }
        }
    }

    /// Colour filters change the pixels (never a silent 200 with the image unfiltered); max_age sets
    /// the response's max-age; every filter's output is its own variant.
    @Test func filtersChangeTheResponse() async throws {
        try await withServer { client, origin in
            let image = ServerThumborTests.source(origin, "rocket.jpg")
            let plain = try Self.decoded(try await get(client, "/unsafe/120x80/filters:format(png)/\(image)").body)
            for filter in [
                "brightness(40)", "contrast(50)", "saturation(0)", "rgb(30,0,0)", "equalize()", "noise(60,3)",
                "round_corner(20,255,0,0)", "sharpen(2,1,true)", "blur(3)",
            ] {
                let (status, _, body) = try await get(client, "/unsafe/120x80/filters:format(png):\(filter)/\(image)")
                #expect(status == .ok, "\(filter)")
                let filtered = try Self.decoded(body)
                #expect(filtered.pixelFormat == plain.pixelFormat, "\(filter)")
                #expect(GeneratedImages.meanDifference(filtered, plain) > 0.5, "\(filter)")
            }
            let proportion = try Self.decoded(
                try await get(client, "/unsafe/120x80/filters:proportion(0.25)/\(image)").body)
            #expect((proportion.width, proportion.height) == (30, 20))
            let (_, headers, _) = try await get(client, "/unsafe/120x80/filters:max_age(77)/\(image)")
            let cacheControl = headers[.cacheControl] ?? ""
            let age = Int(headers[.age] ?? "0") ?? 0
            #expect(cacheControl.contains("max-age=\(77 + age)"), "\(cacheControl)")
            // A value thumbor's grammar takes (thumbor applies it) that is out of range here: a 400, not dropped.
            #expect(try await get(client, "/unsafe/120x80/filters:brightness(101)/\(image)").status == .badRequest)
        }
    }

    /// The colour names thumbor's engine knows (CSS's, through Pillow), and a colour filter with no
    /// colour skipped as thumbor skips it (named in the header), as thumbor 7.8.0 answered imagor's rows.
    @Test func cssColourNamesAndEmptyColourFilters() async throws {
        try await Self.withOrigin { origin in
            try await withServer(origin: origin) { client, origin in
                let image = Self.source(origin, "rocket.jpg")  // 640x427
                for (name, expected) in [
                    ("cyan", [0, 255, 255]), ("magenta", [255, 0, 255]), ("navy", [0, 0, 128]), ("lime", [0, 255, 0]),
                ] {
                    let (status, _, body) = try await get(
                        client, "/unsafe/fit-in/200x200/filters:fill(\(name)):format(png)/\(image)")
                    #expect(status == .ok, "\(name): \(String(decoding: body, as: UTF8.self))")
                    #expect(GeneratedImages.pixel(try Self.decoded(body), 100, 2).map(Int.init) == expected, "\(name)")
                }
                let skipped = HTTPField.Name("X-Imagery-Skipped-Filters")!
                for filter in ["background_color()", "fill()"] {
                    let (status, headers, _) = try await get(
                        client, "/unsafe/fit-in/200x200/filters:\(filter)/\(image)")
                    #expect(status == .ok && headers[skipped] == filter.dropLast(2).description, "\(filter)")
                }
            }
        }
    }

    /// thumbor's `trim:bottom-right` and `trim:top-left` look like imgproxy's `trim` option (`name:args`),
    /// whose first argument is a number: with a corner, the path is thumbor's.
    @Test func thumborsTrimWithACornerIsNotReadAsImgproxys() async throws {
        try await Self.withOrigin { origin in
            try await withServer(origin: origin) { client, origin in
                let image = Self.source(origin, "rocket.jpg")
                for corner in ["trim:bottom-right", "trim:top-left", "trim:top-left:10"] {
                    let (status, _, body) = try await get(client, "/unsafe/\(corner)/50x50:0x0/\(image)")
                    #expect(status == .ok, "\(corner): \(String(decoding: body, as: UTF8.self))")
                }
                // An imgproxy URL that is wrong stays imgproxy's 400.
                let (status, _, body) = try await get(client, "/unsafe/rs:nope/plain/http://\(image)")
                #expect(status == .badRequest && String(decoding: body, as: UTF8.self).contains("rs"))
            }
        }
    }

    /// A loaded filter whose arguments thumbor cannot read is skipped as thumbor skips it, never
    /// silently: the response names it (hits too), a counter counts each answer, a warning names each
    /// kind once; `thumborRefusesBadFilterArguments` refuses it instead.
    @Test func badFilterArgumentsAreSkippedAndSaid() async throws {
        let log = CapturedLog()
        let origin = try await TestOrigin.serving(directory: Fixtures.directory)
        let image = ServerThumborTests.source(origin, "rocket.jpg")
        let skippedField = HTTPField.Name("X-Imagery-Skipped-Filters")!
        do {
            try await serve(origin: origin, logger: log.logger) { client in
                let plain = try await get(client, "/unsafe/120x80/\(image)")
                #expect(plain.headers[skippedField] == nil)
                for _ in 0..<2 {  // made, then a hit
                    let (status, headers, body) = try await get(
                        client, "/unsafe/120x80/filters:brightness(1.5):sharpen()/\(image)")
                    #expect(status == .ok)
                    #expect(headers[skippedField] == "brightness, sharpen")
                    #expect(body == plain.body)
                }
                _ = try await get(client, "/unsafe/120x80/filters:sharpen():sepia(1)/\(image)")
                let metrics = String(decoding: try await get(client, "/metrics").body, as: UTF8.self)
                #expect(metrics.contains(#"imagery_thumbor_filters_skipped_total{filter="sharpen"} 3"#), "\(metrics)")
                #expect(metrics.contains(#"imagery_thumbor_filters_skipped_total{filter="brightness"} 2"#))
                #expect(metrics.contains(#"imagery_thumbor_filters_skipped_total{filter="other"} 1"#))
            }
            let warnings = log.lines(withMetadata: "skipped_filter", "sharpen")
            #expect(warnings.count == 1, "\(warnings)")
            #expect(warnings.first?.contains("sharpen takes an amount") == true, "\(warnings)")
            #expect(log.lines(withMetadata: "skipped_filter", "sepia").count == 1)
            try await serve(origin: origin, configure: { $0.thumbor.refusesBadFilterArguments = true }) { client in
                let (status, _, body) = try await get(client, "/unsafe/120x80/filters:brightness(1.5)/\(image)")
                #expect(status == .badRequest)
                #expect(String(decoding: body, as: UTF8.self).contains("brightness"))
            }
        } catch {
            try? await origin.shutdown()
            throw error
        }
        try await origin.shutdown()
    }

    /// meta/: thumbor's JSON for the source (read, not decoded), through the same signature check and
    /// caches; `callback=` wraps it; a source that fails is the source's error.
    @Test func answersMetaAsJSON() async throws {
        try await withServer { client, origin in
            let image = ServerThumborTests.source(origin, "rocket.jpg")
            let (status, headers, body) = try await get(client, "/unsafe/meta/300x200/\(image)")
            #expect(status == .ok && headers[.contentType] == "application/json")
            let json = try JSONSerialization.jsonObject(with: body) as? [String: [String: Any]]
            let source = json?["thumbor"]?["source"] as? [String: Any]
            #expect(
                source?["width"] as? Int == 300 && source?["height"] as? Int == 200
                    && source?["frameCount"] as? Int == 1)
            let operations = json?["thumbor"]?["operations"] as? [[String: Any]]
            #expect(operations?.map { $0["type"] as? String } == ["resize"])
            let (_, scriptHeaders, script) = try await get(client, "/unsafe/meta/300x200/\(image)?callback=show")
            #expect(
                scriptHeaders[.contentType] == "text/javascript"
                    && String(decoding: script, as: UTF8.self).hasPrefix("show({"))
            #expect(try await get(client, "/unsafe/meta/300x200/\(image)?callback=alert(1)").status == .badRequest)
            #expect(
                try await get(client, "/unsafe/meta/300x200/\(ServerThumborTests.source(origin, "missing.jpg"))").status
                    == .notFound)
            #expect(
                try await get(client, "/unsafe/meta/300x200/filters:brightness(500)/\(image)").status == .badRequest)
            #expect(origin.requestCount(path: "/rocket.jpg") == 1)  // the source once, through the caches
        }
        // Signed URLs only, when a thumbor key is set: meta too.
        try await withServer(configure: { $0.thumbor.securityKey = "my-security-key" }) { client, origin in
            let (status, _, _) = try await get(
                client, "/unsafe/meta/300x200/\(ServerThumborTests.source(origin, "rocket.jpg"))")
            #expect(status == .forbidden)
        }
    }
}
