import Foundation
import HummingbirdCore
import Synchronization

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

/// A request as a dialect reads it: its path (after the routes' prefix) and its query.
package struct DialectRequest: Sendable {
    /// The path after the routes' prefix, from its `/` (`/image`, `/unsafe/300x200/a.com/b.jpg`).
    let path: Substring
    /// The query as sent, percent-encoded; `""` when there is none.
    let query: String

    /// - Parameters:
    ///   - path: The path after the routes' prefix.
    ///   - query: The query as sent.
    init(path: Substring, query: String = "") {
        self.path = path
        self.query = query
    }

    /// The request `uri` names, its path read after `prefix` (`""`, or `/media`).
    init(_ uri: URI, prefix: String) {
        var path = Substring(uri.path)
        if !prefix.isEmpty, path.hasPrefix(prefix) { path = path.dropFirst(prefix.count) }
        self.init(path: path, query: uri.query ?? "")
    }

    /// The first value of each query parameter, percent-decoded (decoded at each call: read it once).
    var parameters: [String: String] {
        DialectParses.count()
        return Self.parameters(of: URI("/?" + query))
    }

    /// The first value of each of `uri`'s query parameters, percent-decoded.
    package static func parameters(of uri: URI) -> [String: String] {
        Dictionary(
            uri.queryParameters.map { (String($0.key), String($0.value)) }, uniquingKeysWith: { first, _ in first })
    }
}

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

/// A thumbor `meta/` request, read: the URL, the parameters its image would be made with (its source
/// among them), and the JavaScript function its JSON is wrapped in (`callback=NAME`), if any.
struct ThumborMetaRequest: Sendable {
    let url: ThumborURL
    let parameters: ImageParameters
    let callback: String?
}

/// Counts the parses of request text (a thumbor or imgproxy path split into its parts, a query decoded)
/// made in a task, for tests that hold a request to one parse.
enum DialectParses {
    /// The counter of the current task, if a test set one.
    @TaskLocal static var counter: Counter?

    /// A number of parses.
    final class Counter: Sendable {
        private let parses = Atomic(0)

        /// The parses counted so far.
        var value: Int { parses.load(ordering: .relaxed) }

        /// Counts one.
        func add() { parses.add(1, ordering: .relaxed) }
    }

    /// Counts one parse, where a test counts them.
    static func count() { counter?.add() }
}
