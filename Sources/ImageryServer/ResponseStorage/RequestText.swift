import Foundation
import HTTPTypes

/// A request as it was written, for result storage: answered before, it is answered again by its
/// text alone (no parsing, no signature check: both depend on the text, and it passed them).
struct RequestText: Sendable {
    /// Its query (`/image`) or `#` + its path (the URL syntaxes; no query starts with `#`), then
    /// `\n` + its `Accept` when it has one: what ``ResponseStore/alias(for:)`` is keyed by.
    let key: String
    /// What the text says of the response beside the image, remembered with what it resolved to.
    let terms: ResponseTerms

    init(_ text: some StringProtocol, accept: String?, terms: ResponseTerms = ResponseTerms()) {
        self.init(key: ResponseStore.requestKey(rawQuery: String(text), accept: accept), terms: terms)
    }

    init(key: String, terms: ResponseTerms) {
        (self.key, self.terms) = (key, terms)
    }
}

/// What a request's text says of its response besides which image it is: read from the text when
/// it is parsed, kept with its alias, so that a hit through any syntax reads nothing again.
struct ResponseTerms: Sendable, Equatable {
    /// thumbor's `max_age(N)`: the response's max-age in place of the configured one.
    var maximumAge: Int?
    /// imgproxy's `expires`: when the URL stops being answered (seconds since 1970); it shortens the max-age.
    var expiresAt: Int?
    /// imgproxy's `filename`/`return_attachment`: the `Content-Disposition` sent with the image.
    var disposition: ContentDisposition?
    /// The thumbor filters the URL names that were skipped (``SkippedOption``), by name, in URL order:
    /// sent as `X-Imagery-Skipped-Filters`, with every answer to this text (hits too).
    var skippedFilters: [String] = []
    /// How the URL's peer answers where it differs from this server (statuses, validators, max-age);
    /// `nil`: this server's own rules.
    var peer: PeerAnswers?
    /// The source sent as `Link: <SOURCE>; rel="canonical"` (imgproxy's `IMGPROXY_SET_CANONICAL_HEADER`).
    var canonical: String?

    /// Whether the URL has expired at `now` (seconds since 1970).
    func hasExpired(at now: Int) -> Bool { expiresAt.map { $0 <= now } ?? false }

    /// The max-age the response may have at `now`, at most `configured`.
    func maximumAge(configured: Int, at now: Int) -> Int {
        if let expiresAt { return min(expiresAt - now, configured) }
        return maximumAge ?? configured
    }
}
