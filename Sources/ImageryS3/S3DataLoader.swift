import Foundation
import Imagery

/// Loads `s3://BUCKET/KEY` through an ``S3Client``: the pipeline's `DataLoading` for sources in
/// object storage. The object's `Cache-Control`, `Expires`, `ETag` and `Last-Modified` are its
/// freshness as for any origin, and conditional requests are passed on (a 304 revalidates).
///
/// Which buckets may be read is the caller's decision (``validateURL``): an `s3://` open to any
/// bucket the credentials can read would let anyone who can form a URL read them all.
public struct S3DataLoader: DataLoading {
    public let client: S3Client
    /// Called with every URL before it is loaded; throws to refuse it. Default: refuses every URL.
    public var validateURL: @Sendable (URL) async throws -> Void

    public init(client: S3Client, validateURL: @escaping @Sendable (URL) async throws -> Void) {
        self.client = client
        self.validateURL = validateURL
    }

    /// The bucket and key of an `s3://BUCKET/KEY` URL (the key decoded), else `nil`.
    public static func location(of url: URL) -> (bucket: String, key: String)? {
        guard url.scheme?.lowercased() == "s3", let bucket = url.host, !bucket.isEmpty else { return nil }
        let key = String(url.path.drop { $0 == "/" })
        return key.isEmpty ? nil : (bucket, key)
    }

    public func load(_ request: DataRequest, progress: @escaping @Sendable (TransferProgress) -> Void) async throws
        -> DataResponse
    {
        guard let (bucket, key) = Self.location(of: request.url) else {
            throw DataLoadingError.invalidURL("\(request.url.absoluteString): an S3 source is s3://BUCKET/KEY")
        }
        try await validateURL(request.url)
        let conditions = request.headers.filter {
            ["if-none-match", "if-modified-since"].contains($0.key.lowercased())
        }
        let object: S3Client.Object?
        do {
            object = try await client.get(
                bucket: bucket, key: key, headers: conditions, willReceiveBody: request.willReceiveBody)
        } catch let error as S3Error {
            throw Self.loadingError(error)
        }
        guard let object else { throw DataLoadingError.badStatus(404) }
        try Task.checkCancellation()
        if object.statusCode == 304 {
            return DataResponse(data: Data(), statusCode: 304, headers: object.headers)
        }
        progress(TransferProgress(completed: Int64(object.data.count), total: Int64(object.data.count)))
        guard !object.data.isEmpty else { throw DataLoadingError.empty }
        return DataResponse(data: object.data, statusCode: object.statusCode, headers: object.headers)
    }

    /// What an S3 failure means to the pipeline: the same cases as an HTTP origin's.
    static func loadingError(_ error: S3Error) -> DataLoadingError {
        switch error {
        case .status(let status, _): .badStatus(status)
        case .tooLarge(let limit): .tooLarge(limit: limit)
        case .timedOut: .timedOut
        case .transport(let reason): .transport(reason)
        case .credentials, .configuration: .transport(error.description)
        }
    }
}
