import Foundation

extension ImageRecipe {
    /// Which part of an image is kept when it is cropped (``ImageRequest/Thumbnail/Fit/cover``, ``Crop``),
    /// or where it sits in a larger box (``ImageRequest/Thumbnail/Fit/contain``).
    public enum Gravity: Sendable, Hashable {
        case center
        case north, south, east, west
        case northEast, northWest, southEast, southWest
        /// A point of the image, as fractions of its width and height (0...1): the crop is centred
        /// on it as far as the image allows.
        case focalPoint(x: Double, y: Double)
        /// A point of the source in its pixels (oriented, before trim and crop): the crop is centred
        /// on it as far as the image allows, wherever the operations before it move it (thumbor's
        /// `focal()`). Where nothing is cropped around it (``ImageRequest/Thumbnail/Fit/contain``), the centre.
        case sourcePoint(x: Int, y: Int)
        /// The most interesting part, found by libvips (``SmartStrategy``).
        case smart(SmartStrategy)

        /// How libvips finds the interesting part.
        public enum SmartStrategy: String, Sendable, Hashable, CaseIterable {
            /// Skin tones, saturated colours and edges (libvips' "attention").
            case attention
            /// The part with the most information (libvips' "entropy").
            case entropy
        }

        /// The offset of a part `part` long in a side `side` long (`part <= side`); `nil` for ``smart(_:)``.
        public func offset(part: Int, in side: Int, horizontal: Bool) -> Int? {
            let free = max(0, side - part)
            let position: Double
            switch self {
            case .center, .sourcePoint: position = 0.5  // a source point is resolved to a focal point first (layout)
            case .north: position = horizontal ? 0.5 : 0
            case .south: position = horizontal ? 0.5 : 1
            case .east: position = horizontal ? 1 : 0.5
            case .west: position = horizontal ? 0 : 0.5
            case .northEast: position = horizontal ? 1 : 0
            case .northWest: position = 0
            case .southEast: position = 1
            case .southWest: position = horizontal ? 0 : 1
            case .focalPoint(let x, let y):
                // Centred on the point, then kept inside the side.
                let centre = (horizontal ? x : y) * Double(side)
                return min(free, max(0, Int((centre - Double(part) / 2).rounded())))
            case .smart: return nil
            }
            return position == 0.5 ? free / 2 : Int((position * Double(free)).rounded())
        }
    }
}

extension ImageRecipe.Gravity {
    /// This gravity in the image turned clockwise by `quarterTurns`, then mirrored (`flop`: left and
    /// right, `flip`: top and bottom): the gravity there that points at the same pixels. Smart gravity
    /// and source points (in source pixels already) are as they are.
    public func turned(quarterTurns: Int, flop: Bool = false, flip: Bool = false) -> Self {
        // As a vector from the centre (x right, y down).
        var (x, y): (Double, Double)
        switch self {
        case .smart, .sourcePoint: return self
        case .focalPoint(let px, let py): (x, y) = (px - 0.5, py - 0.5)
        case .center: (x, y) = (0, 0)
        case .north: (x, y) = (0, -1)
        case .south: (x, y) = (0, 1)
        case .east: (x, y) = (1, 0)
        case .west: (x, y) = (-1, 0)
        case .northEast: (x, y) = (1, -1)
        case .northWest: (x, y) = (-1, -1)
        case .southEast: (x, y) = (1, 1)
        case .southWest: (x, y) = (-1, 1)
        }
        for _ in 0..<((quarterTurns % 4 + 4) % 4) { (x, y) = (-y, x) }
        if flop { x = -x }
        if flip { y = -y }
        if case .focalPoint = self { return .focalPoint(x: x + 0.5, y: y + 0.5) }
        let named: [[Self]] = [
            [.northWest, .north, .northEast], [.west, .center, .east], [.southWest, .south, .southEast],
        ]
        return named[Int(y) + 1][Int(x) + 1]
    }

    /// A ``sourcePoint(x:y:)`` as the focal point it is in `region` (source pixels) turned by
    /// `rotation` and mirrored (clamped to the region's edges); any other gravity as it is.
    func resolved(in region: ImageRecipe.Rect, rotation: ImageRecipe.Rotation, flip: Bool, flop: Bool) -> Self {
        guard case .sourcePoint(let x, let y) = self, region.width > 0, region.height > 0 else { return self }
        let point = Self.focalPoint(
            x: min(1, max(0, Double(x - region.x) / Double(region.width))),
            y: min(1, max(0, Double(y - region.y) / Double(region.height)))
        )
        return point.turned(quarterTurns: rotation.rawValue / 90, flop: flop, flip: flip)
    }
}
