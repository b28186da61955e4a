import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Imagery
import ImageryTestSupport
import ImageryVips
import Testing

@testable import ImageryServer

/// Formats imgproxy URLs read and write beyond the web's (BMP, ICO, HEIC, TIFF, 16-bit), metadata kept
/// or stripped, and sources answered as they are (`skip_processing`, `raw`).
@Suite("imgproxy formats, metadata and passthrough")
struct ImgproxyFormatsTests {
    /// BMP and ICO sources are read, BMP, ICO and HEIC written (an icon at most 256 on a side).
    @Test func bitmapsAndIconsAndHEIC() async throws {
        try await withServer { client, origin in
            let bmp = "plain/" + origin.url("bitmaps/rgb24.bmp").absoluteString  // 13x7
            let (status, headers, body) = try await get(client, "/_/rs:fit:26:0:1/\(bmp)")
            // an opaque BMP source gives JPEG by default, as imgproxy
            #expect(status == .ok && headers[.contentType] == "image/jpeg")
            #expect(try VipsImageDecoder().inspect(body).width == 26)
            let photo = "plain/" + origin.url("chelsea.png").absoluteString  // 451x300
            for (format, type) in [("bmp", "image/bmp"), ("ico", "image/x-icon"), ("heic", "image/heic")] {
                let (status, headers, body) = try await get(client, "/_/rs:fit:300:300/\(photo)@\(format)")
                #expect(
                    status == .ok && headers[.contentType] == type,
                    "\(format): \(String(decoding: body.prefix(200), as: UTF8.self))")
                let header = try VipsImageDecoder().inspect(body)
                #expect(header.format.rawValue == format)
                #expect(header.width == (format == "ico" ? 256 : 300), "\(format)")
            }
            let icon = "plain/" + origin.url("bitmaps/icon-bitmap.ico").absoluteString
            let (iconStatus, _, iconBody) = try await get(client, "/_/rs:fit:64:64/\(icon)@png")
            #expect(iconStatus == .ok)
            #expect(try VipsImageDecoder().inspect(iconBody).width == 32)  // its largest picture, not enlarged
        }
    }

    /// A transparent source written as JPEG is laid onto white, as imgproxy's format matrix expects (its
    /// default background); the native query keeps libvips' black, and PNG keeps the alpha.
    @Test func aTransparentSourceWrittenAsJPEGIsLaidOntoWhite() async throws {
        // Left half transparent, right half opaque red.
        let png = try VipsImageEncoder().encode(
            GeneratedImages.image(width: 16, height: 8) { x, _ in x < 8 ? [0, 0, 0, 0] : [255, 0, 0, 255] },
            as: .png, options: EncodingOptions())
        let origin = try await TestOrigin.start { _ in
            TestOrigin.Response(status: 200, headers: [("Content-Type", "image/png")], body: png)
        }
        try await withServer(origin: origin) { client, origin in
            let source = origin.url("alpha.png").absoluteString
            let (status, headers, body) = try await get(client, "/_/plain/\(source)@jpg")
            #expect(status == .ok && headers[.contentType] == "image/jpeg")
            let image = try VipsImageDecoder().decode(body, recipe: ImageRecipe())
            #expect(GeneratedImages.pixel(image, 2, 4).allSatisfy { $0 > 245 }, "white where it was transparent")
            #expect(GeneratedImages.pixel(image, 13, 4)[0] > 230)  // red stays red
            let native = try await get(client, imageURI(origin, "alpha.png", "format=jpeg"))
            let nativeImage = try VipsImageDecoder().decode(native.body, recipe: ImageRecipe())
            #expect(GeneratedImages.pixel(nativeImage, 2, 4).allSatisfy { $0 < 10 }, "the native query: black")
            let kept = try await get(client, "/_/plain/\(source)@png")
            #expect(try VipsImageDecoder().decode(kept.body, recipe: ImageRecipe()).pixelFormat.hasAlpha)
        }
    }

    /// An output with no format asked keeps its source's only when it is a preferred one (JPEG, PNG, GIF by
    /// default, `IMGPROXY_PREFERRED_FORMATS`), else gets the first that holds it, as imgproxy does.
    @Test func preferredFormatsChooseTheOutputOfOtherSources() async throws {
        try await withServer { client, origin in
            for (name, type) in [
                ("chelsea.webp", "image/jpeg"), ("chelsea.png", "image/png"), ("rocket.jpg", "image/jpeg"),
                ("bitmaps/argb32-v5.bmp", "image/png"),
            ] {
                let (status, headers, _) = try await get(
                    client, "/_/rs:fit:40:40/plain/\(origin.url(name).absoluteString)")
                #expect(status == .ok && headers[.contentType] == type, "\(name)")
            }
        }
        var configuration = ServerConfiguration()
        _ = try ImgproxyEnvironment.apply(["IMGPROXY_PREFERRED_FORMATS": "webp,png"], to: &configuration)
        try await withServer(configure: { $0.imgproxy.preferredFormats = configuration.imgproxy.preferredFormats }) {
            client, origin in
            let (_, headers, _) = try await get(
                client, "/_/rs:fit:40:40/plain/\(origin.url("rocket.jpg").absoluteString)")
            #expect(headers[.contentType] == "image/webp")
        }
    }

    /// 16 bits kept for a 16-bit source with preserve_hdr, in PNG; reduced without it.
    @Test func preserveHDRKeepsSixteenBits() async throws {
        try await withTemporaryDirectory { directory in
            let png = try VipsImageEncoder().encode(GeneratedImages.deepGradient(), as: .png)
            try png.write(to: directory.appendingPathComponent("deep.png"))
            let origin = try await TestOrigin.serving(directory: directory)
            try await withServer(origin: origin) { client, origin in
                let source = "plain/" + origin.url("deep.png").absoluteString
                for (options, bits) in [("rs:fit:32:0/ph:1", 16), ("rs:fit:32:0", 8), ("rs:fit:32:0/ph:1/f:jpg", 8)] {
                    let (status, _, body) = try await get(client, "/_/\(options)/\(source)")
                    #expect(status == .ok)
                    #expect(try VipsImageDecoder().inspect(body).bitsPerChannel == bits, "\(options)")
                }
            }
        }
    }

    /// skip_processing: a source of a listed format is answered byte for byte unless another format is
    /// asked; others are processed. raw: any image source as it is. Neither passes on a non-image.
    @Test func skipProcessingAndRawAnswerTheSourceAsItIs() async throws {
        try await withServer(configure: { $0.imgproxy.skipProcessingFormats = [.gif] }) { client, origin in
            let original = try Fixtures.data("chelsea.png")
            let png = "plain/" + origin.url("chelsea.png").absoluteString
            let (status, headers, body) = try await get(client, "/_/rs:fit:50:50/skp:png:jpg/\(png)")
            #expect(status == .ok && headers[.contentType] == "image/png" && body == original)
            // another format asked: processed
            let (_, _, converted) = try await get(client, "/_/rs:fit:50:50/skp:png/\(png)@webp")
            #expect(ImageFormat(sniffing: converted) == .webp)
            #expect(try VipsImageDecoder().inspect(converted).width == 50)
            let (_, _, processed) = try await get(client, "/_/rs:fit:50:50/skp:jpg/\(png)")  // not listed: processed
            #expect(try VipsImageDecoder().inspect(processed).width == 50)
            let (rawStatus, rawHeaders, raw) = try await get(client, "/_/rs:fit:50:50/raw:1/\(png)@webp")
            #expect(rawStatus == .ok && rawHeaders[.contentType] == "image/png" && raw == original)
            // The server's own list (IMGPROXY_SKIP_PROCESSING_FORMATS).
            let gif = "plain/" + origin.url("chelsea.gif").absoluteString
            let (_, _, gifBody) = try await get(client, "/_/rs:fit:20:20/\(gif)")
            #expect(gifBody == (try Fixtures.data("chelsea.gif")))
            // No image: refused, raw or not (imgproxy's 422).
            let text = "plain/" + origin.url("README.md").absoluteString
            #expect(try await get(client, "/_/raw:1/\(text)").status == .unprocessableContent)
            #expect(try await get(client, "/_/skp:png/\(text)").status == .unprocessableContent)
            let (badStatus, _, badBody) = try await get(client, "/_/skp:psd/\(png)")
            #expect(badStatus == .badRequest && String(decoding: badBody, as: UTF8.self).contains("psd"))
        }
    }

    /// raw still checks the header: an image over the pixel limit is not passed on.
    @Test func rawRefusesAnImageOverThePixelLimit() async throws {
        try await withServer(configure: { $0.limits.maximumSourcePixels = 10_000 }) { client, origin in
            let png = "plain/" + origin.url("chelsea.png").absoluteString
            let (status, _, _) = try await get(client, "/_/raw:1/\(png)")
            #expect(status == .unprocessableContent)  // as for a processed request over the limit (imgproxy's 422)
        }
    }

    /// strip_metadata and keep_copyright both ways (and their IMGPROXY_* defaults): by default only the
    /// copyright notice stays; sm:0 keeps EXIF and XMP (the orientation made 1: the pixels are turned); kcr:0 drops all.
    @Test func metadataIsKeptOrStrippedAsAsked() async throws {
        try await withTemporaryDirectory { directory in
            var source = GeneratedImages.image(width: 60, height: 40, format: .rgb8) { x, y in
                [UInt8(x * 4), UInt8(y * 6), 90]
            }
            source.metadata.copyright = "Imagery tests"
            source.metadata.xmp = Data(
                #"<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"/></x:xmpmeta>"#
                    .utf8)
            try VipsImageEncoder().encode(source, as: .jpeg).write(to: directory.appendingPathComponent("tagged.jpg"))
            try Fixtures.data("rocket-exif6.jpg").write(to: directory.appendingPathComponent("turned.jpg"))
            let origin = try await TestOrigin.serving(directory: directory)
            let keepingAll = {
                var recipe = ImageRecipe()
                recipe.keptMetadata = .all
                return recipe
            }()
            try await withServer(origin: origin) { client, origin in
                let tagged = "plain/" + origin.url("tagged.jpg").absoluteString
                func metadata(_ options: String) async throws -> ImageMetadata {
                    let (status, _, body) = try await get(client, "/_/\(options)/\(tagged)")
                    #expect(status == .ok, "\(options)")
                    return try VipsImageDecoder().decode(body, recipe: keepingAll).metadata
                }
                let plain = try await metadata("rs:fit:30:30")
                #expect(plain.copyright == "Imagery tests" && plain.xmp == nil)
                let all = try await metadata("rs:fit:30:30/sm:0")
                #expect(
                    all.copyright == "Imagery tests"
                        && all.xmp.map { String(decoding: $0, as: UTF8.self).contains("xmpmeta") } == true)
                let none = try await metadata("rs:fit:30:30/kcr:0")
                #expect(none.copyright == nil && none.xmp == nil && none.exif == nil)
                // The orientation: the pixels are turned (427x640 stored, 6: shown 640x427), the EXIF kept says so.
                let (status, _, body) = try await get(
                    client, "/_/rs:fit:100:100/sm:0/plain/\(origin.url("turned.jpg").absoluteString)")
                let header = try VipsImageDecoder().inspect(body)
                #expect(status == .ok && header.orientation == 1 && (header.width, header.height) == (100, 67))
            }
            // The server's defaults, as imgproxy's variables set them.
            var configuration = ServerConfiguration()
            _ = try ImgproxyEnvironment.apply(["IMGPROXY_STRIP_METADATA": "false"], to: &configuration)
            let again = try await TestOrigin.serving(directory: directory)  // (a server run shuts its origin down)
            try await withServer(
                origin: again, configure: { $0.imgproxy.stripsMetadata = configuration.imgproxy.stripsMetadata }
            ) { client, origin in
                let (_, _, body) = try await get(
                    client, "/_/rs:fit:30:30/plain/\(origin.url("tagged.jpg").absoluteString)")
                #expect(try VipsImageDecoder().decode(body, recipe: keepingAll).metadata.xmp != nil)
            }
        }
    }

    /// An SVG source: passed on sanitised when no format is asked (imgproxy's default), rasterised when
    /// one is (and always with IMGPROXY_ALWAYS_RASTERIZE_SVG, and through the native query).
    @Test func svgSourcesArePassedOnSanitisedOrRasterised() async throws {
        try await withTemporaryDirectory { directory in
            let svg =
                #"<svg xmlns="http://www.w3.org/2000/svg" width="100" height="50" onload="alert(1)"><script>alert(2)</script><rect width="100" height="50" fill="red"/></svg>"#
            try Data(svg.utf8).write(to: directory.appendingPathComponent("logo.svg"))
            try Fixtures.data("chelsea.png").write(to: directory.appendingPathComponent("photo.png"))
            let origin = try await TestOrigin.serving(directory: directory)
            try await withServer(origin: origin) { client, origin in
                let source = "plain/" + origin.url("logo.svg").absoluteString
                let (status, headers, body) = try await get(client, "/_/rs:fit:50:50/\(source)")
                let text = String(decoding: body, as: UTF8.self)
                #expect(status == .ok && headers[.contentType] == "image/svg+xml")
                #expect(text.contains("<rect") && !text.contains("alert"), "\(text)")
                let (rasterStatus, rasterHeaders, raster) = try await get(client, "/_/rs:fit:50:50/\(source)@png")
                #expect(rasterStatus == .ok && rasterHeaders[.contentType] == "image/png")
                #expect(try VipsImageDecoder().inspect(raster).width == 50)
                let (nativeStatus, nativeHeaders, _) = try await get(
                    client, "/image?url=\(origin.url("logo.svg").absoluteString)&width=20")
                #expect(nativeStatus == .ok && nativeHeaders[.contentType] == "image/png")
                // No raster is made a vector (imgproxy's 422).
                let (vectorStatus, _, vectorBody) = try await get(
                    client, "/_/plain/\(origin.url("photo.png").absoluteString)@svg")
                #expect(vectorStatus == .unprocessableContent, "\(String(decoding: vectorBody, as: UTF8.self))")
            }
            let again = try await TestOrigin.serving(directory: directory)
            try await withServer(origin: again, configure: { $0.imgproxy.alwaysRasterizesSVG = true }) {
                client, origin in
                let (_, headers, _) = try await get(
                    client, "/_/rs:fit:50:50/plain/\(origin.url("logo.svg").absoluteString)")
                #expect(headers[.contentType] == "image/png")
            }
        }
    }
}
