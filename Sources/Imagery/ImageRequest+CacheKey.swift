import Foundation

extension ImageRequest {
    /// The caller's identity for a URL request's bytes, in place of the URL in the request's
    /// ``ImageRequest/sourceKey``: every tier (decoded images, originals in memory and on disk,
    /// thumbnails on disk) and the sharing of downloads and decodes use it.
    ///
    /// For URLs that name one image in many spellings: an S3 presigned URL, a CDN URL whose query
    /// holds a token that rotates. The request still loads its URL, and the cache still keeps the
    /// origin's headers: freshness and revalidation (`If-None-Match`, `If-Modified-Since`) work as
    /// they do for a plain URL.
    ///
    /// ```swift
    /// var request = ImageRequest(url: presignedURL, thumbnail: thumbnail)
    /// request.cacheKey = .removingQueryItems(["X-Amz-Signature", "X-Amz-Date", "X-Amz-Credential"])
    /// ```
    public struct CacheKey: Sendable {
        private let make: @Sendable (URL) -> String

        /// A key made from the request's URL by `transform`.
        public static func derived(_ transform: @escaping @Sendable (URL) -> String) -> CacheKey {
            CacheKey(make: transform)
        }

        /// `key`, whatever the URL: the caller names the image (`"avatar-42"`).
        public static func string(_ key: String) -> CacheKey {
            CacheKey(make: { _ in key })
        }

        /// The URL without its query (`?` and all after it): for URLs whose query only authorises.
        public static let removingQuery = CacheKey.derived { url in
            let normal = SourceKey.normalized(url)
            return normal.firstIndex(of: "?").map { String(normal[..<$0]) } ?? normal
        }

        /// The URL without the query items named in `names` (compared without regard to case);
        /// the other items keep their order.
        public static func removingQueryItems(_ names: Set<String>) -> CacheKey {
            let lowered = Set(names.map { $0.lowercased() })
            return .derived { url in
                let normal = SourceKey.normalized(url)
                guard let mark = normal.firstIndex(of: "?") else { return normal }
                let kept = normal[normal.index(after: mark)...].split(separator: "&", omittingEmptySubsequences: false)
                    .filter { item in
                        let name = item.split(separator: "=", maxSplits: 1).first.map(String.init) ?? ""
                        return !lowered.contains((name.removingPercentEncoding ?? name).lowercased())
                    }
                return String(normal[..<mark]) + (kept.isEmpty ? "" : "?" + kept.joined(separator: "&"))
            }
        }

        /// The key for a request of `url`.
        public func key(for url: URL) -> String { make(url) }
    }
}
