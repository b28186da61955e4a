import Foundation
import Imagery
import Testing

@testable import ImageryServer

/// thumbor URLs as a parser, on their own: path → parts → Imagery's recipe; libthumbor's signatures.
@Suite("thumbor URLs")
struct ThumborURLTests {
    /// URLs signed by libthumbor 2.0.2's `CryptoURL(key="my-security-key").generate(...)`.
    static let signedByLibthumbor = [
        "/cl_0_60_n4SePr7sZfz3rNVnU5w=/300x200/smart/example.com/photo.jpg",
        "/EMH0icWjEtpsxTw50nVkkbJBm8Y=/fit-in/120x0/filters:quality(80):format(webp)/http%3A%2F%2F127.0.0.1%3A8080%2Frocket.jpg",
        "/W8ia1jQ59lKCwg3Z_Web2zZ0Bn0=/10x20:310x220/-150x100/left/top/127.0.0.1:8080/chelsea.png",
        "/Tbjje-VAy8NeoYIxLkqEbNFBbjM=/trim:bottom-right:5/adaptive-fit-in/100x200/filters:fill(ff0000)/127.0.0.1:8080/rocket.jpg",
    ]

    @Test(arguments: signedByLibthumbor)
    func acceptsLibthumborsSignaturesAndNothingChanged(path: String) throws {
        let signer = ThumborSigner(key: "my-security-key")
        let url = try ThumborURL(path: Substring(path))
        guard case .hmac(let signature) = url.signature else {
            Issue.record("no signature")
            return
        }
        #expect(signer.isValid(signature, for: url.signed))
        #expect(signer.signature(of: url.signed) == signature)
        // One character changed anywhere after the signature, or in it: refused.
        var changed = Array(path)
        let index = path.count - 5
        changed[index] = changed[index] == "a" ? "b" : "a"
        let tampered = try ThumborURL(path: Substring(String(changed)))
        #expect(!signer.isValid(signature, for: tampered.signed))
        var badSignature = Array(signature)
        badSignature[3] = badSignature[3] == "A" ? "B" : "A"
        #expect(!signer.isValid(String(badSignature), for: url.signed))
        #expect(!ThumborSigner(key: "another-key").isValid(signature, for: url.signed))
    }

    @Test func parsesEveryPartInOrder() throws {
        let url = try ThumborURL(
            path:
                "/unsafe/meta/trim:bottom-right:12/10x20:310x220/adaptive-full-fit-in/-300x-0/right/bottom/smart/filters:quality(70):watermark(http://a.b/c.png,10,-10,50):grayscale()/example.com/a.jpg?x=1"
        )
        #expect(url.signature == .unsafe)
        #expect(url.meta)
        #expect(url.trim?.corner == .bottomRight && url.trim?.tolerance == 12)
        #expect(url.crop.map { [$0.left, $0.top, $0.right, $0.bottom] } == [10, 20, 310, 220])
        #expect(url.fitIn == .adaptiveFull)
        #expect(url.horizontalFlip && url.verticalFlip)
        #expect(url.width == .pixels(300) && url.height == .pixels(0))
        #expect(url.horizontalAlign == "right" && url.verticalAlign == "bottom")
        #expect(url.smart)
        #expect(
            url.filters == [
                ThumborFilter(name: "quality", arguments: ["70"]),
                ThumborFilter(name: "watermark", arguments: ["http://a.b/c.png", "10", "-10", "50"]),
                ThumborFilter(name: "grayscale", arguments: []),
            ])
        #expect(url.image == "example.com/a.jpg?x=1")
    }

    /// A part out of order (or malformed) is the start of the image, as in thumbor's pattern.
    @Test(arguments: [
        ("/unsafe/smart/300x200/a.com/b.jpg", "300x200/a.com/b.jpg"),
        ("/unsafe/300y200/a.com/b.jpg", "300y200/a.com/b.jpg"),
        ("/unsafe/a.com/b.jpg", "a.com/b.jpg"),
        ("/unsafe/fit-in/a.com/b.jpg", "a.com/b.jpg"),
        ("/unsafe/trim:middle/a.com/b.jpg", "trim:middle/a.com/b.jpg"),
    ])
    func takesWhatIsNotAnOptionAsTheImage(path: String, image: String) throws {
        #expect(try ThumborURL(path: Substring(path)).image == Substring(image))
    }

    @Test(arguments: ["/unsafe", "/unsafe/", "/unsafe/300x200/", "/unsafe/filters:blur/a.com/b.jpg"])
    func refusesAURLWithoutAnImageOrWithBrokenFilters(path: String) throws {
        #expect(throws: ServerError.self) {
            let url = try ThumborURL(path: Substring(path))
            _ = try url.parameters(maximumSide: 8192, refusesUnknownFilters: false, negotiates: false)
        }
    }

    /// What each URL means in Imagery's recipe (sizes as thumbor's transformer computes them).
    @Test(arguments: [
        ("300x200/a.com/b.jpg", "300x200 cover +enlarge"),
        ("300x0/a.com/b.jpg", "300x8192 inside +enlarge"),
        ("0x200/a.com/b.jpg", "8192x200 inside +enlarge"),
        ("300x200/left/top/a.com/b.jpg", "300x200 cover +enlarge northwest"),
        ("-300x200/left/a.com/b.jpg", "flop,300x200 cover +enlarge east"),
        ("300x-200/bottom/a.com/b.jpg", "flip,300x200 cover +enlarge north"),
        ("300x200/smart/a.com/b.jpg", "300x200 cover +enlarge smart:attention"),
        ("fit-in/300x200/a.com/b.jpg", "300x200 inside"),
        ("fit-in/300x200/filters:upscale()/a.com/b.jpg", "300x200 inside +enlarge"),
        ("adaptive-fit-in/300x200/a.com/b.jpg", "300x200 inside +adaptive"),
        ("full-fit-in/300x200/a.com/b.jpg", "300x200 outside +enlarge"),
        ("fit-in/300x200/filters:fill(white)/a.com/b.jpg", "300x200 contain,bg:ffffff"),
        ("300x200/filters:no_upscale()/a.com/b.jpg", "300x200 cover"),
        ("10x20:110x220/a.com/b.jpg", "crop:100x200@10,20"),
        ("trim/a.com/b.jpg", "trim:0.0:euclidean"),
        ("trim:bottom-right:30/a.com/b.jpg", "trim:30.0:br:euclidean"),
        ("300x200/filters:rotate(90)/a.com/b.jpg", "rotate:270,200x300 cover +enlarge"),
        (
            "filters:sharpen(1,2,true):grayscale():background_color(ff0000)/a.com/b.jpg",
            "adjust:sharpen(1.0,2.0,true)+gray,bg:ff0000"
        ),
        ("filters:strip_icc():strip_exif():brightness(10)/a.com/b.jpg", "adjust:brightness(10)"),
        ("0x0/a.com/b.jpg", ""),
        ("origxorig/a.com/b.jpg", ""),
        ("origx100/a.com/b.jpg", "srcx100 cover +enlarge"),
        ("fit-in/200xorig/a.com/b.jpg", "200xsrc inside"),
    ])
    func mapsOntoTheRecipe(options: String, recipe: String) throws {
        let url = try ThumborURL(path: Substring("/unsafe/" + options))
        let parameters = try url.parameters(maximumSide: 8192, refusesUnknownFilters: false, negotiates: false)
        var described = parameters.recipe
        // A JPEG thumbor shrinks is decoded as Pillow's draft decodes it (its partial last blocks kept).
        #expect(described.keepsPartialDecodeBlocks == described.resizes, "\(options)")
        described.keepsPartialDecodeBlocks = false
        #expect(described.description == recipe, "\(options)")
        #expect(parameters.url.absoluteString == "http://a.com/b.jpg")
    }

    @Test func mapsTheOutputFilters() throws {
        let url = try ThumborURL(
            path: "/unsafe/filters:quality(55):format(webp):max_bytes(9000)/http%3A%2F%2Fa.com%2Fb.jpg%3Fv%3D2")
        let parameters = try url.parameters(maximumSide: 8192, refusesUnknownFilters: false, negotiates: false)
        #expect(parameters.format == .webp)
        #expect(parameters.encoding.quality == 55 && parameters.encoding.maximumBytes == 9000)
        #expect(parameters.url.absoluteString == "http://a.com/b.jpg?v=2")
        // Without format(): the source's format by thumbor's table, unless AUTO_WEBP.
        let plain = try ThumborURL(path: "/unsafe/a.com/b.jpg")
        let unasked = try plain.parameters(maximumSide: 8192, refusesUnknownFilters: false, negotiates: false)
            .outputChoice(accept: "image/webp")
        #expect(unasked == .table(ThumborURL.outputFormats, otherwise: .jpeg))
        // thumbor's engine: BMP (or any format it has no writer for) as JPEG, TIFF as PNG, AVIF kept.
        #expect(unasked.resolved(source: .bmp, transparent: true) == .jpeg)
        #expect(unasked.resolved(source: .tiff) == .png)
        #expect(unasked.resolved(source: .avif, transparent: true) == .avif)
        #expect(unasked.resolved(source: .gif, animated: true) == .gif)
        #expect(
            try plain.parameters(maximumSide: 8192, refusesUnknownFilters: false, negotiates: true).outputChoice(
                accept: "image/webp") == .negotiated(.webp))
    }

    /// focal(): the centre of mass of the regions (each centre weighted by its area) decides a cover crop,
    /// in source pixels; watermark(): a configured watermark placed and faded as thumbor places it.
    @Test func mapsFocalAndWatermark() throws {
        func parameters(_ options: String) throws -> ImageParameters {
            try ThumborURL(path: Substring("/unsafe/" + options + "/a.com/b.jpg"))
                .parameters(
                    maximumSide: 8192, refusesUnknownFilters: false, negotiates: false, watermarks: ["logo": "logo-1f"])
        }
        #expect(
            try parameters("300x200/filters:focal(100x100:200x200)").recipe.resize?.gravity
                == .sourcePoint(x: 150, y: 150))
        // Two regions: 100x100 at (150,150) and 300x100 at (350,50): weights 1 and 3.
        #expect(
            try parameters("300x200/filters:focal(100x100:200x200):focal(200x0:500x100)").recipe.resize?.gravity
                == .sourcePoint(x: 300, y: 75))
        #expect(
            // over detection
            try parameters("300x200/smart/filters:focal(0x0:10x10)").recipe.resize?.gravity == .sourcePoint(x: 5, y: 5))
        // nothing to crop
        #expect(try parameters("fit-in/300x200/filters:focal(0x0:10x10)").recipe.resize?.gravity == .center)
        #expect(try parameters("300x200/filters:focal(nope)").skipped.map(\.name) == ["focal"])  // as thumbor
        // fill(blur) and fill(auto): contain's bars from the image itself.
        let blur = try parameters("fit-in/300x200/filters:fill(blur)").recipe
        #expect(blur.boxFill == .blur && blur.background == nil && blur.resize?.fit == .contain)
        #expect(try parameters("fit-in/300x200/filters:fill(auto)").recipe.boxFill == .median)
        #expect(try parameters("fit-in/300x200/filters:fill(red)").recipe.boxFill == .background)
        func pasted(_ mark: ImageRecipe.Watermark.Mark, _ paste: ImageRecipe.Watermark.Paste) -> [ImageRecipe
            .Adjustment]
        {
            var watermark = ImageRecipe.Watermark(mark: mark)
            watermark.placement = .pasted(paste)
            return [.watermark(watermark)]
        }
        // A configured watermark by name (or a URL ending in it), else the URL, loaded as a source.
        #expect(
            try parameters("filters:watermark(http://cdn.example.com/logo.png,-10,center,25)").recipe.adjustments
                == pasted(.image("logo-1f"), .init(x: .pixels(10, fromEnd: true), y: .center, transparency: 25)))
        #expect(
            try parameters("filters:watermark(cdn.example.com/brand.png,repeat,20p,0,30,none)").recipe.adjustments
                == pasted(
                    .linked(.source(URL(string: "http://cdn.example.com/brand.png")!)),
                    .init(x: .repeat, y: .percent(20, fromEnd: false), widthRatio: 0.3)))
        #expect(
            try parameters("filters:watermark('a.com/b.png',-0,-5p,150)").recipe.adjustments
                == pasted(
                    .linked(.source(URL(string: "http://a.com/b.png")!)),
                    .init(x: .pixels(0, fromEnd: true), y: .percent(5, fromEnd: true), transparency: 100)))
        // Arguments thumbor's grammar rejects: skipped, as thumbor skips them.
        for bad in ["watermark(logo,left,0,0)", "watermark(logo,0,0)", "watermark(logo,0,0,-1)"] {
            #expect(try parameters("filters:\(bad)").skipped.map(\.name) == ["watermark"], "\(bad)")
        }
        // What thumbor's grammar takes and runs: a negative ratio, an image that is no http(s) URL (its
        // loader then fails). A 400 here, never dropped.
        for bad in ["watermark(logo,0,0,0,-20,20)", "watermark(file:///etc/passwd,0,0,0)"] {
            #expect(throws: ServerError.self, "\(bad)") { try parameters("filters:\(bad)") }
        }
    }

    /// A thumbor URL means the native query's recipe but for the decode of a shrunk JPEG (Pillow's
    /// draft keeps the partial last blocks that libvips drops): their keys differ by that part alone.
    @Test func isTheNativeQuerysRecipeButForTheDecode() throws {
        let thumbor = try ThumborURL(path: "/unsafe/300x200/smart/https%3A%2F%2Fa.com%2Fb.jpg")
            .parameters(maximumSide: 8192, refusesUnknownFilters: false, negotiates: true)
        let native = try ImageParameters(
            query: ["url": "https://a.com/b.jpg", "w": "300", "h": "200", "gravity": "smart", "enlarge": "1"],
            maximumSide: 8192
        )
        var recipe = native.recipe
        recipe.keepsPartialDecodeBlocks = true
        #expect(thumbor.recipe == recipe)
        #expect(
            thumbor.responseKey
                == native.responseKey.replacingOccurrences(of: "smart:attention", with: "smart:attention,dct:partial"))
    }

    @Test(arguments: [
        ("filters:format(bmp)/a.com/b.jpg", "format takes"),
        ("filters:background_color(blur)/a.com/b.jpg", "background_color(blur) is not supported"),
        ("filters:fill(nocolour)/a.com/b.jpg", "fill takes a colour"),
        ("filters:blur(0)/a.com/b.jpg", "blur needs a radius"),
        ("filters:quality(x)/a.com/b.jpg", "quality needs a number"), ("9000x10/a.com/b.jpg", "at most 8192"),
        ("300x200/file:///etc/passwd", "must be an http or https URL"),
    ])
    func refusesWhatItCannotDoWithThumborsWords(options: String, message: String) throws {
        let url = try ThumborURL(path: Substring("/unsafe/" + options))
        do {
            _ = try url.parameters(
                maximumSide: 8192, refusesUnknownFilters: false, negotiates: false, refusesBadFilterArguments: true)
            Issue.record("\(options) was accepted")
        } catch let error as ServerError {
            #expect(error.message.contains(message), "\(error.message)")
        }
    }

    @Test func refusesUnknownFiltersWhenAsked() throws {
        let url = try ThumborURL(path: "/unsafe/filters:sepia(10)/a.com/b.jpg")
        #expect(throws: ServerError.self) {
            try url.parameters(maximumSide: 8192, refusesUnknownFilters: true, negotiates: false)
        }
        #expect(
            try url.parameters(maximumSide: 8192, refusesUnknownFilters: false, negotiates: false).recipe.isIdentity)
    }

    @Test(arguments: [
        ("/unsafe/a.com/b.jpg", true), ("/cl_0_60_n4SePr7sZfz3rNVnU5w=/300x200/a.com/b.jpg", true),
        ("/favicon.ico", false), ("/robots.txt", false), ("/image/x", false), ("/cl_0_60_n4SePr7sZfz3rNVnU5w/a", false),
    ])
    func recognisesThumborPaths(path: String, expected: Bool) {
        #expect(ThumborURL.mayBe(Substring(path)) == expected)
    }
}
