import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Imagery
@testable import ImageryServer
import ImageryTestSupport
import ImageryVips
import Testing

/// imgproxy's configuration (`IMGPROXY_*`) and its `local://` sources.
@Suite("imgproxy settings and local sources")
struct ImgproxySettingsTests {
    @Test func variablesAreReadWithImgproxysSyntax() throws {
        var configuration = ServerConfiguration()
        let report = try ImgproxyEnvironment.apply([
            "IMGPROXY_KEY": "746573742d6b6579, 746573742d6b657932", "IMGPROXY_SALT": "746573742d73616c74,746573742d73616c7432",
            "IMGPROXY_SIGNATURE_SIZE": "8", "IMGPROXY_PRESETS": "thumb=rs:fill:100:100/q:70, #skipped=w:1,default=q:90",
            "IMGPROXY_QUALITY": "70", "IMGPROXY_FORMAT_QUALITY": "webp=60, avif=50", "IMGPROXY_MAX_SRC_RESOLUTION": "12.5",
            "IMGPROXY_MAX_SRC_FILE_SIZE": "1048576", "IMGPROXY_MAX_ANIMATION_FRAMES": "50", "IMGPROXY_AUTO_WEBP": "true",
            "IMGPROXY_TTL": "3600", "IMGPROXY_ONLY_PRESETS": "", "IMGPROXY_WATERMARK_URL": "https://example.com/a.png", "IMGPROXY_NOT_A_SETTING": "1",
            "IMAGERY_PORT": "9000",
        ], to: &configuration)
        #expect(configuration.imgproxyKeys == ["746573742d6b6579", "746573742d6b657932"])
        #expect(configuration.imgproxySignatureSize == 8)
        #expect(configuration.imgproxyPresets == ["thumb": "rs:fill:100:100/q:70", "default": "q:90"])
        #expect(configuration.formatQualities == [.jpeg: 70, .webp: 60, .avif: 50, .jxl: 70, .heic: 70])
        #expect(configuration.maximumSourcePixels == 12_500_000 && configuration.maximumSourceBytes == 1_048_576)
        #expect(configuration.maximumFrames == 50 && configuration.imgproxyAutoFormat && configuration.responseMaxAge == 3600)
        #expect(configuration.onlyPresets == false)  // empty: unset, as imgproxy reads it
        #expect(configuration.watermarkFiles[ImgproxyEnvironment.watermarkName] == URL(string: "https://example.com/a.png"))
        #expect(report == .init(unsupported: [], unknown: ["IMGPROXY_NOT_A_SETTING"]))
    }

    /// Server, timeout, preset and format variables, and imgproxy's own variables this server does not
    /// honour reported as such (not as unknown).
    @Test func serverPresetAndFormatVariables() async throws {
        try await withTemporaryDirectory { directory in
            let presets = directory.appendingPathComponent("presets.txt")
            try "# thumbnails\nsmall=rs:fit:50:50\n\nbig = rs:fit:500:500/q:90\n".write(to: presets, atomically: true, encoding: .utf8)
            var configuration = ServerConfiguration()
            let report = try ImgproxyEnvironment.apply([
                "IMGPROXY_BIND": ":8081", "IMGPROXY_TIMEOUT": "20", "IMGPROXY_DOWNLOAD_TIMEOUT": "4", "IMGPROXY_MAX_CLIENTS": "100",
                "IMGPROXY_PRESETS_SEPARATOR": ";", "IMGPROXY_PRESETS": "a=w:10,h:20;b=q:50", "IMGPROXY_PRESETS_PATH": presets.path,
                "IMGPROXY_ENFORCE_WEBP": "true", "IMGPROXY_ENFORCE_AVIF": "1", "IMGPROXY_AUTO_ROTATE": "false",
                "IMGPROXY_STRIP_COLOR_PROFILE": "false", "IMGPROXY_PREFERRED_FORMATS": "png,jpeg", "IMGPROXY_SENTRY_DSN": "https://x",
            ], to: &configuration)
            #expect((configuration.host, configuration.port) == ("0.0.0.0", 8081))
            #expect(configuration.requestTimeout == .seconds(20) && configuration.originTimeout == .seconds(4) && configuration.maximumConnections == 100)
            #expect(configuration.imgproxyPresets == ["a": "w:10,h:20", "b": "q:50", "small": "rs:fit:50:50", "big": "rs:fit:500:500/q:90"])
            #expect(configuration.imgproxyEnforcedFormats == [.avif, .webp])
            #expect(!configuration.imgproxyAutoRotates && !configuration.imgproxyStripsColorProfile)
            #expect(configuration.imgproxyPreferredFormats == [.png, .jpeg])
            #expect(report == .init(unsupported: ["IMGPROXY_SENTRY_DSN"], unknown: []))
            // What they mean for a URL.
            let parameters = try ImgproxyOptions([], presets: [:]).parameters(
                source: "https://example.com/a.jpg", maximumSide: 1000, negotiates: false, defaults: .init(configuration)
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
        configuration.originTimeout = hangGuard
        _ = try ImgproxyEnvironment.apply(
            ["IMGPROXY_FALLBACK_IMAGE_URL": origin.url("chelsea.png").absoluteString, "IMGPROXY_WATERMARK_URL": origin.url("rocket.jpg").absoluteString],
            to: &configuration
        )
        let resolved = try await configuration.downloadingRemoteImages()
        #expect(resolved.fallbackImageFile.flatMap(ServerConfiguration.contents(of:)) == (try Fixtures.data("chelsea.png")))
        #expect(resolved.watermarkFiles[ImgproxyEnvironment.watermarkName].flatMap(ServerConfiguration.contents(of:)) == (try Fixtures.data("rocket.jpg")))
        #expect(origin.requestCount == 2)
        for (name, file) in [("the fallback image", "missing.png"), ("the fallback image", "README.md")] {
            var broken = ServerConfiguration()
            broken.originTimeout = hangGuard
            broken.fallbackImageFile = origin.url(file)
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
        _ = try ImgproxyEnvironment.apply(["IMGPROXY_WATERMARK_DATA": png, "IMGPROXY_FALLBACK_IMAGE_DATA": png], to: &configuration)
        try await withServer(configure: {
            ($0.watermarkFiles, $0.fallbackImageFile) = (configuration.watermarkFiles, configuration.fallbackImageFile)
        }) { client, origin in
            let (status, headers, _) = try await get(client, "/_/rs:fit:40:40/plain/\(origin.url("missing.jpg").absoluteString)")
            #expect(status == .ok && headers[HTTPField.Name(FallbackImage.header)!] == "1")
            let (marked, _, _) = try await get(client, "/_/rs:fit:40:40/wm:0.5/plain/\(origin.url("rocket.jpg").absoluteString)")
            #expect(marked == .ok)
        }
    }

    @Test(arguments: [
        ("IMGPROXY_BIND", "8080"), ("IMGPROXY_TIMEOUT", "10s"), ("IMGPROXY_PREFERRED_FORMATS", "png,psd"), ("IMGPROXY_WATERMARK_DATA", "not base64!"),
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
            ["IMGPROXY_LOCAL_FILESYSTEM_ROOT": "/nonexistent/images", "IMGPROXY_LOG_FORMAT": "json", "IMGPROXY_DEVELOPMENT_ERRORS_MODE": "1"],
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
            try FileManager.default.createDirectory(at: root.appendingPathComponent("sub"), withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: Fixtures.url("rocket.jpg"), to: root.appendingPathComponent("sub/rocket.jpg"))
            try FileManager.default.copyItem(at: Fixtures.url("chelsea.png"), to: directory.appendingPathComponent("secret.png"))
            try FileManager.default.createSymbolicLink(at: root.appendingPathComponent("escape.png"), withDestinationURL: directory.appendingPathComponent("secret.png"))
            try FileManager.default.createSymbolicLink(at: root.appendingPathComponent("inside.jpg"), withDestinationURL: root.appendingPathComponent("sub/rocket.jpg"))
            try await withServer(configure: { $0.localFilesystemRoot = root }) { client, _ in
                for path in ["local:///sub/rocket.jpg", "local:///sub/../sub/rocket.jpg", "local://anyhost/sub/rocket.jpg", "local:/inside.jpg"] {
                    let (status, headers, _) = try await get(client, "/_/w:100/plain/\(path)")
                    #expect(status == .ok && headers[.contentType] == "image/jpeg", "\(path)")
                }
                for path in ["local:///../secret.png", "local:///sub/../../secret.png", "local:///escape.png", "local:///nothing.png", "local:///sub"] {
                    let (status, _, body) = try await get(client, "/_/w:100/plain/\(path)")
                    #expect(status == .notFound, "\(path): \(status)")
                    #expect(!String(decoding: body, as: UTF8.self).contains(directory.path), "\(path): the body names a directory")
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
            $0.imgproxyAllowedOptions = ["w", "h", "pr", "jpgo", "exp"]
            $0.imgproxyPathPrefix = "/img"
            $0.time = time.source
        }) { client, origin in
            let source = "plain/" + origin.url("rocket.jpg").absoluteString
            let (pro, _, proBody) = try await get(client, "/img/_/jpgo:1/\(source)")
            #expect(pro == .badRequest && String(decoding: proBody, as: UTF8.self).contains("jpgo is an imgproxy Pro option"))
            let (forbidden, _, forbiddenBody) = try await get(client, "/img/_/w:10/bl:2/\(source)")
            #expect(forbidden == .badRequest && String(decoding: forbiddenBody, as: UTF8.self).contains("bl is not allowed here"))
            #expect(try await get(client, "/img/_/w:10/\(source)").status == .ok)
            #expect(try await get(client, "/_/w:10/\(source)").status == .notFound)  // without the prefix: no imgproxy URL
            // An expired URL under the prefix is 404, also once its answer is stored (time moved by hand past it).
            let future = Int(time.date.timeIntervalSince1970) + 8
            #expect(try await get(client, "/img/_/w:11/exp:\(future)/\(source)").status == .ok)
            time.advance(by: .seconds(9))
            #expect(try await get(client, "/img/_/w:11/exp:\(future)/\(source)").status == .notFound)
        }
    }

    /// TIFF sources are read (their first page), and TIFF is an output imgproxy URLs may ask for.
    @Test func tiffInAndOut() async throws {
        try await withServer { client, origin in
            let source = "plain/" + origin.url("chelsea.tiff").absoluteString
            let (status, headers, body) = try await get(client, "/_/rs:fit:80:80/\(source)")
            #expect(status == .ok && headers[.contentType] == "image/jpeg")  // an opaque TIFF source gives JPEG by default (imgproxy's preferred formats)
            let image = try VipsImageDecoder().decode(body, recipe: ImageRecipe())
            #expect((image.width, image.height) == (80, 53))
            let (tiffStatus, tiffHeaders, tiffBody) = try await get(client, "/_/rs:fit:80:80/\(source)@tiff")
            #expect(tiffStatus == .ok && tiffHeaders[.contentType] == "image/tiff" && ImageFormat(sniffing: tiffBody) == .tiff)
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
            let bytes = [UInt8](image.pixels), pixel = image.pixelFormat.bytesPerPixel
            func value(_ x: Int, _ y: Int) -> ArraySlice<UInt8> { bytes[(y * image.width + x) * pixel..<(y * image.width + x + 1) * pixel] }
            for (blockX, blockY) in [(0, 0), (3, 2), (9, 5)] {
                let corner = value(blockX * 10, blockY * 10)
                for y in blockY * 10..<min(image.height, blockY * 10 + 10) {
                    for x in blockX * 10..<blockX * 10 + 10 { #expect(value(x, y) == corner, "block \(blockX),\(blockY) at \(x),\(y)") }
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
            _ = try ImgproxyEnvironment.apply(["IMGPROXY_WATERMARK_PATH": mark.path, "IMGPROXY_WATERMARK_OPACITY": "1"], to: &configuration)
            try await withServer(configure: { $0.watermarkFiles = configuration.watermarkFiles }) { client, origin in
                let source = "plain/" + origin.url("rocket.jpg").absoluteString  // 640x427
                func image(_ options: String) async throws -> Image {
                    let (status, _, body) = try await get(client, "/_/\(options)/\(source)@png")
                    #expect(status == .ok, "\(options): \(String(decoding: body, as: UTF8.self))")
                    return try VipsImageDecoder().decode(body, recipe: ImageRecipe())
                }
                func red(_ image: Image, _ x: Int, _ y: Int) -> Bool { GeneratedImages.pixel(image, x, y) == [255, 0, 0] }
                // North-east, 10 px in from the right and 5 down: x 170...189, y 5...14 of a 200 px output.
                let corner = try await image("rs:fit:200:0/wm:1:noea:10:5")
                #expect(red(corner, 170, 5) && red(corner, 189, 14) && !red(corner, 190, 5) && !red(corner, 169, 5) && !red(corner, 170, 4))
                // dpr 2: the output 400 wide, offsets doubled, the mark its own size.
                let doubled = try await image("rs:fit:200:0/dpr:2/wm:1:noea:10:5")
                #expect(doubled.width == 400 && red(doubled, 360, 10) && red(doubled, 379, 19) && !red(doubled, 380, 10))
                // Scale 0.5: the mark fits in half of each side (100x67 of 200x134: 100x50), centred.
                let scaled = try await image("rs:fit:200:0/wm:1:ce:0:0:0.5")
                #expect(red(scaled, 50, 42) && red(scaled, 149, 91) && !red(scaled, 49, 67) && !red(scaled, 150, 67))
                // Replicated: copies with 10 px between them, one centred.
                let tiled = try await image("rs:fit:200:0/wm:1:re:10:10")
                #expect(red(tiled, 100, 67) && red(tiled, 5, 2) && !red(tiled, 85, 67) && !red(tiled, 100, 75))  // copies at x 30k...30k+19, y 20k+2...20k+11
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
                ["IMGPROXY_FALLBACK_IMAGE_PATH": Fixtures.url("chelsea.png").path, "IMGPROXY_FALLBACK_IMAGE_HTTP_CODE": "\(status)"], to: &configuration
            )
            try await withServer(configure: {
                ($0.fallbackImageFile, $0.fallbackImageStatus, $0.fallbackImageMaxAge) =
                    (configuration.fallbackImageFile, configuration.fallbackImageStatus, configuration.fallbackImageMaxAge)
            }) { client, origin in
                for (name, error) in [("missing.jpg", 404), ("README.md", 415)] {
                    for _ in 0..<2 {
                        let (answer, headers, body) = try await get(client, "/_/rs:fill:50:40/plain/\(origin.url(name).absoluteString)@png")
                        #expect(answer.code == (status == 0 ? error : 200), "\(name)")
                        #expect(headers[.init(FallbackImage.header)!] == "1")
                        #expect(headers[.cacheControl]?.contains("max-age=60") == true, "\(headers[.cacheControl] ?? "")")
                        let image = try VipsImageDecoder().decode(body, recipe: ImageRecipe())
                        #expect((image.width, image.height) == (50, 40))
                    }
                    #expect(origin.requestCount(path: "/\(name)") == 2, "\(name)")  // not remembered: each request tries the source
                }
                // A bad request keeps its own answer; so does a good source.
                let (bad, badHeaders, _) = try await get(client, "/_/rs:squash:50:40/plain/\(origin.url("missing.jpg").absoluteString)")
                #expect(bad == .badRequest && badHeaders[.init(FallbackImage.header)!] == nil)
                let (good, goodHeaders, _) = try await get(client, "/_/rs:fill:50:40/plain/\(origin.url("rocket.jpg").absoluteString)")
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
            let encoded = try await get(client, "/_/w:50/fn:c3VtbWVyIDIwMjY:1/\(source)@png")  // base64url of "summer 2026"
            #expect(encoded.headers[.contentDisposition] == "inline; filename=\"summer 2026.png\"")
            // Asked for nothing, it is still there, as imgproxy sends it with every image.
            #expect(try await get(client, "/_/w:50/\(source)").headers[.contentDisposition] == "inline; filename=\"rocket.jpg\"")
            // thumbor's URLs and native queries have none.
            #expect(try await get(client, "/unsafe/50x0/\(origin.url("rocket.jpg").absoluteString.dropFirst(7))").headers[.contentDisposition] == nil)
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
        try await withServer(configure: { ($0.imgproxyAllowsSecurityOptions, $0.maximumSourcePixels) = (true, 200_000) }) { client, origin in
            let source = "plain/" + origin.url("rocket.jpg").absoluteString  // 640x427: 273 280 pixels
            #expect(try await get(client, "/_/w:50/\(source)").status == .contentTooLarge)  // the server's own limit
            #expect(try await get(client, "/_/w:50/msr:100/\(source)").status == .contentTooLarge)  // not loosened
            let chelsea = "plain/" + origin.url("chelsea.png").absoluteString  // 451x300: 135 300 pixels
            #expect(try await get(client, "/_/w:50/msr:0.2/\(chelsea)").status == .ok)
            let (tight, _, body) = try await get(client, "/_/w:50/msr:0.1/\(chelsea)")
            #expect(tight == .unprocessableContent && String(decoding: body, as: UTF8.self).contains("over the request's limit of 100000"))
            #expect(try await get(client, "/_/w:50/msfs:1000/\(chelsea)").status == .unprocessableContent)
            let gif = "plain/" + origin.url("no-time-for-that.gif").absoluteString  // 24 frames of 14x25
            #expect(try await get(client, "/_/w:10/maf:10/\(gif)").status == .unprocessableContent)
            #expect(try await get(client, "/_/w:10/maf:30/\(gif)").status == .ok)
            #expect(try await get(client, "/_/w:10/mafr:0.0003/\(gif)").status == .unprocessableContent)  // 350 pixels a frame
        }
    }
}
