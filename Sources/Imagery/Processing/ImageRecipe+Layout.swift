import Foundation

extension ImageRecipe {
    /// A rectangle in pixels.
    public struct Rect: Sendable, Hashable, CustomStringConvertible {
        public var x: Int
        public var y: Int
        public var width: Int
        public var height: Int

        public init(x: Int, y: Int, width: Int, height: Int) {
            (self.x, self.y, self.width, self.height) = (x, y, width, height)
        }

        public var description: String { "\(width)x\(height) at \(x),\(y)" }
    }

    /// The geometry of a recipe on a source of known size: every size and position the
    /// operations produce, worked out before any pixel is touched (only smart gravity and trim
    /// look at pixels). Backends follow it; tests check it without decoding.
    public struct Layout: Sendable, Hashable {
        /// The part of the oriented source kept (after ``ImageRecipe/trim`` and ``ImageRecipe/crop``),
        /// in source pixels. With ``smartRegion`` only its size is decided: the backend places it.
        public var region: Rect
        /// Set when the crop's place is for the backend to find (``Gravity/smart(_:)``).
        public var smartRegion: Gravity.SmartStrategy?
        /// The scale from the rotated region to ``scaledWidth`` × ``scaledHeight``, per side (exact,
        /// before rounding): what shrink-on-load may divide the source by.
        public var scale: SIMD2<Double>
        /// The rotated region resized.
        public var scaledWidth: Int
        public var scaledHeight: Int
        /// For ``ImageRequest/Thumbnail/Fit/cover``: the part of the scaled image kept (``smartCover``: its
        /// size only, the backend places it).
        public var coverCrop: Rect?
        public var smartCover: Gravity.SmartStrategy?
        /// For ``ImageRequest/Thumbnail/Fit/contain`` and ``ImageRecipe/extend``: the box (its size), and
        /// where the resized (and cover-cropped) image sits in it (its origin).
        public var canvas: Rect?
        /// Space added around the result (``ImageRecipe/padding``, or a ``Sizing``'s scaled by its dpr).
        public var padding: Insets?
        /// The final size, padding included.
        public var outputWidth: Int
        public var outputHeight: Int
        /// A ``Sizing``'s dpr as far as it applies (what its offsets and padding are multiplied by); 1 without one.
        public var dprScale = 1.0
    }

    /// The geometry of this recipe on a source `sourceWidth` × `sourceHeight` (oriented).
    /// - Parameters:
    ///   - sourceWidth: The source's width as displayed (after its EXIF orientation).
    ///   - sourceHeight: The source's height as displayed.
    ///   - trimmed: What ``trim`` left of the source (the backend finds it in the pixels); `nil`: all of it.
    ///   - maximumSide: The largest output width or height.
    /// - Throws: ``ImageProcessingError`` for a crop outside the image, an empty result, or an output
    ///   larger than `maximumSide`.
    public func layout(sourceWidth: Int, sourceHeight: Int, trimmed: Rect? = nil, maximumSide: Int = 16_384) throws
        -> Layout
    {
        let whole = trimmed ?? Rect(x: 0, y: 0, width: sourceWidth, height: sourceHeight)
        guard whole.width > 0, whole.height > 0 else { throw ImageProcessingError.emptyResult }
        if case .sizing(let sizing) = geometry { return try layout(sizing, whole: whole, maximumSide: maximumSide) }
        var region = whole
        var smartRegion: Gravity.SmartStrategy?
        if let crop {
            region = try Self.cropped(whole, by: crop)
            if case .gravity(.smart(let strategy)) = crop.placement { smartRegion = strategy }
        }
        let (rotatedWidth, rotatedHeight) =
            rotation.swapsSides ? (region.height, region.width) : (region.width, region.height)
        var scale = SIMD2<Double>(1, 1)
        var (scaledWidth, scaledHeight) = (rotatedWidth, rotatedHeight)
        var coverCrop: Rect?
        var smartCover: Gravity.SmartStrategy?
        var canvas: Rect?
        var (outputWidth, outputHeight) = (rotatedWidth, rotatedHeight)
        if var resize = resize.map({ box in
            var box = box
            if box.widthIsSource { box.width = rotatedWidth }
            if box.heightIsSource { box.height = rotatedHeight }
            return box.oriented(toWidth: rotatedWidth, height: rotatedHeight)
        }) {
            if resize.fit == .auto {
                let sameOrientation = (rotatedWidth >= rotatedHeight) == (resize.width >= resize.height)
                resize.fit = sameOrientation ? .cover : .inside
            }
            let horizontal = Double(resize.width) / Double(rotatedWidth)
            let vertical = Double(resize.height) / Double(rotatedHeight)
            func limited(_ scale: Double) -> Double { resize.enlarge ? scale : min(scale, 1) }
            func sized(_ x: Double, _ y: Double) -> (Int, Int) {
                (max(1, Int((Double(rotatedWidth) * x).rounded())), max(1, Int((Double(rotatedHeight) * y).rounded())))
            }
            switch resize.fit {
            case .cover, .coverDown, .outside:
                let covering = max(horizontal, vertical)
                let factor = limited(covering)
                scale = SIMD2(factor, factor)
                (scaledWidth, scaledHeight) = sized(factor, factor)
                if factor == covering {  // rounding must not leave the box uncovered
                    (scaledWidth, scaledHeight) = (max(scaledWidth, resize.width), max(scaledHeight, resize.height))
                }
                (outputWidth, outputHeight) = (scaledWidth, scaledHeight)
                if resize.fit != .outside {
                    var (width, height) = (min(scaledWidth, resize.width), min(scaledHeight, resize.height))
                    if resize.fit == .coverDown, (width, height) != (resize.width, resize.height) {
                        (width, height) = Self.aspectCrop(scaledWidth, scaledHeight, box: resize)
                    }
                    let gravity = resize.gravity.resolved(in: region, rotation: rotation, flip: flip, flop: flop)
                    if case .smart(let strategy) = gravity { smartCover = strategy }
                    coverCrop = Rect(
                        x: gravity.offset(part: width, in: scaledWidth, horizontal: true) ?? 0,
                        y: gravity.offset(part: height, in: scaledHeight, horizontal: false) ?? 0,
                        width: width, height: height
                    )
                    (outputWidth, outputHeight) = (width, height)
                }
            case .contain, .inside, .auto:
                let factor = limited(min(horizontal, vertical))
                scale = SIMD2(factor, factor)
                (scaledWidth, scaledHeight) = sized(factor, factor)
                // Within the box (rounding could pass it by one; a source smaller than the box already is).
                (scaledWidth, scaledHeight) = (min(scaledWidth, resize.width), min(scaledHeight, resize.height))
                (outputWidth, outputHeight) = (scaledWidth, scaledHeight)
                if resize.fit == .contain {
                    // Edges and corners place the image in the box; a point or smart gravity has nothing to choose.
                    let gravity: Gravity =
                        switch resize.gravity {
                        case .focalPoint, .sourcePoint, .smart: .center
                        default: resize.gravity
                        }
                    canvas = Rect(
                        x: gravity.offset(part: scaledWidth, in: resize.width, horizontal: true) ?? 0,
                        y: gravity.offset(part: scaledHeight, in: resize.height, horizontal: false) ?? 0,
                        width: resize.width, height: resize.height
                    )
                    (outputWidth, outputHeight) = (resize.width, resize.height)
                }
            case .fill:
                scale = SIMD2(limited(horizontal), limited(vertical))
                (scaledWidth, scaledHeight) = sized(scale.x, scale.y)
                (outputWidth, outputHeight) = (scaledWidth, scaledHeight)
            }
        }
        if let extend {
            let (width, height) = (max(outputWidth, extend.width), max(outputHeight, extend.height))
            if (width, height) != (outputWidth, outputHeight) {
                // The image (or contain's box) placed in the larger box: one canvas either way.
                let x = extend.gravity.offset(part: outputWidth, in: width, horizontal: true) ?? 0
                let y = extend.gravity.offset(part: outputHeight, in: height, horizontal: false) ?? 0
                canvas = Rect(x: x + (canvas?.x ?? 0), y: y + (canvas?.y ?? 0), width: width, height: height)
                (outputWidth, outputHeight) = (width, height)
            }
        }
        if let padding {
            outputWidth += padding.left + padding.right
            outputHeight += padding.top + padding.bottom
        }
        guard outputWidth > 0, outputHeight > 0 else { throw ImageProcessingError.emptyResult }
        guard outputWidth <= maximumSide, outputHeight <= maximumSide, scaledWidth <= maximumSide,
            scaledHeight <= maximumSide
        else {
            throw ImageProcessingError.outputTooLarge(width: outputWidth, height: outputHeight, limit: maximumSide)
        }
        return Layout(
            region: region, smartRegion: smartRegion, scale: scale, scaledWidth: scaledWidth,
            scaledHeight: scaledHeight,
            coverCrop: coverCrop, smartCover: smartCover, canvas: canvas, padding: padding, outputWidth: outputWidth,
            outputHeight: outputHeight
        )
    }

    /// fill-down's crop of a `scaledWidth` × `scaledHeight` image smaller than `box` on a side: the
    /// largest part with the box's aspect ratio (as imgproxy sizes it).
    static func aspectCrop(_ scaledWidth: Int, _ scaledHeight: Int, box: ImageRequest.Thumbnail) -> (Int, Int) {
        let (overWidth, overHeight) = (
            Double(box.width) / Double(scaledWidth), Double(box.height) / Double(scaledHeight)
        )
        let ratio = Double(box.height) / Double(box.width)
        if overWidth > overHeight, overWidth > 1 {
            return (scaledWidth, min(scaledHeight, max(1, Int((Double(scaledWidth) * ratio).rounded()))))
        }
        if overHeight > overWidth, overHeight > 1 {
            return (min(scaledWidth, max(1, Int((Double(scaledHeight) / ratio).rounded()))), scaledHeight)
        }
        return (min(scaledWidth, box.width), min(scaledHeight, box.height))
    }

    /// `crop` of `whole` (source pixels): sizes are clamped to the image, a rectangle reaching past
    /// an edge is cut there, and one that starts outside the image is an error.
    static func cropped(_ whole: Rect, by crop: Crop) throws -> Rect {
        let width = crop.width.resolved(in: whole.width)
        let height = crop.height.resolved(in: whole.height)
        guard width > 0, height > 0 else { throw ImageProcessingError.emptyResult }
        switch crop.placement {
        case .origin(let x, let y):
            let (left, top) = (x.resolved(in: whole.width), y.resolved(in: whole.height))
            guard left >= 0, top >= 0, left < whole.width, top < whole.height else {
                throw ImageProcessingError.cropOutsideImage(
                    Rect(x: left, y: top, width: width, height: height), width: whole.width, height: whole.height
                )
            }
            return Rect(
                x: whole.x + left, y: whole.y + top, width: min(width, whole.width - left),
                height: min(height, whole.height - top))
        case .gravity(let gravity):
            let gravity = gravity.resolved(in: whole, rotation: .none, flip: false, flop: false)
            let (width, height) = (min(width, whole.width), min(height, whole.height))
            return Rect(
                x: whole.x + (gravity.offset(part: width, in: whole.width, horizontal: true) ?? 0),
                y: whole.y + (gravity.offset(part: height, in: whole.height, horizontal: false) ?? 0),
                width: width, height: height
            )
        }
    }

    /// How far each side of the source may be shrunk while it is decoded (each 1 or less), so that
    /// the output still gets at least one source pixel per output pixel: the layout's scale, mapped
    /// back to the source's sides through the rotation. 1 when ``trim`` is set (what it keeps is
    /// unknown until the pixels are read) or the layout fails (the processor reports why).
    public func decodeScale(sourceWidth: Int, sourceHeight: Int) -> (x: Double, y: Double) {
        guard trim == nil, resizes,
            let layout = try? layout(sourceWidth: sourceWidth, sourceHeight: sourceHeight, maximumSide: .max)
        else { return (1, 1) }
        let (x, y) = rotation.swapsSides ? (layout.scale.y, layout.scale.x) : (layout.scale.x, layout.scale.y)
        return (min(1, x), min(1, y))
    }

    /// The largest factor the whole source may be divided by on decoding (at least 1): both sides
    /// keep at least the pixels ``decodeScale(sourceWidth:sourceHeight:)`` asks for.
    public func decodeShrink(sourceWidth: Int, sourceHeight: Int) -> Double {
        let scale = decodeScale(sourceWidth: sourceWidth, sourceHeight: sourceHeight)
        return 1 / max(scale.x, scale.y)
    }
}
