import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Imagery
import ImageryServer
import ImageryTestSupport
import ImageryVips
import Testing

/// `ImageryRoutes` in a host's Hummingbird application: under a prefix, beside the host's own routes,
/// behind its middleware, with the host's request context, its services run by the host's lifecycle.
@Suite("Imagery's routes in a host application")
struct MountedRoutesTests {
    /// The host's middleware: refuses a request without its token, stamps its header on every answer.
    struct HostAuthentication<Context: RequestContext>: RouterMiddleware {
        func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
            async throws -> Response
        {
            guard request.headers[.authorization] == "Bearer host-token" else { return Response(status: .unauthorized) }
            var response = try await next(request, context)
            response.headers[HTTPField.Name("X-Host")!] = "1"
            return response
        }
    }

    static let token: HTTPFields = [.authorization: "Bearer host-token"]

    @Test func servedUnderAPrefixBesideTheHostsRoutesBehindItsMiddleware() async throws {
        let origin = try await TestOrigin.serving(directory: Fixtures.directory)
        var configuration = ServerConfiguration()
        configuration.caching.directory = nil
        configuration.origins.privateNetworkHosts = ["127.0.0.1"]
        // as `serve` sets them
        (configuration.limits.requestTimeout, configuration.origins.timeout) = (hangGuard, hangGuard)
        let imagery = try ImageryRoutes(configuration: configuration)
        let router = Router()  // the host's own context type (BasicRequestContext)
        router.add(middleware: HostAuthentication())
        router.get("hello") { _, _ in "hello from the host" }
        imagery.add(to: router, at: "/media/")
        var application = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        application.addServices(imagery)
        let host = origin.url("rocket.jpg").absoluteString.replacingOccurrences(of: "http://", with: "")
        do {
            try await runLive(application) { client in
                let hello = try await get(client, "/hello", headers: Self.token)
                #expect(hello.status == .ok && String(decoding: hello.body, as: UTF8.self) == "hello from the host")
                // The native query, thumbor's and imgproxy's paths: the sizes they ask for, through the host's middleware.
                for (uri, width, height) in [
                    ("/media" + imageURI(origin, "rocket.jpg", "w=64&h=48&format=jpeg"), 64, 48),
                    ("/media/unsafe/60x40/\(host)", 60, 40),
                    ("/media/insecure/rs:fill:50:30/plain/\(origin.url("rocket.jpg").absoluteString)", 50, 30),
                ] {
                    let (status, headers, body) = try await get(client, uri, headers: Self.token)
                    #expect(status == .ok, "\(uri): \(String(decoding: body.prefix(200), as: UTF8.self))")
                    #expect(headers[HTTPField.Name("X-Host")!] == "1", "\(uri)")
                    let image = try VipsImageDecoder().decode(body, recipe: ImageRecipe())
                    #expect((image.width, image.height) == (width, height), "\(uri): \(image.width)x\(image.height)")
                }
                // The host's middleware applies to Imagery's routes too.
                #expect(
                    try await get(client, "/media" + imageURI(origin, "rocket.jpg", "w=64")).status == .unauthorized)
                // Nothing at the root but the host's: Imagery's routes are under the prefix only.
                #expect(
                    try await get(client, imageURI(origin, "rocket.jpg", "w=64"), headers: Self.token).status
                        == .notFound)
                // Not asked for: /metrics and /health (the standard selection is /image, /info and the syntaxes).
                let info = try await get(
                    client, "/media/info?url=\(origin.url("rocket.jpg").absoluteString)", headers: Self.token)
                #expect(info.status == .ok && info.headers[.contentType]?.hasPrefix("application/json") == true)
                #expect(try await get(client, "/media/health", headers: Self.token).status == .notFound)
            }
        } catch {
            try? await origin.shutdown()
            throw error
        }
        try await origin.shutdown()
    }

    @Test func healthAndMetricsWhenAsked() async throws {
        var configuration = ServerConfiguration()
        configuration.caching.directory = nil
        let imagery = try ImageryRoutes(configuration: configuration)
        let router = Router()
        imagery.add(to: router, at: "img", routes: [.image, .health, .metrics])
        let application = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await application.test(.router) { client in
            #expect(try await get(client, "/img/health").status == .ok)
            let metrics = try await get(client, "/img/metrics")
            #expect(metrics.status == .ok && String(decoding: metrics.body, as: UTF8.self).contains("imagery_"))
            // Without the syntaxes, another path under the prefix is the host's 404.
            #expect(try await get(client, "/img/unsafe/60x40/example.com/a.jpg").status == .notFound)
        }
    }
}
