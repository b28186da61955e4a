import Foundation

/// Loads `file:` URLs from the local disk. The pipeline's default loader;
/// for `http` and `https` use `HTTPDataLoader` from ImageryHTTP, which also
/// reads files through this type.
public struct FileDataLoader: DataLoading {
    /// The largest file it reads, in bytes; default 50 MB.
    public var maximumSize: Int

    /// A loader for `file:` URLs.
    /// - Parameter maximumSize: The largest file it reads, in bytes; default 50 MB.
    public init(maximumSize: Int = 50_000_000) {
        self.maximumSize = maximumSize
    }

    public func load(_ request: DataRequest, progress: @escaping @Sendable (TransferProgress) -> Void) async throws
        -> DataResponse
    {
        let url = request.url
        guard url.isFileURL else { throw DataLoadingError.unsupportedScheme(url.scheme ?? "") }
        try Task.checkCancellation()
        let path = url.path
        let attributes = try? FileManager.default.attributesOfItem(atPath: path)
        guard let size = (attributes?[.size] as? NSNumber)?.intValue,
            attributes?[.type] as? FileAttributeType == .typeRegular
        else { throw DataLoadingError.fileNotFound(path) }
        guard size <= maximumSize else { throw DataLoadingError.tooLarge(limit: maximumSize) }
        try await request.willReceiveBody?(Int64(size))
        guard let data = FileManager.default.contents(atPath: path) else { throw DataLoadingError.fileNotFound(path) }
        guard data.count <= maximumSize else { throw DataLoadingError.tooLarge(limit: maximumSize) }
        progress(TransferProgress(completed: Int64(data.count), total: Int64(data.count)))
        return DataResponse(data: data)
    }
}
