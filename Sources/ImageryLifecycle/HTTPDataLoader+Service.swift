import ImageryHTTP
import ServiceLifecycle

/// The loader as a `Service`: it runs until the group's graceful shutdown, then shuts down
/// (`HTTPDataLoader.shutdown()`: its own client, never a host's).
extension HTTPDataLoader: Service {
    /// Waits for the graceful shutdown (or cancellation), then shuts the loader down.
    public func run() async throws {
        try? await gracefulShutdown()
        try await shutdown()
    }
}
