import Foundation
import Hummingbird
import HummingbirdTesting
import Imagery
import ImageryServer
import ImageryTestSupport

/// The proxy (no disk cache unless asked) in front of a real origin on 127.0.0.1.
func withServer(
    _ setup: TestingSetup = .router,
    origin: TestOrigin? = nil,
    configure: (inout ServerConfiguration) -> Void = { _ in },
    _ body: @escaping @Sendable (any TestClientProtocol, TestOrigin) async throws -> Void
) async throws {
    let origin = if let origin { origin } else { try await TestOrigin.serving(directory: Fixtures.directory) }
    var configuration = ServerConfiguration()
    configuration.port = 0
    configuration.cacheDirectory = nil
    configuration.privateNetworkHosts = ["127.0.0.1"]  // the test origin; every other private host stays refused
    configure(&configuration)
    let application = try buildApplication(configuration: configuration)
    do {
        try await application.test(setup) { client in try await body(client, origin) }
    } catch {
        try? await origin.shutdown()
        throw error
    }
    try await origin.shutdown()
}

/// `/image?url=<origin url of path>&<rest>`.
func imageURI(_ origin: TestOrigin, _ path: String, _ rest: String = "") -> String {
    let source = origin.url(path).absoluteString.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
    return "/image?url=\(source)" + (rest.isEmpty ? "" : "&" + rest)
}

struct ErrorBody: Decodable, Equatable {
    let error: String
    let message: String
}

extension TestResponse {
    var errorBody: ErrorBody? { try? JSONDecoder().decode(ErrorBody.self, from: Data(buffer: body)) }
    var data: Data { Data(buffer: body) }
}
