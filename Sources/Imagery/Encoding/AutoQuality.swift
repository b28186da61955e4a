import Foundation

/// An encoder choosing the quality itself, per image (`q=auto`, imgproxy's `autoquality`): the lowest
/// quality from ``minimum`` to ``maximum`` whose output meets ``target``. Lossy formats only; a lossless
/// one is written as it is. What is left `nil` is the encoder's default (a server fills it from its
/// configuration first).
public struct AutoQuality: Sendable, Hashable, CustomStringConvertible {
    /// What an output must meet.
    public enum Target: Sendable, Hashable {
        /// A perceived quality: the output's SSIMULACRA2 score against the unencoded image at least this
        /// (100: identical, 90: visually lossless, 70: high quality, 50: medium).
        case ssimulacra2(Double)
        /// A size: the highest quality whose output has at most this many bytes (imgproxy's `size` method);
        /// the smallest output when none has.
        case bytes(Int)
    }

    /// SSIMULACRA2 70, "high quality" on the metric's own scale. On the corpus at 256 px, JPEG's quality
    /// 80 scores 66 on average (43 to 87): the images that score more need less than 80.
    public static let defaultTarget = Target.ssimulacra2(70)
    /// The search goes at most this far below the maximum by default (imgproxy's 70 to 80).
    public static let defaultRange = 10
    /// A score this close above the target is close enough: the search stops there.
    public static let defaultTolerance = 0.5
    /// Above this many output pixels (1000 × 1000) there is no search, the maximum quality is used:
    /// its metric holds about 67 bytes a pixel while it runs. A burst of 64 requests for 1600-px
    /// outputs with a search at 1.7 MP peaked 139 MB above the same at a fixed quality (BENCHMARKS.md).
    /// (imgproxy's `AUTOQUALITY_MAX_RESOLUTION`.)
    public static let defaultMaximumPixels = 1_000_000

    /// `nil`: ``defaultTarget``.
    public var target: Target?
    /// The lowest quality the search may choose (1...100); `nil`: ``defaultRange`` below the maximum.
    public var minimum: Int?
    /// The highest (1...100); `nil`: the quality asked for, else the format's default.
    public var maximum: Int?
    /// How far above a perceived-quality target a score may be for the search to stop there (imgproxy's
    /// allowed error); `nil`: ``defaultTolerance``.
    public var tolerance: Double?
    /// Above this many output pixels, the maximum quality without a search; `nil`: ``defaultMaximumPixels``.
    public var maximumPixels: Int?

    public init(
        target: Target? = nil, minimum: Int? = nil, maximum: Int? = nil, tolerance: Double? = nil,
        maximumPixels: Int? = nil
    ) {
        self.target = target
        self.minimum = minimum.map { min(100, max(1, $0)) }
        self.maximum = maximum.map { min(100, max(1, $0)) }
        self.tolerance = tolerance
        self.maximumPixels = maximumPixels
    }

    /// Whether the target is a perceived quality (which the encoder measures by reading its outputs back).
    public var measuresPerceivedQuality: Bool {
        if case .bytes = target { return false }
        return true
    }

    /// The qualities searched when `asked` is the quality asked for (or the format's default) and
    /// `lowest` the lowest that means something for the format.
    public func range(asked: Int, lowest: Int = 1) -> ClosedRange<Int> {
        let top = max(lowest, maximum ?? asked)
        return min(top, max(lowest, minimum ?? top - Self.defaultRange))...top
    }

    /// `auto:s70.0:70-80:…`, with `-` for what is left to defaults: for cache keys.
    public var description: String {
        let target =
            switch target {
            case .ssimulacra2(let score): "s\(score)"
            case .bytes(let count): "b\(count)"
            case nil: "-"
            }
        func text<T>(_ value: T?) -> String { value.map { "\($0)" } ?? "-" }
        return "auto:\(target):\(text(minimum))-\(text(maximum)):\(text(tolerance)):\(text(maximumPixels))"
    }
}

/// An encoded image and the quality it was written at (`nil` for a lossless format).
public struct EncodedImage: Sendable {
    public var data: Data
    public var quality: Int?

    public init(data: Data, quality: Int?) {
        self.data = data
        self.quality = quality
    }
}
