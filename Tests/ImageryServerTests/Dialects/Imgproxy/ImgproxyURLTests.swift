import Foundation
import Imagery
import Testing

@testable import ImageryServer

/// imgproxy URLs as a parser, on their own: path → options → Imagery's recipe; imgproxy's signatures.
@Suite("imgproxy URLs")
struct ImgproxyURLTests {
    /// The key and salt of imgproxy's documentation; signatures computed by Python's `hmac` (HMAC-SHA256
    /// of salt + path, truncated, base64url without padding), as imgproxy documents them.
    static let key = "943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881"
    static let salt = "520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5"
    static let signed: [(path: String, size: Int)] = [
        (
            "/90UxdwGRAI2bpLSHKkZculJau5ahfxfS0h3fMuQAf40/rs:fill:300:400:0/g:sm/aHR0cDovL2V4YW1w/bGUuY29tL2ltYWdl/cy9jdXJpb3NpdHku/anBn.png",
            32
        ),
        ("/Mln3g3DAgEMHyojKBKd7jJrTufVzqyKp0sJTQfCGMM8/rs:fit:120:80/plain/http://127.0.0.1:8080/rocket.jpg@webp", 32),
        ("/9uPRH31v8RJm3M10bXGQzp34BsEFaaGc3qR5MpDSHcw/w:300/q:70/plain/http%3A%2F%2Fexample.com%2Fa%40b.jpg", 32),
        ("/OC18mvmqRLM/pr:thumb/aHR0cDovL2V4YW1wbGUuY29tL2EuanBn.png", 8),
    ]

    @Test(arguments: signed)
    func acceptsSignaturesAsImgproxyComputesThemAndNothingChanged(path: String, size: Int) throws {
        let signer = try #require(ImgproxySigner(keys: [Self.key], salts: [Self.salt], size: size))
        let url = try ImgproxyURL(path: Substring(path))
        #expect(signer.isValid(url.signature, for: url.signed))
        #expect(signer.signature(of: url.signed) == String(url.signature))
        // One character changed after the signature (the first option's name), or in it: refused.
        var changed = Array(path)
        let index = url.signature.count + 2
        changed[index] = changed[index] == "a" ? "b" : "a"
        let tampered = try ImgproxyURL(path: Substring(String(changed)))
        #expect(!signer.isValid(tampered.signature, for: tampered.signed))
        var signature = Array(url.signature)
        signature[3] = signature[3] == "A" ? "B" : "A"
        #expect(!signer.isValid(Substring(String(signature)), for: url.signed))
        // Another salt, or the signature of another size, is not this one.
        let otherSalt = try #require(ImgproxySigner(keys: [Self.key], salts: ["00"], size: size))
        #expect(!otherSalt.isValid(url.signature, for: url.signed))
        let otherSize = try #require(ImgproxySigner(keys: [Self.key], salts: [Self.salt], size: size == 32 ? 16 : 32))
        #expect(!otherSize.isValid(url.signature, for: url.signed))
    }

    /// imgproxy's own test vectors (security/signature_test.go): raw keys `test-key`, `test-salt`, path `asd`.
    @Test func matchesImgproxysOwnVectorsWithSeveralPairsAndTruncation() throws {
        let (key, salt) = ("746573742d6b6579", "746573742d73616c74")  // hex of test-key, test-salt
        let one = try #require(ImgproxySigner(keys: [key], salts: [salt]))
        #expect(one.isValid("oWaL7QoW5TsgbuiS9-5-DI8S3Ibbo1gdB2SteJh3a20", for: "asd"))
        let truncated = try #require(ImgproxySigner(keys: [key], salts: [salt], size: 8))
        #expect(truncated.isValid("oWaL7QoW5Ts", for: "asd"))
        #expect(!one.isValid("oWaL7QoW5Ts", for: "asd"))
        // Two pairs (key rotation): either signs.
        let two = try #require(
            ImgproxySigner(keys: [key, "746573742d6b657932"], salts: [salt, "746573742d73616c7432"]))
        #expect(two.isValid("jYz1UZ7j1BCdSzH3pZhaYf0iuz0vusoOTdqJsUT6WXI", for: "asd"))
        #expect(two.isValid("oWaL7QoW5TsgbuiS9-5-DI8S3Ibbo1gdB2SteJh3a20", for: "asd"))
        #expect(!two.isValid("dtLwhdnPPis", for: "asd"))
        // Not hex, or not pairs: no signer.
        #expect(ImgproxySigner(keys: ["xyz1"], salts: [salt]) == nil)
        #expect(ImgproxySigner(keys: [key], salts: []) == nil)
        #expect(ImgproxySigner(keys: [key], salts: [salt], size: 33) == nil)
    }

    @Test func splitsOptionsSourceAndExtension() throws {
        let plain = try ImgproxyURL(path: "/insecure/rs:fill:300:200/g:sm/plain/http://example.com/a.jpg@webp")
        #expect(plain.signature == "insecure")
        #expect(plain.signed == "/rs:fill:300:200/g:sm/plain/http://example.com/a.jpg@webp")
        #expect(
            plain.options == [
                .init(name: "rs", arguments: ["fill", "300", "200"]), .init(name: "g", arguments: ["sm"]),
            ])
        #expect(plain.source == "http://example.com/a.jpg")
        #expect(plain.fileExtension == "webp")
        // Percent-encoded plain source (its own ? and @ escaped), no extension.
        let encoded = try ImgproxyURL(path: "/_/w:100/plain/http%3A%2F%2Fexample.com%2Fa%40b.jpg%3Fv%3D1")
        #expect(encoded.source == "http://example.com/a@b.jpg?v=1")
        #expect(encoded.fileExtension == nil)
        // base64url, split by slashes, with an extension; and with no options at all.
        let base64 = try ImgproxyURL(
            path: "/sig/rs:fill:300:400:0/aHR0cDovL2V4YW1w/bGUuY29tL2ltYWdl/cy9jdXJpb3NpdHku/anBn.png")
        #expect(base64.source == "http://example.com/images/curiosity.jpg")
        #expect(base64.fileExtension == "png")
        let bare = try ImgproxyURL(path: "/sig/aHR0cDovL2V4YW1wbGUuY29tL2EuanBn")
        #expect(bare.options.isEmpty && bare.source == "http://example.com/a.jpg")
        // Only presets: the segment after the signature names presets.
        let presets = try ImgproxyURL(
            path: "/sig/thumb:small/plain/http://example.com/a.jpg", syntax: .init(onlyPresets: true))
        #expect(presets.options == [.init(name: "preset", arguments: ["thumb", "small"])])
    }

    @Test(arguments: [
        ("/sig", "an imgproxy URL is /SIGNATURE/OPTIONS/plain/SOURCE_URL"),
        ("/sig/w:100/", "ends with the source"),
        ("/sig/w:100/plain/http://a.com/b@c@d", "at most one @"),
        ("/sig/w:100/!!!notbase64", "not base64url"),
        ("/sig/w:100/aGVsbG8.png.webp", "at most one ."),
    ])
    func malformedURLsAreRefusedWithTheirReason(path: String, message: String) {
        #expect {
            try ImgproxyURL(path: Substring(path))
        } throws: { error in
            (error as? ServerError)?.message.contains(message) == true
        }
    }

    @Test func recognisesItsShapeApartFromThumbors() {
        #expect(ImgproxyURL.mayBe("/insecure/rs:fit:300:300/plain/http://a.com/b.jpg"))
        #expect(ImgproxyURL.mayBe("/unsafe/w:300/aHR0cDovL2EuY29tL2IuanBn"))
        #expect(ImgproxyURL.mayBe("/_/plain/http://a.com/b.jpg"))
        #expect(!ImgproxyURL.mayBe("/unsafe/300x200/smart/a.com/b.jpg"))  // thumbor's
        #expect(!ImgproxyURL.mayBe("/unsafe/filters:quality(80)/a.com/b.jpg"))  // thumbor's filters
        #expect(!ImgproxyURL.mayBe("/favicon.ico"))
        // thumbor's trim and crop hold colons too, and trim is an imgproxy option: the source decides.
        #expect(!ImgproxyURL.mayBe("/unsafe/trim:bottom-right:5/10x20:310x220/fit-in/100x100/a.com/b.jpg"))
        #expect(!ImgproxyURL.mayBe("/unsafe/trim:10/300x200/a.com/b.jpg"))
        #expect(!ImgproxyURL.mayBe("/unsafe/10x20:310x220/http%3A%2F%2Fa.com%2Fb.jpg"))
        #expect(ImgproxyURL.mayBe("/unsafe/trim:10/aHR0cDovL2EuY29tL2IuanBn.png"))
    }

    // MARK: Options → recipe

    /// Parameters for `options` (one URL's segments) on a plain source.
    static func parameters(_ options: String, presets: [String: String] = [:], maximumSide: Int = 8192) throws
        -> ImageParameters
    {
        var configuration = ServerConfiguration()
        configuration.imgproxy.presets = presets
        let dialect = try ImgproxyDialect(configuration)
        let url = try ImgproxyURL(path: Substring("/_/\(options)/plain/http://example.com/a.jpg"))
        return try ImgproxyOptions(url.options, presets: dialect.presets).parameters(
            source: url.source, maximumSide: maximumSide, negotiates: false)
    }

    typealias Thumbnail = ImageRequest.Thumbnail

    /// imgproxy's geometry options, one URL each, with the sizing they give (laid out by
    /// ``ImageRecipe/Sizing`` with imgproxy's arithmetic; sizes are checked end to end by the
    /// conformance suite and ServerImgproxyTests).
    @Test(
        arguments: [
            ("rs:fill:300:200", sizing(.fill, 300, 200)),
            ("resize:fit:300:200:1", sizing(.fit, 300, 200) { $0.enlarge = true }),
            ("rs:force:300:200", sizing(.force, 300, 200)),
            ("rs:fill-down:300:200", sizing(.fillDown, 300, 200)),
            ("rs:auto:300:200", sizing(.auto, 300, 200)),
            ("s:300:0", sizing(.fit, 300, 0)),
            ("size:0:200:t", sizing(.fit, 0, 200) { $0.enlarge = true }),
            ("rt:fill/w:300/h:200", sizing(.fill, 300, 200)),
            ("width:300/height:200/resizing_type:fill", sizing(.fill, 300, 200)),
            ("rs:fill:300:200/dpr:2", sizing(.fill, 300, 200) { $0.dpr = 2 }),
            ("rs:fill:300:200/enlarge:true", sizing(.fill, 300, 200) { $0.enlarge = true }),
            ("rs:fill:300:200/g:sowe", sizing(.fill, 300, 200) { $0.gravity = .init(.southWest) }),
            ("rs:fill:300:200/gravity:sm", sizing(.fill, 300, 200) { $0.gravity = .init(.smart(.attention)) }),
            (
                "rs:fill:300:200/g:fp:0.25:0.75",
                sizing(.fill, 300, 200) { $0.gravity = .init(.focalPoint(x: 0.25, y: 0.75)) }
            ),
            ("rs:fill:300:200/g:no:10:-0.5", sizing(.fill, 300, 200) { $0.gravity = .init(.north, x: 10, y: -0.5) }),
            ("s:300:200/ex:1", sizing(.fit, 300, 200) { $0.extend = .init(.center) }),
            ("rs:fit:300:200:0:1:so:0:5", sizing(.fit, 300, 200) { $0.extend = .init(.south, x: 0, y: 5) }),
            ("s:300:200/exar:1:we", sizing(.fit, 300, 200) { $0.extendAspectRatio = .init(.west) }),
            (
                "w:100/mw:200/mh:50/z:2:3",
                sizing(.fit, 100, 0) { ($0.minimumWidth, $0.minimumHeight, $0.zoomX, $0.zoomY) = (200, 50, 2, 3) }
            ),
            ("z:1.5", sizing(.fit, 0, 0) { ($0.zoomX, $0.zoomY) = (1.5, 1.5) }),
            ("w:300/mrd:100", sizing(.fit, 300, 0) { $0.maximumResultSide = 100 }),
            ("c:300:200", sizing(.fit, 0, 0) { $0.crop = .init(width: 300, height: 200) }),
            (
                "g:we/c:0.5:0",
                sizing(.fit, 0, 0) {
                    ($0.gravity, $0.crop) = (.init(.west), .init(width: 0.5, height: 0, gravity: .init(.west)))
                }
            ),
            (
                "c:300:200:noea:5:6",
                sizing(.fit, 0, 0) { $0.crop = .init(width: 300, height: 200, gravity: .init(.northEast, x: 5, y: 6)) }
            ),
            (
                "pd:1:2:3/dpr:2",
                sizing(.fit, 0, 0) { ($0.padding, $0.dpr) = (.init(top: 1, right: 2, bottom: 3, left: 2), 2) }
            ),
            ("padding:10:20", sizing(.fit, 0, 0) { $0.padding = .init(top: 10, right: 20, bottom: 10, left: 20) }),
        ] as [(String, ImageRecipe.Sizing)])
    func geometryOptionsGiveTheirSizing(options: String, sizing: ImageRecipe.Sizing) throws {
        #expect(try Self.parameters(options).recipe.sizing == sizing, "\(options)")
    }

    /// A sizing with the server's output limit (every imgproxy URL's largest side), changed by `change`.
    static func sizing(
        _ mode: ImageRecipe.Sizing.Mode, _ width: Int, _ height: Int,
        _ change: (inout ImageRecipe.Sizing) -> Void = { _ in }
    ) -> ImageRecipe.Sizing {
        var sizing = ImageRecipe.Sizing()
        (sizing.mode, sizing.width, sizing.height, sizing.maximumResultSide) = (mode, width, height, 8192)
        change(&sizing)
        return sizing
    }

    @Test func pixelOptionsGiveTheirRecipe() throws {
        func recipe(_ options: String) throws -> ImageRecipe { try Self.parameters(options).recipe }
        #expect(try recipe("rot:90/c:300:200:no").rotation == .quarter)
        #expect(try recipe("rot:-90").rotation == .threeQuarters)
        #expect(try recipe("rotate:450").rotation == .quarter)
        let flipped = try recipe("flip:1:1")
        #expect(flipped.flop && flipped.flip)
        #expect(try recipe("t:10").trim == .init(threshold: 10))
        #expect(try recipe("trim:10:ff00ff").trim == .init(threshold: 10, color: .init(hex: "ff00ff")))
        #expect(try recipe("trim:10:f0f").trim == .init(threshold: 10, color: .init(hex: "ff00ff")))
        #expect(try recipe("bg:255:0:128").background == .init(red: 255, green: 0, blue: 128))
        #expect(try recipe("background:ff0080").background == .init(red: 255, green: 0, blue: 128))
        #expect(try recipe("bg:f00").background == .init(red: 255, green: 0, blue: 0))
        #expect(try recipe("bg:ff0080/bg:").background == nil)
        #expect(try recipe("bl:2.5").blur == 2.5)
        #expect(try recipe("blur:0").blur == nil)
        #expect(try recipe("sh:0.7").sharpen == 0.7)
        #expect(try recipe("scp:0").keepsColorProfile)
        #expect(try recipe("strip_color_profile:1").keepsColorProfile == false)
        var plain = ImageRecipe()
        plain.sizing = Self.sizing(.fit, 0, 0)
        #expect(try recipe("sm:1/kcr:1/ar:1") == plain)
    }

    /// imgproxy's path normalisation (its handlers/path_test.go vectors): the path after the
    /// signature as imgproxy reads (and signs) it.
    @Test(arguments: [
        (
            "/rs:fill:300:200/plain/https:/example.com/path/to/image.jpg",
            "/rs:fill:300:200/plain/https://example.com/path/to/image.jpg"
        ),
        (
            "/rs%3Afill%3A300%3A200/plain/https://example.com/path/to/image.jpg",
            "/rs:fill:300:200/plain/https://example.com/path/to/image.jpg"
        ),
        ("/rs%3Afill%3A300%3A200/abc/abc", "/rs:fill:300:200/abc/abc"),
        ("/plain/local:/image.jpg", "/plain/local:///image.jpg"),
        ("//rs:fill:300:200/plain/http:/example.com/image.jpg", "/rs:fill:300:200/plain/http://example.com/image.jpg"),
        ("//plain/http://example.com/image.jpg", "/plain/http://example.com/image.jpg"),
        ("/rs:fill:300:200/plain/example.com/image.jpg", "/rs:fill:300:200/plain/example.com/image.jpg"),
        ("//http:/example.com/image.jpg", "/http:/example.com/image.jpg"),
        ("/plain/http:/test", "/plain/http://test"),
        ("/plain/http:", "/plain/http:"),
    ])
    func pathsAreNormalisedAsImgproxyDoes(path: String, normalized: String) {
        #expect(ImgproxyURL.normalized(Substring(path)) == Substring(normalized))
    }

    @Test func outputOptionsGiveTheirEncoding() throws {
        let quality = try Self.parameters("q:70/mb:50000/f:webp")
        #expect(quality.encoding == EncodingOptions(quality: 70, maximumBytes: 50_000, flattensOnto: .white))
        #expect(quality.format == .webp)
        #expect(try Self.parameters("quality:0").encoding.quality == nil)
        #expect(try Self.parameters("ext:jpg").format == .jpeg)
        #expect(try Self.parameters("format:avif").format == .avif)
        let perFormat = try Self.parameters("fq:jpeg:85:webp:70")
        #expect(perFormat.formatQualities == [.jpeg: 85, .webp: 70])
        #expect(perFormat.encoding(for: .webp).quality == 70)
        #expect(perFormat.encoding(for: .png).quality == nil)
        // quality wins, as in imgproxy
        #expect(try Self.parameters("q:60/fq:webp:70").encoding(for: .webp).quality == 60)
        #expect(try Self.parameters("cb:v2").cacheBuster == "v2")
        #expect(try Self.parameters("cb:v2").responseKey != Self.parameters("cb:v3").responseKey)
        // A later option overrides an earlier one.
        #expect(try Self.parameters("q:50/q:60").encoding.quality == 60)
    }

    @Test func presetsExpandWhereTheyAreNamedAndDefaultFirst() throws {
        let presets = [
            "thumb": "rs:fill:100:100/q:70", "webp": "f:webp", "default": "q:90/bg:ffffff", "loop": "pr:loop/w:10",
        ]
        let thumb = try Self.parameters("pr:thumb", presets: presets)
        #expect(thumb.recipe.sizing == Self.sizing(.fill, 100, 100))
        #expect(thumb.encoding.quality == 70)  // the preset's, over default's
        #expect(thumb.recipe.background == .white)  // default's
        let both = try Self.parameters("preset:thumb:webp/q:40", presets: presets)
        #expect(both.format == .webp && both.encoding.quality == 40)
        #expect(try Self.parameters("pr:loop", presets: presets).recipe.sizing?.width == 10)  // recursion skipped
        #expect(throws: ServerError.self) { try Self.parameters("pr:nope", presets: presets) }
        #expect(throws: ConfigurationFileError.self) {
            var configuration = ServerConfiguration()
            configuration.imgproxy.presets = ["bad": "not-an-option"]
            _ = try ImgproxyDialect(configuration)
        }
    }

    @Test func expiresRefusesAPastTimestamp() throws {
        let url = try ImgproxyURL(path: "/_/exp:1000/w:10/plain/http://example.com/a.jpg")
        #expect {
            try ImgproxyOptions(url.options, now: 2000)
        } throws: { error in
            (error as? ServerError)?.status == .notFound
        }
        #expect(try ImgproxyOptions(url.options, now: 500).expires == 1000)
    }

    /// One message per bad value, naming imgproxy's option.
    @Test(arguments: [
        ("rs:squash:100:100", "imgproxy rs: squash is not one of fit, fill, fill-down, force, auto"),
        ("w:-1", "imgproxy w: -1 is not a whole number"),
        ("dpr:0", "imgproxy dpr: 0 is not a number above 0"), ("dpr:1000", "at most 100"),
        ("g:up", "imgproxy g: up is not a gravity"),
        ("g:sm:10", "imgproxy g has the wrong number of arguments"),
        ("ex:1:sm", "imgproxy ex: sm is not a gravity"),
        ("g:fp:2:0.5", "imgproxy g: 2 is not a fraction from 0 to 1"),
        ("rot:45", "imgproxy rot: 45 is not a multiple of 90"),
        ("bg:300:0:0", "imgproxy bg: 300 is not a number from 0 to 255"),
        ("q:101", "imgproxy q: 101 is not a whole number from 0 to 100"),
        ("fq:webp", "pairs of a format and a quality"),
        ("f:psd", "imgproxy f: psd is not a format written here"),
        ("f:heif", "imgproxy f: heif is not a format written here"),
        ("ar:1:1", "imgproxy ar has the wrong number of arguments"),
        ("wm:2", "imgproxy wm: 2 is not an opacity from 0 to 1"),
        ("wm:1:sm", "imgproxy wm: sm is not a watermark position"), ("jpgo:1", "jpgo is an imgproxy Pro option"),
        ("aq:dssim", "imgproxy aq: dssim is not a method measured here"),
        ("nope:1", "imgproxy option nope is unknown"),
        ("w:1:2", "imgproxy w has the wrong number of arguments"),
    ])
    func badOptionsAreRefusedWithTheirName(options: String, message: String) {
        #expect {
            try Self.parameters(options)
        } throws: { error in
            guard let error = error as? ServerError, error.status == .badRequest else { return false }
            if !error.message.contains(message) { Issue.record("\(options): \(error.message)") }
            return true
        }
    }

    /// imgproxy's own cases of `Content-Disposition` (`httpheaders/cdv_test.go`) that a processed
    /// image can meet, whose extension is always the output's: the source's name, `image` when it has
    /// none, `filename`, `return_attachment`, a quote escaped. Every imgproxy image has one.
    static let dispositions: [(path: String, contentType: String, expected: String)] = [
        ("/_/plain/http://example.com/test.jpg", "image/jpeg", "inline; filename=\"test.jpg\""),
        ("/_/plain/http://example.com/path/to/", "image/png", "inline; filename=\"image.png\""),
        ("/_/fn:example/plain/http://example.com/path/to/", "image/png", "inline; filename=\"example.png\""),
        ("/_/plain/http://example.com/path/to/face.png", "image/jpeg", "inline; filename=\"face.jpg\""),
        ("/_/fn:face/plain/http://example.com/path/to/123.png", "image/jpeg", "inline; filename=\"face.jpg\""),
        ("/_/att:1/plain/http://example.com/test.jpg", "image/jpeg", "attachment; filename=\"test.jpg\""),
        ("/_/fn:my\"file/plain/http://example.com/test.jpg", "image/png", "inline; filename=\"my%22file.png\""),
        ("/_/w:50/aHR0cDovL2V4YW1wbGUuY29tL2EuanBn.webp", "image/webp", "inline; filename=\"a.webp\""),
    ]

    @Test(arguments: dispositions)
    func everyImageHasTheDispositionImgproxyWrites(path: String, contentType: String, expected: String) throws {
        let disposition = try ImgproxyURL(path: Substring(path)).disposition
        #expect(disposition.value(contentType: contentType) == expected)
    }
}
