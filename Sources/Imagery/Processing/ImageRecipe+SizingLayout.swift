import Foundation

extension ImageRecipe {
    /// The layout of a recipe with a ``Sizing`` on `whole` (the oriented source after trimming, in
    /// source pixels), following imgproxy's arithmetic step by step (its `calcScale`, `calcSizes`,
    /// `limitScale`, `calcPosition` and the order of its pipeline), so that every size matches
    /// imgproxy's own test tables.
    func layout(_ sizing: Sizing, whole: Rect, maximumSide: Int) throws -> Layout {
        guard sizing.dpr > 0, sizing.zoomX > 0, sizing.zoomY > 0 else {
            throw ImageProcessingError.invalidValue("a sizing's dpr and zoom must be above 0")
        }
        let swaps = rotation.swapsSides
        // Sides in the output's orientation (after the rotation), as imgproxy works in.
        let (sourceWidth, sourceHeight) = swaps ? (whole.height, whole.width) : (whole.width, whole.height)
        let cropWidth = Self.cropSide(sourceWidth, sizing.crop?.width ?? 0)
        let cropHeight = Self.cropSide(sourceHeight, sizing.crop?.height ?? 0)
        var geometry = SizingGeometry(
            sizing: sizing, width: Self.minNonZero(cropWidth, sourceWidth),
            height: Self.minNonZero(cropHeight, sourceHeight)
        )
        geometry.solve()

        // The crop, in the source's orientation (before the rotation): sides swapped, gravity turned back.
        var region = whole
        var smartRegion: Gravity.SmartStrategy?
        if let crop = sizing.crop, cropWidth > 0 || cropHeight > 0 {
            let (width, height) = swaps ? (cropHeight, cropWidth) : (cropWidth, cropHeight)
            let gravity = crop.gravity.unturned(rotation: rotation, flop: flop, flip: flip)
            let (keptWidth, keptHeight) = (Self.minNonZero(width, whole.width), Self.minNonZero(height, whole.height))
            if keptWidth < whole.width || keptHeight < whole.height {
                if case .smart(let strategy) = gravity.gravity { smartRegion = strategy }
                let (x, y) = gravity.position(in: whole.width, whole.height, of: keptWidth, keptHeight, dpr: 1)
                region = Rect(x: whole.x + x, y: whole.y + y, width: keptWidth, height: keptHeight)
            }
        }

        var (outputWidth, outputHeight) = (geometry.scaledWidth, geometry.scaledHeight)
        // The crop to the result, after the resize and the rotation.
        var coverCrop: Rect?
        var smartCover: Gravity.SmartStrategy?
        if geometry.resultCropWidth > 0 || geometry.resultCropHeight > 0 {
            let width = Self.minNonZero(geometry.resultCropWidth, outputWidth)
            let height = Self.minNonZero(geometry.resultCropHeight, outputHeight)
            if width < outputWidth || height < outputHeight {
                if case .smart(let strategy) = sizing.gravity.gravity { smartCover = strategy }
                let (x, y) = sizing.gravity.position(
                    in: outputWidth, outputHeight, of: width, height, dpr: geometry.dprScale)
                coverCrop = Rect(x: x, y: y, width: width, height: height)
                (outputWidth, outputHeight) = (width, height)
            }
        }

        // Extension to the box, then to its aspect ratio: one canvas.
        var canvas: Rect?
        func extended(to width: Int, _ height: Int, _ gravity: OffsetGravity) {
            guard width > outputWidth || height > outputHeight else { return }
            let (boxWidth, boxHeight) = (width > 0 ? width : outputWidth, height > 0 ? height : outputHeight)
            let (x, y) = gravity.position(
                in: boxWidth, boxHeight, of: outputWidth, outputHeight, dpr: geometry.dprScale)
            canvas = Rect(x: x + (canvas?.x ?? 0), y: y + (canvas?.y ?? 0), width: boxWidth, height: boxHeight)
            (outputWidth, outputHeight) = (boxWidth, boxHeight)
        }
        if let gravity = sizing.extend { extended(to: geometry.targetWidth, geometry.targetHeight, gravity) }
        if let gravity = sizing.extendAspectRatio, geometry.aspectWidth > 0, geometry.aspectHeight > 0 {
            extended(to: geometry.aspectWidth, geometry.aspectHeight, gravity)
        }

        let padding = sizing.padding.map { padding in
            Insets(
                top: Self.scaleToEven(padding.top, geometry.dprScale),
                right: Self.scaleToEven(padding.right, geometry.dprScale),
                bottom: Self.scaleToEven(padding.bottom, geometry.dprScale),
                left: Self.scaleToEven(padding.left, geometry.dprScale)
            )
        }
        if let padding {
            outputWidth += padding.left + padding.right
            outputHeight += padding.top + padding.bottom
        }
        guard outputWidth > 0, outputHeight > 0, geometry.scaledWidth > 0, geometry.scaledHeight > 0 else {
            throw ImageProcessingError.emptyResult
        }
        let (scaledWidth, scaledHeight) = (geometry.scaledWidth, geometry.scaledHeight)
        guard outputWidth <= maximumSide, outputHeight <= maximumSide, scaledWidth <= maximumSide,
            scaledHeight <= maximumSide
        else {
            throw ImageProcessingError.outputTooLarge(
                width: max(outputWidth, scaledWidth), height: max(outputHeight, scaledHeight), limit: maximumSide)
        }
        return Layout(
            region: region, smartRegion: smartRegion, scale: SIMD2(geometry.widthScale, geometry.heightScale),
            scaledWidth: scaledWidth, scaledHeight: scaledHeight, coverCrop: coverCrop, smartCover: smartCover,
            canvas: canvas, padding: padding, outputWidth: outputWidth, outputHeight: outputHeight,
            dprScale: geometry.dprScale
        )
    }

    /// A crop side from its value: 0 none, at least 1 pixels, else a fraction of `side` (at least a pixel).
    static func cropSide(_ side: Int, _ value: Double) -> Int {
        switch value {
        case 0: 0
        case 1...: Int(min(value, Double(Int32.max)))
        default: max(1, scale(side, value))
        }
    }

    /// The smaller of two sides, where 0 is "none".
    static func minNonZero(_ a: Int, _ b: Int) -> Int { a == 0 ? b : b == 0 ? a : min(a, b) }

    /// `side` × `factor`, rounded half away from zero (0 stays 0).
    package static func scale(_ side: Int, _ factor: Double) -> Int {
        side == 0 ? 0 : Int((Double(side) * factor).rounded())
    }

    /// `side` × `factor`, rounded half to even (0 stays 0).
    package static func scaleToEven(_ side: Int, _ factor: Double) -> Int {
        side == 0 ? 0 : Int((Double(side) * factor).rounded(.toNearestOrEven))
    }
}

/// imgproxy's scale and sizes for a region `width` × `height` (in the output's orientation).
private struct SizingGeometry {
    let sizing: ImageRecipe.Sizing
    let width: Int
    let height: Int
    var widthScale = 1.0
    var heightScale = 1.0
    /// The dpr as far as it applies (less than the sizing's when the source is too small for it).
    var dprScale = 1.0
    var targetWidth = 0
    var targetHeight = 0
    var scaledWidth = 0
    var scaledHeight = 0
    var resultCropWidth = 0
    var resultCropHeight = 0
    var aspectWidth = 0
    var aspectHeight = 0

    init(sizing: ImageRecipe.Sizing, width: Int, height: Int) {
        (self.sizing, self.width, self.height) = (sizing, width, height)
    }

    mutating func solve() {
        calculateScale()
        calculateSizes()
        limitScale()
    }

    private mutating func calculateScale() {
        var (widthShrink, heightShrink) = (1.0, 1.0)
        let (sourceWidth, sourceHeight) = (Double(width), Double(height))
        let boxWidth = sizing.width != 0 ? Double(sizing.width) : sourceWidth
        let boxHeight = sizing.height != 0 ? Double(sizing.height) : sourceHeight
        if boxWidth != sourceWidth { widthShrink = sourceWidth / boxWidth }
        if boxHeight != sourceHeight { heightShrink = sourceHeight / boxHeight }
        if widthShrink != 1 || heightShrink != 1 {
            var mode = sizing.mode
            if mode == .auto {
                let (sourceLandscape, boxLandscape) = (sourceWidth - sourceHeight >= 0, boxWidth - boxHeight >= 0)
                mode = sourceLandscape == boxLandscape ? .fill : .fit
            }
            switch mode {
            case _ where sizing.width == 0 && mode != .force: widthShrink = heightShrink
            case _ where sizing.height == 0 && mode != .force: heightShrink = widthShrink
            case .fit: (widthShrink, heightShrink) = (max(widthShrink, heightShrink), max(widthShrink, heightShrink))
            case .fill, .fillDown:
                (widthShrink, heightShrink) = (min(widthShrink, heightShrink), min(widthShrink, heightShrink))
            case .force, .auto: break
            }
        }
        widthShrink /= sizing.zoomX
        heightShrink /= sizing.zoomY
        dprScale = sizing.dpr
        if !sizing.enlarge {
            let least = min(widthShrink, heightShrink)
            if least < 1 {
                widthShrink /= least
                heightShrink /= least
                // The box cannot be reached: a dpr below 1 would move further from it (extension keeps
                // the composition whatever the dpr, so it is not compensated then).
                if sizing.extend == nil { dprScale /= least }
            }
            dprScale = min(dprScale, min(widthShrink, heightShrink))  // no more than reaches the source's own size
        }
        if sizing.minimumWidth > 0 {
            let least = sourceWidth / Double(sizing.minimumWidth)
            if least < widthShrink {
                heightShrink /= widthShrink / least
                widthShrink = least
            }
        }
        if sizing.minimumHeight > 0 {
            let least = sourceHeight / Double(sizing.minimumHeight)
            if least < heightShrink {
                widthShrink /= heightShrink / least
                heightShrink = least
            }
        }
        widthShrink /= dprScale
        heightShrink /= dprScale
        widthShrink = min(widthShrink, sourceWidth)  // never below a pixel
        heightShrink = min(heightShrink, sourceHeight)
        (widthScale, heightScale) = (1 / widthShrink, 1 / heightShrink)
    }

    private mutating func calculateSizes() {
        targetWidth = ImageRecipe.scale(sizing.width, dprScale * sizing.zoomX)
        targetHeight = ImageRecipe.scale(sizing.height, dprScale * sizing.zoomY)
        scaledWidth = ImageRecipe.scale(width, widthScale)
        scaledHeight = ImageRecipe.scale(height, heightScale)
        (resultCropWidth, resultCropHeight) = (targetWidth, targetHeight)
        if sizing.mode == .fillDown, !sizing.enlarge {
            let overWidth = Double(targetWidth) / Double(scaledWidth)
            let overHeight = Double(targetHeight) / Double(scaledHeight)
            if overWidth > overHeight, overWidth > 1 {
                (resultCropWidth, resultCropHeight) = (
                    scaledWidth, ImageRecipe.scale(scaledWidth, Double(targetHeight) / Double(targetWidth))
                )
            } else if overHeight > overWidth, overHeight > 1 {
                (resultCropWidth, resultCropHeight) = (
                    ImageRecipe.scale(scaledHeight, Double(targetWidth) / Double(targetHeight)), scaledHeight
                )
            }
        }
        (aspectWidth, aspectHeight) = (0, 0)
        if sizing.extendAspectRatio != nil, targetWidth > 0, targetHeight > 0 {
            let outputWidth = ImageRecipe.minNonZero(scaledWidth, resultCropWidth)
            let outputHeight = ImageRecipe.minNonZero(scaledHeight, resultCropHeight)
            let overWidth = Double(targetWidth) / Double(outputWidth)
            let overHeight = Double(targetHeight) / Double(outputHeight)
            if overHeight > overWidth {
                (aspectWidth, aspectHeight) = (
                    outputWidth, ImageRecipe.scale(outputWidth, Double(targetHeight) / Double(targetWidth))
                )
            } else if overWidth > overHeight {
                (aspectWidth, aspectHeight) = (
                    ImageRecipe.scale(outputHeight, Double(targetWidth) / Double(targetHeight)), outputHeight
                )
            }
        }
    }

    private mutating func limitScale() {
        let limit = sizing.maximumResultSide
        guard limit > 0 else { return }
        var outputWidth = ImageRecipe.minNonZero(scaledWidth, resultCropWidth)
        var outputHeight = ImageRecipe.minNonZero(scaledHeight, resultCropHeight)
        if sizing.extend != nil {
            (outputWidth, outputHeight) = (max(outputWidth, targetWidth), max(outputHeight, targetHeight))
        } else if sizing.extendAspectRatio != nil {
            (outputWidth, outputHeight) = (max(outputWidth, aspectWidth), max(outputHeight, aspectHeight))
        }
        if let padding = sizing.padding {
            outputWidth +=
                ImageRecipe.scaleToEven(padding.left, dprScale) + ImageRecipe.scaleToEven(padding.right, dprScale)
            outputHeight +=
                ImageRecipe.scaleToEven(padding.top, dprScale) + ImageRecipe.scaleToEven(padding.bottom, dprScale)
        }
        guard outputWidth > limit || outputHeight > limit else { return }
        let down = Double(limit) / Double(max(outputWidth, outputHeight))
        widthScale = max(widthScale * down, 1 / Double(width))  // never below a pixel
        heightScale = max(heightScale * down, 1 / Double(height))
        dprScale *= down
        calculateSizes()
    }
}

extension ImageRecipe.OffsetGravity {
    /// Where a part `part` × `partHeight` goes in `width` × `height` (imgproxy's `calcPosition`,
    /// without overflow): offsets of magnitude 1 or more are pixels × `dpr`, below 1 fractions of the
    /// side; the result is kept inside. Smart gravity is placed by the backend: the centre here.
    /// With `overflow`, the part may hang off the edges, at least a pixel of it inside.
    public func position(
        in width: Int, _ height: Int, of part: Int, _ partHeight: Int, dpr: Double, overflow: Bool = false
    ) -> (x: Int, y: Int) {
        var (left, top): (Int, Int)
        if case .focalPoint(let pointX, let pointY) = gravity {
            left = ImageRecipe.scaleToEven(width, pointX) - part / 2
            top = ImageRecipe.scaleToEven(height, pointY) - partHeight / 2
        } else {
            func offset(_ value: Double, _ side: Int) -> Int {
                abs(value) >= 1 ? Int((value * dpr).rounded(.toNearestOrEven)) : ImageRecipe.scaleToEven(side, value)
            }
            let (offsetX, offsetY) = (offset(x, width), offset(y, height))
            left = Self.half(width - part + 1) + offsetX
            top = Self.half(height - partHeight + 1) + offsetY
            switch gravity {
            case .north, .northEast, .northWest: top = offsetY
            case .south, .southEast, .southWest: top = height - partHeight - offsetY
            default: break
            }
            switch gravity {
            case .east, .northEast, .southEast: left = width - part - offsetX
            case .west, .northWest, .southWest: left = offsetX
            default: break
            }
        }
        if overflow { return (max(1 - part, min(left, width - 1)), max(1 - partHeight, min(top, height - 1))) }
        return (max(0, min(left, width - part)), max(0, min(top, height - partHeight)))
    }

    /// `value` / 2 rounded half to even, as imgproxy centres (0 stays 0).
    private static func half(_ value: Int) -> Int {
        value == 0 ? 0 : Int((Double(value) / 2).rounded(.toNearestOrEven))
    }

    /// This gravity, given in the image after `rotation` and the mirrors, in the image before them
    /// (the crop is taken before turning): imgproxy's `RotateAndFlip`, offsets included.
    func unturned(rotation: ImageRecipe.Rotation, flop: Bool, flip: Bool) -> Self {
        var (gravity, x, y) = (self.gravity, self.x, self.y)
        if case .focalPoint(let px, let py) = gravity { (x, y) = (px, py) }
        func isPoint() -> Bool { if case .focalPoint = gravity { true } else { false } }
        if flop {
            gravity = gravity.turned(quarterTurns: 0, flop: true)
            switch gravity {
            case .center, .north, .south: x = -x
            case .focalPoint: x = 1 - x
            default: break
            }
        }
        if flip {
            gravity = gravity.turned(quarterTurns: 0, flip: true)
            switch gravity {
            case .center, .east, .west: y = -y
            case .focalPoint: y = 1 - y
            default: break
            }
        }
        switch rotation {
        case .none: break
        case .quarter:
            gravity = gravity.turned(quarterTurns: -1)
            switch gravity {
            case .center, .east, .west: (x, y) = (y, -x)
            case .focalPoint: (x, y) = (y, 1 - x)
            default: (x, y) = (y, x)
            }
        case .half:
            gravity = gravity.turned(quarterTurns: 2)
            switch gravity {
            case .center: (x, y) = (-x, -y)
            case .north, .south: x = -x
            case .east, .west: y = -y
            case .focalPoint: (x, y) = (1 - x, 1 - y)
            default: break
            }
        case .threeQuarters:
            gravity = gravity.turned(quarterTurns: 1)
            switch gravity {
            case .center, .north, .south: (x, y) = (-y, x)
            case .focalPoint: (x, y) = (1 - y, x)
            default: (x, y) = (y, x)
            }
        }
        if isPoint() { return Self(.focalPoint(x: x, y: y)) }
        return Self(gravity, x: x, y: y)
    }
}
