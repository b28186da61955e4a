import Foundation

extension ImageRecipe {
    /// An image or a line of text laid over the output: which, where, how large and how opaque.
    public struct Watermark: Sendable, Hashable {
        /// What is laid over the output.
        public var mark: Mark
        /// Its place in the output: an edge, a corner or the centre (a focal point puts its centre there).
        public var gravity: Gravity
        /// Pixels from the edges gravity puts it against (towards the centre).
        public var offsetX: Int
        public var offsetY: Int
        /// 0 (invisible) to 1 (as the image is); default 1.
        public var opacity: Double
        /// Its longer side as a fraction of the output's shorter side (0...1), so portrait and landscape
        /// outputs get the same relative size; `nil`: its own size (shrunk to fit when larger than the output).
        public var scale: Double?
        /// How it is placed; default ``Placement/edges`` (``gravity`` and the offsets, inside the output).
        public var placement = Placement.edges
        /// imgproxy's watermark scale, in place of ``scale``: it fits in this fraction (above 0) of each
        /// side of the output, enlarged if need be; `nil`: none.
        public var fraction: Double?

        /// Where a watermark goes.
        public enum Placement: Sendable, Hashable {
            /// ``Watermark/gravity`` and the offsets, kept inside the output.
            case edges
            /// By gravity and offsets as imgproxy places them (pixel offsets × a ``Sizing``'s dpr as far as
            /// it applies); it may hang off the edges, at least a pixel of it on the output.
            case offset(OffsetGravity)
            /// Repeated over the whole output, one copy centred, the spacing between copies in pixels
            /// (× a ``Sizing``'s dpr) or, below 1, fractions of the output's sides, as imgproxy's `re`.
            case tiled(spacingX: Double, spacingY: Double)
            /// As thumbor's `watermark()` pastes it (``Paste``): positions, repetition, size ratios and
            /// transparency its way; ``Watermark/gravity``, the offsets, ``Watermark/opacity`` and
            /// ``Watermark/scale`` are not used.
            case pasted(Paste)
        }

        /// A watermark image the processor has by `name`.
        public init(
            name: String, gravity: Gravity = .southEast, offsetX: Int = 0, offsetY: Int = 0, opacity: Double = 1,
            scale: Double? = nil
        ) {
            self.init(
                mark: .image(name), gravity: gravity, offsetX: offsetX, offsetY: offsetY, opacity: opacity, scale: scale
            )
        }

        public init(
            mark: Mark, gravity: Gravity = .southEast, offsetX: Int = 0, offsetY: Int = 0, opacity: Double = 1,
            scale: Double? = nil
        ) {
            (self.mark, self.gravity, self.offsetX, self.offsetY, self.opacity, self.scale) = (
                mark, gravity, offsetX, offsetY, opacity, scale
            )
        }

        /// An image or text.
        public enum Mark: Sendable, Hashable {
            /// The watermark image's name among those the processor has (``ImageProcessing`` backends
            /// take them as encoded images); a name should change when its image does (it is part of cache keys).
            case image(String)
            /// A line of text, drawn by the backend (libvips: Pango), in a colour.
            case text(Text)
            /// An image at a URL (thumbor's `watermark(URL,...)`), loaded for the request.
            case linked(LinkedImage)
        }

        /// A line of text to draw.
        public struct Text: Sendable, Hashable {
            /// The words: 1 to ``maximumLength`` characters, drawn as they are (no markup), without line breaks.
            public var string: String
            /// A font description, family then style then size in pixels (`sans bold 32`,
            /// `serif italic 24`): letters, digits, spaces, `,`, `.` and `-`, the size from 1 to ``maximumSize``;
            /// default `sans bold 32`.
            public var font: String
            /// The colour of the letters; default white. Its alpha multiplies the watermark's opacity.
            public var color: Color

            public init(_ string: String, font: String = "sans bold 32", color: Color = .white) {
                (self.string, self.font, self.color) = (string, font, color)
            }

            /// The longest text, in characters.
            public static let maximumLength = 100
            /// The largest font size, in pixels.
            public static let maximumSize = 256

            /// Why the text cannot be drawn, or `nil` when it can.
            public var problem: String? {
                guard (1...Self.maximumLength).contains(string.count) else {
                    return "watermark text must be 1 to \(Self.maximumLength) characters"
                }
                guard !string.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                    return "watermark text cannot contain control characters or line breaks"
                }
                let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ,.-".unicodeScalars)
                guard (1...100).contains(font.count), font.unicodeScalars.allSatisfy(allowed.contains),
                    font.contains(where: \.isLetter)
                else {
                    return
                        "a watermark font is a family, a style and a size (sans bold 32): letters, digits, spaces, commas, dots and hyphens"
                }
                if let size = font.split(separator: " ").last.flatMap({ Double($0) }),
                    !(1...Double(Self.maximumSize)).contains(size)
                {
                    return "a watermark font's size must be from 1 to \(Self.maximumSize) pixels"
                }
                return nil
            }
        }

        /// Where a `width` × `height` watermark goes on an `outputWidth` × `outputHeight` output: its top-left corner.
        public func origin(width: Int, height: Int, outputWidth: Int, outputHeight: Int) -> (x: Int, y: Int) {
            func place(_ part: Int, _ side: Int, _ offset: Int, horizontal: Bool) -> Int {
                let position = gravity.offset(part: part, in: side, horizontal: horizontal) ?? (side - part) / 2
                // The offset moves it away from the edge it is placed against; a centred one is moved right or down.
                let atEnd = position > 0 && position == side - part && side > part
                return min(max(0, atEnd ? position - offset : position + offset), max(0, side - part))
            }
            return (
                place(width, outputWidth, offsetX, horizontal: true),
                place(height, outputHeight, offsetY, horizontal: false)
            )
        }
    }
}
