import Foundation

/// A decoded image: pixels in memory, ready to draw or to encode again.
///
/// Rows are tightly packed (`bytesPerRow == width * pixelFormat.bytesPerPixel`),
/// top row first, 8 bits per channel, colour in sRGB (unless ``ImageMetadata/iccProfile`` says
/// otherwise: a kept profile), alpha (when present) not premultiplied. EXIF orientation has already been applied.
public struct Image: Sendable, Equatable {
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// How each pixel is laid out in ``pixels``.
    public let pixelFormat: PixelFormat
    /// The pixel bytes, `height` rows of ``bytesPerRow`` bytes.
    public let pixels: Data
    /// The format the image was decoded from (sniffed from its bytes).
    public let sourceFormat: ImageFormat
    /// What of the source's metadata the image keeps (encoders write it; everything else is dropped).
    public var metadata: ImageMetadata

    /// Creates an image from pixel bytes.
    ///
    /// - Precondition: `pixels.count == width * height * pixelFormat.bytesPerPixel`.
    public init(width: Int, height: Int, pixelFormat: PixelFormat, pixels: Data, sourceFormat: ImageFormat, metadata: ImageMetadata = ImageMetadata()) {
        precondition(width > 0 && height > 0, "an image has at least one pixel")
        precondition(pixels.count == width * height * pixelFormat.bytesPerPixel, "pixel buffer size mismatch")
        self.width = width
        self.height = height
        self.pixelFormat = pixelFormat
        self.pixels = pixels
        self.sourceFormat = sourceFormat
        self.metadata = metadata
    }

    /// Bytes in one row of pixels.
    public var bytesPerRow: Int { width * pixelFormat.bytesPerPixel }

    /// What the image costs to keep in memory, in bytes: its pixel buffer.
    public var cost: Int { pixels.count }
}

extension Image: CustomStringConvertible {
    public var description: String {
        "Image(\(width)x\(height) \(pixelFormat), from \(sourceFormat), \(cost) bytes)"
    }
}

/// The layout of one pixel: 8 bits per channel, channels in the order named.
public enum PixelFormat: String, Sendable, Hashable, CaseIterable {
    /// One channel: grey.
    case gray8
    /// Two channels: grey, alpha.
    case grayAlpha8
    /// Three channels: red, green, blue.
    case rgb8
    /// Four channels: red, green, blue, alpha.
    case rgba8

    /// Bytes per pixel, one per channel.
    public var bytesPerPixel: Int {
        switch self {
        case .gray8: 1
        case .grayAlpha8: 2
        case .rgb8: 3
        case .rgba8: 4
        }
    }

    /// Whether the last channel is alpha.
    public var hasAlpha: Bool { self == .grayAlpha8 || self == .rgba8 }

    /// The format with this many 8-bit channels, if any.
    public init?(channels: Int) {
        switch channels {
        case 1: self = .gray8
        case 2: self = .grayAlpha8
        case 3: self = .rgb8
        case 4: self = .rgba8
        default: return nil
        }
    }
}

/// The little of a source's metadata an image carries to its encoding: by default its copyright
/// notice; its colour profile when the recipe keeps it (``ImageRecipe/keepsColorProfile``).
public struct ImageMetadata: Sendable, Hashable {
    /// The ICC profile the pixels are in; `nil`: sRGB.
    public var iccProfile: Data?
    /// The source's copyright notice (EXIF `Copyright`).
    public var copyright: String?

    public init(iccProfile: Data? = nil, copyright: String? = nil) {
        self.iccProfile = iccProfile
        self.copyright = copyright
    }
}
