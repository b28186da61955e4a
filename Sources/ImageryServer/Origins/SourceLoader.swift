import Foundation
import Imagery
import ImageryHTTP
import ImageryS3

/// The proxy's one loader of sources: `s3://` URLs through the S3 client (when the server has an
/// S3 endpoint), everything else through the HTTP loader. Both ask ``SourceGuard`` first.
struct SourceLoader: DataLoading {
    let http: HTTPDataLoader
    let s3: S3DataLoader?
    /// imgproxy's `local://` sources, when the server has a root for them.
    var local: LocalFiles?
    /// The fallback image, when the server has one.
    var fallback: FallbackImage?

    func load(_ request: DataRequest, progress: @escaping @Sendable (TransferProgress) -> Void) async throws
        -> DataResponse
    {
        if let fallback, request.url == fallback.url {
            progress(TransferProgress(completed: Int64(fallback.data.count), total: Int64(fallback.data.count)))
            return DataResponse(data: fallback.data)
        }
        if LocalFiles.isLocal(request.url) {
            guard let local else {
                throw ServerError(
                    .forbidden, "forbidden_source", "this server reads no local:// sources (it has no local root)")
            }
            return try await local.load(request, progress: progress)
        }
        guard request.url.scheme?.lowercased() == "s3" else { return try await http.load(request, progress: progress) }
        guard let s3 else {
            throw ServerError(
                .forbidden, "forbidden_source", "this server reads no S3 sources (it has no --s3-endpoint)")
        }
        return try await s3.load(request, progress: progress)
    }

    /// Stops both clients.
    func shutdown() async throws {
        try await http.shutdown()
        try await s3?.client.shutdown()
    }
}
