import Foundation
import Imagery

/// imgproxy's `local://` sources: files under one directory (`IMGPROXY_LOCAL_FILESYSTEM_ROOT`),
/// never outside it. The URL's path is taken from the root (the host is ignored, as imgproxy does);
/// `..` stops at the root, and a path whose symbolic links lead outside the root is not found.
struct LocalFiles: Sendable {
    /// The root, its symbolic links resolved.
    let root: URL
    let maximumSize: Int

    init(root: URL, maximumSize: Int) {
        self.root = root.standardizedFileURL.resolvingSymlinksInPath()
        self.maximumSize = maximumSize
    }

    /// Whether `url` is a `local://` URL.
    static func isLocal(_ url: URL) -> Bool { url.scheme?.lowercased() == "local" }

    /// The file `url` names under the root.
    /// - Throws: ``ServerError`` 404 for a file that is not there, is not a regular file, or lies outside the root.
    func file(for url: URL) throws -> URL {
        // Cleaned as an absolute path first: `..` cannot climb above `/`, so not above the root either.
        let cleaned = NSString(string: "/" + url.path).standardizingPath
        let file = root.appendingPathComponent(String(cleaned.drop { $0 == "/" })).resolvingSymlinksInPath()
        let inside =
            file.path == root.path || file.path.hasPrefix(root.path.hasSuffix("/") ? root.path : root.path + "/")
        var isDirectory: ObjCBool = false
        guard inside, FileManager.default.fileExists(atPath: file.path, isDirectory: &isDirectory),
            !isDirectory.boolValue
        else {
            throw ServerError(.notFound, "source_not_found", "there is no local file \(cleaned)")
        }
        return file
    }

    func load(_ request: DataRequest, progress: @escaping @Sendable (TransferProgress) -> Void) async throws
        -> DataResponse
    {
        let file = try file(for: request.url)
        var fileRequest = request
        fileRequest.url = file
        return try await FileDataLoader(maximumSize: maximumSize).load(fileRequest, progress: progress)
    }
}
