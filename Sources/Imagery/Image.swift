import Foundation

/// A decoded image: pixels in memory, ready to draw or to encode again.
///
/// Rows are tightly packed (`bytesPerRow == width * pixelFormat.bytesPerPixel`),
/// top row first, 8 bits per channel (16 for the `…16` pixel formats: a high bit depth kept on purpose,
/// ``ImageRecipe/keepsHighBitDepth``), colour in sRGB (unless ``ImageMetadata/iccProfile`` says
/// otherwise: a kept profile), alpha (when present) not premultiplied. EXIF orientation has already been applied.
///
/// An animated image (``animation`` set) holds all its frames, each `width` × `height`, one after
/// another in ``pixels`` (as libvips lays out pages): code that reads `height` rows sees the first frame.
public struct Image: Sendable, Equatable {
    /// Width in pixels.
    public let width: Int
    /// Height in pixels (of one frame).
    public let height: Int
    /// How each pixel is laid out in ``pixels``.
    public let pixelFormat: PixelFormat
    /// The pixel bytes: ``frameCount`` frames of `height` rows of ``bytesPerRow`` bytes.
    public let pixels: Data
    /// The frames' timing and looping when the image is animated (two frames or more); `nil`: a still image.
    public let animation: Animation?
    /// The format the image was decoded from (sniffed from its bytes).
    public let sourceFormat: ImageFormat
    /// What of the source's metadata the image keeps (encoders write it; everything else is dropped).
    public var metadata: ImageMetadata

    /// Creates an image from pixel bytes.
    ///
    /// - Parameters:
    ///   - width: Width in pixels.
    ///   - height: Height in pixels (of one frame).
    ///   - pixelFormat: How `pixels` are laid out.
    ///   - pixels: The pixel bytes, rows top to bottom, frames one after another.
    ///   - sourceFormat: The format the image was decoded from.
    ///   - metadata: What of the source's metadata to keep.
    ///   - animation: For an animated image, its frames' timing (one delay per frame, two
    ///     or more), the frames stacked in `pixels`; `nil`: a still image.
    /// - Precondition: `pixels.count == width * height * pixelFormat.bytesPerPixel * frameCount`.
    public init(
        width: Int, height: Int, pixelFormat: PixelFormat, pixels: Data, sourceFormat: ImageFormat,
        metadata: ImageMetadata = ImageMetadata(), animation: Animation? = nil
    ) {
        precondition(width > 0 && height > 0, "an image has at least one pixel")
        precondition(animation.map { $0.frameDelays.count >= 2 } ?? true, "an animation has two frames or more")
        let frames = animation?.frameDelays.count ?? 1
        precondition(pixels.count == width * height * pixelFormat.bytesPerPixel * frames, "pixel buffer size mismatch")
        self.width = width
        self.height = height
        self.pixelFormat = pixelFormat
        self.pixels = pixels
        self.sourceFormat = sourceFormat
        self.metadata = metadata
        self.animation = animation
    }

    /// Bytes in one row of pixels.
    public var bytesPerRow: Int { width * pixelFormat.bytesPerPixel }

    /// Frames in ``pixels``: 1 for a still image.
    public var frameCount: Int { animation?.frameDelays.count ?? 1 }

    /// Frame `index` (0 first) as a still image; the image itself when it is still.
    /// - Precondition: `0 <= index < frameCount`.
    public func frame(_ index: Int) -> Image {
        precondition((0..<frameCount).contains(index), "frame \(index) of \(frameCount)")
        guard animation != nil else { return self }
        let size = bytesPerRow * height
        let start = pixels.startIndex + index * size
        return Image(
            width: width, height: height, pixelFormat: pixelFormat, pixels: pixels.subdata(in: start..<start + size),
            sourceFormat: sourceFormat, metadata: metadata
        )
    }

    /// What the image costs to keep in memory, in bytes: its pixel buffer.
    public var cost: Int { pixels.count }
}

extension Image: CustomStringConvertible {
    public var description: String {
        let frames = animation.map { ", \($0.frameDelays.count) frames" } ?? ""
        return "Image(\(width)x\(height) \(pixelFormat)\(frames), from \(sourceFormat), \(cost) bytes)"
    }
}

extension Image {
    /// How an animated image's frames play: how long each shows, how often the whole repeats.
    public struct Animation: Sendable, Hashable {
        /// How long each frame shows, in milliseconds, in order (one per frame).
        public var frameDelays: [Int]
        /// How many times the animation plays; 0: forever (GIF's and WebP's loop count).
        public var loopCount: Int

        public init(frameDelays: [Int], loopCount: Int = 0) {
            self.frameDelays = frameDelays
            self.loopCount = loopCount
        }
    }
}

/// The layout of one pixel: its channels, in the order named, of 8 or 16 bits each.
///
/// 16-bit samples are stored in the machine's byte order. They come only from a source of that depth decoded
/// for a recipe that keeps it (``ImageRecipe/keepsHighBitDepth``); everything else is 8-bit.
public enum PixelFormat: String, Sendable, Hashable, CaseIterable {
    /// One channel: grey.
    case gray8
    /// Two channels: grey, alpha.
    case grayAlpha8
    /// Three channels: red, green, blue.
    case rgb8
    /// Four channels: red, green, blue, alpha.
    case rgba8
    /// One 16-bit channel: grey.
    case gray16
    /// Two 16-bit channels: grey, alpha.
    case grayAlpha16
    /// Three 16-bit channels: red, green, blue.
    case rgb16
    /// Four 16-bit channels: red, green, blue, alpha.
    case rgba16

    /// Channels per pixel (alpha included).
    public var channels: Int {
        switch self {
        case .gray8, .gray16: 1
        case .grayAlpha8, .grayAlpha16: 2
        case .rgb8, .rgb16: 3
        case .rgba8, .rgba16: 4
        }
    }

    /// Bytes per channel: 1 or 2.
    public var bytesPerChannel: Int { isHighBitDepth ? 2 : 1 }

    /// Whether each channel has 16 bits.
    public var isHighBitDepth: Bool {
        switch self {
        case .gray16, .grayAlpha16, .rgb16, .rgba16: true
        case .gray8, .grayAlpha8, .rgb8, .rgba8: false
        }
    }

    /// Bytes per pixel.
    public var bytesPerPixel: Int { channels * bytesPerChannel }

    /// Whether the last channel is alpha.
    public var hasAlpha: Bool { channels == 2 || channels == 4 }

    /// Whether the pixels are grey (one channel, or grey and alpha).
    public var isGray: Bool { channels <= 2 }

    /// The format with this many channels of `bytesPerChannel` bytes each (1 or 2), if any.
    public init?(channels: Int, bytesPerChannel: Int = 1) {
        let formats: [PixelFormat]
        switch bytesPerChannel {
        case 1: formats = [.gray8, .grayAlpha8, .rgb8, .rgba8]
        case 2: formats = [.gray16, .grayAlpha16, .rgb16, .rgba16]
        default: return nil
        }
        guard (1...4).contains(channels) else { return nil }
        self = formats[channels - 1]
    }

    /// The format with the same channels, 8 bits each.
    public var eightBit: PixelFormat { PixelFormat(channels: channels)! }
}

/// What of a source's metadata an image carries to its encoding: by default its copyright notice
/// (``ImageRecipe/KeptMetadata``); its colour profile when the recipe keeps it
/// (``ImageRecipe/keepsColorProfile``); its EXIF, XMP and IPTC blocks when the recipe keeps them all.
public struct ImageMetadata: Sendable, Hashable {
    /// The ICC profile the pixels are in; `nil`: sRGB.
    public var iccProfile: Data?
    /// The source's copyright notice (EXIF `Copyright`).
    public var copyright: String?
    /// The source's EXIF block (an encoder updates its orientation and size to the pixels'), XMP packet
    /// and IPTC block, as stored; `nil`: none kept.
    public var exif: Data?
    public var xmp: Data?
    public var iptc: Data?

    public init(
        iccProfile: Data? = nil, copyright: String? = nil, exif: Data? = nil, xmp: Data? = nil, iptc: Data? = nil
    ) {
        self.iccProfile = iccProfile
        self.copyright = copyright
        self.exif = exif
        self.xmp = xmp
        self.iptc = iptc
    }
}
