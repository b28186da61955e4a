import Hummingbird
import HummingbirdCore
import ImageryTestSupport
import Logging
import NIOCore
import ServiceLifecycle

@testable import HummingbirdTesting

/// A live server for tests: `application` served on 127.0.0.1 (a port of its own), a client on one
/// keep-alive connection to it. HummingbirdTesting's `.live` does the same with a fixed 20 s read
/// timeout; inside the whole suite on a slow 2-core machine a thumbnail of a 20 MP source can take
/// longer, and every such request failed with `.readTimeout` (CI, 2026-11-27). A request here may
/// take up to `timeout`, a hang guard past the server's own (``serve(_:origin:logger:configure:_:)``
/// sets them to ``hangGuard``): a test that hangs still ends, a loaded machine no longer fails a test.
func runLive<App: ApplicationProtocol, Value: Sendable>(
    _ application: App,
    timeout: Duration = hangGuard * 2,
    _ test: @Sendable (any TestClientProtocol) async throws -> Value
) async throws -> Value {
    let reporting = PortReportingApplication(base: application)
    let services = ServiceGroup(
        configuration: .init(services: [reporting], gracefulShutdownSignals: [], logger: application.logger)
    )
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask {
            // A server that stops (or never binds) before it listens fails the wait for its port.
            do { try await services.run() } catch {
                reporting.port.fail(error)
                throw error
            }
            reporting.port.fail(ChannelError.ioOnClosedChannel)
        }
        let port = try await reporting.port.futureResult.get()
        let client = TestClient(host: "127.0.0.1", port: port, configuration: .init(timeout: timeout))
        client.connect()
        let value: Value
        do {
            value = try await test(LiveClient(client: client))
        } catch {
            try? await client.shutdown()
            await services.triggerGracefulShutdown()
            throw error
        }
        try await client.shutdown()
        await services.triggerGracefulShutdown()
        try await group.waitForAll()
        return value
    }
}

/// Requests over the live connection (kept alive), answered as `TestResponse`s.
private struct LiveClient: TestClientProtocol {
    let client: TestClient

    func executeRequest(uri: String, method: HTTPRequest.Method, headers: HTTPFields, body: ByteBuffer?) async throws
        -> TestResponse
    {
        var headers = headers
        headers[.connection] = "keep-alive"
        let response = try await client.execute(
            TestClient.Request(uri, method: method, authority: "localhost", headers: headers, body: body))
        return TestResponse(
            head: response.head, body: response.body ?? ByteBuffer(), trailerHeaders: response.trailerHeaders)
    }

    var port: Int? { client.port }
}

/// `base`, bound to 127.0.0.1 on a free port, saying which once it listens.
private struct PortReportingApplication<Base: ApplicationProtocol>: ApplicationProtocol, Service {
    let base: Base
    let port: EventLoopPromise<Int>

    init(base: Base) {
        self.base = base
        self.port = base.eventLoopGroup.any().makePromise(of: Int.self)
    }

    var responder: Base.Responder { get async throws { try await base.responder } }
    var server: HTTPServerBuilder { base.server }
    var eventLoopGroup: any EventLoopGroup { base.eventLoopGroup }
    var configuration: ApplicationConfiguration { base.configuration.with(address: .hostname("127.0.0.1", port: 0)) }
    var logger: Logger { base.logger }
    var services: [any Service] { base.services }
    var processesRunBeforeServerStart: [@Sendable () async throws -> Void] { base.processesRunBeforeServerStart }

    func onServerRunning(_ channel: any Channel) async {
        await base.onServerRunning(channel)
        if let port = channel.localAddress?.port {
            self.port.succeed(port)
        } else {
            self.port.fail(ChannelError.unknownLocalAddress)
        }
    }
}
