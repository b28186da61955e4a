import Foundation
import Imagery

/// What a request says of its quality being chosen per image.
package enum AutoQualityChoice: Sendable, Hashable {
    /// A fixed quality, whatever the server's default (imgproxy's `autoquality:none`).
    case fixed
    /// A search (`q=auto`, imgproxy's `autoquality`); what it leaves `nil`, the server's settings fill.
    case search(AutoQuality)

    /// `|aq:none` or `|aq:` and the search: for cache keys.
    var cacheToken: String {
        switch self {
        case .fixed: "|aq:none"
        case .search(let auto): "|aq:\(auto)"
        }
    }
}

/// The server's settings for choosing qualities per image (`AutoQuality`): the target and bounds
/// that `q=auto` and imgproxy's `autoquality` use where they give none, and whether a request that
/// asks for no quality gets a search (imgproxy's `IMGPROXY_AUTOQUALITY_METHOD`; `autoQuality` in the
/// configuration file, for thumbor's URLs and the native ones alike).
public struct AutoQualitySettings: Sendable, Hashable {
    /// Whether a request that asks for no quality (no `q`, no thumbor `quality()` filter, no imgproxy
    /// `quality`) gets the search; default `false`.
    public var isDefault = false
    /// Default: `AutoQuality.defaultTarget` (SSIMULACRA2 70).
    public var target: AutoQuality.Target = AutoQuality.defaultTarget
    /// The lowest quality; `nil`: `AutoQuality.defaultRange` below the highest.
    public var minimum: Int?
    /// The highest quality; `nil`: the format's quality (``ServerConfiguration/Rendering/formatQualities``).
    public var maximum: Int?
    /// Bounds for one format, before ``minimum`` and ``maximum`` (imgproxy's `AUTOQUALITY_FORMAT_MIN`, `_MAX`).
    public var formatMinimums: [ImageFormat: Int] = [:]
    public var formatMaximums: [ImageFormat: Int] = [:]
    /// How far above a perceived-quality target a score may be for the search to stop.
    public var tolerance = AutoQuality.defaultTolerance
    /// Above this many output pixels, the highest quality without a search.
    public var maximumPixels = AutoQuality.defaultMaximumPixels

    public init() {}

    /// The search for an output in `format` as `choice` asks (`nil`: as the request left it), with
    /// what it leaves to these settings filled in; `nil`: a fixed quality (a request that names a
    /// quality and no search gets that quality).
    package func autoQuality(_ choice: AutoQualityChoice?, for format: ImageFormat?, qualityAsked: Bool = false)
        -> AutoQuality?
    {
        let asked: AutoQuality
        switch choice {
        case .fixed: return nil
        case .search(let search): asked = search
        case nil:
            guard isDefault, !qualityAsked else { return nil }
            asked = AutoQuality()
        }
        var auto = asked
        auto.target = auto.target ?? target
        auto.minimum = auto.minimum ?? format.flatMap { formatMinimums[$0] } ?? minimum
        auto.maximum = auto.maximum ?? format.flatMap { formatMaximums[$0] } ?? maximum
        auto.tolerance = auto.tolerance ?? tolerance
        auto.maximumPixels = auto.maximumPixels ?? maximumPixels
        return auto
    }
}
