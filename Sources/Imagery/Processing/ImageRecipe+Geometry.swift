import Foundation

extension ImageRecipe {
    /// How a recipe sizes and frames the source: Imagery's own steps, or imgproxy's sizing, never both.
    ///
    /// A recipe holds one or the other (``ImageRecipe/geometry``), so no recipe can have a sizing and a
    /// resize, crop, extend or padding of its own. ``ImageRecipe/crop``, ``ImageRecipe/resize``,
    /// ``ImageRecipe/extend``, ``ImageRecipe/padding`` and ``ImageRecipe/sizing`` read and write it.
    public enum Geometry: Sendable, Hashable {
        /// Imagery's own geometry (the native query's and thumbor's): separate steps, each optional,
        /// applied in the recipe's order.
        case steps(Steps)
        /// imgproxy's sizing, which holds its own crop, resize, extension and padding.
        case sizing(Sizing)

        /// Imagery's own geometry: a crop (step 3 of ``ImageRecipe``'s order), a resize (step 5),
        /// then a box and padding (step 6). All `nil`: the source's size, as the trim left it.
        public struct Steps: Sendable, Hashable {
            /// A rectangle of the (trimmed) source to keep; `nil`: all of it.
            public var crop: Crop?
            /// The size and how the image fits it; `nil`: the size of what the crop left.
            public var resize: ImageRequest.Thumbnail?
            /// The resized image placed in a larger box when it is smaller than that; `nil`: none.
            public var extend: Extend?
            /// Space added around the resized image, in output pixels; `nil`: none.
            public var padding: Insets?

            /// Steps with these parts.
            /// - Parameters:
            ///   - crop: A rectangle of the source to keep; `nil`: all of it.
            ///   - resize: The size and how the image fits it; `nil`: none.
            ///   - extend: A larger box for the resized image; `nil`: none.
            ///   - padding: Space added around the result; `nil`: none.
            public init(
                crop: Crop? = nil, resize: ImageRequest.Thumbnail? = nil, extend: Extend? = nil, padding: Insets? = nil
            ) {
                (self.crop, self.resize, self.extend, self.padding) = (crop, resize, extend, padding)
            }
        }
    }

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
        /// How a pixel is told from the border: by each colour channel, alpha flattened (libvips'
        /// `find_trim`), or thumbor's way.
        public var measure = Measure.perChannel

        /// How a pixel is told from the border colour.
        public enum Measure: String, Sendable, Hashable {
            /// Any colour channel more than ``Trim/threshold`` from the border's, alpha flattened onto it
            /// first (libvips' `find_trim`, imgproxy's `trim`).
            case perChannel
            /// The Euclidean distance over all 8-bit channels, alpha included, more than the threshold;
            /// each row scanned from the left to its first such pixel and from the right to its last, as
            /// thumbor's engine scans (thumbor's `trim`: a transparent border is trimmed by its alpha).
            case euclidean
        }

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
