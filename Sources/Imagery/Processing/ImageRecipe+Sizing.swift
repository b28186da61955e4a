import Foundation

extension ImageRecipe {
    /// The geometry of a resize as imgproxy describes it, resolved against the source's size when
    /// the recipe is laid out (``layout(sourceWidth:sourceHeight:trimmed:maximumSide:)``).
    ///
    /// ``ImageRequest/Thumbnail`` is a box and a fit; imgproxy's sizing has more that depends on the
    /// source: a device pixel ratio that no longer applies once the source is smaller than the box
    /// (padding and extension shrink with it), zoom, minimum sides, a crop before the resize, a crop
    /// of the result, extension to the box or only to its aspect ratio, offsets from every gravity,
    /// and a largest result side that scales everything down together. A recipe has either a sizing
    /// or its own ``ImageRecipe/resize``, ``ImageRecipe/crop``, ``ImageRecipe/extend`` and
    /// ``ImageRecipe/padding`` (``ImageRecipe/geometry`` is one or the other): the sizing holds them all.
    ///
    /// The operations apply in imgproxy's order: crop (in the output's orientation), resize,
    /// rotation and mirrors (``ImageRecipe/rotation``, ``ImageRecipe/flip``, ``ImageRecipe/flop``),
    /// crop to the result, extension to the box, extension to its aspect ratio, padding.
    public struct Sizing: Sendable, Hashable {
        /// How the source fits the box (imgproxy's resizing types).
        public enum Mode: String, Sendable, Hashable, CaseIterable {
            /// Inside the box, the aspect ratio kept.
            case fit
            /// Covers the box, the overflow cropped (by ``Sizing/gravity``).
            case fill
            /// As ``fill``, but a source smaller than the box is cropped to the box's aspect ratio instead of enlarged.
            case fillDown = "fill-down"
            /// Stretched to the box.
            case force
            /// ``fill`` when source and box have the same orientation, else ``fit``.
            case auto
        }

        public var mode = Mode.fit
        /// The box; 0: that side of the source (after ``crop``).
        public var width = 0
        public var height = 0
        /// Whether a source smaller than the box may grow.
        public var enlarge = false
        /// Device pixel ratio (above 0): the box, gravity offsets in pixels and padding are multiplied by it
        /// as far as the source allows without enlarging (unless ``enlarge``).
        public var dpr = 1.0
        /// Multiplies the scale, and the box, per side (above 0).
        public var zoomX = 1.0
        public var zoomY = 1.0
        /// The image is scaled to at least this width (or height), enlarged if need be, before the result
        /// is cropped to the box (imgproxy's `min-width` and `min-height`); 0: no minimum.
        public var minimumWidth = 0
        public var minimumHeight = 0
        /// Where the crop to the result (``Mode/fill``, ``Mode/fillDown``) is taken.
        public var gravity = OffsetGravity(.center)
        /// A part of the source kept before resizing; `nil`: all of it.
        public var crop: Crop?
        /// The result placed in the box where it is smaller; `nil`: not extended.
        public var extend: OffsetGravity?
        /// The result placed in the smallest box of the box's aspect ratio that holds it; `nil`: not extended.
        public var extendAspectRatio: OffsetGravity?
        /// Space around the result, before ``dpr``.
        public var padding: Insets?
        /// The result's largest side, padding and extension included: past it, everything is scaled down
        /// together; 0: no limit.
        public var maximumResultSide = 0

        public init() {}

        /// A crop in the output's orientation: each side 0 (the whole side), below 1 (a fraction of
        /// it) or pixels, placed by gravity and offsets.
        public struct Crop: Sendable, Hashable {
            public var width: Double
            public var height: Double
            public var gravity: OffsetGravity

            public init(width: Double, height: Double, gravity: OffsetGravity = OffsetGravity(.center)) {
                (self.width, self.height, self.gravity) = (width, height, gravity)
            }
        }
    }

    /// A gravity and offsets from it, as imgproxy places things: from the edges the gravity names,
    /// towards the centre (from the centre: right and down). An offset of magnitude 1 or more is
    /// pixels (× the sizing's dpr where the result is placed); below 1 a fraction of the side. A
    /// ``Gravity/focalPoint(x:y:)`` has no offsets (the point is its own).
    public struct OffsetGravity: Sendable, Hashable {
        public var gravity: Gravity
        public var x: Double
        public var y: Double

        public init(_ gravity: Gravity, x: Double = 0, y: Double = 0) {
            (self.gravity, self.x, self.y) = (gravity, x, y)
        }
    }
}

extension ImageRecipe.Sizing: CustomStringConvertible {
    /// The canonical form for cache keys: the mode, the box and every part that is not its default.
    public var description: String {
        var text = "size:\(mode.rawValue):\(width)x\(height)"
        if enlarge { text += ":en" }
        if dpr != 1 { text += ":dpr\(dpr)" }
        if zoomX != 1 || zoomY != 1 { text += ":z\(zoomX)x\(zoomY)" }
        if minimumWidth > 0 || minimumHeight > 0 { text += ":min\(minimumWidth)x\(minimumHeight)" }
        if gravity != ImageRecipe.OffsetGravity(.center) { text += ":g\(gravity)" }
        if let crop { text += ":c\(crop.width)x\(crop.height)\(crop.gravity)" }
        if let extend { text += ":ex\(extend)" }
        if let extendAspectRatio { text += ":exar\(extendAspectRatio)" }
        if let padding { text += ":pad\(padding.top):\(padding.right):\(padding.bottom):\(padding.left)" }
        if maximumResultSide > 0 { text += ":mrd\(maximumResultSide)" }
        return text
    }
}

extension ImageRecipe.OffsetGravity: CustomStringConvertible {
    public var description: String {
        x == 0 && y == 0 ? "~\(gravity.key)" : "~\(gravity.key)(\(x),\(y))"
    }
}
