import Foundation
import Hummingbird
import Imagery

/// Thumbnails of the images under ``sources``, answered as encoded bytes in the format the client's
/// `Accept` header chooses (AVIF, WebP, JPEG XL, else the source's), with an ETag, the source's cache
/// headers and `Vary: Accept`: `GET /thumbnails/NAME?w=256`.
public struct Thumbnails: Sendable {
    /// Loads, caches, decodes and encodes (it needs an encoder: `VipsImageEncoder`).
    public let pipeline: ImagePipeline
    /// Where the images are: a folder URL (`https://images.example.com/photos/`, `file:///srv/photos/`).
    public let sources: URL
    /// The widest thumbnail asked for.
    public static let maximumWidth = 2048

    public init(pipeline: ImagePipeline, sources: URL) {
        self.pipeline = pipeline
        self.sources = sources
    }

    /// Adds `GET /thumbnails/:name` to `router`.
    public func add<Context: RequestContext>(to router: Router<Context>) {
        router.get("thumbnails/:name") { request, context in
            try await thumbnail(request, name: try context.parameters.require("name"))
        }
    }

    private func thumbnail(_ request: Request, name: String) async throws -> Response {
        // One path component of letters, digits, `.`, `_` and `-`, not starting with a dot: never
        // another folder, never a URL of the client's choosing.
        guard !name.hasPrefix("."), name.unicodeScalars.allSatisfy(Self.allowed.contains) else {
            throw HTTPError(.badRequest, message: "the name may hold letters, digits, '.', '_' and '-'")
        }
        let width = request.uri.queryParameters.get("w", as: Int.self) ?? 256
        guard (1...Self.maximumWidth).contains(width) else {
            throw HTTPError(.badRequest, message: "w must be 1 to \(Self.maximumWidth)")
        }
        let image = ImageRequest(
            url: sources.appendingPathComponent(name), thumbnail: .init(width: width, height: width, fit: .inside))
        let encoded: EncodedImageResponse
        do {
            encoded = try await pipeline.encodedImage(for: EncodedImageRequest(image, accept: request.headers[.accept]))
        } catch DataLoadingError.fileNotFound, DataLoadingError.badStatus(404, _) {
            throw HTTPError(.notFound, message: "there is no image \(name)")
        } catch is ImageDecodingError {
            throw HTTPError(.unprocessableContent, message: "\(name) is not an image that can be read")
        }
        var headers: HTTPFields = [
            .eTag: encoded.etag,
            .cacheControl: encoded.cacheHeaders.values(maximumAge: 86_400).cacheControl,
        ]
        if encoded.variesWithAccept { headers[.vary] = "Accept" }
        if let lastModified = encoded.lastModified { headers[.lastModified] = lastModified }
        if encoded.isNotModified(
            ifNoneMatch: request.headers[.ifNoneMatch], ifModifiedSince: request.headers[.ifModifiedSince])
        {
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentType] = encoded.contentType
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: encoded.data)))
    }

    private static let allowed = CharacterSet(
        charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
}
