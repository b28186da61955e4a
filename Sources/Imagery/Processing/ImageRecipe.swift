import Foundation

/// What to make of a decoded source: geometry (trim, crop, rotation, resize with gravity,
/// padding) and pixel effects (blur, sharpen, greyscale, background), as a value.
///
/// A recipe is part of a request's variant key (``ImageCacheKey``): two requests with equal
/// recipes share one decode; any difference is another variant. The operations apply in one
/// fixed order, whatever order a URL names them in (as imgproxy does), so every spelling of one
/// output is one recipe and one cache entry:
///
/// 0. ``frame``: one frame of an animated source (else every frame goes through the steps below,
///    and pixel-dependent choices, trim and smart gravity, are made once, on the first frame);
/// 1. EXIF orientation (the decoder applies it, unless ``ignoresOrientation``);
/// 2. ``trim``: a uniform border removed;
/// 3. ``crop``: a rectangle of what is left (pixels or fractions, placed or by gravity);
/// 4. ``rotation``, then ``flip`` and ``flop``;
/// 5. ``resize`` (``ImageRequest/Thumbnail``: a box, a fit, ``ImageRequest/Thumbnail/enlarge``,
///    ``ImageRequest/Thumbnail/gravity``);
/// 6. ``extend``, then ``padding``, in ``background`` (transparent when none);
/// 7. ``blur``, ``sharpen``, ``grayscale``;
/// 8. ``adjustments``, in the order listed (thumbor's filters keep the order of the URL);
/// 9. ``background``: alpha flattened onto it;
/// 10. ``watermark``: an image or a line of text laid over the result.
///
/// Shrink-on-load follows from the whole recipe (``decodeShrink(sourceWidth:sourceHeight:)``): a crop
/// of a small region needs more of the source's pixels than a resize of all of it.
/// The recipe holds no libvips: backends implement it (``ImageProcessing``).
public struct ImageRecipe: Sendable, Hashable {
    /// Takes one frame of an animated source (0: the first); `nil`: every frame (an output format
    /// that cannot animate takes the first). A still source has only frame 0.
    public var frame: Int?
    /// Removes a border of (nearly) one colour first; `nil`: none.
    public var trim: Trim?
    /// A rectangle of the (trimmed) source to keep; `nil`: all of it.
    public var crop: Crop?
    /// Clockwise rotation after the crop; default none.
    public var rotation: Rotation = .none
    /// Mirrors top and bottom (after ``rotation``).
    public var flip = false
    /// Mirrors left and right (after ``rotation``).
    public var flop = false
    /// The size and how the image fits it; `nil`: the size of what the crop left.
    public var resize: ImageRequest.Thumbnail?
    /// imgproxy's sizing (crop, resize, result crop, extension, padding, a largest side), in place of
    /// ``resize``, ``crop``, ``extend`` and ``padding``; `nil`: none.
    public var sizing: Sizing?
    /// The resized image placed in a larger box when it is smaller than that; `nil`: none.
    public var extend: Extend?
    /// Space added around the resized image, in output pixels, in ``background``.
    public var padding: Insets?
    /// Gaussian blur of this sigma (0.3...100); `nil`: none.
    public var blur: Double?
    /// Sharpening of this sigma (0.3...10); `nil`: none.
    public var sharpen: Double?
    /// Converts to grey.
    public var grayscale = false
    /// Blocks of this many output pixels a side, each their average (2 or more); `nil`: none.
    /// Applied after the resize and its crop, before the box and padding are added.
    public var pixelate: Int?
    /// The colour of padding and of `contain`'s bars; when set, alpha is flattened onto it.
    /// `nil`: padding and bars are transparent (black where the output has no alpha).
    public var background: Color?
    /// What fills the part of a box the image leaves (``ImageRequest/Thumbnail/Fit/contain``'s bars,
    /// ``extend``'s margin); default ``BoxFill/background``.
    public var boxFill = BoxFill.background
    /// Changes of the pixels (or the size) after the geometry and the effects above, in this order;
    /// default none.
    public var adjustments: [Adjustment] = []
    /// An image laid over the result, last; `nil`: none.
    public var watermark: Watermark?
    /// Limits on the source this recipe may be made from, tighter than the decoder's own (imgproxy's
    /// `max_src_*` options); `nil`: the decoder's.
    public var sourceLimits: SourceLimits?
    /// Leaves the source as stored, its EXIF orientation not applied (imgproxy's `auto_rotate:0`);
    /// default `false`: the source as displayed.
    public var ignoresOrientation = false
    /// Keeps the source's ICC profile (pixels left in its colour space, the profile written with the
    /// output) instead of converting to sRGB. Default `false`: convert (what browsers assume of
    /// untagged images, and smaller outputs).
    public var keepsColorProfile = false
    /// Keeps a 16-bit source's 16 bits per channel (imgproxy's `preserve_hdr`): the decoded image is
    /// ``PixelFormat/rgb16`` or ``PixelFormat/gray16`` (with alpha when the source has it), for an output
    /// format that holds them (``ImageFormat/holdsHighBitDepth``: PNG, AVIF, JPEG XL, TIFF; an encoder
    /// reduces it for others). Default `false`: 8 bits, whatever the source.
    public var keepsHighBitDepth = false
    /// Resizes in linear light (scRGB) rather than on sRGB's gamma-encoded values (imgproxy's
    /// `USE_LINEAR_COLORSPACE`): fine light detail keeps its brightness when shrunk (a black and white
    /// checkerboard averages to sRGB 188, not 128), at the cost of float pixels and no shrink-on-load.
    /// Default `false`.
    public var resizesInLinearLight = false
    /// What of the source's metadata the output keeps; default ``KeptMetadata/copyright``.
    public var keptMetadata = KeptMetadata.copyright
    /// Keeps the last, partial row and column of 8x8 blocks of a DCT-scaled JPEG decode, as libjpeg
    /// gives them and Pillow's `draft` keeps them (thumbor: a 640x427 source decoded at 1/2 is
    /// 320x214), instead of libvips' size, rounded down (320x213); the resize then spans them as
    /// thumbor's does. Default `false`: libvips' size.
    public var keepsPartialDecodeBlocks = false

    /// What of a source's metadata an output keeps (imgproxy's `strip_metadata` and `keep_copyright`).
    public enum KeptMetadata: String, Sendable, Hashable {
        /// Nothing.
        case none
        /// The copyright notice (EXIF `Copyright`): the default, as imgproxy's.
        case copyright
        /// Every EXIF, XMP and IPTC field (the orientation and size updated to the output's).
        case all
    }

    /// A recipe that resizes to `resize`, or does nothing.
    public init(resize: ImageRequest.Thumbnail? = nil) {
        self.resize = resize
    }

    /// Whether the recipe leaves the decoded source as it is.
    public var isIdentity: Bool { self == ImageRecipe() }

    /// Whether the recipe changes the source's size by a scale (``resize`` or ``sizing``).
    public var resizes: Bool { resize != nil || sizing != nil }

    /// Whether the recipe does nothing but resize (what every decoder can do by itself).
    public var isResizeOnly: Bool { ImageRecipe(resize: resize) == self }
}

extension ImageRecipe {
    /// The largest source a recipe is made from; a larger one is refused
    /// (``ImageDecodingError/overRequestLimit(_:)``) before any pixel is decoded.
    public struct SourceLimits: Sendable, Hashable {
        /// Pixels: width × height × frames (for an animation with ``framePixels``, each frame's instead).
        public var pixels: Int?
        /// Pixels of each frame of an animation.
        public var framePixels: Int?
        /// Frames of an animation.
        public var frames: Int?
        /// Bytes of the encoded source.
        public var bytes: Int?

        public init(pixels: Int? = nil, framePixels: Int? = nil, frames: Int? = nil, bytes: Int? = nil) {
            (self.pixels, self.framePixels, self.frames, self.bytes) = (pixels, framePixels, frames, bytes)
        }

        /// Why a source of `bytes` bytes, `width` × `height` pixels a frame and `frames` frames is over
        /// these limits, or `nil` when it is within them (imgproxy's checks).
        public func problem(bytes count: Int, width: Int, height: Int, frames: Int) -> String? {
            if let bytes, count > bytes { return "the source is \(count) bytes, over the request's limit of \(bytes)" }
            if let limit = self.frames, frames > limit { return "the source has \(frames) frames, over the request's limit of \(limit)" }
            if frames > 1, let limit = framePixels {
                return width * height > limit ? "each frame of the source is \(width)x\(height) pixels, over the request's limit of \(limit)" : nil
            }
            if let limit = pixels, width * height * max(1, frames) > limit {
                return "the source is \(width)x\(height) pixels\(frames > 1 ? " × \(frames) frames" : ""), over the request's limit of \(limit)"
            }
            return nil
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

    /// An sRGB colour with alpha, 8 bits per channel.
    public struct Color: Sendable, Hashable, CustomStringConvertible {
        public var red: UInt8
        public var green: UInt8
        public var blue: UInt8
        /// 255: opaque.
        public var alpha: UInt8

        public init(red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8 = 255) {
            (self.red, self.green, self.blue, self.alpha) = (red, green, blue, alpha)
        }

        public static let white = Color(red: 255, green: 255, blue: 255)
        public static let black = Color(red: 0, green: 0, blue: 0)
        public static let transparent = Color(red: 0, green: 0, blue: 0, alpha: 0)

        /// `RGB`, `RRGGBB` or `RRGGBBAA` in hex, with or without `#`.
        public init?(hex: String) {
            var digits = Substring(hex)
            if digits.hasPrefix("#") { digits = digits.dropFirst() }
            guard digits.allSatisfy(\.isHexDigit), digits.utf8.count == digits.count else { return nil }
            let values: [UInt8]
            switch digits.count {
            case 3: values = digits.map { UInt8(String(repeating: $0, count: 2), radix: 16)! }
            case 6, 8:
                var chunks: [UInt8] = []
                var index = digits.startIndex
                while index < digits.endIndex {
                    let next = digits.index(index, offsetBy: 2)
                    chunks.append(UInt8(digits[index..<next], radix: 16)!)
                    index = next
                }
                values = chunks
            default: return nil
            }
            self.init(red: values[0], green: values[1], blue: values[2], alpha: values.count == 4 ? values[3] : 255)
        }

        /// Lower-case hex, `RRGGBB` or `RRGGBBAA` when not opaque.
        public var description: String {
            let channels = alpha == 255 ? [red, green, blue] : [red, green, blue, alpha]
            return channels.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        }
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
        public init(name: String, gravity: Gravity = .southEast, offsetX: Int = 0, offsetY: Int = 0, opacity: Double = 1, scale: Double? = nil) {
            self.init(mark: .image(name), gravity: gravity, offsetX: offsetX, offsetY: offsetY, opacity: opacity, scale: scale)
        }

        public init(mark: Mark, gravity: Gravity = .southEast, offsetX: Int = 0, offsetY: Int = 0, opacity: Double = 1, scale: Double? = nil) {
            (self.mark, self.gravity, self.offsetX, self.offsetY, self.opacity, self.scale) = (mark, gravity, offsetX, offsetY, opacity, scale)
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
                guard (1...Self.maximumLength).contains(string.count) else { return "watermark text must be 1 to \(Self.maximumLength) characters" }
                guard !string.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                    return "watermark text cannot contain control characters or line breaks"
                }
                let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ,.-".unicodeScalars)
                guard (1...100).contains(font.count), font.unicodeScalars.allSatisfy(allowed.contains),
                      font.contains(where: \.isLetter)
                else { return "a watermark font is a family, a style and a size (sans bold 32): letters, digits, spaces, commas, dots and hyphens" }
                if let size = font.split(separator: " ").last.flatMap({ Double($0) }), !(1...Double(Self.maximumSize)).contains(size) {
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
            return (place(width, outputWidth, offsetX, horizontal: true), place(height, outputHeight, offsetY, horizontal: false))
        }
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
