import Foundation
import Imagery
import ImageryHTTP

extension ServerConfiguration {
    /// The configured images given as http(s) URLs (imgproxy's `IMGPROXY_FALLBACK_IMAGE_URL` and
    /// `IMGPROXY_WATERMARK_URL`) downloaded once, at start, as imgproxy does, and kept as inline data:
    /// a request never waits on them, and a URL that fails stops the start with its name (never a
    /// server that answers without the image it was told to use). Within the source byte limit and
    /// the origin timeout; only an image is taken.
    /// - Throws: ``ConfigurationFileError`` naming the setting and the URL.
    package func downloadingRemoteImages() async throws(ConfigurationFileError) -> ServerConfiguration {
        var remote: [(name: String, url: URL)] = []
        if let url = fallback.image, Self.isRemote(url) { remote.append(("the fallback image", url)) }
        for (name, url) in rendering.watermarkFiles where Self.isRemote(url) {
            remote.append(("watermark \(name)", url))
        }
        guard !remote.isEmpty else { return self }
        var loaderConfiguration = HTTPDataLoader.Configuration()
        loaderConfiguration.maximumSize = limits.maximumSourceBytes
        loaderConfiguration.timeout = origins.timeout
        let loader = HTTPDataLoader(configuration: loaderConfiguration)
        var resolved = self
        var failure: ConfigurationFileError?
        for (name, url) in remote {
            do {
                let response = try await loader.load(DataRequest(url: url)) { _ in }
                guard ImageFormat(sniffing: response.data) != nil else {
                    failure = ConfigurationFileError(message: "\(name) at \(url.absoluteString) is not an image")
                    break
                }
                let inline = try Self.inlineImage(base64: response.data.base64EncodedString())
                if resolved.fallback.image == url { resolved.fallback.image = inline }
                for (key, value) in resolved.rendering.watermarkFiles where value == url {
                    resolved.rendering.watermarkFiles[key] = inline
                }
            } catch {
                failure = ConfigurationFileError(
                    message: "\(name) could not be downloaded from \(url.absoluteString): \(error)")
                break
            }
        }
        try? await loader.shutdown()
        if let failure { throw failure }
        return resolved
    }

    static func isRemote(_ url: URL) -> Bool { url.scheme == "http" || url.scheme == "https" }

    /// A configured image's location as written: an http(s) or `data:` URL, else a file path.
    static func imageLocation(_ value: String) -> URL {
        if ["http://", "https://", "data:"].contains(where: { value.lowercased().hasPrefix($0) }),
            let url = URL(string: value)
        {
            return url
        }
        return URL(fileURLWithPath: value)
    }
}
