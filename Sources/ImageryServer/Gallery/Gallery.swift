import Foundation

/// The images the page at `/` shows: the configured URLs, then the image files of
/// the gallery directory, which the server serves itself at `/files/NAME` and
/// resizes from disk (`/image?url=/files/NAME`), so the page works without internet
/// and without letting `/image` fetch from loopback.
package struct Gallery: Sendable {
    /// Where `/files/NAME` comes from; `nil`: no files.
    package let directory: URL?
    /// Absolute http(s) URLs shown before the files.
    package let urls: [URL]

    package init(directory: URL?, urls: [URL]) {
        self.directory = directory
        self.urls = urls
    }

    /// The `url` parameter prefix that names a gallery file.
    static let filePrefix = "/files/"
    static let imageExtensions: Set<String> = [
        "jpg", "jpeg", "png", "gif", "webp", "avif", "heic", "heif", "tif", "tiff", "bmp", "ico",
    ]

    /// The image files of the directory (by extension; not hidden), sorted by name; read anew each time.
    func fileNames() -> [String] {
        guard let directory, let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else {
            return []
        }
        return names.filter { fileURL(named: $0) != nil }.sorted()
    }

    /// The file `name` of the gallery directory, if it is a regular image file there.
    /// A name with a `/` (or `..`, or hidden) is refused, so nothing outside the directory is reachable.
    package func fileURL(named name: String) -> URL? {
        guard let directory, !name.isEmpty, !name.hasPrefix("."), !name.contains("/"), !name.contains("\0"),
            Self.imageExtensions.contains((name as NSString).pathExtension.lowercased())
        else { return nil }
        let url = directory.appendingPathComponent(name, isDirectory: false)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue else {
            return nil
        }
        return url
    }

    /// The local file a (percent-decoded) `url` parameter of the form `/files/NAME` names.
    /// - Throws: a 404 ``ServerError`` if there is no such gallery file.
    package func fileURL(forParameter text: String) throws -> URL {
        let name = String(text.dropFirst(Self.filePrefix.count))
        guard let url = fileURL(named: name) else {
            throw ServerError(.notFound, "not_found", "there is no gallery file \(name)")
        }
        return url
    }
}
