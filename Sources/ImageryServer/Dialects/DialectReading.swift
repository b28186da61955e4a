import Foundation

/// What a request asks for, as its dialect read it.
struct DialectReading: Sendable {
    /// The answer the request asks for.
    enum Kind: Sendable {
        /// An image made from a source (`/image`, imgproxy's and thumbor's URLs).
        case image(ImageParameters)
        /// A source's description and placeholders (`/info`, ``ImageInfo``).
        case info(URL)
        /// thumbor's `meta/` JSON (``ThumborMeta``).
        case meta(ThumborMetaRequest)
    }

    /// The answer the request asks for.
    var kind: Kind
    /// What the request's text says of the response beside the image (expiry, max-age, disposition).
    var terms = ResponseTerms()
}
