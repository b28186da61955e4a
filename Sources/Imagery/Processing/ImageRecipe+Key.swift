import Foundation

extension ImageRecipe: CustomStringConvertible {
    /// A canonical string of the recipe, for cache keys: equal recipes give equal strings and
    /// different recipes different strings. A resize alone reads `WIDTHxHEIGHT-FIT`; other operations
    /// follow in the order they apply, separated by `,`.
    public var description: String {
        var parts: [String] = []
        if let frame { parts.append("frame:\(frame)") }
        if ignoresOrientation { parts.append("orient:none") }
        if let limits = sourceLimits {
            parts.append(
                "limits:\(limits.pixels ?? 0):\(limits.framePixels ?? 0):\(limits.frames ?? 0):\(limits.bytes ?? 0)")
        }
        if let trim {
            parts.append(
                "trim:\(trim.threshold)" + (trim.color.map { ":\($0)" } ?? "") + (trim.fromBottomRight ? ":br" : "")
                    + (trim.equalHorizontal ? ":eh" : "") + (trim.equalVertical ? ":ev" : "")
                    + (trim.measure == .perChannel ? "" : ":\(trim.measure.rawValue)"))
        }
        if let crop {
            let placement =
                switch crop.placement {
                case .origin(let x, let y): "@\(x.key),\(y.key)"
                case .gravity(let gravity): "~\(gravity.key)"
                }
            parts.append("crop:\(crop.width.key)x\(crop.height.key)\(placement)")
        }
        if rotation != .none { parts.append("rotate:\(rotation.rawValue)") }
        if flip { parts.append("flip") }
        if flop { parts.append("flop") }
        if let resize { parts.append(resize.description) }
        if let sizing { parts.append(sizing.description) }
        if boxFill != .background { parts.append("fill:\(boxFill.rawValue)") }
        if let extend { parts.append("extend:\(extend.width)x\(extend.height)~\(extend.gravity.key)") }
        if let pixelate { parts.append("pixelate:\(pixelate)") }
        if let padding { parts.append("pad:\(padding.top):\(padding.right):\(padding.bottom):\(padding.left)") }
        if let blur { parts.append("blur:\(blur)") }
        if let sharpen { parts.append("sharpen:\(sharpen)") }
        if grayscale { parts.append("gray") }
        if !adjustments.isEmpty { parts.append("adjust:" + adjustments.map(\.description).joined(separator: "+")) }
        if let background { parts.append("bg:\(background)") }
        if keepsColorProfile { parts.append("profile:keep") }
        if keepsHighBitDepth { parts.append("depth:16") }
        if resizesInLinearLight { parts.append("linear") }
        if keptMetadata != .copyright { parts.append("meta:\(keptMetadata.rawValue)") }
        if keepsPartialDecodeBlocks { parts.append("dct:partial") }
        if let watermark { parts.append(watermark.key) }
        return parts.joined(separator: ",")
    }
}

extension ImageRecipe.Watermark {
    /// Its part of a recipe's key.
    var key: String {
        do {
            let watermark = self
            let mark =
                switch watermark.mark {
                case .image(let name): name
                // Length-prefixed: the text may hold any separator.
                case .text(let text): "text(\(text.string.utf8.count):\(text.string):\(text.font):\(text.color))"
                case .linked(let image): image.description
                }
            let placement =
                switch watermark.placement {
                case .edges: ""
                case .offset(let gravity): ":at\(gravity)"
                case .tiled(let x, let y): ":tiled(\(x),\(y))"
                case .pasted(let paste): ":\(paste)"
                }
            return "wm:\(mark):\(watermark.gravity.key):\(watermark.offsetX):\(watermark.offsetY):\(watermark.opacity)"
                + (watermark.scale.map { ":\($0)" } ?? "") + placement + (watermark.fraction.map { ":fit\($0)" } ?? "")
        }
    }
}

extension ImageRecipe.Length {
    var key: String {
        switch self {
        case .pixels(let pixels): "\(pixels)"
        case .fraction(let fraction): "\(fraction)f"
        }
    }
}

extension ImageRecipe.Gravity: CustomStringConvertible {
    /// The short name (`center`, `north`, ..., `fp:X:Y`, `smart:attention`).
    public var description: String { key }

    var key: String {
        switch self {
        case .center: "center"
        case .north: "north"
        case .south: "south"
        case .east: "east"
        case .west: "west"
        case .northEast: "northeast"
        case .northWest: "northwest"
        case .southEast: "southeast"
        case .southWest: "southwest"
        case .focalPoint(let x, let y): "fp:\(x):\(y)"
        case .sourcePoint(let x, let y): "sp:\(x):\(y)"
        case .smart(let strategy): "smart:\(strategy.rawValue)"
        }
    }
}
