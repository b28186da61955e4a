import Foundation
import Imagery
import ImageryTestSupport
import Testing

@testable import ImageryServer

/// thumbor 7.8's filters as a URL grammar: each filter's arguments, defaults and bad values, and what
/// it becomes on the recipe.
@Suite("thumbor filters")
struct ThumborFilterTests {
    static func parameters(
        _ options: String, refuses: Bool = false, loaded: Set<String> = ServerConfiguration.thumborDefaultFilters,
        autoPNG: Bool = false,
        refusesArguments: Bool = false
    ) throws -> ImageParameters {
        try ThumborURL(path: Substring("/unsafe/" + options + "/a.com/b.png")).parameters(
            maximumSide: 8192, refusesUnknownFilters: refuses, negotiates: false, autoPNGToJPEG: autoPNG,
            loadedFilters: loaded,
            refusesBadFilterArguments: refusesArguments
        )
    }

    static func adjustments(_ filters: String) throws -> [ImageRecipe.Adjustment] {
        try parameters("filters:" + filters).recipe.adjustments
    }

    typealias P = ImageRecipe.Adjustment.Curves.Point

    @Test(arguments: [
        ("brightness(40)", [ImageRecipe.Adjustment.brightness(40)]),
        ("brightness(-100)", [.brightness(-100)]),
        ("contrast( 25 )", [.contrast(25)]),
        ("saturation(1.5)", [.saturation(1.5)]),
        ("saturation(.5)", [.saturation(0.5)]),
        ("saturation(-2)", [.saturation(-2)]),
        ("rgb(10,-20,30)", [.channels(red: 10, green: -20, blue: 30)]),
        (
            "colorize(10,20,30,ff8800)",
            [.colorize(red: 10, green: 20, blue: 30, color: .init(red: 255, green: 136, blue: 0))]
        ),
        ("equalize()", [.equalize]),
        (
            "curve([(0,0),(255,255)],[(0,10),(255,250)],[(0,0),(128,100),(255,255)],[(0,0),(255,255)])",
            [
                .curves(
                    .init(
                        all: [P(0, 0), P(255, 255)], red: [P(0, 10), P(255, 250)],
                        green: [P(0, 0), P(128, 100), P(255, 255)], blue: [P(0, 0), P(255, 255)]
                    ))
            ]
        ),
        ("noise(30)", [.noise(amount: 30, seed: 0)]),
        ("noise(30,1234)", [.noise(amount: 30, seed: 1234)]),
        (
            "convolution(1;2;1;2;4;2;1;2;1,3,true)",
            [.convolution(.init(weights: [1, 2, 1, 2, 4, 2, 1, 2, 1], columns: 3, normalizes: true))]
        ),
        ("convolution(-1;0.5;-1,3)", [.convolution(.init(weights: [-1, 0.5, -1], columns: 3, normalizes: true))]),
        ("convolution(1;1;1,3,False)", [.convolution(.init(weights: [1, 1, 1], columns: 3, normalizes: false))]),
        (
            "round_corner(20,255,255,255)",
            [.roundCorners(horizontal: 20, vertical: 20, color: .white, transparent: false)]
        ),
        (
            "round_corner(20|40,0,0,0,1)",
            [.roundCorners(horizontal: 20, vertical: 40, color: .black, transparent: true)]
        ),
        ("proportion(0.5)", [.scale(0.5)]),
        ("proportion(2)", []),  // thumbor leaves it alone above 1 and at or under 0
        ("proportion(0)", []),
        (
            "grayscale():brightness(10):sharpen(1.5,0.5,true)",
            [.grayscale, .brightness(10), .waveletSharpen(amount: 1.5, radius: 0.5, luminanceOnly: true)]
        ),  // in the URL's order
        ("blur(2)", ThumborURL.blurKernels(radius: 2, sigma: 2).map { .convolution($0) }),
        ("blur(200,1.5)", ThumborURL.blurKernels(radius: 150, sigma: 1.5).map { .convolution($0) }),
    ])
    func readsEachFiltersArguments(filters: String, expected: [ImageRecipe.Adjustment]) throws {
        #expect(try Self.adjustments(filters) == expected)
    }

    @Test(arguments: [
        ("brightness(1.5)", "brightness's change must be a whole number"),
        ("brightness()", "brightness takes a change"),
        ("brightness(101)", "brightness and contrast are from -100 to 100"),
        ("contrast(a)", "contrast's change must be a whole number"),
        ("saturation(x)", "saturation's factor must be a number"),
        ("rgb(1,2)", "rgb takes the changes of red, green and blue"),
        ("rgb(1,2,300)", "rgb's changes are from -100 to 100"),
        ("colorize(10,20,30,red)", "colorize's colour must be six hex digits"),
        ("colorize(-10,20,30,ff0000)", "colorize's red must be a whole number, 0 or more"),
        ("colorize(10,20,130,ff0000)", "colorize's percentages are from 0 to 100"),
        ("equalize(1)", "equalize takes no arguments"),
        ("curve([(0,0),(255,255)])", "curve takes four curves"),
        (
            "curve([(0,0)],[(0,0),(255,255)],[(0,0),(255,255)],[(0,0),(255,255)])",
            "curve's curve of all channels must be points"
        ),
        ("curve([(0,0),(300,255)],[(0,0),(255,255)],[(0,0),(255,255)],[(0,0),(255,255)])", "must be points"),
        ("curve([(9,0),(3,255)],[(0,0),(255,255)],[(0,0),(255,255)],[(0,0),(255,255)])", "x increasing"),
        ("noise(300)", "noise's amount is from 0 to 255"),
        ("noise(-3)", "noise's amount must be a whole number, 0 or more"),
        ("convolution(1;2;x,3)", "convolution's matrix must be numbers"),
        ("convolution(1;2;1;2,2)", "odd number of rows and of columns"),
        ("convolution(1;2;1;2;1,3)", "fill whole rows"),
        ("convolution(1;2;1,3,maybe)", "convolution's normalisation must be true or false"),
        ("round_corner(a,0,0,0)", "round_corner's radius must be a number of pixels"),
        ("round_corner(10,0,0,256)", "round_corner's blue must be from 0 to 255"),
        ("round_corner(10,0,0)", "round_corner takes a radius"),
        ("proportion(half)", "proportion's factor must be a number"),
        ("stretch(1)", "stretch takes no arguments"),
        ("max_age(-1)", "max_age's seconds must be a whole number, 0 or more"),
        ("frame(a.png,b)", "frame takes the URL of a nine-patch image"),
        ("sharpen(2)", "sharpen takes an amount, a radius and whether only the luma is sharpened"),
        ("sharpen(2,1,maybe)", "sharpen's luminance_only must be true or false"),
        ("sharpen(200,1,true)", "sharpening's amount is from 0 to 100"),
        ("blur(1.5)", "blur's radius must be a whole number"),
    ])
    func badArgumentsAreSkippedOrRefusedNamingTheFilterAndTheArgument(filters: String, message: String) throws {
        let name = String(filters.prefix { $0 != "(" })
        // Values thumbor's grammar takes (it applies the filter, or fails with a 500) and that are out of
        // range here: a 400, never dropped. Each case checked against thumbor 7.8.0 (its answer changed).
        guard !Self.appliedByThumbor.contains(filters) else {
            do {
                _ = try Self.parameters("filters:" + filters)
                Issue.record("\(filters) was accepted")
            } catch let error as ServerError {
                #expect(error.message.contains(message) && error.message.contains("thumbor filter"), "\(error.message)")
                #expect(error.status == .badRequest)
            }
            return
        }
        // Outside thumbor's grammar (its answer is the one without the filter): skipped as thumbor skips
        // it (the recipe as without it), and what was wrong is kept for the log.
        let skipping = try Self.parameters("filters:" + filters)
        #expect(skipping.recipe == (try Self.parameters("filters:").recipe), "\(filters)")
        #expect(skipping.skipped.map(\.name) == [name])
        guard case .arguments(let problem) = skipping.skipped.first?.reason else {
            Issue.record("\(filters): \(skipping.skipped)")
            return
        }
        #expect(problem.contains(message) && problem.contains("thumbor filter"), "\(problem)")
        // Refused when the configuration says so: a 400 with the same words.
        do {
            _ = try Self.parameters("filters:" + filters, refusesArguments: true)
            Issue.record("\(filters) was accepted")
        } catch let error as ServerError {
            #expect(error.message == problem, "\(error.message)")
            #expect(error.status == .badRequest)
        }
    }

    /// Bad values that thumbor 7.8.0 takes (its answer differs from the URL without the filter: it applied
    /// it, or failed with a 500), from the cases above; the others it answers as without the filter.
    static let appliedByThumbor: Set<String> = [
        "brightness(101)", "rgb(1,2,300)", "colorize(10,20,30,red)", "colorize(10,20,130,ff0000)", "noise(300)",
        "convolution(1;2;1;2,2)", "convolution(1;2;1;2;1,3)", "round_corner(10,0,0,256)", "sharpen(200,1,true)",
        "curve([(0,0)],[(0,0),(255,255)],[(0,0),(255,255)],[(0,0),(255,255)])",
        "curve([(0,0),(300,255)],[(0,0),(255,255)],[(0,0),(255,255)],[(0,0),(255,255)])",
        "curve([(9,0),(3,255)],[(0,0),(255,255)],[(0,0),(255,255)],[(0,0),(255,255)])",
    ]

    /// The warning is one line whatever the URL held.
    @Test func theWarningIsOneLine() {
        #expect(SkippedOptionLog.printable("a\nb\r\u{0}c é") == "a b  c é")
    }

    /// What sites' URLs do on thumbor: `sharpen()` with no arguments, `watermark(URL,30)` with two of its
    /// four; the filters around them still apply, in order.
    @Test func aSkippedFilterLeavesTheOthers() throws {
        let parameters = try Self.parameters(
            "filters:brightness(10):sharpen():watermark(https://a.com/logo.png,30):contrast(5)")
        #expect(parameters.recipe.adjustments == [.brightness(10), .contrast(5)])
        #expect(parameters.skipped.map(\.name) == ["sharpen", "watermark"])
        #expect(parameters.skipped.map(\.signature) == ["sharpen/0", "watermark/2"])
        #expect(try Self.parameters("filters:brightness(10):contrast(5)").responseKey == parameters.responseKey)
    }

    /// Filters thumbor has not loaded (its default FILTERS leaves out autojpg and red_eye, and any
    /// name it does not know) are skipped as thumbor skips them, or refused when asked.
    @Test func filtersThumborDoesNotLoadAreSkippedOrRefused() throws {
        #expect(try Self.parameters("filters:autojpg()").opaquePNGAsJPEG == false)
        let skipped = try Self.parameters("filters:red_eye():sepia(3)")
        #expect(skipped.recipe.isIdentity)
        #expect(
            skipped.skipped == [
                SkippedOption(name: "red_eye", argumentCount: 0, reason: .notLoaded),
                SkippedOption(name: "sepia", argumentCount: 1, reason: .unknown),
            ])
        // A site's own module in FILTERS: loaded there, nothing here does what it does.
        #expect(try Self.parameters("filters:sepia(3)", loaded: ["sepia"]).skipped.map(\.reason) == [.notImplemented])
        #expect(throws: ServerError.self) { try Self.parameters("filters:sepia(3)", refuses: true, loaded: ["sepia"]) }
        for filters in ["autojpg()", "red_eye()", "sepia(3)"] {
            #expect(throws: ServerError.self, "\(filters)") { try Self.parameters("filters:" + filters, refuses: true) }
        }
        // Without brightness among the loaded filters, brightness is skipped too.
        #expect(try Self.parameters("filters:brightness(10)", loaded: ["contrast"]).recipe.isIdentity)
        // no detectors here
        #expect(throws: ServerError.self) { try Self.parameters("filters:red_eye()", loaded: ["red_eye"]) }
    }

    /// autojpg (where loaded) and AUTO_PNG_TO_JPG, as thumbor combines them: with the setting on, only a
    /// URL without the filter converts.
    @Test func autojpgFollowsThumborsRule() throws {
        let loaded = ServerConfiguration.thumborDefaultFilters.union(["autojpg"])
        #expect(try Self.parameters("filters:autojpg()", loaded: loaded).opaquePNGAsJPEG)
        #expect(try Self.parameters("filters:autojpg(false)", loaded: loaded).opaquePNGAsJPEG == false)
        #expect(try Self.parameters("300x200", loaded: loaded).opaquePNGAsJPEG == false)
        #expect(try Self.parameters("300x200", loaded: loaded, autoPNG: true).opaquePNGAsJPEG)
        #expect(try Self.parameters("filters:autojpg(true)", loaded: loaded, autoPNG: true).opaquePNGAsJPEG == false)
        let choice = try Self.parameters("filters:autojpg()", loaded: loaded).outputChoice(accept: nil)
        #expect(choice == .table(ThumborURL.outputFormats, otherwise: .jpeg, opaquePNGAsJPEG: true))
        #expect(choice.resolved(source: .png) == .jpeg)
        #expect(choice.resolved(source: .png, transparent: true) == .png)
        #expect(choice.resolved(source: .gif, animated: true) == .gif)
    }

    @Test func stretchFillsTheBoxWithoutCropping() throws {
        #expect(try Self.parameters("300x200/filters:stretch()").recipe.resize?.fit == .fill)
        // one side: the aspect ratio decides
        #expect(try Self.parameters("300x0/filters:stretch()").recipe.resize?.fit == .inside)
        // fit-in does not stretch
        #expect(try Self.parameters("fit-in/300x200/filters:stretch()").recipe.resize?.fit == .inside)
    }

    @Test func maxAgeIsTheLastOnesSeconds() throws {
        #expect(try ThumborURL(path: "/unsafe/300x200/filters:max_age(60)/a.com/b.jpg").maximumAge == 60)
        #expect(try ThumborURL(path: "/unsafe/filters:max_age(60):max_age(5)/a.com/b.jpg").maximumAge == 5)
        #expect(try ThumborURL(path: "/unsafe/300x200/a.com/b.jpg").maximumAge == nil)
    }

    /// extract_focal(): the image is itself a thumbor URL with a crop; its image is loaded and its crop
    /// becomes a focal region (thumbor's own example).
    @Test func extractFocalTakesTheInnerURLsCropAsFocus() throws {
        let parameters = try ThumborURL(
            path:
                "/unsafe/300x200/filters:extract_focal()/localhost:8888/unsafe/100x150:300x350/https://images.example.com/a.jpg"
        ).parameters(maximumSide: 8192, refusesUnknownFilters: false, negotiates: false)
        #expect(parameters.url.absoluteString == "https://images.example.com/a.jpg")
        #expect(parameters.recipe.resize?.gravity == .sourcePoint(x: 200, y: 250))
        // Nested twice; the inner crop is found on the second level.
        let nested = try ThumborURL(
            path: "/unsafe/300x200/filters:extract_focal()/a.com/unsafe/fit-in/50x50/b.com/unsafe/0x0:20x40/c.com/d.jpg"
        ).parameters(maximumSide: 8192, refusesUnknownFilters: false, negotiates: false)
        #expect(nested.url.absoluteString == "http://c.com/d.jpg")
        #expect(nested.recipe.resize?.gravity == .sourcePoint(x: 10, y: 20))
        // An image that is no thumbor URL stays as it is.
        let plain = try ThumborURL(path: "/unsafe/300x200/filters:extract_focal()/a.com/b.jpg")
            .parameters(maximumSide: 8192, refusesUnknownFilters: false, negotiates: false)
        #expect(plain.url.absoluteString == "http://a.com/b.jpg" && plain.recipe.resize?.gravity == .center)
    }

    /// Arguments may hold brackets, parentheses and colons: filters split at `):` as thumbor splits them.
    /// thumbor's blur: a normalised Gaussian cut at the radius, a row then a column.
    @Test func blurIsThumborsSeparableGaussian() {
        let kernels = ThumborURL.blurKernels(radius: 2, sigma: 1)
        #expect(kernels.count == 2 && kernels[0].columns == 5 && kernels[1].columns == 1)
        let weights = kernels[0].weights
        #expect(weights.count == 5 && weights[2] > weights[1] && weights[1] > weights[0] && weights[0] == weights[4])
        #expect(abs(weights[1] / weights[2] - exp(-0.5)) < 1e-12)
    }

    @Test func splitsFiltersAsThumborDoes() throws {
        let filters = try ThumborFilter.list(
            "curve([(0,0),(255,255)],[(0,0),(255,255)],[(0,0),(255,255)],[(0,0),(255,255)]):watermark(http://a.b/c.png,1,2,3):equalize()"
        )
        #expect(filters.map(\.name) == ["curve", "watermark", "equalize"])
        #expect(filters[0].arguments.count == 4 && filters[0].arguments[1] == "[(0,0),(255,255)]")
        #expect(filters[1].arguments == ["http://a.b/c.png", "1", "2", "3"])
        #expect(filters[2].arguments.isEmpty)
    }

    /// Each filter is part of the variant's key, in order.
    @Test func filtersAreInTheKeyInOrder() throws {
        let a = try Self.parameters("filters:brightness(10):contrast(10)").responseKey
        let b = try Self.parameters("filters:contrast(10):brightness(10)").responseKey
        let c = try Self.parameters("filters:brightness(10):contrast(11)").responseKey
        #expect(a != b && a != c)
        #expect(
            try Self.parameters("filters:noise(10,1)").responseKey != Self.parameters("filters:noise(10,2)").responseKey
        )
    }
}

/// thumbor's `meta/` JSON, text for text, against what thumbor 7.8.0 answered for the same URLs.
@Suite("thumbor meta")
struct ThumborMetaTests {
    static let cases: [(options: String, json: String)] = {
        let text =
            (try? String(
                contentsOf: Fixtures.directory.appendingPathComponent("thumbor-meta/cases.tsv"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { line in
            let parts = line.split(separator: "\t", maxSplits: 1)
            return parts.count == 2 ? (String(parts[0]), String(parts[1])) : nil
        }
    }()

    @Test func thereAreCases() { #expect(Self.cases.count >= 20) }

    @Test(arguments: cases.indices)
    func answersAsThumborDoes(index: Int) throws {
        let (options, expected) = Self.cases[index]
        let url = try ThumborURL(path: Substring("/unsafe/meta/\(options)/127.0.0.1:9130/rocket.jpg"))
        #expect(url.meta)
        let json = ThumborMeta(url: url, sourceWidth: 640, sourceHeight: 427, frames: 1).json()
        #expect(json == expected, "\(options)")
    }

    @Test func wrapsInACallback() throws {
        let url = try ThumborURL(path: "/unsafe/meta/300x200/a.com/b.jpg")
        let text = ThumborMeta(url: url, sourceWidth: 640, sourceHeight: 427, frames: 1).json(callback: "show")
        #expect(text.hasPrefix("show({\"thumbor\": ") && text.hasSuffix("});"))
    }
}
