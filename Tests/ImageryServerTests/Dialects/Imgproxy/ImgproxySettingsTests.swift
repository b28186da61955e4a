import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Imagery
import ImageryTestSupport
import ImageryVips
import Testing

@testable import ImageryServer

/// imgproxy's configuration (`IMGPROXY_*`) and its `local://` sources.
@Suite("imgproxy settings and local sources")
struct ImgproxySettingsTests {
    @Test func variablesAreReadWithImgproxysSyntax() throws {
        var configuration = ServerConfiguration()
        let report = try ImgproxyEnvironment.apply(
            [
                "IMGPROXY_KEY": "746573742d6b6579, 746573742d6b657932",
                "IMGPROXY_SALT": "746573742d73616c74,746573742d73616c7432",
                "IMGPROXY_SIGNATURE_SIZE": "8",
                "IMGPROXY_PRESETS": "thumb=rs:fill:100:100/q:70, #skipped=w:1,default=q:90",
                "IMGPROXY_QUALITY": "70", "IMGPROXY_FORMAT_QUALITY": "webp=60, avif=50",
                "IMGPROXY_MAX_SRC_RESOLUTION": "12.5",
                "IMGPROXY_MAX_SRC_FILE_SIZE": "1048576", "IMGPROXY_MAX_ANIMATION_FRAMES": "50",
                "IMGPROXY_AUTO_WEBP": "true",
                "IMGPROXY_TTL": "3600", "IMGPROXY_ONLY_PRESETS": "",
                "IMGPROXY_WATERMARK_URL": "https://example.com/a.png", "IMGPROXY_NOT_A_SETTING": "1",
                "IMAGERY_PORT": "9000",
            ], to: &configuration)
        #expect(configuration.imgproxy.keys == ["746573742d6b6579", "746573742d6b657932"])
        #expect(configuration.imgproxy.signatureSize == 8)
        #expect(configuration.imgproxy.presets == ["thumb": "rs:fill:100:100/q:70", "default": "q:90"])
        #expect(configuration.rendering.formatQualities == [.jpeg: 70, .webp: 60, .avif: 50, .jxl: 70, .heic: 70])
        #expect(
            configuration.limits.maximumSourcePixels == 12_500_000
                && configuration.limits.maximumSourceBytes == 1_048_576)
        #expect(
            configuration.limits.maximumFrames == 50 && configuration.imgproxy.autoFormat
                && configuration.caching.responseMaxAge == 3600)
        #expect(configuration.requests.onlyPresets == false)  // empty: unset, as imgproxy reads it
        #expect(
            configuration.rendering.watermarkFiles[ImgproxyEnvironment.watermarkName]
                == URL(string: "https://example.com/a.png"))
        #expect(report == .init(unsupported: [], unknown: ["IMGPROXY_NOT_A_SETTING"]))
    }

    /// Server, timeout, preset and format variables, and imgproxy's own variables this server does not
    /// honour reported as such (not as unknown).
    @Test func serverPresetAndFormatVariables() async throws {
        try await withTemporaryDirectory { directory in
            let presets = directory.appendingPathComponent("presets.txt")
            try "# thumbnails\nsmall=rs:fit:50:50\n\nbig = rs:fit:500:500/q:90\n".write(
                to: presets, atomically: true, encoding: .utf8)
            var configuration = ServerConfiguration()
            let report = try ImgproxyEnvironment.apply(
                [
                    "IMGPROXY_BIND": ":8081", "IMGPROXY_TIMEOUT": "20", "IMGPROXY_DOWNLOAD_TIMEOUT": "4",
                    "IMGPROXY_MAX_CLIENTS": "100",
                    "IMGPROXY_PRESETS_SEPARATOR": ";", "IMGPROXY_PRESETS": "a=w:10,h:20;b=q:50",
                    "IMGPROXY_PRESETS_PATH": presets.path,
                    "IMGPROXY_ENFORCE_WEBP": "true", "IMGPROXY_ENFORCE_AVIF": "1", "IMGPROXY_AUTO_ROTATE": "false",
                    "IMGPROXY_STRIP_COLOR_PROFILE": "false", "IMGPROXY_PREFERRED_FORMATS": "png,jpeg",
                    "IMGPROXY_SENTRY_DSN": "https://x",
                ], to: &configuration)
            #expect((configuration.listener.host, configuration.listener.port) == ("0.0.0.0", 8081))
            #expect(
                configuration.limits.requestTimeout == .seconds(20) && configuration.origins.timeout == .seconds(4)
                    && configuration.listener.maximumConnections == 100)
            #expect(
                configuration.imgproxy.presets == [
                    "a": "w:10,h:20", "b": "q:50", "small": "rs:fit:50:50", "big": "rs:fit:500:500/q:90",
                ])
            #expect(configuration.imgproxy.enforcedFormats == [.avif, .webp])
            #expect(!configuration.imgproxy.autoRotates && !configuration.imgproxy.stripsColorProfile)
            #expect(configuration.imgproxy.preferredFormats == [.png, .jpeg])
            #expect(report == .init(unsupported: ["IMGPROXY_SENTRY_DSN"], unknown: []))
            // What they mean for a URL.
            let parameters = try ImgproxyOptions([], presets: [:]).parameters(
                source: "https://example.com/a.jpg", maximumSide: 1000, negotiates: false,
                defaults: .init(configuration)
            )
            #expect(parameters.recipe.ignoresOrientation && parameters.recipe.keepsColorProfile)
            #expect(parameters.outputChoice(accept: "image/avif,image/webp") == .negotiated(.avif, animation: .webp))
            #expect(parameters.outputChoice(accept: "image/jpeg") == .preferred([.png, .jpeg]))
        }
    }

    /// The watermark and the fallback image given as URLs (imgproxy's `*_URL`): downloaded once at start;
    /// one that fails or is no image stops the start with its name.
    @Test func remoteWatermarkAndFallbackImagesAreDownloadedAtStart() async throws {
        let origin = try await TestOrigin.serving(directory: Fixtures.directory)
        var configuration = ServerConfiguration()
        // What is tested is what is downloaded, not how fast: other suites running alongside can keep the
        // cooperative pool busy for seconds (a 10 s origin timeout ran out in a full run here).
        configuration.origins.timeout = hangGuard
        _ = try ImgproxyEnvironment.apply(
            [
                "IMGPROXY_FALLBACK_IMAGE_URL": origin.url("chelsea.png").absoluteString,
                "IMGPROXY_WATERMARK_URL": origin.url("rocket.jpg").absoluteString,
            ],
            to: &configuration
        )
        let resolved = try await configuration.downloadingRemoteImages()
        #expect(
            resolved.fallback.image.flatMap(ServerConfiguration.contents(of:)) == (try Fixtures.data("chelsea.png")))
        #expect(
            resolved.rendering.watermarkFiles[ImgproxyEnvironment.watermarkName].flatMap(
                ServerConfiguration.contents(of:))
                == (try Fixtures.data("rocket.jpg")))
        #expect(origin.requestCount == 2)
        for (name, file) in [("the fallback image", "missing.png"), ("the fallback image", "README.md")] {
            var broken = ServerConfiguration()
            broken.origins.timeout = hangGuard
            broken.fallback.image = origin.url(file)
            await #expect {
                _ = try await broken.downloadingRemoteImages()
            } throws: { error in
                (error as? ConfigurationFileError)?.message.hasPrefix(name) == true
            }
        }
        try await origin.shutdown()
    }

    /// The watermark and the fallback image given inline (base64), as imgproxy's `*_DATA` variables give them.
    @Test func inlineWatermarkAndFallbackImages() async throws {
        var configuration = ServerConfiguration()
        let png = try Fixtures.data("chelsea.png").base64EncodedString()
        _ = try ImgproxyEnvironment.apply(
            ["IMGPROXY_WATERMARK_DATA": png, "IMGPROXY_FALLBACK_IMAGE_DATA": png], to: &configuration)
        try await withServer(configure: {
            ($0.rendering.watermarkFiles, $0.fallback.image) = (
                configuration.rendering.watermarkFiles, configuration.fallback.image
            )
        }) { client, origin in
            let (status, headers, _) = try await get(
                client, "/_/rs:fit:40:40/plain/\(origin.url("missing.jpg").absoluteString)")
            #expect(status == .ok && headers[HTTPField.Name(FallbackImage.header)!] == "1")
            let (marked, _, _) = try await get(
                client, "/_/rs:fit:40:40/wm:0.5/plain/\(origin.url("rocket.jpg").absoluteString)")
            #expect(marked == .ok)
        }
    }

    @Test(arguments: [
        ("IMGPROXY_BIND", "8080"), ("IMGPROXY_TIMEOUT", "10s"), ("IMGPROXY_PREFERRED_FORMATS", "png,psd"),
        ("IMGPROXY_WATERMARK_DATA", "not base64!"),
        ("IMGPROXY_SIGNATURE_SIZE", "64"), ("IMGPROXY_QUALITY", "high"), ("IMGPROXY_AUTO_WEBP", "yes"),
        ("IMGPROXY_PRESETS", "thumb"), ("IMGPROXY_FORMAT_QUALITY", "webp:60"), ("IMGPROXY_MAX_SRC_RESOLUTION", "-1"),
    ])
    func aBadValueNamesItsVariable(name: String, value: String) {
        var configuration = ServerConfiguration()
        #expect {
            try ImgproxyEnvironment.apply([name: value], to: &configuration)
        } throws: { error in
            (error as? ConfigurationFileError)?.message.hasPrefix("\(name)=\(value) is not valid") == true
        }
    }

    /// A local root that is no directory stops the start with its name; imgproxy's logging settings
    /// are reported as not applied, not taken silently.
    @Test func aMissingLocalRootAndLoggingSettingsAreSaid() throws {
        var configuration = ServerConfiguration()
        let report = try ImgproxyEnvironment.apply(
            [
                "IMGPROXY_LOCAL_FILESYSTEM_ROOT": "/nonexistent/images", "IMGPROXY_LOG_FORMAT": "json",
                "IMGPROXY_DEVELOPMENT_ERRORS_MODE": "1",
            ],
            to: &configuration
        )
        #expect(report.unsupported == ["IMGPROXY_LOG_FORMAT"] && report.unknown.isEmpty)
        #expect {
            try configuration.validate()
        } throws: { error in
            (error as? ConfigurationFileError)?.message.contains("/nonexistent/images is not a directory") == true
        }
    }

    @Test func keysAndSaltsMustPair() {
        var configuration = ServerConfiguration()
        #expect(throws: ConfigurationFileError.self) {
            try ImgproxyEnvironment.apply(["IMGPROXY_KEY": "00,11", "IMGPROXY_SALT": "22"], to: &configuration)
        }
    }

    /// `local:///PATH` reads files under the root and nothing outside it: `..` stops at the root, an
    /// absolute path is taken from the root, a symbolic link out of it is not found.
    @Test func localSourcesStayUnderTheirRoot() async throws {
        try await withTemporaryDirectory { directory in
            let root = directory.appendingPathComponent("root")
            try FileManager.default.createDirectory(
                at: root.appendingPathComponent("sub"), withIntermediateDirectories: true)
            try FileManager.default.copyItem(
                at: Fixtures.url("rocket.jpg"), to: root.appendingPathComponent("sub/rocket.jpg"))
            try FileManager.default.copyItem(
                at: Fixtures.url("chelsea.png"), to: directory.appendingPathComponent("secret.png"))
            try FileManager.default.createSymbolicLink(
                at: root.appendingPathComponent("escape.png"),
                withDestinationURL: directory.appendingPathComponent("secret.png"))
            try FileManager.default.createSymbolicLink(
                at: root.appendingPathComponent("inside.jpg"),
                withDestinationURL: root.appendingPathComponent("sub/rocket.jpg"))
            try await withServer(configure: { $0.origins.localFilesystemRoot = root }) { client, _ in
                for path in [
                    "local:///sub/rocket.jpg", "local:///sub/../sub/rocket.jpg", "local://anyhost/sub/rocket.jpg",
                    "local:/inside.jpg",
                ] {
                    let (status, headers, _) = try await get(client, "/_/w:100/plain/\(path)")
                    #expect(status == .ok && headers[.contentType] == "image/jpeg", "\(path)")
                }
                for path in [
                    "local:///../secret.png", "local:///sub/../../secret.png", "local:///escape.png",
                    "local:///nothing.png", "local:///sub",
                ] {
                    let (status, _, body) = try await get(client, "/_/w:100/plain/\(path)")
                    #expect(status == .notFound, "\(path): \(status)")
                    #expect(
                        !String(decoding: body, as: UTF8.self).contains(directory.path),
                        "\(path): the body names a directory")
                }
            }
            // Without a root, local:// is no source.
            try await withServer { client, _ in
                let (status, _, _) = try await get(client, "/_/w:100/plain/local:///sub/rocket.jpg")
                #expect(status == .badRequest)
            }
        }
    }

    /// imgproxy's source patterns: a prefix, `*` any run without `/` (longest first, given back as needed).
    @Test func sourcePatternsReplaceAndAllowAsImgproxys() {
        let rules = ImgproxySourceRules(
            replacements: [
                .init(pattern: .init("test://*/"), replacement: "test2:///${1}."),
                .init(pattern: .init("test2://"), replacement: "local://"),
                .init(pattern: .init("s://*.*/"), replacement: "https://$2.example/$1/"),
            ],
            baseURL: "", allowed: [.init("https://*.example.com/"), .init("local:///")]
        )
        #expect(rules.rewritten("test://geometry/png") == "local:///geometry.png")
        #expect(rules.rewritten("s://a.b.c/x.jpg") == "https://c.example/a.b/x.jpg")  // the first * takes what it can
        #expect(rules.rewritten("http://example.com/a.jpg") == "http://example.com/a.jpg")
        #expect(rules.allows("https://cdn.example.com/a.jpg") && rules.allows("local:///a.png"))
        #expect(!rules.allows("https://example.com.evil/a.jpg") && !rules.allows("https://a/b.example.com/a.jpg"))
        let based = ImgproxySourceRules(replacements: [], baseURL: "https://images.example/", allowed: [])
        #expect(based.rewritten("a/b.jpg") == "https://images.example/a/b.jpg")
        #expect(based.rewritten("https://images.example/c.jpg") == "https://images.example/c.jpg")
    }

    /// A URL that starts with an imgproxy Pro option is imgproxy's: 400 naming it, not 404; options
    /// outside IMGPROXY_ALLOWED_PROCESSING_OPTIONS are refused by name; a path prefix is honoured.
    @Test func proAndForbiddenOptionsAreNamed() async throws {
        let time = stillTime()
        try await withServer(configure: {
            $0.imgproxy.allowedOptions = ["w", "h", "pr", "jpgo", "exp"]
            $0.imgproxy.pathPrefix = "/img"
            $0.time = time.source
        }) { client, origin in
            let source = "plain/" + origin.url("rocket.jpg").absoluteString
            let (pro, _, proBody) = try await get(client, "/img/_/jpgo:1/\(source)")
            #expect(
                pro == .badRequest
                    && String(decoding: proBody, as: UTF8.self).contains("jpgo is an imgproxy Pro option"))
            let (forbidden, _, forbiddenBody) = try await get(client, "/img/_/w:10/bl:2/\(source)")
            #expect(
                forbidden == .badRequest
                    && String(decoding: forbiddenBody, as: UTF8.self).contains("bl is not allowed here"))
            #expect(try await get(client, "/img/_/w:10/\(source)").status == .ok)
            // without the prefix: no imgproxy URL
            #expect(try await get(client, "/_/w:10/\(source)").status == .notFound)
            // An expired URL under the prefix is 404, also once its answer is stored (time moved by hand past it).
            let future = Int(time.date.timeIntervalSince1970) + 8
            #expect(try await get(client, "/img/_/w:11/exp:\(future)/\(source)").status == .ok)
            time.advance(by: .seconds(9))
            #expect(try await get(client, "/img/_/w:11/exp:\(future)/\(source)").status == .notFound)
        }
    }
}
