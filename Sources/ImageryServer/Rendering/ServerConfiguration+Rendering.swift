import Foundation
import Imagery

extension ServerConfiguration {
    /// How outputs are made when a request does not say: qualities, quality searches, watermark images.
    public struct Rendering: Sendable {
        /// The quality of each lossy output format when a request gives no `q`; default JPEG 80, WebP 81,
        /// AVIF 67, JPEG XL 81: each the quality whose mean score over the corpus at 256 px is JPEG 80's,
        /// between what butteraugli and SSIMULACRA2 say (within 5 % of JPEG's by both; BENCHMARKS.md, issue 28).
        public var formatQualities: [ImageFormat: Int] = ServerConfiguration.calibratedQualities

        /// Qualities chosen per image (`q=auto`, imgproxy's `autoquality`): the target, the bounds, and
        /// whether requests that ask for no quality get a search (default: no).
        public var autoQuality = AutoQualitySettings()

        /// Watermark images by name (PNG with alpha, usually): `watermark=NAME` on `/image` lays one over
        /// the output. Read at start; default none.
        public var watermarkFiles: [String: URL] = [:]

        public init() {}
    }
}

extension ServerConfiguration.Rendering: ConfigurationPart {
    /// Checks that every value is one the server can run with.
    /// - Throws: ``ConfigurationFileError`` naming the first setting (its key) whose value is not.
    public func validate() throws(ConfigurationFileError) {
        let require = ConfigurationRule.require

        for (format, quality) in formatQualities {
            try require(
                (1...100).contains(quality), "rendering.formatQualities", "\(format.rawValue) must be from 1 to 100")
        }
        if case .ssimulacra2(let score) = autoQuality.target {
            try require(
                (0...100).contains(score), "rendering.autoQuality.target", "must be a SSIMULACRA2 score from 0 to 100")
        }
        let bounds =
            [autoQuality.minimum, autoQuality.maximum].compactMap { $0 } + autoQuality.formatMinimums.values
            + autoQuality.formatMaximums.values
        try require(
            bounds.allSatisfy((1...100).contains), "rendering.autoQuality.minimum",
            "minimum and maximum must be from 1 to 100")
        try require(
            autoQuality.tolerance >= 0 && autoQuality.tolerance.isFinite, "rendering.autoQuality.tolerance",
            "must be 0 or more")
        try require(autoQuality.maximumPixels >= 1, "rendering.autoQuality.maximumPixels", "must be 1 or more")
    }
}
