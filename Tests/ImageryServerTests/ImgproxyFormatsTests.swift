import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Imagery
@testable import ImageryServer
import ImageryTestSupport
import ImageryVips
import Testing

/// Formats imgproxy URLs read and write beyond the web's (BMP, ICO, HEIC, TIFF, 16-bit), and sources
/// answered as they are (`skip_processing`, `raw`).
@Suite("imgproxy formats and passthrough")
struct ImgproxyFormatsTests {
    /// BMP and ICO sources are read, BMP, ICO and HEIC written (an icon at most 256 on a side).
    @Test func bitmapsAndIconsAndHEIC() async throws {
        try await withServer { client, origin in
            let bmp = "plain/" + origin.url("bitmaps/rgb24.bmp").absoluteString  // 13x7
            let (status, headers, body) = try await get(client, "/_/rs:fit:26:0:1/\(bmp)")
            #expect(status == .ok && headers[.contentType] == "image/png")  // a BMP source gives PNG by default
            #expect(try VipsImageDecoder().inspect(body).width == 26)
            let photo = "plain/" + origin.url("chelsea.png").absoluteString  // 451x300
            for (format, type) in [("bmp", "image/bmp"), ("ico", "image/x-icon"), ("heic", "image/heic")] {
                let (status, headers, body) = try await get(client, "/_/rs:fit:300:300/\(photo)@\(format)")
                #expect(status == .ok && headers[.contentType] == type, "\(format): \(String(decoding: body.prefix(200), as: UTF8.self))")
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
        try await withServer(configure: { $0.imgproxySkipProcessingFormats = [.gif] }) { client, origin in
            let original = try Fixtures.data("chelsea.png")
            let png = "plain/" + origin.url("chelsea.png").absoluteString
            let (status, headers, body) = try await get(client, "/_/rs:fit:50:50/skp:png:jpg/\(png)")
            #expect(status == .ok && headers[.contentType] == "image/png" && body == original)
            let (_, _, converted) = try await get(client, "/_/rs:fit:50:50/skp:png/\(png)@webp")  // another format asked: processed
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
            // No image: refused, raw or not.
            let text = "plain/" + origin.url("README.md").absoluteString
            #expect(try await get(client, "/_/raw:1/\(text)").status == .unsupportedMediaType)
            #expect(try await get(client, "/_/skp:png/\(text)").status == .unsupportedMediaType)
            let (badStatus, _, badBody) = try await get(client, "/_/skp:svg/\(png)")
            #expect(badStatus == .badRequest && String(decoding: badBody, as: UTF8.self).contains("SVG"))
        }
    }

    /// raw still checks the header: an image over the pixel limit is not passed on.
    @Test func rawRefusesAnImageOverThePixelLimit() async throws {
        try await withServer(configure: { $0.maximumSourcePixels = 10_000 }) { client, origin in
            let png = "plain/" + origin.url("chelsea.png").absoluteString
            let (status, _, _) = try await get(client, "/_/raw:1/\(png)")
            #expect(status == .contentTooLarge)  // as for a processed request over the limit
        }
    }
}
