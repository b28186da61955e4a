import Imagery
import ServiceLifecycle

/// A pipeline's stores as a swift-service-lifecycle `Service`: it runs until the group's graceful
/// shutdown, then finishes what the pipeline was storing (`ImagePipeline.finishStoring()`: the
/// thumbnails being encoded handed to the disk cache, the disk cache flushed) and returns.
///
/// A `ServiceGroup` shuts its services down in the reverse of their order, each after the one
/// behind it has returned: list the loader first and this service after it, so that the stores
/// are finished before the loader stops.
///
/// ```swift
/// let group = ServiceGroup(
///     services: [loader, ImagePipelineService(pipeline), app],
///     gracefulShutdownSignals: [.sigterm], logger: logger)
/// try await group.run()
/// ```
public struct ImagePipelineService: Service {
    /// The pipeline whose stores are finished at shutdown.
    public let pipeline: ImagePipeline

    /// The service for `pipeline`.
    public init(_ pipeline: ImagePipeline) {
        self.pipeline = pipeline
    }

    /// Waits for the graceful shutdown (or cancellation), then finishes the pipeline's stores.
    public func run() async throws {
        try? await gracefulShutdown()
        await pipeline.finishStoring()
    }
}
