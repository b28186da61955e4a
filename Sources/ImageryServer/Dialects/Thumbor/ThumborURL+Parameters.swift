import Foundation
import Imagery

/// What a thumbor URL means, as thumbor 7's transformer and filters do it, expressed as Imagery's
/// recipe: the same ``ImageParameters`` the native query makes, so both syntaxes share one variant
/// in every cache.
extension ThumborURL {
    /// The format thumbor writes for a source's when no format is asked for: its engine keeps JPEG, PNG,
    /// WebP, GIF and AVIF, and serves TIFF as PNG; any other source (BMP, ICO, JPEG 2000) is written as
    /// JPEG. HEIC, JPEG XL and SVG, which thumbor's default engine cannot read, are PNG here.
    static let outputFormats: [ImageFormat: ImageFormat] = [
        .jpeg: .jpeg, .png: .png, .webp: .webp, .gif: .gif, .avif: .avif, .tiff: .png, .heic: .png, .jxl: .png,
        .svg: .png,
    ]

    /// - Parameters:
    ///   - maximumSide: The largest output side (boxes past it are 400).
    ///   - refusesUnknownFilters: Whether a filter with no equivalent here is a 400 (else skipped, as
    ///     thumbor skips filters missing from its `FILTERS` setting).
    ///   - negotiates: Whether `Accept` chooses the format when no `format()` filter does (thumbor's
    ///     `AUTO_WEBP`); otherwise the source's format.
    /// - Throws: A 400 ``ServerError`` with thumbor's words for what is wrong or not supported.
    ///   - watermarks: The configured watermarks' recipe names by name: what `watermark()` may lay over
    ///     the image (its image argument names one, as a name or a URL ending in it).
    ///   - autoPNGToJPEG: thumbor's `AUTO_PNG_TO_JPG`: a PNG without transparency is answered as JPEG
    ///     (unless `autojpg()` is given: with this setting on, the filter turns it off, as in thumbor).
    ///   - loadedFilters: The filters thumbor's `FILTERS` loads, by name: others are skipped (or refused
    ///     with `refusesUnknownFilters`), as thumbor skips them.
    ///   - refusesBadFilterArguments: Whether a loaded filter whose arguments thumbor's grammar rejects
    ///     is a 400 naming what is wrong (else skipped, as thumbor skips it).
    /// - Returns: The parameters; the filters skipped are in their ``ImageParameters/skipped``.
    func parameters(
        maximumSide: Int, refusesUnknownFilters: Bool, negotiates: Bool, watermarks: [String: String] = [:],
        autoPNGToJPEG: Bool = false,
        loadedFilters: Set<String> = ServerConfiguration.thumborDefaultFilters, respectsOrientation: Bool = true,
        maximumWidth: Int = 0, maximumHeight: Int = 0, refusesBadFilterArguments: Bool = false
    ) throws -> ImageParameters {
        var url = self
        // thumbor's MAX_WIDTH and MAX_HEIGHT: a larger side asked for is made the largest.
        if maximumWidth > 0, case .pixels(let value) = width, value > maximumWidth { url.width = .pixels(maximumWidth) }
        if maximumHeight > 0, case .pixels(let value) = height, value > maximumHeight {
            url.height = .pixels(maximumHeight)
        }
        return try url.limitedParameters(
            maximumSide: maximumSide, refusesUnknownFilters: refusesUnknownFilters, negotiates: negotiates,
            watermarks: watermarks,
            autoPNGToJPEG: autoPNGToJPEG, loadedFilters: loadedFilters, respectsOrientation: respectsOrientation,
            refusesBadFilterArguments: refusesBadFilterArguments
        )
    }

    private func limitedParameters(
        maximumSide: Int, refusesUnknownFilters: Bool, negotiates: Bool, watermarks: [String: String],
        autoPNGToJPEG: Bool,
        loadedFilters: Set<String>, respectsOrientation: Bool, refusesBadFilterArguments: Bool
    ) throws -> ImageParameters {
        var recipe = ImageRecipe()
        var image = image
        var stretch = false
        var autoJPEGFilter: Bool?
        var format: ImageFormat?
        var encoding = EncodingOptions()
        var (upscale, noUpscale, fillColor, rotation) = (
            false, false, ImageRecipe.Color?.none, ImageRecipe.Rotation.none
        )
        var focalRegions: [(left: Int, top: Int, width: Int, height: Int)] = []
        var boxFill = ImageRecipe.BoxFill.background
        var skipped: [SkippedOption] = []

        for filter in filters {
            let arguments = filter.arguments
            func number(_ index: Int) throws -> Double {
                guard index < arguments.count, let value = ArgumentReader.decimal(arguments[index]) else {
                    throw filter.dropped("thumbor filter \(filter.name) needs a number as argument \(index + 1)")
                }
                // any digits: whole-number uses cannot overflow
                return max(-Double(Int32.max), min(Double(Int32.max), value))
            }
            let known = Self.builtInFilters.contains(filter.name)
            guard loadedFilters.contains(filter.name) else {
                guard refusesUnknownFilters else {
                    skipped.append(
                        SkippedOption(
                            name: filter.name, argumentCount: arguments.count, reason: known ? .notLoaded : .unknown))
                    continue
                }
                throw ServerError.badParameter(
                    known
                        ? "thumbor filter \(filter.name) is not among the FILTERS this server loads (thumbor's default list leaves it out too)"
                        : "thumbor filter \(filter.name) is not one of thumbor's filters (see the README's table)")
            }
            guard known else {  // loaded, but a site's own module: nothing here does what it does
                guard refusesUnknownFilters else {
                    skipped.append(
                        SkippedOption(name: filter.name, argumentCount: arguments.count, reason: .notImplemented))
                    continue
                }
                throw ServerError.badParameter(
                    "thumbor filter \(filter.name) is not supported here (see the README's table)")
            }
            if filter.name == "red_eye" {
                // Loaded only where an operator lists it: thumbor runs it (it is not skipped), with detectors not here.
                throw ServerError.badParameter(
                    "thumbor filter red_eye needs thumbor's OpenCV face and eye detectors, which are not here")
            }
            // Each filter reads its arguments before it changes anything: one thumbor drops leaves the
            // recipe as it was, and is skipped as thumbor skips it (unless refused). Any other error is a 400.
            do {
                if let adjustment = try filter.adjustment() {
                    recipe.adjustments.append(adjustment)
                    continue
                }
                if ["fill", "background_color"].contains(filter.name), arguments.first?.isEmpty ?? true {
                    // thumbor's grammar wants a colour: `fill()` and `background_color()` are not run.
                    throw filter.dropped("thumbor filter \(filter.name) needs a colour")
                }
                switch filter.name {
                case "quality":
                    encoding.quality = max(1, min(100, Int(try number(0))))
                case "format":
                    guard let name = arguments.first?.lowercased(),
                        let chosen = Vocabulary.formats.value(name, in: .thumbor)
                    else {
                        // thumbor ignores others
                        let names = Vocabulary.formats.names(in: .thumbor).joined(separator: ", ")
                        throw filter.dropped("thumbor filter format takes one of \(names)")
                    }
                    format = chosen
                case "fill":
                    switch arguments.first?.lowercased() {
                    case "blur": (boxFill, fillColor) = (.blur, .transparent)
                    case "auto": (boxFill, fillColor) = (.median, .transparent)
                    default: fillColor = try Self.color(arguments.first ?? "", filter: "fill")
                    }
                case "background_color":
                    recipe.background = try Self.color(arguments.first ?? "", filter: "background_color")
                case "blur":
                    try filter.expect(1, optional: 1, "a radius in pixels and an optional sigma")
                    let radius = try filter.integer(0, "radius", negative: false)
                    guard radius > 0 else { throw filter.dropped("thumbor filter blur needs a radius above 0") }
                    let sigma = arguments.count > 1 ? try filter.decimal(1, "sigma") : 0
                    recipe.adjustments += Self.blurKernels(radius: radius, sigma: sigma == 0 ? Double(radius) : sigma)
                        .map { .convolution($0) }
                case "sharpen":
                    try filter.expect(3, "an amount, a radius and whether only the luma is sharpened")
                    let (amount, radius) = (try filter.decimal(0, "amount"), try filter.decimal(1, "radius"))
                    let sharpen = ImageRecipe.Adjustment.waveletSharpen(
                        amount: amount, radius: radius,
                        luminanceOnly: try filter.boolean(2, "luminance_only", absent: false)
                    )
                    if let problem = sharpen.problem {
                        throw ServerError.badParameter("thumbor filter sharpen: \(problem)")
                    }
                    recipe.adjustments.append(sharpen)
                case "grayscale":
                    recipe.adjustments.append(.grayscale)
                case "proportion":
                    try filter.expect(1, "a factor above 0 and at most 1")
                    let factor = try filter.decimal(0, "factor")
                    // thumbor leaves others alone
                    if factor > 0, factor <= 1 { recipe.adjustments.append(.scale(factor)) }
                case "stretch":
                    try filter.expect(0, "no arguments")
                    stretch = true
                case "extract_focal":
                    try filter.expect(0, "no arguments")
                    if let (inner, region) = Self.focalExtraction(of: image) {
                        image = inner
                        focalRegions.append(region)
                    }
                case "autojpg":
                    try filter.expect(0, optional: 1, "whether to answer PNG without transparency as JPEG")
                    autoJPEGFilter = try filter.boolean(0, "switch", absent: true)
                case "max_age":
                    try filter.expect(1, "a number of seconds")
                    // read by the route (``ThumborURL/maximumAge(of:)``)
                    _ = try filter.integer(0, "seconds", negative: false)
                case "frame":
                    try filter.expect(1, "the URL of a nine-patch image")
                    recipe.adjustments.append(.frame(.source(try Self.linkedURL(filter.arguments[0], filter: "frame"))))
                case "rotate":
                    // thumbor turns counter-clockwise, and ignores angles that are not multiples of 90.
                    let angle = Int(try number(0))
                    if angle % 90 == 0 {
                        rotation = ImageRecipe.Rotation(rawValue: (360 - ((angle % 360) + 360) % 360) % 360) ?? .none
                    }
                case "upscale":
                    upscale = true
                case "no_upscale":
                    noUpscale = true
                case "strip_icc", "strip_exif":
                    break  // outputs carry no profile and no EXIF but the copyright already
                case "focal":
                    // LxT:RxB, as the manual crop is written; an empty region is ignored, as thumbor does.
                    if let region = arguments.first.flatMap({ Self.crop(Substring($0)) }), region.right > region.left,
                        region.bottom > region.top
                    {
                        focalRegions.append(
                            (region.left, region.top, region.right - region.left, region.bottom - region.top))
                    } else if arguments.first.flatMap({ Self.crop(Substring($0)) }) == nil {
                        throw filter.dropped(
                            "thumbor filter focal takes a region LEFTxTOP:RIGHTxBOTTOM in source pixels")
                    }
                case "watermark":
                    recipe.adjustments.append(.watermark(try Self.watermark(filter, watermarks: watermarks)))
                case "max_bytes":
                    let bytes = Int(try number(0))
                    guard bytes > 0 else {
                        throw filter.dropped("thumbor filter max_bytes needs a number of bytes above 0")
                    }
                    encoding.maximumBytes = bytes
                default:
                    break  // every filter of thumbor's is a case above or an adjustment
                }
            } catch let dropped as ThumborFilter.Dropped {
                if refusesBadFilterArguments { throw dropped.error }
                skipped.append(
                    SkippedOption(
                        name: filter.name, argumentCount: arguments.count, reason: .arguments(dropped.error.message)))
            }
        }

        if let trim {
            recipe.trim = ImageRecipe.Trim(
                threshold: Double(min(510, trim.tolerance)), fromBottomRight: trim.corner == .bottomRight)
            recipe.trim?.measure = .euclidean
        }
        if let crop, crop.right > crop.left, crop.bottom > crop.top {  // thumbor ignores an empty crop
            recipe.crop = ImageRecipe.Crop(
                width: .pixels(crop.right - crop.left), height: .pixels(crop.bottom - crop.top),
                placement: .origin(x: .pixels(crop.left), y: .pixels(crop.top))
            )
        }
        recipe.flop = horizontalFlip
        recipe.flip = verticalFlip
        recipe.rotation = rotation
        recipe.resize = try resize(
            maximumSide: maximumSide, upscale: upscale, noUpscale: noUpscale, fill: fillColor != nil,
            turned: rotation.swapsSides)
        if stretch, fitIn == nil, let box = recipe.resize, box.fit == .cover { recipe.resize?.fit = .fill }
        if let focus = Self.centreOfMass(focalRegions), recipe.resize?.fit == .cover {
            recipe.resize?.gravity = focus  // explicit focal points decide the crop, before alignment and detection
        }
        if let fillColor {
            recipe.background = boxFill == .background ? fillColor : nil
            recipe.boxFill = boxFill
        }
        recipe.ignoresOrientation = !respectsOrientation
        recipe.keepsPartialDecodeBlocks = recipe.resizes  // Pillow's draft, as thumbor decodes a JPEG it shrinks
        var parameters = ImageParameters(
            url: try Self.sourceURL(image), recipe: recipe, format: format, encoding: encoding, negotiates: negotiates)
        parameters.negotiableFormats = [.webp]  // AUTO_WEBP
        // thumbor: with AUTO_PNG_TO_JPG on, only a URL without autojpg() converts; with it off, autojpg(true) does.
        parameters.opaquePNGAsJPEG = autoPNGToJPEG ? autoJPEGFilter == nil : autoJPEGFilter ?? false
        parameters.unaskedOutputRule = .table(
            Self.outputFormats, otherwise: .jpeg, opaquePNGAsJPEG: parameters.opaquePNGAsJPEG)
        parameters.skipped = skipped
        return parameters
    }

    /// The box, as thumbor's transformer sizes it: without `fit-in`, the image covers `WxH` (cropped
    /// by alignment or smart detection; enlarged unless `no_upscale()`); a side of 0 follows the
    /// aspect ratio; `fit-in` fits inside (enlarged only with `upscale()`), `full-fit-in` covers without
    /// cropping, `adaptive-` turns the box to the image's orientation, and `fill()` pads the box.
    private func resize(maximumSide: Int, upscale: Bool, noUpscale: Bool, fill: Bool, turned: Bool) throws
        -> ImageRequest.Thumbnail?
    {
        func pixels(_ side: Side) throws -> Int {
            switch side {
            case .pixels(let value):
                guard value <= maximumSide else {
                    throw ServerError.badParameter("thumbor sizes must be at most \(maximumSide) pixels")
                }
                return value
            case .original:
                return 1  // the source's, set below
            }
        }
        // `orig` with the other side 0 (or orig): the source's own size.
        let widthOnly = width == .original && (height == .pixels(0) || height == .original)
        guard !widthOnly, !(height == .original && width == .pixels(0)) else { return nil }
        var (boxWidth, boxHeight) = (try pixels(width), try pixels(height))
        var (widthIsSource, heightIsSource) = (width == .original, height == .original)
        guard boxWidth > 0 || boxHeight > 0 else { return nil }
        // thumbor turns after resizing; Imagery turns first, so the box turns too.
        if turned {
            (boxWidth, boxHeight) = (boxHeight, boxWidth)
            (widthIsSource, heightIsSource) = (heightIsSource, widthIsSource)
        }
        let oneSide = boxWidth == 0 || boxHeight == 0
        var thumbnail = ImageRequest.Thumbnail(
            width: boxWidth == 0 ? maximumSide : boxWidth, height: boxHeight == 0 ? maximumSide : boxHeight,
            fit: .inside
        )
        (thumbnail.widthIsSource, thumbnail.heightIsSource) = (widthIsSource, heightIsSource)
        switch fitIn {
        case nil:
            thumbnail.fit = oneSide ? .inside : .cover
            thumbnail.enlarge = !noUpscale
            thumbnail.gravity = smart ? .smart(.attention) : gravity
        case .fitIn, .adaptive:
            thumbnail.fit = fill && !oneSide ? .contain : .inside
            thumbnail.enlarge = upscale
            thumbnail.adaptsOrientation = fitIn == .adaptive
        case .full, .adaptiveFull:
            thumbnail.fit = oneSide ? .inside : .outside
            thumbnail.enlarge = true
            thumbnail.adaptsOrientation = fitIn == .adaptiveFull
        }
        return thumbnail
    }

    /// halign and valign as a gravity, mirrored where the image is flipped (thumbor crops, then flips;
    /// Imagery flips, then crops).
    private var gravity: ImageRecipe.Gravity {
        var horizontal = horizontalAlign
        var vertical = verticalAlign
        if horizontalFlip { horizontal = ["left": "right", "right": "left"][horizontal] ?? horizontal }
        if verticalFlip { vertical = ["top": "bottom", "bottom": "top"][vertical] ?? vertical }
        switch (horizontal, vertical) {
        case ("left", "top"): return .northWest
        case ("left", "bottom"): return .southWest
        case ("left", _): return .west
        case ("right", "top"): return .northEast
        case ("right", "bottom"): return .southEast
        case ("right", _): return .east
        case (_, "top"): return .north
        case (_, "bottom"): return .south
        default: return .center
        }
    }

    /// The image part as an http(s) URL: percent-decoded when encoded, `http://` when it has no scheme
    /// (as thumbor's HTTP loader does).
    static func sourceURL(_ image: Substring) throws -> URL {
        var text = String(image)
        if text.contains("%"), let decoded = text.removingPercentEncoding { text = decoded }
        if !text.hasPrefix("http://") && !text.hasPrefix("https://") {
            let scheme = text.range(of: "://").map { text[..<$0.lowerBound] }
            if let scheme, scheme.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == "." }) {
                text = ""
            } else {
                text = "http://" + text
            }
        }
        guard let url = ServerConfiguration.sourceURL(text) else {
            throw ServerError.badParameter(
                "the image of a thumbor URL must be an http or https URL, plain or percent-encoded")
        }
        return url
    }

    /// thumbor's centre of mass of focal regions: each region's centre weighted by its area (in
    /// source pixels, which the layout follows through crop, rotation and flips); `nil` for none.
    static func centreOfMass(_ regions: [(left: Int, top: Int, width: Int, height: Int)]) -> ImageRecipe.Gravity? {
        guard !regions.isEmpty else { return nil }
        var (x, y, weight) = (0.0, 0.0, 0.0)
        for region in regions {
            let area = Double(region.width * region.height)
            x += Double(region.left + region.width / 2) * area
            y += Double(region.top + region.height / 2) * area
            weight += area
        }
        return .sourcePoint(x: Int(x / weight), y: Int(y / weight))
    }
}
