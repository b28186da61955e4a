import Foundation

/// Identifies a request's encoded bytes. Requests with equal source keys share one download.
public enum SourceKey: Hashable, Sendable, CustomStringConvertible {
    /// A normalised URL string.
    case url(String)
    /// The id of a custom data source.
    case id(String)

    /// A string form that never collides between the two cases, for stores keyed by strings.
    public var stringValue: String {
        switch self {
        case .url(let url): "url:" + url
        case .id(let id): "id:" + id
        }
    }

    public var description: String { stringValue }

    /// The URL with scheme and host lower-cased, default ports and fragments
    /// dropped: spellings of one resource share one key.
    static func normalized(_ url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else {
            return url.absoluteString
        }
        let scheme = components.scheme?.lowercased()
        components.scheme = scheme
        components.host = components.host?.lowercased()
        if (scheme == "http" && components.port == 80) || (scheme == "https" && components.port == 443) {
            components.port = nil
        }
        components.fragment = nil
        if components.path.isEmpty, components.host != nil { components.path = "/" }
        return components.string ?? url.absoluteString
    }
}

/// Identifies a decoded image in memory: its source and the thumbnail it was decoded at.
public struct ImageCacheKey: Hashable, Sendable, CustomStringConvertible {
    /// The encoded bytes' identity.
    public var source: SourceKey
    /// The size it was decoded at; `nil` for full size.
    public var thumbnail: ImageRequest.Thumbnail?

    /// A key for `source` decoded at `thumbnail`.
    public init(source: SourceKey, thumbnail: ImageRequest.Thumbnail?) {
        self.source = source
        self.thumbnail = thumbnail
    }

    /// A string form, for stores keyed by strings (the disk cache's variant entries).
    public var stringValue: String {
        guard let thumbnail else { return source.stringValue }
        return source.stringValue + "#variant:\(thumbnail.width)x\(thumbnail.height)-\(thumbnail.fit.rawValue)"
    }

    public var description: String { stringValue }
}
