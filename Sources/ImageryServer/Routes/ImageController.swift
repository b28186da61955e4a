import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Imagery
import NIOCore

/// The server's routes: `GET /image` and `GET /info` (the native dialect), any other path in
/// imgproxy's or thumbor's syntax (``PathDialects``, thumbor's `meta/` among them), `GET /health`
/// and thumbor's `GET /healthcheck`, the gallery page `GET /` and its files `GET /files/NAME` (and
/// `HEAD` of each). Each route reads its request with its ``Dialect`` once and answers what it asks
/// for the same way whatever the dialect (``ImageController/respond(to:on:reading:prefix:text:)``).
package struct ImageController: Sendable {
    let service: ImageService
    let watcher: ConnectionWatcher
    let gallery: Gallery
    /// `/image` and `/info`.
    let native: NativeDialect
    /// imgproxy's and thumbor's paths.
    let paths: PathDialects
    /// The headers of answers with a stored image.
    let answers: ImageAnswers
    /// Requests whose source another instance of the cluster owns go there (`nil`: no cluster).
    let forwarding: OwnerForwarding?

    /// - Throws: ``ConfigurationFileError`` when the configuration's presets or imgproxy keys are not valid.
    init(service: ImageService, watcher: ConnectionWatcher, forwarding: OwnerForwarding? = nil) throws {
        let configuration = service.configuration
        self.service = service
        self.watcher = watcher
        self.forwarding = forwarding
        gallery = Gallery(directory: configuration.gallery.directory, urls: configuration.gallery.urls)
        native = try NativeDialect(configuration: configuration, gallery: gallery, watermarks: service.watermarkIDs)
        paths = try PathDialects(configuration: configuration, watermarks: service.watermarkIDs)
        answers = ImageAnswers(service: service)
    }

    /// Adds `routes` to `router`, whose paths start with `prefix` (`""`, or `/media`: what the
    /// router's own groups put before them; a dialect reads the path after it).
    func addRoutes<Context: RequestContext>(
        to router: some RouterMethods<Context>, prefix: String = "", routes: ImageryRoutes.Selection
    ) {
        if routes.contains(.health) { addHealthRoutes(to: router) }
        if routes.contains(.image) {
            // A query answered before is answered from result storage by its text, before it is read.
            router.getAndHead("image") { request, context -> Response in
                await respond(
                    to: request, on: Self.channel(of: context), reading: native, prefix: prefix,
                    text: request.uri.query ?? "")
            }
        }
        if routes.contains(.info) {
            router.getAndHead("info") { request, context -> Response in
                await respond(to: request, on: Self.channel(of: context), reading: native, prefix: prefix, text: nil)
            }
        }
        if routes.contains(.gallery) {
            router.getAndHead("/") { _, _ -> Response in
                let page = GalleryPage(gallery: gallery, signer: native.signer).html()
                return Response(
                    status: .ok, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-cache"],
                    body: ResponseBody(byteBuffer: ByteBuffer(string: page))
                )
            }
            router.getAndHead("files/:name") { request, context -> Response in
                await file(context.parameters.get("name") ?? "", request: request)
            }
        }
        guard routes.contains(.dialects) else { return }
        // Any other path: another proxy's URL syntax, else 404. A path answered before is answered
        // from result storage by its text (`#PATH`), before it is read.
        router.getAndHead("**") { request, context -> Response in
            let path = DialectRequest(request.uri, prefix: prefix).path
            return await respond(
                to: request, on: Self.channel(of: context), reading: paths, prefix: prefix, text: "#" + path)
        }
    }

    /// `/health`, and thumbor's `/healthcheck` (its words, for load balancers pointed at a thumbor).
    private func addHealthRoutes<Context: RequestContext>(to router: some RouterMethods<Context>) {
        router.getAndHead("health") { _, _ -> Response in
            let body = ByteBuffer(string: #"{"status":"ok"}"#)
            return Response(
                status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: body))
        }
        router.getAndHead("healthcheck") { _, _ -> Response in
            Response(
                status: .ok, headers: [.contentType: "text/html; charset=UTF-8", .cacheControl: "no-cache"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: "WORKING"))
            )
        }
    }

    /// The request's connection, for cancelling its work when the client leaves: known in
    /// `imagery serve`'s own server (whose connections a ``ConnectionWatcher`` watches), `nil` in a
    /// host application's (there the request timeout and the task's cancellation bound the work).
    static func channel(of context: some RequestContext) -> (any Channel)? {
        (context as? ServerRequestContext)?.channel
    }

    /// A gallery file, as it is on disk (its type sniffed from its bytes).
    func file(_ name: String, request: Request) async -> Response {
        do {
            guard let url = gallery.fileURL(named: name.removingPercentEncoding ?? name) else {
                throw ServerError(.notFound, "not_found", "there is no gallery file \(name)")
            }
            return answers.response(
                for: try await service.readFile(url), maxAge: 3600, negotiated: false, request: request)
        } catch {
            return ServerError.from(error).response()
        }
    }
}

extension RouterMethods {
    /// `handler` for `GET` and for `HEAD` of `path` (RFC 9110: every server answers `HEAD` as `GET`;
    /// the HTTP server sends no body). CDNs and link checkers send `HEAD`.
    func getAndHead(_ path: RouterPath, use handler: @escaping @Sendable (Request, Context) async throws -> Response) {
        on(path, method: .get, use: handler)
        on(path, method: .head, use: handler)
    }
}
