import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Imagery
import NIOCore

/// `GET /image`, `GET /health`, the gallery page `GET /` and its files `GET /files/NAME`
/// (and `HEAD` of each).
package struct ImageController: Sendable {
    let service: ImageService
    let watcher: ConnectionWatcher
    let signer: RequestSigner?
    let gallery: Gallery
    let presets: Presets
    let dialects: PathDialects
    /// Requests whose source another instance of the cluster owns go there (`nil`: no cluster).
    let forwarding: OwnerForwarding?

    /// - Throws: ``ConfigurationFileError`` when the configuration's presets are not valid.
    init(service: ImageService, watcher: ConnectionWatcher, forwarding: OwnerForwarding? = nil) throws {
        self.service = service
        self.watcher = watcher
        self.forwarding = forwarding
        self.signer = service.configuration.requests.signingKey.map(RequestSigner.init(key:))
        self.gallery = Gallery(
            directory: service.configuration.gallery.directory, urls: service.configuration.gallery.urls)
        self.presets = try Presets(
            service.configuration.requests.presets, onlyPresets: service.configuration.requests.onlyPresets)
        self.dialects = try PathDialects(configuration: service.configuration, watermarks: service.watermarkIDs)
    }

    /// Adds `routes` to `router`, whose paths start with `prefix` (`""`, or `/media`: what the
    /// router's own groups put before them; a path syntax's path is read after it).
    func addRoutes<Context: RequestContext>(
        to router: some RouterMethods<Context>, prefix: String = "", routes: ImageryRoutes.Selection
    ) {
        if routes.contains(.health) {
            router.getAndHead("health") { _, _ -> Response in
                let body = ByteBuffer(string: #"{"status":"ok"}"#)
                return Response(
                    status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: body))
            }
            // thumbor's health check, for load balancers pointed at a thumbor: its words.
            router.getAndHead("healthcheck") { _, _ -> Response in
                Response(
                    status: .ok, headers: [.contentType: "text/html; charset=UTF-8", .cacheControl: "no-cache"],
                    body: ResponseBody(byteBuffer: ByteBuffer(string: "WORKING"))
                )
            }
        }
        if routes.contains(.image) {
            router.getAndHead("image") { request, context -> Response in
                await respond(to: request, on: Self.channel(of: context))
            }
        }
        if routes.contains(.info) {
            router.getAndHead("info") { request, context -> Response in
                await info(for: request, on: Self.channel(of: context))
            }
        }
        if routes.contains(.gallery) {
            router.getAndHead("/") { _, _ -> Response in
                let page = GalleryPage(gallery: gallery, signer: signer).html()
                return Response(
                    status: .ok, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-cache"],
                    body: ResponseBody(byteBuffer: ByteBuffer(string: page))
                )
            }
            router.getAndHead("files/:name") { request, context -> Response in
                await file(context.parameters.get("name") ?? "", request: request)
            }
        }
        guard routes.contains(.dialects) else { return }
        // Any other path: another proxy's URL syntax, else 404. A path answered before is answered
        // from result storage by its text (`#PATH`), before its syntax is looked for.
        router.getAndHead("**") { request, context -> Response in
            var path = Substring(request.uri.path)
            if !prefix.isEmpty, path.hasPrefix(prefix) { path = path.dropFirst(prefix.count) }
            if service.configuration.thumbor.enabled, ThumborURL.isMeta(path) {
                return await thumborMeta(path, request: request, on: Self.channel(of: context))
            }
            return await respond(
                to: request, on: Self.channel(of: context), text: "#" + path, terms: { try terms(ofPath: path) }
            ) {
                guard let syntax = dialects.syntax(of: path) else { throw UnmatchedRouteMiddleware.notFound(path) }
                return try dialects.parameters(path, in: syntax)
            }
        }
    }

    /// What a path in another proxy's syntax says of its response (read when it is not a hit):
    /// imgproxy's expiry (an expired URL is refused) and `Content-Disposition`, thumbor's `max_age(N)`.
    /// - Throws: ``ServerError`` (404 `expired`) for an imgproxy URL past its expiry.
    private func terms(ofPath path: Substring) throws -> ResponseTerms {
        var terms = ResponseTerms()
        if service.configuration.imgproxy.enabled, let imgproxyPath = dialects.imgproxyPath(path),
            let expiry = ImgproxyURL.expiry(of: imgproxyPath), expiry > 0
        {
            guard expiry > Int(service.configuration.time.date().timeIntervalSince1970) else { throw Self.expired }
            terms.expiresAt = expiry
        } else if service.configuration.thumbor.enabled, let seconds = ThumborURL.maximumAge(of: path) {
            terms.maximumAge = seconds
        }
        if service.configuration.imgproxy.enabled { terms.disposition = dialects.imgproxyDisposition(path) }
        return terms
    }

    /// An imgproxy URL answered after its `expires`.
    static let expired = ServerError(.notFound, "expired", "this imgproxy URL expired")

    /// The request's connection, for cancelling its work when the client leaves: known in
    /// `imagery serve`'s own server (whose connections a ``ConnectionWatcher`` watches), `nil` in a
    /// host application's (there the request timeout and the task's cancellation bound the work).
    static func channel(of context: some RequestContext) -> (any Channel)? {
        (context as? ServerRequestContext)?.channel
    }

    /// A gallery file, as it is on disk (its type sniffed from its bytes).
    func file(_ name: String, request: Request) async -> Response {
        do {
            guard let url = gallery.fileURL(named: name.removingPercentEncoding ?? name) else {
                throw ServerError(.notFound, "not_found", "there is no gallery file \(name)")
            }
            return response(for: try await service.readFile(url), maxAge: 3600, negotiated: false, request: request)
        } catch {
            return ServerError.from(error).response()
        }
    }

    /// The `/image` response. What result storage holds (memory, disk) is answered at once; anything
    /// else (a revalidation, a fetch, a decode) runs in a task that the client's leaving cancels.
    func respond(to request: Request, on channel: (any Channel)?) async -> Response {
        await respond(to: request, on: channel, text: request.uri.query ?? "") {
            try checkSignature(of: request)
            let query = try presets.expand(Self.parameters(of: request.uri))
            return try ImageParameters(
                query: query, maximumSide: service.configuration.limits.maximumOutputSide, gallery: gallery,
                watermarks: service.watermarkIDs
            )
        }
    }

    /// The response to an image request in any URL syntax: `parse` (signature included) makes its
    /// parameters, and everything after is one path for all syntaxes.
    /// - Parameter text: The request as written (its query, or `#` + its path for a path syntax): with
    ///   `Accept`, the key under which result storage remembers what it resolved to, so that the next
    ///   one written the same way skips `terms` and `parse` (``HitHandler`` answers it on the event loop).
    /// - Parameter terms: What the text says of the response beside the image (read on a miss only).
    func respond(
        to request: Request, on channel: (any Channel)?, text: some StringProtocol,
        terms readTerms: () throws -> ResponseTerms = { ResponseTerms() }, parse: () throws -> ImageParameters
    ) async -> Response {
        // A request written exactly as one answered before: straight to result storage.
        let requestKey = ResponseStore.requestKey(rawQuery: String(text), accept: request.headers[.accept])
        if let (stored, alias) = await service.storedResponse(forRequestKey: requestKey) {
            let now = Int(service.configuration.time.date().timeIntervalSince1970)
            guard !alias.terms.hasExpired(at: now) else { return Self.expired.response() }
            return Response(
                answer(stored, terms: alias.terms, negotiated: alias.negotiated, requestHeaders: request.headers))
        }
        var parsed: ImageParameters?
        var terms = ResponseTerms()
        do {
            terms = try readTerms()
            let parameters = try parse()
            parsed = parameters
            if !parameters.skipped.isEmpty {
                terms.skippedFilters = parameters.skipped.map(\.name)
                service.skippedOptionLog.report(parameters.skipped, in: text)
            }
            // Another instance owns this source: its answer (the source's key is the caches' one,
            // whatever the spelling).
            if let forwarding, let answer = await forwarding.response(to: request, key: parameters.url.absoluteString) {
                return answer
            }
            let text = RequestText(key: requestKey, terms: terms)
            let image = try await image(parameters, text: text, request: request, channel: channel)
            return Response(
                answer(image, terms: terms, negotiated: parameters.isNegotiated, requestHeaders: request.headers))
        } catch {
            let failure = ServerError.from(error)
            if let fallback = service.fallback, let parameters = parsed,
                FallbackImage.replacedErrors.contains(failure.code)
            {
                return await fallbackResponse(
                    fallback, for: parameters, replacing: failure, terms: terms, request: request, channel: channel)
            }
            return failure.response()
        }
    }

    /// The stored response for `parameters`, or made now (cancelled when the client leaves).
    private func image(_ parameters: ImageParameters, text: RequestText?, request: Request, channel: (any Channel)?)
        async throws -> StoredResponse
    {
        switch await service.lookUp(parameters, accept: request.headers[.accept], text: text) {
        case .stored(let stored): stored
        case .missing(let missing):
            try await watcher.cancellingOnClose(channel, within: service.configuration.limits.requestTimeout) {
                [service] in
                try await service.make(missing)
            }
        }
    }

    /// The fallback image made as `parameters` asked, in place of `failure`: its status (or the
    /// failure's), a short max-age and a header that says so. Never remembered for the request's
    /// text: the next request tries the source again.
    private func fallbackResponse(
        _ fallback: FallbackImage, for parameters: ImageParameters, replacing failure: ServerError,
        terms: ResponseTerms, request: Request,
        channel: (any Channel)?
    ) async -> Response {
        do {
            let image = try await image(parameters.from(fallback.url), text: nil, request: request, channel: channel)
            let terms = ResponseTerms(maximumAge: fallback.maximumAge, disposition: terms.disposition)
            var response = Response(
                answer(image, terms: terms, negotiated: parameters.isNegotiated, requestHeaders: request.headers))
            if response.status == .ok {
                response.status = fallback.status == 0 ? failure.status : HTTPResponse.Status(code: fallback.status)
            }
            if response.status != .ok, response.status != .notModified { response.headers[.contentDisposition] = nil }
            response.headers[.init(FallbackImage.header)!] = "1"
            return response
        } catch {
            return failure.response()  // the fallback cannot be made this way either: the source's error
        }
    }

    /// With a signing key configured, refuses a query whose `sig` is missing or wrong (403).
    func checkSignature(of request: Request) throws {
        if let signer, !signer.isValid(rawQuery: request.uri.query ?? "") {
            throw ServerError(.forbidden, "bad_signature", "the request's sig parameter is missing or wrong")
        }
    }

    /// thumbor's `meta/` answer (``ThumborMeta``): its signature and options checked as for an image,
    /// the source loaded through the caches and its header read; `callback=NAME` wraps it as JavaScript.
    func thumborMeta(_ path: Substring, request: Request, on channel: (any Channel)?) async -> Response {
        do {
            let parameters = try dialects.thumborParameters(path)
            let url = try ThumborURL(path: path)
            let callback = service.configuration.thumbor.metaCallback ?? Self.parameters(of: request.uri)["callback"]
            if let callback,
                callback.isEmpty || callback.count > 100
                    || !callback.allSatisfy({ $0.isLetter || $0.isNumber || "_.$".contains($0) })
            {
                throw ServerError.badParameter(
                    "callback must be a JavaScript name (letters, digits, _ . $), at most 100 characters")
            }
            let meta = try await watcher.cancellingOnClose(channel, within: service.configuration.limits.requestTimeout)
            {
                [service] in
                try await service.thumborMeta(url, source: parameters.url, callback: callback)
            }
            return response(
                for: meta, maxAge: service.configuration.caching.responseMaxAge, negotiated: false, request: request)
        } catch {
            return ServerError.from(error).response()
        }
    }

    /// The `/info` answer: the source's header and placeholders, as JSON (``ImageInfo``).
    func info(for request: Request, on channel: (any Channel)?) async -> Response {
        do {
            try checkSignature(of: request)
            let query = Self.parameters(of: request.uri)
            let url = try ImageParameters.sourceURL(query, gallery: gallery)
            if let forwarding, let answer = await forwarding.response(to: request, key: url.absoluteString) {
                return answer
            }
            let info = try await watcher.cancellingOnClose(channel, within: service.configuration.limits.requestTimeout)
            {
                [service] in
                try await service.info(for: url)
            }
            return response(
                for: info, maxAge: service.configuration.caching.responseMaxAge, negotiated: false, request: request)
        } catch {
            return ServerError.from(error).response()
        }
    }

    /// The quality the encoder chose for the image sent (`q=auto`, imgproxy's `autoquality`).
    static let qualityHeader = "X-Imagery-Quality"
    /// The thumbor filters a URL names that were skipped, as thumbor skips them (``SkippedOption``).
    static let skippedFiltersHeader = "X-Imagery-Skipped-Filters"

    /// 200 with the image, or 304 when the request's validators match (``answer(_:terms:negotiated:validators:now:fields:)``),
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
        let maxAge = terms.maximumAge(
            configured: service.configuration.caching.responseMaxAge, at: Int(now.timeIntervalSince1970))
        let (cacheControl, age) = image.cacheHeaders.values(maximumAge: maxAge, now: now)
        fields.add(.eTag, image.etag)
        fields.add(.cacheControl, cacheControl)
        fields.add(Self.contentTypeOptions, "nosniff")
        if let age { fields.add(.age, String(age)) }
        if let lastModified = image.cacheHeaders.lastModified { fields.add(.lastModified, lastModified) }
        if negotiated { fields.add(.vary, "Accept") }
        if let quality = image.chosenQuality { fields.add(Self.qualityField, String(quality)) }
        if !terms.skippedFilters.isEmpty {
            fields.add(Self.skippedFiltersField, terms.skippedFilters.joined(separator: ", "))
        }
        let disposition = terms.disposition?.value(contentType: image.contentType)
        if let ifNoneMatch = validators.ifNoneMatch {
            if Self.matches(ifNoneMatch, image.etag) { return (.notModified, disposition) }
        } else if let since = validators.ifModifiedSince.flatMap(HTTPDate.parse),
            let modified = image.cacheHeaders.lastModified.flatMap(HTTPDate.parse), modified <= since
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

    private static let contentTypeOptions = HTTPField.Name("X-Content-Type-Options")!
    private static let qualityField = HTTPField.Name(qualityHeader)!
    private static let skippedFiltersField = HTTPField.Name(skippedFiltersHeader)!

    /// The first value of each query parameter, percent-decoded.
    package static func parameters(of uri: URI) -> [String: String] {
        Dictionary(
            uri.queryParameters.map { (String($0.key), String($0.value)) }, uniquingKeysWith: { first, _ in first })
    }

    /// `If-None-Match`: `*`, or a list of entity tags compared weakly (RFC 9110 13.1.2).
    package static func matches(_ header: String, _ etag: String) -> Bool {
        HTTPHeaderList.elements(header).contains { element in
            let tag = element.utf8.starts(with: "W/".utf8) ? element.utf8.dropFirst(2) : element.utf8[...]
            return tag.elementsEqual("*".utf8) || tag.elementsEqual(etag.utf8)
        }
    }
}

extension RouterMethods {
    /// `handler` for `GET` and for `HEAD` of `path` (RFC 9110: every server answers `HEAD` as `GET`;
    /// the HTTP server sends no body). CDNs and link checkers send `HEAD`.
    func getAndHead(_ path: RouterPath, use handler: @escaping @Sendable (Request, Context) async throws -> Response) {
        on(path, method: .get, use: handler)
        on(path, method: .head, use: handler)
    }
}
