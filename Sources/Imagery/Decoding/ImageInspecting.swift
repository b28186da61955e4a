import Foundation

/// A decoder that can describe an image from its header alone (no pixel decoded).
public protocol ImageInspecting: Sendable {
    /// What `data`'s header says.
    /// - Throws: ``ImageDecodingError`` when it is no image the decoder reads.
    func inspect(_ data: Data) throws -> ImageHeader
}

/// What an image's header says.
public struct ImageHeader: Sendable, Hashable, Codable {
    /// The size as displayed (EXIF orientation applied).
    public var width: Int
    public var height: Int
    public var format: ImageFormat
    /// The EXIF orientation, 1 (none) to 8.
    public var orientation: Int
    /// Frames (pages) in the file: more than 1 for an animation.
    public var frames: Int
    public var hasAlpha: Bool
    /// The colour space the pixels are stored in (`srgb`, `b-w`, `cmyk`, `rgb16`, `grey16`, ...: libvips' names).
    public var colorSpace: String
    /// Bits per channel.
    public var bitsPerChannel: Int
    /// The embedded ICC profile's description (`sRGB IEC61966-2.1`, `Display P3`, ...), `""` when it has
    /// none that can be read, `nil` when there is no profile.
    public var profile: String?

    /// JSON keys: the property names, but `alpha` for ``hasAlpha`` (what `/info` answers).
    private enum CodingKeys: String, CodingKey {
        case width, height, format, orientation, frames
        case hasAlpha = "alpha"
        case colorSpace, bitsPerChannel, profile
    }

    public init(
        width: Int, height: Int, format: ImageFormat, orientation: Int, frames: Int, hasAlpha: Bool,
        colorSpace: String, bitsPerChannel: Int, profile: String?
    ) {
        (self.width, self.height, self.format, self.orientation, self.frames) = (
            width, height, format, orientation, frames
        )
        (self.hasAlpha, self.colorSpace, self.bitsPerChannel, self.profile) = (
            hasAlpha, colorSpace, bitsPerChannel, profile
        )
    }
}

extension ImageFormat: Codable {}
