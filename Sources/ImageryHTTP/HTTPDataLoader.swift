import AsyncHTTPClient
import Foundation
import Imagery
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// Loads `http` and `https` URLs with AsyncHTTPClient (and `file` URLs from disk).
///
/// The body is streamed: progress is reported per chunk (and the body so far handed to
/// `DataRequest.didReceiveBody`, when set, for progressive previews), and the size cap is
/// checked against `Content-Length` before the body and against the bytes
/// received while it streams, so an oversized response is aborted early.
/// Redirects are followed by the loader itself, so every hop can be vetted
/// (``Configuration/validateURL``). Cancelling the calling task aborts the transfer.
///
/// A transfer that stops part way (cancelled, or cut by the network) keeps its bytes when the
/// origin serves ranges (``Configuration/resumableData``): the next load of the same request asks
/// for the rest with `Range` and `If-Range` and joins the 206's bytes to them; an origin whose
/// source changed answers 200 with the whole new version, and that is what the load returns.
///
/// A loader made with ``init(configuration:logger:)`` or ``init(eventLoopGroup:configuration:logger:)``
/// owns its `HTTPClient`: call ``shutdown()`` when done with it (if you do not, it is shut down without
/// waiting when the loader is released). One made with ``init(client:configuration:logger:)`` uses the
/// host's client and never shuts it down.
public final class HTTPDataLoader: DataLoading {
    /// Limits and behaviour of an ``HTTPDataLoader``.
    public struct Configuration: Sendable {
        /// The largest response body accepted, in bytes; default 50 MB.
        public var maximumSize: Int = 50_000_000
        /// The most time one load may take, redirects and body included; default 30 s.
        public var timeout: Duration = .seconds(30)
        /// The most time to open a connection; default 10 s.
        public var connectTimeout: Duration = .seconds(10)
        /// The most connections open to one host (and port) at once; more loads wait for one.
        /// Default 8 (AsyncHTTPClient's). Set it to the pipeline's concurrent downloads when they
        /// mostly go to one origin, or those beyond it wait here, unseen by the pipeline's queue.
        public var maximumConnectionsPerHost: Int = 8
        /// The most redirects followed; default 5.
        public var maximumRedirects: Int = 5
        /// The `User-Agent` header; default `"Imagery"`.
        public var userAgent: String = "Imagery"
        /// Called with the first URL and every redirect target before it is requested;
        /// throw to refuse it. Default: accepts every URL, connecting by name.
        ///
        /// It may return the address (an IP literal) it checked, to connect to instead of
        /// resolving the name again. For `http` the loader then connects to that address and
        /// sends the name in `Host`, so a DNS answer that changes between the check and the
        /// connection (DNS rebinding) cannot move the request. `https` always connects by name:
        /// the server must present a certificate for the name, which an address it was
        /// rebound to cannot. Return `nil` to connect by name.
        public var validateURL: @Sendable (URL) async throws -> String? = { _ in nil }

        /// Where the bytes of stopped transfers are kept to be resumed; `nil`: never resumed.
        /// Default: in memory, at most 32 MiB. Conditional requests (revalidations) never resume.
        public var resumableData: ResumableData? = ResumableData()

        /// The default configuration.
        public init() {}
    }

    /// The configuration the loader was made with.
    public let configuration: Configuration
    /// The HTTP client the loader sends with.
    public let client: HTTPClient
    /// Whether the loader made ``client`` (and shuts it down) or was given it.
    public let ownsClient: Bool
    private let files: FileDataLoader
    private let logger: Logger
    private let isShutDown = OnceFlag()

    /// A loader with its own HTTP client, on AsyncHTTPClient's shared event loops.
    public convenience init(
        configuration: Configuration = Configuration(), logger: Logger = Logger(label: "imagery.http")
    ) {
        self.init(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration, logger: logger)
    }

    /// A loader with its own HTTP client on `eventLoopGroup` (an app's or a server's own loops).
    public convenience init(
        eventLoopGroup: any EventLoopGroup, configuration: Configuration = Configuration(),
        logger: Logger = Logger(label: "imagery.http")
    ) {
        let client = HTTPClient(
            eventLoopGroup: eventLoopGroup, configuration: Self.clientConfiguration(for: configuration))
        self.init(client: client, owning: true, configuration: configuration, logger: logger)
    }

    /// A loader that sends with the host's `client` (its connection pool, its event loops), and never
    /// shuts it down: ``shutdown()`` only stops this loader. The loader's own limits still hold (size,
    /// timeout, redirects, ``Configuration/validateURL``); a client that follows redirects itself
    /// hides them from the loader, so every hop is vetted only with one that does not
    /// (``clientConfiguration(for:)`` is what the loader would make).
    public convenience init(
        client: HTTPClient, configuration: Configuration = Configuration(),
        logger: Logger = Logger(label: "imagery.http")
    ) {
        self.init(client: client, owning: false, configuration: configuration, logger: logger)
    }

    private init(client: HTTPClient, owning: Bool, configuration: Configuration, logger: Logger) {
        self.configuration = configuration
        self.client = client
        self.ownsClient = owning
        self.files = FileDataLoader(maximumSize: configuration.maximumSize)
        self.logger = logger
    }

    /// The client configuration a loader of `configuration` makes for itself: no redirects (the loader
    /// follows them, vetting each), no decompression, its connect timeout and connections per host.
    public static func clientConfiguration(for configuration: Configuration) -> HTTPClient.Configuration {
        var clientConfiguration = HTTPClient.Configuration(redirectConfiguration: .disallow)
        clientConfiguration.timeout.connect = .nanoseconds(Int64(configuration.connectTimeout.nanoseconds))
        clientConfiguration.decompression = .disabled
        clientConfiguration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = max(
            1, configuration.maximumConnectionsPerHost)
        return clientConfiguration
    }

    /// Stops the loader: loads after this fail with `DataLoadingError.transport`. A client the
    /// loader made is shut down (waiting for it); a host's client is left running.
    public func shutdown() async throws {
        guard isShutDown.set() else { return }
        if ownsClient { try await client.shutdown() }
    }

    deinit {
        // Not shut down by its owner: start the client's shutdown without waiting
        // (the client keeps itself alive until it completes).
        if isShutDown.set(), ownsClient { client.shutdown { _ in } }
    }

    public func load(_ request: DataRequest, progress: @escaping @Sendable (TransferProgress) -> Void) async throws
        -> DataResponse
    {
        let url = request.url
        if url.isFileURL { return try await files.load(request, progress: progress) }
        // A host's client keeps running after this loader stops: refuse here, as a shut-down client would.
        if !ownsClient, isShutDown.isSet { throw DataLoadingError.transport("the loader was shut down") }
        let deadline = NIODeadline.now() + .nanoseconds(Int64(configuration.timeout.nanoseconds))
        let resumeKey = configuration.resumableData == nil ? nil : Self.resumeKey(request)
        var partial =
            if let resumeKey { await configuration.resumableData?.take(resumeKey) } else { ResumableData.Partial?.none }
        var current = url
        var redirects = 0
        while redirects <= configuration.maximumRedirects {
            guard let scheme = current.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
                throw DataLoadingError.unsupportedScheme(current.scheme ?? "")
            }
            guard current.host?.isEmpty == false else { throw DataLoadingError.invalidURL(current.absoluteString) }
            let address = try await configuration.validateURL(current)
            let outcome = try await fetch(
                current, connectingTo: address, headers: request.headers, deadline: deadline,
                resuming: partial, resumeKey: resumeKey, willReceiveBody: request.willReceiveBody,
                bodySoFar: request.didReceiveBody, progress: progress
            )
            switch outcome {
            case .response(let response): return response
            case .redirect(let next):
                current = next
                redirects += 1
            case .restartWhole:
                partial = nil  // the origin would not resume these bytes: ask for all of it
            }
        }
        throw DataLoadingError.tooManyRedirects(limit: configuration.maximumRedirects)
    }

    private enum Outcome {
        case response(DataResponse)
        case redirect(URL)
        /// A range answer that does not continue the kept bytes: load the whole again.
        case restartWhole
    }

    /// Whether `headers` make a request conditional (`If-None-Match`, `If-Modified-Since`): the only
    /// requests a 304 answers.
    static func isConditional(_ headers: [String: String]) -> Bool {
        headers.keys.contains { ["if-none-match", "if-modified-since"].contains($0.lowercased()) }
    }

    /// What identifies a request's bytes for resuming: its URL and its headers (a conditional
    /// request is a revalidation, never resumed: `nil`).
    static func resumeKey(_ request: DataRequest) -> String? {
        let names = Set(request.headers.keys.map { $0.lowercased() })
        guard names.isDisjoint(with: ["if-none-match", "if-modified-since", "range", "if-range"]) else { return nil }
        let headers = request.headers.map { "\($0.key.lowercased()):\($0.value)" }.sorted().joined(separator: "\n")
        return request.url.absoluteString + (headers.isEmpty ? "" : "\n" + headers)
    }

    private func fetch(
        _ url: URL, connectingTo address: String?, headers: [String: String], deadline: NIODeadline,
        resuming partial: ResumableData.Partial?, resumeKey: String?,
        willReceiveBody: (@Sendable (Int64?) async throws -> Void)?,
        bodySoFar: (@Sendable (Data) -> Void)?,
        progress: @escaping @Sendable (TransferProgress) -> Void
    ) async throws -> Outcome {
        var requestHeaders = HTTPHeaders()
        var target = url.absoluteString
        if let address, url.scheme?.lowercased() == "http", let pinned = Self.url(url, withHost: address),
            let host = url.host
        {
            target = pinned.absoluteString
            requestHeaders.add(name: "Host", value: url.port.map { "\(host):\($0)" } ?? host)
        }
        requestHeaders.add(name: "User-Agent", value: configuration.userAgent)
        if !headers.keys.contains(where: { $0.lowercased() == "accept" }) {
            requestHeaders.add(name: "Accept", value: "image/*,*/*;q=0.8")
        }
        for (name, value) in headers { requestHeaders.replaceOrAdd(name: name, value: value) }
        if let partial {
            requestHeaders.replaceOrAdd(name: "Range", value: "bytes=\(partial.data.count)-")
            requestHeaders.replaceOrAdd(name: "If-Range", value: partial.validator)
        }
        let request: HTTPClient.Request
        do {
            request = try HTTPClient.Request(url: target, method: .GET, headers: requestHeaders)
        } catch {
            throw DataLoadingError.invalidURL(url.absoluteString)
        }
        // The response is read on its event loop; this task waits for the head, then for the whole body.
        let collector = ResponseCollector(
            eventLoop: client.eventLoopGroup.next(), progress: progress, bodySoFar: bodySoFar)
        let task = collector.execute(request, on: client, deadline: deadline)
        var resumable: String?  // the validator to keep the bytes under should the transfer stop
        do {
            let head = try await withTaskCancellationHandler {
                try await collector.responseHead()
            } onCancel: {
                task.cancel()
            }
            let status = Int(head.status.code)
            var responseHeaders: [String: String] = [:]  // names lower-cased
            for (name, value) in head.headers {
                let name = name.lowercased()
                responseHeaders[name] = responseHeaders[name].map { $0 + ", " + value } ?? value
            }
            // Only a 2xx body is read; any other closes the connection without it.
            guard (200..<300).contains(status) else {
                collector.discardBody()
                if [301, 302, 303, 307, 308].contains(status), let location = head.headers.first(name: "location") {
                    guard let next = URL(string: location, relativeTo: url)?.absoluteURL else {
                        throw DataLoadingError.invalidURL(location)
                    }
                    return .redirect(next)
                }
                if status == 304 {
                    // A 304 answers a conditional request only; to any other it is the origin's fault (it
                    // has no body to use), never a response to hand on.
                    guard Self.isConditional(headers) else { throw DataLoadingError.badStatus(304) }
                    return .response(DataResponse(data: Data(), statusCode: 304, headers: responseHeaders))
                }
                if status == 416, partial != nil { return .restartWhole }
                let retryAfter = head.headers.first(name: "retry-after").flatMap {
                    RetryPolicy.retryAfter($0, now: Date())
                }
                throw DataLoadingError.badStatus(status, retryAfter: retryAfter)
            }
            let validator = ResumableData.validator(of: responseHeaders, status: status)
            var prefix = Data()
            if status == 206 {
                // Only the rest of the kept bytes, of the same version, is joined to them.
                guard let partial else {  // no range was asked for
                    collector.discardBody()
                    throw DataLoadingError.badStatus(206)
                }
                guard validator == partial.validator,
                    ResumableData.contentRange(responseHeaders["content-range"])?.first == partial.data.count
                else {
                    collector.discardBody()
                    return .restartWhole
                }
                prefix = partial.data
                responseHeaders["content-range"] = nil
            }
            let expected = head.headers.first(name: "content-length").flatMap(Int64.init).map {
                $0 + Int64(prefix.count)
            }
            if let expected, expected > configuration.maximumSize {
                collector.discardBody()
                throw DataLoadingError.tooLarge(limit: configuration.maximumSize)
            }
            // The time the caller keeps the body waiting (for memory) is not the origin's: it
            // extends the deadline (the caller bounds its own wait; a page's burst waited for memory
            // past the origin's 10 s and was answered 504).
            var bodyDeadline = deadline
            if let willReceiveBody {
                let waitStart = NIODeadline.now()
                // Its error is the caller's (a memory budget's refusal), not a transport failure.
                do { try await willReceiveBody(expected) } catch {
                    collector.discardBody()
                    throw CallerError(error: error)
                }
                bodyDeadline = bodyDeadline + (NIODeadline.now() - waitStart)
            }
            guard NIODeadline.now() < bodyDeadline else {
                collector.discardBody()
                throw DataLoadingError.timedOut
            }
            resumable = resumeKey == nil ? nil : validator
            let data = try await collector.readBody(
                after: prefix, expected: expected, maximumSize: configuration.maximumSize, deadline: bodyDeadline,
                of: task
            )
            // A cut connection can end a body early without an error: only a whole one is an answer.
            if let expected, Int64(data.count) < expected {
                throw DataLoadingError.transport("the connection closed before the body ended")
            }
            return .response(
                DataResponse(data: data, statusCode: status == 206 ? 200 : status, headers: responseHeaders))
        } catch {
            let (data, stop) = collector.received
            if case .tooLarge = stop { resumable = nil }
            if let resumeKey, let store = configuration.resumableData {
                if let resumable, !data.isEmpty {
                    await store.keep(.init(data: data, validator: resumable), for: resumeKey)
                } else if data.isEmpty, let partial {
                    await store.keep(partial, for: resumeKey)  // nothing arrived: the kept bytes stay kept
                }
            }
            switch (error, stop) {
            case (let error as DataLoadingError, _): throw error
            case (let error as CallerError, _): throw error.error
            case (_, .tooLarge(let limit)): throw DataLoadingError.tooLarge(limit: limit)
            case (_, .timedOut): throw DataLoadingError.timedOut
            default:
                if Task.isCancelled { throw CancellationError() }
                throw Self.translate(error)
            }
        }
    }

    /// `url` with its host replaced by an IP literal (bracketed if IPv6).
    static func url(_ url: URL, withHost address: String) -> URL? {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else { return nil }
        components.percentEncodedHost = address.contains(":") ? "[\(address)]" : address
        return components.url
    }

    private static func translate(_ error: any Error) -> DataLoadingError {
        if let error = error as? HTTPClientError {
            switch error {
            case .deadlineExceeded, .readTimeout, .connectTimeout, .writeTimeout: return .timedOut
            default: return .transport(String(describing: error))
            }
        }
        return .transport(String(describing: error))
    }
}

extension Duration {
    fileprivate var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}

/// An error thrown by the caller's ``DataRequest/willReceiveBody``, passed on as it is.
private struct CallerError: Error {
    let error: any Error
}
