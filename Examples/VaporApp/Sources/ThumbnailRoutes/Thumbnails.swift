import Foundation
import Imagery
import Vapor

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

    /// Adds `GET /thumbnails/:name` to `routes`.
    public func register(on routes: any RoutesBuilder) {
        routes.get("thumbnails", ":name") { request async throws -> Response in
            try await thumbnail(request)
        }
    }

    private func thumbnail(_ request: Request) async throws -> Response {
        // One path component of letters, digits, `.`, `_` and `-`, not starting with a dot: never
        // another folder, never a URL of the client's choosing.
        guard let name = request.parameters.get("name"), !name.hasPrefix("."),
            name.unicodeScalars.allSatisfy(Self.allowed.contains)
        else {
            throw Abort(.badRequest, reason: "the name may hold letters, digits, '.', '_' and '-'")
        }
        let width = try request.query.get(Int?.self, at: "w") ?? 256
        guard (1...Self.maximumWidth).contains(width) else {
            throw Abort(.badRequest, reason: "w must be 1 to \(Self.maximumWidth)")
        }
        let image = ImageRequest(
            url: sources.appendingPathComponent(name), thumbnail: .init(width: width, height: width, fit: .inside))
        let accept = request.headers.first(name: .accept)
        let encoded: EncodedImageResponse
        do {
            encoded = try await pipeline.encodedImage(for: EncodedImageRequest(image, accept: accept))
        } catch DataLoadingError.fileNotFound, DataLoadingError.badStatus(404, _) {
            throw Abort(.notFound, reason: "there is no image \(name)")
        } catch is ImageDecodingError {
            throw Abort(.unprocessableEntity, reason: "\(name) is not an image that can be read")
        }
        var headers = HTTPHeaders()
        headers.replaceOrAdd(name: .eTag, value: encoded.etag)
        headers.replaceOrAdd(name: .cacheControl, value: encoded.cacheHeaders.values(maximumAge: 86_400).cacheControl)
        if encoded.variesWithAccept { headers.replaceOrAdd(name: .vary, value: "Accept") }
        if let lastModified = encoded.lastModified { headers.replaceOrAdd(name: .lastModified, value: lastModified) }
        if encoded.isNotModified(
            ifNoneMatch: request.headers.first(name: .ifNoneMatch),
            ifModifiedSince: request.headers.first(name: .ifModifiedSince))
        {
            return Response(status: .notModified, headers: headers)
        }
        headers.replaceOrAdd(name: .contentType, value: encoded.contentType)
        return Response(status: .ok, headers: headers, body: .init(data: encoded.data))
    }

    private static let allowed = CharacterSet(
        charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
}
