import Foundation

/// A URL syntax the server reads: its native queries (``NativeDialect``), imgproxy's paths
/// (``ImgproxyDialect``) or thumbor's (``ThumborDialect``), and the path syntaxes together
/// (``PathDialects``).
///
/// A dialect reads a request once: its signature checked, what it asks for (an image, a source's
/// description, thumbor's `meta/`), and what its text says of the response (``ResponseTerms``). The
/// routes call it and do the rest the same way for every dialect (``ImageController``).
protocol Dialect: Sendable {
    /// What `request` asks for, or `nil` when it is not written in this dialect (404).
    /// - Throws: 403 for a missing or wrong signature; 400 for what the request asks that is wrong
    ///   or not supported; 404 for an expired imgproxy URL.
    func read(_ request: DialectRequest) throws -> DialectReading?
}
