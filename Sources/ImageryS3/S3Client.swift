import AsyncHTTPClient
import Foundation
import Imagery
import NIOCore
import NIOHTTP1

/// A small S3 client on AsyncHTTPClient: get, head, put, copy-in-place and delete of whole objects,
/// every request signed with ``SigV4Signer``, path-style addressing (`ENDPOINT/BUCKET/KEY`, which
/// AWS, MinIO, SeaweedFS and Ceph all take), retried with exponential backoff and jitter on 5xx,
/// throttling (429, 503 `SlowDown`), timeouts and connection failures, each attempt under a deadline.
///
/// Bodies are in memory (objects here are images and responses, bounded by
/// ``Configuration/maximumObjectBytes``), so each is hashed and the store checks it.
/// The client owns an `HTTPClient`: call ``shutdown()`` when done.
public final class S3Client: Sendable {
    public struct Configuration: Sendable {
        /// `http://127.0.0.1:8333`, `https://s3.eu-west-1.amazonaws.com`: scheme, host, port.
        public var endpoint: URL
        public var region: String
        public var credentials: S3Credentials
        /// The most time one attempt to read (get, head) may take; default 5 s.
        public var timeout: Duration = .seconds(5)
        /// The most time one attempt to write (put, copy, delete) may take; default 30 s. Writes
        /// usually run where nothing waits for them, and a store may take seconds to make room
        /// (SeaweedFS grows a new bucket's volumes on its first write).
        public var writeTimeout: Duration = .seconds(30)
        /// The most time connecting may take (AsyncHTTPClient keeps trying a refused connection until
        /// then, so this is what a store that is down costs an attempt); default 1 s.
        public var connectTimeout: Duration = .seconds(1)
        /// Attempts per request, the first included; default 3.
        public var maximumAttempts = 3
        /// The wait before the second attempt, doubled for each further one (with up to half of it
        /// again at random, so that many instances do not retry in step); default 50 ms.
        public var retryDelay: Duration = .milliseconds(50)
        /// The largest object read; default 64 MiB.
        public var maximumObjectBytes = 64 << 20
        /// Connections to the store at once; more requests wait for one (within their deadline). Default 64
        /// (AsyncHTTPClient's own default, 8, left a burst of writes timing out in its queue).
        public var maximumConnections = 64

        public init(endpoint: URL, region: String = "us-east-1", credentials: S3Credentials) {
            (self.endpoint, self.region, self.credentials) = (endpoint, region, credentials)
        }
    }

    /// An object read: its bytes, its user metadata (`x-amz-meta-*`, names without the prefix) and its headers.
    public struct Object: Sendable {
        public var data: Data
        public var statusCode: Int
        /// Response headers, names lower-cased.
        public var headers: [String: String]
        /// `x-amz-meta-NAME` headers by `NAME`.
        public var metadata: [String: String] {
            var metadata: [String: String] = [:]
            for (name, value) in headers where name.hasPrefix("x-amz-meta-") {
                metadata[String(name.dropFirst(11))] = value
            }
            return metadata
        }
    }

    public let configuration: Configuration
    private let signer: SigV4Signer
    private let client: HTTPClient
    private let host: String
    private let isShutDown = OnceFlag()

    /// - Throws: ``S3Error/configuration(_:)`` unless the endpoint is an http or https URL with a host.
    public init(configuration: Configuration) throws(S3Error) {
        guard let scheme = configuration.endpoint.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = configuration.endpoint.host, !host.isEmpty
        else {
            throw .configuration(
                "the endpoint \(configuration.endpoint.absoluteString) is not an http or https URL with a host")
        }
        self.configuration = configuration
        self.host = configuration.endpoint.port.map { "\(host):\($0)" } ?? host
        signer = SigV4Signer(credentials: configuration.credentials, region: configuration.region)
        var clientConfiguration = HTTPClient.Configuration(redirectConfiguration: .disallow)
        clientConfiguration.timeout.connect = .nanoseconds(configuration.connectTimeout.nanoseconds)
        clientConfiguration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = configuration.maximumConnections
        // A request's deadline ends with the response head: a store that stalls mid-body (or
        // before a write's answer) is cut off by this read timeout instead.
        clientConfiguration.timeout.read = .nanoseconds(
            max(configuration.timeout, configuration.writeTimeout).nanoseconds)
        client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: clientConfiguration)
    }

    public func shutdown() async throws {
        guard isShutDown.set() else { return }
        try await client.shutdown()
    }

    deinit {
        // Not shut down by its owner (a server whose services never ran): start the client's shutdown
        // without waiting, rather than leak it (a debug build of AsyncHTTPClient traps on that).
        if isShutDown.set() { client.shutdown { _ in } }
    }

    /// The object at `key`, or `nil` when there is none (404). `headers` may hold conditions
    /// (`If-None-Match`, `If-Modified-Since`): a 304 is returned with an empty body.
    /// - Parameters:
    ///   - bucket: The bucket.
    ///   - key: The object's key, as stored (the client encodes it).
    ///   - headers: Extra request headers, conditions among them.
    ///   - willReceiveBody: Called with the body's announced length before a 2xx body is
    ///     read (it may wait, or throw to stop the read: the error is passed on as it is).
    /// - Throws: ``S3Error``, `willReceiveBody`'s error, or `CancellationError`.
    public func get(
        bucket: String, key: String, headers: [String: String] = [:],
        willReceiveBody: (@Sendable (Int64?) async throws -> Void)? = nil
    ) async throws -> Object? {
        try await send(
            "GET", bucket: bucket, key: key, headers: headers, acceptingNotModified: true,
            willReceiveBody: willReceiveBody)
    }

    /// The headers of the object at `key`, or `nil` when there is none.
    public func head(bucket: String, key: String) async throws(S3Error) -> Object? {
        try await typed { try await send("HEAD", bucket: bucket, key: key) }
    }

    /// Stores `data` at `key`, with user metadata (`x-amz-meta-NAME`; names lower-case, values ASCII).
    public func put(
        bucket: String, key: String, data: Data, contentType: String? = nil, metadata: [String: String] = [:]
    ) async throws(S3Error) {
        var headers = metadata.reduce(into: [String: String]()) { $0["x-amz-meta-\($1.key)"] = $1.value }
        if let contentType { headers["content-type"] = contentType }
        _ = try await typed { try await send("PUT", bucket: bucket, key: key, headers: headers, body: data) }
    }

    /// Replaces the user metadata of the object at `key`, keeping its bytes (a copy onto itself, on the store's side).
    public func replaceMetadata(bucket: String, key: String, contentType: String? = nil, metadata: [String: String])
        async throws(S3Error)
    {
        var headers = metadata.reduce(into: [String: String]()) { $0["x-amz-meta-\($1.key)"] = $1.value }
        headers["x-amz-copy-source"] = "/\(bucket)/\(SigV4Signer.encode(key, keepingSlash: true))"
        headers["x-amz-metadata-directive"] = "REPLACE"
        if let contentType { headers["content-type"] = contentType }
        _ = try await typed { try await send("PUT", bucket: bucket, key: key, headers: headers) }
    }

    /// Removes the object at `key` (nothing to remove is no error).
    public func delete(bucket: String, key: String) async throws(S3Error) {
        _ = try await typed { try await send("DELETE", bucket: bucket, key: key) }
    }

    /// Creates `bucket`; one that exists already (and is the caller's) is no error.
    public func createBucket(_ bucket: String) async throws(S3Error) {
        do {
            _ = try await typed { try await send("PUT", bucket: bucket, key: nil) }
        } catch .status(409, _) {
            return  // BucketAlreadyOwnedByYou / BucketAlreadyExists
        }
    }

    // MARK: - Requests

    /// `body`'s result, its failures as ``S3Error`` (cancellation is a transport failure here).
    /// ``Configuration/maximumAttempts`` with waits from ``Configuration/retryDelay``, doubling, with
    /// up to half of each again at random, within twice the read timeout.
    private var retryPolicy: RetryPolicy {
        RetryPolicy(
            maximumAttempts: configuration.maximumAttempts, initialDelay: configuration.retryDelay * 1.5,
            maximumDelay: .seconds(60), jitter: 1.0 / 3, deadline: .seconds(3600))
    }

    private func typed<T>(_ body: () async throws -> T) async throws(S3Error) -> T {
        do {
            return try await body()
        } catch let error as S3Error {
            throw error
        } catch {
            throw .transport(error is CancellationError ? "cancelled" : String(describing: error))
        }
    }

    private func send(
        _ method: String, bucket: String, key: String?, headers: [String: String] = [:], body: Data = Data(),
        acceptingNotModified: Bool = false,
        willReceiveBody: (@Sendable (Int64?) async throws -> Void)? = nil
    ) async throws -> Object? {
        try await retryPolicy.run(verdict: { ($0 as? S3Error)?.isTransient == true ? .transient : .final }) { _ in
            try await sendOnce(
                method, bucket: bucket, key: key, headers: headers, body: body,
                acceptingNotModified: acceptingNotModified,
                willReceiveBody: willReceiveBody
            )
        }
    }

    private func sendOnce(
        _ method: String, bucket: String, key: String?, headers: [String: String], body: Data,
        acceptingNotModified: Bool,
        willReceiveBody: (@Sendable (Int64?) async throws -> Void)?
    ) async throws -> Object? {
        let path = "/\(bucket)" + (key.map { "/\($0)" } ?? "")
        var signed = SigV4Signer.Request(
            method: method, path: path, headers: [("host", host)] + headers.map { ($0.key, $0.value) },
            payloadHash: body.isEmpty ? SigV4Signer.emptyPayloadHash : SigV4Signer.payloadHash(body)
        )
        signed.headers += signer.signatureHeaders(for: signed, date: Date())
        var base = configuration.endpoint.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        var request = HTTPClientRequest(url: base + SigV4Signer.encode(path, keepingSlash: true))
        request.method = HTTPMethod(rawValue: method)
        for (name, value) in signed.headers { request.headers.add(name: name, value: value) }
        if !body.isEmpty || method == "PUT" {
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let timeout = method == "GET" || method == "HEAD" ? configuration.timeout : configuration.writeTimeout
        let deadline = NIODeadline.now() + .nanoseconds(timeout.nanoseconds)
        do {
            let response = try await client.execute(request, deadline: deadline)
            let status = Int(response.status.code)
            var responseHeaders: [String: String] = [:]
            for (name, value) in response.headers { responseHeaders[name.lowercased()] = value }
            let limit = configuration.maximumObjectBytes
            if (200..<300).contains(status), let willReceiveBody {
                do {
                    try await willReceiveBody(responseHeaders["content-length"].flatMap { Int64($0) })
                } catch {
                    throw CallerError(error: error)
                }
            }
            let data: Data
            do {
                data = Data((try await response.body.collect(upTo: limit)).readableBytesView)
            } catch is NIOTooManyBytesError {
                throw S3Error.tooLarge(limit: limit)
            }
            if (200..<300).contains(status) || (status == 304 && acceptingNotModified) {
                return Object(data: status == 304 ? Data() : data, statusCode: status, headers: responseHeaders)
            }
            let code = Self.errorCode(in: data)
            // No such object is an answer; no such bucket is a configuration to fix.
            if status == 404, code != "NoSuchBucket" { return nil }
            throw S3Error.status(status, code: code)
        } catch let error as S3Error {
            throw error
        } catch let error as CallerError {
            throw error.error
        } catch is CancellationError {
            throw CancellationError()
        } catch let error as HTTPClientError {
            switch error {
            case .deadlineExceeded, .readTimeout, .connectTimeout, .writeTimeout: throw S3Error.timedOut
            case .cancelled: throw CancellationError()
            default: throw S3Error.transport(String(describing: error))
            }
        } catch {
            throw S3Error.transport(String(describing: error))
        }
    }

    /// An error thrown by the caller's `willReceiveBody`, carried out unchanged.
    private struct CallerError: Error { let error: any Error }

    /// The `<Code>` of an S3 error body, if it has one.
    static func errorCode(in body: Data) -> String? {
        guard let text = String(data: body.prefix(4096), encoding: .utf8),
            let start = text.range(of: "<Code>"),
            let end = text.range(of: "</Code>", range: start.upperBound..<text.endIndex)
        else { return nil }
        return String(text[start.upperBound..<end.lowerBound])
    }
}

extension Duration {
    fileprivate var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
