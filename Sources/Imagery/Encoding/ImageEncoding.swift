import Foundation

/// Turns an ``Image`` back into bytes of a given format. May block.
public protocol ImageEncoding: Sendable {
    /// Encodes `image` as `format`.
    /// - Parameters:
    ///   - quality: 1...100 for lossy formats; `nil` for the encoder's default.
    /// - Throws: ``ImageEncodingError``.
    func encode(_ image: Image, as format: ImageFormat, quality: Int?) throws -> Data
}

/// Why an image could not be encoded.
public enum ImageEncodingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The encoder cannot write this format (libvips built without it, say).
    case unsupportedFormat(ImageFormat)
    /// The encoder failed, with its reason.
    case failed(String)

    public var description: String {
        switch self {
        case .unsupportedFormat(let format): "cannot encode \(format.rawValue) here"
        case .failed(let reason): "encoding failed: \(reason)"
        }
    }
}
