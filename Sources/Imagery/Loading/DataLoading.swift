import Foundation

/// Loads the encoded bytes behind a URL. The pipeline calls it at most once at a
/// time per source key and never more often than its download limit allows.
///
/// Implementations must honour task cancellation (abort the transfer and throw
/// `CancellationError`) and should report progress as bytes arrive.
public protocol DataLoading: Sendable {
    /// Loads `request`.
    /// - Parameters:
    ///   - request: The URL and extra request headers (conditional ones among them).
    ///   - progress: Called as bytes arrive, from any thread.
    /// - Returns: The body with the status and headers. A 304 (only possible when the
    ///   request was conditional) returns with an empty body; any other non-success status throws.
    /// - Throws: ``DataLoadingError``, or `CancellationError` when cancelled.
    func load(_ request: DataRequest, progress: @escaping @Sendable (TransferProgress) -> Void) async throws
        -> DataResponse
}

extension DataLoading {
    /// Loads the bytes at `url` with no extra headers.
    public func loadData(for url: URL, progress: @escaping @Sendable (TransferProgress) -> Void = { _ in }) async throws
        -> Data
    {
        try await load(DataRequest(url: url), progress: progress).data
    }
}

/// What to load: a URL and request headers.
public struct DataRequest: Sendable, Hashable {
    /// The resource.
    public var url: URL
    /// Extra request headers (`Accept`, `If-None-Match`, ...).
    public var headers: [String: String]
    /// Called by the loader once the body's size is known (`Content-Length`, a file's size; `nil`
    /// when not announced) and before the body is read. It may wait (the pipeline reserves memory
    /// for the body here, ``MemoryBudget``) or throw (the load then fails with that error). A
    /// loader that never calls it still works: the pipeline then counts bytes as they arrive.
    /// Not part of the request's equality.
    public var willReceiveBody: (@Sendable (_ expectedBytes: Int64?) async throws -> Void)?
    /// Called by the loader after each part of the body arrives, with the whole body so far (from
    /// its first byte), on the loader's own thread: the pipeline reads it for progressive previews
    /// (``ImagePipeline/ProgressivePreviews``), and sets it only then. It must return quickly; the
    /// bytes it keeps are copied by the loader's next append (once per preview). Default `nil`; a
    /// loader that never calls it still works (no previews). Not part of the request's equality.
    public var didReceiveBody: (@Sendable (_ bodySoFar: Data) -> Void)?

    public init(url: URL, headers: [String: String] = [:]) {
        self.url = url
        self.headers = headers
    }

    public static func == (lhs: DataRequest, rhs: DataRequest) -> Bool {
        lhs.url == rhs.url && lhs.headers == rhs.headers
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(url)
        hasher.combine(headers)
    }
}

/// What a load returned.
public struct DataResponse: Sendable, Hashable {
    /// The body (empty for a 304).
    public var data: Data
    /// The status: 200 for files, the HTTP status otherwise (2xx or 304).
    public var statusCode: Int
    /// Response headers, names lower-cased.
    public var headers: [String: String]

    public init(data: Data, statusCode: Int = 200, headers: [String: String] = [:]) {
        self.data = data
        self.statusCode = statusCode
        self.headers = headers
    }
}

/// How much of a transfer has arrived.
public struct TransferProgress: Sendable, Hashable {
    /// Bytes received so far.
    public var completed: Int64
    /// Bytes expected in all, when the source said (`Content-Length`, file size); otherwise `nil`.
    public var total: Int64?

    /// Progress of `completed` out of `total` bytes.
    public init(completed: Int64, total: Int64?) {
        self.completed = completed
        self.total = total
    }

    /// `completed / total` in 0...1, or `nil` when the total is unknown.
    public var fraction: Double? {
        guard let total, total > 0 else { return nil }
        return min(1, Double(completed) / Double(total))
    }
}

/// Why loading bytes failed. Each case says what a user can do about it.
public enum DataLoadingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The URL has a scheme this loader does not handle.
    case unsupportedScheme(String)
    /// The URL is malformed or has no host.
    case invalidURL(String)
    /// The origin answered with a non-success HTTP status; `retryAfter`: the wait its
    /// `Retry-After` header asked for, when it sent one.
    case badStatus(Int, retryAfter: Duration? = nil)
    /// The response is larger than the loader's limit (bytes).
    case tooLarge(limit: Int)
    /// The transfer took longer than the loader's time limit.
    case timedOut
    /// A `file:` URL names no readable file.
    case fileNotFound(String)
    /// A network failure (connection refused, DNS, TLS, ...), with the underlying reason.
    case transport(String)
    /// The source returned no bytes.
    case empty
    /// The origin redirected more often than the loader allows.
    case tooManyRedirects(limit: Int)

    public var description: String {
        switch self {
        case .unsupportedScheme(let scheme):
            "unsupported URL scheme '\(scheme)': use http, https or file (http needs ImageryHTTP's HTTPDataLoader)"
        case .invalidURL(let url): "invalid URL: \(url)"
        case .badStatus(let status, let retryAfter?): "the origin answered HTTP \(status), retry after \(retryAfter)"
        case .badStatus(let status, nil): "the origin answered HTTP \(status)"
        case .tooLarge(let limit): "the response is larger than the limit of \(limit) bytes"
        case .timedOut: "the origin did not answer in time"
        case .fileNotFound(let path): "no readable file at \(path)"
        case .transport(let reason): "network error: \(reason)"
        case .empty: "the source returned no bytes"
        case .tooManyRedirects(let limit): "the origin redirected more than \(limit) times"
        }
    }
}
