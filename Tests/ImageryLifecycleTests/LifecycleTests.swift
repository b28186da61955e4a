import AsyncHTTPClient
import Foundation
import Imagery
import ImageryDiskCache
import ImageryHTTP
import ImageryLifecycle
import ImageryTestSupport
import ImageryVips
import Logging
import ServiceLifecycle
import Testing

/// The loader, the disk cache and a pipeline's stores in a `ServiceGroup`, as a Swift service runs them.
@Suite("Service lifecycle")
struct LifecycleTests {
    /// A disk cache on `directory` that waits for an earlier one on it to be released (up to the hang guard).
    static func openDiskCache(_ directory: URL) throws -> DiskCache {
        var configuration = DiskCache.Configuration(directory: directory)
        configuration.lockWait = hangGuard
        return try DiskCache(configuration: configuration)
    }

    @Test func aHostsClientIsUsedAndNotShutDownByTheLoader() async throws {
        let origin = try await TestOrigin.serving(directory: Fixtures.directory)
        let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup)
        let loader = HTTPDataLoader(client: client)
        #expect(loader.client === client && !loader.ownsClient)
        let pipeline = ImagePipeline(configuration: .init(decoder: VipsImageDecoder(), dataLoader: loader))
        let image = try await pipeline.image(
            for: ImageRequest(url: origin.url("rocket.jpg"), thumbnail: .init(width: 16, height: 16)))
        #expect(image.width == 16 && origin.requestCount == 1)
        try await loader.shutdown()
        await #expect(throws: DataLoadingError.self) {
            try await loader.load(DataRequest(url: origin.url("rocket.jpg"))) { _ in }
        }
        // The host's client still works: the loader left it running.
        let response = try await client.get(url: origin.url("rocket.jpg").absoluteString).get()
        #expect(response.status == .ok)
        #expect(origin.requestCount == 2)
        try await client.shutdown()
        try await origin.shutdown()
    }

    @Test func aLoaderOnTheHostsEventLoopsOwnsItsClient() async throws {
        let loader = HTTPDataLoader(eventLoopGroup: HTTPClient.defaultEventLoopGroup)
        #expect(loader.ownsClient)
        try await loader.shutdown()
        try await loader.shutdown()  // twice is harmless
    }

    @Test func aServiceGroupsShutdownFinishesStoresAndFlushesTheDiskCache() async throws {
        let origin = try await TestOrigin.serving(directory: Fixtures.directory)
        try await withTemporaryDirectory { directory in
            let request = ImageRequest(url: origin.url("rocket.jpg"), thumbnail: .init(width: 24, height: 24))
            do {
                let disk = try Self.openDiskCache(directory)
                let loader = HTTPDataLoader()
                var configuration = ImagePipeline.Configuration(decoder: VipsImageDecoder(), dataLoader: loader)
                configuration.diskCache = disk
                configuration.encoder = VipsImageEncoder()
                let pipeline = ImagePipeline(configuration: configuration)
                let group = ServiceGroup(
                    services: [loader, disk, ImagePipelineService(pipeline)], logger: Logger(label: "test"))
                try await withThrowingTaskGroup(of: Void.self) { tasks in
                    tasks.addTask { try await group.run() }
                    _ = try await pipeline.image(for: request)
                    await group.triggerGracefulShutdown()
                    try await tasks.waitForAll()
                }
                // The group returned: the thumbnail's store was finished before the cache flushed.
                #expect(await disk.metadata(for: request.imageKey.stringValue) != nil)
                #expect(await disk.metadata(for: request.sourceKey.stringValue) != nil)
            }
            // A restart: another pipeline on the same directory, its origin never asked.
            let disk = try Self.openDiskCache(directory)
            let loader = HTTPDataLoader()
            var configuration = ImagePipeline.Configuration(decoder: VipsImageDecoder(), dataLoader: loader)
            configuration.diskCache = disk
            configuration.encoder = VipsImageEncoder()
            let image = try await ImagePipeline(configuration: configuration).image(for: request)
            #expect(image.width == 24)
            #expect(origin.requestCount == 1)
            try await loader.shutdown()
        }
        try await origin.shutdown()
    }
}
