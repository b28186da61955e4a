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
/// imgproxy's ``sizing`` takes the place of steps 3, 5 and 6 (with rotation and mirrors in its own
/// order): a recipe's ``geometry`` is one or the other.
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
    /// The geometry: Imagery's own steps (``crop``, ``resize``, ``extend``, ``padding``) or imgproxy's
    /// ``sizing``, one or the other; default steps that do nothing. Those five properties read and
    /// write it: the last assigned wins (see ``sizing``).
    public var geometry = Geometry.steps(Geometry.Steps())
    /// Clockwise rotation after the crop; default none.
    public var rotation: Rotation = .none
    /// Mirrors top and bottom (after ``rotation``).
    public var flip = false
    /// Mirrors left and right (after ``rotation``).
    public var flop = false
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

    /// A rectangle of the (trimmed) source to keep; `nil`: all of it, or a recipe with a ``sizing``
    /// (whose own crop this is not). Setting one makes the recipe's ``geometry`` its steps, dropping
    /// any sizing; setting `nil` on a recipe with a sizing changes nothing.
    public var crop: Crop? {
        get { steps?.crop }
        set { changeSteps(clearing: newValue == nil) { $0.crop = newValue } }
    }

    /// The size and how the image fits it; `nil`: the size of what the crop left, or a recipe with a
    /// ``sizing``. Setting one makes the recipe's ``geometry`` its steps, dropping any sizing; setting
    /// `nil` on a recipe with a sizing changes nothing.
    public var resize: ImageRequest.Thumbnail? {
        get { steps?.resize }
        set { changeSteps(clearing: newValue == nil) { $0.resize = newValue } }
    }

    /// The resized image placed in a larger box when it is smaller than that; `nil`: none. Setting
    /// one makes the recipe's ``geometry`` its steps, dropping any sizing; setting `nil` on a recipe
    /// with a sizing changes nothing.
    public var extend: Extend? {
        get { steps?.extend }
        set { changeSteps(clearing: newValue == nil) { $0.extend = newValue } }
    }

    /// Space added around the resized image, in output pixels, in ``background``; `nil`: none. Setting
    /// one makes the recipe's ``geometry`` its steps, dropping any sizing; setting `nil` on a recipe
    /// with a sizing changes nothing.
    public var padding: Insets? {
        get { steps?.padding }
        set { changeSteps(clearing: newValue == nil) { $0.padding = newValue } }
    }

    /// imgproxy's sizing (crop, resize, result crop, extension, padding, a largest side), in place of
    /// ``resize``, ``crop``, ``extend`` and ``padding``; `nil`: none (the recipe has its own steps).
    ///
    /// The two geometries never coexist (``geometry`` is one or the other), and the last assignment
    /// wins: setting a sizing drops the recipe's crop, resize, extend and padding; setting any of
    /// those afterwards drops the sizing. Setting `nil` leaves steps that do nothing.
    public var sizing: Sizing? {
        get {
            guard case .sizing(let sizing) = geometry else { return nil }
            return sizing
        }
        set {
            if let newValue {
                geometry = .sizing(newValue)
            } else if case .sizing = geometry {
                geometry = .steps(Geometry.Steps())
            }
        }
    }

    /// The recipe's own steps; `nil` with a ``sizing``.
    private var steps: Geometry.Steps? {
        guard case .steps(let steps) = geometry else { return nil }
        return steps
    }

    /// Changes the recipe's steps, first replacing a sizing with steps that do nothing, unless the
    /// change only clears a step (a sizing has none to clear).
    private mutating func changeSteps(clearing: Bool, _ change: (inout Geometry.Steps) -> Void) {
        guard var steps = steps ?? (clearing ? nil : Geometry.Steps()) else { return }
        change(&steps)
        geometry = .steps(steps)
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
