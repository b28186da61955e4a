import Foundation

extension ImageRecipe {
    /// A clockwise rotation by a multiple of 90 degrees.
    public enum Rotation: Int, Sendable, Hashable, CaseIterable {
        case none = 0
        case quarter = 90
        case half = 180
        case threeQuarters = 270

        /// Whether width and height trade places.
        public var swapsSides: Bool { self == .quarter || self == .threeQuarters }
    }

    /// A box the resized image is placed in, where it is smaller (imgproxy's `extend`): each side at
    /// least ``width`` and ``height`` (0: that side as it is), the image where ``gravity`` puts it
    /// (edges, corners, centre; a focal point centres the image on that point of the box), the rest
    /// in ``ImageRecipe/background``.
    public struct Extend: Sendable, Hashable {
        public var width: Int
        public var height: Int
        public var gravity: Gravity

        public init(width: Int, height: Int, gravity: Gravity = .center) {
            (self.width, self.height, self.gravity) = (width, height, gravity)
        }
    }

    /// What fills a box around the image (thumbor's `fill()`).
    public enum BoxFill: String, Sendable, Hashable {
        /// ``ImageRecipe/background`` (transparent, or black without alpha, when none).
        case background
        /// The image itself, blurred (sigma 50 at its size) and stretched to the box: thumbor's `fill(blur)`.
        case blur
        /// The image's median colour, per channel: thumbor's `fill(auto)`.
        case median
    }

    /// Pixels added on each side.
    public struct Insets: Sendable, Hashable {
        public var top: Int
        public var right: Int
        public var bottom: Int
        public var left: Int

        public init(top: Int, right: Int, bottom: Int, left: Int) {
            (self.top, self.right, self.bottom, self.left) = (top, right, bottom, left)
        }

        /// The same on every side.
        public init(all: Int) { self.init(top: all, right: all, bottom: all, left: all) }
    }

    /// Removal of a border of one colour.
    public struct Trim: Sendable, Hashable {
        /// How far (0...255, per channel) a pixel may be from the border colour and still be border; default 10.
        public var threshold: Double
        /// The border colour; `nil`: the top-left pixel's (the bottom-right one's with ``fromBottomRight``).
        public var color: Color?
        /// Takes the border colour from the bottom-right pixel instead of the top-left one (thumbor's `trim:bottom-right`).
        public var fromBottomRight = false
        /// Trims left and right by the same amount, the smaller of the two borders (imgproxy's `equal_hor`).
        public var equalHorizontal = false
        /// Trims top and bottom by the same amount, the smaller of the two borders (imgproxy's `equal_ver`).
        public var equalVertical = false

        public init(threshold: Double = 10, color: Color? = nil, fromBottomRight: Bool = false) {
            self.threshold = threshold
            self.color = color
            self.fromBottomRight = fromBottomRight
        }
    }

    /// A length along one side: pixels, or a fraction of that side.
    public enum Length: Sendable, Hashable {
        case pixels(Int)
        /// 0 < fraction <= 1 for sizes, 0 <= fraction < 1 for offsets.
        case fraction(Double)

        /// The length in pixels of a side `side` pixels long.
        public func resolved(in side: Int) -> Int {
            switch self {
            case .pixels(let pixels): pixels
            case .fraction(let fraction): Int((fraction * Double(side)).rounded())
            }
        }
    }

    /// A rectangle of the source to keep, at a position or placed by gravity.
    public struct Crop: Sendable, Hashable {
        /// Where the rectangle is.
        public enum Placement: Sendable, Hashable {
            /// Its top-left corner.
            case origin(x: Length, y: Length)
            /// Placed in the image by gravity (``Gravity/smart(_:)`` picks the most interesting part).
            case gravity(Gravity)
        }

        public var width: Length
        public var height: Length
        public var placement: Placement

        public init(width: Length, height: Length, placement: Placement = .gravity(.center)) {
            (self.width, self.height, self.placement) = (width, height, placement)
        }
    }
}
