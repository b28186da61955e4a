import Hummingbird
import HummingbirdCore

/// What the router has no handler for, answered as every other error (JSON, `no-store`):
/// a known path with another method is 405 with `Allow`; any other path is 404.
struct UnmatchedRouteMiddleware: RouterMiddleware {
    typealias Context = ServerRequestContext

    /// The methods each path answers (`/files/` stands for every gallery file).
    static let allowedMethods: [String: String] = [
        "/image": "GET, HEAD", "/info": "GET, HEAD", "/health": "GET, HEAD", "/metrics": "GET, HEAD", "/": "GET, HEAD",
        "/files/": "GET, HEAD",
    ]

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            let path = request.uri.path
            let known =
                Self.allowedMethods[path]
                ?? (path.hasPrefix("/files/") && path.count > 7 ? Self.allowedMethods["/files/"] : nil)
            if let allowed = known {
                return ServerError(.methodNotAllowed, "method_not_allowed", "\(path) answers \(allowed) only").response(
                    headers: [.allow: allowed])
            }
            return Self.notFound(path).response()
        }
    }

    /// The 404 for a path nothing answers.
    static func notFound(_ path: some StringProtocol) -> ServerError {
        ServerError(
            .notFound, "not_found", "there is nothing at \(path): see / for the gallery, /image?url=... for images")
    }
}
