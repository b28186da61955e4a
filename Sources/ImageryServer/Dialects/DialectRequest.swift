import Foundation
import HummingbirdCore

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
