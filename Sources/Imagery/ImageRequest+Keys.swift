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
        let string = url.absoluteString
        return isNormalized(string) ? string : normalizedByParsing(url)
    }

    /// ``normalized(_:)`` the long way, through `URLComponents`.
    static func normalizedByParsing(_ url: URL) -> String {
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

    /// Whether `string` is already in the form ``normalized(_:)`` gives: `http://` or `https://`,
    /// a lower-case host with no port or userinfo, a path, and no fragment. Most URLs are; this
    /// answers without parsing them again.
    static func isNormalized(_ string: String) -> Bool {
        var utf8 = string.utf8[...]
        let defaultPort: Int
        if utf8.starts(with: "https://".utf8) {
            (utf8, defaultPort) = (utf8.dropFirst(8), 443)
        } else if utf8.starts(with: "http://".utf8) {
            (utf8, defaultPort) = (utf8.dropFirst(7), 80)
        } else {
            return false
        }
        var port: Int?  // digits after the host's colon, while reading them
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "/"):
                if let port, port == defaultPort || port == 0 { return false }  // a default or empty port is dropped
                if port == nil, utf8.first == UInt8(ascii: "/") { return false }  // no host
                return !string.utf8.contains(UInt8(ascii: "#"))
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                if let value = port { port = value > 99_999 ? value : value * 10 + Int(byte - 48) }
            case UInt8(ascii: ":"):
                guard port == nil else { return false }
                port = 0
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "-"), UInt8(ascii: "."):
                if port != nil { return false }
            default:
                return false  // upper case, userinfo, IPv6 brackets, a query or fragment before any path
            }
        }
        return false  // no path: the normal form adds "/"
    }
}

/// Identifies a decoded image in memory: its source and the recipe it was made with.
public struct ImageCacheKey: Hashable, Sendable, CustomStringConvertible {
    /// The encoded bytes' identity.
    public var source: SourceKey
    /// What was made of them.
    public var recipe: ImageRecipe

    /// A key for `source` made with `recipe`.
    public init(source: SourceKey, recipe: ImageRecipe) {
        self.source = source
        self.recipe = recipe
    }

    /// A key for `source` decoded at `thumbnail` (`nil`: full size).
    public init(source: SourceKey, thumbnail: ImageRequest.Thumbnail?) {
        self.init(source: source, recipe: ImageRecipe(resize: thumbnail))
    }

    /// The recipe's resize.
    public var thumbnail: ImageRequest.Thumbnail? { recipe.resize }

    /// A string form, for stores keyed by strings (the disk cache's variant entries).
    public var stringValue: String {
        guard !recipe.isIdentity else { return source.stringValue }
        return source.stringValue + "#variant:" + recipe.description
    }

    public var description: String { stringValue }
}
