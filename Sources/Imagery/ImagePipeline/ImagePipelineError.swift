/// Failures of the pipeline itself (loading and decoding have their own errors).
public enum ImagePipelineError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The request asked for cached data only (``ImageRequest/Options/returnCacheDataDontLoad``) and no cache had it.
    case notCached
    /// The origin answered 304 Not Modified to a request the pipeline did not make conditional.
    case unexpectedNotModified
    /// ``ImagePipeline/encodedImage(for:)`` was called on a pipeline without an encoder
    /// (``ImagePipeline/Configuration/encoder``).
    case noEncoder

    public var description: String {
        switch self {
        case .notCached: "the image is not in any cache, and the request asked not to load it"
        case .unexpectedNotModified: "the origin answered 304 Not Modified to an unconditional request"
        case .noEncoder: "the pipeline has no encoder: set Configuration.encoder (VipsImageEncoder) to encode images"
        }
    }
}
