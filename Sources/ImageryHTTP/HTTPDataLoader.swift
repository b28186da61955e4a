import AsyncHTTPClient
import Foundation
import Imagery
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// Loads `http` and `https` URLs with AsyncHTTPClient (and `file` URLs from disk).
///
/// The body is streamed: progress is reported per chunk, and the size cap is
/// checked against `Content-Length` before the body and against the bytes
/// received while it streams, so an oversized response is aborted early.
/// Redirects are followed by the loader itself, so every hop can be vetted
/// (``Configuration/validateURL``). Cancelling the calling task aborts the transfer.
///
/// The loader owns an `HTTPClient`: call ``shutdown()`` when done with it (if
/// you do not, it is shut down without waiting when the loader is released).
public final class HTTPDataLoader: DataLoading {
    /// Limits and behaviour of an ``HTTPDataLoader``.
    public struct Configuration: Sendable {
        /// The largest response body accepted, in bytes; default 50 MB.
        public var maximumSize: Int = 50_000_000
        /// The most time one load may take, redirects and body included; default 30 s.
        public var timeout: Duration = .seconds(30)
        /// The most time to open a connection; default 10 s.
        public var connectTimeout: Duration = .seconds(10)
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

        /// The default configuration.
        public init() {}
    }

    /// The configuration the loader was made with.
    public let configuration: Configuration
    private let client: HTTPClient
    private let files: FileDataLoader
    private let logger: Logger
    private let isShutDown = OnceFlag()

    /// A loader with its own HTTP client.
    public init(configuration: Configuration = Configuration(), logger: Logger = Logger(label: "imagery.http")) {
        self.configuration = configuration
        var clientConfiguration = HTTPClient.Configuration(redirectConfiguration: .disallow)
        clientConfiguration.timeout.connect = .nanoseconds(Int64(configuration.connectTimeout.nanoseconds))
        clientConfiguration.decompression = .disabled
        self.client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: clientConfiguration)
        self.files = FileDataLoader(maximumSize: configuration.maximumSize)
        self.logger = logger
    }

    /// Shuts the HTTP client down; loads after this fail.
    public func shutdown() async throws {
        guard isShutDown.set() else { return }
        try await client.shutdown()
    }

    deinit {
        // Not shut down by its owner: start the client's shutdown without waiting
        // (the client keeps itself alive until it completes).
        if isShutDown.set() { client.shutdown { _ in } }
    }

    public func load(_ request: DataRequest, progress: @escaping @Sendable (TransferProgress) -> Void) async throws -> DataResponse {
        let url = request.url
        if url.isFileURL { return try await files.load(request, progress: progress) }
        let deadline = NIODeadline.now() + .nanoseconds(Int64(configuration.timeout.nanoseconds))
        var current = url
        for _ in 0...configuration.maximumRedirects {
            guard let scheme = current.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
                throw DataLoadingError.unsupportedScheme(current.scheme ?? "")
            }
            guard current.host?.isEmpty == false else { throw DataLoadingError.invalidURL(current.absoluteString) }
            let address = try await configuration.validateURL(current)
            let outcome = try await fetch(
                current, connectingTo: address, headers: request.headers, deadline: deadline,
                willReceiveBody: request.willReceiveBody, progress: progress
            )
            switch outcome {
            case .response(let response): return response
            case .redirect(let next): current = next
            }
        }
        throw DataLoadingError.tooManyRedirects(limit: configuration.maximumRedirects)
    }

    private enum Outcome {
        case response(DataResponse)
        case redirect(URL)
    }

    private func fetch(
        _ url: URL, connectingTo address: String?, headers: [String: String], deadline: NIODeadline,
        willReceiveBody: (@Sendable (Int64?) async throws -> Void)?, progress: @Sendable (TransferProgress) -> Void
    ) async throws -> Outcome {
        var request: HTTPClientRequest
        if let address, url.scheme?.lowercased() == "http", let pinned = Self.url(url, withHost: address), let host = url.host {
            request = HTTPClientRequest(url: pinned.absoluteString)
            request.headers.add(name: "Host", value: url.port.map { "\(host):\($0)" } ?? host)
        } else {
            request = HTTPClientRequest(url: url.absoluteString)
        }
        request.headers.add(name: "User-Agent", value: configuration.userAgent)
        if !headers.keys.contains(where: { $0.lowercased() == "accept" }) {
            request.headers.add(name: "Accept", value: "image/*,*/*;q=0.8")
        }
        for (name, value) in headers { request.headers.replaceOrAdd(name: name, value: value) }
        do {
            let response = try await client.execute(request, deadline: deadline, logger: logger)
            let status = Int(response.status.code)
            if [301, 302, 303, 307, 308].contains(status), let location = response.headers.first(name: "location") {
                guard let next = URL(string: location, relativeTo: url)?.absoluteURL else {
                    throw DataLoadingError.invalidURL(location)
                }
                return .redirect(next)
            }
            var responseHeaders: [String: String] = [:]
            for (name, value) in response.headers {
                let name = name.lowercased()
                responseHeaders[name] = responseHeaders[name].map { $0 + ", " + value } ?? value
            }
            if status == 304 { return .response(DataResponse(data: Data(), statusCode: 304, headers: responseHeaders)) }
            guard (200..<300).contains(status) else { throw DataLoadingError.badStatus(status) }
            let expected = response.headers.first(name: "content-length").flatMap(Int64.init)
            if let expected, expected > configuration.maximumSize {
                throw DataLoadingError.tooLarge(limit: configuration.maximumSize)
            }
            if let willReceiveBody {
                // Its error is the caller's (a memory budget's refusal), not a transport failure.
                do { try await willReceiveBody(expected) } catch { throw CallerError(error: error) }
            }
            var data = Data()
            data.reserveCapacity(Int(min(expected ?? 65_536, Int64(configuration.maximumSize))))
            progress(TransferProgress(completed: 0, total: expected))
            for try await chunk in response.body {
                guard data.count + chunk.readableBytes <= configuration.maximumSize else {
                    throw DataLoadingError.tooLarge(limit: configuration.maximumSize)
                }
                chunk.withUnsafeReadableBytes { data.append(contentsOf: $0) }
                progress(TransferProgress(completed: Int64(data.count), total: expected))
            }
            return .response(DataResponse(data: data, statusCode: status, headers: responseHeaders))
        } catch let error as DataLoadingError {
            throw error
        } catch let error as CallerError {
            throw error.error
        } catch {
            if Task.isCancelled { throw CancellationError() }
            throw Self.translate(error)
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

/// A flag set once; `set()` says whether this call set it.
final class OnceFlag: Sendable {
    private let flag = NIOLockedValueBox(false)

    func set() -> Bool {
        flag.withLockedValue { value in
            defer { value = true }
            return !value
        }
    }
}
