import Foundation

/// A decoded image with what is known of the source it came from: the source's cache
/// metadata (HTTP headers, validators) and until when the image may be used without
/// asking the source again. What the decoded-image cache holds.
public struct ImageResponse: Sendable, CacheCostReporting {
    /// The image.
    public var image: Image
    /// The metadata of the source bytes the image was decoded from.
    public var source: CacheMetadata
    /// When the image stops being fresh: its source's freshness, computed by the pipeline's
    /// ``HTTPCachePolicy`` (``HTTPCachePolicy/freshUntil(_:)``); `distantFuture` when memory
    /// tiers ignore freshness (``ImagePipeline/Configuration/memoryFreshness``).
    public var freshUntil: Date

    public init(image: Image, source: CacheMetadata, freshUntil: Date) {
        self.image = image
        self.source = source
        self.freshUntil = freshUntil
    }

    /// Whether the image may be used at `now` without revalidating its source.
    public func isFresh(at now: Date = Date()) -> Bool { now < freshUntil }

    /// The image's pixel bytes.
    public var cacheCost: Int { image.cost }
}
