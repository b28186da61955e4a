import Foundation
import Imagery
import ImageryDiskCache
import ImageryHTTP
import ImageryTestSupport
import ImageryVips
import Testing

/// The pipeline with a disk cache against an origin that sends caching headers
/// (``TestOrigin/caching(failing:)``: query parameters choose them).
@Suite("Pipeline disk cache and HTTP semantics")
struct PipelineDiskCacheTests {
    /// The time of the test's origin and pipelines: it stands still, so freshness is what the headers
    /// say, however long the test takes.
    let time = ManualTime()

    func origin(failing: Flag = Flag()) async throws -> TestOrigin {
        try await TestOrigin.caching(failing: failing, time: time.source)
    }

    /// A pipeline with a fresh memory cache on `disk`.
    func makePipeline(
        _ loader: HTTPDataLoader, disk: DiskCache, policy: HTTPCachePolicy = .init(),
        decoder: (any ImageDecoding)? = nil
    ) -> ImagePipeline {
        var configuration = ImagePipeline.Configuration(decoder: decoder ?? VipsImageDecoder(), dataLoader: loader)
        configuration.diskCache = disk
        configuration.encoder = VipsImageEncoder()
        configuration.cachePolicy = policy
        configuration.time = time.source
        return ImagePipeline(configuration: configuration)
    }

    /// A real origin, an HTTP loader and a disk cache in a temporary directory, all torn down after `body`.
    func withOriginAndDisk(
        failing: Flag = Flag(),
        _ body: (TestOrigin, HTTPDataLoader, DiskCache, URL) async throws -> Void
    ) async throws {
        let origin = try await self.origin(failing: failing)
        let loader = HTTPDataLoader(configuration: .patient)
        do {
            try await withTemporaryDirectory { directory in
                try await body(
                    origin, loader, try DiskCache(directory: directory.appendingPathComponent("cache")), directory)
            }
        } catch {
            try? await loader.shutdown()
            try? await origin.shutdown()
            throw error
        }
        try await loader.shutdown()
        try await origin.shutdown()
    }

    /// Loads `path` through two pipelines in a row (the second with empty memory) and
    /// returns the origin's requests.
    func twoLoads(_ path: String, policy: HTTPCachePolicy = .init()) async throws -> [TestOrigin.Request] {
        try await loads(2, path, policy: policy)
    }

    /// Loads `path` `count` times, each through a new pipeline (empty memory) on one disk cache.
    func loads(_ count: Int, _ path: String, policy: HTTPCachePolicy = .init()) async throws -> [TestOrigin.Request] {
        var requests: [TestOrigin.Request] = []
        try await withOriginAndDisk { origin, loader, disk, _ in
            let request = ImageRequest(url: origin.url(path))
            for _ in 0..<count {
                let data = try await makePipeline(loader, disk: disk, policy: policy).data(for: request)
                #expect(data.count == 112_525)
                await disk.flush()
            }
            requests = origin.requests
        }
        return requests
    }

    @Test func noCacheRevalidatesWithTheETagAndA304ServesTheStoredBytes() async throws {
        let requests = try await twoLoads("rocket.jpg?cc=no-cache&etag=v1")
        #expect(requests.count == 2)
        #expect(requests[0].headers["if-none-match"] == nil)
        #expect(requests[1].headers["if-none-match"] == "\"v1\"")
    }

    @Test func staleIfErrorServesTheStaleEntryWhenTheOriginFails() async throws {
        let failing = Flag()
        try await withOriginAndDisk(failing: failing) { origin, loader, disk, _ in
            let tolerant = ImageRequest(url: origin.url("rocket.jpg?cc=max-age%3D0%2C%20stale-if-error%3D600"))
            let strict = ImageRequest(url: origin.url("rocket.jpg?cc=max-age%3D0%2C%20must-revalidate"))
            _ = try await makePipeline(loader, disk: disk).data(for: tolerant)
            _ = try await makePipeline(loader, disk: disk).data(for: strict)
            await disk.flush()
            failing.set()
            #expect(try await makePipeline(loader, disk: disk).data(for: tolerant).count == 112_525)
            await #expect(throws: DataLoadingError.badStatus(500)) {
                try await makePipeline(loader, disk: disk).data(for: strict)
            }
        }
    }

    @Test func aSecondCacheOnTheSameDirectoryServesHitsWithoutNetwork() async throws {
        try await withOriginAndDisk { origin, loader, _, root in
            let directory = root.appendingPathComponent("restart")
            let request = ImageRequest(
                url: origin.url("rocket.jpg?cc=max-age%3D600"), thumbnail: .init(width: 64, height: 64))
            do {
                let disk = try openDiskCache(directory)
                _ = try await makePipeline(loader, disk: disk).image(for: request)
                try await waitUntil { disk.count == 2 }  // the original and the 64x64 variant
                await disk.flush()
            }
            let disk = try openDiskCache(directory)  // a restart
            let decoder = CountingDecoder(VipsImageDecoder())
            let pipeline = makePipeline(loader, disk: disk, decoder: decoder)
            // The variant alone serves the thumbnail: remove the original to prove it.
            await disk.remove(for: request.sourceKey.stringValue)
            let image = try await pipeline.image(for: request)
            #expect((image.width, image.height) == (64, 64))
            #expect(image.sourceFormat == .jpeg)
            #expect(origin.requestCount == 1)
            #expect(decoder.count == 1)
        }
    }

}
