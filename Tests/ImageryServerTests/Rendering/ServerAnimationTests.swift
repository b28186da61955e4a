import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Imagery
import ImageryServer
import ImageryTestSupport
import ImageryVips
import Testing

/// Animated sources through `/image`: GIF and WebP outputs keep every frame and its timing, other
/// formats get one frame, `frame=N` takes one, and an animation over the frame budget is 413.
@Suite("Image proxy animations")
struct ServerAnimationTests {
    /// 4 frames of 120 × 80, red, green, blue, yellow; delays 100 to 400 ms; played 3 times.
    static func withAnimatedOrigin(
        configure: @escaping (inout ServerConfiguration) -> Void = { _ in },
        _ body: @escaping @Sendable (any TestClientProtocol, TestOrigin) async throws -> Void
    ) async throws {
        try await withTemporaryDirectory { directory in
            let colors: [[UInt8]] = [[255, 0, 0, 255], [0, 255, 0, 255], [0, 0, 255, 255], [255, 255, 0, 255]]
            let animation = GeneratedImages.animation(
                width: 120, height: 80, delays: [100, 200, 300, 400], loopCount: 3
            ) { frame, _, _ in
                colors[frame]
            }
            var lossless = EncodingOptions(quality: 90)
            lossless.lossless = true
            try VipsImageEncoder().encode(animation, as: .gif, quality: 90).write(
                to: directory.appendingPathComponent("anim.gif"))
            try VipsImageEncoder().encode(animation, as: .webp, options: lossless).write(
                to: directory.appendingPathComponent("anim.webp"))
            try Fixtures.data("no-time-for-that.gif").write(to: directory.appendingPathComponent("tiny.gif"))
            let origin = try await TestOrigin.serving(directory: directory)
            try await withServer(origin: origin, configure: configure, body)
        }
    }

    static func decode(_ body: Data) throws -> Image {
        try VipsImageDecoder(rejectsCorruptData: true).decode(body, recipe: ImageRecipe())
    }

    @Test(
        arguments: [
            // source, query, content type, frames, size
            ("anim.gif", "w=60", "image/gif", 4, 60, 40),
            ("anim.gif", "w=60&format=gif", "image/gif", 4, 60, 40),
            ("anim.gif", "w=60&format=webp", "image/webp", 4, 60, 40),
            ("anim.webp", "w=60", "image/webp", 4, 60, 40),
            ("anim.webp", "w=60&h=60&format=gif&pad=5&bg=ffffff", "image/gif", 4, 70, 70),
            ("anim.gif", "w=60&format=png", "image/png", 1, 60, 40),
            ("anim.gif", "w=60&format=jpeg", "image/jpeg", 1, 60, 40),
            ("anim.gif", "w=60&frame=2", "image/png", 1, 60, 40),
            ("anim.gif", "w=60&frame=2&format=gif", "image/gif", 1, 60, 40),
            ("tiny.gif", "w=28&enlarge=1", "image/gif", 24, 28, 50),
        ] as [(String, String, String, Int, Int, Int)])
    func keepsTheFramesWhereTheOutputCanAnimate(
        source: String, query: String, type: String, frames: Int, width: Int, height: Int
    ) async throws {
        try await Self.withAnimatedOrigin { client, origin in
            let (status, headers, body) = try await get(client, imageURI(origin, source, query))
            #expect(status == .ok, "\(query): \(String(decoding: body, as: UTF8.self))")
            #expect(headers[.contentType] == type, "\(query)")
            let image = try Self.decode(body)
            #expect(image.frameCount == frames, "\(source)?\(query)")
            #expect((image.width, image.height) == (width, height), "\(source)?\(query)")
            if frames == 4 {
                #expect(image.animation == Image.Animation(frameDelays: [100, 200, 300, 400], loopCount: 3))
            }
            if query.contains("frame=2") {
                let pixel = GeneratedImages.pixel(image, 30, 20)
                #expect(pixel[2] > 200 && pixel[0] < 40, "frame 2 is blue: \(pixel)")
            }
        }
    }

    /// A browser that takes WebP gets an animated WebP (even when it prefers AVIF: stills get AVIF);
    /// one that takes only AVIF keeps the GIF's animation.
    @Test func negotiatesAFormatThatKeepsTheAnimation() async throws {
        try await Self.withAnimatedOrigin { client, origin in
            let uri = imageURI(origin, "anim.gif", "w=60")
            let webp = try await get(client, uri, headers: [.accept: "image/avif,image/webp,*/*"])
            #expect(webp.headers[.contentType] == "image/webp")
            #expect(try Self.decode(webp.body).frameCount == 4)
            let avifOnly = try await get(client, uri, headers: [.accept: "image/avif,*/*"])
            #expect(avifOnly.headers[.contentType] == "image/gif")
            #expect(try Self.decode(avifOnly.body).frameCount == 4)
            #expect(avifOnly.headers[.vary] == "Accept")
        }
    }

    @Test func refusesAnAnimationOverTheFrameBudgetButServesOneFrameOfIt() async throws {
        try await Self.withAnimatedOrigin(configure: { $0.limits.maximumFrames = 3 }) { client, origin in
            let (status, headers, body) = try await get(client, imageURI(origin, "anim.gif", "w=60"))
            #expect(status == .contentTooLarge)
            let error = try JSONDecoder().decode(ErrorBody.self, from: body)
            #expect(error.error == "source_too_large")
            #expect(error.message.contains("4 frames") && error.message.contains("frame=N"), "\(error.message)")
            #expect(headers[.cacheControl] == "no-store")
            let one = try await get(client, imageURI(origin, "anim.gif", "w=60&frame=3"))
            #expect(one.status == .ok)
            #expect(try Self.decode(one.body).frameCount == 1)
            // A still output needs one frame only: within the budget; so does /info.
            #expect(try await get(client, imageURI(origin, "anim.gif", "w=60&format=png")).status == .ok)
            let source =
                origin.url("anim.gif").absoluteString.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            #expect(try await get(client, "/info?url=\(source)").status == .ok)
        }
    }

    @Test(arguments: [
        ("frame=-1", "frame must be a whole number from 0 to 99999"), ("frame=x", "frame must be"),
        ("frame=4", "frame 4 is not in the image: it has 4 frames (0 to 3)"),
    ])
    func refusesABadFrame(query: String, message: String) async throws {
        try await Self.withAnimatedOrigin { client, origin in
            let (status, _, body) = try await get(client, imageURI(origin, "anim.gif", query))
            #expect(status == .badRequest)
            let error = try JSONDecoder().decode(ErrorBody.self, from: body)
            #expect(error.message.contains(message), "\(error.message)")
        }
    }

    /// `/info` counts the frames; a placeholder is made from the first.
    @Test func infoAndPlaceholdersOfAnAnimation() async throws {
        try await Self.withAnimatedOrigin { client, origin in
            let source =
                origin.url("anim.gif").absoluteString.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            let info = try await get(client, "/info?url=\(source)")
            #expect(info.status == .ok)
            let fields = try JSONSerialization.jsonObject(with: info.body) as? [String: Any]
            #expect(fields?["frames"] as? Int == 4)
            let lqip = try await get(client, imageURI(origin, "anim.gif", "placeholder=lqip"))
            #expect(lqip.status == .ok)
            let image = try Self.decode(lqip.body)
            #expect(image.frameCount == 1)
        }
    }
}
