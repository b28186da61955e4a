import Foundation
import Imagery
import ImageryDiskCache
import ImageryHTTP
import ImageryTestSupport
import ImageryVips

/// A pipeline on the real HTTP loader and libvips decoder, against a real origin on 127.0.0.1.
struct PipelineHarness {
    let origin: TestOrigin
    let loader: HTTPDataLoader
    let decoder: CountingDecoder
    let pipeline: ImagePipeline

    static func make(
        origin: TestOrigin? = nil,
        loader configuration: HTTPDataLoader.Configuration = .patient,
        configure: (inout ImagePipeline.Configuration) -> Void = { _ in }
    ) async throws -> PipelineHarness {
        let origin = if let origin { origin } else { try await TestOrigin.serving(directory: Fixtures.directory) }
        let loader = HTTPDataLoader(configuration: configuration)
        let decoder = CountingDecoder(VipsImageDecoder())
        var pipelineConfiguration = ImagePipeline.Configuration(decoder: decoder, dataLoader: loader)
        configure(&pipelineConfiguration)
        return PipelineHarness(
            origin: origin, loader: loader, decoder: decoder,
            pipeline: ImagePipeline(configuration: pipelineConfiguration))
    }

    func shutdown() async throws {
        try await loader.shutdown()
        try await origin.shutdown()
    }
}

/// Runs `body` with a fresh harness and always shuts it down.
func withHarness(
    origin: TestOrigin? = nil,
    loader: HTTPDataLoader.Configuration = .patient,
    configure: (inout ImagePipeline.Configuration) -> Void = { _ in },
    _ body: (PipelineHarness) async throws -> Void
) async throws {
    let harness = try await PipelineHarness.make(origin: origin, loader: loader, configure: configure)
    do {
        try await body(harness)
    } catch {
        try? await harness.shutdown()
        throw error
    }
    try await harness.shutdown()
}

extension HTTPDataLoader.Configuration {
    /// The loader's defaults with its time limits as long as the hang guard: a load held at the origin,
    /// or waiting for a connection behind others on a loaded machine, never times out unless a test
    /// asks for a timeout (and then sets its own).
    static var patient: Self {
        var configuration = HTTPDataLoader.Configuration()
        configuration.timeout = hangGuard
        configuration.connectTimeout = hangGuard
        return configuration
    }
}

/// A disk cache on `directory` whose open waits for an earlier cache on it (let go of by the test, but
/// perhaps not yet released on a loaded machine) up to the hang guard.
func openDiskCache(_ directory: URL) throws -> DiskCache {
    var configuration = DiskCache.Configuration(directory: directory)
    configuration.lockWait = hangGuard
    return try DiskCache(configuration: configuration)
}
