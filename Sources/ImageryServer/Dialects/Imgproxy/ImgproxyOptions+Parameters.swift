import Foundation
import Imagery

/// What imgproxy's options mean, as imgproxy's processing pipeline does it, expressed as Imagery's
/// recipe: the same ``ImageParameters`` the native query makes, so that both syntaxes share one
/// variant in every cache.
extension ImgproxyOptions {
    /// - Parameters:
    ///   - source: The source URL (http or https).
    ///   - maximumSide: The largest output side (a box past it, after `dpr`, is scaled down to it).
    ///   - negotiates: Whether `Accept` chooses the format when neither `format` nor an extension does
    ///     (imgproxy's `AUTO_WEBP`/`AUTO_AVIF`); otherwise the source's.
    /// - Throws: A 400 ``ServerError`` for a source that is no http(s) URL or a combination not supported.
    func parameters(source: String, maximumSide: Int, negotiates: Bool) throws -> ImageParameters {
        guard let url = ServerConfiguration.sourceURL(source) else {
            throw ServerError.badParameter("the source of an imgproxy URL must be an http or https URL")
        }
        var recipe = ImageRecipe()
        recipe.trim = trim
        recipe.rotation = ImageRecipe.Rotation(rawValue: rotate) ?? .none
        recipe.flop = flipHorizontal
        recipe.flip = flipVertical
        if let crop, crop.width > 0 || crop.height > 0 {
            recipe.crop = unrotated(crop)
        }
        // The box: width and height × dpr, scaled down (keeping its shape) to the output limit.
        var box = (Double(width) * dpr, Double(height) * dpr)
        let over = max(box.0, box.1) / Double(maximumSide)
        if over > 1 { box = (box.0 / over, box.1 / over) }
        let (boxWidth, boxHeight) = (width > 0 ? max(1, Int(box.0.rounded())) : 0, height > 0 ? max(1, Int(box.1.rounded())) : 0)
        if boxWidth > 0 || boxHeight > 0 {
            recipe.resize = try resize(boxWidth, boxHeight, maximumSide: maximumSide)
        }
        if let extend, boxWidth > 0 || boxHeight > 0 {
            recipe.extend = ImageRecipe.Extend(width: boxWidth, height: boxHeight, gravity: extend)
        }
        if let padding {
            func scaled(_ side: Int) -> Int { Int(min(Double(maximumSide), (Double(side) * dpr).rounded())) }
            recipe.padding = ImageRecipe.Insets(
                top: scaled(padding.top), right: scaled(padding.right), bottom: scaled(padding.bottom), left: scaled(padding.left)
            )
        }
        recipe.background = background
        if blur > 0 { recipe.blur = max(0.3, min(100, blur)) }
        if sharpen > 0 { recipe.sharpen = max(0.3, min(10, sharpen)) }
        recipe.keepsColorProfile = keepsColorProfile
        let encoding = EncodingOptions(quality: quality > 0 ? quality : nil, maximumBytes: maximumBytes > 0 ? maximumBytes : nil)
        var parameters = ImageParameters(url: url, recipe: recipe, format: format, encoding: encoding, negotiates: negotiates)
        parameters.formatQualities = formatQualities.filter { $0.value > 0 }
        parameters.cacheBuster = cacheBuster
        return parameters
    }

    /// The resizing type on a box (a side of 0: that side follows the aspect ratio).
    private func resize(_ boxWidth: Int, _ boxHeight: Int, maximumSide: Int) throws -> ImageRequest.Thumbnail {
        let oneSide = boxWidth == 0 || boxHeight == 0
        let fit: ImageRequest.Thumbnail.Fit
        switch resizingType {
        case _ where oneSide && resizingType != .force: fit = .inside  // every type scales by the side given
        case .fit: fit = .inside
        case .fill: fit = .cover
        case .fillDown: fit = .coverDown
        case .auto: fit = .auto
        case .force:
            // One side given: it is stretched and the other kept, which only a box that cannot enlarge gives.
            guard !oneSide || !enlarge else {
                throw ServerError.badParameter("imgproxy resizing type force with enlarge needs both width and height here")
            }
            fit = .fill
        }
        return ImageRequest.Thumbnail(
            width: boxWidth > 0 ? boxWidth : maximumSide, height: boxHeight > 0 ? boxHeight : maximumSide,
            fit: fit, enlarge: enlarge, gravity: gravity
        )
    }

    /// imgproxy's crop is written in the output's orientation (after `rotate` and `flip`); Imagery crops
    /// before turning: the sides swap with a quarter turn and the gravity turns and mirrors back.
    private func unrotated(_ crop: (width: Double, height: Double, gravity: ImageRecipe.Gravity?)) -> ImageRecipe.Crop {
        func length(_ value: Double) -> ImageRecipe.Length {
            // Pixels past any image are the whole side (the crop is cut at the edges): no overflow.
            value == 0 ? .fraction(1) : value < 1 ? .fraction(value) : .pixels(Int(min(value, Double(Int32.max))))
        }
        var (width, height) = (length(crop.width), length(crop.height))
        if rotate % 180 == 90 { (width, height) = (height, width) }
        let gravity = (crop.gravity ?? gravity).unturned(quarterTurns: rotate / 90, mirroredHorizontally: flipHorizontal, mirroredVertically: flipVertical)
        return ImageRecipe.Crop(width: width, height: height, placement: .gravity(gravity))
    }
}

extension ImageRecipe.Gravity {
    /// The gravity in an image that, turned clockwise by `quarterTurns` and then mirrored, gives an
    /// image where this gravity points at the same pixels (the inverse of ``turned(quarterTurns:flop:flip:)``).
    func unturned(quarterTurns: Int, mirroredHorizontally: Bool, mirroredVertically: Bool) -> Self {
        turned(quarterTurns: 0, flop: mirroredHorizontally, flip: mirroredVertically).turned(quarterTurns: -quarterTurns)
    }
}
