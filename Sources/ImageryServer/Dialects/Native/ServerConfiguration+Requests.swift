import Foundation
import Imagery

extension ServerConfiguration {
    /// What `/image` requests must carry: a signature, presets.
    public struct Requests: Sendable {
        /// When set, every `/image` query must be signed with it (``RequestSigner``); default `nil` (no signing).
        /// `/unsafe/` thumbor URLs are refused then too.
        public var signingKey: String?

        /// Named sets of `/image` parameters (name to query, `"thumb": "w=200&h=200&format=webp"`):
        /// `preset=thumb` stands for them; the request's own parameters override. Default none.
        public var presets: [String: String] = [:]

        /// Whether `/image` takes presets only (`url`, `preset` and `sig`; anything else is a 400): for
        /// operators who cannot sign URLs but must fix every output. Default `false`.
        public var onlyPresets = false

        public init() {}
    }
}
