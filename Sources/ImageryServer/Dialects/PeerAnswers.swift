import Foundation
import HTTPTypes
import Imagery

/// How a peer's URLs are answered where the peer answers differently from this server's own rules: the
/// status of a refusal, the validators sent, and a fixed `max-age`. A dialect makes one from its settings
/// when the server starts and puts it in every reading's ``ResponseTerms`` (``ResponseTerms/peer``), so the
/// one answer path (``ImageAnswers``, on a route or on the event loop) applies it; `nil` there: this server's
/// own rules. Compared by identity (one per dialect), so a hit's terms compare at no cost.
final class PeerAnswers: Sendable, Equatable, CustomStringConvertible {
    /// The peer, for logs (`imgproxy`).
    let name: String
    /// Error codes (``ServerError/code``) the peer answers with another status.
    let statuses: [String: HTTPResponse.Status]
    /// Whether answers carry `ETag` (and `If-None-Match` is honoured).
    let sendsETag: Bool
    /// Whether answers carry `Last-Modified` (and `If-Modified-Since` is honoured).
    let sendsLastModified: Bool
    /// A text every ETag carries (`"BUSTER/…"`): changing it makes every client fetch again.
    let etagBuster: String?
    /// A source's `Last-Modified` before this is sent as this.
    let lastModifiedBuster: Date?
    /// `Cache-Control: max-age=N, public` whatever the source says (`nil`: the source's freshness, capped).
    let fixedMaximumAge: Int?
    /// `max-age=N, public` rather than `public, max-age=N` (imgproxy's order: clients that read the
    /// max-age by position, as imgproxy's own tests do, find it).
    let maxAgeFirst: Bool

    init(
        name: String, statuses: [String: HTTPResponse.Status] = [:], sendsETag: Bool = true,
        sendsLastModified: Bool = true, etagBuster: String? = nil, lastModifiedBuster: Date? = nil,
        fixedMaximumAge: Int? = nil, maxAgeFirst: Bool = false
    ) {
        self.name = name
        self.statuses = statuses
        self.sendsETag = sendsETag
        self.sendsLastModified = sendsLastModified
        self.etagBuster = etagBuster
        self.lastModifiedBuster = lastModifiedBuster
        self.fixedMaximumAge = fixedMaximumAge
        self.maxAgeFirst = maxAgeFirst
        lastModifiedBusterText = lastModifiedBuster.map(HTTPDate.format)
    }

    private let lastModifiedBusterText: String?

    static func == (lhs: PeerAnswers, rhs: PeerAnswers) -> Bool { lhs === rhs }

    var description: String { name }

    /// `error` with the status the peer answers it with.
    func failure(_ error: ServerError) -> ServerError {
        guard let status = statuses[error.code], status != error.status else { return error }
        return ServerError(status, error.code, error.message, retryAfter: error.retryAfter)
    }

    /// The ETag sent for a stored answer's `etag` (a quoted strong one); `nil`: none is sent.
    func etag(_ etag: String) -> String? {
        guard sendsETag else { return nil }
        guard let etagBuster else { return etag }
        return "\"\(etagBuster)/\(etag.trimmingCharacters(in: CharacterSet(charactersIn: "\"")))\""
    }

    /// The `Last-Modified` sent for a source's `lastModified`; `nil`: none is sent.
    func lastModified(_ lastModified: String?) -> String? {
        guard sendsLastModified, let lastModified else { return nil }
        guard let lastModifiedBuster, let lastModifiedBusterText,
            let date = HTTPDate.parse(lastModified), date < lastModifiedBuster
        else { return lastModified }
        return lastModifiedBusterText
    }

    /// `Cache-Control` when ``fixedMaximumAge`` is set: `max-age` at most `maximumAge` (an `expires` that
    /// comes sooner shortens it); `no-cache` for 0.
    static func fixedCacheControl(_ maximumAge: Int) -> String {
        maximumAge > 0 ? "max-age=\(maximumAge), public" : "no-cache"
    }
}
