import Foundation
import HTTPTypes
import Hummingbird
import Imagery

/// The headers and status of an answer with a stored image, the same on every path: a route's
/// (``ImageController``), and the event loop's (``HitHandler``): validators, cache headers, the
/// quality chosen, the skipped filters, `Content-Disposition`, and a `Content-Security-Policy` that
/// lets no image run script (``contentSecurityPolicy``); a peer's own rules where its URLs differ
/// (``ResponseTerms/peer``: validators, a fixed max-age, a canonical link).
package struct ImageAnswers: Sendable {
    let service: ImageService

    /// The quality the encoder chose for the image sent (`q=auto`, imgproxy's `autoquality`).
    static let qualityHeader = "X-Imagery-Quality"
    /// The thumbor filters a URL names that were skipped, as thumbor skips them (``SkippedOption``).
    static let skippedFiltersHeader = "X-Imagery-Skipped-Filters"

    /// 200 with the image, or 304 when the request's validators match
    /// (``answer(_:terms:negotiated:validators:now:fields:)``),
    /// cache headers at most `maxAge`.
    func response(for image: StoredResponse, maxAge: Int, negotiated: Bool, request: Request) -> Response {
        Response(
            answer(
                image, terms: ResponseTerms(maximumAge: maxAge), negotiated: negotiated, requestHeaders: request.headers
            ))
    }

    /// The answer with a stored image, on either path (a route, or ``HitHandler`` on the event
    /// loop), its fields added to `fields` in the order sent: 200 with the image, or 304 when
    /// `If-None-Match` names its ETag (or, without `If-None-Match`, when `If-Modified-Since` is not
    /// before its `Last-Modified`: RFC 9110 13.1.3, imgproxy's `USE_LAST_MODIFIED`); cache headers
    /// (``ResponseCacheHeaders``: the source's freshness, at most what `terms` allow) either way.
    /// - Returns: The status, and `terms`' `Content-Disposition` (sent after `Content-Length`).
    func answer<Head: StoredHead, Fields: AnswerFields>(
        _ image: Head, terms: ResponseTerms, negotiated: Bool, validators: Validators, now: Date, fields: inout Fields
    ) -> (status: HTTPResponse.Status, disposition: String?) {
        let peer = terms.peer
        let fixedMaximumAge = peer?.fixedMaximumAge
        let maxAge = terms.maximumAge(
            configured: fixedMaximumAge ?? service.configuration.caching.responseMaxAge,
            at: Int(now.timeIntervalSince1970))
        let (cacheControl, age) =
            fixedMaximumAge == nil
            ? image.cacheHeaders.values(maximumAge: maxAge, now: now, maxAgeFirst: peer?.maxAgeFirst ?? false)
            : (PeerAnswers.fixedCacheControl(maxAge), nil)
        let etag = peer.map { $0.etag(image.etag) } ?? image.etag
        let lastModified =
            peer.map { $0.lastModified(image.cacheHeaders.lastModified) } ?? image.cacheHeaders.lastModified
        if let etag { fields.add(.eTag, etag) }
        fields.add(.cacheControl, cacheControl)
        fields.add(Self.contentTypeOptions, "nosniff")
        fields.add(.contentSecurityPolicy, Self.contentSecurityPolicy)
        if let age { fields.add(.age, String(age)) }
        if let lastModified { fields.add(.lastModified, lastModified) }
        if let canonical = terms.canonical { fields.add(Self.linkField, "<\(canonical)>; rel=\"canonical\"") }
        if negotiated { fields.add(.vary, "Accept") }
        if let quality = image.chosenQuality { fields.add(Self.qualityField, String(quality)) }
        if !terms.skippedFilters.isEmpty {
            fields.add(Self.skippedFiltersField, terms.skippedFilters.joined(separator: ", "))
        }
        let disposition = terms.disposition?.value(contentType: image.contentType)
        if EncodedImageResponse.isNotModified(
            ifNoneMatch: etag == nil ? nil : validators.ifNoneMatch, ifModifiedSince: validators.ifModifiedSince,
            etag: etag ?? "", lastModified: lastModified)
        {
            return (.notModified, disposition)
        }
        fields.add(.contentType, image.contentType)
        return (.ok, disposition)
    }

    /// ``answer(_:terms:negotiated:validators:now:fields:)`` as a route sends it (counted as ``HitHandler``'s
    /// answers are: the skipped filters it names).
    func answer(_ image: StoredResponse, terms: ResponseTerms, negotiated: Bool, requestHeaders: HTTPFields)
        -> StoredAnswer
    {
        service.countSkippedFilters(terms.skippedFilters)
        var fields = HTTPFields()
        let validators = Validators(
            ifNoneMatch: requestHeaders[.ifNoneMatch], ifModifiedSince: requestHeaders[.ifModifiedSince])
        let now = service.configuration.time.date()
        let (status, disposition) = answer(
            image, terms: terms, negotiated: negotiated, validators: validators, now: now, fields: &fields
        )
        return StoredAnswer(
            status: status, headers: fields, body: status == .ok ? image.body : nil, disposition: disposition)
    }

    /// Sent with every image (imgproxy's policy): an image opened as a page, an SVG passed on above all,
    /// runs no script and loads nothing on the image host's origin.
    static let contentSecurityPolicy = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox"

    private static let contentTypeOptions = HTTPField.Name("X-Content-Type-Options")!
    private static let linkField = HTTPField.Name("Link")!
    private static let qualityField = HTTPField.Name(qualityHeader)!
    private static let skippedFiltersField = HTTPField.Name(skippedFiltersHeader)!
}
