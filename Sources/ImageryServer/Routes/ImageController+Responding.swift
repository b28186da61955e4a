import Foundation
import HTTPTypes
import Hummingbird
import Imagery
import NIOCore

extension ImageController {
    /// The response to a request in any dialect: answered from result storage when a request written
    /// as `text` was answered before (no reading at all); else read by `dialect` once, and what it
    /// asks for made the same way for every dialect. What result storage holds (memory, disk) is
    /// answered at once; anything else (a revalidation, a fetch, a decode) runs in a task that the
    /// client's leaving cancels.
    /// - Parameters:
    ///   - request: The request.
    ///   - channel: Its connection (``channel(of:)``).
    ///   - dialect: The dialect that reads it.
    ///   - prefix: What the router's groups put before the routes' paths.
    ///   - text: The request as written (its query, or `#` + its path for a path syntax): with
    ///     `Accept`, the key under which result storage remembers what it resolved to, so that the next
    ///     one written the same way skips the reading (``HitHandler`` answers it on the event loop).
    ///     `nil`: a request whose answer is not remembered by its text (`/info`).
    func respond(
        to request: Request, on channel: (any Channel)?, reading dialect: some Dialect, prefix: String, text: String?
    ) async -> Response {
        let requestKey = text.map { ResponseStore.requestKey(rawQuery: $0, accept: request.headers[.accept]) }
        // A request written exactly as one answered before: straight to result storage.
        if let requestKey, let (stored, alias) = await service.storedResponse(forRequestKey: requestKey) {
            let now = Int(service.configuration.time.date().timeIntervalSince1970)
            guard !alias.terms.hasExpired(at: now) else { return Self.expired.response() }
            return Response(
                answers.answer(
                    stored, terms: alias.terms, negotiated: alias.negotiated, requestHeaders: request.headers))
        }
        let dialectRequest = DialectRequest(request.uri, prefix: prefix)
        let reading: DialectReading
        do {
            guard let read = try dialect.read(dialectRequest) else {
                throw UnmatchedRouteMiddleware.notFound(dialectRequest.path)
            }
            reading = read
        } catch {
            return ServerError.from(error).response()
        }
        switch reading.kind {
        case .image(let parameters):
            return await respond(
                to: request, on: channel, with: parameters, terms: reading.terms,
                text: requestKey.map { RequestText(key: $0, terms: reading.terms) },
                written: text.map { Substring($0) } ?? dialectRequest.path)
        case .info(let url):
            return await info(for: url, request: request, on: channel)
        case .meta(let meta):
            return await thumborMeta(meta, request: request, on: channel)
        }
    }

    /// An imgproxy URL answered after its `expires`.
    static let expired = ServerError(.notFound, "expired", "this imgproxy URL expired")

    /// The image `parameters` ask for, remembered under `text`, or the fallback image in place of an
    /// error that it replaces.
    /// - Parameters:
    ///   - terms: What the request's text says of the response.
    ///   - written: The request's text, for the log of the options it skipped.
    private func respond(
        to request: Request, on channel: (any Channel)?, with parameters: ImageParameters, terms: ResponseTerms,
        text: RequestText?, written: Substring
    ) async -> Response {
        var terms = terms
        do {
            if !parameters.skipped.isEmpty {
                terms.skippedFilters = parameters.skipped.map(\.name)
                service.skippedOptionLog.report(parameters.skipped, in: written)
            }
            // Another instance owns this source: its answer (the source's key is the caches' one,
            // whatever the spelling).
            if let forwarding, let answer = await forwarding.response(to: request, key: parameters.url.absoluteString) {
                return answer
            }
            let text = text.map { RequestText(key: $0.key, terms: terms) }
            let image = try await image(parameters, text: text, request: request, channel: channel)
            return Response(
                answers.answer(
                    image, terms: terms, negotiated: parameters.isNegotiated, requestHeaders: request.headers))
        } catch {
            let failure = terms.peer.map { $0.failure(ServerError.from(error)) } ?? ServerError.from(error)
            if let fallback = service.fallback, FallbackImage.replacedErrors.contains(failure.code) {
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
                answers.answer(
                    image, terms: terms, negotiated: parameters.isNegotiated, requestHeaders: request.headers))
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

    /// thumbor's `meta/` answer (``ThumborMeta``): the source loaded through the caches and its
    /// header read; `callback=NAME` wraps it as JavaScript.
    private func thumborMeta(_ meta: ThumborMetaRequest, request: Request, on channel: (any Channel)?) async -> Response
    {
        do {
            let answer = try await watcher.cancellingOnClose(
                channel, within: service.configuration.limits.requestTimeout
            ) { [service] in
                try await service.thumborMeta(meta.url, source: meta.parameters.url, callback: meta.callback)
            }
            return answers.response(
                for: answer, maxAge: service.configuration.caching.responseMaxAge, negotiated: false, request: request)
        } catch {
            return ServerError.from(error).response()
        }
    }

    /// The `/info` answer for the source at `url`: its header and placeholders, as JSON (``ImageInfo``).
    private func info(for url: URL, request: Request, on channel: (any Channel)?) async -> Response {
        do {
            if let forwarding, let answer = await forwarding.response(to: request, key: url.absoluteString) {
                return answer
            }
            let info = try await watcher.cancellingOnClose(channel, within: service.configuration.limits.requestTimeout)
            {
                [service] in
                try await service.info(for: url)
            }
            return answers.response(
                for: info, maxAge: service.configuration.caching.responseMaxAge, negotiated: false, request: request)
        } catch {
            return ServerError.from(error).response()
        }
    }
}
