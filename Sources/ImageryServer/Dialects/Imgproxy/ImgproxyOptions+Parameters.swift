import Foundation
import Imagery
import Logging
import Synchronization

/// What imgproxy's options mean, as imgproxy's processing pipeline does it, expressed as Imagery's
/// recipe: imgproxy's geometry is the recipe's ``ImageRecipe/Sizing`` (laid out with imgproxy's
/// arithmetic once the source's size is known), the rest the recipe's own operations.
extension ImgproxyOptions {
    /// - Parameters:
    ///   - source: The source URL (http or https; `local://` with `localFiles`).
    ///   - maximumSide: The largest output side (a box past it, after `dpr`, is scaled down to it).
    ///   - negotiates: Whether `Accept` chooses the format when neither `format` nor an extension does
    ///     (imgproxy's `AUTO_WEBP`/`AUTO_AVIF`); otherwise the source's.
    /// - Throws: A 400 ``ServerError`` for a source that is no http(s) URL or a combination not supported.
    ///   - localFiles: Whether `local://` sources are read here.
    ///   - watermark: The recipe name of imgproxy's watermark image, if the server has one, and what its opacity is multiplied by.
    ///   - defaults: What the server's `IMGPROXY_*` settings make of what the URL does not say.
    func parameters(
        source: String, maximumSide: Int, negotiates: Bool, localFiles: Bool = false,
        watermark mark: (id: String, opacity: Double)? = nil,
        defaults: Defaults = Defaults()
    ) throws -> ImageParameters {
        let local = URL(string: source).flatMap { localFiles && LocalFiles.isLocal($0) ? $0 : nil }
        guard let url = local ?? ServerConfiguration.sourceURL(source) else {
            throw ServerError.badParameter(
                "the source of an imgproxy URL must be an http or https URL" + (localFiles ? " or local:///PATH" : ""))
        }
        var recipe = ImageRecipe()
        recipe.trim = trim
        recipe.ignoresOrientation = !(autoRotate ?? defaults.autoRotates)
        recipe.rotation = ImageRecipe.Rotation(rawValue: rotate) ?? .none
        recipe.flop = flipHorizontal
        recipe.flip = flipVertical
        var sizing = sizing
        if var crop = sizing.crop {
            crop.gravity = cropGravity ?? sizing.gravity
            sizing.crop = crop
        }
        // imgproxy's own limit on the result (its `max_result_dimension`), within the server's.
        sizing.maximumResultSide =
            sizing.maximumResultSide > 0 ? min(sizing.maximumResultSide, maximumSide) : maximumSide
        recipe.sizing = sizing
        recipe.background = background
        recipe.pixelate = pixelate
        if sourceLimits != ImageRecipe.SourceLimits() { recipe.sourceLimits = sourceLimits }
        if watermark != nil, mark == nil {
            Self.noteWatermarkWithoutImage()
        }
        if let watermark, let mark {
            var laid = ImageRecipe.Watermark(name: mark.id, opacity: min(1, watermark.opacity * mark.opacity))
            laid.placement =
                watermark.position == "re"
                ? .tiled(spacingX: watermark.x, spacingY: watermark.y)
                : .offset(ImgproxyOptions.Reader.offsetGravity(watermark.position, x: watermark.x, y: watermark.y))
            laid.fraction = watermark.scale
            recipe.watermark = laid
        }
        if blur > 0 { recipe.blur = max(0.3, min(100, blur)) }
        if sharpen > 0 { recipe.sharpen = max(0.3, min(10, sharpen)) }
        recipe.keepsColorProfile = keepsColorProfile ?? !defaults.stripsColorProfile
        recipe.resizesInLinearLight = defaults.resizesInLinearLight
        recipe.keptMetadata =
            !(stripsMetadata ?? defaults.stripsMetadata)
            ? .all : (keepsCopyright ?? defaults.keepsCopyright) ? .copyright : .none
        // Only for a format that holds 16 bits (or one not known yet: the encoder reduces the others).
        recipe.keepsHighBitDepth = (preservesHDR ?? defaults.preservesHDR) && (format?.holdsHighBitDepth ?? true)
        // imgproxy lays transparent pixels onto white in a format without alpha (its default background).
        let encoding = EncodingOptions(
            quality: quality > 0 ? quality : nil, maximumBytes: maximumBytes > 0 ? maximumBytes : nil,
            flattensOnto: .white)
        var parameters = ImageParameters(
            url: url, recipe: recipe, format: format, encoding: encoding, negotiates: negotiates)
        parameters.autoQuality = autoQuality
        parameters.formatQualities = formatQualities.filter { $0.value > 0 }
        parameters.cacheBuster = cacheBuster
        // An SVG source is passed on (sanitised) unless a raster is asked for, as imgproxy does unless ALWAYS_RASTERIZE_SVG.
        let skipped = skipProcessing.union(defaults.skipProcessing).union(defaults.rasterizesSVG ? [] : [.svg])
        parameters.passthrough = raw ? .always : skipped.isEmpty ? nil : .formats(skipped)
        parameters.preferredFormats = defaults.preferredFormats
        parameters.enforcedFormats = defaults.enforcedFormats
        parameters.negotiableFormats = defaults.autoFormats
        return parameters
    }
}

extension ImgproxyOptions {
    /// What imgproxy's settings (`IMGPROXY_*`, read into ``ServerConfiguration``) make of options a URL leaves out.
    struct Defaults {
        var preservesHDR = false
        var skipProcessing: Set<ImageFormat> = []
        var stripsMetadata = true
        var keepsCopyright = true
        var stripsColorProfile = true
        var autoRotates = true
        var preferredFormats = ServerConfiguration.imgproxyDefaultPreferredFormats
        var enforcedFormats: [ImageFormat] = []
        /// What `AUTO_JXL`, `AUTO_AVIF` and `AUTO_WEBP` let `Accept` choose, in imgproxy's order.
        var autoFormats: [ImageFormat] = [.jxl, .avif, .webp]
        /// imgproxy's `ALWAYS_RASTERIZE_SVG`: an SVG source with no format asked gives a raster, not the SVG sanitised.
        var rasterizesSVG = false
        /// imgproxy's `USE_LINEAR_COLORSPACE`.
        var resizesInLinearLight = false

        init() {}

        init(_ configuration: ServerConfiguration) {
            preservesHDR = configuration.imgproxy.preservesHDR
            skipProcessing = Set(configuration.imgproxy.skipProcessingFormats)
            (stripsMetadata, keepsCopyright) = (
                configuration.imgproxy.stripsMetadata, configuration.imgproxy.keepsCopyright
            )
            (stripsColorProfile, autoRotates) = (
                configuration.imgproxy.stripsColorProfile, configuration.imgproxy.autoRotates
            )
            (preferredFormats, enforcedFormats) = (
                configuration.imgproxy.preferredFormats, configuration.imgproxy.enforcedFormats
            )
            autoFormats = configuration.imgproxy.autoFormats
            rasterizesSVG = configuration.imgproxy.alwaysRasterizesSVG
            resizesInLinearLight = configuration.imgproxy.usesLinearColorspace
        }
    }
}

extension ImgproxyOptions {
    /// Whether ``noteWatermarkWithoutImage()`` has logged.
    private static let watermarkWithoutImageNoted = Atomic<Bool>(false)

    /// `wm` with no watermark image configured draws nothing, as imgproxy does (its test tables ask for
    /// exactly that): said once in the log, so that it is not a silent skip.
    static func noteWatermarkWithoutImage() {
        guard !watermarkWithoutImageNoted.exchange(true, ordering: .relaxed) else { return }
        Logger(label: "imagery.server").warning(
            "imgproxy URLs ask for wm (watermark), but no watermark image is configured (IMGPROXY_WATERMARK_PATH, _DATA or _URL): none is drawn, as imgproxy does"
        )
    }
}
