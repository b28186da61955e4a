import Foundation

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
        let named: [[Self]] = [[.northWest, .north, .northEast], [.west, .center, .east], [.southWest, .south, .southEast]]
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
