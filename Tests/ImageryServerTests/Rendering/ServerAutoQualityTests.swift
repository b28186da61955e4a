import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Imagery
import ImageryTestSupport
import ImageryVips
import Testing

@testable import ImageryServer

/// Qualities chosen per image through the server: `q=auto`, imgproxy's `autoquality`, a configured
/// default; the chosen quality sent and kept with the stored response.
@Suite("Image proxy: autoquality")
struct ServerAutoQualityTests {
    static let quality = HTTPField.Name(ImageAnswers.qualityHeader)!

    /// `q=auto` chooses within 70–80 (the defaults) and says which; the same bytes, ETag and quality
    /// from result storage, in memory and from disk after a restart.
    @Test func autoIsChosenOnceAndKept() async throws {
        try await withTemporaryDirectory { directory in
            let origin = try await TestOrigin.serving(directory: Fixtures.directory)
            defer { Task { try? await origin.shutdown() } }
            let uri = imageURI(origin, "rocket.jpg", "w=256&format=jpeg&q=auto")
            let configure: (inout ServerConfiguration) -> Void = { $0.caching.directory = directory }
            let box = ResultBox()
            try await serve(origin: origin, configure: configure) { client in
                let first = try await get(client, uri)
                #expect(first.status == .ok)
                let quality = try #require(first.headers[Self.quality].flatMap { Int($0) })
                #expect((70...80).contains(quality))
                let again = try await get(client, uri)
                #expect(
                    again.headers[.eTag] == first.headers[.eTag]
                        && again.headers[Self.quality] == first.headers[Self.quality])
                let fixed = try await get(client, imageURI(origin, "rocket.jpg", "w=256&format=jpeg&q=80"))
                #expect(fixed.headers[Self.quality] == nil)
                #expect(fixed.body.count >= first.body.count)
                box.set(first.headers[.eTag], first.headers[Self.quality])
            }
            let (etag, quality) = box.get()
            try await serve(origin: origin, configure: configure) { client in
                let restarted = try await get(client, uri)
                #expect(restarted.headers[.eTag] == etag && restarted.headers[Self.quality] == quality)
            }
        }
    }

    /// imgproxy's `autoquality` (`aq`): the `ssimulacra2` and `size` methods with their bounds, `none`
    /// against a configured default, and Pro's `dssim` and `ml` refused by name.
    @Test func imgproxysOption() async throws {
        try await withServer(configure: { $0.rendering.autoQuality.isDefault = true }) { client, origin in
            func get(_ options: String) async throws -> (status: HTTPResponse.Status, quality: Int?, body: Data) {
                let response = try await ImageryServerTests.get(
                    client, "/insecure/rs:fit:256:256/\(options)/\(ServerImgproxyTests.plain(origin, "rocket.jpg"))@jpg"
                )
                return (response.status, response.headers[Self.quality].flatMap { Int($0) }, response.body)
            }
            let wide = try await get("aq:ssimulacra2:60:30:90")
            let wideQuality = try #require(wide.quality)
            #expect(wide.status == .ok && (30...90).contains(wideQuality))
            let strict = try await get("aq:ssimulacra2:99:30:90")
            #expect(strict.quality == 90)
            let size = try await get("aq:size:4000:10:80")
            let sizeQuality = try #require(size.quality)
            #expect(size.body.count <= 4000 && (10...80).contains(sizeQuality))
            let defaulted = try await get("rs:fit:250:250")  // no quality asked: the configured search
            let defaultedQuality = try #require(defaulted.quality)
            #expect((70...80).contains(defaultedQuality))
            let asked = try await get("q:75")  // a quality asked: that quality
            #expect(asked.status == .ok && asked.quality == nil)
            let none = try await get("aq:none")
            #expect(none.status == .ok && none.quality == nil)
            for refused in ["aq:dssim:0.02:70:80:0.001", "aq:ml", "aq:best"] {
                let response = try await ImageryServerTests.get(
                    client, "/insecure/\(refused)/\(ServerImgproxyTests.plain(origin, "rocket.jpg"))")
                #expect(response.status == .badRequest, "\(refused)")
                #expect(String(decoding: response.body, as: UTF8.self).contains("aq"), "\(refused)")
            }
        }
    }

    /// A configured default applies to thumbor's URLs without `quality()`; the filter fixes the quality.
    /// (A request that names a quality gets it, in every syntax.)
    @Test func configuredDefaultForThumborURLs() async throws {
        try await withServer(configure: {
            $0.rendering.autoQuality.isDefault = true
            $0.rendering.autoQuality.minimum = 50
        }) { client, origin in
            let source = ServerThumborTests.source(origin, "rocket.jpg")
            let automatic = try await get(client, "/unsafe/256x0/\(source)")
            #expect((50...80).contains(try #require(automatic.headers[Self.quality].flatMap { Int($0) })))
            let fixed = try await get(client, "/unsafe/256x0/filters:quality(75)/\(source)")
            #expect(fixed.status == .ok && fixed.headers[Self.quality] == nil)
        }
    }

    /// `q` says what it takes.
    @Test func badQualityIsNamed() async throws {
        try await withServer { client, origin in
            let response = try await get(client, imageURI(origin, "rocket.jpg", "q=automatic"))
            #expect(response.status == .badRequest)
            #expect(String(decoding: response.body, as: UTF8.self).contains("or auto"))
        }
    }

    /// `IMGPROXY_AUTOQUALITY_*` with imgproxy's names and syntax; DSSIM and ML refused at start.
    @Test func imgproxyVariables() throws {
        var configuration = ServerConfiguration()
        let report = try ImgproxyEnvironment.apply(
            [
                "IMGPROXY_AUTOQUALITY_METHOD": "ssimulacra2", "IMGPROXY_AUTOQUALITY_TARGET": "75",
                "IMGPROXY_AUTOQUALITY_MIN": "60",
                "IMGPROXY_AUTOQUALITY_MAX": "85", "IMGPROXY_AUTOQUALITY_FORMAT_MIN": "avif=40",
                "IMGPROXY_AUTOQUALITY_FORMAT_MAX": "avif=50,webp=70",
                "IMGPROXY_AUTOQUALITY_ALLOWED_ERROR": "1.5", "IMGPROXY_AUTOQUALITY_MAX_RESOLUTION": "2",
                "IMGPROXY_AUTOQUALITY_JPEG_NET": "/x.pb",
            ], to: &configuration)
        let settings = configuration.rendering.autoQuality
        #expect(
            settings.isDefault && settings.target == .ssimulacra2(75) && settings.minimum == 60
                && settings.maximum == 85)
        #expect(settings.formatMinimums == [.avif: 40] && settings.formatMaximums == [.avif: 50, .webp: 70])
        #expect(settings.tolerance == 1.5 && settings.maximumPixels == 2_000_000)
        #expect(report.unsupported == ["IMGPROXY_AUTOQUALITY_JPEG_NET"])
        let avif = try #require(settings.autoQuality(nil, for: .avif))
        #expect(avif.minimum == 40 && avif.maximum == 50 && avif.target == .ssimulacra2(75))
        #expect(settings.autoQuality(.fixed, for: .jpeg) == nil)

        var sized = ServerConfiguration()
        _ = try ImgproxyEnvironment.apply(
            ["IMGPROXY_AUTOQUALITY_METHOD": "size", "IMGPROXY_AUTOQUALITY_TARGET": "10240"], to: &sized)
        #expect(sized.rendering.autoQuality.target == .bytes(10240))
        for environment in [
            ["IMGPROXY_AUTOQUALITY_METHOD": "dssim"], ["IMGPROXY_AUTOQUALITY_METHOD": "size"],
            ["IMGPROXY_AUTOQUALITY_TARGET": "120"],
        ] {
            var refused = ServerConfiguration()
            #expect(throws: ConfigurationFileError.self, "\(environment)") {
                try ImgproxyEnvironment.apply(environment, to: &refused)
            }
        }
    }
}

/// What one server run saw, for the next.
private final class ResultBox: @unchecked Sendable {
    private let lock = NSLock()
    private var values: (String?, String?) = (nil, nil)
    func set(_ etag: String?, _ quality: String?) { lock.withLock { values = (etag, quality) } }
    func get() -> (String?, String?) { lock.withLock { values } }
}
